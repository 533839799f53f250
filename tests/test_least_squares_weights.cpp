// Weighted least squares (analytic and frequency weights) and cluster-robust covariances (CR0,
// CR1, CR2; one- and two-way) of attnreg::OLS against direct few-line float64 oracles: WLS as
// least squares on sqrt(w)-scaled data (arma::solve), sandwiches written out with an explicit
// (D'WD)^{-1} (fine for these well-conditioned oracle designs), and frequency weights against
// the unweighted fit of the data with row i repeated w_i times.
#include <gtest/gtest.h>

#include "attnreg/base/arma.hpp"
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "attnreg/base/error.hpp"
#include "attnreg/least_squares/least_squares.hpp"

using attnreg::CovOptions;
using attnreg::CovType;
using attnreg::OLS;
using attnreg::OLSOptions;
using attnreg::WeightType;

namespace {

struct Case {
  arma::mat X;
  arma::vec y;
  arma::vec w;
  arma::umat cl;  // n x 2 cluster ids (unbalanced)
};

// Random design with heteroskedastic, within-cluster correlated errors; `collinear` makes the
// last column nearly a copy of the first (condition number ~1e6).
Case make_case(arma::uword n, arma::uword p, unsigned seed, bool collinear, bool zero_weights) {
  arma::arma_rng::set_seed(seed);
  Case c;
  c.X = arma::randn(n, p);
  if (collinear && p >= 2) c.X.col(p - 1) = c.X.col(0) + 1e-6 * arma::randn(n);
  c.cl.set_size(n, 2);
  // Unbalanced firms: sizes grow with the index (1, 2, 3, ...), years cycle over 7.
  arma::uword firm = 0, left = 1, size = 1;
  for (arma::uword i = 0; i < n; ++i) {
    c.cl(i, 0) = 1000 + 3 * firm;  // non-consecutive codes
    if (--left == 0) {
      ++firm;
      size = size % 9 + 1;
      left = size;
    }
    c.cl(i, 1) = i % 7;
  }
  arma::vec firm_effect = arma::randn(firm + 1);
  c.y = c.X * arma::linspace(1.0, -1.0, p) + 0.5;
  for (arma::uword i = 0; i < n; ++i) {
    c.y(i) += firm_effect((c.cl(i, 0) - 1000) / 3) + (1.0 + std::fabs(c.X(i, 0))) * arma::randn();
  }
  c.w = arma::randu(n) * 3.0 + 0.2;
  if (zero_weights) {
    for (arma::uword i = 3; i < n; i += 11) c.w(i) = 0.0;
  }
  return c;
}

arma::mat design(const arma::mat& X, bool intercept) {
  return intercept ? arma::join_horiz(arma::ones(X.n_rows), X) : X;
}

// Dense codes 0..G-1 over the rows of positive weight; rows of weight 0 get G (ignored).
arma::uvec codes(const arma::uvec& raw, const arma::vec& w, arma::uword& G) {
  std::map<arma::uword, arma::uword> m;
  for (arma::uword i = 0; i < raw.n_elem; ++i)
    if (w(i) > 0 && !m.count(raw(i))) m.emplace(raw(i), m.size());
  G = m.size();
  arma::uvec out(raw.n_elem);
  for (arma::uword i = 0; i < raw.n_elem; ++i) out(i) = w(i) > 0 ? m.at(raw(i)) : G;
  return out;
}

// All oracles go through P = (D'WD)^{-1} D' W^{1/2} = R^{-1} Q' from an unpivoted Householder
// QR of W^{1/2} D (LAPACK dgeqrf via Armadillo): backward stable, so the near-collinear cases
// keep their digits, where forming and inverting D'WD would square the condition number.
struct Oracle {
  arma::vec b, e, sw;
  arma::mat P;  // q x n
  arma::mat B;  // (D'WD)^{-1} = P P'
  double N, sigma2;
};

Oracle wls_oracle(const arma::mat& D, const arma::vec& y, const arma::vec& w, bool freq) {
  Oracle o;
  o.sw = arma::sqrt(w);
  const arma::mat Dw = D.each_col() % o.sw;
  o.b = arma::solve(Dw, y % o.sw);  // least squares on the scaled data
  o.e = y - D * o.b;
  arma::mat Q, R;
  arma::qr_econ(Q, R, Dw);
  o.P = arma::solve(arma::trimatu(R), Q.t());
  o.B = o.P * o.P.t();
  o.N = freq ? arma::accu(w) : static_cast<double>(arma::accu(w > 0));
  o.sigma2 = arma::accu(w % arma::square(o.e)) / (o.N - D.n_cols);
  return o;
}

// HC0-HC3: V = sum_i s_i s_i' with s_i = P_i w_i^{1/2} e_i adj_i (analytic: B d_i w_i e_i) or,
// for frequency weights (w_i copies, each score d_i e_i and leverage h_i / w_i),
// V = sum_i P_i P_i' e_i^2 adj_i.
arma::mat hc_oracle(const arma::mat& D, const arma::vec& w, const Oracle& o, CovType type, bool freq) {
  const double q = D.n_cols;
  arma::mat V(D.n_cols, D.n_cols, arma::fill::zeros);
  for (arma::uword i = 0; i < D.n_rows; ++i) {
    if (w(i) == 0) continue;
    const double h = o.sw(i) * arma::dot(D.row(i), o.P.col(i));
    const double hh = freq ? h / w(i) : h;
    double s = freq ? o.e(i) * o.e(i) : w(i) * o.e(i) * o.e(i);
    if (type == CovType::HC1) s *= o.N / (o.N - q);
    if (type == CovType::HC2) s /= 1.0 - hh;
    if (type == CovType::HC3) s /= (1.0 - hh) * (1.0 - hh);
    V += s * o.P.col(i) * o.P.col(i).t();
  }
  return V;
}

// One-way cluster sandwich (no factor): sum_g s_g s_g', s_g = P_g W_g^{1/2} e_g; CR2 replaces
// W_g^{1/2} e_g by (I - H_gg)^{-1/2} W_g^{1/2} e_g, H_gg = W_g^{1/2} D_g P_g (explicit symmetric
// square root and inverse).
arma::mat cluster_oracle(const arma::mat& D, const Oracle& o, const arma::uvec& g, arma::uword G,
                         bool cr2) {
  arma::mat V(D.n_cols, D.n_cols, arma::fill::zeros);
  for (arma::uword c = 0; c < G; ++c) {
    const arma::uvec idx = arma::find(g == c);
    const arma::mat Pg = o.P.cols(idx);
    arma::vec r = o.sw(idx) % o.e(idx);
    if (cr2) {
      const arma::mat Xg = D.rows(idx).eval().each_col() % o.sw(idx);
      arma::mat H = Xg * Pg;
      H = 0.5 * (H + H.t());
      r = arma::inv(arma::sqrtmat_sympd(arma::eye(idx.n_elem, idx.n_elem) - H)) * r;
    }
    const arma::vec s = Pg * r;
    V += s * s.t();
  }
  return V;
}

// A two-way covariance as the model reports it: when V_1 + V_2 - V_12 is indefinite, the
// eigenvalue fix of Cameron, Gelbach and Miller (2011, sec. 2.3), U max(Lambda, 0) U'.
arma::mat cgm_fix(const arma::mat& V) {
  const arma::mat S = 0.5 * (V + V.t());
  arma::vec lam;
  arma::mat U;
  arma::eig_sym(lam, U, S);
  if (lam.min() >= -1e-12 * arma::abs(lam).max()) return V;
  return U * arma::diagmat(arma::clamp(lam, 0.0, arma::datum::inf)) * U.t();
}

CovOptions cov(CovType t, const arma::umat& cl = arma::umat()) {
  CovOptions c;
  c.type = t;
  c.clusters = cl;
  return c;
}

void expect_mat_near(const arma::mat& got, const arma::mat& want, double rtol, const std::string& what) {
  ASSERT_EQ(got.n_rows, want.n_rows) << what;
  ASSERT_EQ(got.n_cols, want.n_cols) << what;
  const double scale = std::max(arma::abs(want).max(), 1e-300);
  for (arma::uword i = 0; i < want.n_elem; ++i) {
    EXPECT_NEAR(got(i), want(i), rtol * scale) << what << " element " << i;
  }
}

void expect_se_near(const arma::vec& got, const arma::mat& V, double rtol, const std::string& what) {
  const arma::vec want = arma::sqrt(arma::diagvec(V));
  for (arma::uword j = 0; j < want.n_elem; ++j) {
    EXPECT_NEAR(got(j), want(j), rtol * want(j)) << what << " coefficient " << j;
  }
}

}  // namespace

