// The local polynomial estimator of degree p (local_polynomial.hpp): fits, derivatives and
// attention weights against a direct weighted least-squares oracle per query point (float64,
// data units), and its bandwidth criteria against brute-force leave-one-out refits.
#include <gtest/gtest.h>

#include <armadillo>
#include <cmath>
#include <limits>
#include <string>

#include "attnreg/bandwidth/bandwidth_select.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/solve/local_fit.hpp"
#include "attnreg/solve/local_polynomial.hpp"

using namespace attnreg;

namespace {

// Kernel shape (the normalising constant cancels in every local fit).
double shape(const std::string& k, double u) {
  if (k == "gaussian") return std::exp(-0.5 * u * u);
  return std::fabs(u) <= 1.0 ? 1.0 - u * u : 0.0;  // epanechnikov
}

// Design row of a degree-p fit at x0 (data units, continuous columns only): 1, d_a, then
// degree 2 (d > 1): d_a d_b (a <= b); degree p (d == 1): d^2..d^p.
arma::rowvec design_row(const arma::rowvec& xi, const arma::rowvec& x0, int p) {
  const arma::rowvec dlt = xi - x0;
  const arma::uword d = dlt.n_elem;
  std::vector<double> r{1.0};
  if (p >= 1)
    for (arma::uword a = 0; a < d; ++a) r.push_back(dlt(a));
  if (p >= 2 && d > 1) {
    for (arma::uword a = 0; a < d; ++a)
      for (arma::uword b = a; b < d; ++b) r.push_back(dlt(a) * dlt(b));
  } else {
    for (int e = 2; e <= p; ++e) r.push_back(std::pow(dlt(0), e));
  }
  return arma::rowvec(r);
}

// Local coefficients (data units) at x0 by weighted least squares via QR of sqrt(w) D.
arma::vec oracle_coef(const arma::mat& X, const arma::vec& y, const arma::vec& h, int p,
                      const std::string& kernel, const arma::rowvec& x0, arma::uword skip = -1) {
  std::vector<arma::rowvec> rows;
  std::vector<double> ys;
  for (arma::uword i = 0; i < X.n_rows; ++i) {
    if (i == skip) continue;
    double w = 1.0;
    for (arma::uword j = 0; j < X.n_cols; ++j) w *= shape(kernel, (X(i, j) - x0(j)) / h(j));
    if (w == 0.0) continue;
    rows.push_back(std::sqrt(w) * design_row(X.row(i), x0, p));
    ys.push_back(std::sqrt(w) * y(i));
  }
  arma::mat D(rows.size(), rows[0].n_elem);
  for (std::size_t i = 0; i < rows.size(); ++i) D.row(i) = rows[i];
  arma::mat Q, R;
  arma::qr_econ(Q, R, D);
  return arma::solve(arma::trimatu(R), Q.t() * arma::vec(ys));
}

LocalPolynomial fit_lp(const arma::mat& X, const arma::vec& y, const arma::vec& h, int p,
                       const std::string& kernel = "gaussian") {
  LocalFitOptions o;
  o.degree = p;
  o.kernel.kernel = Kernel::from_name(kernel);
  LocalPolynomial m(o);
  m.fit(X, arma::mat(y), h);
  return m;
}

double max_rel(const arma::mat& a, const arma::mat& b) {
  return arma::abs(a - b).max() / std::max(1.0, arma::abs(b).max());
}

}  // namespace

