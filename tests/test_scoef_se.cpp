// SmoothCoefficient::coefficient_se against a direct float64 per-point weighted least-squares
// sandwich (explicit normal equations), with ties in Z and without the intercept.
#include <gtest/gtest.h>

#include <cmath>

#include "attnreg/semiparametric/semiparametric.hpp"

using namespace attnreg;

TEST(SmoothCoefficientSe, MatchesSandwichOracle) {
  for (int seed : {1, 2}) {
    arma::arma_rng::set_seed(seed);
    const arma::uword n = 90;
    arma::mat Z = arma::randu(n, 1);
    if (seed == 1) Z = arma::round(Z * 10) / 10;
    const arma::mat X = arma::randn(n, 2);
    const arma::vec y = 1 + X.col(0) % (1 + Z.col(0)) + (0.1 + Z.col(0)) % arma::randn(n);
    const double h = 0.2;
    SmoothCoefficientOptions o;
    o.fit_intercept = seed == 1;
    SmoothCoefficient m(o);
    m.fit(X, y, Z, arma::vec{h});
    const arma::mat W = o.fit_intercept ? arma::mat(arma::join_rows(arma::ones(n), X)) : X;
    const auto kw = [&](double z) { return arma::vec(arma::exp(-0.5 * arma::square((Z.col(0) - z) / h))); };
    arma::vec fitted(n);
    for (arma::uword i = 0; i < n; ++i) {
      const arma::vec w = kw(Z(i, 0));
      const arma::mat M = W.t() * (W.each_col() % w);
      fitted(i) = arma::dot(W.row(i), arma::solve(M, W.t() * (w % y)));
    }
    const arma::vec e2 = arma::square(y - fitted);
    const arma::mat Zn(arma::vec{0.15, 0.5, 0.93});
    const arma::mat se = m.coefficient_se(Zn);
    ASSERT_EQ(se.n_rows, 3u);
    ASSERT_EQ(se.n_cols, W.n_cols);
    for (arma::uword j = 0; j < Zn.n_rows; ++j) {
      const arma::vec w = kw(Zn(j, 0));
      const arma::mat Mi = arma::inv(W.t() * (W.each_col() % w));
      const arma::mat meat = W.t() * (W.each_col() % (arma::square(w) % e2));
      const arma::vec want = arma::sqrt(arma::diagvec(Mi * meat * Mi));
      for (arma::uword k = 0; k < W.n_cols; ++k) EXPECT_NEAR(se(j, k) / want(k), 1.0, 1e-9);
    }
  }
}
