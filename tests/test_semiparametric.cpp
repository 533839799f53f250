// Partially linear (Robinson 1988) and smooth-coefficient models (semiparametric.hpp) against
// direct float64 oracles: Nadaraya-Watson / local-linear conditional means and OLS written out
// in a few lines, and weighted least squares per query point for beta(z).
#include <gtest/gtest.h>

#include <armadillo>
#include <cmath>
#include <limits>
#include <string>

#include "attnreg/bandwidth/bandwidth_select.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/semiparametric/semiparametric.hpp"

using namespace attnreg;

namespace {

double gauss(double u) { return std::exp(-0.5 * u * u); }

// Product Gaussian weights of the rows of Z at z (continuous columns).
arma::vec weights(const arma::mat& Z, const arma::rowvec& z, const arma::vec& h) {
  arma::vec w(Z.n_rows, arma::fill::ones);
  for (arma::uword i = 0; i < Z.n_rows; ++i)
    for (arma::uword j = 0; j < Z.n_cols; ++j) w(i) *= gauss((Z(i, j) - z(j)) / h(j));
  return w;
}

// Local constant (degree 0) or local linear (degree 1) fit of v on Z at z.
double local_mean(const arma::mat& Z, const arma::vec& v, const arma::rowvec& z,
                  const arma::vec& h, int degree) {
  const arma::vec w = weights(Z, z, h);
  if (degree == 0) return arma::dot(w, v) / arma::accu(w);
  arma::mat D = arma::join_rows(arma::ones(Z.n_rows), Z.each_row() - z);
  const arma::mat sw = arma::diagmat(arma::sqrt(w));
  return arma::vec(arma::solve(sw * D, sw * v))(0);
}

struct Data {
  arma::mat X, Z;
  arma::vec y;
};

Data make(unsigned seed, arma::uword n, arma::uword k, arma::uword dz) {
  arma::arma_rng::set_seed(seed);
  Data d;
  d.Z = arma::randu(n, dz);
  d.X = arma::randn(n, k);
  d.X.col(0) += arma::sin(3 * d.Z.col(0));  // X depends on Z
  d.y = d.X * arma::linspace(1.0, -1.0, k) + arma::cos(4 * d.Z.col(0)) +
        0.2 * arma::randn(n) % (1 + d.Z.col(0));
  if (k > 1) d.X.col(k - 1) = arma::round(d.X.col(k - 1));  // ties in one linear column
  return d;
}

}  // namespace

TEST(PartiallyLinear, MatchesRobinsonOracleWithGivenBandwidths) {
  for (unsigned seed : {1u, 2u, 3u}) {
    for (int degree : {0, 1}) {
      const arma::uword n = 80 + 10 * seed, k = seed == 3 ? 1 : 2, dz = seed == 2 ? 2 : 1;
      const Data D = make(seed, n, k, dz);
      arma::mat bw(1 + k, dz);
      for (arma::uword r = 0; r <= k; ++r) bw.row(r) = 0.1 + 0.05 * arma::randu<arma::rowvec>(dz);
      PartiallyLinearOptions o;
      o.degree = degree;
      PartiallyLinear m(o);
      m.fit(D.X, D.y, D.Z, bw);
      // Oracle: double residuals, OLS without intercept.
      arma::vec ey(n);
      arma::mat ex(n, k);
      for (arma::uword i = 0; i < n; ++i) {
        ey(i) = D.y(i) - local_mean(D.Z, D.y, D.Z.row(i), bw.row(0).t(), degree);
        for (arma::uword j = 0; j < k; ++j)
          ex(i, j) = D.X(i, j) - local_mean(D.Z, D.X.col(j), D.Z.row(i), bw.row(1 + j).t(), degree);
      }
      const arma::vec beta = arma::solve(ex, ey);
      EXPECT_LT(arma::abs(m.coefficients() - beta).max(), 1e-9) << seed << " " << degree;
      const arma::vec e = ey - ex * beta;
      const arma::mat XtXi = arma::inv_sympd(ex.t() * ex);
      const double s2 = arma::dot(e, e) / static_cast<double>(n - k - dz);  // npplreg's
      const arma::vec se_np = arma::sqrt(s2 * XtXi.diag());
      EXPECT_LT(arma::abs(m.std_errors(CovType::Classical) - se_np).max(), 1e-9);
      const arma::mat meat = ex.t() * arma::diagmat(arma::square(e)) * ex;
      const arma::vec se_hc0 = arma::sqrt(arma::mat(XtXi * meat * XtXi).diag());
      EXPECT_LT(arma::abs(m.std_errors(CovType::HC0) - se_hc0).max(), 1e-9);
      const arma::vec hii = arma::sum((ex * XtXi) % ex, 1);
      const arma::mat meat3 = ex.t() * arma::diagmat(arma::square(e / (1 - hii))) * ex;
      const arma::vec se_hc3 = arma::sqrt(arma::mat(XtXi * meat3 * XtXi).diag());
      EXPECT_LT(arma::abs(m.std_errors(CovType::HC3) - se_hc3).max(), 1e-9);
      EXPECT_LT(arma::abs(m.fitted() - (D.y - e)).max(), 1e-9);
      // R^2 as R np's npplreg reports it (its RSQfunc): the squared correlation of y and the
      // fit, both centred at the mean of y.
      const arma::vec f = D.y - e, dy = D.y - arma::mean(D.y), df = f - arma::mean(D.y);
      const double rsq = std::pow(arma::dot(dy, df), 2) / (arma::dot(dy, dy) * arma::dot(df, df));
      EXPECT_NEAR(m.r_squared(), rsq, 1e-9 * rsq) << seed << " " << degree;
      // Predictions at new rows: m_y(z) + (x - m_X(z))' beta.
      const arma::mat Zn = 0.1 + 0.8 * arma::randu(6, dz), Xn = arma::randn(6, k);
      const arma::vec pred = m.predict(Xn, Zn);
      const arma::vec gz = m.g(Zn);
      for (arma::uword r = 0; r < 6; ++r) {
        double want = local_mean(D.Z, D.y, Zn.row(r), bw.row(0).t(), degree);
        double gw = want;
        for (arma::uword j = 0; j < k; ++j) {
          const double mx = local_mean(D.Z, D.X.col(j), Zn.row(r), bw.row(1 + j).t(), degree);
          want += (Xn(r, j) - mx) * beta(j);
          gw -= mx * beta(j);
        }
        EXPECT_NEAR(pred(r), want, 1e-9);
        EXPECT_NEAR(gz(r), gw, 1e-9);
      }
    }
  }
}

