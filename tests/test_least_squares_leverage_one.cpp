// HC2/HC3 with rows of leverage one, and frequency weights that are not whole numbers.
//
// A column that is 1 on one row (an event dummy) fits that row exactly: its residual is 0 and its
// HC2/HC3 term e^2 / (1 - h)^k is 0/0. OLS (both the QR path and the tall path) leaves such terms
// out, as the absorbed fixed-effects path does for singleton levels, and Inference says how many.
// Oracle: the sandwich written out from arma's QR with the rows known by construction to be
// fitted exactly left out (no tolerance). Tolerance 1e3 n u cond(D) (both sides are QR-based).
#include <gtest/gtest.h>

#include "attnreg/base/arma.hpp"
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "attnreg/base/error.hpp"
#include "attnreg/detail/least_squares_internal.hpp"
#include "attnreg/least_squares/least_squares.hpp"
#include "attnreg/least_squares/least_squares_fe.hpp"
#include "attnreg/least_squares/least_squares_spectral.hpp"
#include "attnreg/least_squares/ols_tall.hpp"

using namespace attnreg;

namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();

struct Event {
  arma::mat X;  // x1, x2, one dummy per event row
  arma::vec y;
  arma::uvec rows;
};

Event event_design(arma::uword n, unsigned seed, arma::uword events) {
  arma::arma_rng::set_seed(seed);
  Event e;
  e.X.set_size(n, 2 + events);
  e.X.col(0) = arma::randn(n);
  e.X.col(1) = arma::randu(n) * 2.0 - 1.0;
  e.rows = arma::sort(arma::randperm(n, events));
  for (arma::uword k = 0; k < events; ++k) {
    e.X.col(2 + k).zeros();
    e.X(e.rows(k), 2 + k) = 1.0;
  }
  e.y = 1.0 + 0.5 * e.X.col(0) - e.X.col(1) + arma::randn(n);
  e.y(e.rows) += 3.0;
  return e;
}

// Standard errors of HC2 / HC3 from arma's QR of D = [1, X], rows `one` left out of the meat.
arma::vec oracle_se(const arma::mat& X, const arma::vec& y, CovType type, const arma::uvec& one,
                    double* cond) {
  const arma::mat D = arma::join_rows(arma::ones(X.n_rows), X);
  arma::mat Q, R;
  arma::qr_econ(Q, R, D);
  const arma::vec b = arma::solve(arma::trimatu(R), Q.t() * y);
  const arma::vec e = y - D * b;
  const arma::vec h = arma::sum(arma::square(Q), 1);
  arma::vec s(X.n_rows);
  for (arma::uword i = 0; i < X.n_rows; ++i) {
    s(i) = e(i) / (type == CovType::HC2 ? std::sqrt(1.0 - h(i)) : 1.0 - h(i));
  }
  s(one).zeros();
  const arma::mat Z = D.each_col() % s;
  const arma::mat Ri = arma::inv(arma::trimatu(R));
  const arma::mat B = Ri * Ri.t();
  *cond = arma::cond(D);
  return arma::sqrt(arma::diagvec(B * (Z.t() * Z) * B));
}

}  // namespace

TEST(LeverageOne, HC2AndHC3LeaveOutTheZeroOverZeroTermsOfEventRows) {
  // n = 60 and 200 gave NaN for every standard error before (the computed 1 - h was exactly 0),
  // n = 80 a finite value (1 - h a few ulps): both are now the oracle's.
  for (arma::uword n : {60u, 80u, 200u}) {
    for (unsigned seed : {1u, 2u, 3u}) {
      for (arma::uword events : {1u, 2u}) {
        const Event ev = event_design(n, seed, events);
        OLS m;
        m.fit(ev.X, ev.y);
        for (CovType type : {CovType::HC2, CovType::HC3}) {
          CovOptions cov;
          cov.type = type;
          const Inference inf = m.inference(cov);
          double cond = 0;
          const arma::vec want = oracle_se(ev.X, ev.y, type, ev.rows, &cond);
          ASSERT_TRUE(inf.std_error.is_finite()) << "n " << n << " seed " << seed;
          const double err = arma::abs(inf.std_error.col(0) - want).max() / want.max();
          EXPECT_LT(err, 1e3 * n * kEps * cond) << "n " << n << " seed " << seed;
          EXPECT_EQ(inf.n_leverage_one, events) << "n " << n << " seed " << seed;
        }
        CovOptions hc1;
        hc1.type = CovType::HC1;
        EXPECT_EQ(m.inference(hc1).n_leverage_one, 0u);  // only HC2/HC3 divide by 1 - h
      }
    }
  }
}

