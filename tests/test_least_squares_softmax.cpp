// L-BFGS and the attention regression of Goulet Coulombe 2025, arXiv:2504.09663, eq. 28: the optimiser on standard problems,
// the analytic gradient against central finite differences, the attention identities, the
// independence of results from the thread count, and the out-of-sample comparison with OLS and
// Nadaraya-Watson on a nonlinear function (NW from a direct formula with a bandwidth chosen by
// leave-one-out CV over a grid).
#include <gtest/gtest.h>

#include "attnreg/base/arma.hpp"
#include <cmath>
#include <cstdio>

#include "attnreg/base/error.hpp"
#include "attnreg/solve/lbfgs.hpp"
#include "attnreg/least_squares/least_squares.hpp"
#include "attnreg/least_squares/least_squares_softmax.hpp"

using attnreg::AttentionRegression;
using attnreg::AttentionRegressionOptions;

TEST(Lbfgs, Rosenbrock) {
  auto f = [](const arma::vec& x, arma::vec& g) {
    double v = 0.0;
    g.zeros(x.n_elem);
    for (arma::uword i = 0; i + 1 < x.n_elem; ++i) {
      const double a = x(i + 1) - x(i) * x(i), b = 1.0 - x(i);
      v += 100.0 * a * a + b * b;
      g(i) += -400.0 * a * x(i) - 2.0 * b;
      g(i + 1) += 200.0 * a;
    }
    return v;
  };
  arma::vec x0(6);
  x0.fill(-1.2);
  attnreg::optim::LbfgsOptions o;
  o.gtol = 1e-10;
  o.ftol = 0.0;
  const auto r = attnreg::optim::minimize_lbfgs(f, x0, o);
  EXPECT_TRUE(r.converged) << r.message;
  EXPECT_LT(arma::abs(r.x - 1.0).max(), 1e-6);
  EXPECT_LT(r.iterations, 200);
}

TEST(Lbfgs, IllConditionedQuadratic) {
  const arma::vec d = arma::logspace(0, 4, 20);
  auto f = [&](const arma::vec& x, arma::vec& g) {
    g = d % (x - 1.0);
    return 0.5 * arma::dot(x - 1.0, d % (x - 1.0));
  };
  // Condition number 1e4 in 20 dimensions: with inexact (Wolfe) line searches L-BFGS needs a few
  // hundred iterations here (scipy's L-BFGS-B with the same memory: 371 to the same tolerance).
  attnreg::optim::LbfgsOptions o;
  o.memory = 20;
  o.max_iter = 2000;
  o.gtol = 1e-9;
  o.ftol = 0.0;
  const auto r = attnreg::optim::minimize_lbfgs(f, arma::zeros(20), o);
  EXPECT_TRUE(r.converged) << r.message;
  EXPECT_LT(r.iterations, 600);
  EXPECT_LT(arma::abs(r.x - 1.0).max(), 1e-8);
}

TEST(Lbfgs, NonFiniteRegionIsAvoided) {
  // f = x - log(x) has its minimum at 1 and is NaN for x <= 0; a long first step overshoots.
  auto f = [](const arma::vec& x, arma::vec& g) {
    g.set_size(1);
    g(0) = 1.0 - 1.0 / x(0);
    return x(0) > 0 ? x(0) - std::log(x(0)) : arma::datum::nan;
  };
  const auto r = attnreg::optim::minimize_lbfgs(f, arma::vec{0.05});
  EXPECT_NEAR(r.x(0), 1.0, 1e-5);
}

TEST(AttentionRegression, AnalyticGradientMatchesFiniteDifferences) {
  arma::arma_rng::set_seed(1);
  const arma::uword n = 37, q = 3, L = 2;
  arma::mat D = arma::join_horiz(arma::ones(n), arma::randn(n, q - 1));
  arma::mat Y = arma::randn(n, 2);
  arma::mat W = arma::randn(q, L) * 0.7;
  arma::mat G;
  const double f0 = attnreg::attention_regression_objective(D, Y, W, &G);
  EXPECT_NEAR(attnreg::attention_regression_objective(D, Y, W, nullptr), f0, 1e-15);
  for (arma::uword i = 0; i < W.n_elem; ++i) {
    const double h = 1e-6;
    arma::mat Wp = W, Wm = W;
    Wp(i) += h;
    Wm(i) -= h;
    const double fd = (attnreg::attention_regression_objective(D, Y, Wp, nullptr) -
                       attnreg::attention_regression_objective(D, Y, Wm, nullptr)) / (2 * h);
    EXPECT_NEAR(G(i), fd, 1e-7 * (1.0 + std::fabs(fd)));
  }
  // Oracle for the value: explicit n x n softmax with the diagonal masked.
  arma::mat S = D * W * W.t() * D.t();
  S.diag().fill(-arma::datum::inf);
  S.each_col() -= arma::max(S, 1);
  arma::mat A = arma::exp(S);
  A.each_col() /= arma::sum(A, 1);
  EXPECT_NEAR(f0, arma::accu(arma::square(A * Y - Y)) / (n * 2.0), 1e-14);
}

