// attnreg: the fit statistics a regression summary reports beyond the coefficient table:
// standard errors of predicted means d(x)' V d(x) (confidence and prediction intervals), the
// regression F statistic as a Wald test of the slopes under any coefficient covariance, and the
// Gaussian log-likelihood behind AIC / BIC.
//
// Conventions (as statsmodels' OLS results and R's predict.lm / logLik.lm):
//   * var(d(x)' b) = d(x)' V d(x) with V the q x q coefficient covariance in design order
//     (intercept first); aliased coefficients (NaN rows / columns of V) are left out, as they
//     are left out of the prediction. Prediction intervals add the residual variance sigma^2.
//   * F = b_s' V_ss^{-1} b_s / m, b_s the m non-aliased slopes (all coefficients but the
//     intercept; all of them without an intercept). Under the classical covariance this is
//     (R^2 / m) / ((1 - R^2) / (n - r)), statsmodels' fvalue and summary.lm's F; under a robust
//     covariance it is statsmodels' robust Wald F. Solved by a Cholesky factor of the correlation
//     matrix of b_s, never an inverse; a robust V of rank < m (e.g. fewer clusters than slopes)
//     has no Wald test and gives NaN (Stata reports the F as missing then).
//   * log L = -n/2 (log(2 pi) + log(RSS/n) + 1) + 1/2 sum_i log w_i with RSS = sum_i w_i e_i^2
//     (w = 1 without weights): R's logLik.lm and statsmodels' OLS / WLS llf (analytic weights,
//     w_i proportional to 1/var(e_i)). Frequency weights (row i stands for w_i identical
//     observations): the log-likelihood of the expanded data, n = sum w_i and no log w term.
#pragma once

#include "attnreg/base/arma.hpp"
#include "attnreg/least_squares/least_squares.hpp"

namespace attnreg {

/// d_i' V d_i for each row d_i of D (m x q) and a symmetric q x q V (symmetrised as (V + V')/2;
/// results below 0 from rounding are set to 0): the variances of the linear combinations D b.
arma::vec row_quadratic_forms(const arma::mat& D, const arma::mat& V);

/// d(x_i)' V d(x_i) for each row x_i of X_new (m x p, the columns of fit), V q x q in design
/// order (NaN where aliased). The variance of the predicted mean at each row (m values).
arma::vec ols_prediction_variance(const OLS& model, const arma::mat& X_new, const arma::mat& V);

/// Wald F test that all slopes are zero.
struct SlopesWaldTest {
  double statistic = 0;  ///< F = b_s' V_ss^{-1} b_s / df_num (NaN when V_ss is singular)
  double df_num = 0;     ///< m, the number of non-aliased slopes tested
};

/// The regression F statistic of one output under the coefficient covariance V (q x q).
SlopesWaldTest ols_slopes_wald(const OLS& model, const arma::mat& V, arma::uword output = 0);

/// Wald F statistic b' V^{-1} b / m of the hypothesis b = 0 for m coefficients b with
/// covariance V (m x m), from a Cholesky factor of V's correlation matrix; NaN when V is
/// singular (see the header comment), when anything is not finite or when m = 0.
double wald_f_statistic(const arma::vec& b, const arma::mat& V);

/// Gaussian log-likelihood of residuals e (n) with optional observation weights w (n, > 0;
/// empty = all ones): -n/2 (log(2 pi) + log(RSS/n) + 1) + 1/2 sum log w, RSS = sum w e^2
/// accumulated in long double. With frequency = true, n = sum w and the log w term is left
/// out (the expanded data's log-likelihood). +inf for an exact fit (RSS = 0).
double gaussian_loglik(const arma::vec& e, const arma::vec& w = arma::vec(),
                       bool frequency = false);

}  // namespace attnreg
