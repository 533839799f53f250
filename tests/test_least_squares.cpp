// OLS: checked against an independent oracle (normal equations solved in long double by
// Gaussian elimination on small, well-conditioned designs), against the NIST StRD Longley
// certified values, and for the attention identities of Goulet Coulombe 2025, arXiv:2504.09663
// (eqs. 4-8, 12-13, 20-21).
// Inference is in test_least_squares_inference.cpp, all eleven NIST sets in
// test_least_squares_nist.cpp.
#include <gtest/gtest.h>

#include "attnreg/base/arma.hpp"
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "attnreg/base/error.hpp"
#include "attnreg/least_squares/least_squares.hpp"
#include "test_util.hpp"

using attnreg::OLS;
using attnreg::OLSOptions;

namespace {

// Oracle: solve (D'D) b = D'y in long double with partial-pivot Gaussian elimination. Fine for
// the well-conditioned random designs used here; independent of QR and LAPACK.
std::vector<long double> oracle_coef(const arma::mat& D, const arma::vec& y) {
  const std::size_t q = D.n_cols, n = D.n_rows;
  std::vector<std::vector<long double>> A(q, std::vector<long double>(q + 1, 0.0L));
  for (std::size_t a = 0; a < q; ++a) {
    for (std::size_t b = 0; b < q; ++b) {
      long double s = 0;
      for (std::size_t i = 0; i < n; ++i) s += (long double)D(i, a) * D(i, b);
      A[a][b] = s;
    }
    long double s = 0;
    for (std::size_t i = 0; i < n; ++i) s += (long double)D(i, a) * y(i);
    A[a][q] = s;
  }
  for (std::size_t c = 0; c < q; ++c) {
    std::size_t piv = c;
    for (std::size_t r = c + 1; r < q; ++r)
      if (std::fabs((double)A[r][c]) > std::fabs((double)A[piv][c])) piv = r;
    std::swap(A[c], A[piv]);
    for (std::size_t r = 0; r < q; ++r) {
      if (r == c) continue;
      const long double f = A[r][c] / A[c][c];
      for (std::size_t k = c; k <= q; ++k) A[r][k] -= f * A[c][k];
    }
  }
  std::vector<long double> b(q);
  for (std::size_t c = 0; c < q; ++c) b[c] = A[c][q] / A[c][c];
  return b;
}

arma::mat with_intercept(const arma::mat& X) { return arma::join_horiz(arma::ones(X.n_rows), X); }

}  // namespace

struct Shape {
  int n, p;
  bool intercept;
  unsigned seed;
};

class OLSRandom : public ::testing::TestWithParam<Shape> {};

