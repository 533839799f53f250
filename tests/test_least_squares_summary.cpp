// Regression-summary statistics (least_squares_summary.hpp) against direct long-double oracles:
// d(x)' V d(x) summed term by term, the regression F from R^2 (classical covariance) and from a
// Gaussian-elimination solve of V_ss z = b_s (robust covariance), and the Gaussian
// log-likelihood written out from its definition.
#include <gtest/gtest.h>

#include "attnreg/base/arma.hpp"
#include <cmath>
#include <limits>
#include <vector>

#include "attnreg/base/error.hpp"
#include "attnreg/least_squares/least_squares.hpp"
#include "attnreg/least_squares/least_squares_summary.hpp"

using attnreg::CovOptions;
using attnreg::CovType;
using attnreg::OLS;
using attnreg::OLSOptions;

namespace {

// Solve A z = b (small, well-conditioned) in long double by partial-pivot elimination.
std::vector<long double> solve_ld(const arma::mat& A, const arma::vec& b) {
  const std::size_t m = b.n_elem;
  std::vector<std::vector<long double>> M(m, std::vector<long double>(m + 1));
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < m; ++j) M[i][j] = A(i, j);
    M[i][m] = b(i);
  }
  for (std::size_t c = 0; c < m; ++c) {
    std::size_t p = c;
    for (std::size_t r = c + 1; r < m; ++r)
      if (std::fabs((double)M[r][c]) > std::fabs((double)M[p][c])) p = r;
    std::swap(M[c], M[p]);
    for (std::size_t r = c + 1; r < m; ++r) {
      const long double f = M[r][c] / M[c][c];
      for (std::size_t j = c; j <= m; ++j) M[r][j] -= f * M[c][j];
    }
  }
  std::vector<long double> z(m);
  for (std::size_t c = m; c-- > 0;) {
    long double s = M[c][m];
    for (std::size_t j = c + 1; j < m; ++j) s -= M[c][j] * z[j];
    z[c] = s / M[c][c];
  }
  return z;
}

struct Data {
  arma::mat X;
  arma::vec y;
};

Data make_data(arma::uword n, arma::uword p, unsigned seed) {
  arma::arma_rng::set_seed(seed);
  Data d;
  d.X = arma::randn(n, p);
  d.X.col(0) = 100.0 + 10.0 * d.X.col(0);  // a column far from zero
  d.y = 1.0 + d.X * arma::linspace(0.5, -0.5, p) + arma::randn(n) % (1.0 + arma::abs(d.X.col(p - 1)));
  return d;
}

}  // namespace

TEST(LeastSquaresSummary, PredictionVarianceMatchesTermByTermSum) {
  for (unsigned seed : {1u, 2u, 3u}) {
    for (arma::uword p : {1u, 3u, 6u}) {
      for (bool intercept : {true, false}) {
        const Data d = make_data(40 + 7 * p, p, seed);
        OLSOptions o;
        o.fit_intercept = intercept;
        OLS m(o);
        m.fit(d.X, d.y);
        const arma::mat Xn = arma::randn(9, p) * 3.0;
        for (CovType t : {CovType::Classical, CovType::HC3}) {
          CovOptions c;
          c.type = t;
          const arma::mat V = m.covariance(c);
          const arma::vec got = attnreg::ols_prediction_variance(m, Xn, V);
          ASSERT_EQ(got.n_elem, Xn.n_rows);
          for (arma::uword i = 0; i < Xn.n_rows; ++i) {
            std::vector<double> row;
            if (intercept) row.push_back(1.0);
            for (arma::uword j = 0; j < p; ++j) row.push_back(Xn(i, j));
            long double s = 0;
            for (std::size_t a = 0; a < row.size(); ++a)
              for (std::size_t b = 0; b < row.size(); ++b) s += (long double)row[a] * V(a, b) * row[b];
            EXPECT_NEAR(got(i), (double)s, 1e-11 * std::fabs((double)s)) << seed << " " << p;
          }
        }
      }
    }
  }
}

