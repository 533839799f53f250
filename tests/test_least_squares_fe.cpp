// Absorbed fixed effects (alternating projections, Gaure 2013) against the dummy-variable OLS
// written out directly: the full design [X, D_1, ..., D_K] solved by the pseudo-inverse (oracle
// only; fine for these small designs), its rank for the degrees of freedom, and the
// sandwich formulas with the full leverage.
#include <gtest/gtest.h>

#include "attnreg/base/arma.hpp"
#include <cmath>
#include <map>
#include <vector>

#include "attnreg/base/error.hpp"
#include "attnreg/least_squares/least_squares_fe.hpp"

using attnreg::AbsorbedOLS;
using attnreg::AbsorbOptions;
using attnreg::CovOptions;
using attnreg::CovType;
using attnreg::Factors;

namespace {

// Re-code to 0..L-1 in order of first appearance.
arma::uvec dense(const arma::uvec& raw) {
  std::map<arma::uword, arma::uword> m;
  arma::uvec out(raw.n_elem);
  for (arma::uword i = 0; i < raw.n_elem; ++i) {
    auto it = m.find(raw(i));
    if (it == m.end()) it = m.emplace(raw(i), m.size()).first;
    out(i) = it->second;
  }
  return out;
}

// Unbalanced levels (probability ~ 1/(l+1)) plus `singletons` rows on levels of their own.
arma::uvec random_factor(arma::uword n, arma::uword L, arma::uword singletons) {
  arma::vec p(L);
  for (arma::uword l = 0; l < L; ++l) p(l) = 1.0 / (l + 1.0);
  const arma::vec cdf = arma::cumsum(p) / arma::accu(p);
  arma::uvec raw(n);
  for (arma::uword i = 0; i < n; ++i) {
    const double u = arma::randu();
    arma::uword l = 0;
    while (l + 1 < L && cdf(l) < u) ++l;
    raw(i) = l;
  }
  for (arma::uword s = 0; s < singletons && s < n; ++s) raw(n - 1 - s) = L + s;
  return dense(raw);
}

struct Oracle {
  arma::mat b;        // p x k
  arma::mat fitted;   // n x k
  double rank = 0;    // of [X D]
  arma::mat cov_x;    // classical covariance of b (output 0)
  arma::mat G;        // pseudo-inverse of sqrt(w) [X D]
  arma::mat D;        // [X D]
};

arma::mat dummy_design(const arma::mat& X, const arma::umat& codes) {
  arma::mat D = X;
  for (arma::uword j = 0; j < codes.n_cols; ++j) {
    arma::mat Dj(X.n_rows, codes.col(j).max() + 1, arma::fill::zeros);
    for (arma::uword i = 0; i < X.n_rows; ++i) Dj(i, codes(i, j)) = 1.0;
    D = arma::join_rows(D, Dj);
  }
  return D;
}

Oracle dummy_ols(const arma::mat& X, const arma::mat& Y, const arma::umat& codes,
                 const arma::vec& w) {
  Oracle o;
  o.D = dummy_design(X, codes);
  const arma::vec rw = arma::sqrt(w);
  const arma::mat Dw = o.D.each_col() % rw;
  const arma::mat Yw = Y.each_col() % rw;
  o.G = arma::pinv(Dw);
  const arma::mat beta = o.G * Yw;
  o.b = beta.rows(0, X.n_cols - 1);
  o.fitted = o.D * beta;
  o.rank = static_cast<double>(arma::rank(Dw));
  const arma::vec e = (Y.col(0) - o.fitted.col(0)) % rw;
  const double s2 = arma::dot(e, e) / (X.n_rows - o.rank);
  o.cov_x = (o.G * o.G.t()).eval().submat(0, 0, X.n_cols - 1, X.n_cols - 1) * s2;
  return o;
}

double max_rel(const arma::mat& a, const arma::mat& b) {
  return arma::abs(a - b).max() / std::max(1.0, arma::abs(b).max());
}

struct Panel {
  arma::mat X, Y;
  arma::umat codes;
  arma::vec w;
};

Panel make_panel(arma::uword n, arma::uword p, std::vector<arma::uword> levels,
                 arma::uword singletons, bool weighted, bool disconnected, int seed) {
  arma::arma_rng::set_seed(seed);
  Panel d;
  d.codes.set_size(n, levels.size());
  for (arma::uword j = 0; j < levels.size(); ++j) {
    d.codes.col(j) = random_factor(n, levels[j], j == 0 ? singletons : 0);
  }
  if (disconnected && levels.size() >= 2) {
    // Two blocks with disjoint levels of factors 1 and 2 (plus the singletons' own components).
    const arma::uword h = n / 2;
    arma::uvec f1 = d.codes.col(0), f2 = d.codes.col(1);
    for (arma::uword i = h; i < n; ++i) {
      f1(i) += 100000;
      f2(i) += 100000;
    }
    d.codes.col(0) = dense(f1);
    d.codes.col(1) = dense(f2);
  }
  d.X = arma::randn(n, p);
  // Correlate X with the fixed effects so that absorbing them matters.
  for (arma::uword j = 0; j < levels.size(); ++j) {
    const arma::vec eff = arma::randn(d.codes.col(j).max() + 1);
    for (arma::uword i = 0; i < n; ++i) {
      d.X(i, 0) += eff(d.codes(i, j));
      d.X(i, p - 1) -= 0.5 * eff(d.codes(i, j));
    }
  }
  d.Y = d.X * arma::linspace(1.0, -1.0, p) + arma::randn(n);
  for (arma::uword j = 0; j < levels.size(); ++j) {
    const arma::vec eff = 3.0 * arma::randn(d.codes.col(j).max() + 1);
    for (arma::uword i = 0; i < n; ++i) d.Y(i, 0) += eff(d.codes(i, j));
  }
  d.w = weighted ? arma::vec(0.2 + 2.0 * arma::randu(n)) : arma::vec(arma::ones(n));
  return d;
}

// Coefficients, df and covariance at the default tolerance (1e-10); fitted values, fixed
// effects and predictions, whose accuracy is the sweep tolerance relative to the largest
// transformed value, with tol = 1e-12.
void expect_matches_dummy(const Panel& d, bool pass_weights, const char* label) {
  const arma::vec w = pass_weights ? d.w : arma::vec();
  AbsorbedOLS m;
  m.fit(d.X, d.Y, d.codes, w);
  ASSERT_TRUE(m.converged()) << label;
  const Oracle ref = dummy_ols(d.X, d.Y, d.codes, d.w);
  EXPECT_LT(max_rel(m.coefficients(), ref.b), 1e-10) << label;
  EXPECT_DOUBLE_EQ(m.df_residual(), d.X.n_rows - ref.rank) << label;
  EXPECT_TRUE(m.df_info().exact) << label;
  const arma::mat V = m.covariance(CovOptions{}, 0);
  EXPECT_LT(max_rel(V, ref.cov_x), 1e-9) << label;
  AbsorbOptions tight;
  tight.tol = 1e-12;
  AbsorbedOLS mt(tight);
  mt.fit(d.X, d.Y, d.codes, w);
  EXPECT_LT(max_rel(mt.coefficients(), ref.b), 1e-10) << label;
  EXPECT_LT(max_rel(mt.fitted(), ref.fitted), 1e-10) << label;
  // Fixed effects reproduce the fit: X b + sum_j alpha_j[g_j] = fitted.
  arma::mat pred = d.X * mt.coefficients();
  for (arma::uword j = 0; j < d.codes.n_cols; ++j) {
    for (arma::uword i = 0; i < d.X.n_rows; ++i) {
      pred.row(i) += mt.fixed_effects()[j].row(d.codes(i, j));
    }
  }
  EXPECT_LT(max_rel(pred, ref.fitted), 1e-10) << label;
  EXPECT_LT(max_rel(mt.predict(d.X, d.codes), ref.fitted), 1e-10) << label;
}

}  // namespace