// ---------------------------------------------------------------- analytic weights

class WeightedOLS
    : public ::testing::TestWithParam<std::tuple<int /*n*/, int /*p*/, unsigned /*seed*/,
                                                 bool /*collinear*/, bool /*zero w*/, bool /*icpt*/>> {};

TEST_P(WeightedOLS, AnalyticWeightsMatchOracles) {
  const auto [n, p, seed, collinear, zeros, icpt] = GetParam();
  const Case c = make_case(n, p, seed, collinear, zeros);
  const arma::mat D = design(c.X, icpt);
  const Oracle o = wls_oracle(D, c.y, c.w, false);
  OLSOptions opt;
  opt.fit_intercept = icpt;
  OLS m(opt);
  m.fit(c.X, c.y, c.w);
  ASSERT_EQ(m.rank(), D.n_cols);
  // Near-collinear designs lose digits in any algorithm (condition ~1e6 of W^{1/2} D).
  const double tol = collinear ? 1e-7 : 1e-10;
  expect_mat_near(m.coefficients(), o.b, tol, "coef");
  expect_mat_near(m.residuals(), o.e, tol, "residuals");
  EXPECT_NEAR(m.n_effective(), o.N, 0.0);
  EXPECT_NEAR(m.sigma2()(0), o.sigma2, 1e-10 * o.sigma2);
  // Classical and HC0-HC3.
  expect_mat_near(m.covariance(cov(CovType::Classical)), o.B * o.sigma2, tol, "classical");
  expect_se_near(m.std_errors(cov(CovType::Classical)), o.B * o.sigma2, tol, "classical se");
  for (CovType t : {CovType::HC0, CovType::HC1, CovType::HC2, CovType::HC3}) {
    const arma::mat V = hc_oracle(D, c.w, o, t, false);
    expect_mat_near(m.covariance(cov(t)), V, tol, attnreg::cov_type_name(t));
    expect_se_near(m.std_errors(cov(t)), V, tol, attnreg::cov_type_name(t) + " se");
  }
  // Cluster-robust, one-way (firm) and two-way (firm, year).
  arma::uword G1, G2, G12;
  const arma::uvec g1 = codes(c.cl.col(0), c.w, G1), g2 = codes(c.cl.col(1), c.w, G2);
  const arma::uvec g12 = codes(c.cl.col(0) * 100 + c.cl.col(1), c.w, G12);
  const double q = D.n_cols, N = o.N;
  const arma::mat V1 = cluster_oracle(D, o, g1, G1, false);
  const arma::umat one = c.cl.col(0);
  expect_mat_near(m.covariance(cov(CovType::CR0, one)), V1, tol, "CR0");
  const double f1 = G1 / (G1 - 1.0) * (N - 1.0) / (N - q);
  expect_mat_near(m.covariance(cov(CovType::CR1, one)), f1 * V1, tol, "CR1");
  expect_se_near(m.std_errors(cov(CovType::CR1, one)), f1 * V1, tol, "CR1 se");
  expect_mat_near(m.covariance(cov(CovType::CR2, one)), cluster_oracle(D, o, g1, G1, true), tol, "CR2");
  const arma::mat Vtwo = V1 + cluster_oracle(D, o, g2, G2, false) - cluster_oracle(D, o, g12, G12, false);
  expect_mat_near(m.covariance(cov(CovType::CR0, c.cl)), cgm_fix(Vtwo), tol, "two-way CR0");
  const double Gmin = std::min(G1, G2);
  const double f2 = Gmin / (Gmin - 1.0) * (N - 1.0) / (N - q);
  expect_mat_near(m.covariance(cov(CovType::CR1, c.cl)), cgm_fix(f2 * Vtwo), tol, "two-way CR1");
  const attnreg::Inference inf = m.inference(cov(CovType::CR1, c.cl));
  ASSERT_EQ(inf.n_clusters.size(), 2u);
  EXPECT_EQ(inf.n_clusters[0], G1);
  EXPECT_EQ(inf.n_clusters[1], G2);
  EXPECT_DOUBLE_EQ(inf.df_inference, Gmin - 1.0);
  EXPECT_DOUBLE_EQ(inf.df_residual, N - q);
  // p-values use G - 1 degrees of freedom.
  const double t0 = inf.t_value(0);
  EXPECT_NEAR(inf.p_value(0), 2.0 * attnreg::student_t_sf(std::fabs(t0), Gmin - 1.0), 1e-15);
  // Weighted R^2 (lm): 1 - sum w e^2 / sum w (y - ybar_w)^2.
  const double ybar = icpt ? arma::accu(c.w % c.y) / arma::accu(c.w) : 0.0;
  const double r2 = 1.0 - arma::accu(c.w % arma::square(o.e)) / arma::accu(c.w % arma::square(c.y - ybar));
  EXPECT_NEAR(inf.r_squared(0), r2, 1e-10);
  const double k0 = icpt ? 1.0 : 0.0;
  EXPECT_NEAR(inf.adj_r_squared(0), 1.0 - (1.0 - r2) * (N - k0) / (N - q), 1e-10);
  // Attention weights: d(x)' (D'WD)^{-1} D'W, reproduce predictions, zero on weight-0 rows.
  const arma::mat Xn = arma::randn(9, p);
  const arma::mat A = m.attention_weights(Xn);
  const arma::mat Aor = design(Xn, icpt) * (o.P.each_row() % o.sw.t());
  expect_mat_near(A, Aor, collinear ? 1e-6 : 1e-10, "attention");
  expect_mat_near(A * c.y, m.predict(Xn), collinear ? 1e-8 : 1e-10, "A y = predict");
  const arma::mat A1 = m.attention_weights(Xn.rows(0, 0));  // small-m path
  expect_mat_near(A1, A.rows(0, 0), 1e-12, "attention (one row)");
  if (icpt) expect_mat_near(arma::sum(A, 1), arma::ones(9), collinear ? 1e-9 : 1e-12, "rows sum to 1");
  for (arma::uword i = 0; i < static_cast<arma::uword>(n); ++i) {
    if (c.w(i) == 0) {
      EXPECT_EQ(arma::abs(A.col(i)).max(), 0.0);
    }
  }
  // Factors: F_test F_train' = A; embedding: A = d(X) Omega D'W.
  expect_mat_near(m.factors(Xn) * m.training_factors().t(), A, collinear ? 1e-6 : 1e-10, "factors");
  expect_mat_near(design(Xn, icpt) * m.embedding() * (D.each_col() % c.w).t(), A,
                  collinear ? 1e-6 : 1e-10, "embedding");
  // Hat diagonal (w_i d_i' B d_i) and exact leave-one-out (refit with w_i = 0).
  const arma::vec h = m.hat_diagonal();
  for (arma::uword i : {0u, 1u, 3u, 5u}) {
    const double hi = o.sw(i) * arma::dot(D.row(i), o.P.col(i));
    EXPECT_NEAR(h(i), hi, collinear ? 1e-8 : 1e-10);
    arma::vec w0 = c.w;
    w0(i) = 0.0;
    const Oracle oi = wls_oracle(D, c.y, w0, false);
    EXPECT_NEAR(m.loo_predictions()(i), arma::as_scalar(D.row(i) * oi.b), collinear ? 1e-6 : 1e-9);
  }
  // Save / restore keeps everything.
  const OLS r = OLS::from_state(m.state(), c.y);
  expect_mat_near(r.fitted(), m.fitted(), 0.0, "restored fitted");
  expect_mat_near(r.std_errors(cov(CovType::CR1, c.cl)), m.std_errors(cov(CovType::CR1, c.cl)),
                  1e-14, "restored CR1");
  expect_mat_near(r.attention_weights(Xn), A, 1e-14, "restored attention");
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, WeightedOLS,
    ::testing::Values(std::make_tuple(60, 2, 1u, false, false, true),
                      std::make_tuple(200, 4, 2u, false, true, true),
                      std::make_tuple(137, 3, 3u, true, false, true),
                      std::make_tuple(90, 5, 4u, false, true, false),
                      std::make_tuple(400, 6, 5u, true, true, true),
                      // large enough for the double (not extended) path under precision auto
                      std::make_tuple(30000, 8, 6u, false, true, true)));

