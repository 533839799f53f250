// attnreg: ordinary least squares and its attention form (seed 004).
//
// Layout convention for the whole core: one observation per ROW. X is n x p (arma::mat is
// column-major, so an R matrix is passed as is and a C-contiguous numpy (n, p) array is copied
// once into column-major order by the Python face). Y is n x k (k >= 1 outputs).
//
// Solution method: the design D = [1, X] (or X) is scaled column-wise to unit norm by powers of
// two (exact), factored by Householder QR with column pivoting (LAPACK dgeqp3), and the
// coefficients come from the triangular solve R b = Q'y followed by one step of iterative
// refinement with residuals accumulated in long double. X'X is never formed or inverted.
//
// Rank deficiency is handled like R's lm: with the pivoted factor D P = Q R, columns whose
// |R_kk| <= rank_tol * |R_11| are *aliased*: their coefficients are NaN, they are left out of
// predictions, and rank() < n_coef(). Which of several collinear columns is aliased follows the
// pivot order (the column that adds least), which can differ from lm's "later column" choice.
//
// Attention form (seed 004 eqs. 4-8): the prediction at x is sum_i a_i(x) y_i with
//   a(x)' = d(x)' (D'D)^{-1} D'  = d(x)' P R^{-1} Q_1'          (eq. 7: F_test F_train')
// where d(x) is the design row of x. With an intercept the rows of A sum to 1 (eq. 17-19).
#pragma once

#include "attnreg/arma.hpp"
#include <string>
#include <vector>

namespace attnreg {

struct OLSOptions {
  bool fit_intercept = true;  ///< prepend a column of ones (never needs to be in X)
  double rank_tol = 1e-7;     ///< relative pivot tolerance for aliasing (R's lm uses 1e-7)
  int n_threads = 0;          ///< 0 = OpenMP default
};

/// Everything a fitted OLS needs, as plain arrays, so the faces can save and restore a model
/// (pickle in Python, an R list) without refactoring.
struct OLSState {
  bool fit_intercept = true;
  double rank_tol = 1e-7;
  arma::mat qr;       ///< dgeqp3 output: R above the diagonal, Householder vectors below (n x q)
  arma::vec tau;      ///< Householder scalars (q)
  arma::vec pivot;    ///< 0-based pivot order as doubles (q): column pivot[k] of D is column k of DP
  arma::vec scale;    ///< column scale factors s (q): D_scaled = D diag(1/s)
  arma::mat coef;     ///< q x k coefficients in design order (intercept first), NaN if aliased
  double rank = 0;    ///< numerical rank r
};

class OLS {
 public:
  explicit OLS(OLSOptions options = {}) : opt_(options) {}

  /// Fit on X (n x p) and Y (n x k). Throws InvalidArgument on NaN/Inf, shape mismatch, n < 1.
  OLS& fit(const arma::mat& X, const arma::mat& Y);

  /// Predictions at new rows (m x p) -> m x k.
  arma::mat predict(const arma::mat& X_new) const;

  /// Attention weights A (m x n): predict(X_new) == A * Y. Rows sum to 1 with an intercept.
  arma::mat attention_weights(const arma::mat& X_new) const;

  /// Coefficients in design order (intercept first when fitted), q x k; NaN where aliased.
  const arma::mat& coefficients() const { return st_.coef; }
  /// Classical standard errors sqrt(sigma^2 diag((D'D)^{-1})), q x k; NaN where aliased or when
  /// n <= rank (no residual degrees of freedom).
  arma::mat std_errors() const;
  /// Residual variance per output: RSS / (n - rank); NaN when n == rank.
  arma::rowvec sigma2() const;
  /// (D'D)^{-1} over the non-aliased columns (q x q, NaN rows/cols where aliased), computed from
  /// R^{-1} (triangular solve), never by inverting D'D.
  arma::mat unscaled_covariance() const;

  const arma::mat& fitted() const { return fitted_; }
  arma::mat residuals() const { return y_ - fitted_; }
  arma::uword rank() const { return static_cast<arma::uword>(st_.rank); }
  arma::uword n_obs() const { return st_.qr.n_rows; }
  arma::uword n_coef() const { return st_.qr.n_cols; }
  /// Indicator per design column: true when aliased (dropped).
  std::vector<bool> aliased() const;

  /// Export / import the fitted state (plus training Y and fitted values for residuals).
  const OLSState& state() const { return st_; }
  const arma::mat& training_y() const { return y_; }
  static OLS from_state(const OLSState& state, const arma::mat& Y);

  bool is_fitted() const { return fitted_flag_; }

 private:
  arma::mat design(const arma::mat& X, const std::string& arg) const;
  /// Apply Q' (transpose=true) or Q to the n x c matrix B in place, using the first `r`
  /// Householder reflectors.
  void apply_q(arma::mat& B, bool transpose) const;
  /// Solve R11 z = rhs (r x c) with R11 the leading r x r block of R.
  arma::mat solve_r(const arma::mat& rhs) const;
  /// Scaled, pivoted design rows of D_new restricted to the first r pivots: m x r.
  arma::mat pivoted_rows(const arma::mat& D_new) const;
  void require_fitted(const char* what) const;

  OLSOptions opt_;
  OLSState st_;
  arma::mat y_;
  arma::mat fitted_;
  bool fitted_flag_ = false;
};

}  // namespace attnreg
