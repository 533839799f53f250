// OLS inference: HC0-HC3 and HAC (Newey-West) against the direct sandwich formulas (explicit
// inverse of D'D, fine for these small well-conditioned designs; oracle only), t statistics,
// p-values (Student t tail against scipy.stats.t.sf values) and R^2.
#include <gtest/gtest.h>

#include "attnreg/base/arma.hpp"
#include <cmath>

#include "attnreg/base/error.hpp"
#include "attnreg/least_squares/least_squares.hpp"

using attnreg::CovOptions;
using attnreg::CovType;
using attnreg::OLS;
using attnreg::OLSOptions;

namespace {

arma::mat oracle_sandwich(const arma::mat& D, const arma::vec& e, CovType type, int L, bool adjust) {
  const double n = D.n_rows, q = D.n_cols;
  const arma::mat B = arma::inv(D.t() * D);
  if (type == CovType::Classical) return B * (arma::dot(e, e) / (n - q));
  const arma::vec h = arma::diagvec(D * B * D.t());
  arma::mat meat(D.n_cols, D.n_cols, arma::fill::zeros);
  if (type == CovType::HAC) {
    for (arma::uword t = 0; t < D.n_rows; ++t) {
      for (arma::uword s = 0; s < D.n_rows; ++s) {
        const double lag = std::fabs(double(t) - double(s));
        if (lag > L) continue;
        const double w = 1.0 - lag / (L + 1.0);
        meat += w * e(t) * e(s) * D.row(t).t() * D.row(s);
      }
    }
    if (adjust) meat *= n / (n - q);
  } else {
    for (arma::uword i = 0; i < D.n_rows; ++i) {
      double w = e(i) * e(i);
      if (type == CovType::HC1) w *= n / (n - q);
      if (type == CovType::HC2) w /= 1.0 - h(i);
      if (type == CovType::HC3) w /= (1.0 - h(i)) * (1.0 - h(i));
      meat += w * D.row(i).t() * D.row(i);
    }
  }
  return B * meat * B;
}

}  // namespace

class SandwichTest : public ::testing::TestWithParam<std::tuple<int, bool>> {};