TEST(LocalPolynomialDegreeP, MultivariateQuadraticMatchesOracle) {
  for (unsigned seed : {1u, 2u, 3u}) {
    for (arma::uword d : {2u, 3u}) {
      arma::arma_rng::set_seed(seed);
      const arma::uword n = 60 + 20 * seed;
      arma::mat X = arma::randu(n, d);
      arma::vec y = arma::sin(3 * X.col(0)) + X.col(d - 1) % X.col(0) + 0.1 * arma::randn(n);
      arma::vec h = 0.3 + 0.1 * arma::randu(d);
      for (const std::string kernel : {"gaussian", "epanechnikov"}) {
        if (kernel == "epanechnikov") h *= 2.0;
        const LocalPolynomial m = fit_lp(X, y, h, 2, kernel);
        const arma::mat Xq = 0.1 + 0.8 * arma::randu(7, d);
        const arma::vec pred = m.predict(Xq).col(0);
        const arma::cube g1 = local_polynomial_derivative(m, Xq, 1);
        const arma::cube g2 = local_polynomial_derivative(m, Xq, 2);
        const arma::mat W = m.attention_weights(Xq);
        for (arma::uword r = 0; r < Xq.n_rows; ++r) {
          const arma::vec c = oracle_coef(X, y, h, 2, kernel, Xq.row(r));
          EXPECT_NEAR(pred(r), c(0), 1e-9 * std::max(1.0, std::fabs(c(0)))) << seed << " " << d;
          for (arma::uword a = 0; a < d; ++a) EXPECT_NEAR(g1(r, a, 0), c(1 + a), 1e-7);
          arma::uword t = 1 + d;
          const arma::cube H = local_polynomial_hessian(m, Xq.rows(r, r));
          for (arma::uword a = 0; a < d; ++a)
            for (arma::uword b = a; b < d; ++b, ++t) {
              const double want = a == b ? 2 * c(t) : c(t);
              EXPECT_NEAR(H(0, a, b), want, 1e-6 * std::max(1.0, std::fabs(want)));
              EXPECT_NEAR(H(0, b, a), want, 1e-6 * std::max(1.0, std::fabs(want)));
              if (a == b) {
                EXPECT_NEAR(g2(r, a, 0), want, 1e-6 * std::max(1.0, std::fabs(want)));
              }
            }
        }
        EXPECT_LT(arma::abs(arma::sum(W, 1) - 1.0).max(), 1e-10);
        EXPECT_LT(max_rel(W * y, pred), 1e-10);
      }
    }
  }
}

TEST(LocalPolynomialDegreeP, OneDimensionalDerivativesOfEveryOrder) {
  for (unsigned seed : {4u, 5u}) {
    arma::arma_rng::set_seed(seed);
    const arma::uword n = 150;
    arma::mat X = arma::sort(arma::randu(n, 1) * 4.0);
    // Ties: round a third of the points to a grid.
    for (arma::uword i = 0; i < n; i += 3) X(i, 0) = std::round(X(i, 0) * 4) / 4;
    const arma::vec y = arma::exp(-X.col(0)) % arma::cos(2 * X.col(0)) + 0.05 * arma::randn(n);
    for (int p : {2, 3}) {
      for (double h : {0.35, 0.8}) {
        const LocalPolynomial m = fit_lp(X, y, arma::vec{h}, p);
        const arma::mat Xq = arma::linspace(0.2, 3.8, 9);
        for (int s = 0; s <= p; ++s) {
          const arma::cube D = local_polynomial_derivative(m, Xq, s);
          for (arma::uword r = 0; r < Xq.n_rows; ++r) {
            const arma::vec c = oracle_coef(X, y, arma::vec{h}, p, "gaussian", Xq.row(r));
            const double want = std::tgamma(s + 1.0) * c(s);
            EXPECT_NEAR(D(r, 0, 0), want, 1e-7 * std::max(1.0, std::fabs(want)))
                << "p=" << p << " s=" << s << " h=" << h;
          }
        }
      }
    }
  }
}

TEST(LocalPolynomialDegreeP, DegreeZeroAndOneSelectExactlyAsNadarayaWatsonAndLocalLinear) {
  arma::arma_rng::set_seed(7);
  const arma::mat X = arma::randu(80, 2);
  const arma::vec y = X.col(0) + arma::square(X.col(1)) + 0.1 * arma::randn(80);
  for (int p : {0, 1}) {
    for (BandwidthMethod meth : {BandwidthMethod::cv_ls, BandwidthMethod::aic}) {
      BandwidthSelectOptions o;
      o.degree = p;
      o.method = meth;
      const BandwidthSelectResult a = select_local_polynomial_bandwidth(X, y, o);
      const BandwidthSelectResult b = select_bandwidth(X, y, o);
      EXPECT_EQ(arma::abs(a.bandwidth - b.bandwidth).max(), 0.0);
      EXPECT_EQ(a.objective, b.objective);
      // The degree-p criterion equals the selector's objective for degrees 0 and 1.
      const BandwidthObjective obj(X, y, o);
      EXPECT_NEAR(local_polynomial_criterion(X, y, a.bandwidth, o), obj(a.bandwidth), 1e-10);
    }
  }
}

