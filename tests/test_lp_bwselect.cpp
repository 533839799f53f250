// MSE/IMSE-DPI bandwidths of Calonico, Cattaneo and Farrell (lp_bwselect.hpp): nprobust 1.0.0's
// published cps71 values, a direct normal-equations oracle of one piece, Brent's minimiser and
// the argument checks.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "attnreg/inference/diagnostics.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/solve/local_fit.hpp"
#include "attnreg/bandwidth/lp_bwselect.hpp"
#include "attnreg/inference/nn_variance.hpp"
#include "test_util.hpp"

using namespace attnreg;

namespace {

template <class F>
void expect_throw_with(F f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "expected an exception mentioning '" << needle << "'";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

void read_cps71(arma::vec& x, arma::vec& y) {
  const arma::mat D = attnreg_test::read_csv(std::string(ATTNREG_DATA_DIR) + "/cps71.csv");
  y = D.col(0);
  x = D.col(1);
}

}  // namespace

TEST(LpBwSelect, Cps71ReproducesNprobust) {
  arma::vec x, y;
  read_cps71(x, y);
  ASSERT_EQ(x.n_elem, 205u);
  // nprobust 1.0.0, lpbwselect(logwage, age, kernel = "epa", p = 1) at
  // seq(25, 60, length.out = 10)[1:3]: 5.76, 4.10, 5.38; bwselect = "imse-dpi": 8.91.
  const arma::vec ev = arma::linspace(25, 60, 10).head(3);
  const LpBwSelection r = lp_mse_dpi(x, y, ev);
  EXPECT_NEAR(r.h(0), 5.76, 0.005);
  EXPECT_NEAR(r.h(1), 4.10, 0.005);
  EXPECT_NEAR(r.h(2), 5.38, 0.005);
  const LpBwSelection ri = lp_imse_dpi(x, y, arma::vec());
  EXPECT_NEAR(ri.h_imse, 8.91, 0.005);
  EXPECT_EQ(ri.eval.n_elem, 30u);
}

TEST(LpBwSelect, PieceMatchesNormalEquationsOracle) {
  arma::arma_rng::set_seed(3);
  for (arma::uword n : {80u, 250u}) {
    arma::vec x = arma::randu(n) * 4;
    x = arma::round(x * 5) / 5;  // ties
    const arma::vec y = arma::sin(x) + 0.3 * arma::randn(n);
    const double c = 1.3, hV = 1.1, hB1 = 2.5, hB2 = 3.0, scale = 1.0;
    const int o = 1, nu = 0, oB = 2;
    LpBwOptions opt;
    const LpBwPiece P = lp_bw_piece(x, y, c, o, nu, oB, hV, hB1, hB2, scale, opt);
    // Oracle: raw design (x - c)^k, explicit normal equations, weights K/h.
    const auto fit = [&](double h, int deg, arma::uvec& idx, arma::mat& X, arma::mat& XW,
                         arma::mat& Gi, bool div) {
      arma::vec w(n);
      for (arma::uword i = 0; i < n; ++i) {
        const double u = (x(i) - c) / h;
        w(i) = std::abs(u) <= 1 ? 0.75 * (1 - u * u) / (div ? h : 1.0) : 0.0;
      }
      idx = arma::find(w > 0);
      X.set_size(idx.n_elem, deg + 1);
      for (arma::uword i = 0; i < idx.n_elem; ++i)
        for (int k = 0; k <= deg; ++k) X(i, k) = std::pow(x(idx(i)) - c, k);
      XW = X.each_col() % w(idx);
      Gi = arma::inv(X.t() * XW);
    };
    arma::uvec iv, i1, i2;
    arma::mat X, XW, Gi, X1, XW1, G1, X2, XW2, G2;
    fit(hV, o, iv, X, XW, Gi, true);
    const arma::vec r2 = nn_residual_variance(x(iv), y(iv), 3);
    const arma::mat meat = XW.t() * (XW.each_col() % r2);
    const double VV = arma::mat(Gi * meat * Gi)(nu, nu);
    const arma::vec u = (x(iv) - c) / hV;
    const double bc1 = arma::vec(Gi * XW.t() * arma::pow(u, o + 1))(nu);
    const double bc2 = arma::vec(Gi * XW.t() * arma::pow(u, o + 2))(nu);
    fit(hB1, oB, i1, X1, XW1, G1, false);
    const arma::vec beta1 = G1 * XW1.t() * y(i1);
    const arma::vec r21 = nn_residual_variance(x(i1), y(i1), 3);
    const double VB = arma::mat(G1 * (XW1.t() * (XW1.each_col() % r21)) * G1)(o + 1, o + 1);
    fit(hB2, oB + 1, i2, X2, XW2, G2, false);
    const arma::vec beta2 = G2 * XW2.t() * y(i2);
    const double V = n * hV * VV, B1 = bc1 * beta1(o + 1), B2 = bc2 * beta2(o + 2);
    const double R = 3 * bc1 * bc1 * VB;
    const double bw = std::pow(V / (n * 4 * (B1 * B1 + scale * R)), 1.0 / 5);
    EXPECT_NEAR(P.V / V, 1, 1e-9);
    EXPECT_NEAR(P.B1 / B1, 1, 1e-9);
    EXPECT_NEAR(P.B2 / B2, 1, 1e-9);
    EXPECT_NEAR(P.R / R, 1, 1e-9);
    EXPECT_NEAR(P.bw / bw, 1, 1e-9);
  }
}

TEST(LpBwSelect, BrentFindsTheMinimum) {
  const double t = brent_minimize([](double h) { return (h - 0.3) * (h - 0.3) + 1; }, 0.0, 1.0,
                                  1e-12);
  EXPECT_NEAR(t, 0.3, 1e-8);
  const double u = brent_minimize([](double h) { return h * h * h * h + 1.0 / h; }, 1e-9, 5.0,
                                  1e-12);
  EXPECT_NEAR(u, std::pow(0.25, 0.2), 1e-7);  // 4 h^3 = 1 / h^2
}

TEST(LpBwSelect, ErrorsNameTheArgument) {
  arma::arma_rng::set_seed(4);
  const arma::vec x = arma::randu(60), y = x + arma::randn(60);
  LpBwOptions o;
  o.kind = VarianceKind::homoskedastic;
  expect_throw_with([&] { lp_mse_dpi(x, y, arma::vec{0.5}, o); }, "kind:");
  o = LpBwOptions();
  o.bwcheck = 61;
  expect_throw_with([&] { lp_mse_dpi(x, y, arma::vec{0.5}, o); }, "bwcheck:");
  o = LpBwOptions();
  o.kernel = Kernel(KernelType::cosine);
  expect_throw_with([&] { lp_imse_dpi(x, y, arma::vec(), o); }, "kernel:");
  o = LpBwOptions();
  o.deriv = 2;
  expect_throw_with([&] { lp_imse_dpi(x, y, arma::vec(), o); }, "deriv:");
  expect_throw_with([&] { lp_mse_dpi(x, y, arma::vec(), LpBwOptions()); },
                                  "eval_points:");
  expect_throw_with(
      [&] { lp_mse_dpi(x, arma::vec(y.head(59)), arma::vec{0.5}, LpBwOptions()); }, "y:");
}

TEST(LpBwSelect, DiagnoseNnUsesTheWindowsNeighbours) {
  // As nprobust's lprobust: each point's nearest-neighbour residuals come from the
  // observations of its window (non-zero weight in the fit or its bias correction).
  arma::arma_rng::set_seed(12);
  const arma::uword n = 120;
  const arma::vec x = arma::randu<arma::vec>(n);
  const arma::vec y = arma::sin(6 * x) + (0.1 + 0.4 * x) % arma::randn<arma::vec>(n);
  LocalFitOptions fo;
  fo.kernel.kernel = Kernel(KernelType::epanechnikov);
  LocalPolynomial m(fo);
  m.fit(arma::mat(x), arma::mat(y), arma::vec{0.1});
  const arma::mat Xe = arma::vec{0.05, 0.5, 0.93};
  PointwiseOptions po;
  po.kind = VarianceKind::nn;
  const PointwiseDiagnostics d = pointwise_diagnostics(m, Xe, po);
  const arma::mat L = m.attention_weights(Xe);
  const arma::mat B = bias_weights(m, Xe, -1, 0);
  bool differs = false;
  for (arma::uword j = 0; j < Xe.n_rows; ++j) {
    const arma::uvec idx = arma::find(arma::abs(L.row(j)) + arma::abs(B.row(j)) > 0);
    const arma::vec om = nn_residual_variance(x(idx), y(idx), 3);
    const arma::rowvec l = L.row(j), lb = L.row(j) - B.row(j);
    const double se = std::sqrt(arma::dot(arma::square(l(idx)), om));
    const double se_bc = std::sqrt(arma::dot(arma::square(lb(idx)), om));
    EXPECT_NEAR(d.se(j) / se, 1, 1e-12);
    EXPECT_NEAR(d.se_bc(j) / se_bc, 1, 1e-12);
    const double se_full = std::sqrt(arma::dot(arma::square(l.t()), nn_residual_variance(x, y, 3)));
    differs = differs || std::abs(se_full / se - 1) > 1e-6;
  }
  EXPECT_TRUE(differs);
}