TEST(LeastSquaresSummary, PredictionVarianceLeavesAliasedColumnsOut) {
  Data d = make_data(30, 3, 7);
  arma::mat X = arma::join_rows(d.X, 2.0 * d.X.col(1));  // column 4 aliased
  OLS m;
  m.fit(X, d.y);
  ASSERT_EQ(m.rank(), 4u);
  const arma::mat V = m.covariance(CovOptions{});
  ASSERT_TRUE(std::isnan(V(4, 4)));
  const arma::mat Xn = arma::randn(5, 4);
  const arma::vec got = attnreg::ols_prediction_variance(m, Xn, V);
  for (arma::uword i = 0; i < 5; ++i) {
    const arma::vec dk = {1.0, Xn(i, 0), Xn(i, 1), Xn(i, 2)};
    const double want = arma::as_scalar(dk.t() * V.submat(0, 0, 3, 3) * dk);
    EXPECT_NEAR(got(i), want, 1e-12 * want);
  }
}

TEST(LeastSquaresSummary, WaldFEqualsRSquaredFormUnderClassicalCovariance) {
  for (unsigned seed : {11u, 12u}) {
    for (arma::uword p : {1u, 4u}) {
      for (bool intercept : {true, false}) {
        const Data d = make_data(25 + 5 * p, p, seed);
        OLSOptions o;
        o.fit_intercept = intercept;
        OLS m(o);
        m.fit(d.X, d.y);
        const attnreg::SlopesWaldTest w = attnreg::ols_slopes_wald(m, m.covariance(CovOptions{}));
        const double n = d.X.n_rows, r = m.rank();
        EXPECT_EQ(w.df_num, static_cast<double>(p));
        long double rss = 0, tss = 0, mean = 0;
        if (intercept) mean = (long double)arma::mean(d.y);
        const arma::vec e = m.residuals().col(0);
        for (arma::uword i = 0; i < d.y.n_elem; ++i) {
          rss += (long double)e(i) * e(i);
          tss += (d.y(i) - mean) * (d.y(i) - mean);
        }
        const long double F = ((tss - rss) / p) / (rss / (n - r));
        EXPECT_NEAR(w.statistic, (double)F, 1e-10 * (double)F) << seed << " " << p;
      }
    }
  }
}

TEST(LeastSquaresSummary, WaldFUnderRobustCovarianceMatchesDirectSolve) {
  const Data d = make_data(60, 4, 21);
  OLS m;
  m.fit(d.X, d.y);
  CovOptions c;
  c.type = CovType::HC1;
  const arma::mat V = m.covariance(c);
  const attnreg::SlopesWaldTest w = attnreg::ols_slopes_wald(m, V);
  const arma::vec b = m.coefficients().col(0).subvec(1, 4);
  const std::vector<long double> z = solve_ld(V.submat(1, 1, 4, 4), b);
  long double q = 0;
  for (arma::uword j = 0; j < 4; ++j) q += b(j) * z[j];
  EXPECT_NEAR(w.statistic, (double)(q / 4), 1e-10 * (double)(q / 4));
}

TEST(LeastSquaresSummary, WaldFStatisticOfAnyCoefficients) {
  arma::arma_rng::set_seed(4);
  for (arma::uword m : {1u, 3u, 7u}) {
    const arma::mat A = arma::randn(m + 4, m);
    const arma::mat V = A.t() * A * 1e-6;  // positive definite, small units
    const arma::vec b = arma::randn(m) * 1e-3;
    const std::vector<long double> z = solve_ld(V, b);
    long double q = 0;
    for (arma::uword j = 0; j < m; ++j) q += b(j) * z[j];
    const double want = static_cast<double>(q / m);
    EXPECT_NEAR(attnreg::wald_f_statistic(b, V), want, 1e-11 * want);
  }
  EXPECT_TRUE(std::isnan(attnreg::wald_f_statistic(arma::vec(), arma::mat())));
  EXPECT_THROW(attnreg::wald_f_statistic(arma::vec(2, arma::fill::ones), arma::eye(3, 3)),
               attnreg::InvalidArgument);
}

