// Covariances of Ridge and PCR (classical, HC0-HC3, CR0-CR2 one- and two-way, under analytic and
// frequency weights) against a direct few-line float64 oracle: the coefficient map
// M = (D'WD + P)^{-1} D'W of ridge (P = lambda diag(0, I)) by arma::solve, or for PCR the WLS of y
// on [1, Z_L] with Z_L the scores on the leading eigenvectors of X_c'W X_c (eig_sym), and the
// sandwiches written out from M: sum_g (M_g a_g)(M_g a_g)'.
#include <gtest/gtest.h>

#include "attnreg/base/arma.hpp"
#include <cmath>
#include <map>
#include <vector>

#include "attnreg/base/error.hpp"
#include "attnreg/least_squares/least_squares.hpp"
#include "attnreg/least_squares/least_squares_spectral.hpp"

using attnreg::CovOptions;
using attnreg::CovType;
using attnreg::PCR;
using attnreg::PCROptions;
using attnreg::Ridge;
using attnreg::RidgeOptions;
using attnreg::WeightType;

namespace {

struct Data {
  arma::mat X;
  arma::vec y, w;
  arma::umat cl;
};

Data make_data(arma::uword n, arma::uword p, unsigned seed, bool collinear, bool zero_weight) {
  arma::arma_rng::set_seed(seed);
  Data d;
  d.X = arma::randn(n, p);
  if (collinear && p >= 2) d.X.col(p - 1) = d.X.col(0) + 1e-7 * arma::randn(n);
  d.cl.set_size(n, 2);
  for (arma::uword i = 0; i < n; ++i) {
    d.cl(i, 0) = (i * 7 + i / 3) % 9 + 100;  // unbalanced, non-consecutive codes
    d.cl(i, 1) = (i * i) % 5;
  }
  arma::vec shock = arma::randn(9);
  d.y = d.X * arma::linspace(1.0, -0.5, p) + 0.5;
  for (arma::uword i = 0; i < n; ++i) {
    d.y(i) += (0.5 + std::fabs(d.X(i, 0))) * arma::randn() + shock(d.cl(i, 0) - 100);
  }
  d.w = 0.2 + 2.0 * arma::randu(n);
  if (zero_weight) d.w(3) = 0.0;
  return d;
}

// The oracle's coefficient map and design.
struct Oracle {
  arma::mat M;  // q x n
  arma::mat D;  // n x q
};

Oracle ridge_map(const arma::mat& X, const arma::vec& w, double lambda, bool intercept) {
  const arma::uword n = X.n_rows, p = X.n_cols;
  Oracle o;
  o.D = intercept ? arma::join_horiz(arma::ones(n), X) : X;
  arma::mat P(o.D.n_cols, o.D.n_cols, arma::fill::zeros);
  P.diag().fill(lambda);
  if (intercept) P(0, 0) = 0.0;
  const arma::mat DW = o.D.each_col() % w;
  o.M = arma::solve(o.D.t() * DW + P, DW.t());
  (void)p;
  return o;
}

Oracle pcr_map(const arma::mat& X, const arma::vec& w, arma::uword L) {
  const arma::uword n = X.n_rows, p = X.n_cols;
  const arma::rowvec xbar = (w.t() * X) / arma::accu(w);
  const arma::mat Xc = X.each_row() - xbar;
  arma::vec ev;
  arma::mat E;
  arma::eig_sym(ev, E, Xc.t() * (Xc.each_col() % w));
  const arma::mat VL = arma::fliplr(E).eval().cols(0, L - 1);  // leading L eigenvectors
  const arma::mat Z = arma::join_horiz(arma::ones(n), Xc * VL);
  const arma::mat ZW = Z.each_col() % w;
  const arma::mat G = arma::solve(Z.t() * ZW, ZW.t());  // (L+1) x n
  Oracle o;
  o.D = arma::join_horiz(arma::ones(n), X);
  o.M.set_size(p + 1, n);
  o.M.rows(1, p) = VL * G.rows(1, L);
  o.M.row(0) = G.row(0) - xbar * o.M.rows(1, p);
  return o;
}

// Oracle covariance of every type, analytic weights (N = rows of positive weight).
arma::mat oracle_cov(const Oracle& o, const arma::vec& y, const arma::vec& w, CovType type,
                     const arma::umat& cl = arma::umat()) {
  const arma::uword n = y.n_elem;
  const arma::mat H = o.D * o.M;
  const arma::vec e = y - H * y;
  const double N = arma::accu(w > 0.0), trH = arma::trace(H);
  const double df = N - trH;
  if (type == CovType::Classical) {
    const double s2 = arma::accu(w % arma::square(e)) / df;
    arma::mat C(o.M.n_rows, o.M.n_rows, arma::fill::zeros);
    for (arma::uword i = 0; i < n; ++i) {
      if (w(i) > 0) C += o.M.col(i) * o.M.col(i).t() / w(i);
    }
    return s2 * C;
  }
  if (type == CovType::HC0 || type == CovType::HC1 || type == CovType::HC2 ||
      type == CovType::HC3) {
    arma::vec om = arma::square(e);
    if (type == CovType::HC1) om *= N / df;
    if (type == CovType::HC2) om /= (1.0 - H.diag());
    if (type == CovType::HC3) om /= arma::square(1.0 - H.diag());
    return o.M * arma::diagmat(om) * o.M.t();
  }
  // Cluster-robust on column(s) of cl.
  auto one_way = [&](const arma::uvec& g, bool cr2) {
    std::map<arma::uword, std::vector<arma::uword>> members;
    for (arma::uword i = 0; i < n; ++i) {
      if (w(i) > 0) members[g(i)].push_back(i);  // rows of weight 0 have M_i = 0
    }
    arma::mat C(o.M.n_rows, o.M.n_rows, arma::fill::zeros);
    for (const auto& kv : members) {
      const arma::uvec idx = arma::conv_to<arma::uvec>::from(kv.second);
      arma::vec a = e(idx);
      if (cr2) {
        // (I - Ht_gg)^{-1/2} on the whitened residuals, Ht = W^{1/2} H W^{-1/2} (symmetric).
        const arma::vec sw = arma::sqrt(w(idx));
        arma::mat Hg = H(idx, idx);
        Hg = arma::diagmat(sw) * Hg * arma::diagmat(1.0 / sw);
        Hg = 0.5 * (Hg + Hg.t());
        arma::vec lam;
        arma::mat Q;
        arma::eig_sym(lam, Q, arma::eye(idx.n_elem, idx.n_elem) - Hg);
        a = (Q * arma::diagmat(1.0 / arma::sqrt(lam)) * Q.t() * (sw % a)) / sw;
      }
      const arma::vec s = o.M.cols(idx) * a;
      C += s * s.t();
    }
    return std::make_pair(C, static_cast<double>(members.size()));
  };
  if (cl.n_cols == 1) {
    auto [C, G] = one_way(cl.col(0), type == CovType::CR2);
    if (type == CovType::CR1) C *= G / (G - 1.0) * (N - 1.0) / df;
    return C;
  }
  auto [C1, G1] = one_way(cl.col(0), false);
  auto [C2, G2] = one_way(cl.col(1), false);
  const arma::uvec both = cl.col(0) * 1000 + cl.col(1);
  auto [C12, G12] = one_way(both, false);
  (void)G12;
  arma::mat C = C1 + C2 - C12;
  const double G = std::min(G1, G2);
  if (type == CovType::CR1) C *= G / (G - 1.0) * (N - 1.0) / df;
  // Indefinite: the eigenvalue fix of Cameron, Gelbach and Miller (2011, sec. 2.3).
  C = 0.5 * (C + C.t());
  arma::vec lam;
  arma::mat U;
  arma::eig_sym(lam, U, C);
  if (lam.min() < -1e-12 * arma::abs(lam).max()) {
    C = U * arma::diagmat(arma::clamp(lam, 0.0, arma::datum::inf)) * U.t();
  }
  return C;
}

double rel_err(const arma::mat& a, const arma::mat& b) {
  return arma::abs(a - b).max() / std::max(arma::abs(b).max(), 1e-300);
}

const std::vector<CovType> kTypes = {CovType::Classical, CovType::HC0, CovType::HC1,
                                     CovType::HC2,       CovType::HC3, CovType::CR0,
                                     CovType::CR1,       CovType::CR2};

CovOptions cov_of(CovType t, const arma::umat& cl) {
  CovOptions c;
  c.type = t;
  if (attnreg::is_cluster_cov(t)) c.clusters = cl;
  return c;
}

}  // namespace

