// attnreg: robust bias-corrected (RBC) confidence intervals for the derivatives (marginal
// effects) of a local polynomial fit of degree p >= 1, one or several continuous regressors
// (categorical columns enter through their kernels, exactly as in the fit).
//
// Estimator. At an evaluation point x the fit of degree p minimises
//   sum_i K_h(x_i - x) (y_i - sum_{|a| <= p} beta_a (x_i - x)^a)^2
// over all monomials (x_i - x)^a = prod_c (x_ic - x_c)^{a_c} of total degree <= p in the
// continuous columns (all squares and cross products), with the product kernel of the fit (its
// sample weights and categorical kernels included). The pure partial derivative of order v in
// column c is v! beta_{v e_c} = sum_i g_i(x) y_i: linear in y, with weights g(x) read off the
// weighted normal equations (Fan & Gijbels 1996, Local Polynomial Modelling and Its
// Applications, §3.1; Ruppert & Wand 1994, Ann. Statist. 22(3), for several regressors).
//
// Bias. The weights reproduce every polynomial of degree <= p, so by Taylor's theorem
//   E[v! beta_{v e_c} | X] - D^{v e_c} m(x) = sum_{|a| > p} D^a m(x) / a! sum_i g_i(x) (x_i - x)^a
// (Ruppert & Wand 1994, Thm 2.1 and §4, in finite-sample form). The derivatives
// D^a m(x) / a! = beta_a are the coefficients of a pilot local polynomial of degree q > p (all
// monomials of total degree <= q) at the pilot bandwidth b, so the estimated bias
//   B(x) = sum_{p < |a| <= q} [sum_i g_i(x) (x_i - x)^a] beta^pilot_a(x)
// is linear in y. Which terms matter: when p - v is odd the leading bias (interior and boundary)
// is the |a| = p + 1 term; when p - v is even (e.g. the slope of a local linear fit, p = v = 1)
// the |a| = p + 1 term is O(h^{p+2-v}) in the interior, the same order as the |a| = p + 2 term,
// which involves the derivatives of order p + 2 (for the local linear slope the third
// derivatives, with all their cross terms), while at the boundary the p + 1 term leads
// (Fan & Gijbels 1996, Thm 3.1 and §3.2.1). The default pilot degree is therefore
//   q = p + 1 when p - v is odd,  q = p + 2 when p - v is even,
// so that both leading terms are estimated (a pilot local cubic with every cross term for a
// local linear gradient; a local cubic for a local quadratic gradient). nprobust's lprobust
// always takes q = p + 1: pilot_degree = p + 1 reproduces it (its default p = v + 1 has p - v
// odd, where both rules agree).
//
// Robust bias correction (Calonico, Cattaneo & Farrell 2018, JASA 113(522), §2-3, the
// construction of nprobust's lprobust): the bias-corrected derivative sum_i (g_i - b_i) y_i,
// b the bias weights above, with its variance from the same weights, so the pilot's
// variability is included; RBC interval: estimate_bc -+ z_{1-a/2} se_bc.
//
// Variance (conditional on the regressors, bandwidths fixed), as nprobust's lprobust computes
// it at each evaluation point from the observations of its window W(x) (a positive kernel weight
// in the fit or in the pilot; n_x of them): Var = sum_i g_i^2 r_i^2 and Var_bc =
// sum_i (g_i - b_i)^2 r~_i^2, with the local residuals of the fit at x,
// r_i = y_i - sum_{|a| <= p} beta_a(x) (x_i - x)^a, and of the pilot, r~_i (coefficients of
// degree <= q), scaled by
//   HC0: 1;  HC1: sqrt(n_x / (n_x - k)) (k the number of coefficients of the fit, p: r; pilot: r~);
//   HC2: 1 / sqrt(1 - L_ii);  HC3: 1 / (1 - L_ii),
// L_ii = sum_a (x_i - x)^a [coefficient weights of beta_a]_i the local leverage of the fit of
// degree p at x (MacKinnon & White 1985 applied to the local weighted least squares, as
// nprobust's lprobust.res); nn: the nearest-neighbour residuals of y (3 neighbours, J/(J+1)
// scaling) among the observations of W(x), for both (nprobust's vce = "nn"; one continuous
// regressor, no categorical one). For one continuous regressor with q = p + 1 and the kernels
// nprobust has (epanechnikov, triangular, uniform, gaussian) this is lprobust(deriv = v) at
// fixed h and b (bwcheck = NULL), estimate for estimate.
//
// Averages and level differences. Any fixed linear combination of the pointwise estimates is
// again linear in y, with the combined weights: the average marginal effect over the m
// evaluation rows x_1..x_m, theta = (1/m) sum_j D^{v e_c} m(x_j) (the sample average of the
// derivative at the rows, conditional on the regressors, as the conventional average in
// marginal_effects.hpp), is estimated by sum_i gbar_i y_i, gbar = (1/m) sum_j g(x_j), and
// bias-corrected by sum_i (gbar_i - bbar_i) y_i with bbar the averaged bias weights. A level
// difference of a categorical column k, m(x with x_k = b) - m(x with x_k = a) at the
// evaluation row's other coordinates, is the difference of two fits of the level (v = 0, the
// intercept; default pilot degree q = p + 1 for odd p, p + 2 for even p, the rule above with
// v = 0), conventional and bias-corrected, pointwise or averaged over the rows. Their variance
// is the sum over training rows of (combined weight_i)^2 r_i^2 with ONE residual per training
// row (the rows' windows differ, so the pointwise local residuals cannot be combined): the
// residual of the fit of degree p (h), for the bias-corrected estimate of the pilot of degree q
// (b), each at the row's own point x_i, scaled as above with n_x the size of x_i's window and
// L_ii the leverage of row i in the fit at x_i; nn: the nearest-neighbour residuals of all rows.
// With HC0 the conventional average's standard error is that of marginal_effects.hpp (the
// fit's residuals y_i - m(x_i)). The estimand is the conditional (sample) average; the
// unconditional average derivative E[D m(X)] adds the variance of D m(X) over the population
// (Cattaneo, Crump and Jansson 2010, JASA 105(491); 2013, JASA 108(504)), not included here.
//
// Computation: per evaluation point only the rows of its kernel window enter (compact kernels
// exactly; the Gaussian after the core's truncation rule, kernel_pairs.hpp: weights below
// truncation x the point's largest weight are dropped), and no parallel region opens per point.
#pragma once