// ---------------------------------------------------------------- zero weights = rows dropped

TEST(WeightedOLS, ZeroWeightsEqualDroppingTheRows) {
  const Case c = make_case(150, 3, 11, false, true);
  const arma::uvec pos = arma::find(c.w > 0);
  OLS full, sub;
  full.fit(c.X, c.y, c.w);
  sub.fit(c.X.rows(pos), c.y(pos), c.w(pos));
  expect_mat_near(full.coefficients(), sub.coefficients(), 1e-12, "coef");
  for (CovType t : {CovType::Classical, CovType::HC0, CovType::HC1, CovType::HC2, CovType::HC3,
                    CovType::HAC}) {
    expect_mat_near(full.std_errors(cov(t)), sub.std_errors(cov(t)), 1e-11, attnreg::cov_type_name(t));
  }
  for (CovType t : {CovType::CR0, CovType::CR1, CovType::CR2}) {
    expect_mat_near(full.std_errors(cov(t, c.cl.col(0))), sub.std_errors(cov(t, c.cl.rows(pos).eval().col(0))),
                    1e-11, attnreg::cov_type_name(t));
  }
  expect_mat_near(full.std_errors(cov(CovType::CR1, c.cl)), sub.std_errors(cov(CovType::CR1, c.cl.rows(pos))),
                  1e-11, "two-way");
  const attnreg::Inference a = full.inference(), b = sub.inference();
  EXPECT_DOUBLE_EQ(a.df_residual, b.df_residual);
  EXPECT_NEAR(a.r_squared(0), b.r_squared(0), 1e-12);
  EXPECT_NEAR(a.sigma(0), b.sigma(0), 1e-12 * b.sigma(0));
  // Fitted values of weight-0 rows are d_i' b.
  const arma::mat D = design(c.X, true);
  expect_mat_near(full.fitted(), D * full.coefficients(), 1e-12, "fitted");
}