TEST(SpectralInference, RidgeEveryTypeMatchesOracle) {
  struct Shape {
    arma::uword n, p;
    unsigned seed;
    bool collinear, weighted, zero_weight;
    double lambda;
  };
  const std::vector<Shape> shapes = {{40, 3, 1, false, false, false, 0.7},
                                     {57, 5, 2, false, true, false, 3.0},
                                     {33, 4, 3, true, true, true, 0.05},
                                     {120, 8, 4, true, false, false, 1e-3},
                                     {25, 2, 5, false, true, false, 50.0}};
  for (const auto& s : shapes) {
    const Data d = make_data(s.n, s.p, s.seed, s.collinear, s.zero_weight);
    const arma::vec w = s.weighted ? d.w : arma::ones(s.n);
    RidgeOptions opt;
    opt.lambda = s.lambda;
    Ridge m(opt);
    m.fit(d.X, d.y, s.weighted ? d.w : arma::vec());
    const Oracle o = ridge_map(d.X, w, s.lambda, true);
    ASSERT_LT(rel_err(m.coefficients(), o.M * d.y), 1e-8) << "seed " << s.seed;
    EXPECT_NEAR(m.df_residual(), arma::accu(w > 0) - arma::trace(o.D * o.M), 1e-9);
    for (CovType t : kTypes) {
      const arma::umat cl = d.cl.col(0);
      const arma::mat V = m.covariance(cov_of(t, cl));
      const arma::mat Vo = oracle_cov(o, d.y, w, t, cl);
      EXPECT_LT(rel_err(V, Vo), 1e-8) << attnreg::cov_type_name(t) << " seed " << s.seed;
      const arma::mat se = m.std_errors(cov_of(t, cl));
      EXPECT_LT(rel_err(se, arma::sqrt(Vo.diag())), 1e-8) << attnreg::cov_type_name(t);
    }
    for (CovType t : {CovType::CR0, CovType::CR1}) {
      const arma::mat V = m.covariance(cov_of(t, d.cl));
      EXPECT_LT(rel_err(V, oracle_cov(o, d.y, w, t, d.cl)), 1e-8)
          << "two-way " << attnreg::cov_type_name(t) << " seed " << s.seed;
    }
  }
}