TEST(LeastSquaresFE, OneWayMatchesDummyOLS) {
  const std::vector<std::array<int, 4>> shapes = {{60, 1, 7, 0}, {200, 3, 25, 3}, {500, 5, 80, 10},
                                                  {150, 2, 60, 20}};
  for (int seed : {1, 2, 3}) {
    for (const auto& s : shapes) {
      for (bool weighted : {false, true}) {
        const Panel d = make_panel(s[0], s[1], {arma::uword(s[2])}, s[3], weighted, false, seed);
        expect_matches_dummy(d, weighted, "one-way");
        AbsorbedOLS m;
        m.fit(d.X, d.Y, d.codes, weighted ? d.w : arma::vec());
        EXPECT_EQ(m.iterations(), 1);  // one factor: exact in one pass
        EXPECT_EQ(m.df_info().redundant, 0u);
      }
    }
  }
}

TEST(LeastSquaresFE, TwoWayMatchesDummyOLSConnectedAndDisconnected) {
  const std::vector<std::array<int, 5>> shapes = {
      {80, 1, 8, 5, 0}, {300, 3, 30, 12, 4}, {400, 4, 60, 40, 15}, {250, 2, 90, 6, 8}};
  for (int seed : {11, 12}) {
    for (const auto& s : shapes) {
      for (bool weighted : {false, true}) {
        for (bool disconnected : {false, true}) {
          const Panel d = make_panel(s[0], s[1], {arma::uword(s[2]), arma::uword(s[3])}, s[4],
                                     weighted, disconnected, seed);
          expect_matches_dummy(d, weighted, disconnected ? "two-way disconnected" : "two-way");
          AbsorbedOLS m;
          m.fit(d.X, d.Y, d.codes, arma::vec());
          if (disconnected) {
            EXPECT_GE(m.df_info().components, 2u);
          }
        }
      }
    }
  }
}