TEST_P(SandwichTest, MatchesDirectFormula) {
  const auto [type_i, intercept] = GetParam();
  const CovType type = static_cast<CovType>(type_i);
  arma::arma_rng::set_seed(100 + type_i);
  const arma::uword n = 80;
  arma::mat X = arma::randn(n, 3);
  X.col(1) = arma::abs(X.col(1)) * 5.0;
  arma::vec y = X * arma::vec{1.0, -0.5, 2.0} + arma::randn(n) % (1.0 + X.col(1));
  for (arma::uword i = 1; i < n; ++i) y(i) += 0.5 * y(i - 1) * 0.1;  // some serial correlation
  OLSOptions o;
  o.fit_intercept = intercept;
  OLS fit(o);
  fit.fit(X, y);
  const arma::mat D = intercept ? arma::join_horiz(arma::ones(n), X) : X;
  for (int L : {0, 1, 4}) {
    for (bool adjust : {false, true}) {
      if (type != CovType::HAC && (L != 0 || adjust)) continue;
      CovOptions c;
      c.type = type;
      c.maxlags = L;
      c.hac_adjust = adjust;
      const arma::mat V = fit.covariance(c);
      const arma::mat Vo = oracle_sandwich(D, fit.residuals().col(0), type, L, adjust);
      EXPECT_LT(arma::abs(V - Vo).max(), 1e-11 * arma::abs(Vo).max())
          << attnreg::cov_type_name(type) << " L=" << L;
      const arma::vec se = fit.std_errors(c).col(0);
      EXPECT_LT(arma::abs(se / arma::sqrt(Vo.diag()) - 1.0).max(), 1e-11);
      const attnreg::Inference inf = fit.inference(c);
      EXPECT_LT(arma::abs(inf.t_value.col(0) - fit.coefficients().col(0) / se).max(), 1e-9);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, SandwichTest,
                         ::testing::Combine(::testing::Values(0, 1, 2, 3, 4, 5),
                                            ::testing::Bool()));

TEST(Inference, ClassicalTableAndRSquared) {
  arma::arma_rng::set_seed(4);
  arma::mat X = arma::randn(50, 2);
  arma::mat Y = arma::randn(50, 2);
  Y.col(0) += X * arma::vec{2.0, -1.0};
  OLS fit;
  fit.fit(X, Y);
  const attnreg::Inference inf = fit.inference();
  EXPECT_DOUBLE_EQ(inf.df_residual, 47.0);
  for (arma::uword c = 0; c < 2; ++c) {
    const arma::vec e = fit.residuals().col(c), y = Y.col(c);
    const double r2 = 1.0 - arma::dot(e, e) / arma::accu(arma::square(y - arma::mean(y)));
    EXPECT_NEAR(inf.r_squared(c), r2, 1e-13);
    EXPECT_NEAR(inf.adj_r_squared(c), 1.0 - (1.0 - r2) * 49.0 / 47.0, 1e-13);
    EXPECT_NEAR(inf.sigma(c), std::sqrt(arma::dot(e, e) / 47.0), 1e-13);
    for (arma::uword j = 0; j < 3; ++j) {
      const double t = inf.t_value(j, c);
      EXPECT_NEAR(inf.p_value(j, c), 2.0 * attnreg::student_t_sf(std::fabs(t), 47.0), 1e-15);
    }
  }
  OLSOptions o;
  o.fit_intercept = false;
  OLS f0(o);
  f0.fit(X, Y.col(0));
  const arma::vec e0 = f0.residuals().col(0);
  EXPECT_NEAR(f0.inference().r_squared(0), 1.0 - arma::dot(e0, e0) / arma::dot(Y.col(0), Y.col(0)),
              1e-13);  // uncentred without an intercept, as lm
}

TEST(Inference, StudentTailMatchesReferenceValues) {
  // scipy.stats.t.sf(t, df)
  struct Case { double t, df, sf; };
  const Case cases[] = {{2.0, 5, 0.050969739414929174},  {0.5, 1, 0.35241638234956674},
                        {3.7, 30, 0.0004322999266236452}, {10.0, 12, 1.7906618438361868e-07},
                        {-1.3, 7, 0.8826160823038114},    {40.0, 3, 1.7190340394579253e-05},
                        {1.96, 1e6, 0.024998033792634926}, {25.0, 200, 9.269548053746297e-64}};
  // The continued fraction loses digits when df is huge and |t| moderate (x near its
  // convergence boundary): relative error about 4e-11 at df = 1e6, below 1e-12 for df <= 1e4.
  for (const Case& c : cases) {
    EXPECT_NEAR(attnreg::student_t_sf(c.t, c.df) / c.sf, 1.0, c.df > 1e4 ? 1e-10 : 1e-12)
        << c.t << " " << c.df;
  }
  EXPECT_NEAR(attnreg::student_t_sf(1.959963984540054, arma::datum::inf), 0.025, 1e-15);
  EXPECT_TRUE(std::isnan(attnreg::student_t_sf(1.0, 0.0)));
}

TEST(Inference, NamesAndBadOptions) {
  EXPECT_EQ(attnreg::parse_cov_type("hc3"), CovType::HC3);
  EXPECT_EQ(attnreg::parse_cov_type("nonrobust"), CovType::Classical);
  EXPECT_EQ(attnreg::parse_cov_type("HAC"), CovType::HAC);
  EXPECT_THROW(attnreg::parse_cov_type("HC4"), attnreg::InvalidArgument);
  EXPECT_EQ(attnreg::hac_lags(-1, 100), 4);
  EXPECT_EQ(attnreg::hac_lags(-1, 1000), 6);
  EXPECT_THROW(attnreg::hac_lags(-3, 100), attnreg::InvalidArgument);
  OLS fit;
  fit.fit(arma::randn(20, 2), arma::randn(20));
  CovOptions c;
  c.type = CovType::HAC;
  c.maxlags = -2;
  EXPECT_THROW(fit.std_errors(c), attnreg::InvalidArgument);
  EXPECT_THROW(fit.covariance(CovOptions{}, 1), attnreg::InvalidArgument);
}

TEST(Inference, AliasedColumnsAreNaN) {
  arma::arma_rng::set_seed(2);
  arma::mat X = arma::randn(30, 3);
  X.col(2) = X.col(0) + X.col(1);
  OLS fit;
  fit.fit(X, arma::randn(30));
  const auto al = fit.aliased();
  for (int t : {0, 1, 2, 3, 4, 5}) {
    CovOptions c;
    c.type = static_cast<CovType>(t);
    c.maxlags = 2;
    const arma::vec se = fit.std_errors(c).col(0);
    for (arma::uword j = 0; j < 4; ++j) EXPECT_EQ(std::isnan(se(j)), static_cast<bool>(al[j]));
  }
}