TEST(SpectralInference, PCREveryTypeMatchesOracle) {
  struct Shape {
    arma::uword n, p, L;
    unsigned seed;
    bool collinear, weighted;
  };
  const std::vector<Shape> shapes = {{40, 4, 2, 11, false, false},
                                     {60, 6, 6, 12, false, true},
                                     {35, 5, 3, 13, true, true},
                                     {80, 3, 1, 14, false, false}};
  for (const auto& s : shapes) {
    const Data d = make_data(s.n, s.p, s.seed, s.collinear, false);
    const arma::vec w = s.weighted ? d.w : arma::ones(s.n);
    PCROptions opt;
    opt.rank = static_cast<int>(s.L);
    PCR m(opt);
    m.fit(d.X, d.y, s.weighted ? d.w : arma::vec());
    const Oracle o = pcr_map(d.X, w, s.L);
    ASSERT_LT(rel_err(m.coefficients(), o.M * d.y), 1e-7) << "seed " << s.seed;
    EXPECT_NEAR(m.df_residual(), s.n - s.L - 1.0, 1e-9);
    for (CovType t : kTypes) {
      const arma::umat cl = d.cl.col(0);
      const arma::mat V = m.covariance(cov_of(t, cl));
      EXPECT_LT(rel_err(V, oracle_cov(o, d.y, w, t, cl)), 1e-7)
          << attnreg::cov_type_name(t) << " seed " << s.seed;
    }
    const arma::mat V2 = m.covariance(cov_of(CovType::CR1, d.cl));
    EXPECT_LT(rel_err(V2, oracle_cov(o, d.y, w, CovType::CR1, d.cl)), 1e-7);
  }
}

TEST(SpectralInference, OneClusterPerRowIsHC0AndLambdaZeroIsOLS) {
  const Data d = make_data(50, 4, 21, false, false);
  arma::umat own(50, 1);
  for (arma::uword i = 0; i < 50; ++i) own(i, 0) = i;
  RidgeOptions ro;
  ro.lambda = 0.3;
  Ridge r(ro);
  r.fit(d.X, d.y, d.w);
  EXPECT_LT(rel_err(r.covariance(cov_of(CovType::CR0, own)), r.covariance(cov_of(CovType::HC0, own))),
            1e-12);
  // CR2 with singleton clusters is HC2 (the block of I - H is 1 - h_ii).
  EXPECT_LT(rel_err(r.covariance(cov_of(CovType::CR2, own)), r.covariance(cov_of(CovType::HC2, own))),
            1e-10);
  // lambda = 0 and PCR with all components are weighted least squares: OLS's covariances.
  ro.lambda = 0.0;
  Ridge r0(ro);
  r0.fit(d.X, d.y, d.w);
  PCR pc(PCROptions{-1, true, 0});
  pc.fit(d.X, d.y, d.w);
  attnreg::OLS ols;
  ols.fit(d.X, d.y, d.w);
  for (CovType t : kTypes) {
    const arma::umat cl = d.cl.col(0);
    const arma::mat Vo = ols.covariance(cov_of(t, cl));
    EXPECT_LT(rel_err(r0.covariance(cov_of(t, cl)), Vo), 1e-9) << attnreg::cov_type_name(t);
    EXPECT_LT(rel_err(pc.covariance(cov_of(t, cl)), Vo), 1e-9) << attnreg::cov_type_name(t);
  }
  const attnreg::Inference a = r0.inference(cov_of(CovType::CR1, d.cl.col(0)));
  const attnreg::Inference b = ols.inference(cov_of(CovType::CR1, d.cl.col(0)));
  EXPECT_LT(rel_err(a.p_value, b.p_value), 1e-8);
  EXPECT_DOUBLE_EQ(a.df_inference, b.df_inference);
  EXPECT_NEAR(a.adj_r_squared(0), b.adj_r_squared(0), 1e-12);
}