#include <cstddef>
#include <vector>

#include "attnreg/base/arma.hpp"
#include "attnreg/inference/diagnostics.hpp"
#include "attnreg/solve/local_fit.hpp"

namespace attnreg {

struct RbcGradientOptions {
  VarianceKind kind = VarianceKind::hc3;  ///< hc0, hc1, hc2, hc3 or nn
  double level = 0.95;                    ///< a fraction in (0, 1)
  int order = 1;                          ///< derivative order v, 1 <= v <= p
  int pilot_degree = -1;                  ///< q > p; -1: p + 1 (p - v odd) or p + 2 (even)
  /// Pilot bandwidths, one per column (categorical entries the pilot's smoothing parameters);
  /// empty: the model's bandwidths (rho = h / b = 1, nprobust's default).
  arma::vec pilot_bandwidths;
};

struct RbcGradientResult {
  std::vector<std::size_t> columns;  ///< the continuous columns (0-based), one result column each
  arma::mat estimate, se, bias, estimate_bc, se_bc;  ///< m x (number of continuous columns)
  double z = 0;                      ///< the normal quantile z_{1/2 + level/2}
  int pilot_degree = 0;              ///< q used
};

/// The default pilot degree of a derivative of order v from a fit of degree p (file comment).
int default_gradient_pilot_degree(int p, int v);

/// Derivatives of order opt.order of a fitted single-output LocalPolynomial (degree >= 1, no
/// ridge) in every continuous column at the rows of X_eval, with standard errors, estimated bias
/// and the bias-corrected estimate with its standard error (file comment). Throws
/// InvalidArgument naming the argument (degree, ridge, order, pilot_degree, pilot_bandwidth,
/// kind, level, X, a continuous column with too few distinct values for the pilot) and
/// NumericalError naming the evaluation row where the fit or the pilot is singular or a local
/// leverage is >= 1 under HC2/HC3.
RbcGradientResult rbc_gradient(const LocalPolynomial& model, const arma::mat& X_eval,
                               const RbcGradientOptions& opt = {}, arma::uword output = 0);

/// The average over the rows of X_eval of the derivatives of rbc_gradient (file comment,
/// "Averages and level differences"): every matrix of the result is 1 x (number of continuous
/// columns). Same arguments and errors as rbc_gradient.
RbcGradientResult rbc_average_gradient(const LocalPolynomial& model, const arma::mat& X_eval,
                                       const RbcGradientOptions& opt = {}, arma::uword output = 0);

/// The level difference m(x, x_column = level_to) - m(x, x_column = level_from) of the
/// categorical column `column` (0-based) at every row of X_eval (m x 1 matrices), or their
/// average (1 x 1) when average; conventional and bias-corrected with standard errors (file
/// comment). opt.order is ignored (v = 0); opt.pilot_degree < 0 takes the default for v = 0.
/// Throws InvalidArgument for a continuous column, a level not in the training data, no
/// continuous column, zero rows, and as rbc_gradient.
RbcGradientResult rbc_level_difference(const LocalPolynomial& model, const arma::mat& X_eval,
                                       std::size_t column, double level_from, double level_to,
                                       bool average, const RbcGradientOptions& opt = {},
                                       arma::uword output = 0);

}  // namespace attnreg