TEST(LeastSquaresFE, ThreeWayMatchesDummyOLSWithExactDF) {
  const std::vector<std::array<int, 6>> shapes = {
      {200, 2, 20, 10, 5, 0}, {400, 3, 40, 15, 8, 5}, {300, 2, 50, 30, 4, 10}};
  for (int seed : {21, 22}) {
    for (const auto& s : shapes) {
      for (bool weighted : {false, true}) {
        const Panel d = make_panel(
            s[0], s[1], {arma::uword(s[2]), arma::uword(s[3]), arma::uword(s[4])}, s[5],
            weighted, seed == 22, seed);
        expect_matches_dummy(d, weighted, "three-way");
      }
    }
  }
}

TEST(LeastSquaresFE, ThreeWayExtraRedundancyCountedExactly) {
  // Factor 3 = factor 1 coarsened: its dummies lie in span(D_1), so every level is redundant
  // (the lower bound "one per further factor" would undercount).
  arma::arma_rng::set_seed(5);
  const arma::uword n = 240;
  arma::umat codes(n, 3);
  codes.col(0) = random_factor(n, 12, 0);
  codes.col(1) = random_factor(n, 7, 0);
  arma::uvec coarse = codes.col(0) / 3;
  codes.col(2) = dense(coarse);
  const arma::mat X = arma::randn(n, 2);
  const arma::mat Y = arma::randn(n, 1);
  AbsorbedOLS m;
  m.fit(X, Y, codes);
  const Oracle ref = dummy_ols(X, Y, codes, arma::ones(n));
  EXPECT_DOUBLE_EQ(m.df_residual(), n - ref.rank);
  EXPECT_EQ(m.df_info().redundant, 1u + (codes.col(2).max() + 1));
  EXPECT_LT(max_rel(m.coefficients(), ref.b), 1e-10);
  // The lower bound is used (exact = false) when the further factors are too large.
  AbsorbOptions o;
  o.exact_df_max_columns = 2;
  AbsorbedOLS lb(o);
  lb.fit(X, Y, codes);
  EXPECT_FALSE(lb.df_info().exact);
  EXPECT_EQ(lb.df_info().redundant, 2u);
}

TEST(LeastSquaresFE, RegressorAbsorbedByFixedEffectsIsAliased) {
  const Panel d = make_panel(200, 3, {20, 6}, 2, true, false, 31);
  arma::mat X = d.X;
  arma::vec g = arma::randn(d.codes.col(0).max() + 1);
  for (arma::uword i = 0; i < X.n_rows; ++i) X(i, 1) = 1e3 + g(d.codes(i, 0));  // constant within factor 1
  AbsorbedOLS m;
  m.fit(X, d.Y, d.codes, d.w);
  EXPECT_TRUE(m.absorbed()[1]);
  EXPECT_FALSE(m.absorbed()[0]);
  EXPECT_TRUE(std::isnan(m.coefficients()(1, 0)));
  EXPECT_EQ(m.rank(), 2u);
  const arma::mat Xk = arma::join_rows(X.col(0), X.col(2));
  const Oracle ref = dummy_ols(Xk, d.Y, d.codes, d.w);
  EXPECT_LT(std::abs(m.coefficients()(0, 0) - ref.b(0, 0)), 1e-10 * std::abs(ref.b(0, 0)));
  EXPECT_LT(std::abs(m.coefficients()(2, 0) - ref.b(1, 0)), 1e-10 * std::abs(ref.b(1, 0)));
  EXPECT_DOUBLE_EQ(m.df_residual(), X.n_rows - ref.rank);
  EXPECT_TRUE(std::isnan(m.std_errors()(1, 0)));
  EXPECT_LT(max_rel(m.predict(X, d.codes), ref.fitted), 1e-9);
}