TEST(SpectralInference, FrequencyWeightsEqualRepeatedRows) {
  const Data d = make_data(30, 3, 31, false, false);
  arma::vec fw(30);
  for (arma::uword i = 0; i < 30; ++i) fw(i) = 1 + (i % 3);
  std::vector<arma::uword> rep;
  for (arma::uword i = 0; i < 30; ++i)
    for (arma::uword c = 0; c < fw(i); ++c) rep.push_back(i);
  const arma::uvec idx = arma::conv_to<arma::uvec>::from(rep);
  const arma::umat cl = d.cl.col(0);
  RidgeOptions ro;
  ro.lambda = 2.0;
  ro.weight_type = WeightType::Frequency;
  Ridge wfit(ro);
  wfit.fit(d.X, d.y, fw);
  ro.weight_type = WeightType::Analytic;
  Ridge rfit(ro);
  rfit.fit(d.X.rows(idx), arma::vec(d.y(idx)));
  EXPECT_NEAR(wfit.df_residual(), rfit.df_residual(), 1e-9);
  for (CovType t : kTypes) {
    const arma::mat a = wfit.covariance(cov_of(t, cl));
    const arma::mat b = rfit.covariance(cov_of(t, arma::umat(cl.rows(idx))));
    EXPECT_LT(rel_err(a, b), 1e-9) << attnreg::cov_type_name(t);
  }
}

TEST(SpectralInference, BadInputNamesTheArgument) {
  const Data d = make_data(20, 2, 41, false, false);
  Ridge r;
  r.fit(d.X, d.y);
  CovOptions c;
  c.type = CovType::CR1;
  EXPECT_THROW(r.covariance(c), attnreg::InvalidArgument);  // no clusters
  c.clusters = arma::umat(20, 1, arma::fill::zeros);
  try {
    r.std_errors(c);
    FAIL() << "one cluster accepted";
  } catch (const attnreg::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("clusters"), std::string::npos);
  }
  c.clusters = arma::umat(19, 1, arma::fill::zeros);
  EXPECT_THROW(r.inference(c), attnreg::InvalidArgument);  // wrong length
  c.type = CovType::HC1;
  c.clusters = d.cl.col(0);
  EXPECT_THROW(r.covariance(c), attnreg::InvalidArgument);  // clusters with HC1
  c = CovOptions{};
  EXPECT_THROW(r.covariance(c, 3), attnreg::InvalidArgument);  // output out of range
  c.type = CovType::CR2;
  c.clusters = d.cl;
  EXPECT_THROW(r.covariance(c), attnreg::InvalidArgument);  // two-way CR2
}

// OLSOptions::prepare_q1 (Q_1 by a triangular solve during fit) gives the covariances of the
// lazily formed dorgqr Q_1, for well-conditioned designs (where it is used) and ill-conditioned
// ones (where it must fall back).
TEST(OLSPrepareQ1, SameCovariancesAsDorgqr) {
  for (bool ill : {false, true}) {
    const Data d = make_data(300, 5, ill ? 52 : 51, ill, false);
    attnreg::OLSOptions o;
    o.precision = attnreg::Precision::Double;
    attnreg::OLS lazy(o);
    lazy.fit(d.X, d.y, d.w);
    o.prepare_q1 = true;
    attnreg::OLS eager(o);
    eager.fit(d.X, d.y, d.w);
    for (CovType t : kTypes) {
      const arma::umat cl = d.cl.col(0);
      EXPECT_LT(rel_err(eager.std_errors(cov_of(t, cl)), lazy.std_errors(cov_of(t, cl))), 1e-12)
          << attnreg::cov_type_name(t) << (ill ? " ill-conditioned" : "");
    }
    EXPECT_LT(arma::abs(eager.hat_diagonal() - lazy.hat_diagonal()).max(), 1e-13);
  }
}
