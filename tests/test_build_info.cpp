// build_info(): one version from the VERSION file, and a one-line CUDA summary that agrees with
// the individual fields (Python and R expose the same line as build_info()["cuda"] / $cuda).
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "attnreg/base/build_info.hpp"
#include "attnreg/detail/simd_dispatch.hpp"

TEST(BuildInfo, VersionIsXYZ) {
  EXPECT_TRUE(std::regex_match(attnreg::build_info().version, std::regex(R"(\d+\.\d+\.\d+)")));
}

TEST(BuildInfo, NamesTheSimdTarget) {
  const std::string s = attnreg::build_info().simd;
  EXPECT_FALSE(s.empty());
  EXPECT_EQ(s, attnreg::simd_dispatch::target_name());
}

TEST(BuildInfo, CudaSummaryAgreesWithTheFields) {
  const attnreg::BuildInfo b = attnreg::build_info();
  ASSERT_FALSE(b.cuda.empty());
  if (!b.cuda_compiled) {
    EXPECT_EQ(b.gpu_count, 0);
    EXPECT_EQ(b.cuda, "not compiled: " + b.cuda_error);
    EXPECT_NE(b.cuda_error.find("built without the CUDA backend"), std::string::npos);
  } else if (b.gpu_count == 0) {
    EXPECT_EQ(b.cuda, "compiled (architectures " + b.cuda_archs + "); no GPU visible: " + b.cuda_error);
    EXPECT_FALSE(b.cuda_error.empty());
  } else {
    EXPECT_EQ(b.cuda.rfind("compiled (architectures " + b.cuda_archs + "); GPU visible: " + b.gpu_name, 0), 0u);
  }
}