TEST(LeverageOne, TallPathLeavesOutTheSameRows) {
  const arma::uword n = 24000;
  const Event ev = event_design(n, 9, 1);
  for (CovType type : {CovType::HC2, CovType::HC3}) {
    CovOptions cov;
    cov.type = type;
    OLSOptions opt;
    opt.precision = Precision::Double;
    ASSERT_TRUE(ols_tall_applies(n, ev.X.n_cols + 1, opt, cov));
    const StridedMatrix sx{ev.X.memptr(), n, ev.X.n_cols, 1, n};
    const TallOLS t = ols_tall(sx, ev.y, arma::vec(), opt, cov);
    ASSERT_TRUE(t.done);
    double cond = 0;
    const arma::vec want = oracle_se(ev.X, ev.y, type, ev.rows, &cond);
    EXPECT_LT(arma::abs(t.std_errors - want).max() / want.max(), 1e3 * n * kEps * cond);
    EXPECT_EQ(t.inf.n_leverage_one, 1u);
  }
}

TEST(LeverageOne, ToleranceFollowsTheBound) {
  // 16 r u cond: grows with the rank and the condition number, never below 16 r u.
  EXPECT_DOUBLE_EQ(ls_detail::leverage_one_tol(3, 0.5), 16.0 * 3 * kEps);
  EXPECT_DOUBLE_EQ(ls_detail::leverage_one_tol(3, 1e4), 16.0 * 3 * kEps * 1e4);
}

// ---------------------------------------------------------------- frequency weights

namespace {

template <class Fn>
void expect_fweight_error(Fn fn, const std::string& what) {
  try {
    fn();
    ADD_FAILURE() << what << ": expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("weights: weight 5 is 0.5; frequency weights count copies"),
              std::string::npos) << what << ": " << m;
    EXPECT_NE(m.find("analytic"), std::string::npos) << what << ": " << m;
  }
}

}  // namespace

TEST(FrequencyWeights, EveryPathRefusesWeightsThatAreNotWholeNumbers) {
  arma::arma_rng::set_seed(5);
  const arma::uword n = 20;
  const arma::mat X = arma::randn(n, 2);
  const arma::vec y = arma::randn(n);
  arma::vec w(n, arma::fill::ones);
  w(4) = 0.5;
  arma::umat codes(n, 1);
  for (arma::uword i = 0; i < n; ++i) codes(i, 0) = i % 3;
  OLSOptions oo;
  oo.weight_type = WeightType::Frequency;
  expect_fweight_error([&] { OLS(oo).fit(X, y, w); }, "OLS");
  RidgeOptions ro;
  ro.weight_type = WeightType::Frequency;
  expect_fweight_error([&] { Ridge(ro).fit(X, y, w); }, "Ridge");
  PCROptions po;
  po.weight_type = WeightType::Frequency;
  expect_fweight_error([&] { PCR(po).fit(X, y, w); }, "PCR");
  AbsorbOptions ao;
  ao.frequency_weights = true;
  expect_fweight_error([&] { AbsorbedOLS(ao).fit(X, y, codes, w); }, "AbsorbedOLS");
  // Whole numbers (copies) are accepted, and analytic weights of any size.
  w(4) = 2.0;
  EXPECT_NO_THROW(OLS(oo).fit(X, y, w));
  w(4) = 0.5;
  EXPECT_NO_THROW(OLS().fit(X, y, w));
}

// ---------------------------------------------------------------- fixed effects alone

TEST(AbsorbedOLSFixedEffectsOnly, GroupMeansWithinRSquaredZeroAndTheDummyDf) {
  // X without columns: the fixed effects alone are the (weighted) group means; the within R^2
  // is 0, the residual df n - G, predictions and attention weights reproduce the means.
  for (unsigned seed : {1u, 2u}) {
    arma::arma_rng::set_seed(seed);
    const arma::uword n = 50, G = 4;
    arma::umat codes(n, 1);
    for (arma::uword i = 0; i < n; ++i) codes(i, 0) = (i * 7 + seed) % G;
    const arma::vec y = arma::randn(n) + arma::conv_to<arma::vec>::from(codes.col(0));
    const arma::vec w = 0.5 + arma::randu(n);
    AbsorbedOLS m;
    m.fit(arma::mat(n, 0), y, codes, w);
    arma::vec mean(G, arma::fill::zeros), wsum(G, arma::fill::zeros);
    for (arma::uword i = 0; i < n; ++i) {
      mean(codes(i, 0)) += w(i) * y(i);
      wsum(codes(i, 0)) += w(i);
    }
    mean /= wsum;
    const arma::mat p = m.predict(arma::mat(n, 0), codes);
    for (arma::uword i = 0; i < n; ++i) EXPECT_NEAR(p(i, 0), mean(codes(i, 0)), 1e3 * n * kEps);
    EXPECT_NEAR(m.r_squared_within()(0), 0.0, 1e3 * n * kEps);
    EXPECT_EQ(m.df_residual(), static_cast<double>(n - G));
    const arma::mat A = m.attention_weights(arma::mat(n, 0), codes);
    EXPECT_LT(arma::abs(A * y - p.col(0)).max(), 1e3 * n * kEps);
    EXPECT_EQ(m.std_errors().n_rows, 0u);
  }
}