TEST(LeastSquaresFE, AttentionWeightsReproduceFittedAndPredictions) {
  for (arma::uword K : {1u, 2u, 3u}) {
    std::vector<arma::uword> lv = {15, 6, 4};
    lv.resize(K);
    const Panel d = make_panel(150, 3, lv, 3, true, K == 2, 41 + int(K));
    AbsorbOptions o;
    o.tol = 1e-13;
    AbsorbedOLS m(o);
    m.fit(d.X, d.Y, d.codes, d.w);
    const arma::mat A = m.attention_weights(d.X, d.codes);
    ASSERT_EQ(A.n_rows, d.X.n_rows);
    ASSERT_EQ(A.n_cols, d.X.n_rows);
    EXPECT_LT(max_rel(A * d.Y, m.fitted()), 1e-10) << "K=" << K;
    // Rows sum to one: the fixed effects contain the constant.
    EXPECT_LT(arma::abs(arma::sum(A, 1) - 1.0).max(), 1e-10) << "K=" << K;
    // New rows at known levels.
    arma::arma_rng::set_seed(7);
    const arma::mat Xn = arma::randn(9, 3);
    arma::umat cn(9, K);
    for (arma::uword j = 0; j < K; ++j) cn.col(j) = d.codes.col(j).rows(0, 8);
    const arma::mat An = m.attention_weights(Xn, cn);
    EXPECT_LT(max_rel(An * d.Y, m.predict(Xn, cn)), 1e-10) << "K=" << K;
  }
}

TEST(LeastSquaresFE, FixedEffectsFollowFixestReferences) {
  const Panel d = make_panel(300, 2, {25, 10}, 0, false, true, 51);
  AbsorbedOLS m;
  m.fit(d.X, d.Y, d.codes);
  const auto& a = m.fixed_effects();
  ASSERT_EQ(a.size(), 2u);
  // Disconnected: two components; the first level of factor 2 in each is 0.
  ASSERT_EQ(m.df_info().components, 2u);
  EXPECT_EQ(a[1](0, 0), 0.0);
  // Codes are in order of first appearance and the second half uses new levels: the first
  // factor-2 level of the second block is the first code not in the first half.
  const arma::uvec f2_first = d.codes.col(1).rows(0, 149);
  const arma::uword first_b = f2_first.max() + 1;
  EXPECT_EQ(a[1](first_b, 0), 0.0);
  // One factor: the group means of y - X b.
  AbsorbedOLS one;
  one.fit(d.X, d.Y, d.codes.col(0));
  const arma::vec r = d.Y.col(0) - d.X * one.coefficients().col(0);
  for (arma::uword l = 0; l < 5; ++l) {
    const arma::uvec idx = arma::find(d.codes.col(0) == l);
    EXPECT_NEAR(one.fixed_effects()[0](l, 0), arma::mean(r.elem(idx)), 1e-12);
  }
}

