// Ridge and PCR (Goulet Coulombe 2025, arXiv:2504.09663, eqs. 22-27, 29-30): against direct oracles (regularised normal
// equations and a truncated eigen-decomposition of Xc'Xc, fine for these small well-conditioned
// designs), the attention identities, exact leave-one-out against refitting, the one-pass
// selection criteria against brute force, and the limits (lambda -> 0 is OLS, PCR with L = p is
// OLS).
#include <gtest/gtest.h>

#include "attnreg/base/arma.hpp"
#include <cmath>

#include "attnreg/base/error.hpp"
#include "attnreg/least_squares/least_squares.hpp"
#include "attnreg/least_squares/least_squares_spectral.hpp"

using attnreg::PCR;
using attnreg::PCROptions;
using attnreg::Ridge;
using attnreg::RidgeOptions;

namespace {

arma::mat with_intercept(const arma::mat& X) { return arma::join_horiz(arma::ones(X.n_rows), X); }

// Oracle: (D'D + lambda diag(0, I)) b = D'Y (intercept unpenalised).
arma::mat ridge_oracle(const arma::mat& X, const arma::mat& Y, double lambda, bool intercept) {
  const arma::mat D = intercept ? with_intercept(X) : X;
  arma::mat P = lambda * arma::eye(D.n_cols, D.n_cols);
  if (intercept) P(0, 0) = 0.0;
  return arma::solve(D.t() * D + P, D.t() * Y);
}

Ridge make_ridge(double lambda, bool intercept = true) {
  RidgeOptions o;
  o.lambda = lambda;
  o.fit_intercept = intercept;
  return Ridge(o);
}

}  // namespace

class RidgeShapes : public ::testing::TestWithParam<std::tuple<int, int, bool>> {};

