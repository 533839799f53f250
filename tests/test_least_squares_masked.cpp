// Masked (causal) least-squares attention, Goulet Coulombe 2025, arXiv:2504.09663, eq. 35, on a small AR(1): the O(n r) prefix-
// sum predictions against the explicit masked hat matrix (brute force), the recursive pseudo-
// out-of-sample forecasts against explicit refits, and the leakage the paper describes: masked
// forecasts move when FUTURE observations change, recursive ones do not.
#include <gtest/gtest.h>

#include "attnreg/base/arma.hpp"
#include <cmath>

#include "attnreg/base/error.hpp"
#include "attnreg/least_squares/least_squares.hpp"
#include "attnreg/least_squares/least_squares_masked.hpp"
#include "attnreg/least_squares/least_squares_spectral.hpp"

namespace {

// y_t = 0.3 + 0.6 y_{t-1} + e_t; returns (X = y_{t-1}, y = y_t), n rows.
void ar1(arma::uword n, unsigned seed, arma::mat& X, arma::vec& y) {
  arma::arma_rng::set_seed(seed);
  arma::vec s(n + 1);
  s(0) = 0.75;
  const arma::vec e = arma::randn(n + 1);
  for (arma::uword t = 1; t <= n; ++t) s(t) = 0.3 + 0.6 * s(t - 1) + e(t);
  X = s.head(n);
  y = s.tail(n);
}

// Brute force eq. 35 from the explicit hat matrix H = D (D'D)^{-1} D'.
arma::mat brute_masked(const arma::mat& D, const arma::vec& y, bool strict) {
  const arma::mat H = D * arma::inv(D.t() * D) * D.t();  // oracle only
  arma::mat out(D.n_rows, 1);
  for (arma::uword t = 0; t < D.n_rows; ++t) {
    const arma::uword last = strict ? t : t + 1;
    if (last == 0) {
      out(t, 0) = arma::datum::nan;
      continue;
    }
    double num = 0, den = 0;
    for (arma::uword tau = 0; tau < last; ++tau) {
      num += H(t, tau) * y(tau);
      den += H(t, tau);
    }
    out(t, 0) = num / den;
  }
  return out;
}

}  // namespace

TEST(Masked, PrefixSumsEqualExplicitMaskedWeights) {
  arma::mat X;
  arma::vec y;
  ar1(40, 1, X, y);
  attnreg::OLS fit;
  fit.fit(X, y);
  const arma::mat D = arma::join_horiz(arma::ones(40), X);
  for (bool strict : {false, true}) {
    const arma::mat fast = fit.masked_predictions(strict);
    const arma::mat W = fit.masked_weights(strict);
    const arma::mat slow = brute_masked(D, y, strict);
    for (arma::uword t = strict ? 1 : 0; t < 40; ++t) {
      if (!std::isfinite(slow(t, 0))) continue;
      EXPECT_NEAR(fast(t, 0), slow(t, 0), 1e-9 * (1.0 + std::fabs(slow(t, 0)))) << t;
      EXPECT_NEAR(arma::accu(W.row(t)), 1.0, 1e-10);
      EXPECT_NEAR(arma::dot(W.row(t), y), fast(t, 0), 1e-9 * (1.0 + std::fabs(fast(t, 0))));
      for (arma::uword tau = (strict ? t : t + 1); tau < 40; ++tau) EXPECT_EQ(W(t, tau), 0.0);
    }
    if (strict) {
      EXPECT_TRUE(std::isnan(fast(0, 0)));  // row 0 has no past
    }
  }
  // Without masking, eq. 35 at the last row (tau <= n) is the ordinary fitted value: rows of H
  // already sum to 1 with an intercept.
  EXPECT_NEAR(fit.masked_predictions(false)(39, 0), fit.fitted()(39, 0), 1e-10);
  // The same for ridge through its training factors.
  attnreg::RidgeOptions ro;
  ro.lambda = 3.0;
  attnreg::Ridge r(ro);
  r.fit(X, y);
  const arma::mat H = r.attention_weights(X);
  const arma::mat rm = r.masked_predictions(true);
  for (arma::uword t = 1; t < 40; ++t) {
    const double den = arma::accu(H.row(t).head(t));
    EXPECT_NEAR(rm(t, 0), arma::dot(H.row(t).head(t), y.head(t)) / den, 1e-9);
  }
}