TEST(PartiallyLinear, SelectsEachConditionalMeanByCrossValidation) {
  const Data D = make(4, 90, 2, 1);
  PartiallyLinear m;
  m.fit(D.X, D.y, D.Z);
  BandwidthSelectOptions so;
  so.degree = 0;
  for (arma::uword r = 0; r < 3; ++r) {
    const arma::vec v = r == 0 ? D.y : arma::vec(D.X.col(r - 1));
    const BandwidthSelectResult s = select_bandwidth(D.Z, v, so);
    EXPECT_EQ(m.bandwidth()(r, 0), s.bandwidth(0));
    EXPECT_EQ(m.objective()(r), s.objective);
  }
  // The fit with those bandwidths given by hand is the same fit.
  PartiallyLinear g;
  g.fit(D.X, D.y, D.Z, m.bandwidth());
  EXPECT_LT(arma::abs(g.coefficients() - m.coefficients()).max(), 1e-14);
}

TEST(PartiallyLinear, BadInputNamesTheArgument) {
  const Data D = make(5, 60, 2, 1);
  PartiallyLinear m;
  arma::mat X = D.X;
  X.col(1) = D.Z.col(0);
  try {
    m.fit(X, D.y, D.Z, arma::mat(3, 1, arma::fill::value(0.2)));
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("Z:", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find("not both"), std::string::npos);
  }
  X = D.X;
  {
    // A column of X that is a function of Z: on well-separated Z at a tiny h its residual
    // X_j - E[X_j|Z] is exactly 0.
    const arma::mat Zs = arma::linspace(0, 1, 60);
    arma::mat Xs = D.X;
    Xs.col(1) = arma::square(Zs.col(0));
    try {
      m.fit(Xs, D.y, Zs, arma::mat(arma::vec{0.2, 0.2, 1e-4}));
      FAIL();
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("function of Z"), std::string::npos) << e.what();
    }
  }
  X.col(1).fill(3.0);
  EXPECT_THROW(m.fit(X, D.y, D.Z, arma::mat(3, 1, arma::fill::value(0.2))), InvalidArgument);
  EXPECT_THROW(m.fit(D.X, D.y, D.Z, arma::mat(2, 1, arma::fill::value(0.2))), InvalidArgument);
  EXPECT_THROW(m.predict(D.X, D.Z), InvalidArgument);  // not fitted
}

