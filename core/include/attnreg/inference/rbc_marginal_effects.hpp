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

}  // namespace attnreg
