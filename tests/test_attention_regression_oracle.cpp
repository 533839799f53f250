// The attention regression's objective and gradient (Highway rows, padded arrays, one parallel
// region) against a direct float64 implementation on the explicit n x n matrices, and the
// gradient against central finite differences of the oracle, on random data of several shapes
// (n around the SIMD padding and the row-block size, several outputs and ranks, tied rows,
// saturated softmax rows, n = 2 and 3) and seeds; plus the same numbers for 1 and 2 threads.
#include <gtest/gtest.h>

#include <cmath>

#include "attnreg/base/arma.hpp"
#include "attnreg/least_squares/least_squares_softmax.hpp"

namespace {

// f = 1/(n k) sum_i ||sum_{j != i} A_ij Y_j - Y_i||^2 with A = row softmax of S = D W W' D'
// (diagonal masked); dF/dS = G with G_ij = c A_ij ((Y r_i)_j - yhat_i' r_i), c = 2/(n k), and
// dF/dW = D' (G + G') D W.
double oracle(const arma::mat& D, const arma::mat& Y, const arma::mat& W, arma::mat* grad) {
  const double n = static_cast<double>(D.n_rows), k = static_cast<double>(Y.n_cols);
  arma::mat S = D * W * W.t() * D.t();
  S.diag().fill(-arma::datum::inf);
  S.each_col() -= arma::max(S, 1);
  arma::mat A = arma::exp(S);
  A.each_col() /= arma::sum(A, 1);
  const arma::mat Yhat = A * Y, R = Yhat - Y;
  if (grad) {
    arma::mat YR = R * Y.t();  // (i, j): (Y r_i)_j
    YR.each_col() -= arma::sum(Yhat % R, 1);
    const arma::mat G = (2.0 / (n * k)) * (A % YR);
    *grad = D.t() * (G + G.t()) * D * W;
  }
  return arma::accu(arma::square(R)) / (n * k);
}

struct Case {
  arma::uword n, q, L, k;
  double scale;  // of W: large values saturate the softmax rows
  bool ties;
};

}  // namespace

TEST(AttentionRegressionOracle, ObjectiveAndGradientMatchTheExplicitMatrices) {
  const Case cases[] = {{2, 2, 1, 1, 0.7, false},   {3, 3, 2, 1, 0.7, false},
                        {17, 3, 1, 2, 0.5, false},  {37, 4, 2, 1, 1.0, true},
                        {64, 2, 3, 3, 0.3, false},  {101, 5, 2, 1, 3.0, false},
                        {257, 3, 2, 2, 0.8, true},  {300, 4, 1, 1, 6.0, false},
                        {2050, 3, 2, 1, 0.6, false}};
  for (unsigned seed : {1u, 2u}) {
    for (const Case& c : cases) {
      arma::arma_rng::set_seed(100 * seed + c.n);
      arma::mat D = arma::join_horiz(arma::ones(c.n), arma::randn(c.n, c.q - 1));
      if (c.ties) D.rows(c.n / 2, c.n - 1) = D.rows(0, c.n - c.n / 2 - 1);
      const arma::mat Y = arma::randn(c.n, c.k) + 5.0;
      const arma::mat W = c.scale * arma::randn(c.q, c.L);
      arma::mat G, Go;
      const double f = attnreg::attention_regression_objective(D, Y, W, &G, 2);
      const double fo = oracle(D, Y, W, &Go);
      SCOPED_TRACE("n=" + std::to_string(c.n) + " seed=" + std::to_string(seed));
      EXPECT_NEAR(f, fo, 1e-12 * fo);
      EXPECT_EQ(attnreg::attention_regression_objective(D, Y, W, nullptr, 1), f);
      ASSERT_EQ(G.n_rows, c.q);
      ASSERT_EQ(G.n_cols, c.L);
      const double gs = arma::abs(Go).max();
      EXPECT_LT(arma::abs(G - Go).max(), 1e-10 * gs + 1e-15);
      // One thread: bit-identical.
      arma::mat G1;
      EXPECT_EQ(attnreg::attention_regression_objective(D, Y, W, &G1, 1), f);
      for (arma::uword i = 0; i < G.n_elem; ++i) EXPECT_EQ(G1(i), G(i));
      if (c.n > 300) continue;  // finite differences of the oracle: small n only
      for (arma::uword i = 0; i < W.n_elem; ++i) {
        const double h = 1e-6 * std::max(1.0, std::fabs(W(i)));
        arma::mat Wp = W, Wm = W;
        Wp(i) += h;
        Wm(i) -= h;
        const double fd = (oracle(D, Y, Wp, nullptr) - oracle(D, Y, Wm, nullptr)) / (2 * h);
        EXPECT_NEAR(G(i), fd, 1e-6 * (gs + std::fabs(fd)) + 1e-9);
      }
    }
  }
}
