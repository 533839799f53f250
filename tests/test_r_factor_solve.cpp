// Tests for r_factor_solve.hpp: OLS and ridge coefficients from the R factor of [D, Y] against
// the normal equations solved directly (float64 oracle, well-conditioned data of several shapes
// and seeds), the unpenalised first coefficient, and bad input.
#include <gtest/gtest.h>

#include <string>

#include "attnreg/base/error.hpp"
#include "attnreg/least_squares/r_factor_solve.hpp"

using namespace attnreg;

namespace {

// R factor of [D, Y] by a plain QR (what Dask's TSQR returns up to row signs).
void r_factor(const arma::mat& D, const arma::mat& Y, arma::mat& RD, arma::mat& RDy) {
  arma::mat Q, R;
  ASSERT_TRUE(arma::qr_econ(Q, R, arma::join_rows(D, Y)));
  const arma::uword q = D.n_cols;
  RD = R.submat(0, 0, q - 1, q - 1);
  RDy = R.submat(0, q, q - 1, R.n_cols - 1);
}

}  // namespace

TEST(RFactorSolve, OlsAndRidgeEqualTheNormalEquations) {
  for (unsigned seed : {1u, 2u, 3u}) {
    for (arma::uword p : {1u, 3u, 6u}) {
      for (arma::uword k : {1u, 2u}) {
        arma::arma_rng::set_seed(seed);
        const arma::uword n = 50 + 10 * p;
        arma::mat X = arma::randn(n, p) * 2.0 + 3.0;
        arma::mat D = arma::join_rows(arma::ones(n), X);
        arma::mat Y = arma::randn(n, k);
        arma::mat RD, RDy;
        r_factor(D, Y, RD, RDy);
        for (double alpha : {0.0, 0.5, 50.0}) {
          for (bool free_first : {true, false}) {
            arma::mat P = arma::eye(p + 1, p + 1) * alpha;
            if (free_first) P(0, 0) = 0;
            const arma::mat want = arma::solve(D.t() * D + P, D.t() * Y);
            const arma::mat got = r_factor_solve(RD, RDy, alpha, free_first);
            EXPECT_LT(arma::abs(got - want).max(), 1e-10 * (1 + arma::abs(want).max()))
                << "seed " << seed << " p " << p << " alpha " << alpha;
          }
        }
      }
    }
  }
}

TEST(RFactorSolve, SignsOfTheFactorRowsDoNotMatter) {
  arma::arma_rng::set_seed(4);
  const arma::mat D = arma::join_rows(arma::ones(40), arma::randn(40, 2));
  const arma::mat Y = arma::randn(40, 1);
  arma::mat RD, RDy;
  r_factor(D, Y, RD, RDy);
  const arma::mat a = r_factor_solve(RD, RDy, 2.0, true);
  RD.row(1) *= -1;
  RDy.row(1) *= -1;
  EXPECT_LT(arma::abs(r_factor_solve(RD, RDy, 2.0, true) - a).max(), 1e-12);
}

TEST(RFactorSolve, RankDeficientAndBadInput) {
  arma::arma_rng::set_seed(5);
  arma::mat D = arma::join_rows(arma::ones(30), arma::randn(30, 2));
  D.col(2) = 2.0 * D.col(1);
  arma::mat RD, RDy;
  r_factor(D, arma::randn(30, 1), RD, RDy);
  try {
    r_factor_solve(RD, RDy, 0.0, true);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("X: the design is rank deficient"), std::string::npos);
  }
  // A ridge penalty keeps it solvable.
  EXPECT_NO_THROW(r_factor_solve(RD, RDy, 1.0, true));
  EXPECT_THROW(r_factor_solve(RD, RDy, -1.0, true), InvalidArgument);
  EXPECT_THROW(r_factor_solve(RD.cols(0, 1), RDy, 0.0, true), InvalidArgument);
  EXPECT_THROW(r_factor_solve(RD, RDy.rows(0, 1), 0.0, true), InvalidArgument);
  RD(0, 0) = arma::datum::nan;
  EXPECT_THROW(r_factor_solve(RD, RDy, 0.0, true), InvalidArgument);
}