TEST(SmoothCoefficient, MatchesWeightedLeastSquaresOracle) {
  for (unsigned seed : {6u, 7u, 8u}) {
    for (bool intercept : {true, false}) {
      const arma::uword n = 70 + 15 * seed, p = seed == 7 ? 1 : 2, dz = seed == 8 ? 2 : 1;
      arma::arma_rng::set_seed(seed);
      arma::mat Z = arma::randu(n, dz);
      if (seed != 7) Z = arma::round(Z * 12) / 12;  // ties in Z: the grouped path
      arma::mat X = arma::randn(n, p);
      X.col(p - 1) = arma::round(X.col(p - 1) + 0.5);  // ties / a dummy-like column
      const arma::vec y = 1 + X.col(0) % arma::sin(3 * Z.col(0)) + 0.1 * arma::randn(n);
      const arma::vec h = 0.2 + 0.1 * arma::randu(dz);
      SmoothCoefficientOptions o;
      o.fit_intercept = intercept;
      SmoothCoefficient m(o);
      m.fit(X, y, Z, h);
      const arma::mat W = intercept ? arma::mat(arma::join_rows(arma::ones(n), X)) : X;
      auto beta_at = [&](const arma::rowvec& z, arma::uword skip) {
        arma::vec w = weights(Z, z, h);
        if (skip < n) w(skip) = 0;
        const arma::mat sw = arma::diagmat(arma::sqrt(w));
        return arma::vec(arma::solve(sw * W, sw * y));
      };
      const arma::mat Zn = 0.1 + 0.8 * arma::randu(5, dz);
      const arma::mat B = m.coefficients(Zn);
      for (arma::uword r = 0; r < 5; ++r) {
        const arma::vec b = beta_at(Zn.row(r), n);
        EXPECT_LT(arma::abs(B.row(r).t() - b).max(), 1e-8 * std::max(1.0, arma::abs(b).max()));
      }
      double cv = 0;
      for (arma::uword i = 0; i < n; ++i) {
        const double f = arma::dot(W.row(i), beta_at(Z.row(i), n));
        const double l = arma::dot(W.row(i), beta_at(Z.row(i), i));
        EXPECT_NEAR(m.fitted()(i), f, 1e-8);
        EXPECT_NEAR(m.loo_fitted()(i), l, 1e-8);
        cv += (y(i) - l) * (y(i) - l);
      }
      EXPECT_NEAR(m.cv_score(), cv / n, 1e-9);
      EXPECT_NEAR(smooth_coefficient_cv(X, y, Z, h, o), cv / n, 1e-9);
      const arma::mat Xn = arma::randn(5, p);
      const arma::vec pred = m.predict(Xn, Zn);
      for (arma::uword r = 0; r < 5; ++r) {
        const arma::rowvec wr = intercept ? arma::rowvec(arma::join_rows(arma::rowvec{1.0}, Xn.row(r)))
                                          : arma::rowvec(Xn.row(r));
        EXPECT_NEAR(pred(r), arma::dot(wr, beta_at(Zn.row(r), n)), 1e-8);
      }
    }
  }
}

TEST(SmoothCoefficient, SelectionFindsTheCrossValidationMinimum) {
  arma::arma_rng::set_seed(9);
  const arma::uword n = 120;
  const arma::mat Z = arma::randu(n, 1);
  const arma::mat X = arma::randn(n, 1);
  const arma::vec y = 0.5 + X.col(0) % (1 + 2 * arma::square(Z.col(0))) + 0.2 * arma::randn(n);
  SmoothCoefficientOptions o;
  const BandwidthSelectResult r = select_smooth_coefficient_bandwidth(X, y, Z, o);
  EXPECT_NEAR(r.objective, smooth_coefficient_cv(X, y, Z, r.bandwidth, o), 1e-12);
  double best = std::numeric_limits<double>::infinity();
  for (double h : arma::vec(arma::logspace(-1.5, 0.5, 300)))
    best = std::min(best, smooth_coefficient_cv(X, y, Z, arma::vec{h}, o));
  EXPECT_LE(r.objective, best + 1e-9);
}

TEST(SmoothCoefficient, SingularLocalDesignIsAClearError) {
  arma::arma_rng::set_seed(10);
  const arma::uword n = 40;
  const arma::mat Z = arma::linspace(0, 1, n);
  arma::mat X(n, 1);
  X.col(0) = arma::conv_to<arma::vec>::from(Z.col(0) > 0.5);  // constant on each half
  const arma::vec y = arma::randn(n);
  SmoothCoefficientOptions o;
  o.kernel.kernel = Kernel(KernelType::epanechnikov);
  SmoothCoefficient m(o);
  try {
    m.fit(X, y, Z, arma::vec{0.1});
    FAIL();
  } catch (const NumericalError& e) {
    EXPECT_NE(std::string(e.what()).find("singular"), std::string::npos) << e.what();
  }
  EXPECT_THROW(m.fit(X, y, Z.rows(0, n - 2), arma::vec{0.1}), InvalidArgument);
}