TEST(LocalPolynomialDegreeP, CriteriaEqualBruteForceRefits) {
  for (unsigned seed : {8u, 9u}) {
    arma::arma_rng::set_seed(seed);
    const arma::uword n = 40;
    arma::mat X = arma::randu(n, 1);
    X(5, 0) = X(6, 0);  // a tie
    const arma::vec y = arma::sin(5 * X.col(0)) + 0.1 * arma::randn(n);
    for (int p : {2, 3}) {
      const arma::vec h{0.2};
      BandwidthSelectOptions o;
      o.degree = p;
      o.method = BandwidthMethod::cv_ls;
      double cv = 0, rss = 0, tr = 0;
      for (arma::uword i = 0; i < n; ++i) {
        const arma::vec c = oracle_coef(X, y, h, p, "gaussian", X.row(i), i);
        cv += std::pow(y(i) - c(0), 2);
        const arma::vec cf = oracle_coef(X, y, h, p, "gaussian", X.row(i));
        rss += std::pow(y(i) - cf(0), 2);
      }
      const LocalPolynomial m = fit_lp(X, y, h, p);
      tr = m.effective_df();
      EXPECT_NEAR(local_polynomial_criterion(X, y, h, o), cv / n, 1e-9);
      o.method = BandwidthMethod::aic;
      const double aic = std::log(rss / n) + (1 + tr / n) / (1 - (tr + 2) / n);
      EXPECT_NEAR(local_polynomial_criterion(X, y, h, o), aic, 1e-9);
      o.method = BandwidthMethod::gcv;
      EXPECT_NEAR(local_polynomial_criterion(X, y, h, o), n * rss / ((n - tr) * (n - tr)), 1e-9);
    }
  }
}

TEST(LocalPolynomialDegreeP, SelectionFindsTheGridMinimum) {
  arma::arma_rng::set_seed(11);
  const arma::uword n = 120;
  const arma::mat X = arma::randu(n, 1) * 2;
  const arma::vec y = arma::sin(4 * X.col(0)) + 0.2 * arma::randn(n);
  for (int p : {2, 3}) {
    BandwidthSelectOptions o;
    o.degree = p;
    const BandwidthSelectResult r = select_local_polynomial_bandwidth(X, y, o);
    EXPECT_NEAR(r.objective, local_polynomial_criterion(X, y, r.bandwidth, o), 1e-12);
    double best = std::numeric_limits<double>::infinity();
    for (double h : arma::vec(arma::logspace(std::log10(0.05), std::log10(2.0), 400))) {
      best = std::min(best, local_polynomial_criterion(X, y, arma::vec{h}, o));
    }
    EXPECT_LE(r.objective, best + 1e-9) << "degree " << p;
    EXPECT_EQ(r.at_bound[0], 0);
  }
  // Two columns, degree 2: a local minimum, no worse than the normal-reference start.
  const arma::mat X2 = arma::randu(n, 2);
  const arma::vec y2 = X2.col(0) % X2.col(1) + arma::square(X2.col(0)) + 0.1 * arma::randn(n);
  BandwidthSelectOptions o;
  o.degree = 2;
  const BandwidthSelectResult r2 = select_local_polynomial_bandwidth(X2, y2, o);
  const double at = local_polynomial_criterion(X2, y2, r2.bandwidth, o);
  EXPECT_NEAR(r2.objective, at, 1e-12);
  for (double f : {0.9, 1.1})
    for (arma::uword j = 0; j < 2; ++j) {
      arma::vec b = r2.bandwidth;
      b(j) = std::min(std::max(b(j) * f, r2.lower(j)), r2.upper(j));
      EXPECT_GE(local_polynomial_criterion(X2, y2, b, o), at * (1 - 1e-9))
          << j << " " << f << " " << r2.bandwidth.t() << r2.message;
    }
}