// ---------------------------------------------------------------- frequency weights

TEST(WeightedOLS, FrequencyWeightsEqualRepeatedRows) {
  for (unsigned seed : {21u, 22u, 23u}) {
    const Case c = make_case(70 + seed, 3, seed, false, false);
    arma::vec w = arma::floor(c.w * 2.0);  // integers 0..6
    w(0) = std::max(w(0), 1.0);
    std::vector<arma::uword> rep;
    for (arma::uword i = 0; i < w.n_elem; ++i)
      for (int k = 0; k < static_cast<int>(w(i)); ++k) rep.push_back(i);
    const arma::uvec idx = arma::conv_to<arma::uvec>::from(rep);
    OLSOptions o;
    o.weight_type = WeightType::Frequency;
    OLS fw(o), ex;
    fw.fit(c.X, c.y, w);
    ex.fit(c.X.rows(idx), c.y(idx));
    EXPECT_DOUBLE_EQ(fw.n_effective(), static_cast<double>(idx.n_elem));
    expect_mat_near(fw.coefficients(), ex.coefficients(), 1e-11, "coef");
    EXPECT_NEAR(fw.sigma2()(0), ex.sigma2()(0), 1e-11 * ex.sigma2()(0));
    for (CovType t : {CovType::Classical, CovType::HC0, CovType::HC1, CovType::HC2, CovType::HC3}) {
      expect_mat_near(fw.covariance(cov(t)), ex.covariance(cov(t)), 1e-10, attnreg::cov_type_name(t));
    }
    const arma::umat cl = c.cl.rows(idx);
    for (CovType t : {CovType::CR0, CovType::CR1, CovType::CR2}) {
      expect_mat_near(fw.covariance(cov(t, c.cl.col(0))), ex.covariance(cov(t, cl.col(0))), 1e-10,
                      attnreg::cov_type_name(t));
    }
    expect_mat_near(fw.covariance(cov(CovType::CR1, c.cl)), ex.covariance(cov(CovType::CR1, cl)),
                    1e-10, "two-way CR1");
    const attnreg::Inference a = fw.inference(), b = ex.inference();
    EXPECT_DOUBLE_EQ(a.df_residual, b.df_residual);
    EXPECT_NEAR(a.r_squared(0), b.r_squared(0), 1e-12);
    EXPECT_NEAR(a.adj_r_squared(0), b.adj_r_squared(0), 1e-12);
    // The attention of the weighted fit sums the repeated rows' attention.
    const arma::mat Xn = arma::randn(4, 3);
    const arma::mat Aex = ex.attention_weights(Xn);
    arma::mat Asum(4, w.n_elem, arma::fill::zeros);
    for (arma::uword j = 0; j < idx.n_elem; ++j) Asum.col(idx(j)) += Aex.col(j);
    expect_mat_near(fw.attention_weights(Xn), Asum, 1e-11, "attention");
    EXPECT_THROW(fw.std_errors(cov(CovType::HAC)), attnreg::InvalidArgument);
  }
}

