// The eigenvalue fix of Cameron, Gelbach and Miller (2011, JBES 29(2), sec. 2.3) for two-way
// clustered covariances V = V_1 + V_2 - V_12, which can be indefinite: OLS, Ridge, PCR and the
// absorbed fit against a direct float64 oracle (the sandwich of the coefficient map M written out
// cluster by cluster, then eig_sym and U max(Lambda, 0) U').
#include <gtest/gtest.h>

#include "attnreg/base/arma.hpp"
#include <cmath>
#include <map>
#include <string>

#include "attnreg/least_squares/least_squares.hpp"
#include "attnreg/least_squares/least_squares_fe.hpp"
#include "attnreg/least_squares/least_squares_spectral.hpp"

using attnreg::AbsorbedOLS;
using attnreg::CovOptions;
using attnreg::CovType;
using attnreg::OLS;
using attnreg::PCR;
using attnreg::PCROptions;
using attnreg::Ridge;
using attnreg::RidgeOptions;

namespace {

// Firm x year grid (one row per cell, `rep` rows when rep > 1), y = a_i b_j (rows and columns sum
// to zero, so the firm and year score sums nearly cancel and V_12 dominates) + noise.
struct Data {
  arma::mat X;
  arma::vec y;
  arma::umat cl;
};

Data grid(arma::uword G, arma::uword p, double noise, unsigned seed) {
  arma::arma_rng::set_seed(seed);
  const arma::uword n = G * G;
  Data d;
  d.X = arma::randn(n, p);
  d.y.set_size(n);
  d.cl.set_size(n, 2);
  arma::vec a = arma::randn(G), b = arma::randn(G);
  a -= arma::mean(a);
  b -= arma::mean(b);
  for (arma::uword i = 0; i < G; ++i) {
    for (arma::uword j = 0; j < G; ++j) {
      const arma::uword r = i * G + j;
      d.y(r) = a(i) * b(j);
      d.cl(r, 0) = 10 + 3 * i;  // non-consecutive codes
      d.cl(r, 1) = j;
    }
  }
  d.y += noise * arma::randn(n);
  return d;
}

arma::mat design(const arma::mat& X) { return arma::join_rows(arma::ones(X.n_rows), X); }

// sum over clusters of (M_g e_g)(M_g e_g)' for one column of codes.
arma::mat meat_of(const arma::mat& M, const arma::vec& e, const arma::uvec& code) {
  std::map<arma::uword, arma::vec> s;
  for (arma::uword i = 0; i < e.n_elem; ++i) {
    auto it = s.find(code(i));
    if (it == s.end()) it = s.emplace(code(i), arma::vec(M.n_rows, arma::fill::zeros)).first;
    it->second += M.col(i) * e(i);
  }
  arma::mat out(M.n_rows, M.n_rows, arma::fill::zeros);
  for (const auto& kv : s) out += kv.second * kv.second.t();
  return out;
}

// Raw two-way V = factor (V_1 + V_2 - V_12) of the linear map b = M y (q x n).
arma::mat raw_two_way(const arma::mat& M, const arma::vec& e, const arma::umat& cl, double factor) {
  const arma::uvec both = cl.col(0) * 1000 + cl.col(1);
  arma::mat V = meat_of(M, e, cl.col(0)) + meat_of(M, e, cl.col(1)) - meat_of(M, e, both);
  V *= factor;
  return 0.5 * (V + V.t());
}

arma::mat clip(const arma::mat& V) {
  arma::vec lam;
  arma::mat U;
  EXPECT_TRUE(arma::eig_sym(lam, U, V));
  return U * arma::diagmat(arma::clamp(lam, 0.0, arma::datum::inf)) * U.t();
}

double min_eig_ratio(const arma::mat& V) {
  const arma::vec lam = arma::eig_sym(0.5 * (V + V.t()));
  return lam.min() / arma::abs(lam).max();
}

double cr1_factor(double G, double N, double df) { return G / (G - 1.0) * (N - 1.0) / df; }

void expect_near(const arma::mat& A, const arma::mat& B, double rel, const std::string& what) {
  ASSERT_EQ(A.n_rows, B.n_rows) << what;
  ASSERT_EQ(A.n_cols, B.n_cols) << what;
  const double scale = arma::abs(B).max();
  for (arma::uword i = 0; i < A.n_elem; ++i) {
    EXPECT_NEAR(A(i), B(i), rel * scale) << what << " element " << i;
  }
}

CovOptions two_way(CovType t, const arma::umat& cl) {
  CovOptions c;
  c.type = t;
  c.clusters = cl;
  return c;
}

// Checks shared by every estimator: the model's V equals the clipped oracle, is PSD, its
// standard errors are finite and sqrt(diag V), and inference() flags the fix.
template <class Model>
void check_fixed(const Model& m, const arma::mat& raw, const CovOptions& cov,
                 const std::string& what) {
  ASSERT_LT(min_eig_ratio(raw), -1e-6) << what << ": the constructed raw V must be indefinite";
  const arma::mat V = m.covariance(cov);
  const arma::mat want = clip(raw);
  expect_near(V, want, 1e-10, what + " fixed V = U max(Lambda, 0) U' of the raw V");
  EXPECT_GE(min_eig_ratio(V), -1e-13) << what << ": fixed V is PSD";
  const arma::mat se = m.std_errors(cov);
  for (arma::uword j = 0; j < se.n_rows; ++j) {
    ASSERT_TRUE(std::isfinite(se(j, 0))) << what << " se " << j;
    EXPECT_NEAR(se(j, 0), std::sqrt(want(j, j)), 1e-9 * std::sqrt(arma::abs(want).max()))
        << what << " se " << j;
  }
  const attnreg::Inference inf = m.inference(cov);
  EXPECT_TRUE(inf.psd_fixed) << what;
  EXPECT_NEAR(inf.psd_min_eigenvalue, min_eig_ratio(raw), 1e-8) << what;
  EXPECT_TRUE(inf.std_error.is_finite()) << what;
}

}  // namespace