TEST_P(OLSRandom, MatchesOracleAndAttentionIdentities) {
  const Shape s = GetParam();
  arma::arma_rng::set_seed(s.seed);
  arma::mat X = arma::randn(s.n, s.p) * 3.0 + 1.0;
  arma::vec y = arma::randn(s.n);
  if (s.p > 0) y += X * arma::linspace(1, 2, s.p);
  OLS fit(OLSOptions{s.intercept});
  fit.fit(X, y);
  const arma::mat D = s.intercept ? with_intercept(X) : X;
  const auto b = oracle_coef(D, y);
  ASSERT_EQ(fit.rank(), D.n_cols);
  for (std::size_t k = 0; k < b.size(); ++k) {
    EXPECT_NEAR(fit.coefficients()(k, 0), (double)b[k], 1e-10 * (1.0 + std::fabs((double)b[k])));
  }
  // Attention weights reproduce predictions, and rows sum to 1 with an intercept.
  arma::mat Xt = arma::randn(7, s.p);
  const arma::mat A = fit.attention_weights(Xt);
  ASSERT_EQ(A.n_rows, 7u);
  ASSERT_EQ(A.n_cols, (arma::uword)s.n);
  const arma::mat pred = fit.predict(Xt);
  EXPECT_LT(arma::abs(A * y - pred).max(), 1e-10 * (1.0 + arma::abs(pred).max()));
  if (s.intercept) {
    EXPECT_LT(arma::abs(arma::sum(A, 1) - 1.0).max(), 1e-12);
  }
  // In-sample attention = hat matrix; its trace is the rank.
  const arma::mat H = fit.attention_weights(X);
  EXPECT_NEAR(arma::trace(H), (double)D.n_cols, 1e-9);
  EXPECT_LT(arma::abs(H * y - fit.fitted()).max(), 1e-9 * (1.0 + arma::abs(y).max()));
  // Standard errors: sigma^2 (D'D)^{-1}, checked against the oracle inverse applied columnwise.
  const double sigma2 = arma::dot(fit.residuals(), fit.residuals()) / (s.n - (double)D.n_cols);
  EXPECT_NEAR(fit.sigma2()(0), sigma2, 1e-12 * sigma2);
  const arma::mat G = D.t() * D;
  for (arma::uword k = 0; k < D.n_cols; ++k) {
    arma::vec e(D.n_cols, arma::fill::zeros);
    e(k) = 1.0;
    const arma::vec ck = arma::solve(G, e);  // oracle only
    EXPECT_NEAR(fit.std_errors()(k, 0), std::sqrt(sigma2 * ck(k)),
                1e-8 * std::sqrt(sigma2 * ck(k)));
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, OLSRandom,
                         ::testing::Values(Shape{10, 1, true, 1}, Shape{50, 3, true, 2},
                                           Shape{200, 8, false, 3}, Shape{33, 5, true, 4},
                                           Shape{1000, 20, true, 5}, Shape{5, 4, false, 6},
                                           Shape{12, 0, true, 7}),
                         [](const ::testing::TestParamInfo<Shape>& i) {
                           return "n" + std::to_string(i.param.n) + "_p" +
                                  std::to_string(i.param.p) +
                                  (i.param.intercept ? "_intercept" : "_nointercept");
                         });

TEST(OLS, MultiOutputEqualsColumnwise) {
  arma::arma_rng::set_seed(11);
  arma::mat X = arma::randn(40, 3), Y = arma::randn(40, 2);
  OLS both;
  both.fit(X, Y);
  for (arma::uword c = 0; c < 2; ++c) {
    OLS one;
    one.fit(X, Y.col(c));
    EXPECT_LT(arma::abs(both.coefficients().col(c) - one.coefficients().col(0)).max(), 1e-13);
    EXPECT_LT(arma::abs(both.std_errors().col(c) - one.std_errors().col(0)).max(), 1e-13);
  }
}

TEST(OLS, RankDeficientDesignIsAliasedNotSilentlyWrong) {
  arma::arma_rng::set_seed(3);
  arma::mat X = arma::randn(30, 3);
  X.col(2) = 2.0 * X.col(0) - X.col(1);  // exactly collinear
  arma::vec y = arma::randn(30);
  OLS fit;
  fit.fit(X, y);
  EXPECT_EQ(fit.rank(), 3u);  // intercept + 2 of the 3 columns
  const auto al = fit.aliased();
  EXPECT_EQ(std::count(al.begin(), al.end(), true), 1);
  EXPECT_FALSE(al[0]);
  // Predictions equal those of the model without the aliased column.
  arma::uvec keep;
  for (arma::uword j = 1; j < 4; ++j)
    if (!al[j]) keep = arma::join_vert(keep, arma::uvec{j - 1});
  OLS sub;
  sub.fit(X.cols(keep), y);
  EXPECT_LT(arma::abs(fit.fitted() - sub.fitted()).max(), 1e-10);
  const arma::mat A = fit.attention_weights(X);
  EXPECT_LT(arma::abs(A * y - fit.fitted()).max(), 1e-10);
  EXPECT_TRUE(std::isnan(fit.std_errors()(al[1] ? 1 : (al[2] ? 2 : 3), 0)));
}

TEST(OLS, BadInputGivesClearErrors) {
  arma::mat X = arma::randn(10, 2);
  arma::vec y = arma::randn(10);
  OLS fit;
  X(3, 1) = arma::datum::nan;
  EXPECT_THROW(
      {
        try {
          fit.fit(X, y);
        } catch (const attnreg::InvalidArgument& e) {
          EXPECT_NE(std::string(e.what()).find("X: contains NaN at row 4, column 2"),
                    std::string::npos);
          throw;
        }
      },
      attnreg::InvalidArgument);
  X(3, 1) = 0.0;
  EXPECT_THROW(fit.fit(X, arma::vec(9, arma::fill::ones)), attnreg::InvalidArgument);
  EXPECT_THROW(fit.predict(X), attnreg::InvalidArgument);  // not fitted
  fit.fit(X, y);
  EXPECT_THROW(fit.predict(arma::randn(3, 3)), attnreg::InvalidArgument);
  y(0) = arma::datum::inf;
  EXPECT_THROW(fit.fit(X, y), attnreg::InvalidArgument);
}

TEST(OLS, OneRowAndSaturatedFits) {
  arma::mat X(1, 0);
  arma::vec y{3.5};
  OLS fit;
  fit.fit(X, y);
  EXPECT_DOUBLE_EQ(fit.coefficients()(0, 0), 3.5);
  EXPECT_TRUE(std::isnan(fit.sigma2()(0)));  // no residual degrees of freedom
  EXPECT_TRUE(std::isnan(fit.std_errors()(0, 0)));
}

TEST(OLS, StateRoundTrip) {
  arma::arma_rng::set_seed(5);
  arma::mat X = arma::randn(25, 4);
  arma::vec y = arma::randn(25);
  OLS fit;
  fit.fit(X, y);
  OLS back = OLS::from_state(fit.state(), fit.training_y());
  arma::mat Xt = arma::randn(5, 4);
  EXPECT_LT(arma::abs(back.attention_weights(Xt) - fit.attention_weights(Xt)).max(), 1e-15);
  EXPECT_LT(arma::abs(back.fitted() - fit.fitted()).max(), 1e-12);
  EXPECT_LT(arma::abs(back.std_errors() - fit.std_errors()).max(), 1e-15);
}

// NIST StRD Longley: certified values to 15 significant digits. The log relative error
// LRE = -log10(|est - cert| / |cert|) is printed for each coefficient and standard error.
TEST(OLS, NistLongley) {
  const auto tab = attnreg_test::read_csv(std::string(ATTNREG_DATA_DIR) + "/nist/Longley.csv");
  const auto cert =
      attnreg_test::read_csv(std::string(ATTNREG_DATA_DIR) + "/nist/Longley_certified.csv");
  ASSERT_EQ(tab.n_cols, 7u);
  const arma::vec y = tab.col(0);
  const arma::mat X = tab.cols(1, 6);
  OLS fit;
  fit.fit(X, y);
  ASSERT_EQ(cert.n_rows, 7u);
  double worst = 99;
  for (arma::uword k = 0; k < 7; ++k) {
    const double lre_b = attnreg_test::lre(fit.coefficients()(k, 0), cert(k, 0));
    const double lre_se = attnreg_test::lre(fit.std_errors()(k, 0), cert(k, 1));
    std::printf("Longley b%u: LRE(coef) = %.1f  LRE(se) = %.1f\n", (unsigned)k, lre_b, lre_se);
    worst = std::min({worst, lre_b, lre_se});
  }
  EXPECT_GE(worst, 11.0);
}

// Seed 004 eqs. 4-8 and 12-13: F = D U Lambda^{-1/2} with D'D = U Lambda U'; F_train'F_train = I
// (eq. 6); F_test F_train' = attention weights (eq. 7); Omega = W W' = (D'D)^{-1} (eq. 21).
TEST(OLS, FactorsEncoderAndEmbedding) {
  for (bool intercept : {true, false}) {
    arma::arma_rng::set_seed(21);
    arma::mat X = arma::randn(60, 4) * 2.0 + 0.5;
    arma::vec y = arma::randn(60) + X * arma::vec{1, -1, 0.5, 2};
    OLSOptions o;
    o.fit_intercept = intercept;
    OLS fit(o);
    fit.fit(X, y);
    const arma::mat D = intercept ? with_intercept(X) : X;
    const arma::mat Ftr = fit.training_factors();
    ASSERT_EQ(Ftr.n_cols, D.n_cols);
    EXPECT_LT(arma::abs(Ftr.t() * Ftr - arma::eye(D.n_cols, D.n_cols)).max(), 1e-12);
    EXPECT_LT(arma::abs(fit.factors(X) - Ftr).max(), 1e-10);
    arma::mat Xt = arma::randn(5, 4);
    const arma::mat A = fit.attention_weights(Xt);
    EXPECT_LT(arma::abs(fit.factors(Xt) * Ftr.t() - A).max(), 1e-12);
    // Eigenvalues of D'D (oracle: symmetric eigensolver on the cross-product, fine here).
    arma::vec lam = arma::eig_sym(D.t() * D);
    lam = arma::sort(lam, "descend");
    EXPECT_LT(arma::abs(fit.eigenvalues() - lam).max(), 1e-9 * lam(0));
    const arma::mat W = fit.encoder();
    const arma::mat G = arma::inv_sympd(D.t() * D);  // oracle only
    EXPECT_LT(arma::abs(W * W.t() - G).max(), 1e-10 * arma::abs(G).max());
    EXPECT_LT(arma::abs(fit.embedding() - G).max(), 1e-10 * arma::abs(G).max());
    const arma::mat Dt = intercept ? with_intercept(Xt) : Xt;
    EXPECT_LT(arma::abs(Dt * fit.embedding() * D.t() - A).max(), 1e-11);
  }
}

TEST(OLS, LeaveOneOutShortcutEqualsRefitting) {
  arma::arma_rng::set_seed(8);
  arma::mat X = arma::randn(25, 3);
  arma::mat Y = arma::randn(25, 2);
  OLS fit;
  fit.fit(X, Y);
  const arma::mat loo = fit.loo_predictions();
  for (arma::uword i = 0; i < 25; ++i) {
    arma::uvec keep = arma::regspace<arma::uvec>(0, 24);
    keep.shed_row(i);
    OLS one;
    one.fit(X.rows(keep), Y.rows(keep));
    const arma::mat p = one.predict(X.row(i));
    EXPECT_LT(arma::abs(p - loo.row(i)).max(), 1e-11);
  }
  // h_i = 1 (a row that alone determines a coefficient): not predictable without itself.
  arma::mat X2 = arma::randn(10, 1);
  X2 = arma::join_horiz(X2, arma::zeros(10, 1));
  X2(4, 1) = 1.0;
  OLS f2;
  f2.fit(X2, arma::randn(10));
  EXPECT_TRUE(std::isnan(f2.loo_predictions()(4, 0)));
  EXPECT_NEAR(f2.hat_diagonal()(4), 1.0, 1e-12);
}

TEST(OLS, PrecisionModesAgreeOnWellConditionedData) {
  arma::arma_rng::set_seed(31);
  arma::mat X = arma::randn(300, 6);
  arma::mat Y = arma::randn(300, 2) + X * arma::randn(6, 2);
  OLSOptions od, oe;
  od.precision = attnreg::Precision::Double;
  oe.precision = attnreg::Precision::Extended;
  OLS fd(od), fe(oe);
  fd.fit(X, Y);
  fe.fit(X, Y);
  EXPECT_FALSE(fd.extended_precision());
  EXPECT_TRUE(fe.extended_precision());
  EXPECT_LT(arma::abs(fd.coefficients() - fe.coefficients()).max(), 1e-13);
  EXPECT_LT(arma::abs(fd.std_errors() - fe.std_errors()).max(), 1e-13);
  EXPECT_LT(arma::abs(fd.fitted() - fe.fitted()).max(), 1e-12);
  // Exact collinearity is aliased in extended precision too.
  X.col(5) = X.col(0) * 3.0 - X.col(2);
  fe.fit(X, Y);
  EXPECT_EQ(fe.rank(), 6u);
  const auto al = fe.aliased();
  EXPECT_EQ(std::count(al.begin(), al.end(), true), 1);
}

// A design that lm's 1e-7 tolerance aliases but that is determined far above rounding: the
// automatic precision fits it in double-double instead of dropping a column.
TEST(OLS, IllConditionedDesignUsesExtendedPrecision) {
  arma::vec x = arma::linspace(1.0, 2.0, 40);
  arma::mat X(40, 7);
  for (int d = 0; d < 7; ++d) X.col(d) = arma::pow(x, d + 1.0);
  arma::vec beta = arma::linspace(1.0, 2.0, 7);
  arma::vec y = X * beta + 3.0;  // noiseless: the exact solution is (3, beta)
  OLSOptions od;
  od.precision = attnreg::Precision::Double;
  OLS fd(od), fa;
  fd.fit(X, y);
  fa.fit(X, y);
  // Column-pivoted double QR finds |R_kk| below 1e-7 |R_11| here; R's lm (dqrdc2, which
  // compares each column with its own norm) keeps all 8 columns (checked with R 4: rank 8), and
  // the double fit now follows lm's choice.
  EXPECT_EQ(fd.rank(), 8u);
  EXPECT_TRUE(fa.extended_precision());
  ASSERT_EQ(fa.rank(), 8u);
  for (int d = 0; d < 7; ++d) EXPECT_NEAR(fa.coefficients()(d + 1, 0), beta(d), 1e-5);
}

TEST(OLS, ExtendedStateRoundTrip) {
  arma::arma_rng::set_seed(12);
  arma::mat X = arma::randn(30, 3);
  arma::vec y = arma::randn(30);
  OLS fit;
  fit.fit(X, y);
  ASSERT_TRUE(fit.extended_precision());
  OLS back = OLS::from_state(fit.state(), fit.training_y());
  EXPECT_TRUE(back.extended_precision());
  EXPECT_LT(arma::abs(back.std_errors() - fit.std_errors()).max(), 1e-15);
  EXPECT_LT(arma::abs(back.fitted() - fit.fitted()).max(), 1e-12);
}

// Q_1 is cached after the first large request: small and large blocks, before and after the
// cache exists, and copies that outlive a refit of the original, all give the same weights.
TEST(OLS, CachedFactorGivesTheSameWeights) {
  arma::arma_rng::set_seed(41);
  arma::mat X = arma::randn(200, 4);
  arma::vec y = arma::randn(200);
  OLSOptions o;
  o.precision = attnreg::Precision::Double;
  OLS fit(o);
  fit.fit(X, y);
  arma::mat Xt = arma::randn(20, 4);
  const arma::mat small_before = fit.attention_weights(Xt.rows(0, 2));  // ormqr path
  const arma::mat big = fit.attention_weights(Xt);                      // forms and caches Q_1
  const arma::mat small_after = fit.attention_weights(Xt.rows(0, 2));   // GEMM with the cache
  EXPECT_LT(arma::abs(small_before - big.rows(0, 2)).max(), 1e-14);
  EXPECT_LT(arma::abs(small_after - small_before).max(), 1e-14);
  const OLS copy = fit;
  fit.fit(X * 2.0, y + 1.0);
  EXPECT_LT(arma::abs(copy.attention_weights(Xt) - big).max(), 1e-14);
  EXPECT_LT(arma::abs(fit.attention_weights(Xt * 2.0) - big).max(), 1e-12);  // same hat geometry
}
