// detail::RademacherStream (the wild bootstrap-t's multipliers, generated a Mersenne Twister
// state block at a time) against the standard library's std::mt19937_64 drawn one output at a
// time: the signs must be the same stream, exactly, whatever the sizes of the pieces filled.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "attnreg/inference/diagnostics.hpp"

namespace {

TEST(RademacherStream, EqualsTheTopBitOfStdMt19937_64) {
  const std::uint64_t seeds[] = {0, 1, 123, 5489, 0xFFFFFFFFFFFFFFFFULL, 0x8000000000000000ULL};
  // piece sizes crossing the 312-word state blocks at many offsets, one of them empty
  const std::size_t pieces[] = {1, 311, 2, 0, 312, 313, 7, 1000, 624, 5, 2500};
  for (std::uint64_t seed : seeds) {
    std::mt19937_64 ref(seed);
    attnreg::detail::RademacherStream s(seed);
    std::size_t plus = 0, total = 0;
    for (std::size_t n : pieces) {
      std::vector<double> got(n + 1, 7.0);
      s.fill(got.data(), n);
      for (std::size_t t = 0; t < n; ++t) {
        const double want = (ref() >> 63) ? 1.0 : -1.0;
        ASSERT_EQ(got[t], want) << "seed " << seed << " draw " << total + t;
        plus += got[t] > 0;
      }
      EXPECT_EQ(got[n], 7.0);  // nothing written past the piece
      total += n;
    }
    // a sign stream that is not constant (binomial(total, 1/2) within 6 sd)
    EXPECT_NEAR(static_cast<double>(plus), total / 2.0, 6 * std::sqrt(total / 4.0));
  }
}

}  // namespace