// ---------------------------------------------------------------- unit weights, unweighted CR

TEST(WeightedOLS, UnitWeightsEqualUnweighted) {
  const Case c = make_case(120, 3, 31, false, false);
  OLS a, b;
  a.fit(c.X, c.y);
  b.fit(c.X, c.y, arma::ones(120));
  expect_mat_near(b.coefficients(), a.coefficients(), 1e-13, "coef");
  for (int t = 0; t <= static_cast<int>(CovType::HAC); ++t) {
    expect_mat_near(b.std_errors(cov(static_cast<CovType>(t))),
                    a.std_errors(cov(static_cast<CovType>(t))), 1e-12, "type");
  }
  expect_mat_near(b.std_errors(cov(CovType::CR2, c.cl.col(1))), a.std_errors(cov(CovType::CR2, c.cl.col(1))),
                  1e-12, "CR2");
  // Unweighted CR0 against the oracle with w = 1.
  const arma::mat D = design(c.X, true);
  const Oracle o = wls_oracle(D, c.y, arma::ones(120), false);
  arma::uword G;
  const arma::uvec g = codes(c.cl.col(1), arma::ones(120), G);
  expect_mat_near(a.covariance(cov(CovType::CR0, c.cl.col(1))), cluster_oracle(D, o, g, G, false),
                  1e-11, "CR0");
  // Same result from the extended-precision path.
  OLSOptions ext;
  ext.precision = attnreg::Precision::Extended;
  OLS e(ext);
  e.fit(c.X, c.y, c.w);
  OLSOptions dbl;
  dbl.precision = attnreg::Precision::Double;
  OLS d(dbl);
  d.fit(c.X, c.y, c.w);
  EXPECT_TRUE(e.extended_precision());
  EXPECT_FALSE(d.extended_precision());
  expect_mat_near(e.coefficients(), d.coefficients(), 1e-12, "extended vs double");
  expect_mat_near(e.std_errors(cov(CovType::CR1, c.cl)), d.std_errors(cov(CovType::CR1, c.cl)), 1e-11,
                  "extended vs double CR1");
}

