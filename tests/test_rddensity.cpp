// attnreg::rd::rddensity: exact cases of the local polynomial density estimator (Cattaneo,
// Jansson and Ma 2020, JASA 115(531)) and the exact binomial test against a direct sum of
// binomial probabilities. The agreement with rddensity 3.0 is tested live in
// python-package/tests/test_rd_density.py and test_rd_density_models.py.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "attnreg/base/error.hpp"
#include "attnreg/rd/rddensity.hpp"

namespace {

namespace rd = attnreg::rd;

// Two-sided p-value by R binom.test's rule, from log-gamma probabilities.
double binom_direct(int k, int n, double p) {
  auto pmf = [&](int i) {
    return std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) +
                    i * std::log(p) + (n - i) * std::log1p(-p));
  };
  const double d = pmf(k) * (1 + 1e-7);
  double s = 0;
  for (int i = 0; i <= n; ++i)
    if (pmf(i) <= d) s += pmf(i);
  return std::min(1.0, s);
}

TEST(RdDensity, BinomialTestMatchesDirectSum) {
  // 1e-10 relative: both sum the same probabilities; the recurrence from the mode loses at most
  // ~n ulps.
  for (int n : {1, 7, 51, 400})
    for (double p : {0.5, 0.3})
      for (int k = 0; k <= n; k += std::max(1, n / 9))
        EXPECT_NEAR(rd::binomial_test(k, n, p), binom_direct(k, n, p),
                    1e-10 * binom_direct(k, n, p) + 1e-300)
            << k << " " << n << " " << p;
  EXPECT_NEAR(rd::binomial_test(20, 51, 0.5), 0.1607796018, 1e-9);  // R: binom.test(20, 51)
}

TEST(RdDensity, EvenGridIsExactlyUniform) {
  // x on an even grid: the empirical distribution is exactly linear in x, so every polynomial
  // fit returns slope 1/(max - min) on both sides and a zero difference (up to rounding of the
  // Gram solves, condition < 1e4 here).
  std::vector<double> x;
  const int n = 2001;
  for (int i = 0; i < n; ++i) x.push_back(-3.0 + 7.0 * i / (n - 1));
  for (auto k : {rd::RdKernel::triangular, rd::RdKernel::epanechnikov, rd::RdKernel::uniform}) {
    rd::RdDensityOptions o;
    o.c = 0.5;
    o.kernel = k;
    o.h_left = 0.8;
    o.h_right = 1.3;
    const rd::RdDensityResult r = rd::rddensity(x, o);
    EXPECT_NEAR(r.f_left, 1.0 / 7.0, 1e-10);
    EXPECT_NEAR(r.f_right, 1.0 / 7.0, 1e-10);
    EXPECT_NEAR(r.diff, 0.0, 1e-10);
    EXPECT_EQ(r.bwselect, "manual");
    // every grid point within [c - h_l, c + h_r]
    EXPECT_EQ(r.nh_left, 228u);
    EXPECT_EQ(r.nh_right, 372u);
  }
}

TEST(RdDensity, RestrictedAndPluginOnEvenGrid) {
  // The restricted fit (common level and higher derivatives, a slope per side) reproduces the
  // linear distribution function exactly, too. The plug-in variance of the local linear fit
  // (q = 1) is f/(n h) e_1' S^-1 G S^-1 e_1 (Cattaneo, Jansson and Ma 2020, Theorem 1); by
  // exact symbolic integration that constant is 6/5 for the uniform kernel and 48/35 for the
  // triangular one.
  std::vector<double> x;
  const int n = 2001;
  for (int i = 0; i < n; ++i) x.push_back(-3.0 + 7.0 * i / (n - 1));
  for (const char* fs : {"unrestricted", "restricted"})
    for (auto k : {rd::RdKernel::triangular, rd::RdKernel::uniform}) {
      rd::RdDensityOptions o;
      o.c = 0.5;
      o.kernel = k;
      o.p = 1;
      o.q = 1;
      o.h_left = o.h_right = 1.1;
      o.fitselect = fs;
      o.vce = "plugin";
      const rd::RdDensityResult r = rd::rddensity(x, o);
      EXPECT_NEAR(r.f_left, 1.0 / 7.0, 1e-10) << fs;
      EXPECT_NEAR(r.f_right, 1.0 / 7.0, 1e-10) << fs;
      EXPECT_EQ(r.fitselect, fs);
      EXPECT_EQ(r.vce, "plugin");
      if (std::string(fs) == "unrestricted") {
        const double v = k == rd::RdKernel::uniform ? 6.0 / 5.0 : 48.0 / 35.0;
        EXPECT_NEAR(r.se_left * r.se_left, r.f_left * v / (n * 1.1), 1e-12 * v / n);
        EXPECT_NEAR(r.se_diff * r.se_diff, 2 * r.f_left * v / (n * 1.1), 1e-12 * v / n);
      }
    }
}

TEST(RdDensity, SelectedBandwidthsAreRegularised) {
  std::mt19937_64 g(11);
  std::normal_distribution<double> nd(0.0, 1.0);
  std::vector<double> x(3000);
  for (double& v : x) v = nd(g);
  rd::RdDensityOptions o;
  const rd::RdDensityResult r = rd::rddensity(x, o);
  ASSERT_EQ(r.bw_table.size(), 12u);
  EXPECT_GT(r.h_left, 0.0);
  EXPECT_GT(r.h_right, 0.0);
  EXPECT_GE(r.nh_left, 23u);  // at least 20 + p + 1 rows per side
  EXPECT_GE(r.nh_right, 23u);
  EXPECT_GT(r.p_value, 0.0);
  EXPECT_LE(r.p_value, 1.0);
  EXPECT_EQ(r.bino_p_value.size(), 10u);
}

TEST(RdDensity, BadInput) {
  std::vector<double> x{-2.0, -1.0, 0.5, 1.0, 2.0, 3.0};
  rd::RdDensityOptions o;
  o.c = 10.0;
  EXPECT_THROW(rd::rddensity(x, o), attnreg::InvalidArgument);
  o.c = 0.0;
  o.p = 0;
  EXPECT_THROW(rd::rddensity(x, o), attnreg::InvalidArgument);
  o.p = 2;
  x.push_back(INFINITY);
  EXPECT_THROW(rd::rddensity(x, o), attnreg::InvalidArgument);
  x.pop_back();
  o.h_left = o.h_right = 1.5;  // a cubic through one point on the left
  EXPECT_THROW(rd::rddensity(x, o), attnreg::InvalidArgument);
  o.h_left = o.h_right = std::nan("");
  o.fitselect = "both";
  EXPECT_THROW(rd::rddensity(x, o), attnreg::InvalidArgument);
  o.fitselect = "restricted";
  o.vce = "hc0";
  EXPECT_THROW(rd::rddensity(x, o), attnreg::InvalidArgument);
  o.vce = "plugin";
  o.h_left = 1.0;
  o.h_right = 2.0;  // the restricted model has one bandwidth
  EXPECT_THROW(rd::rddensity(x, o), attnreg::InvalidArgument);
}

}  // namespace
