// Tests for monte_carlo.hpp: the random streams (fixed formulas on std::seed_seq + mt19937_64,
// so reproducible and independent per stream), the designs, and the estimates against a direct
// float64 oracle (explicit Nadaraya-Watson / local linear / OLS / ridge weights times the
// simulated responses), the oracle bandwidth against a search by hand, and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "attnreg/base/error.hpp"
#include "attnreg/inference/monte_carlo.hpp"

using namespace attnreg;

namespace {

// Gaussian-kernel local polynomial weights of degree 0 or 1 at x0, by the textbook formula.
arma::rowvec lp_weights(const arma::mat& X, const arma::rowvec& x0, double h, int degree) {
  const arma::uword n = X.n_rows, d = X.n_cols;
  arma::vec k(n);
  for (arma::uword i = 0; i < n; ++i) {
    const arma::rowvec u = (X.row(i) - x0) / h;
    k(i) = std::exp(-0.5 * arma::dot(u, u));
  }
  if (degree == 0) return (k / arma::accu(k)).t();
  arma::mat D(n, d + 1, arma::fill::ones);
  D.cols(1, d) = X.each_row() - x0;
  const arma::mat DtK = D.t() * arma::diagmat(k);
  const arma::mat M = DtK * D;
  const arma::vec e1 = arma::solve(M, arma::eye(d + 1, 1));  // M symmetric: e1' M^{-1}
  return e1.t() * DtK;
}

arma::mat global_weights(const arma::mat& X, const arma::mat& E, double lambda) {
  arma::mat D(X.n_rows, X.n_cols + 1, arma::fill::ones), De(E.n_rows, X.n_cols + 1,
                                                              arma::fill::ones);
  D.cols(1, X.n_cols) = X;
  De.cols(1, X.n_cols) = E;
  arma::mat P(X.n_cols + 1, X.n_cols + 1, arma::fill::zeros);
  P.diag().fill(lambda);
  P(0, 0) = 0;  // intercept not penalised
  return De * arma::solve(D.t() * D + P, D.t());
}

void expect_summary(const MonteCarloSummary& s, const arma::mat& W, const arma::mat& Y,
                    const arma::vec& truth, double tol) {
  const arma::mat P = W * Y;
  const arma::uword m = P.n_rows, R = P.n_cols;
  for (arma::uword j = 0; j < m; ++j) {
    double mean = 0;
    for (arma::uword r = 0; r < R; ++r) mean += P(j, r);
    mean /= static_cast<double>(R);
    double var = 0;
    for (arma::uword r = 0; r < R; ++r) var += (P(j, r) - mean) * (P(j, r) - mean);
    var /= static_cast<double>(R);
    EXPECT_NEAR(s.bias(j), mean - truth(j), tol);
    EXPECT_NEAR(s.variance(j), var, tol);
  }
}

}  // namespace

TEST(MonteCarlo, StreamsAreReproducibleAndDistinct) {
  std::mt19937_64 a = monte_carlo_engine(7, 0), b = monte_carlo_engine(7, 0);
  std::mt19937_64 c = monte_carlo_engine(7, 1), e = monte_carlo_engine(8, 0);
  const auto a1 = a(), b1 = b(), c1 = c(), e1 = e();
  EXPECT_EQ(a1, b1);
  EXPECT_NE(a1, c1);
  EXPECT_NE(a1, e1);
  // The high word of the seed counts: 2^32 is not 0.
  std::mt19937_64 h = monte_carlo_engine(std::uint64_t{1} << 32, 0), z = monte_carlo_engine(0, 0);
  EXPECT_NE(h(), z());
}

TEST(MonteCarlo, UniformAndNormalDraws) {
  std::mt19937_64 eng = monte_carlo_engine(3, 0);
  const int N = 200000;
  double su = 0, sz = 0, sz2 = 0, umin = 1, umax = 0;
  for (int i = 0; i < N; ++i) {
    const double u = monte_carlo_uniform(eng);
    umin = std::min(umin, u);
    umax = std::max(umax, u);
    su += u;
  }
  for (int i = 0; i < N; ++i) {
    const double z = monte_carlo_normal(eng);
    sz += z;
    sz2 += z * z;
  }
  EXPECT_GT(umin, 0.0);
  EXPECT_LT(umax, 1.0);
  EXPECT_NEAR(su / N, 0.5, 4 * std::sqrt(1.0 / 12 / N));
  EXPECT_NEAR(sz / N, 0.0, 4 / std::sqrt(double(N)));
  EXPECT_NEAR(sz2 / N, 1.0, 4 * std::sqrt(2.0 / N));
  // The formula itself: (top 53 bits + 1/2) / 2^53.
  std::mt19937_64 f = monte_carlo_engine(3, 0), g = monte_carlo_engine(3, 0);
  EXPECT_EQ(monte_carlo_uniform(f), (static_cast<double>(g() >> 11) + 0.5) / 9007199254740992.0);
}