TEST(LeastSquaresFE, RobustCovariancesMatchDummyOLS) {
  const Panel d = make_panel(220, 3, {18}, 4, true, false, 61);
  AbsorbedOLS m;
  m.fit(d.X, d.Y, d.codes, d.w);
  const Oracle ref = dummy_ols(d.X, d.Y, d.codes, d.w);
  const arma::vec rw = arma::sqrt(d.w);
  const arma::mat Dw = ref.D.each_col() % rw;
  const arma::mat Bfull = ref.G * ref.G.t();         // pinv(Dw'Dw)
  const arma::vec h = arma::sum((Dw * ref.G) % arma::eye(d.X.n_rows, d.X.n_rows), 1);
  const arma::vec e = (d.Y.col(0) - ref.fitted.col(0)) % rw;
  const double n = d.X.n_rows, dfr = n - ref.rank;
  for (CovType t : {CovType::HC0, CovType::HC1, CovType::HC2, CovType::HC3}) {
    arma::vec s2 = arma::square(e);
    if (t == CovType::HC1) s2 *= n / dfr;
    if (t == CovType::HC2) s2 /= 1.0 - h;
    if (t == CovType::HC3) s2 /= arma::square(1.0 - h);
    const arma::mat meat = Dw.t() * (Dw.each_col() % s2);
    const arma::mat V = (Bfull * meat * Bfull).eval().submat(0, 0, 2, 2);
    CovOptions c;
    c.type = t;
    EXPECT_LT(max_rel(m.covariance(c), V), 1e-9) << attnreg::cov_type_name(t);
  }
  // HAC (Bartlett, 3 lags, with and without the small-sample factor n / df) on the full scores.
  for (bool adjust : {false, true}) {
    const int L = 3;
    arma::mat meat(Dw.n_cols, Dw.n_cols, arma::fill::zeros);
    for (arma::uword t = 0; t < Dw.n_rows; ++t) {
      for (arma::uword u = 0; u < Dw.n_rows; ++u) {
        const double lag = std::fabs(double(t) - double(u));
        if (lag > L) continue;
        meat += (1.0 - lag / (L + 1.0)) * e(t) * e(u) * Dw.row(t).t() * Dw.row(u);
      }
    }
    if (adjust) meat *= n / dfr;
    const arma::mat V = (Bfull * meat * Bfull).eval().submat(0, 0, 2, 2);
    CovOptions c;
    c.type = CovType::HAC;
    c.maxlags = L;
    c.hac_adjust = adjust;
    EXPECT_LT(max_rel(m.covariance(c), V), 1e-9) << "HAC adjust=" << adjust;
  }
}

// HC2/HC3 with two and three factors: the leverage of the dummies from a pseudo-inverse per
// connected component, against the dummy-variable OLS (pinv of the full whitened design), with
// weights, disconnected components and singleton levels (h = 1).
TEST(LeastSquaresFE, HC2HC3WithSeveralFactorsMatchDummyOLS) {
  struct Shape {
    arma::uword n;
    std::vector<arma::uword> levels;
    arma::uword singletons;
    bool weighted, disconnected;
    int seed;
  };
  const std::vector<Shape> shapes = {{160, {12, 5}, 0, false, false, 62},
                                     {200, {15, 6}, 3, true, true, 63},
                                     {180, {9, 5, 4}, 2, true, false, 64},
                                     {150, {20, 3, 3}, 0, false, true, 65}};
  for (const auto& sh : shapes) {
    const Panel d = make_panel(sh.n, 3, sh.levels, sh.singletons, sh.weighted, sh.disconnected,
                               sh.seed);
    AbsorbedOLS m;
    m.fit(d.X, d.Y, d.codes, sh.weighted ? d.w : arma::vec());
    const Oracle ref = dummy_ols(d.X, d.Y, d.codes, d.w);
    const arma::vec rw = arma::sqrt(d.w);
    const arma::mat Dw = ref.D.each_col() % rw;
    const arma::mat Bfull = ref.G * ref.G.t();
    const arma::vec h = arma::sum(Dw % ref.G.t(), 1);
    const arma::vec e = (d.Y.col(0) - ref.fitted.col(0)) % rw;
    for (CovType t : {CovType::HC2, CovType::HC3}) {
      arma::vec s2 = arma::square(e);
      for (arma::uword i = 0; i < s2.n_elem; ++i) {
        const double om = 1.0 - h(i);
        s2(i) = om > 1e-10 ? s2(i) / (t == CovType::HC2 ? om : om * om) : 0.0;
      }
      const arma::mat meat = Dw.t() * (Dw.each_col() % s2);
      const arma::mat V = (Bfull * meat * Bfull).eval().submat(0, 0, 2, 2);
      CovOptions c;
      c.type = t;
      EXPECT_LT(max_rel(m.covariance(c), V), 1e-8)
          << attnreg::cov_type_name(t) << " seed " << sh.seed;
    }
  }
  // A connected component above the dense limit: a clear error naming it and HC1.
  arma::arma_rng::set_seed(66);
  const arma::uword nb = 6400;
  arma::umat big_codes(nb, 2);
  for (arma::uword i = 0; i < nb; ++i) {
    big_codes(i, 0) = i % 3100;  // every level present, all linked through factor 2
    big_codes(i, 1) = i % 7;
  }
  const arma::mat bx = arma::randn(nb, 2);
  const arma::mat by = bx * arma::vec{1.0, -1.0} + arma::randn(nb);
  AbsorbedOLS mb;
  mb.fit(bx, by, big_codes);
  CovOptions c3;
  c3.type = CovType::HC3;
  try {
    mb.covariance(c3);
    FAIL() << "a component of more than 3000 levels was accepted";
  } catch (const attnreg::InvalidArgument& err) {
    EXPECT_NE(std::string(err.what()).find("limit 3000"), std::string::npos) << err.what();
    EXPECT_NE(std::string(err.what()).find("HC1"), std::string::npos);
  }
}