// ---------------------------------------------------------------- bad input

TEST(WeightedOLS, BadWeightsAndClustersAreRefused) {
  const Case c = make_case(40, 2, 41, false, false);
  OLS m;
  auto msg_of = [&](auto f) -> std::string {
    try {
      f();
    } catch (const attnreg::InvalidArgument& e) {
      return e.what();
    }
    return "";
  };
  arma::vec w = c.w;
  w(3) = -1.0;
  EXPECT_NE(msg_of([&] { m.fit(c.X, c.y, w); }).find("weights: weight 4 is -1"), std::string::npos);
  w(3) = arma::datum::nan;
  EXPECT_NE(msg_of([&] { m.fit(c.X, c.y, w); }).find("finite"), std::string::npos);
  w(3) = arma::datum::inf;
  EXPECT_NE(msg_of([&] { m.fit(c.X, c.y, w); }).find("finite"), std::string::npos);
  EXPECT_NE(msg_of([&] { m.fit(c.X, c.y, arma::ones(39)); }).find("has length 39"), std::string::npos);
  EXPECT_NE(msg_of([&] { m.fit(c.X, c.y, arma::zeros(40)); }).find("all weights are zero"), std::string::npos);
  m.fit(c.X, c.y, c.w);
  arma::umat one_level(40, 1, arma::fill::value(7));
  EXPECT_NE(msg_of([&] { m.std_errors(cov(CovType::CR1, one_level)); }).find("has 1 cluster"),
            std::string::npos);
  EXPECT_NE(msg_of([&] { m.std_errors(cov(CovType::CR1)); }).find("needs cluster ids"), std::string::npos);
  EXPECT_NE(msg_of([&] { m.std_errors(cov(CovType::HC1, c.cl)); }).find("use a cluster-robust"),
            std::string::npos);
  EXPECT_NE(msg_of([&] { m.std_errors(cov(CovType::CR1, c.cl.rows(0, 38))); }).find("must have 40 rows"),
            std::string::npos);
  EXPECT_NE(msg_of([&] { m.std_errors(cov(CovType::CR2, c.cl)); }).find("one-way only"), std::string::npos);
  EXPECT_THROW(m.masked_predictions(), attnreg::InvalidArgument);
  EXPECT_EQ(attnreg::parse_cov_type("cluster"), CovType::CR1);
  EXPECT_EQ(attnreg::parse_cov_type("cr2"), CovType::CR2);
  EXPECT_EQ(attnreg::parse_weight_type("fweight"), WeightType::Frequency);
  EXPECT_THROW(attnreg::parse_weight_type("probability"), attnreg::InvalidArgument);
}