TEST(MonteCarlo, SampleDesignsAndDefaultEvaluationPoints) {
  const MonteCarloSample u = monte_carlo_sample(50, 1, MonteCarloDesign::uniform, 0, -1, 5);
  ASSERT_EQ(u.X.n_rows, 50u);
  ASSERT_EQ(u.X_eval.n_rows, 101u);
  EXPECT_DOUBLE_EQ(u.X_eval(0, 0), 0.0);
  EXPECT_DOUBLE_EQ(u.X_eval(100, 0), 1.0);
  EXPECT_TRUE(arma::all(arma::vectorise(u.X) > 0 && arma::vectorise(u.X) < 1));
  // The design draws come first: asking for evaluation points does not change X.
  const MonteCarloSample u2 = monte_carlo_sample(50, 1, MonteCarloDesign::uniform, 0, 0, 5);
  EXPECT_TRUE(arma::approx_equal(u.X, u2.X, "absdiff", 0.0));
  EXPECT_EQ(u2.X_eval.n_elem, 0u);
  // Row by row: the first point's coordinates are the first draws of stream 0.
  const MonteCarloSample u3 = monte_carlo_sample(4, 3, MonteCarloDesign::uniform, 0, 7, 5);
  std::mt19937_64 eng = monte_carlo_engine(5, 0);
  for (int j = 0; j < 3; ++j) EXPECT_EQ(u3.X(0, j), monte_carlo_uniform(eng));
  EXPECT_EQ(u3.X_eval.n_rows, 7u);
  const MonteCarloSample c = monte_carlo_sample(400, 3, MonteCarloDesign::cone, 2, -1, 1);
  EXPECT_EQ(c.X_eval.n_rows, 100u);
  EXPECT_TRUE(arma::all(arma::vectorise(c.X.cols(0, 1)) >= 0));
  EXPECT_TRUE(arma::any(c.X.col(2) < 0));
  // A different study is a different draw.
  const MonteCarloSample s1 = monte_carlo_sample(50, 1, MonteCarloDesign::uniform, 0, 0, 5, 1);
  EXPECT_FALSE(arma::approx_equal(u.X, s1.X, "absdiff", 0.0));
}

TEST(MonteCarlo, ResponsesColumnByColumn) {
  const arma::vec m = {1.0, -2.0, 0.5};
  const arma::mat Y = monte_carlo_responses(m, 0.3, 4, 11);
  std::mt19937_64 eng = monte_carlo_engine(11, 1);
  for (arma::uword r = 0; r < 4; ++r)
    for (arma::uword i = 0; i < 3; ++i)
      EXPECT_EQ(Y(i, r), m(i) + 0.3 * monte_carlo_normal(eng));
}

TEST(MonteCarlo, EstimatesMatchDirectWeights) {
  for (unsigned seed : {1u, 2u}) {
    for (arma::uword d : {1u, 2u}) {
      const MonteCarloSample s =
          monte_carlo_sample(60, d, MonteCarloDesign::uniform, 0, 9, seed);
      arma::vec m = arma::sin(3 * arma::sum(s.X, 1)), truth = arma::sin(3 * arma::sum(s.X_eval, 1));
      const arma::mat Y = monte_carlo_responses(m, 0.4, 30, seed);
      MonteCarloOptions o;
      o.bandwidth = 0.3;
      o.ridge_alpha = 2.0;
      o.estimators = {"nw", "lc", "ll", "ols", "ridge"};
      const auto r = monte_carlo_estimates(s.X, s.X_eval, Y, truth, o);
      ASSERT_EQ(r.size(), 5u);
      arma::mat Wnw(9, 60), Wll(9, 60);
      for (arma::uword j = 0; j < 9; ++j) {
        Wnw.row(j) = lp_weights(s.X, s.X_eval.row(j), 0.3, 0);
        Wll.row(j) = lp_weights(s.X, s.X_eval.row(j), 0.3, 1);
      }
      expect_summary(r[0].summary, Wnw, Y, truth, 1e-10);
      expect_summary(r[1].summary, Wnw, Y, truth, 1e-10);
      expect_summary(r[2].summary, Wll, Y, truth, 1e-9);
      expect_summary(r[3].summary, global_weights(s.X, s.X_eval, 0.0), Y, truth, 1e-10);
      EXPECT_EQ(r[1].estimator, "lc");
      EXPECT_DOUBLE_EQ(r[0].bandwidth, 0.3);
      EXPECT_TRUE(std::isnan(r[3].bandwidth));
      expect_summary(r[4].summary, global_weights(s.X, s.X_eval, 2.0), Y, truth, 1e-10);
      for (const auto& e : r)
        EXPECT_NEAR(e.summary.integrated_mse,
                    e.summary.integrated_bias2 + e.summary.integrated_variance, 1e-12);
    }
  }
}

