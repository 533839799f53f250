// Tests for rbc_marginal_effects.hpp: the bias-corrected derivative is exact on polynomials of
// the pilot's degree (the pilot recovers every coefficient and the fit's bias is exactly the
// terms of degree p+1..q), the conventional estimate equals the fit's own gradient, and
// bad-input messages. nprobust and a numpy oracle:
// python-package/tests/test_rbc_marginal_effects.py.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <string>

#include "attnreg/base/error.hpp"
#include "attnreg/inference/rbc_marginal_effects.hpp"

using namespace attnreg;

namespace {

LocalPolynomial fit_poly(const arma::mat& X, const arma::vec& y, const arma::vec& h, int degree,
                         const std::string& types = "") {
  LocalFitOptions o;
  o.degree = degree;
  o.kernel.kernel = Kernel(KernelType::epanechnikov);
  o.kernel.var_types = types;
  LocalPolynomial m(o);
  m.fit(X, arma::mat(y), h);
  return m;
}

template <class F>
void expect_throw_with(F f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "expected an exception mentioning '" << needle << "'";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

}  // namespace

// A cubic with every cross term in two continuous columns, ties, a shifted origin and a
// categorical column entering through its kernel: a local linear slope is biased (second and
// third derivatives), the bias-corrected slope with its default pilot local cubic is exact.
// Tolerance 1e-8 on slopes of size 1-10: ~1e7 unit roundoffs, the bound for a weighted pilot
// design (thin QR in bandwidth units) with condition number up to ~1e7.
TEST(RbcGradient, ExactOnCubicsWithCrossTermsAndACategoricalColumn) {
  arma::arma_rng::set_seed(7);
  const arma::uword n = 400;
  arma::mat X(n, 3);
  X.col(0) = arma::round(arma::randu<arma::vec>(n) * 40) / 40;  // ties
  X.col(1) = 10 + arma::randu<arma::vec>(n);                    // shifted origin
  X.col(2) = arma::floor(arma::randu<arma::vec>(n) * 3);
  auto f = [](double a, double b) {
    const double c = b - 10.5;
    return 1 + a - 2 * c + a * a + a * c - c * c + 0.5 * a * a * a - a * a * c + 2 * a * c * c +
           c * c * c;
  };
  auto fa = [](double a, double b) {
    const double c = b - 10.5;
    return 1 + 2 * a + c + 1.5 * a * a - 2 * a * c + 2 * c * c;
  };
  auto fb = [](double a, double b) {
    const double c = b - 10.5;
    return -2 + a - 2 * c - a * a + 4 * a * c + 3 * c * c;
  };
  arma::vec y(n);
  for (arma::uword i = 0; i < n; ++i) y(i) = f(X(i, 0), X(i, 1));
  const LocalPolynomial m = fit_poly(X, y, arma::vec{0.5, 0.6, 0.3}, 1, "ccu");
  const arma::mat E = {{0.5, 10.5, 1}, {0.05, 10.9, 0}, {0.9, 10.2, 2}};
  const RbcGradientResult r = rbc_gradient(m, E);
  ASSERT_EQ(r.pilot_degree, 3);
  ASSERT_EQ(r.columns.size(), 2u);
  double max_bias = 0;
  for (arma::uword j = 0; j < E.n_rows; ++j) {
    EXPECT_NEAR(r.estimate_bc(j, 0), fa(E(j, 0), E(j, 1)), 1e-8);
    EXPECT_NEAR(r.estimate_bc(j, 1), fb(E(j, 0), E(j, 1)), 1e-8);
    max_bias = std::max(max_bias, std::abs(r.estimate(j, 0) - fa(E(j, 0), E(j, 1))));
  }
  EXPECT_GT(max_bias, 1e-3);  // the conventional slope is biased here
  // the conventional estimate is the fit's own gradient
  const arma::cube G = m.gradient(E);
  for (arma::uword j = 0; j < E.n_rows; ++j) {
    EXPECT_NEAR(r.estimate(j, 0), G(j, 0, 0), 1e-9);
    EXPECT_NEAR(r.estimate(j, 1), G(j, 1, 0), 1e-9);
  }
}

// One column, local quadratic, second derivative (p - v = 0 even: pilot degree 4) on a quartic.
TEST(RbcGradient, ExactSecondDerivativeOfAQuartic) {
  const arma::vec x = arma::linspace(0, 1, 201);
  const arma::vec y = 1 + x - 2 * arma::square(x) + 3 * arma::pow(x, 3) - arma::pow(x, 4);
  const LocalPolynomial m = fit_poly(x, y, arma::vec{0.3}, 2);
  RbcGradientOptions o;
  o.order = 2;
  const arma::vec e = {0.0, 0.4, 0.97};
  const RbcGradientResult r = rbc_gradient(m, e, o);
  EXPECT_EQ(r.pilot_degree, 4);
  for (arma::uword j = 0; j < e.n_elem; ++j)
    EXPECT_NEAR(r.estimate_bc(j, 0), -4 + 18 * e(j) - 12 * e(j) * e(j), 1e-7);
}

TEST(RbcGradient, BadInput) {
  const arma::vec x = arma::linspace(0, 1, 50);
  const arma::vec y = arma::sin(3 * x);
  const LocalPolynomial m = fit_poly(x, y, arma::vec{0.3}, 1);
  const arma::mat e(1, 1, arma::fill::value(0.5));
  RbcGradientOptions o;
  o.order = 2;
  expect_throw_with([&] { rbc_gradient(m, e, o); }, "order: the derivative order must be");
  o = {};
  o.level = 95;
  expect_throw_with([&] { rbc_gradient(m, e, o); }, "level is a fraction: 0.95");
  o = {};
  o.kind = VarianceKind::cr1;
  expect_throw_with([&] { rbc_gradient(m, e, o); }, "cov_type: 'cr1' is not available");
  o = {};
  o.pilot_degree = 1;
  expect_throw_with([&] { rbc_gradient(m, e, o); }, "pilot_degree: must exceed the degree 1");
  o = {};
  o.pilot_bandwidths = arma::vec{0.05};
  const arma::mat edge(1, 1, arma::fill::value(1.0));
  expect_throw_with([&] { rbc_gradient(m, edge, o); }, "evaluation row 1");
  const LocalPolynomial nw = fit_poly(x, y, arma::vec{0.3}, 0);
  expect_throw_with([&] { rbc_gradient(nw, e); }, "degree: RBC intervals");
  const arma::vec x3 = arma::repmat(arma::vec{0.0, 0.5, 1.0}, 10, 1);
  const LocalPolynomial m3 = fit_poly(x3, arma::vec(x3 + 1), arma::vec{1.0}, 1);
  expect_throw_with([&] { rbc_gradient(m3, e); }, "column 1 has 3 distinct value(s)");
}

// The Gaussian's window (weights below truncation x the point's largest dropped, the core's rule)
// against every row (truncation = 0, the path before the window): the dropped weights change the
// pilot's weighted normal equations by at most n x truncation relative, so the results move by
// at most ~kappa (n truncation + eps), kappa the largest condition number of the pilot's weighted
// Gram matrix in bandwidth units over the points (computed here); tolerance 100 kappa (n
// truncation + eps).
TEST(RbcGradient, GaussianWindowEqualsAllRowsWithinTheBound) {
  arma::arma_rng::set_seed(11);
  const arma::uword n = 600;
  arma::mat X = arma::randu<arma::mat>(n, 2);
  X.col(0) = arma::round(X.col(0) * 50) / 50;  // ties
  const arma::vec y = arma::sin(3 * X.col(0)) + arma::square(X.col(1)) +
                      0.3 * arma::randn<arma::vec>(n);
  const arma::vec h = {0.06, 0.08};
  LocalFitOptions o;
  o.degree = 1;
  o.kernel.kernel = Kernel(KernelType::gaussian);
  LocalPolynomial win(o);
  win.fit(X, arma::mat(y), h);
  ASSERT_GT(win.options().kernel.truncation, 0.0);
  o.kernel.truncation = 0;
  LocalPolynomial all(o);
  all.fit(X, arma::mat(y), h);
  const arma::mat E = X.rows(0, 39);
  RbcGradientOptions ro;
  ro.kind = VarianceKind::hc3;
  const RbcGradientResult a = rbc_gradient(win, E, ro), b = rbc_gradient(all, E, ro);
  const RbcGradientResult av = rbc_average_gradient(win, E, ro),
                          bv = rbc_average_gradient(all, E, ro);
  double kappa = 1;
  for (arma::uword j = 0; j < E.n_rows; ++j) {  // pilot local cubic, all monomials, at the point
    arma::mat Z(n, 10);
    arma::vec w(n);
    for (arma::uword i = 0; i < n; ++i) {
      const double u = (X(i, 0) - E(j, 0)) / h(0), v = (X(i, 1) - E(j, 1)) / h(1);
      w(i) = std::exp(-0.5 * (u * u + v * v));
      const double r[10] = {1, u, v, u * u, u * v, v * v, u * u * u, u * u * v, u * v * v,
                            v * v * v};
      for (int k = 0; k < 10; ++k) Z(i, k) = r[k];
    }
    kappa = std::max(kappa, arma::cond(Z.t() * (Z.each_col() % w)));
  }
  const double eps = std::numeric_limits<double>::epsilon();
  const double tol = 100 * kappa * (n * win.options().kernel.truncation + eps);
  ASSERT_LT(tol, 1e-6);  // the comparison stays meaningful
  for (const auto& [p, q] : {std::pair{&a, &b}, std::pair{&av, &bv}}) {
    for (const auto& [M, N] : {std::pair{&p->estimate, &q->estimate},
                               std::pair{&p->estimate_bc, &q->estimate_bc},
                               std::pair{&p->se, &q->se}, std::pair{&p->se_bc, &q->se_bc}}) {
      const double scale = std::max(1.0, arma::abs(*N).max());
      EXPECT_LE(arma::abs(*M - *N).max(), tol * scale);
    }
  }
}