TEST(TwoWayPsdFix, OLSIndefiniteCovarianceIsClippedAndFlagged) {
  int tested = 0;
  for (arma::uword p : {1u, 2u, 4u}) {
    for (unsigned seed : {1u, 2u, 3u}) {
      const Data d = grid(5, p, 0.05, seed + 10 * p);
      OLS m;
      m.fit(d.X, d.y);
      const arma::mat D = design(d.X);
      const arma::mat M = arma::solve(D.t() * D, D.t());
      const arma::vec e = d.y - D * (M * d.y);
      const double N = static_cast<double>(D.n_rows), df = N - static_cast<double>(D.n_cols);
      const arma::mat raw0 = raw_two_way(M, e, d.cl, 1.0);
      if (min_eig_ratio(raw0) > -1e-6) continue;  // this draw's V happens to be PSD
      ++tested;
      const std::string what = "OLS p=" + std::to_string(p) + " seed=" + std::to_string(seed);
      check_fixed(m, raw0, two_way(CovType::CR0, d.cl), what + " CR0");
      check_fixed(m, raw_two_way(M, e, d.cl, cr1_factor(5, N, df)),
                  two_way(CovType::CR1, d.cl), what + " CR1");
    }
  }
  EXPECT_GE(tested, 5);
}

TEST(TwoWayPsdFix, RidgeAndPCRIndefiniteCovarianceIsClippedAndFlagged) {
  int tested = 0;
  for (unsigned seed : {1u, 2u, 3u, 4u}) {
    const Data d = grid(5, 3, 0.05, 100 + seed);
    const arma::mat D = design(d.X);
    const double N = static_cast<double>(D.n_rows);
    // Ridge: M = (D'D + lambda diag(0, I))^{-1} D'.
    const double lambda = 0.7;
    arma::mat P = lambda * arma::eye(D.n_cols, D.n_cols);
    P(0, 0) = 0.0;
    const arma::mat Mr = arma::solve(D.t() * D + P, D.t());
    const arma::vec er = d.y - D * (Mr * d.y);
    RidgeOptions ro;
    ro.lambda = lambda;
    Ridge ridge(ro);
    ridge.fit(d.X, d.y);
    const arma::mat rawr = raw_two_way(Mr, er, d.cl, 1.0);
    // PCR with every component is least squares: M = (D'D)^{-1} D'.
    const arma::mat Mp = arma::solve(D.t() * D, D.t());
    const arma::vec ep = d.y - D * (Mp * d.y);
    PCROptions po;
    po.rank = -1;
    PCR pcr(po);
    pcr.fit(d.X, d.y);
    const arma::mat rawp = raw_two_way(Mp, ep, d.cl, 1.0);
    if (min_eig_ratio(rawr) < -1e-6) {
      ++tested;
      check_fixed(ridge, rawr, two_way(CovType::CR0, d.cl), "Ridge seed " + std::to_string(seed));
      const double df = N - ridge.effective_df();
      check_fixed(ridge, raw_two_way(Mr, er, d.cl, cr1_factor(5, N, df)),
                  two_way(CovType::CR1, d.cl), "Ridge CR1 seed " + std::to_string(seed));
    }
    if (min_eig_ratio(rawp) < -1e-6) {
      ++tested;
      check_fixed(pcr, rawp, two_way(CovType::CR0, d.cl), "PCR seed " + std::to_string(seed));
    }
  }
  EXPECT_GE(tested, 4);
}