// ---------------------------------------------------------------- weighted ridge and PCR

#include "attnreg/least_squares/least_squares_spectral.hpp"

TEST(WeightedSpectral, RidgeAndPCRMatchClosedForms) {
  for (unsigned seed : {51u, 52u, 53u}) {
    const Case c = make_case(90 + 40 * seed % 3, 4, seed, seed == 53u, true);
    const arma::mat D = design(c.X, true);
    const arma::uword n = c.X.n_rows, q = D.n_cols;
    const double lambda = 2.5;
    // Ridge: (D'WD + lambda diag(0, I)) b = D'W y, intercept unpenalised.
    arma::mat P = arma::eye(q, q) * lambda;
    P(0, 0) = 0.0;
    const arma::mat DtW = (D.each_col() % c.w).t();
    const arma::vec b = arma::solve(DtW * D + P, DtW * c.y);
    attnreg::RidgeOptions ro;
    ro.lambda = lambda;
    attnreg::Ridge r(ro);
    r.fit(c.X, c.y, c.w);
    expect_mat_near(r.coefficients(), b, 1e-9, "ridge coef");
    expect_mat_near(r.fitted(), D * b, 1e-9, "ridge fitted (weight-0 rows too)");
    const arma::mat Xn = arma::randn(6, 4);
    const arma::mat A = r.attention_weights(Xn);
    const arma::mat Omega = arma::inv(DtW * D + P);
    expect_mat_near(A, design(Xn, true) * Omega * DtW, 1e-9, "ridge attention");
    expect_mat_near(r.embedding(), Omega, 1e-9, "ridge embedding");
    expect_mat_near(A * c.y, r.predict(Xn), 1e-10, "ridge A y");
    expect_mat_near(arma::sum(A, 1), arma::ones(6), 1e-12, "ridge rows sum to 1");
    expect_mat_near(r.factors(Xn) * r.training_factors().t(), A, 1e-10, "ridge factors");
    const arma::vec h = r.hat_diagonal();
    for (arma::uword i : {0u, 3u, 7u}) {
      EXPECT_NEAR(h(i), c.w(i) * arma::as_scalar(D.row(i) * Omega * D.row(i).t()), 1e-10);
      arma::vec w0 = c.w;
      w0(i) = 0.0;
      const arma::mat DtW0 = (D.each_col() % w0).t();
      const arma::vec bi = arma::solve(DtW0 * D + P, DtW0 * c.y);
      EXPECT_NEAR(r.loo_predictions()(i), arma::as_scalar(D.row(i) * bi), 1e-9);
    }
    EXPECT_NEAR(r.effective_df(), arma::trace(D * Omega * DtW), 1e-9);
    const attnreg::Ridge rr = attnreg::Ridge::from_state(ro, r.state());
    expect_mat_near(rr.fitted(), r.fitted(), 1e-13, "ridge restored");
    // set_lambda reuses the SVD: same as a fresh weighted fit.
    r.set_lambda(0.3);
    ro.lambda = 0.3;
    attnreg::Ridge r2(ro);
    r2.fit(c.X, c.y, c.w);
    expect_mat_near(r.fitted(), r2.fitted(), 1e-12, "ridge set_lambda");
    // PCR with all components = WLS; with L components = the weighted principal components.
    attnreg::PCR all(attnreg::PCROptions{-1, true, 0});
    all.fit(c.X, c.y, c.w);
    OLS wls;
    wls.fit(c.X, c.y, c.w);
    expect_mat_near(all.coefficients(), wls.coefficients(), seed == 53u ? 1e-6 : 1e-10, "PCR = WLS");
    const arma::rowvec xm = (c.w.t() * c.X) / arma::accu(c.w);
    const double ym = arma::dot(c.w, c.y) / arma::accu(c.w);
    const arma::mat Xc = (c.X.each_row() - xm).eval().each_col() % arma::sqrt(c.w);
    arma::mat U, V;
    arma::vec s;
    arma::svd_econ(U, s, V, Xc);
    const arma::vec beta = V.cols(0, 1) * ((U.cols(0, 1).t() * ((c.y - ym) % arma::sqrt(c.w))) / s.head(2));
    attnreg::PCR two(attnreg::PCROptions{2, true, 0});
    two.fit(c.X, c.y, c.w);
    expect_mat_near(two.coefficients().rows(1, 4), beta, 1e-10, "PCR(2) slopes");
    EXPECT_NEAR(two.coefficients()(0), ym - arma::dot(xm, beta), 1e-10);
    const arma::mat A2 = two.attention_weights(Xn);
    expect_mat_near(A2 * c.y, two.predict(Xn), 1e-10, "PCR A y");
    for (arma::uword i = 0; i < n; ++i) {
      if (c.w(i) == 0) {
        EXPECT_EQ(arma::abs(A2.col(i)).max(), 0.0);
      }
    }
    EXPECT_THROW(two.masked_predictions(), attnreg::InvalidArgument);
  }
  attnreg::Ridge r;
  const Case c = make_case(30, 2, 60, false, false);
  EXPECT_THROW(r.fit(c.X, c.y, arma::zeros(30)), attnreg::InvalidArgument);
  EXPECT_THROW(r.fit(c.X, c.y, -c.w), attnreg::InvalidArgument);
}
