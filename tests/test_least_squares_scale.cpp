// Least squares at extreme scales and on degenerate designs: Ridge's filter without s^2 (X scaled
// by 1e155 used to give inf / inf), OLS standard errors in scaled units (y * 1e160 or X * 1e-160
// used to overflow sigma^2 or (D'D)^{-1} although the standard errors are representable), the
// HAC lag range, and Ridge/PCR on a design with no variation (no kept component).
#include <gtest/gtest.h>

#include "attnreg/base/arma.hpp"
#include <cmath>

#include "attnreg/base/error.hpp"
#include "attnreg/least_squares/least_squares.hpp"
#include "attnreg/least_squares/least_squares_softmax.hpp"
#include "attnreg/least_squares/least_squares_spectral.hpp"

using namespace attnreg;

namespace {

void expect_rel(const arma::mat& got, const arma::mat& want, double tol) {
  ASSERT_EQ(got.n_rows, want.n_rows);
  ASSERT_EQ(got.n_cols, want.n_cols);
  for (arma::uword i = 0; i < got.n_elem; ++i) {
    ASSERT_TRUE(std::isfinite(got(i))) << "entry " << i << " = " << got(i);
    EXPECT_LE(std::abs(got(i) - want(i)), tol * std::abs(want(i))) << "entry " << i;
  }
}

struct Data {
  arma::mat X;
  arma::vec y;
};

Data make_data(arma::uword n, arma::uword p, int seed) {
  arma::arma_rng::set_seed(seed);
  Data d;
  d.X = arma::randn(n, p);
  d.y = d.X * arma::linspace(1.0, 2.0, p) + arma::randn(n);
  return d;
}

}  // namespace

// Ridge with X -> c X and lambda -> c^2 lambda is the same problem: coefficients scale by 1/c,
// the intercept and fitted values are unchanged. Powers of ten so the scaled data are inexact.
TEST(LeastSquaresScale, RidgeIsEquivariantWithPenaltyScaledByCSquared) {
  for (int seed : {1, 2}) {
    const Data d = make_data(40, 3, seed);
    for (double lambda : {0.0, 0.5, 30.0}) {
      RidgeOptions o;
      o.lambda = lambda;
      Ridge ref(o);
      ref.fit(d.X, d.y);
      for (double c : {1e155, 1e-155, 1e150, 1e-150}) {
        RidgeOptions oc;
        oc.lambda = lambda * c * c;  // representable for these c
        if (!std::isfinite(oc.lambda)) continue;
        Ridge m(oc);
        m.fit(d.X * c, d.y);
        arma::mat want = ref.coefficients();
        want.rows(1, want.n_rows - 1) /= c;
        expect_rel(m.coefficients(), want, 1e-10);
        expect_rel(m.fitted(), ref.fitted(), 1e-12);
        expect_rel(m.predict(d.X.rows(0, 4) * c), ref.predict(d.X.rows(0, 4)), 1e-12);
      }
    }
  }
}

// With X * 1e155 and lambda = 1 the penalty is negligible next to s^2 ~ 1e311: the answer is OLS.
TEST(LeastSquaresScale, RidgeHugeDesignFixedPenaltyIsLeastSquares) {
  const Data d = make_data(30, 2, 3);
  OLS ols;
  ols.fit(d.X, d.y);
  Ridge m;  // lambda = 1
  m.fit(d.X * 1e155, d.y);
  arma::mat want = ols.coefficients();
  want.rows(1, 2) /= 1e155;
  expect_rel(m.coefficients(), want, 1e-10);
  // Tiny design with lambda = 1: phi ~ s^2 ~ 1e-310 (coefficients s / lambda, not 0 / 0).
  Ridge t;
  t.fit(d.X * 1e-155, d.y);
  const arma::mat c = t.coefficients();
  for (arma::uword i = 0; i < c.n_elem; ++i) EXPECT_TRUE(std::isfinite(c(i)));
}

