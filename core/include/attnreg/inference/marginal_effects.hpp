// attnreg: marginal effects (gradients) of a fitted local constant (Nadaraya-Watson) or local
// linear regression, with standard errors, and their averages.
//
// Every estimate here is linear in the responses: est(x) = sum_i g_i(x) y_i, with derivative
// weights g(x) (in the model's training rows):
//   local constant, continuous column j (analytic derivative of m(x) = sum_i l_i(x) y_i,
//     l_i = w_i / sum_k w_k, w_i = a_i prod_c k(u_ic), u_ic = (X_ic - x_c) / h_c):
//       g_i = l_i (s_i - sum_k l_k s_k),  s_i = d log w_i / d x_j = -k'(u_ij) / (k(u_ij) h_j)
//     (the Gaussian: s_i = (X_ij - x_j) / h_j^2);
//   local linear, continuous column j: the local slope, g_i = w_i (A^{-1} [1; z_i])_{1+j} / h_j
//     (z_i in bandwidth units; A the local design with the omega-scaled ridge, local_fit.hpp),
//     as LocalPolynomial::gradient();
//   categorical column j (both degrees): a finite difference between levels, as R np's npreg
//     gradients for factors: unordered, m(x) - m(x with x_j at the first level) (0 at the first
//     level); ordered, m(x) - m(x with x_j at the previous level), and at the first level
//     m(x with x_j at the second level) - m(x) (a forward difference). Weights l(x) - l(x').
// Standard errors (conditional on the regressors, bandwidth held fixed):
//   asymptotic: var est(x) = sum_i g_i(x)^2 sigma_i^2 with the heteroskedasticity-consistent
//     sigma_i^2 = e_i^2, e = y - m(X) the fit's residuals (the linear-smoother / sandwich
//     variance of the derivative estimator, exact for the estimator given the errors'
//     variances);
//   np (local constant only): R np 0.70-4's gerr (its C source, src/jksum.c,
//     kernel_estimate_regression_categorical_tree_np, and the constants of src/kernel.c's
//     initialize_kernel_regression_asymptotic_constants), an asymptotic formula from the local
//     variance sigma2(x) = sum_i l_i y_i^2 - m(x)^2 and S(x) = sum_i prod_c K(u_ic) prod L_i
//     (K the density kernel, L the categorical kernels): with R = int K^2, C = int K(z - 1/2)
//     K(z + 1/2) dz and dc continuous columns, merr^2 = sigma2(x) R^dc / S(x) (np's merr);
//     continuous column j: se = sqrt(2 (R - C) / R) merr / h_j (the variance of a central
//     difference (m(x + h_j/2) - m(x - h_j/2)) / h_j, not of the analytic derivative);
//     categorical column j: se = sqrt(merr^2 + sigma2(x') R^dc / S(x')) at the comparison
//     point x' (0 when there is no continuous column, as np). Bandwidths in this library's
//     kernel scale (np's Gaussian is the same; np's Epanechnikov has unit variance);
//   bootstrap: the wild bootstrap y*_i = m(x_i) + e_i v_i with Mammen's (1993) two-point v
//     (E v = 0, E v^2 = E v^3 = 1), est* = g(x)' y*, the standard deviation over replications.
// Averages: the average marginal effect over the query rows, mean_q est(x_q), is linear with
// weights mean_q g(x_q), so its standard error accounts for the averaging (the rows' errors are
// correlated through shared observations): var = sum_i (mean_q g_i(x_q))^2 sigma_i^2.
// Results do not depend on the number of threads (fixed blocks, reduced in order).
#pragma once

#include <cstdint>
#include <string>

#include "attnreg/base/arma.hpp"
#include "attnreg/solve/local_fit.hpp"

namespace attnreg {

enum class GradientSE : int { none = 0, asymptotic, bootstrap, np };

/// Parse "none", "asymptotic" (also "hc", "analytic"), "bootstrap" (also "wild"), "np".
GradientSE gradient_se_from_name(const std::string& name, const std::string& arg = "se");

struct GradientOptions {
  GradientSE se = GradientSE::none;
  int n_boot = 399;          ///< bootstrap replications (>= 2)
  std::uint64_t seed = 0;    ///< bootstrap draws are reproducible from this
  bool average = false;      ///< also the average over the query rows, with its SE
  int n_threads = 0;
};

struct GradientResult {
  arma::mat gradient;        ///< m x d (continuous: derivative; categorical: level difference)
  arma::mat se;              ///< m x d (empty when se = none)
  arma::rowvec average;      ///< 1 x d (when average)
  arma::rowvec average_se;   ///< 1 x d (when average and se != none)
};

/// Marginal effects of a fitted single-output LocalPolynomial of degree 0 or 1 at the rows of
/// X_new (m x d). Throws InvalidArgument (degree, outputs, options, X_new) and NumericalError
/// naming the first row of X_new where the fit does not exist.
GradientResult local_gradient(const LocalPolynomial& model, const arma::mat& X_new,
                              const GradientOptions& opt);

/// The derivative weights of column j at each row of X_new (m x n, training-row order):
/// local_gradient(...).gradient.col(j) == weights * y. Materialises m x n doubles (tests).
arma::mat gradient_weights(const LocalPolynomial& model, const arma::mat& X_new, std::size_t j);

}  // namespace attnreg