TEST(TwoWayPsdFix, AbsorbedFitIndefiniteCovarianceIsClippedAndFlagged) {
  int tested = 0;
  for (unsigned seed : {1u, 2u, 3u, 4u, 5u, 6u}) {
    Data d = grid(5, 3, 0.05, 200 + seed);
    // Absorb the year; cluster on firm and year. Oracle: dummy-variable OLS, rows of X.
    const arma::uword n = d.X.n_rows;
    arma::mat Dm(n, 5, arma::fill::zeros);
    for (arma::uword i = 0; i < n; ++i) Dm(i, d.cl(i, 1)) = 1.0;
    const arma::mat D = arma::join_rows(d.X, Dm);
    const arma::mat Mfull = arma::solve(D.t() * D, D.t());
    const arma::vec e = d.y - D * (Mfull * d.y);
    const arma::mat M = Mfull.rows(0, d.X.n_cols - 1);
    const arma::mat raw = raw_two_way(M, e, d.cl, 1.0);
    if (min_eig_ratio(raw) > -1e-6) continue;
    ++tested;
    AbsorbedOLS m;
    m.fit(d.X, d.y, arma::umat(d.cl.col(1)));
    check_fixed(m, raw, two_way(CovType::CR0, d.cl), "absorbed seed " + std::to_string(seed));
  }
  EXPECT_GE(tested, 2);
}

TEST(TwoWayPsdFix, PsdCovarianceIsNotTouched) {
  // Regressors and errors correlated within firms and within years (firm and year components),
  // so V_1 and V_2 dominate V_12: V_1 + V_2 - V_12 is PSD; the two-way covariance is the raw
  // one (no fix, no flag), and one-way and HC covariances never carry it.
  arma::arma_rng::set_seed(7);
  const arma::uword n = 600;
  arma::umat cl(n, 2);
  for (arma::uword i = 0; i < n; ++i) {
    cl(i, 0) = i % 30;
    cl(i, 1) = (i / 30) % 20;
  }
  const arma::mat Xf = arma::randn(30, 3), Xy = arma::randn(20, 3);
  const arma::vec ef = arma::randn(30), ey = arma::randn(20);
  arma::mat X = 0.3 * arma::randn(n, 3);
  arma::vec y = 0.3 * arma::randn(n);
  for (arma::uword i = 0; i < n; ++i) {
    X.row(i) += Xf.row(cl(i, 0)) + Xy.row(cl(i, 1));
    y(i) += ef(cl(i, 0)) + ey(cl(i, 1));
  }
  y += X * arma::vec({1.0, -0.5, 0.25});
  OLS m;
  m.fit(X, y);
  const arma::mat D = design(X);
  const arma::mat M = arma::solve(D.t() * D, D.t());
  const arma::vec e = y - D * (M * y);
  const arma::mat raw = raw_two_way(M, e, cl, 1.0);
  ASSERT_GT(min_eig_ratio(raw), 0.0);
  const CovOptions cov = two_way(CovType::CR0, cl);
  expect_near(m.covariance(cov), raw, 1e-12, "PSD two-way V is the raw V");
  EXPECT_FALSE(m.inference(cov).psd_fixed);
  EXPECT_EQ(m.inference(cov).psd_min_eigenvalue, 0.0);
  // The unfixed path is the old expression: standard errors equal sqrt(diag V) of covariance().
  const arma::mat se = m.std_errors(cov);
  const arma::mat V = m.covariance(cov);
  for (arma::uword j = 0; j < V.n_rows; ++j) EXPECT_NEAR(se(j, 0), std::sqrt(V(j, j)), 1e-14);
  CovOptions one = two_way(CovType::CR1, arma::umat(cl.col(0)));
  EXPECT_FALSE(m.inference(one).psd_fixed);
  CovOptions hc;
  hc.type = CovType::HC1;
  EXPECT_FALSE(m.inference(hc).psd_fixed);
}