TEST(LeastSquaresFE, WithinRSquaredAndOverallRSquared) {
  const Panel d = make_panel(300, 2, {30, 8}, 2, true, false, 71);
  AbsorbedOLS m;
  m.fit(d.X, d.Y, d.codes, d.w);
  const Oracle ref = dummy_ols(d.X, d.Y, d.codes, d.w);
  // Oracle within R^2: residuals of y on the dummies alone, weighted.
  const arma::mat Donly = dummy_design(arma::mat(d.X.n_rows, 0), d.codes);
  const arma::vec rw = arma::sqrt(d.w);
  const arma::vec yw = d.Y.col(0) % rw;
  const arma::mat Dw = Donly.each_col() % rw;
  const arma::vec ytil = yw - Dw * (arma::pinv(Dw) * yw);
  const arma::vec e = (d.Y.col(0) - ref.fitted.col(0)) % rw;
  const double r2w = 1.0 - arma::dot(e, e) / arma::dot(ytil, ytil);
  EXPECT_NEAR(m.r_squared_within()(0), r2w, 1e-11);
  const double ybar = arma::dot(d.w, d.Y.col(0)) / arma::accu(d.w);
  const arma::vec c = (d.Y.col(0) - ybar) % rw;
  EXPECT_NEAR(m.r_squared()(0), 1.0 - arma::dot(e, e) / arma::dot(c, c), 1e-11);
}

TEST(LeastSquaresFE, ClusteredDFDropsNestedFactors) {
  const Panel d = make_panel(200, 2, {20, 6}, 0, false, false, 81);
  const Factors f = Factors::from_codes(d.codes);
  const attnreg::AbsorbedDF df = attnreg::absorbed_df(f);
  // Clusters = factor 1 coarsened: factor 1 is nested, factor 2 (6 levels spread) is not.
  arma::umat cl(d.codes.n_rows, 1);
  cl.col(0) = d.codes.col(0) / 4;
  // fixest (K.fixef = "nonnested") keeps one parameter per nested factor.
  EXPECT_DOUBLE_EQ(attnreg::absorbed_df_clustered(f, df, cl),
                   double(df.df_absorbed()) - double(f.n_levels[0]) + 1.0);
  // Clusters unrelated to either factor: nothing nested.
  arma::umat cl2(d.codes.n_rows, 1);
  for (arma::uword i = 0; i < cl2.n_rows; ++i) cl2(i, 0) = i % 3;
  EXPECT_DOUBLE_EQ(attnreg::absorbed_df_clustered(f, df, cl2), double(df.df_absorbed()));
}

TEST(LeastSquaresFE, ResultsDoNotDependOnThreadsOrAcceleration) {
  const Panel d = make_panel(400, 4, {50, 20, 5}, 5, true, false, 91);
  AbsorbOptions o1, o2, o3;
  o1.n_threads = 1;
  o2.n_threads = 2;
  o3.accelerate = false;
  o3.max_iter = 100000;
  AbsorbedOLS a(o1), b(o2), c(o3);
  a.fit(d.X, d.Y, d.codes, d.w);
  b.fit(d.X, d.Y, d.codes, d.w);
  c.fit(d.X, d.Y, d.codes, d.w);
  EXPECT_TRUE(arma::approx_equal(a.coefficients(), b.coefficients(), "absdiff", 0.0));
  EXPECT_LT(max_rel(a.coefficients(), c.coefficients()), 1e-9);
  EXPECT_LE(a.iterations(), c.iterations());
}

