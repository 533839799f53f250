// Nearest-neighbour residual variance (nprobust's vce = "nn") against a direct oracle, and
// kind = "nn" in the pointwise diagnostics.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "attnreg/inference/diagnostics.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/solve/local_fit.hpp"
#include "attnreg/inference/nn_variance.hpp"

using namespace attnreg;

namespace {

// Oracle: J(i) = every other observation within the J-th smallest distance to x_i (whole tie
// groups, both sides when equally far), sigma_i^2 = J_i / (J_i + 1) (y_i - mean y_J(i))^2.
arma::vec oracle(const arma::vec& x, const arma::vec& y, int J) {
  const arma::uword n = x.n_elem;
  arma::vec out(n);
  for (arma::uword i = 0; i < n; ++i) {
    std::vector<double> d;
    for (arma::uword k = 0; k < n; ++k)
      if (k != i) d.push_back(std::fabs(x(k) - x(i)));
    std::sort(d.begin(), d.end());
    const double dJ = d[std::min<std::size_t>(J, n - 1) - 1];
    double s = 0.0, c = 0.0;
    for (arma::uword k = 0; k < n; ++k)
      if (k != i && std::fabs(x(k) - x(i)) <= dJ) {
        s += y(k);
        c += 1.0;
      }
    out(i) = c / (c + 1.0) * std::pow(y(i) - s / c, 2);
  }
  return out;
}

}  // namespace

TEST(NnVariance, MatchesTheDirectOracle) {
  for (int seed : {1, 2, 3})
    for (int J : {1, 3, 5}) {
      arma::arma_rng::set_seed(seed);
      const arma::uword n = 30 + 20 * seed;
      arma::vec x = arma::randu<arma::vec>(n);
      if (seed == 2) x = arma::floor(8.0 * x);  // ties
      if (seed == 3) x = arma::round(20.0 * x) / 4.0;  // ties and equal distances
      const arma::vec y = arma::sin(3.0 * x) + 0.3 * arma::randn<arma::vec>(n);
      const arma::vec v = nn_residual_variance(x, y, J);
      const arma::vec r = oracle(x, y, J);
      EXPECT_LT(arma::abs(v - r).max(), 1e-13 * (1.0 + r.max())) << seed << " " << J;
    }
}

TEST(NnVariance, HandExample) {
  // x = 0..4, J = 3: x = 0 uses {1, 2, 3}; x = 2 uses {1, 3} then {0, 4} (equally far): J = 4.
  const arma::vec x{0, 1, 2, 3, 4}, y{1, 2, 4, 8, 16};
  const arma::vec v = nn_residual_variance(x, y, 3);
  EXPECT_NEAR(v(0), 0.75 * std::pow(1.0 - 14.0 / 3.0, 2), 1e-14);
  EXPECT_NEAR(v(2), 0.8 * std::pow(4.0 - 27.0 / 4.0, 2), 1e-14);
  EXPECT_THROW(nn_residual_variance(arma::vec{1.0}, arma::vec{1.0}), InvalidArgument);
  EXPECT_THROW(nn_residual_variance(x, y, 0), InvalidArgument);
}

TEST(NnVariance, PointwiseDiagnosticsUseIt) {
  arma::arma_rng::set_seed(8);
  const arma::uword n = 80;
  const arma::vec x = arma::randu<arma::vec>(n);
  const arma::vec y = arma::cos(4.0 * x) + (0.1 + 0.3 * x) % arma::randn<arma::vec>(n);
  LocalPolynomial m;
  m.fit(arma::mat(x), arma::mat(y), arma::vec{0.12});
  const arma::mat Xe = arma::vec{0.2, 0.5, 0.8};
  const arma::mat L = m.attention_weights(Xe);
  const arma::vec s2 = oracle(x, y, kNnMatch);
  PointwiseOptions po;
  po.kind = variance_kind_from_name("nn");
  EXPECT_STREQ(variance_kind_name(po.kind), "nn");
  const PointwiseDiagnostics d = pointwise_diagnostics(m, Xe, po);
  for (arma::uword j = 0; j < Xe.n_rows; ++j) {
    const double se = std::sqrt(arma::dot(arma::square(L.row(j).t()), s2));
    EXPECT_NEAR(d.se(j), se, 1e-12 * se);
  }
  // Two regressors: the neighbours in two dimensions (nn_variance.hpp). With the Gaussian
  // kernel every row is in every point's window, so omega is the same for all points.
  LocalPolynomial m2;
  const arma::mat X2 = arma::join_rows(x, arma::randu<arma::vec>(n));
  m2.fit(X2, arma::mat(y), arma::vec{0.2, 0.3});
  const arma::mat Xe2(2, 2, arma::fill::value(0.5));
  const arma::vec s2d = nn_residual_variance(X2, arma::vec{0.2, 0.3}, arma::uvec(), y, kNnMatch);
  const PointwiseDiagnostics d2 = pointwise_diagnostics(m2, Xe2, po);
  const arma::mat L2 = m2.attention_weights(Xe2);
  for (arma::uword j = 0; j < Xe2.n_rows; ++j) {
    const double se = std::sqrt(arma::dot(arma::square(L2.row(j).t()), s2d));
    EXPECT_NEAR(d2.se(j), se, 1e-12 * se);
  }
}
