// MSE-optimal bandwidth vectors with several regressors (rbc_bandwidth_multivariate.hpp): the
// minimiser against the analytic minimiser of (sum_j a_j t_j)^2 + V0 / prod_j h_j with all
// a_j > 0 (Lagrange: a_j t_j = S / d, S^(2 + d/2) = V0 d^(d/2 + 1) prod_j a_j^(1/2) / 4), the
// common-scale closed form against a scalar grid search, and the argument checks. The numpy
// oracle of the pilot is python-package/tests/test_mv_bandwidth.py.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "attnreg/base/error.hpp"
#include "attnreg/inference/rbc_bandwidth_multivariate.hpp"

using namespace attnreg;

TEST(MvBandwidth, MinimiserEqualsTheLagrangeSolutionForSameSignCurvatures) {
  for (int d = 2; d <= 4; ++d) {
    arma::vec a = arma::linspace(0.3, 5.0, d);
    const double V0 = 2e-3;
    const arma::mat M = a * a.t();
    const double S = std::pow(V0 * std::pow(d, 0.5 * d + 1) * std::sqrt(arma::prod(a)) / 4.0,
                              1.0 / (2.0 + 0.5 * d));
    const arma::vec h_true = arma::sqrt(S / (d * a));
    const arma::vec range(d, arma::fill::value(100.0));
    const arma::vec h = mv_plugin_minimise(M, V0, range, arma::vec(d, arma::fill::value(0.5)));
    // the coordinate descent stops at relative step 1e-11; the minimiser's conditioning
    // (rank-one M plus the variance term) allows ~1e-7 relative in h
    for (int j = 0; j < d; ++j) EXPECT_NEAR(h(j) / h_true(j), 1.0, 1e-7) << "d = " << d;
    EXPECT_LE(mv_plugin_mse(M, V0, h), mv_plugin_mse(M, V0, h_true) * (1 + 1e-12));
  }
}

TEST(MvBandwidth, CommonScaleIsTheScalarMinimiser) {
  const arma::mat M = {{2.0, -0.5}, {-0.5, 1.0}};
  const arma::vec s = {0.5, 2.0}, range = {10.0, 40.0};
  const double V0 = 1e-3;
  const double c = mv_plugin_common_scale(M, V0, s, range);
  double best = 1e300, cbest = 0;
  for (double lc = std::log(c) - 0.01; lc <= std::log(c) + 0.01; lc += 1e-6) {
    const double v = mv_plugin_mse(M, V0, std::exp(lc) * s);
    if (v < best) best = v, cbest = std::exp(lc);
  }
  EXPECT_NEAR(cbest / c, 1.0, 2e-6);
  // no curvature at all: the cap min_j range_j / s_j
  EXPECT_EQ(mv_plugin_common_scale(arma::mat(2, 2, arma::fill::zeros), V0, s, range), 20.0);
}

TEST(MvBandwidth, ArgumentChecks) {
  arma::mat X = arma::randu(50, 2);
  arma::vec y = arma::randu(50);
  auto expect_msg = [](auto f, const std::string& needle) {
    try {
      f();
      ADD_FAILURE() << "expected " << needle;
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_msg([&] { mse_dpi_multivariate(X.col(0), y, X.row(0)); }, "x: ");
  expect_msg([&] { mse_dpi_multivariate(X, y.head(49), X.row(0)); }, "y: has 49");
  expect_msg([&] { mse_dpi_multivariate(X, y, arma::mat(1, 3)); }, "eval_points: has 3");
  MvBwOptions o;
  o.pilot_bandwidth = {1.0};
  expect_msg([&] { mse_dpi_multivariate(X, y, X.row(0), o); }, "pilot_bandwidth: needs one");
  o.pilot_bandwidth.reset();
  o.degree = 2;
  expect_msg([&] { mse_dpi_multivariate(X, y, X.row(0), o); }, "degree");
  o.degree = 1;
  o.bwcheck = -1;
  expect_msg([&] { mse_dpi_multivariate(X, y, X.row(0), o); }, "bwcheck: must be >= 1");
  X.col(1) = arma::round(X.col(1));
  expect_msg([&] { mse_dpi_multivariate(X, y, X.row(0)); }, "column 2 has 2 distinct");
}

// The minimum-points rule: with a compact kernel and a pilot far too small, every window at the
// pilot vector used holds at least max(bwcheck, 2 * 6) distinct rows strictly inside the box
// |x_c - x0_c| < b_c, and the pointwise vector's window too; off, the same pilot is refused.
TEST(MvBandwidth, MinimumPointsRuleFillsEveryWindow) {
  arma::arma_rng::set_seed(7);
  const arma::uword n = 200;
  arma::mat X = 2.0 * arma::randu(n, 2) - 1.0;
  X.rows(0, 9) = arma::repmat(X.row(0), 10, 1);  // ten tied rows count once
  const arma::vec y = arma::sin(3.0 * X.col(0)) - arma::square(X.col(1)) + 0.1 * arma::randn(n);
  MvBwOptions o;
  o.kernel = Kernel(KernelType::epanechnikov);
  o.pilot_bandwidth = {0.02, 0.02};
  o.bwcheck = 30;
  const arma::mat P = {{0.0, 0.0}, {0.9, -0.9}};
  const MvBwSelection S = mse_dpi_multivariate(X, y, P, o);
  auto inside = [&](const arma::rowvec& x0, const arma::rowvec& h) {
    arma::uword k = 0;
    for (arma::uword i = 9; i < n; ++i)  // rows 0..9 are one distinct row: count it once
      k += (std::abs(X(i, 0) - x0(0)) < h(0) && std::abs(X(i, 1) - x0(1)) < h(1)) ? 1 : 0;
    return k;
  };
  for (arma::uword j = 0; j < P.n_rows; ++j) {
    EXPECT_GE(inside(P.row(j), S.pilot_used.row(j)), 30u);
    EXPECT_GE(inside(P.row(j), S.h.row(j)), 30u);
    EXPECT_GE(inside(P.row(j), S.h_imse.t()), 30u);
  }
  o.bwcheck = 0;
  EXPECT_THROW(mse_dpi_multivariate(X, y, P, o), NumericalError);
}
