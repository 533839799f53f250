// attnreg: least squares and ridge from a TSQR factor (see r_factor_solve.hpp).
#include "attnreg/least_squares/r_factor_solve.hpp"

#include <cmath>
#include <string>

#include "attnreg/base/error.hpp"

namespace attnreg {

arma::mat r_factor_solve(const arma::mat& R_D, const arma::mat& R_Dy, double alpha,
                         bool free_first) {
  const arma::uword q = R_D.n_rows;
  check::require(q >= 1 && R_D.n_cols == q, "R_D",
                 "must be a square upper-triangular factor, got " + std::to_string(R_D.n_rows) +
                     " x " + std::to_string(R_D.n_cols));
  check::require(R_Dy.n_rows == q, "R_Dy",
                 "must have one row per column of R_D (" + std::to_string(q) + "), got " +
                     std::to_string(R_Dy.n_rows));
  check::require(R_D.is_finite() && R_Dy.is_finite(), "X, y",
                 "contain NaN or infinite values (remove or impute them first)");
  check::require(std::isfinite(alpha) && alpha >= 0, "alpha", "must be one finite number >= 0");
  arma::mat R = arma::trimatu(R_D);
  arma::mat B = R_Dy;
  const arma::uword first = free_first ? 1 : 0;
  if (alpha > 0 && q > first) {
    // [R; sqrt(alpha) P] with P the identity rows of the penalised coefficients.
    arma::mat A(q + q - first, q, arma::fill::zeros);
    A.rows(0, q - 1) = R;
    for (arma::uword j = first; j < q; ++j) A(q + j - first, j) = std::sqrt(alpha);
    arma::mat Bs(A.n_rows, B.n_cols, arma::fill::zeros);
    Bs.rows(0, q - 1) = B;
    arma::mat Q, R2;
    check::require(arma::qr_econ(Q, R2, A), "X", "the QR factorisation of the penalised factor failed");
    R = arma::trimatu(R2);
    B = Q.t() * Bs;
  }
  const arma::vec diag = arma::abs(R.diag());
  if (diag.min() <= 1e-12 * diag.max()) {
    throw InvalidArgument(
        "X: the design is rank deficient (a column is constant or a linear combination of "
        "others); drop it, or use a ridge penalty alpha > 0");
  }
  arma::mat b;
  check::require(arma::solve(b, arma::trimatu(R), B, arma::solve_opts::no_approx), "X",
                 "the triangular solve failed");
  return b;
}

}  // namespace attnreg