TEST(LeastSquaresSummary, WaldFIsNaNForSingularCovarianceAndInterceptOnly) {
  const Data d = make_data(30, 3, 5);
  OLS m;
  m.fit(d.X, d.y);
  const arma::vec v = {1.0, 2.0, -1.0, 0.5};
  const arma::mat V = v * v.t();  // rank 1: no Wald test of 3 slopes
  EXPECT_TRUE(std::isnan(attnreg::ols_slopes_wald(m, V).statistic));
  OLS m0;
  m0.fit(arma::mat(30, 0), d.y);
  const attnreg::SlopesWaldTest w0 = attnreg::ols_slopes_wald(m0, m0.covariance(CovOptions{}));
  EXPECT_TRUE(std::isnan(w0.statistic));
  EXPECT_EQ(w0.df_num, 0.0);
}

TEST(LeastSquaresSummary, GaussianLoglikFromDefinition) {
  arma::arma_rng::set_seed(3);
  for (arma::uword n : {1u, 5u, 200u}) {
    const arma::vec e = arma::randn(n);
    const arma::vec w = 0.1 + arma::randu(n) * 3.0;
    long double rss = 0, rssw = 0, slw = 0;
    for (arma::uword i = 0; i < n; ++i) {
      rss += (long double)e(i) * e(i);
      rssw += (long double)w(i) * e(i) * e(i);
      slw += std::log((long double)w(i));
    }
    const long double two_pi = 2.0L * 3.14159265358979323846264338327950288L;
    const double ll = (double)(-0.5L * n * (std::log(two_pi * rss / n) + 1.0L));
    const double llw = (double)(-0.5L * n * (std::log(two_pi * rssw / n) + 1.0L) + 0.5L * slw);
    EXPECT_NEAR(attnreg::gaussian_loglik(e), ll, 1e-12 * std::fabs(ll) + 1e-13);
    EXPECT_NEAR(attnreg::gaussian_loglik(e, w), llw, 1e-12 * std::fabs(llw) + 1e-13);
    // Residuals of 1e-200 (their squares underflow in double): log L shifts by n log(1e200).
    const double shifted = attnreg::gaussian_loglik(e * 1e-200);
    EXPECT_NEAR(shifted, ll + n * 200.0 * std::log(10.0), 1e-11 * std::fabs(shifted));
  }
  // Frequency weights: the log-likelihood of the data with row i repeated w_i times.
  const arma::vec e = {0.3, -1.2, 0.8, 2.0, -0.4};
  const arma::vec f = {1.0, 3.0, 2.0, 1.0, 4.0};
  std::vector<double> rep;
  for (arma::uword i = 0; i < e.n_elem; ++i)
    for (int k = 0; k < static_cast<int>(f(i)); ++k) rep.push_back(e(i));
  EXPECT_NEAR(attnreg::gaussian_loglik(e, f, true), attnreg::gaussian_loglik(arma::vec(rep)), 1e-12);
  EXPECT_EQ(attnreg::gaussian_loglik(arma::vec(4, arma::fill::zeros)),
            std::numeric_limits<double>::infinity());
}

TEST(LeastSquaresSummary, BadInputNamesTheArgument) {
  const Data d = make_data(20, 2, 9);
  OLS unfitted;
  EXPECT_THROW(attnreg::ols_prediction_variance(unfitted, d.X, arma::eye(3, 3)),
               attnreg::InvalidArgument);
  OLS m;
  m.fit(d.X, d.y);
  const arma::mat V = m.covariance(CovOptions{});
  try {
    attnreg::ols_prediction_variance(m, d.X, arma::eye(2, 2));
    FAIL();
  } catch (const attnreg::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("V: must be the 3 x 3"), std::string::npos);
  }
  try {
    attnreg::ols_prediction_variance(m, arma::mat(3, 5, arma::fill::ones), V);
    FAIL();
  } catch (const attnreg::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("X: has 5 columns"), std::string::npos);
  }
  EXPECT_THROW(attnreg::ols_slopes_wald(m, V, 1), attnreg::InvalidArgument);
  EXPECT_THROW(attnreg::row_quadratic_forms(arma::mat(2, 3), arma::eye(2, 2)), attnreg::InvalidArgument);
  const arma::vec e = {1.0, 2.0};
  EXPECT_THROW(attnreg::gaussian_loglik(e, arma::vec{1.0, 0.0}), attnreg::InvalidArgument);
  EXPECT_THROW(attnreg::gaussian_loglik(e, arma::vec{1.0}), attnreg::InvalidArgument);
  EXPECT_THROW(attnreg::gaussian_loglik(arma::vec()), attnreg::InvalidArgument);
}
