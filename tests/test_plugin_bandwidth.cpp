// Direct plug-in bandwidth (Ruppert-Sheather-Wand) against R's KernSmooth::dpill (fixtures
// written by tests/fixtures/make_fixtures.R), plus degenerate inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <string>

#include "attnreg/base/error.hpp"
#include "attnreg/bandwidth/plugin_bandwidth.hpp"
#include "test_util.hpp"

namespace {
const std::string kData = ATTNREG_DATA_DIR;
const std::string kFix = std::string(ATTNREG_DATA_DIR) + "/../tests/fixtures";

std::map<std::string, double> dpill_values() {
  std::ifstream in(kFix + "/dpill.csv");
  std::string line;
  std::getline(in, line);
  std::map<std::string, double> v;
  while (std::getline(in, line)) {
    const auto c = line.find(',');
    v[line.substr(0, c)] = std::stod(line.substr(c + 1));
  }
  return v;
}
}  // namespace

TEST(DirectPlugIn, MatchesKernSmoothDpillOnItsGrid) {
  const auto ref = dpill_values();
  ASSERT_EQ(ref.size(), 3u);
  const arma::mat s = attnreg_test::read_csv(kFix + "/sine500.csv");
  const arma::mat e = attnreg_test::read_csv(kData + "/engel.csv");
  const double h1 = attnreg::dpi_local_linear(s.col(0), s.col(1)).bandwidth;
  const double h2 = attnreg::dpi_local_linear(e.col(0), e.col(1)).bandwidth;
  EXPECT_NEAR(h1 / ref.at("sine500"), 1.0, 1e-9);
  EXPECT_NEAR(h2 / ref.at("engel"), 1.0, 1e-9);
  // Unbinned: the same functionals from exact local fits; close to the binned value.
  attnreg::DpiOptions ub;
  ub.binned = false;
  EXPECT_NEAR(attnreg::dpi_local_linear(s.col(0), s.col(1), ub).bandwidth / h1, 1.0, 1e-2);
}

TEST(DirectPlugIn, InvariantToOrderAndScalesWithX) {
  arma::arma_rng::set_seed(4);
  arma::vec x = arma::randu(800) * 3.0;
  arma::vec y = arma::cos(2 * x) + 0.2 * arma::randn(800);
  const double h = attnreg::dpi_local_linear(x, y).bandwidth;
  arma::uvec perm = arma::randperm(800);
  EXPECT_NEAR(attnreg::dpi_local_linear(x(perm), y(perm)).bandwidth, h, 1e-12 * h);
  // x -> 10 x maps h -> 10 h exactly (the rule is scale-equivariant in x).
  EXPECT_NEAR(attnreg::dpi_local_linear(10.0 * x, y).bandwidth, 10.0 * h, 1e-9 * h);
}

TEST(DirectPlugIn, DegenerateDataGiveClearErrors) {
  arma::vec x = arma::linspace(0, 1, 50), y = arma::randn(50);
  EXPECT_THROW(attnreg::dpi_local_linear(x.head(5), y.head(5)), attnreg::InvalidArgument);
  EXPECT_THROW(attnreg::dpi_local_linear(x, y.head(49)), attnreg::InvalidArgument);
  arma::vec two = x;
  two.head(25).fill(0.0);
  two.tail(25).fill(1.0);  // two distinct x values
  EXPECT_THROW(attnreg::dpi_local_linear(two, y), attnreg::InvalidArgument);
  arma::vec lin = 2.0 * x + 1.0;  // exact line: no curvature, no noise
  EXPECT_THROW(attnreg::dpi_local_linear(x, lin), attnreg::NumericalError);
  y(3) = arma::datum::nan;
  EXPECT_THROW(attnreg::dpi_local_linear(x, y), attnreg::InvalidArgument);
}