TEST(MonteCarlo, OracleIsTheGridMinimum) {
  const MonteCarloSample s = monte_carlo_sample(80, 1, MonteCarloDesign::uniform, 0, -1, 4);
  const arma::vec m = arma::sin(6 * s.X.col(0)), truth = arma::sin(6 * s.X_eval.col(0));
  const arma::mat Y = monte_carlo_responses(m, 0.3, 25, 4);
  MonteCarloOptions o;
  o.estimators = {"ll"};
  o.bandwidth_grid = monte_carlo_default_grid(80, 1, MonteCarloDesign::uniform);
  for (arma::uword k : {0u, 1u}) {
    o.criterion_points = k;
    o.bandwidth = 0;
    const auto best = monte_carlo_estimates(s.X, s.X_eval, Y, truth, o);
    double crit = std::numeric_limits<double>::infinity(), h_best = 0;
    for (double h : o.bandwidth_grid) {
      MonteCarloOptions f = o;
      f.bandwidth = h;
      const auto r = monte_carlo_estimates(s.X, s.X_eval, Y, truth, f);
      const double c = k == 0 ? r[0].summary.integrated_mse : r[0].summary.mse(0);
      if (c < crit) {
        crit = c;
        h_best = h;
      }
    }
    EXPECT_EQ(best[0].bandwidth, h_best);
  }
  // The default grid: 0.3 n^(-1/5) times 0.25 ... 2.5.
  EXPECT_NEAR(o.bandwidth_grid(0), 0.3 * std::pow(80.0, -0.2) * 0.25, 1e-15);
  EXPECT_NEAR(o.bandwidth_grid(13), 0.3 * std::pow(80.0, -0.2) * 2.5, 1e-14);
}

TEST(MonteCarlo, TooSmallBandwidthsAreSkippedOrReported) {
  const MonteCarloSample s = monte_carlo_sample(30, 1, MonteCarloDesign::uniform, 0, -1, 9);
  const arma::vec m = s.X.col(0), truth = s.X_eval.col(0);
  const arma::mat Y = monte_carlo_responses(m, 0.1, 5, 9);
  MonteCarloOptions o;
  o.estimators = {"nw"};
  o.kernel = Kernel(KernelType::epanechnikov);
  o.bandwidth_grid = {1e-4, 0.5};
  const auto r = monte_carlo_estimates(s.X, s.X_eval, Y, truth, o);
  EXPECT_EQ(r[0].bandwidth, 0.5);
  o.bandwidth_grid = {1e-4};
  EXPECT_THROW(monte_carlo_estimates(s.X, s.X_eval, Y, truth, o), NumericalError);
}

TEST(MonteCarlo, BadInputNamesTheArgument) {
  const MonteCarloSample s = monte_carlo_sample(30, 1, MonteCarloDesign::uniform, 0, -1, 9);
  const arma::vec m = s.X.col(0), truth = s.X_eval.col(0);
  const arma::mat Y = monte_carlo_responses(m, 0.1, 5, 9);
  MonteCarloOptions o;
  o.bandwidth_grid = {0.2};
  auto msg = [&](const MonteCarloOptions& opt, const arma::vec& t) {
    try {
      monte_carlo_estimates(s.X, s.X_eval, Y, t, opt);
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  MonteCarloOptions bad = o;
  bad.estimators = {"kernel"};
  EXPECT_NE(msg(bad, truth).find("estimators: unknown estimator 'kernel'"), std::string::npos);
  bad = o;
  bad.bandwidth_grid = {-1.0};
  EXPECT_NE(msg(bad, truth).find("bandwidth_grid"), std::string::npos);
  bad = o;
  bad.bandwidth = -1;
  EXPECT_NE(msg(bad, truth).find("bandwidth"), std::string::npos);
  EXPECT_NE(msg(o, truth.head(3)).find("func"), std::string::npos);
  EXPECT_THROW(monte_carlo_design_from_name("sphere"), InvalidArgument);
  EXPECT_THROW(monte_carlo_sample(10, 2, MonteCarloDesign::cone, 3, -1, 0), InvalidArgument);
  EXPECT_THROW(monte_carlo_responses(m, 0.1, 1, 0), InvalidArgument);
  EXPECT_THROW(monte_carlo_sample(2, 1, MonteCarloDesign::uniform, 0, -1, 0), InvalidArgument);
}