TEST(LeastSquaresFE, BadInputNamesTheArgument) {
  const Panel d = make_panel(50, 2, {5, 3}, 0, false, false, 101);
  AbsorbedOLS m;
  arma::vec w = arma::ones(50);
  w(3) = 0.0;
  EXPECT_THROW(m.fit(d.X, d.Y, d.codes, w), attnreg::InvalidArgument);
  w(3) = std::nan("");
  EXPECT_THROW(m.fit(d.X, d.Y, d.codes, w), attnreg::InvalidArgument);
  EXPECT_THROW(m.fit(d.X, d.Y, d.codes, arma::ones(49)), attnreg::InvalidArgument);
  arma::umat gap = d.codes;
  gap.col(1).replace(1, 7);  // level codes 1..6 missing
  try {
    m.fit(d.X, d.Y, gap);
    FAIL() << "expected InvalidArgument";
  } catch (const attnreg::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("absorb: factor 2"), std::string::npos) << e.what();
  }
  m.fit(d.X, d.Y, d.codes);
  arma::umat unseen = d.codes.rows(0, 1);
  unseen(1, 0) = 99;
  try {
    m.predict(d.X.rows(0, 1), unseen);
    FAIL() << "expected InvalidArgument";
  } catch (const attnreg::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("not seen in fit"), std::string::npos) << e.what();
  }
  AbsorbOptions bad;
  bad.tol = 0.0;
  EXPECT_THROW(AbsorbedOLS(bad).fit(d.X, d.Y, d.codes), attnreg::InvalidArgument);
}

TEST(LeastSquaresFE, IterationCapIsReported) {
  const Panel d = make_panel(300, 2, {40, 30}, 0, false, false, 111);
  AbsorbOptions o;
  o.max_iter = 1;
  o.accelerate = false;
  AbsorbedOLS m(o);
  m.fit(d.X, d.Y, d.codes);
  EXPECT_FALSE(m.converged());
  EXPECT_EQ(m.iterations(), 1);
}

// Frequency weights: HC0-HC3 equal the unweighted absorbed fit of the data with row i repeated
// w_i times (each copy has leverage h_i / w_i), one and two factors.
TEST(LeastSquaresFE, FrequencyWeightedHCEqualsRepeatedRows) {
  for (arma::uword nf : {1u, 2u}) {
    const Panel d = make_panel(90, 2, nf == 1 ? std::vector<arma::uword>{8}
                                              : std::vector<arma::uword>{8, 4},
                               0, false, false, 81);
    arma::vec fw(90);
    std::vector<arma::uword> rep;
    for (arma::uword i = 0; i < 90; ++i) {
      fw(i) = 1.0 + static_cast<double>(i % 3);
      for (arma::uword c = 0; c < fw(i); ++c) rep.push_back(i);
    }
    const arma::uvec idx = arma::conv_to<arma::uvec>::from(rep);
    attnreg::AbsorbOptions o;
    o.frequency_weights = true;
    o.tol = 1e-13;
    AbsorbedOLS a(o);
    a.fit(d.X, d.Y, d.codes, fw);
    attnreg::AbsorbOptions ou;
    ou.tol = 1e-13;
    AbsorbedOLS b(ou);
    b.fit(d.X.rows(idx), d.Y.rows(idx), d.codes.rows(idx));
    for (CovType t : {CovType::HC0, CovType::HC1, CovType::HC2, CovType::HC3}) {
      CovOptions c;
      c.type = t;
      EXPECT_LT(max_rel(a.covariance(c), b.covariance(c)), 1e-8)
          << attnreg::cov_type_name(t) << " factors " << nf;
      EXPECT_LT(max_rel(a.std_errors(c), b.std_errors(c)), 1e-8) << attnreg::cov_type_name(t);
    }
  }
}