// A design without variation keeps no component: coefficients 0, intercept and fitted values the
// mean (previously a reference bound to the null memory of an empty vector, UBSan).
TEST(LeastSquaresScale, RidgeAndPcrWithoutVariationInX) {
  const Data d = make_data(20, 2, 4);
  const arma::mat ones(20, 2, arma::fill::ones);
  Ridge r;
  r.fit(ones, d.y);
  EXPECT_EQ(r.singular_values().n_elem, 0u);
  EXPECT_DOUBLE_EQ(r.coefficients()(0), arma::mean(d.y));
  EXPECT_EQ(r.coefficients()(1), 0.0);
  EXPECT_EQ(r.coefficients()(2), 0.0);
  const arma::mat A = r.attention_weights(ones.rows(0, 2));
  EXPECT_NEAR(arma::accu(A.row(0)), 1.0, 1e-12);
  EXPECT_EQ(r.embedding().n_rows, 3u);
  EXPECT_EQ(r.factors(ones.rows(0, 2)).n_cols, 1u);
  EXPECT_NEAR(r.predict(ones.rows(0, 0))(0), arma::mean(d.y), 1e-12);
  PCROptions po;
  po.rank = -1;
  PCR p(po);
  p.fit(d.X.rows(0, 0), d.y.rows(0, 0));
  EXPECT_EQ(p.rank(), 0);
  EXPECT_DOUBLE_EQ(p.coefficients()(0), d.y(0));
  EXPECT_DOUBLE_EQ(p.fitted()(0), d.y(0));
  EXPECT_EQ(p.explained_variance_ratio().n_elem, 0u);
}

TEST(LeastSquaresScale, PcrExplainedVarianceAtHugeScale) {
  const Data d = make_data(30, 3, 5);
  PCROptions po;
  po.rank = 2;
  PCR a(po), b(po);
  a.fit(d.X, d.y);
  b.fit(d.X * 1e200, d.y);
  expect_rel(b.explained_variance_ratio(), a.explained_variance_ratio(), 1e-12);
}

// OLS standard errors scale with y and inversely with X even where sigma^2 or (D'D)^{-1} overflow.
TEST(LeastSquaresScale, OlsStandardErrorsAtExtremeScales) {
  const Data d = make_data(50, 2, 6);
  for (CovType type : {CovType::Classical, CovType::HC1, CovType::HC3, CovType::HAC}) {
    CovOptions cov;
    cov.type = type;
    OLS ref;
    ref.fit(d.X, d.y);
    const arma::mat se0 = ref.std_errors(cov);
    for (double sx : {1e-160, 1.0, 1e160}) {
      for (double sy : {1e-160, 1.0, 1e160}) {
        // Slope standard errors of order sy / sx = 1e320 (inf is then right) or 1e-320
        // (subnormal, digits lost) are outside double's normal range: not tested here.
        if (sy / sx > 1e300 || sy / sx < 1e-300) continue;
        OLS m;
        m.fit(d.X * sx, d.y * sy);
        arma::mat want = se0 * sy;
        want.rows(1, 2) /= sx;
        expect_rel(m.std_errors(cov), want, 1e-9);
      }
    }
  }
}

TEST(LeastSquaresScale, HacLagsMustLeavePairsOfRows) {
  const Data d = make_data(30, 2, 7);
  OLS m;
  m.fit(d.X, d.y);
  CovOptions cov;
  cov.type = CovType::HAC;
  cov.maxlags = 29;
  EXPECT_NO_THROW(m.std_errors(cov));
  for (int L : {30, 1000000}) {
    cov.maxlags = L;
    try {
      m.std_errors(cov);
      ADD_FAILURE() << "maxlags " << L << " accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("maxlags: must be in [0, n - 1] = [0, 29]"),
                std::string::npos)
          << e.what();
    }
  }
}