TEST(Masked, DegenerateRowsAreNaNNotGarbage) {
  // Factors whose masked weights cancel exactly: f_0 = (1, 0), f_1 = (-1, 0) -> a_10 + a_11 = 0.
  arma::mat F(3, 2, arma::fill::zeros);
  F(0, 0) = 1.0;
  F(1, 0) = -1.0;
  F(2, 1) = 1.0;
  const arma::mat Y = arma::vec{1.0, 2.0, 3.0};
  const arma::mat p = attnreg::masked_attention_predict(F, Y, false);
  EXPECT_NEAR(p(0, 0), 1.0, 1e-15);
  EXPECT_TRUE(std::isnan(p(1, 0)));
  const arma::mat W = attnreg::masked_attention_weights(F, false);
  EXPECT_TRUE(W.row(1).has_nan());
}

TEST(PseudoOOS, RecursiveForecastsEqualExplicitRefits) {
  arma::mat X;
  arma::vec y;
  ar1(50, 2, X, y);
  attnreg::PseudoOOSOptions o;
  o.start = 10;
  o.keep_weights = true;
  const attnreg::PseudoOOSResult res = attnreg::pseudo_out_of_sample(X, y, o);
  ASSERT_EQ(res.rows.n_elem, 40u);
  const arma::mat D = arma::join_horiz(arma::ones(50), X);
  const arma::mat masked_bf = brute_masked(D, y, true);
  for (arma::uword j = 0; j < 40; ++j) {
    const arma::uword t = 10 + j;
    const arma::mat Dt = D.rows(0, t - 1);
    const arma::vec b = arma::solve(Dt, y.head(t));  // oracle: least squares on rows < t
    EXPECT_NEAR(res.recursive(j, 0), arma::dot(D.row(t), b), 1e-10);
    EXPECT_NEAR(res.masked(j, 0), masked_bf(t, 0), 1e-9);
    EXPECT_NEAR(arma::dot(res.weights_recursive.row(j), y), res.recursive(j, 0), 1e-10);
    EXPECT_NEAR(arma::dot(res.weights_masked.row(j), y), res.masked(j, 0), 1e-9);
    EXPECT_NEAR(res.weight_gap(j),
                arma::accu(arma::abs(res.weights_masked.row(j) - res.weights_recursive.row(j))), 1e-10);
    EXPECT_EQ(arma::accu(arma::abs(res.weights_recursive.row(j).tail(50 - t))), 0.0);
  }
  EXPECT_NEAR(res.mse_recursive(0), arma::mean(arma::square(res.y.col(0) - res.recursive.col(0))), 1e-14);
  // The masked weights are not the recursive ones: Omega is estimated on the full sample.
  EXPECT_GT(arma::mean(res.weight_gap), 1e-3);
}

TEST(PseudoOOS, MaskingStillLeaksTheFuture) {
  arma::mat X;
  arma::vec y;
  ar1(60, 3, X, y);
  attnreg::PseudoOOSOptions o;
  o.start = 10;
  const attnreg::PseudoOOSResult base = attnreg::pseudo_out_of_sample(X, y, o);
  // Change only the last 10 observations (a regime shift at the end of the sample).
  arma::mat X2 = X;
  arma::vec y2 = y;
  for (arma::uword t = 50; t < 60; ++t) {
    y2(t) += 5.0 + 0.5 * t;
    if (t + 1 < 60) X2(t + 1, 0) = y2(t);
  }
  const attnreg::PseudoOOSResult moved = attnreg::pseudo_out_of_sample(X2, y2, o);
  // Forecasts of rows 10..49 use only rows before them: the recursive ones are untouched ...
  const arma::uword m = 40;
  EXPECT_LT(arma::abs(moved.recursive.rows(0, m - 1) - base.recursive.rows(0, m - 1)).max(), 1e-12);
  // ... but the masked ones move, through Omega: the leakage of Goulet Coulombe 2025, arXiv:2504.09663, section 4.3.
  EXPECT_GT(arma::abs(moved.masked.rows(0, m - 1) - base.masked.rows(0, m - 1)).max(), 1e-3);
  EXPECT_THROW(attnreg::pseudo_out_of_sample(X, y, attnreg::PseudoOOSOptions{true, 0.0, 60, false}),
               attnreg::InvalidArgument);
}

TEST(PseudoOOS, RidgeVariant) {
  arma::mat X;
  arma::vec y;
  ar1(30, 4, X, y);
  attnreg::PseudoOOSOptions o;
  o.ridge = 2.0;
  const attnreg::PseudoOOSResult res = attnreg::pseudo_out_of_sample(X, y, o);
  EXPECT_EQ(res.rows(0), 3u);  // default start: q + 1
  for (arma::uword j = 0; j < res.rows.n_elem; ++j) {
    const arma::uword t = res.rows(j);
    attnreg::RidgeOptions ro;
    ro.lambda = 2.0;
    attnreg::Ridge r(ro);
    r.fit(X.rows(0, t - 1), y.head(t));
    EXPECT_NEAR(res.recursive(j, 0), r.predict(X.row(t))(0, 0), 1e-12);
  }
}