TEST_P(RidgeShapes, MatchesOracleAndAttentionIdentities) {
  const auto [n, p, intercept] = GetParam();
  arma::arma_rng::set_seed(n * 7 + p);
  arma::mat X = arma::randn(n, p) * 2.0 + 1.0;
  arma::mat Y = arma::randn(n, 2);
  Y.col(0) += X * arma::linspace(-1, 1, p);
  for (double lambda : {0.0, 0.3, 5.0, 1e3}) {
    if (lambda == 0.0 && p >= n) continue;  // minimum-norm case checked separately
    Ridge r = make_ridge(lambda, intercept);
    r.fit(X, Y);
    const arma::mat bo = ridge_oracle(X, Y, lambda, intercept);
    EXPECT_LT(arma::abs(r.coefficients() - bo).max(), 1e-10 * (1.0 + arma::abs(bo).max()));
    arma::mat Xt = arma::randn(6, p);
    const arma::mat A = r.attention_weights(Xt);
    EXPECT_LT(arma::abs(A * Y - r.predict(Xt)).max(), 1e-10);
    if (intercept) {
      EXPECT_LT(arma::abs(arma::sum(A, 1) - 1.0).max(), 1e-12);
    }
    // F_test F_train' = A (eq. 7 with the shrunk embedding of eq. 30).
    EXPECT_LT(arma::abs(r.factors(Xt) * r.training_factors().t() - A).max(), 1e-12);
    // A = d(X) Omega D' with Omega = (D'D + lambda diag(0, I))^{-1}.
    const arma::mat D = intercept ? with_intercept(X) : X;
    const arma::mat Dt = intercept ? with_intercept(Xt) : Xt;
    EXPECT_LT(arma::abs(Dt * r.embedding() * D.t() - A).max(), 1e-11);
    if (lambda > 0.0) {
      arma::mat P = lambda * arma::eye(D.n_cols, D.n_cols);
      if (intercept) P(0, 0) = 0.0;
      const arma::mat Om = arma::inv(D.t() * D + P);  // oracle only
      EXPECT_LT(arma::abs(r.embedding() - Om).max(), 1e-10 * arma::abs(Om).max());
    }
    // In-sample: H Y = fitted, tr H = effective df.
    const arma::mat H = r.attention_weights(X);
    EXPECT_LT(arma::abs(H * Y - r.fitted()).max(), 1e-10);
    EXPECT_NEAR(arma::trace(H), r.effective_df(), 1e-10);
    EXPECT_LT(arma::abs(H.diag() - r.hat_diagonal()).max(), 1e-12);
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, RidgeShapes,
                         ::testing::Values(std::make_tuple(40, 3, true), std::make_tuple(40, 3, false),
                                           std::make_tuple(200, 12, true), std::make_tuple(10, 15, true),
                                           std::make_tuple(8, 20, false), std::make_tuple(15, 1, true)));

TEST(Ridge, LambdaToZeroTendsToOLS) {
  arma::arma_rng::set_seed(3);
  arma::mat X = arma::randn(50, 4);
  arma::vec y = arma::randn(50) + X * arma::vec{1, 2, 3, 4};
  attnreg::OLS ols;
  ols.fit(X, y);
  Ridge r = make_ridge(1.0);
  r.fit(X, y);
  double prev = arma::datum::inf;
  for (double lambda : {1.0, 1e-2, 1e-4, 1e-6, 1e-8}) {
    r.set_lambda(lambda);
    const double gap = arma::abs(r.coefficients() - ols.coefficients()).max();
    EXPECT_LT(gap, prev);
    prev = gap;
  }
  EXPECT_LT(prev, 1e-9);
  r.set_lambda(0.0);
  EXPECT_LT(arma::abs(r.coefficients() - ols.coefficients()).max(), 1e-12);
  EXPECT_LT(arma::abs(r.attention_weights(X.rows(0, 2)) - ols.attention_weights(X.rows(0, 2))).max(),
            1e-12);
}

TEST(Ridge, ZeroPenaltyOnWideDesignIsMinimumNorm) {
  arma::arma_rng::set_seed(9);
  arma::mat X = arma::randn(6, 10);
  arma::vec y = arma::randn(6);
  Ridge r = make_ridge(0.0, false);
  r.fit(X, y);
  const arma::vec b = arma::pinv(X) * y;  // oracle
  EXPECT_LT(arma::abs(r.coefficients().col(0) - b).max(), 1e-11);
  EXPECT_LT(arma::abs(r.fitted().col(0) - y).max(), 1e-11);  // interpolates
}

TEST(Ridge, PathEqualsIndividualFits) {
  arma::arma_rng::set_seed(5);
  arma::mat X = arma::randn(30, 5);
  arma::mat Y = arma::randn(30, 3);
  const arma::vec lambdas{0.01, 0.1, 1.0, 10.0, 100.0};
  Ridge r = make_ridge(1.0);
  r.fit(X, Y);
  const arma::cube path = r.path(lambdas);
  for (arma::uword g = 0; g < lambdas.n_elem; ++g) {
    const arma::mat bo = ridge_oracle(X, Y, lambdas(g), true);
    EXPECT_LT(arma::abs(path.slice(g) - bo).max(), 1e-11 * (1.0 + arma::abs(bo).max()));
  }
}

TEST(Ridge, LeaveOneOutShortcutEqualsRefitting) {
  arma::arma_rng::set_seed(6);
  const arma::uword n = 20;
  arma::mat X = arma::randn(n, 4);
  arma::mat Y = arma::randn(n, 2);
  for (bool intercept : {true, false}) {
    Ridge r = make_ridge(2.5, intercept);
    r.fit(X, Y);
    const arma::mat loo = r.loo_predictions();
    for (arma::uword i = 0; i < n; ++i) {
      arma::uvec keep = arma::regspace<arma::uvec>(0, n - 1);
      keep.shed_row(i);
      Ridge one = make_ridge(2.5, intercept);  // intercept and centring re-estimated
      one.fit(X.rows(keep), Y.rows(keep));
      EXPECT_LT(arma::abs(one.predict(X.row(i)) - loo.row(i)).max(), 1e-11);
    }
  }
}

TEST(Ridge, SelectionCriteriaMatchBruteForce) {
  arma::arma_rng::set_seed(7);
  const arma::uword n = 60;
  arma::mat X = arma::randn(n, 8);
  arma::mat Y = X * arma::randn(8, 2) + 2.0 * arma::randn(n, 2);
  const arma::vec lambdas = arma::logspace(-2, 3, 12);
  Ridge r = make_ridge(1.0);
  const attnreg::RidgeSelection sel = r.fit_select(X, Y, lambdas, attnreg::RidgeCriterion::GCV);
  for (arma::uword g = 0; g < lambdas.n_elem; ++g) {
    Ridge one = make_ridge(lambdas(g));
    one.fit(X, Y);
    const arma::mat E = one.residuals();
    const double tr = one.effective_df();
    const arma::mat H = one.attention_weights(X);  // oracle hat matrix
    EXPECT_NEAR(sel.effective_df(g), arma::trace(H), 1e-10);
    double loo = 0.0, gcv = 0.0, aicc = 0.0;
    for (arma::uword c = 0; c < 2; ++c) {
      const double rss = arma::dot(E.col(c), E.col(c));
      gcv += n * rss / ((n - tr) * (n - tr));
      aicc += std::log(rss / n) + (1.0 + tr / n) / (1.0 - (tr + 2.0) / n);
      for (arma::uword i = 0; i < n; ++i) {
        arma::uvec keep = arma::regspace<arma::uvec>(0, n - 1);
        keep.shed_row(i);
        Ridge m = make_ridge(lambdas(g));
        m.fit(X.rows(keep), Y.rows(keep));
        const double d = Y(i, c) - m.predict(X.row(i))(0, c);
        loo += d * d;
      }
    }
    EXPECT_NEAR(sel.loo_mse(g), loo / (2.0 * n), 1e-10 * loo);
    EXPECT_NEAR(sel.gcv(g), gcv, 1e-10 * gcv);
    EXPECT_NEAR(sel.aicc(g), aicc, 1e-10 * std::fabs(aicc));
  }
  EXPECT_EQ(sel.best, sel.gcv.index_min());
  EXPECT_DOUBLE_EQ(r.lambda(), lambdas(sel.best));
  Ridge check = make_ridge(lambdas(sel.best));
  check.fit(X, Y);
  EXPECT_LT(arma::abs(check.coefficients() - r.coefficients()).max(), 1e-12);
  Ridge r2 = make_ridge(1.0);
  EXPECT_EQ(r2.fit_select(X, Y, lambdas, attnreg::RidgeCriterion::LOO).best, sel.loo_mse.index_min());
  EXPECT_EQ(r2.fit_select(X, Y, lambdas, attnreg::RidgeCriterion::AICc).best, sel.aicc.index_min());
}

TEST(Ridge, BadInput) {
  arma::mat X = arma::randn(10, 2);
  arma::vec y = arma::randn(10);
  Ridge neg = make_ridge(-1.0);
  EXPECT_THROW(neg.fit(X, y), attnreg::InvalidArgument);
  Ridge r = make_ridge(1.0);
  EXPECT_THROW(r.predict(X), attnreg::InvalidArgument);
  r.fit(X, y);
  EXPECT_THROW(r.predict(arma::randn(2, 3)), attnreg::InvalidArgument);
  EXPECT_THROW(r.set_lambda(arma::datum::nan), attnreg::InvalidArgument);
  EXPECT_THROW(r.fit_select(X, y, arma::vec(), attnreg::RidgeCriterion::LOO), attnreg::InvalidArgument);
  EXPECT_THROW(attnreg::parse_ridge_criterion("bic"), attnreg::InvalidArgument);
  X(2, 1) = arma::datum::inf;
  EXPECT_THROW(r.fit(X, y), attnreg::InvalidArgument);
}

TEST(PCR, MatchesTruncatedEigenOracleAndFactorsAreOrthonormal) {
  arma::arma_rng::set_seed(15);
  const arma::uword n = 70, p = 6;
  arma::mat X = arma::randn(n, p) * arma::diagmat(arma::vec{5, 4, 3, 2, 1, 0.5});
  arma::mat Y = arma::randn(n, 2) + X * arma::randn(p, 2);
  for (int L : {0, 1, 3, 6}) {
    PCROptions o;
    o.rank = L;
    PCR m(o);
    m.fit(X, Y);
    // Oracle (eqs. 23-27): Omega_L = U_L Lambda_L^{-1} U_L' from the eigen-decomposition of Xc'Xc.
    const arma::rowvec xm = arma::mean(X, 0);
    const arma::mat Xc = X.each_row() - xm;
    arma::vec lam;
    arma::mat U;
    arma::eig_sym(lam, U, Xc.t() * Xc);
    lam = arma::flipud(lam);
    U = arma::fliplr(U);
    arma::mat OmL(p, p, arma::fill::zeros);
    for (int j = 0; j < L; ++j) OmL += U.col(j) * U.col(j).t() / lam(j);
    const arma::mat Yc = Y.each_row() - arma::mean(Y, 0);
    const arma::mat beta = OmL * Xc.t() * Yc;
    EXPECT_LT(arma::abs(m.coefficients().rows(1, p) - beta).max(), 1e-10 * (1 + arma::abs(beta).max()));
    EXPECT_LT(arma::abs(m.embedding().submat(1, 1, p, p) - OmL).max(), 1e-10 * (1.0 + arma::abs(OmL).max()));
    // eq. 24: F_train' F_train = I_{L+1} (constant factor included); eq. 25: F_test F_train' = A.
    const arma::mat F = m.training_factors();
    ASSERT_EQ(F.n_cols, static_cast<arma::uword>(L + 1));
    EXPECT_LT(arma::abs(F.t() * F - arma::eye(L + 1, L + 1)).max(), 1e-12);
    arma::mat Xt = arma::randn(4, p);
    const arma::mat A = m.attention_weights(Xt);
    EXPECT_LT(arma::abs(m.factors(Xt) * F.t() - A).max(), 1e-12);
    EXPECT_LT(arma::abs(A * Y - m.predict(Xt)).max(), 1e-10);
    EXPECT_LT(arma::abs(arma::sum(A, 1) - 1.0).max(), 1e-12);
  }
}

TEST(PCR, FullRankEqualsOLS) {
  arma::arma_rng::set_seed(16);
  arma::mat X = arma::randn(40, 5);
  arma::mat Y = arma::randn(40, 2);
  for (bool intercept : {true, false}) {
    PCROptions o;
    o.rank = 5;
    o.fit_intercept = intercept;
    PCR m(o);
    m.fit(X, Y);
    attnreg::OLSOptions oo;
    oo.fit_intercept = intercept;
    attnreg::OLS ols(oo);
    ols.fit(X, Y);
    EXPECT_LT(arma::abs(m.coefficients() - ols.coefficients()).max(), 1e-12);
    EXPECT_LT(arma::abs(m.attention_weights(X.rows(0, 4)) - ols.attention_weights(X.rows(0, 4))).max(),
              1e-12);
    EXPECT_LT(arma::abs(m.embedding() - ols.embedding()).max(), 1e-10 * arma::abs(ols.embedding()).max());
  }
}

TEST(PCR, RankBeyondTheDesignIsAnError) {
  arma::arma_rng::set_seed(17);
  arma::mat X = arma::randn(10, 3);
  X.col(2) = X.col(0) - X.col(1);
  PCROptions o;
  o.rank = 3;
  PCR m(o);
  try {
    m.fit(X, arma::randn(10));
    FAIL() << "expected an error";
  } catch (const attnreg::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("numerical rank 2"), std::string::npos) << e.what();
  }
  o.rank = -2;
  EXPECT_THROW(PCR(o).fit(X, arma::randn(10)), attnreg::InvalidArgument);
  o.rank = -1;  // all components: the numerical rank
  PCR all(o);
  all.fit(X, arma::randn(10));
  EXPECT_EQ(all.rank(), 2);
  o.rank = 2;
  PCR ok(o);
  ok.fit(X, arma::randn(10));
  EXPECT_NEAR(arma::accu(ok.explained_variance_ratio()), 1.0, 1e-12);
}

TEST(Spectral, StateRoundTrip) {
  arma::arma_rng::set_seed(18);
  arma::mat X = arma::randn(30, 4);
  arma::mat Y = arma::randn(30, 2);
  Ridge r = make_ridge(0.7);
  r.fit(X, Y);
  const Ridge rb = Ridge::from_state(RidgeOptions{true, 0.7, 0}, r.state());
  arma::mat Xt = arma::randn(3, 4);
  EXPECT_LT(arma::abs(rb.predict(Xt) - r.predict(Xt)).max(), 1e-14);
  EXPECT_LT(arma::abs(rb.loo_predictions() - r.loo_predictions()).max(), 1e-13);
  PCROptions po;
  po.rank = 2;
  PCR m(po);
  m.fit(X, Y);
  const PCR mb = PCR::from_state(po, m.state());
  EXPECT_LT(arma::abs(mb.attention_weights(Xt) - m.attention_weights(Xt)).max(), 1e-15);
  po.rank = 9;
  EXPECT_THROW(PCR::from_state(po, m.state()), attnreg::InvalidArgument);
}
