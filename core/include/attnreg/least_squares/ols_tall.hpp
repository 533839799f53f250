// attnreg: ordinary/weighted least squares for tall designs (n >> p) in three passes over X,
// read in place (row-major or column-major), with classical and HC0-HC3 covariances.
#pragma once

#include "attnreg/base/arma.hpp"
#include "attnreg/least_squares/least_squares.hpp"

namespace attnreg {

/// A read-only n x p view of doubles: element (i, j) at data[i * row_stride + j * col_stride]
/// (numpy C order: row_stride = p, col_stride = 1; Fortran order: 1 and n).
struct StridedMatrix {
  const double* data = nullptr;
  arma::uword n_rows = 0, n_cols = 0, row_stride = 0, col_stride = 0;
  double operator()(arma::uword i, arma::uword j) const {
    return data[i * row_stride + j * col_stride];
  }
};

/// Result of ols_tall. done = false: the design needs OLS::fit (extended precision would be
/// chosen, the design is all zero, or refinement did not settle) and nothing else is set.
struct TallOLS {
  bool done = false;
  arma::uword rank = 0;
  arma::vec pivot;       ///< q: column order of the pivoted factor (kept columns first)
  arma::vec coef;        ///< q (intercept first when fitted); NaN where aliased
  arma::mat cov;         ///< q x q covariance of cov_type; NaN rows/columns where aliased
  arma::vec std_errors;  ///< q; NaN where aliased
  arma::vec residuals;   ///< n: y - D coef (raw scale), accumulated in long double
  double sigma2 = 0.0;   ///< sum w e^2 / (N - rank)
  int refinement_steps = 0;
  Inference inf;         ///< the coefficient table and fit statistics OLS::inference(cov) gives
};

/// Whether ols_tall covers a fit of n rows and q design columns (intercept included) with these
/// options: n >= 20,000, n >= 50 q, n q^2 above the size where OLS's automatic precision always
/// takes the extended path, double or automatic precision, and a classical or HC0-HC3 cov_type
/// (HAC and clustered covariances stay with OLS::fit).
bool ols_tall_applies(arma::uword n, arma::uword q, const OLSOptions& opt, const CovOptions& cov);

/// Least squares of y on D = [1, X] (or X) with optional weights, as OLS::fit followed by
/// std_errors(cov), in three passes over X that never copy it whole:
/// 1. Householder QR of [W^{1/2} D, W^{1/2} y] by row panels, each stacked under the running
///    triangular factor (a sequential TSQR; Demmel, Grigori, Hoemmen and Langou 2012,
///    doi:10.1137/080731992), then column scaling, pivoting and the numerical rank on the small
///    (p + 1) x (p + 1) factor with OLS's rules (rank_tol, R's lm aliasing);
/// 2. corrected semi-normal equations (Bjorck 1987, doi:10.1016/0024-3795(87)90101-7): the
///    residual e = y - D b and D' W e accumulated in long double, R'R d = D' W e solved with the
///    triangular factor, b += d, repeated until d is below 1e-13 |b| (at most 4 times);
/// 3. in the last residual pass: Z = W^{1/2} D R^{-1} per panel (the orthonormal scores), the
///    leverages h_i = |z_i|^2 and the HC meat Z' diag(omega) Z, cov = R^{-1} meat R^{-T}.
/// Single threaded with a fixed panel order: identical results on every run.
TallOLS ols_tall(const StridedMatrix& X, const arma::vec& y, const arma::vec& weights,
                 const OLSOptions& opt, const CovOptions& cov);

}  // namespace attnreg
