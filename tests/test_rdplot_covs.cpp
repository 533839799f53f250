// attnreg::rd::rdplot with covariates (attnreg/rd/rdplot.hpp): exact algebra of the covariate
// adjustment and the collinearity errors. The rdrobust 2.1.1 oracle and the numpy oracle run in
// python-package/tests/test_rdplot_covs.py.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "attnreg/base/error.hpp"
#include "attnreg/rd/rdplot.hpp"

namespace {

namespace rd = attnreg::rd;

// y, x and two covariates (column-major n x 2).
void simulate_covs(std::size_t n, double c, unsigned seed, std::vector<double>& y,
                   std::vector<double>& x, std::vector<double>& z) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::normal_distribution<double> e(0, 0.3);
  y.resize(n);
  x.resize(n);
  z.resize(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = c + u(g);
    const double d = x[i] - c;
    z[i] = e(g) + 0.5 * d;
    z[n + i] = u(g);
    y[i] = 1 + d - 0.5 * d * d + (d >= 0 ? 0.7 : 0) + 2 * z[i] - z[n + i] + e(g);
  }
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!std::isnan(a[i])) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

// y + 3 z_1 moves gamma (of the fit and of the bins) by exactly 3 and leaves the polynomial
// coefficients and, with the same bins and zeval = 0, the curve and the adjusted bin means unchanged: a property
// of the least-squares normal equations, up to the rounding of the solves (cond * eps).
TEST(RdPlotCovs, ShiftingYByACovariateShiftsOnlyItsCoefficient) {
  std::vector<double> y, x, z;
  simulate_covs(600, -2.0, 3, y, x, z);
  rd::RdPlotOptions o;
  o.c = -2.0;
  o.p = 3;
  o.covs_eval_mean = false;
  o.nbins_left = 6;  // the selected J depends on y; fixed bins are the same for y and y2
  o.nbins_right = 9;
  const rd::RdPlotResult a = rd::rdplot(y, x, z, 2, {}, o);
  std::vector<double> y2(y);
  for (std::size_t i = 0; i < y.size(); ++i) y2[i] += 3 * z[i];
  const rd::RdPlotResult b = rd::rdplot(y2, x, z, 2, {}, o);
  ASSERT_EQ(a.coef_covs.size(), 2u);
  EXPECT_NEAR(b.coef_covs[0] - a.coef_covs[0], 3.0, 1e-10);
  EXPECT_NEAR(b.coef_covs[1] - a.coef_covs[1], 0.0, 1e-10);
  EXPECT_NEAR(b.coef_covs_bins[0] - a.coef_covs_bins[0], 3.0, 1e-10);
  EXPECT_LT(max_abs_diff(a.left.coef, b.left.coef), 1e-9);
  EXPECT_LT(max_abs_diff(a.right.curve_y, b.right.curve_y), 1e-9);
  EXPECT_LT(max_abs_diff(a.left.mean_y, b.left.mean_y), 1e-9);
  EXPECT_LT(max_abs_diff(a.right.mean_y, b.right.mean_y), 1e-9);
  // the raw means did move
  EXPECT_GT(max_abs_diff(a.right.mean_y_raw, b.right.mean_y_raw), 1e-3);
}

TEST(RdPlotCovs, FunctionsOfXAreErrorsAndDuplicatesAreDropped) {
  std::vector<double> y, x, z;
  simulate_covs(400, 0.5, 4, y, x, z);
  const std::size_t n = x.size();
  rd::RdPlotOptions o;
  o.c = 0.5;
  o.covs_names = {"z", "side"};
  std::vector<double> zs(z.begin(), z.begin() + n);
  for (std::size_t i = 0; i < n; ++i) zs.push_back(x[i] >= 0.5 ? 1.0 : 0.0);
  try {
    rd::rdplot(y, x, zs, 2, {}, o);
    FAIL() << "the side indicator was accepted";
  } catch (const attnreg::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("'side' is a polynomial"), std::string::npos);
  }
  std::vector<double> zd(z.begin(), z.begin() + n);
  for (std::size_t i = 0; i < n; ++i) zd.push_back(2 * z[i]);
  o.covs_names = {"z", "twice_z"};
  const rd::RdPlotResult r = rd::rdplot(y, x, zd, 2, {}, o);
  ASSERT_EQ(r.covs_dropped, std::vector<std::size_t>{1});
  o.covs_drop = false;
  EXPECT_THROW(rd::rdplot(y, x, zd, 2, {}, o), attnreg::InvalidArgument);
  // a NaN covariate drops its row
  std::vector<double> zn(z);
  zn[7] = std::nan("");
  o.covs_names.clear();
  o.covs_drop = true;
  EXPECT_EQ(rd::rdplot(y, x, zn, 2, {}, o).n_dropped, 1u);
}

}  // namespace