// Rank-deficient designs alias the columns R's lm aliases (dqrdc2's limited pivoting: columns in
// order, a column in the span of earlier kept ones moves to the end). Reference values computed
// with R 4's lm(y ~ ...) on these data (coef() printed with digits = 17).
TEST(LeastSquaresAliasing, FollowsLmColumnOrder) {
  {  // one row: only the intercept is estimable; predictions are the mean everywhere
    OLS m;
    m.fit(arma::mat({{0.3, -1.2}}), arma::vec({2.5}));
    EXPECT_EQ(m.rank(), 1u);
    EXPECT_DOUBLE_EQ(m.coefficients()(0), 2.5);
    EXPECT_TRUE(std::isnan(m.coefficients()(1)));
    EXPECT_TRUE(std::isnan(m.coefficients()(2)));
    const arma::mat p = m.predict(arma::mat({{0, 1}, {1, 2}, {5, 3}}));
    for (double v : p) EXPECT_DOUBLE_EQ(v, 2.5);
  }
  {  // n = 3 < p + 1 = 5: intercept, X1, X2 kept; X3, X4 aliased
    arma::mat X = arma::vec({0.1, 0.5, -0.7, 1.2, 0.3, 0.8, -0.4, 0.9, 1.1, 0.6, -1.5, 0.2});
    X.reshape(3, 4);
    OLS m;
    m.fit(X, arma::vec({1.1, -0.4, 2.3}));
    const arma::vec want = {0.30909090909090869, -1.90909090909090873, 0.81818181818181857};
    for (arma::uword j = 0; j < 3; ++j) EXPECT_NEAR(m.coefficients()(j), want(j), 1e-13);
    EXPECT_TRUE(std::isnan(m.coefficients()(3)));
    EXPECT_TRUE(std::isnan(m.coefficients()(4)));
    EXPECT_NEAR(m.predict(arma::mat({{1, 2, 3, 4}}))(0), 0.036363636363637042, 1e-13);
  }
  {  // y ~ z + x + w with z = 2 x: x (the later of the collinear pair) is aliased
    const arma::vec x = {1, 2, 3, 4, 5};
    const arma::mat X = arma::join_horiz(2 * x, x, arma::vec({0.3, -0.1, 0.7, 0.2, 0.9}));
    OLS m;
    m.fit(X, arma::vec({1, 3, 2, 5, 4}));
    EXPECT_NEAR(m.coefficients()(0), 0.45542168674698807, 1e-13);
    EXPECT_NEAR(m.coefficients()(1), 0.61686746987951802, 1e-13);
    EXPECT_TRUE(std::isnan(m.coefficients()(2)));
    EXPECT_NEAR(m.coefficients()(3), -2.89156626506024095, 1e-13);
  }
}

// AttentionRegression standardises X and works on y / c (c a power of two): scaling X and y by
// powers of two gives bit-identical predictions after undoing the scale. At X * 2^-664 (~1e-200)
// the column variance used to underflow and the columns stayed unstandardised (a constant fit);
// at y * 2^-498 the optimiser stopped at its start.
TEST(LeastSquaresScale, AttentionRegressionIsScaleFree) {
  const Data d = make_data(40, 2, 11);
  AttentionRegression ref;
  ref.fit(d.X, d.y);
  for (int kx : {-664, 0, 498}) {
    for (int ky : {-498, 0, 498}) {
      const double cx = std::ldexp(1.0, kx), cy = std::ldexp(1.0, ky);
      AttentionRegression m;
      m.fit(d.X * cx, d.y * cy);
      const arma::mat p = m.predict(d.X.rows(0, 5) * cx) / cy;
      const arma::mat p0 = ref.predict(d.X.rows(0, 5));
      for (arma::uword i = 0; i < p.n_elem; ++i) EXPECT_EQ(p(i), p0(i)) << kx << " " << ky;
      EXPECT_EQ(m.objective() / (cy * cy), ref.objective());
    }
  }
}

// The leave-self-out objective and its gradient use fixed-order sums only: identical for any
// number of threads (BLAS products split their sums by thread count, which moved the fit).
TEST(AttentionRegressionThreads, ObjectiveAndPredictionsIdenticalForAnyThreadCount) {
  const Data d = make_data(700, 3, 12);
  arma::arma_rng::set_seed(13);
  const arma::mat D = arma::join_horiz(arma::ones(700), d.X);
  const arma::mat W = 0.5 * arma::randn(4, 2);
  arma::mat g1, g2;
  const double f1 = attention_regression_objective(D, d.y, W, &g1, 1);
  const double f2 = attention_regression_objective(D, d.y, W, &g2, 2);
  EXPECT_EQ(f1, f2);
  ASSERT_EQ(g1.n_elem, g2.n_elem);
  for (arma::uword i = 0; i < g1.n_elem; ++i) EXPECT_EQ(g1(i), g2(i));
  AttentionRegressionOptions o1, o2;
  o1.n_threads = 1;
  o2.n_threads = 2;
  o1.max_iter = o2.max_iter = 15;
  o1.n_starts = o2.n_starts = 1;
  AttentionRegression m1(o1), m2(o2);
  m1.fit(d.X, d.y);
  m2.fit(d.X, d.y);
  EXPECT_EQ(m1.objective(), m2.objective());
  const arma::mat p1 = m1.predict(d.X), p2 = m2.predict(d.X);
  for (arma::uword i = 0; i < p1.n_elem; ++i) EXPECT_EQ(p1(i), p2(i));
  const arma::mat l1 = m1.loo_predictions(), l2 = m2.loo_predictions();
  for (arma::uword i = 0; i < l1.n_elem; ++i) EXPECT_EQ(l1(i), l2(i));
}
