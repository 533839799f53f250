// Tests for diagnostics.hpp: traces and df against the explicit smoother matrix, variance
// formulas against direct sums and against the Monte Carlo variance, the bias estimate on
// quadratics (where it is exact), interval coverage by simulation, dpi bandwidths against the
// asymptotic formula, and bad-input messages.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "attnreg/inference/diagnostics.hpp"
#include "attnreg/bandwidth/dpi_bandwidth.hpp"
#include "attnreg/base/error.hpp"

using namespace attnreg;

namespace {

LocalPolynomial fit_lp(const arma::mat& X, const arma::vec& y, double h, int degree,
                       KernelType k = KernelType::gaussian) {
  LocalFitOptions o;
  o.degree = degree;
  o.kernel.kernel = Kernel(k);
  LocalPolynomial m(o);
  m.fit(X, arma::mat(y), arma::vec(X.n_cols, arma::fill::value(h)));
  return m;
}

template <class F>
void expect_throw_with(F f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "expected an exception mentioning '" << needle << "'";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

double quad(double x) { return 1 + 2 * x + 3 * x * x; }

}  // namespace

TEST(SmootherDiagnostics, GlobalAgainstExplicitSmootherMatrix) {
  for (int seed : {1, 2}) {
    for (int degree : {0, 1}) {
      for (arma::uword d : {1u, 2u}) {
        arma::arma_rng::set_seed(seed);
        const arma::uword n = 37;
        arma::mat X(n, d, arma::fill::randu);
        arma::vec y = arma::sin(3 * X.col(0)) + 0.3 * arma::randn(n);
        const LocalPolynomial m = fit_lp(X, y, 0.2, degree);
        const arma::mat L = m.attention_weights(X);
        const GlobalDiagnostics g = global_diagnostics(m);
        const double tr = arma::trace(L), tll = arma::accu(L % L);
        EXPECT_NEAR(g.trace_L, tr, 1e-10);
        EXPECT_NEAR(g.trace_LtL, tll, 1e-10);
        const arma::vec e = y - L * y;
        const double rss = arma::dot(e, e);
        const double df = n - 2 * tr + tll;
        EXPECT_NEAR(g.residual_df, df, 1e-9);
        EXPECT_NEAR(g.sigma2, rss / df, 1e-10);
        EXPECT_NEAR(g.gcv, n * rss / ((n - tr) * (n - tr)), 1e-10);
        EXPECT_NEAR(g.aicc, std::log(rss / n) + (1 + tr / n) / (1 - (tr + 2) / n), 1e-10);
        const double tss = arma::accu(arma::square(y - arma::mean(y)));
        EXPECT_NEAR(g.r_squared, 1 - rss / tss, 1e-12);
        // CV: the shortcut (y_i - m_i) / (1 - L_ii) is exact for ridge 0.
        const arma::vec cvr = e / (1 - L.diag());
        EXPECT_NEAR(g.cv, arma::mean(arma::square(cvr)), 1e-9);
      }
    }
  }
}

TEST(SmootherDiagnostics, VarianceKindsAgainstDirectSums) {
  arma::arma_rng::set_seed(7);
  const arma::uword n = 60;
  arma::mat X(n, 1, arma::fill::randu);
  arma::vec y = arma::cos(4 * X.col(0)) + 0.2 * arma::randn(n);
  const LocalPolynomial m = fit_lp(X, y, 0.15, 1);
  const arma::mat L = m.attention_weights(X);
  const arma::vec e = y - L * y;
  const arma::vec lev = L.diag();
  const double tr = arma::trace(L);
  const arma::mat Xe = arma::vec{0.0, 0.3, 0.77, 1.0};
  const arma::mat Le = m.attention_weights(Xe);
  const GlobalDiagnostics g = global_diagnostics(m);
  struct Case { const char* name; arma::vec omega; };
  const Case cases[] = {
      {"const", arma::vec(n, arma::fill::value(g.sigma2))},
      {"hc0", e % e},
      {"hc1", e % e * (n / (n - tr))},
      {"hc2", e % e / (1 - lev)},
      {"hc3", e % e / arma::square(1 - lev)},
  };
  for (const Case& c : cases) {
    PointwiseOptions po;
    po.kind = variance_kind_from_name(c.name);
    const PointwiseDiagnostics d = pointwise_diagnostics(m, Xe, po);
    for (arma::uword j = 0; j < Xe.n_rows; ++j) {
      double v = 0;
      for (arma::uword i = 0; i < n; ++i) v += Le(j, i) * Le(j, i) * c.omega(i);
      EXPECT_NEAR(d.se(j), std::sqrt(v), 1e-10) << c.name;
      EXPECT_NEAR(d.ci_high(j) - d.ci_low(j), 2 * 1.959963984540054 * std::sqrt(v), 1e-9);
    }
  }
  // CR1 with clusters of 3 consecutive rows, direct double sum.
  PointwiseOptions po;
  po.kind = VarianceKind::cr1;
  for (arma::uword i = 0; i < n; ++i) po.cluster.push_back(static_cast<long long>(i / 3));
  const PointwiseDiagnostics d = pointwise_diagnostics(m, Xe, po);
  const double G = n / 3.0;
  for (arma::uword j = 0; j < Xe.n_rows; ++j) {
    double v = 0;
    for (arma::uword gi = 0; gi < n / 3; ++gi) {
      double s = 0;
      for (arma::uword i = 3 * gi; i < 3 * gi + 3; ++i) s += Le(j, i) * e(i);
      v += s * s;
    }
    v *= G / (G - 1) * (n - 1.0) / (n - tr);
    EXPECT_NEAR(d.se(j), std::sqrt(v), 1e-10);
  }
  // With one cluster per row CR1 is HC0 times G/(G-1) (n-1)/(n-trL).
  po.cluster.clear();
  for (arma::uword i = 0; i < n; ++i) po.cluster.push_back(static_cast<long long>(i));
  const PointwiseDiagnostics d1 = pointwise_diagnostics(m, Xe, po);
  PointwiseOptions p0;
  p0.kind = VarianceKind::hc0;
  const PointwiseDiagnostics d0 = pointwise_diagnostics(m, Xe, p0);
  const double adj = (n / (n - 1.0)) * ((n - 1.0) / (n - tr));
  EXPECT_LT(arma::abs(d1.se - d0.se * std::sqrt(adj)).max(), 1e-10);
}

TEST(SmootherDiagnostics, BiasExactOnQuadratics) {
  // For m(x) = 1 + 2x + 3x^2 (no noise) the fit's error equals its bias, which the pilot of
  // degree 2 recovers exactly for local linear (term k = 2) and local constant (k = 1, 2).
  for (int degree : {0, 1}) {
    for (KernelType kt : {KernelType::gaussian, KernelType::epanechnikov}) {
      arma::arma_rng::set_seed(3 + degree);
      const arma::uword n = 80;
      arma::mat X(n, 1, arma::fill::randu);
      arma::vec y(n);
      for (arma::uword i = 0; i < n; ++i) y(i) = quad(X(i, 0));
      const LocalPolynomial m = fit_lp(X, y, 0.3, degree, kt);
      const arma::mat Xe = arma::vec{0.0, 0.25, 0.5, 0.9, 1.0};
      for (double b : {0.0, 0.5}) {
        PointwiseOptions po;
        po.kind = VarianceKind::hc0;
        po.pilot_bandwidth = b;
        const PointwiseDiagnostics d = pointwise_diagnostics(m, Xe, po);
        for (arma::uword j = 0; j < Xe.n_rows; ++j) {
          const double truth = quad(Xe(j, 0));
          EXPECT_NEAR(d.bias(j), d.fit(j) - truth, 1e-8) << degree << " " << j;
          EXPECT_NEAR(d.fit_bc(j), truth, 1e-8);
        }
      }
      // Local linear, analytic: bias = (m''/2) sum_i l_i(x) (x_i - x)^2 = 3 * moment.
      if (degree == 1) {
        const arma::mat Le = m.attention_weights(Xe);
        const PointwiseDiagnostics d = pointwise_diagnostics(m, Xe, {});
        for (arma::uword j = 0; j < Xe.n_rows; ++j) {
          const double mom = arma::dot(Le.row(j), arma::square(X.col(0).t() - Xe(j, 0)));
          EXPECT_NEAR(d.bias(j), 3 * mom, 1e-8);
        }
      }
    }
  }
}

TEST(SmootherDiagnostics, HomoskedasticVarianceMatchesMonteCarlo) {
  // Fixed design, y = sin(2 pi x) + N(0, 0.3^2): the conditional variance sigma^2 sum l_i^2
  // against the empirical variance of the fit over replications, and the average sigma^2.
  std::mt19937_64 rng(11);
  std::normal_distribution<double> nd(0.0, 0.3);
  const arma::uword n = 150, R = 300;
  arma::arma_rng::set_seed(11);
  arma::mat X(n, 1, arma::fill::randu);
  const arma::mat Xe = arma::vec{0.0, 0.5, 0.95};
  arma::mat fits(Xe.n_rows, R), fits_bc(Xe.n_rows, R);
  arma::vec s2(R);
  arma::mat Le, Bw;
  for (arma::uword r = 0; r < R; ++r) {
    arma::vec y(n);
    for (arma::uword i = 0; i < n; ++i) y(i) = std::sin(2 * M_PI * X(i, 0)) + nd(rng);
    const LocalPolynomial m = fit_lp(X, y, 0.08, 1);
    PointwiseOptions po;
    po.kind = VarianceKind::homoskedastic;
    const PointwiseDiagnostics d = pointwise_diagnostics(m, Xe, po);
    fits.col(r) = d.fit;
    fits_bc.col(r) = d.fit_bc;
    s2(r) = d.sigma2;
    if (r == 0) {
      Le = m.attention_weights(Xe);
      Bw = bias_weights(m, Xe, -1, 0);
    }
  }
  // E[RSS] = sigma^2 (n - 2 tr L + tr L'L) + ||(I - L) m||^2: sigma^2 carries the smoothing bias.
  {
    arma::vec y0(n);
    for (arma::uword i = 0; i < n; ++i) y0(i) = std::sin(2 * M_PI * X(i, 0));
    const LocalPolynomial m0 = fit_lp(X, y0, 0.08, 1);
    const arma::mat L = m0.attention_weights(X);
    const double df = n - 2 * arma::trace(L) + arma::accu(L % L);
    const arma::vec bias_res = y0 - L * y0;
    const double expected = 0.09 + arma::dot(bias_res, bias_res) / df;
    // sd of the mean of R sigma^2 estimates ~ 0.09 sqrt(2 / (df R)) ~ 0.0006.
    EXPECT_NEAR(arma::mean(s2), expected, 0.003);
  }
  const arma::vec v_true = 0.09 * arma::sum(arma::square(Le), 1);
  const arma::vec v_bc = 0.09 * arma::sum(arma::square(Le - Bw), 1);
  const arma::vec v_emp = arma::var(fits, 0, 1);
  const arma::vec v_emp_bc = arma::var(fits_bc, 0, 1);
  for (arma::uword j = 0; j < Xe.n_rows; ++j) {
    // sd of a variance estimate from R normal draws: sqrt(2/(R-1)) ~ 8%: allow 25%.
    EXPECT_NEAR(v_emp(j) / v_true(j), 1.0, 0.25) << j;
    EXPECT_NEAR(v_emp_bc(j) / v_bc(j), 1.0, 0.25) << j;
  }
}

TEST(SmootherDiagnostics, CoverageBySimulation) {
  // m(x) = sin(2 pi x) on a fixed uniform design, n = 200, h = 0.1 (larger than optimal, so the
  // conventional interval undercovers where the bias is large); RBC should be near 95%.
  std::mt19937_64 rng(2024);
  std::normal_distribution<double> nd(0.0, 0.3);
  const arma::uword n = 200, R = 200;
  arma::arma_rng::set_seed(5);
  arma::mat X(n, 1, arma::fill::randu);
  const arma::mat Xe = arma::vec{0.05, 0.25, 0.5, 0.75, 0.95};
  arma::vec truth(Xe.n_rows);
  for (arma::uword j = 0; j < Xe.n_rows; ++j) truth(j) = std::sin(2 * M_PI * Xe(j, 0));
  double cov_conv = 0, cov_rbc = 0, cov_rbc_h = 0;
  for (arma::uword r = 0; r < R; ++r) {
    arma::vec y(n);
    for (arma::uword i = 0; i < n; ++i) y(i) = std::sin(2 * M_PI * X(i, 0)) + nd(rng);
    const LocalPolynomial m = fit_lp(X, y, 0.1, 1);
    PointwiseOptions po;
    po.kind = VarianceKind::homoskedastic;
    const PointwiseDiagnostics d = pointwise_diagnostics(m, Xe, po);
    po.kind = VarianceKind::hc3;
    const PointwiseDiagnostics dh = pointwise_diagnostics(m, Xe, po);
    for (arma::uword j = 0; j < Xe.n_rows; ++j) {
      cov_conv += d.ci_low(j) <= truth(j) && truth(j) <= d.ci_high(j);
      cov_rbc += d.rbc_low(j) <= truth(j) && truth(j) <= d.rbc_high(j);
      cov_rbc_h += dh.rbc_low(j) <= truth(j) && truth(j) <= dh.rbc_high(j);
    }
  }
  const double tot = static_cast<double>(R * Xe.n_rows);
  cov_conv /= tot;
  cov_rbc /= tot;
  cov_rbc_h /= tot;
  RecordProperty("coverage_conventional", std::to_string(cov_conv));
  RecordProperty("coverage_rbc", std::to_string(cov_rbc));
  // Binomial sd at 1000 draws ~ 0.007.
  EXPECT_NEAR(cov_rbc, 0.95, 0.03) << "RBC homoskedastic";
  EXPECT_NEAR(cov_rbc_h, 0.95, 0.03) << "RBC HC3";
  EXPECT_LT(cov_conv, cov_rbc) << "conventional should undercover with an oversmoothing h";
}

TEST(SmootherDiagnostics, DpiMatchesAsymptoticFormula) {
  // Local linear, Gaussian kernel, X ~ U(0,1), m(x) = 2 x^2, sigma = 0.5: at x = 0.5,
  // B = m''/2 mu2 = 2, V = sigma^2 R(K) / f = 0.25 / (2 sqrt(pi)); h = [V / (4 n B^2)]^{1/5}.
  std::mt19937_64 rng(99);
  std::normal_distribution<double> nd(0.0, 0.5);
  const arma::uword n = 2000;
  arma::arma_rng::set_seed(99);
  arma::vec x(n, arma::fill::randu), y(n);
  for (arma::uword i = 0; i < n; ++i) y(i) = 2 * x(i) * x(i) + nd(rng);
  const double V = 0.25 / (2 * std::sqrt(M_PI));
  const double h_true = std::pow(V / (4.0 * n * 4.0), 0.2);
  DpiBandwidthOptions o;
  o.kind = VarianceKind::homoskedastic;
  const DpiBandwidth r = dpi_bandwidth(x, y, arma::vec{0.5}, o);
  EXPECT_EQ(r.rate, 2);
  EXPECT_NEAR(r.bandwidth / h_true, 1.0, 0.15) << r.bandwidth << " vs " << h_true;
  EXPECT_NEAR(r.pointwise(0), r.bandwidth, 1e-12);
  // imse over interior points: the same constants, h = [sum V / (4 n sum B^2)]^{1/5}.
  const arma::vec grid = arma::linspace(0.2, 0.8, 13);
  const DpiBandwidth ri = dpi_bandwidth(x, y, grid, o);
  const double h_i = std::pow(arma::accu(ri.variance_constant) /
                                  (4.0 * n * arma::accu(arma::square(ri.bias_constant))), 0.2);
  EXPECT_NEAR(ri.bandwidth, h_i, 1e-12);
  EXPECT_NEAR(ri.bandwidth / h_true, 1.0, 0.15);
  // NW has rate r = 2 as well in the interior and gets a pilot of degree 2.
  o.degree = 0;
  const DpiBandwidth rn = dpi_bandwidth(x, y, grid, o);
  EXPECT_EQ(rn.rate, 2);
  EXPECT_GT(rn.bandwidth, 0.0);
}

TEST(SmootherDiagnostics, TradeoffAndMonteCarloIdentities) {
  arma::arma_rng::set_seed(4);
  const arma::uword n = 80;
  arma::mat X(n, 1, arma::fill::randu);
  arma::vec y = arma::sin(6 * X.col(0)) + 0.2 * arma::randn(n);
  LocalFitOptions fo;
  fo.degree = 1;
  const arma::vec hs = {0.05, 0.1, 0.2, 0.4};
  const arma::mat Xe = arma::linspace(0.0, 1.0, 11);
  const arma::mat t = tradeoff_curve(X, y, hs, fo, Xe, VarianceKind::homoskedastic, -1, 0);
  ASSERT_EQ(t.n_rows, 4u);
  for (arma::uword k = 0; k < 4; ++k) EXPECT_NEAR(t(k, 3), t(k, 1) + t(k, 2), 1e-14);
  // tr L falls as h grows; each row agrees with pointwise_diagnostics / global_diagnostics.
  for (arma::uword k = 1; k < 4; ++k) EXPECT_LT(t(k, 6), t(k - 1, 6));
  {
    const LocalPolynomial m = fit_lp(X, y, 0.1, 1);
    PointwiseOptions po;
    po.kind = VarianceKind::homoskedastic;
    po.pilot_bandwidth = 2 * rule_of_thumb_bandwidth(X.col(0), Kernel{});
    const PointwiseDiagnostics d = pointwise_diagnostics(m, Xe, po);
    EXPECT_NEAR(t(1, 1), arma::mean(arma::square(d.bias)), 1e-14);
    EXPECT_NEAR(t(1, 2), arma::mean(arma::square(d.se)), 1e-14);
    EXPECT_NEAR(t(1, 4), global_diagnostics(m).cv, 1e-14);
  }
  // Monte Carlo summary against direct formulas.
  arma::mat W = arma::randu(5, n);
  arma::mat Ys = arma::randn(n, 30);
  arma::vec truth = arma::randn(5);
  const MonteCarloSummary s = monte_carlo_summary(W, Ys, truth);
  const arma::mat P = W * Ys;
  for (arma::uword j = 0; j < 5; ++j) {
    const double mu = arma::mean(P.row(j));
    EXPECT_NEAR(s.bias(j), mu - truth(j), 1e-12);
    EXPECT_NEAR(s.mse(j), arma::mean(arma::square(P.row(j) - truth(j))), 1e-10);
  }
  const arma::vec ns = {100, 200, 400, 800};
  const arma::vec slope = loglog_slope(ns, 3.0 * arma::pow(ns, -0.8));
  EXPECT_NEAR(slope(0), -0.8, 1e-12);
  EXPECT_NEAR(slope(1), 0.0, 1e-10);
}

TEST(SmootherDiagnostics, BadInputsNameTheArgument) {
  arma::arma_rng::set_seed(1);
  arma::mat X(30, 1, arma::fill::randu);
  arma::vec y = arma::randn(30);
  const LocalPolynomial m = fit_lp(X, y, 0.2, 1);
  PointwiseOptions po;
  po.level = 1.5;
  expect_throw_with([&] { pointwise_diagnostics(m, X, po); }, "level");
  po = {};
  po.pilot_degree = 1;
  expect_throw_with([&] { pointwise_diagnostics(m, X, po); }, "pilot_degree");
  po = {};
  po.kind = VarianceKind::cr1;
  po.cluster = {1, 2, 3};
  expect_throw_with([&] { pointwise_diagnostics(m, X, po); }, "cluster");
  expect_throw_with([&] { variance_kind_from_name("hc9"); }, "kind");
  expect_throw_with([&] { pointwise_diagnostics(m, arma::mat(2, 2, arma::fill::zeros), {}); }, "X");
  expect_throw_with([&] { pointwise_diagnostics(m, arma::mat(1, 1, arma::fill::value(NAN)), {}); }, "X");
  expect_throw_with([&] { dpi_bandwidth(arma::randu(20), arma::randu(19), {}); }, "y");
  expect_throw_with([&] { dpi_bandwidth(arma::randu(5), arma::randu(5), {}); }, "x");
  expect_throw_with([&] { loglog_slope(arma::vec{1, 2}, arma::vec{1, 2}); }, "mse");
  // A tiny pilot bandwidth leaves the pilot singular: NumericalError naming pilot_bandwidth.
  po = {};
  po.pilot_bandwidth = 1e-6;
  expect_throw_with([&] { pointwise_diagnostics(m, arma::mat(1, 1, arma::fill::value(0.5123)), po); }, "pilot_bandwidth");
  // Two continuous columns: the bias comes from the multivariate pilot local quadratic
  // (diagnostics.hpp); its numbers are checked against a numpy oracle in
  // python-package/tests/test_rbc_multivariate.py.
  arma::mat X2(40, 2, arma::fill::randu);
  const LocalPolynomial m2 = fit_lp(X2, arma::randn(40), 0.3, 1);
  const PointwiseDiagnostics d2 = pointwise_diagnostics(m2, X2.rows(0, 2), {});
  EXPECT_TRUE(d2.se.is_finite());
  EXPECT_TRUE(d2.bias.is_finite());
  EXPECT_TRUE(d2.bias_note.empty());
  // A pilot bandwidth vector of the wrong length names the argument.
  PointwiseOptions pv;
  pv.pilot_bandwidths = arma::vec{0.3, 0.3, 0.3};
  expect_throw_with([&] { pointwise_diagnostics(m2, X2.rows(0, 2), pv); }, "pilot_bandwidth");
  EXPECT_TRUE(pointwise_diagnostics(m, X.rows(0, 2), {}).bias_note.empty());
}

TEST(SmootherDiagnostics, BadPreliminaryAndPilotBandwidthsAreErrorsNotTheDefault) {
  // 0 is the "default" sentinel of the core; a negative or NaN value used to fall through to
  // the default silently. Each is now an error naming the argument.
  arma::arma_rng::set_seed(3);
  const arma::vec x = arma::randu(200);
  const arma::vec y = arma::sin(3 * x) + 0.2 * arma::randn(200);
  for (double bad : {-1.0, std::nan(""), HUGE_VAL}) {
    DpiBandwidthOptions o;
    o.preliminary_bandwidth = bad;
    expect_throw_with([&] { dpi_bandwidth(x, y, arma::vec{0.5}, o); }, "preliminary_bandwidth: must be");
    o = {};
    o.pilot_bandwidth = bad;
    expect_throw_with([&] { dpi_bandwidth(x, y, arma::vec{0.5}, o); }, "pilot_bandwidth: must be");
    LocalFitOptions fo;
    expect_throw_with([&] {
      tradeoff_curve(arma::mat(x), y, arma::vec{0.1, 0.2}, fo, arma::mat(x), VarianceKind::homoskedastic, -1, bad);
    }, "pilot_bandwidth: must be");
  }
  // The default still works, and a given positive value is used (it changes the answer).
  DpiBandwidthOptions o;
  const double h_default = dpi_bandwidth(x, y, arma::vec{0.5}, o).bandwidth;
  o.preliminary_bandwidth = 0.05;
  const DpiBandwidth r = dpi_bandwidth(x, y, arma::vec{0.5}, o);
  EXPECT_EQ(r.h0, 0.05);
  EXPECT_NE(r.bandwidth, h_default);
  // NaN in X is named (Armadillo's quantile() used to report it without the argument).
  arma::mat Xn(x);
  Xn(4, 0) = NAN;
  expect_throw_with([&] {
    tradeoff_curve(Xn, y, arma::vec{0.1}, LocalFitOptions{}, arma::mat(x), VarianceKind::homoskedastic, -1, 0);
  }, "X: contains NaN");
}

TEST(SmootherDiagnostics, BootstrapBands) {
  arma::arma_rng::set_seed(8);
  const arma::uword n = 120;
  arma::mat X(n, 1, arma::fill::randu);
  arma::vec y = arma::sin(2 * M_PI * X.col(0)) + 0.3 * arma::randn(n);
  const LocalPolynomial m = fit_lp(X, y, 0.1, 1);
  const arma::mat Xe = arma::linspace(0.0, 1.0, 21);
  BootstrapOptions o;
  o.replications = 4000;
  o.kind = VarianceKind::hc0;
  const BootstrapBands b = bootstrap_bands(m, Xe, o);
  // Rademacher: Var*(l'(e v)) = sum l_i^2 e_i^2 = the HC0 variance exactly in expectation.
  const arma::vec v = arma::var(b.draws, 1, 1);
  for (arma::uword j = 0; j < Xe.n_rows; ++j) EXPECT_NEAR(v(j) / (b.se(j) * b.se(j)), 1.0, 0.1);
  // The sup-t critical value exceeds the pointwise normal quantile and is below Bonferroni's.
  EXPECT_GT(b.critical_value, 1.96);
  EXPECT_LT(b.critical_value, 3.3);
  EXPECT_TRUE(arma::all(b.uniform_low <= b.low + 1e-12) && arma::all(b.uniform_high >= b.high - 1e-12));
  // Reproducible with the seed; a different seed differs.
  const BootstrapBands b2 = bootstrap_bands(m, Xe, o);
  EXPECT_EQ(arma::abs(b.draws - b2.draws).max(), 0.0);
  o.seed = 2;
  EXPECT_GT(arma::abs(bootstrap_bands(m, Xe, o).draws - b.draws).max(), 0.0);
  // Mammen and pairs run; pairs spread is of the same order as the analytic se.
  o.type = BootstrapType::wild_mammen;
  o.replications = 500;
  EXPECT_GT(bootstrap_bands(m, Xe, o).critical_value, 1.5);
  o.type = BootstrapType::pairs;
  o.replications = 200;
  const BootstrapBands bp = bootstrap_bands(m, Xe.rows(3, 17), o);
  const arma::vec ratio = arma::stddev(bp.draws, 0, 1) / bp.se;
  EXPECT_GT(ratio.min(), 0.6);
  EXPECT_LT(ratio.max(), 1.6);
  // Bias-corrected wild bands centre at the RBC fit.
  o.type = BootstrapType::wild_rademacher;
  o.bias_corrected = true;
  const BootstrapBands bc = bootstrap_bands(m, Xe, o);
  const PointwiseDiagnostics d = pointwise_diagnostics(m, Xe, {});
  EXPECT_LT(arma::abs(bc.center - d.fit_bc).max(), 1e-12);
  // Bad input.
  o = {};
  o.replications = 5;
  expect_throw_with([&] { bootstrap_bands(m, Xe, o); }, "replications");
  expect_throw_with([&] { bootstrap_type_from_name("jackknife"); }, "type");
  o = {};
  o.type = BootstrapType::pairs;
  o.bias_corrected = true;
  expect_throw_with([&] { bootstrap_bands(m, Xe, o); }, "bias_corrected");
}