TEST(LocalPolynomialDegreeP, ExtremeBandwidths) {
  arma::arma_rng::set_seed(12);
  const arma::uword n = 50;
  const arma::mat X = arma::randu(n, 2);
  const arma::vec y = 1 + X.col(0) - 2 * X.col(1) + X.col(0) % X.col(1) + 0.1 * arma::randn(n);
  // Huge h: the global quadratic least-squares fit.
  const LocalPolynomial m = fit_lp(X, y, arma::vec{1e6, 1e6}, 2);
  arma::mat D(n, 6);
  for (arma::uword i = 0; i < n; ++i) D.row(i) = design_row(X.row(i), arma::rowvec{0.0, 0.0}, 2);
  const arma::vec b = arma::solve(D, y);
  const arma::mat Xq = arma::randu(5, 2);
  arma::mat Dq(5, 6);
  for (arma::uword i = 0; i < 5; ++i) Dq.row(i) = design_row(Xq.row(i), arma::rowvec{0.0, 0.0}, 2);
  EXPECT_LT(max_rel(m.predict(Xq), Dq * b), 1e-6);
  // Tiny h with a compact kernel: no weight -> a clear error naming the row.
  try {
    LocalFitOptions o;
    o.degree = 2;
    o.kernel.kernel = Kernel(KernelType::epanechnikov);
    LocalPolynomial z(o);
    z.fit(X, arma::mat(y), arma::vec{1e-3, 1e-3});
    FAIL() << "expected NumericalError";
  } catch (const NumericalError& e) {
    EXPECT_NE(std::string(e.what()).find("row"), std::string::npos) << e.what();
  }
  // Near-singular local design: degree 3 with only 3 distinct x values near the query.
  arma::mat X1 = arma::repmat(arma::vec{0.0, 1.0, 2.0}, 5, 1);
  const arma::vec y1 = arma::randn(X1.n_rows);
  LocalFitOptions o3;
  o3.degree = 3;
  LocalPolynomial m3(o3);
  EXPECT_THROW(m3.fit(X1, arma::mat(y1), arma::vec{0.5}), NumericalError);
}

TEST(LocalPolynomialDegreeP, BadInputNamesTheArgument) {
  arma::arma_rng::set_seed(13);
  const arma::mat X = arma::randu(30, 2);
  const arma::vec y = arma::randn(30);
  LocalFitOptions o;
  o.degree = 3;
  LocalPolynomial m(o);
  try {
    m.fit(X, arma::mat(y), arma::vec{0.3, 0.3});
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("degree:", 0), 0u) << e.what();
  }
  o.degree = 4;
  LocalPolynomial m4(o);
  EXPECT_THROW(m4.fit(X, arma::mat(y), arma::vec{0.3, 0.3}), InvalidArgument);
  const LocalPolynomial m2 = fit_lp(X, y, arma::vec{0.3, 0.3}, 2);
  try {
    local_polynomial_derivative(m2, X.rows(0, 1), 3);
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("order:", 0), 0u) << e.what();
  }
  BandwidthSelectOptions so;
  so.degree = 2;
  so.method = BandwidthMethod::rot;
  EXPECT_THROW(select_local_polynomial_bandwidth(X, y, so), InvalidArgument);
  const LocalPolynomial m1 = fit_lp(X, y, arma::vec{0.3, 0.3}, 1);
  EXPECT_THROW(local_polynomial_hessian(m1, X.rows(0, 1)), InvalidArgument);
}

// Bandwidth selection for degree 2 and 3 is scale-free in y (the search's stopping rule is
// relative to the decrease achieved, optimize.hpp; |y| beyond 2^+-200 is searched at order
// one). At y * 2^-30 the degree-2 search used to stop at a worse cross-validation score.
TEST(LocalPolynomialSelect, ScaleFreeInYAndEquivariantInX) {
  arma::arma_rng::set_seed(7);
  const arma::uword n = 90;
  const arma::mat X = arma::randu(n, 2);
  const arma::vec y = arma::sin(4.0 * X.col(0)) + arma::cos(3.0 * X.col(1)) + 0.25 * arma::randn(n);
  for (const int degree : {2, 3}) {
    const arma::mat Xd = degree == 3 ? arma::mat(X.col(0)) : X;
    attnreg::BandwidthSelectOptions o;
    o.degree = degree;
    const auto base = attnreg::select_local_polynomial_bandwidth(Xd, y, o);
    for (const double c : {0.5, 3.7, std::ldexp(1.0, -30), 1e-150, 1e150}) {
      const auto r = attnreg::select_local_polynomial_bandwidth(Xd, y * c, o);
      EXPECT_LT(arma::abs(r.bandwidth / base.bandwidth - 1.0).max(), 1e-6) << degree << " " << c;
      EXPECT_NEAR(r.objective / (c * c) / base.objective, 1.0, 1e-9) << degree << " " << c;
      const auto rx = attnreg::select_local_polynomial_bandwidth(Xd * c, y, o);
      EXPECT_LT(arma::abs(rx.bandwidth / (c * base.bandwidth) - 1.0).max(), 1e-6)
          << degree << " x " << c;
    }
  }
}