namespace {

// CR2 of the dummy-variable (W)LS written out: V = B (sum_g Dw_g' A_g e_g e_g' A_g Dw_g) B with
// B = pinv(Dw'Dw), H = Dw B Dw' and A_g the pseudo-inverse square root of I - H_gg (eigenvalues
// of 0, the fixed effects' own directions inside a cluster, are left out).
arma::mat dummy_cr2(const Panel& d, const arma::uvec& cl) {
  const Oracle ref = dummy_ols(d.X, d.Y, d.codes, d.w);
  const arma::vec rw = arma::sqrt(d.w);
  const arma::mat Dw = ref.D.each_col() % rw;
  const arma::mat B = ref.G * ref.G.t();
  const arma::mat H = Dw * ref.G;
  const arma::vec e = (d.Y.col(0) - ref.fitted.col(0)) % rw;
  arma::mat meat(Dw.n_cols, Dw.n_cols, arma::fill::zeros);
  for (arma::uword g = 0; g <= cl.max(); ++g) {
    const arma::uvec idx = arma::find(cl == g);
    if (idx.is_empty()) continue;
    const arma::mat I_H = arma::eye(idx.n_elem, idx.n_elem) - H.submat(idx, idx);
    arma::vec lam;
    arma::mat U;
    arma::eig_sym(lam, U, arma::mat(0.5 * (I_H + I_H.t())));
    arma::vec c(lam.n_elem, arma::fill::zeros);
    for (arma::uword k = 0; k < lam.n_elem; ++k) c(k) = lam(k) > 1e-10 ? 1.0 / std::sqrt(lam(k)) : 0.0;
    const arma::vec u = Dw.rows(idx).t() * ((U.each_row() % c.t()) * U.t() * e(idx));
    meat += u * u.t();
  }
  const arma::uword p = d.X.n_cols;
  return (B * meat * B).eval().submat(0, 0, p - 1, p - 1);
}

}  // namespace

// CR2 with absorbed fixed effects that are nested in the clusters (each level within one
// cluster): the within fit's CR2 equals the dummy-variable fit's (Pustejovsky and Tipton 2018,
// Theorem 2), checked against the dummy design's CR2 written out; one and two factors,
// weighted, with singleton levels (leverage 1).
TEST(LeastSquaresFE, CR2WithNestedFactorsMatchesDummyOLS) {
  for (bool weighted : {false, true}) {
    for (int two : {0, 1}) {
      Panel d = make_panel(180, 3, {24}, 3, weighted, false, 91 + 2 * two + weighted);
      if (two) {  // a second factor nested in the first (pairs of its levels)
        d.codes = arma::join_rows(d.codes, arma::umat(d.codes.col(0) / 2));
      }
      arma::umat cl(d.codes.n_rows, 1);
      cl.col(0) = d.codes.col(0) / 4;
      AbsorbedOLS m;
      m.fit(d.X, d.Y, d.codes, weighted ? d.w : arma::vec());
      CovOptions c;
      c.type = CovType::CR2;
      c.clusters = cl;
      const arma::mat V = dummy_cr2(d, cl.col(0));
      const std::string label = "weighted=" + std::to_string(weighted) + " two=" + std::to_string(two);
      EXPECT_LT(max_rel(m.covariance(c), V), 1e-9) << label;
      const arma::mat se = m.std_errors(c);
      EXPECT_LT(max_rel(se.col(0), arma::sqrt(V.diag())), 1e-9) << label;
      const attnreg::Inference inf = m.inference(c);
      EXPECT_DOUBLE_EQ(inf.df_inference, double(cl.max() + 1) - 1.0) << label;
    }
  }
}

TEST(LeastSquaresFE, CR2RefusesFactorsNotNestedInClusters) {
  const Panel d = make_panel(200, 2, {20, 6}, 0, false, false, 95);
  AbsorbedOLS m;
  m.fit(d.X, d.Y, d.codes);
  CovOptions c;
  c.type = CovType::CR2;
  c.clusters.set_size(d.codes.n_rows, 1);
  c.clusters.col(0) = d.codes.col(0) / 4;  // factor 1 nested, factor 2 spread over clusters
  try {
    m.std_errors(c);
    FAIL() << "CR2 with a factor not nested in the clusters was accepted";
  } catch (const attnreg::InvalidArgument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("factor 2 is not"), std::string::npos) << msg;
    EXPECT_NE(msg.find("CR1"), std::string::npos) << msg;
    EXPECT_NE(msg.find("dummy columns"), std::string::npos) << msg;
  }
  EXPECT_THROW(m.covariance(c), attnreg::InvalidArgument);
}
