// attnreg: the local polynomial estimator of degree p as a public estimator -- derivatives of
// every order up to p and data-driven bandwidths for every degree -- on top of the one local
// fit of local_fit.hpp (LocalPolynomial: moments, the equilibrated solve, leave-one-out, ties).
//
// Degrees: 0 (local constant, Nadaraya-Watson), 1 (local linear), 2 (local quadratic, any
// number of continuous columns: linear terms and all products z_a z_b, a <= b), 3 (local cubic,
// one continuous column). Categorical columns enter only through the kernel weights.
//
// Derivatives (Fan and Gijbels 1996, Local Polynomial Modelling and Its Applications, section 3.1):
// with the basis in bandwidth units, u = (x_i - x) / h, the local coefficient beta_s of u^s
// estimates h^s m^(s)(x) / s!, so  m^(s)(x) = s! beta_s / h^s  (one continuous column). For
// degree 2 with several continuous columns the coefficient of u_a u_b estimates
// h_a h_b d^2 m / dx_a dx_b (a != b) and h_a^2 (1/2) d^2 m / dx_a^2 (a = b).
//
// Bandwidths for degree >= 2: the same objectives as bandwidth_select.hpp (cv_ls: exact
// leave-one-out squared error; aic: AICc of Hurvich, Simonoff and Tsai 1998; gcv), computed from
// the local fit's own leave-one-out moments and leverages, searched on log h from the same
// box as bandwidth_select.hpp (its guard with min_neighbors = degree + 1) by projected L-BFGS
// with central finite-difference gradients. Degrees 0 and 1 call select_bandwidth itself, so
// LocalPolynomial(degree 0 or 1) selects exactly NadarayaWatson's / LocalLinear's bandwidths.
#pragma once

#include <functional>
#include <vector>

#include "attnreg/base/arma.hpp"
#include "attnreg/bandwidth/bandwidth_select.hpp"
#include "attnreg/solve/local_fit.hpp"

namespace attnreg {

/// Pure partial derivatives d^s m / d x_j^s (s = order) of a fitted local polynomial at the rows
/// of X_new: m x d x k (slice o = output o). Categorical columns hold NaN. order 0 is the fit
/// itself (NaN-free, every column equal to predict); 1 <= order <= degree otherwise, else
/// InvalidArgument naming `order`. Throws NumericalError naming the row whose fit fails.
arma::cube local_polynomial_derivative(const LocalPolynomial& model, const arma::mat& X_new,
                                       int order);

/// Second derivatives d^2 m / dx_a dx_b over the continuous columns (in their column order) at
/// the rows of X_new, for output `output`: m x c x c with c continuous columns. Needs degree >= 2.
arma::cube local_polynomial_hessian(const LocalPolynomial& model, const arma::mat& X_new,
                                    arma::uword output = 0);

/// The local fit's criterion at `bandwidth` (cv_ls, aic or gcv of opt.method) for any degree
/// 0..3 (opt.degree), from local_polynomial_eval's exact leave-one-out fits and leverages.
/// +inf where some fit it needs does not exist. Validates like LocalPolynomial::fit.
double local_polynomial_criterion(const arma::mat& X, const arma::vec& y,
                                  const arma::vec& bandwidth, const BandwidthSelectOptions& opt);

/// A criterion of the bandwidths (one per column: h or lambda); +inf where undefined.
using BandwidthCriterion = std::function<double(const arma::vec& bandwidth)>;

/// Minimise a criterion over the box [lower, upper] (per column, bandwidth units) as
/// select_bandwidth does (1-D: the curve on a log grid seeds the search; otherwise the
/// normal-reference start and opt.n_starts - 1 random ones), with central finite-difference
/// gradients on theta = (log h continuous, lambda categorical). `X` gives the columns' scale
/// for the normal-reference start; `types` their kinds.
BandwidthSelectResult search_bandwidth(const BandwidthCriterion& criterion, const arma::mat& X,
                                       const std::vector<VarType>& types, const arma::vec& lower,
                                       const arma::vec& upper, const BandwidthSelectOptions& opt);

/// Data-driven bandwidths of a local polynomial of degree opt.degree (0..3): degrees 0 and 1 are
/// select_bandwidth; degrees 2 and 3 minimise local_polynomial_criterion (cv_ls, aic, gcv; rot
/// and dpi are rules for degrees 0 and 1 and are refused with InvalidArgument).
BandwidthSelectResult select_local_polynomial_bandwidth(const arma::mat& X, const arma::vec& y,
                                                        const BandwidthSelectOptions& opt);

}  // namespace attnreg