TEST(AttentionRegression, IdentitiesAndDeterminism) {
  arma::arma_rng::set_seed(2);
  arma::mat X = arma::randn(120, 2);
  arma::vec y = arma::tanh(2.0 * X.col(0)) + 0.1 * arma::randn(120);
  AttentionRegressionOptions o;
  o.rank = 2;
  o.n_starts = 2;
  o.seed = 7;
  AttentionRegression m(o);
  m.fit(X, y);
  arma::mat Xt = arma::randn(9, 2);
  const arma::mat A = m.attention_weights(Xt);
  EXPECT_GE(A.min(), 0.0);
  EXPECT_LT(arma::abs(arma::sum(A, 1) - 1.0).max(), 1e-12);
  EXPECT_LT(arma::abs(A * y - m.predict(Xt)).max(), 1e-12);
  // Scores through the raw-design embedding reproduce the weights.
  const arma::mat Dt = arma::join_horiz(arma::ones(9), Xt), Dtr = arma::join_horiz(arma::ones(120), X);
  arma::mat S = Dt * m.embedding() * Dtr.t();
  S.each_col() -= arma::max(S, 1);
  arma::mat A2 = arma::exp(S);
  A2.each_col() /= arma::sum(A2, 1);
  EXPECT_LT(arma::abs(A2 - A).max(), 1e-10);
  // The objective is the MSE of the leave-self-out predictions.
  EXPECT_NEAR(m.objective(), arma::mean(arma::square(m.loo_predictions().col(0) - y)), 1e-12);
  EXPECT_LE(m.objective(), m.start_objectives().min() + 1e-15);
  // Same seed, one thread: identical fit.
  o.n_threads = 1;
  AttentionRegression m1(o);
  m1.fit(X, y);
  EXPECT_EQ(m1.objective(), m.objective());
  EXPECT_LT(arma::abs(m1.predict(Xt) - m.predict(Xt)).max(), 1e-15);
  // State round trip.
  AttentionRegression back = AttentionRegression::from_state(o, m.state());
  EXPECT_LT(arma::abs(back.predict(Xt) - m.predict(Xt)).max(), 1e-15);
}

TEST(AttentionRegression, BadInput) {
  AttentionRegressionOptions o;
  AttentionRegression m(o);
  EXPECT_THROW(m.fit(arma::randn(1, 2), arma::randn(1)), attnreg::InvalidArgument);
  EXPECT_THROW(m.predict(arma::randn(2, 2)), attnreg::InvalidArgument);
  o.rank = 0;
  EXPECT_THROW(AttentionRegression(o).fit(arma::randn(5, 2), arma::randn(5)), attnreg::InvalidArgument);
}

namespace {
// Nadaraya-Watson with a Gaussian product kernel on standardised x, bandwidth by leave-one-out
// CV over a grid: a direct formula (the kernel core's own NW is tested by its own suite).
arma::vec nw_predict(const arma::mat& Xtr, const arma::vec& y, const arma::mat& Xte, double h) {
  arma::vec out(Xte.n_rows);
  for (arma::uword i = 0; i < Xte.n_rows; ++i) {
    const arma::vec d2 = arma::sum(arma::square(Xtr.each_row() - Xte.row(i)), 1);
    const arma::vec w = arma::exp(-0.5 * (d2 - d2.min()) / (h * h));
    out(i) = arma::dot(w, y) / arma::accu(w);
  }
  return out;
}
double nw_cv_bandwidth(const arma::mat& X, const arma::vec& y) {
  double best_h = 1, best = arma::datum::inf;
  for (double h : arma::logspace<arma::vec>(-1.5, 0.5, 25)) {
    double cv = 0;
    for (arma::uword i = 0; i < X.n_rows; ++i) {
      const arma::vec d2 = arma::sum(arma::square(X.each_row() - X.row(i)), 1);
      arma::vec w = arma::exp(-0.5 * d2 / (h * h));
      w(i) = 0;
      const double p = arma::dot(w, y) / arma::accu(w);
      cv += (y(i) - p) * (y(i) - p);
    }
    if (cv < best) { best = cv; best_h = h; }
  }
  return best_h;
}
}  // namespace

// y = tanh(2 x1) + 0.5 x2^2 + noise: nonlinear in both inputs. The attention regression's
// softmax weights adapt to it; OLS cannot. Reported numbers go to the closing note.
TEST(AttentionRegression, BeatsOLSOutOfSampleOnNonlinearFunction) {
  arma::arma_rng::set_seed(42);
  const arma::uword n = 400, m = 2000;
  auto f = [](const arma::mat& X) { return arma::vec(arma::tanh(2.0 * X.col(0)) + 0.5 * arma::square(X.col(1))); };
  const arma::mat Xtr = arma::randn(n, 2), Xte = arma::randn(m, 2);
  const arma::vec ytr = f(Xtr) + 0.3 * arma::randn(n), fte = f(Xte);
  attnreg::OLS ols;
  ols.fit(Xtr, ytr);
  const double mse_ols = arma::mean(arma::square(ols.predict(Xte).col(0) - fte));
  AttentionRegressionOptions o;
  o.rank = 3;
  o.n_starts = 4;
  AttentionRegression ar(o);
  ar.fit(Xtr, ytr);
  const double mse_ar = arma::mean(arma::square(ar.predict(Xte).col(0) - fte));
  const double h = nw_cv_bandwidth(Xtr, ytr);
  const double mse_nw = arma::mean(arma::square(nw_predict(Xtr, ytr, Xte, h) - fte));
  std::printf("out-of-sample MSE vs truth (n=%u, noise var 0.09): OLS %.4f  attention regression "
              "%.4f  NW(h=%.3f) %.4f  [AR objective %.4f, %d evals, converged %d]\n",
              (unsigned)n, mse_ols, mse_ar, h, mse_nw, ar.objective(), ar.n_evals(), (int)ar.converged());
  EXPECT_LT(mse_ar, 0.6 * mse_ols);
  EXPECT_LT(mse_nw, mse_ols);
}
