// attnreg: MSE- and IMSE-optimal bandwidth vectors for local linear and local constant fits with
// d >= 2 continuous regressors (a diagonal bandwidth matrix H = diag(h_1^2, ..., h_d^2)), by a
// plug-in with a pilot local quadratic; the multivariate counterpart of the univariate
// lpbwselect-style plug-in of bandwidth/lp_bwselect.hpp (which stays the one for d = 1).
//
// Product kernel K (second order, non-negative; mu2 = int u^2 K, R = int K^2 of the univariate
// density, kernels/kernel.hpp). At an evaluation point x, for h = (h_1, ..., h_d), t_j = h_j^2:
//
//  * Leading bias (interior; Ruppert and Wand 1994, Ann. Statist. 22(3), 1346-1370, Thm 2.1,
//    bias = (1/2) mu2(K) tr(H Hess m(x)) for local linear; with a diagonal H only the second
//    derivatives m_jj enter):   Bias(h) = sum_j a_j t_j,
//      local linear    a_j = mu2(K) m_jj(x) / 2,
//      local constant  a_j = mu2(K) (m_jj(x) / 2 + m_j(x) f_j(x) / f(x))
//    (the Nadaraya-Watson bias with a product kernel; Li and Racine 2007, Nonparametric
//    Econometrics, Princeton University Press, ch. 2).
//  * Variance (same references):   Var(h) = V0 / prod_j h_j,   V0 = R(K)^d sigma^2(x) / (n f(x)).
//  * Pointwise plug-in MSE, with a regularisation of the squared bias by the pilot's variance
//    (as lpbwselect's B^2 + bwregul R; Calonico, Cattaneo and Farrell 2018, JASA 113(522), §4):
//        MSE(h) = t' M t + V0 / prod_j h_j,   M = a a' + bwregul Cov(a_hat).
//    a_hat is linear in the pilot's coefficients, so Cov(a_hat) = G Cov(beta_hat) G'. The term
//    also keeps the criterion bounded below away from h = infinity when the curvatures have
//    opposite signs (then t'aa't alone can vanish along a curve) or one is ~0.
//  * IMSE over the evaluation points x_1..x_m: the same with M and V0 replaced by their means,
//        IMSE(h) = t' mean(M) t + mean(V0) / prod_j h_j.
//  * Minimiser (numerical): cyclic coordinate descent in t over the box
//    t_j in [(1e-6 range_j)^2, range_j^2] (range_j = max - min of column j), started at the
//    common-scale closed form below. Along t_j the criterion is 2 (M t)_j - V0 /(2 P t_j^{3/2})
//    in derivative (P = prod_{k != j} h_k), strictly increasing, so each step is the unique
//    root (bisection in log t_j, to relative 1e-13) or the box edge. Sweeps stop when no t_j
//    moves by more than 1e-11 relative (at most 1000 sweeps). Safeguard when a curvature is ~0
//    and bwregul = 0: the criterion decreases in t_j to the edge, so h_j = range_j (the fit
//    is then nearly global, i.e. linear (ll) or constant (lc), in that direction).
//  * Common scale (closed form): h_j = c s_j (s_j the sample standard deviation of column j),
//        c = ( d V0 / (4 Q prod_j s_j) )^{1/(d + 4)},   Q = s2' M s2,  s2 = (s_j^2),
//    the unique minimiser of c^4 Q + V0 c^{-d} / prod s_j; capped at min_j range_j / s_j
//    (also when Q = 0).
//  * Pilot (at each evaluation point): a local quadratic with all squares and cross products,
//    weighted least squares by thin QR in the scaled design u_j = (x_ij - x_j)/b_j, kernel
//    weights prod_j k(u_ij) of the fit's kernel; m_j = beta_j / b_j, m_jj / 2 = beta_jj / b_j^2.
//    Cov(beta_hat) = sigma^2(x) (Z'WZ)^{-1} Z'W^2 Z (Z'WZ)^{-1}. sigma^2(x) is the pilot's
//    weighted residual variance, made unbiased under local homoskedasticity and a correct
//    quadratic: sum_i w_i e_i^2 / (sum_i w_i - sum_i w_i^2 z_i'(Z'WZ)^{-1} z_i). f(x) and
//    (local constant) f_j(x)/f(x) = -sum_i w_i k'/k(u_ij) / (b_j sum_i w_i) from the product
//    kernel density estimate at b. Default b (rule of thumb): b_j = C_K s_j n^{-1/(d+8)}: the
//    rate n^{-1/(d+8)} balances a local quadratic's second-derivative bias O(b^2) against its
//    variance O(1/(n b^{d+4})); C_K = delta_K / delta_gaussian converts the normal-reference
//    scale to the kernel K by the canonical bandwidths delta_K = (R(K) / mu2(K)^2)^{1/5}
//    (Marron and Nolan 1988, Statist. Probab. Lett. 7(3), 195-199): 1 for the Gaussian, 2.214
//    for the Epanechnikov kernel.
//  * Bias terms that cancel (absolute_bias): when the a_j have opposite signs, t'aa't vanishes
//    along the curve sum_j a_j t_j = 0, and the criterion's minimiser runs out along it to large
//    bandwidths where the leading term says nothing about the bias (the terms of order h^4, the
//    cross and higher derivatives; none of them removed by the local quadratic pilot of RBC). A
//    Monte Carlo of RBC intervals at such vectors (bench/results/rbc_montecarlo_pointwise.md:
//    m = sin(3 x_1) + exp(-4 x_2^2) + x_3^2 at 0, a = mu2 (0, -4, 1)) shows a t-statistic
//    centred at -0.8 and coverage 0.80-0.83 at the nominal 0.95, not improving with n. With
//    absolute_bias the criterion uses the triangle-inequality bound on the leading bias,
//        |Bias(h)| <= sum_j |a_j| t_j,   M = |a| |a|' + bwregul Cov(a_hat),
//    the worst case over the signs of the curvatures, so no direction's bandwidth is chosen
//    because its bias term is cancelled by another's (a direction with a_j ~ 0 still gets the
//    bwregul guard). The pure MSE vector is absolute_bias = false.
//  * Minimum points (bwcheck, as nprobust's lpbwselect and rdrobust's bwcheck: each bandwidth
//    at least the distance to the bwcheck-th nearest point): with bwcheck > 0 every window used
//    holds at least T = max(bwcheck, 2 n_pilot) distinct training rows (n_pilot = 1 + d +
//    d(d+1)/2 coefficients of the pilot quadratic; all distinct rows when there are fewer):
//    the pilot's bandwidth vector at each point, the pointwise h at its point and h_imse at
//    every evaluation point are multiplied by the smallest factor >= 1 that brings T distinct
//    rows strictly inside the product kernel's support, |x_ic - x_c| < h_c for every c (rows
//    enter in order of max_c |x_ic - x_c| / h_c). Kernels with unbounded support weight every
//    row, so the rule leaves them unchanged. Off (bwcheck = 0), a window with fewer than
//    n_pilot + 1 rows is refused as before.
//
// The formulas are interior (asymptotic) ones: at a boundary point the bias and variance
// constants differ (Ruppert and Wand 1994, §2) and the plug-in is a rule of thumb there.
#pragma once

#include <string>

#include "attnreg/base/arma.hpp"
#include "attnreg/kernels/kernel.hpp"

namespace attnreg {

struct MvBwOptions {
  int degree = 1;                        ///< 1 (local linear) or 0 (local constant)
  Kernel kernel{KernelType::gaussian};   ///< second order and non-negative
  arma::vec pilot_bandwidth;             ///< b (length d); empty = the rule of thumb above
  double bwregul = 1.0;                  ///< weight of Cov(a_hat) in M (0 = none)
  int bwcheck = 0;                       ///< minimum distinct rows per window (0 = no rule)
  bool absolute_bias = false;            ///< bias bound sum_j |a_j| t_j (no cancellation)
};

struct MvBwSelection {
  arma::mat eval;          ///< m x d evaluation points
  arma::mat h;             ///< m x d pointwise MSE-optimal bandwidth vectors
  arma::vec c_common;      ///< m: pointwise common-scale closed form (h = c s)
  arma::vec h_imse;        ///< d: IMSE-optimal bandwidth vector over the points
  double c_imse_common = 0;  ///< IMSE common scale (h = c s)
  arma::vec pilot;         ///< d: the pilot bandwidths b (before the minimum-points rule)
  arma::mat pilot_used;    ///< m x d: the pilot bandwidths used at each point (after it)
  arma::vec scale;         ///< d: s_j
  arma::vec range;         ///< d: max - min of each column
  arma::mat bias_coef;     ///< m x d: a_j(x) (Bias(h) = sum_j a_j h_j^2)
  arma::cube bias_cov;     ///< d x d x m: Cov(a_hat) at each point
  arma::vec variance_coef; ///< m: V0(x) (Var(h) = V0 / prod h_j)
  arma::vec sigma2;        ///< m: sigma^2(x)
  arma::vec density;       ///< m: f(x)
};

/// The plug-in above at the rows of X_eval (m x d, d >= 2) from data X (n x d), y (n). Throws
/// InvalidArgument naming the argument (lengths, a column with fewer than 3 distinct values,
/// a kernel that is not second order) and NumericalError naming the evaluation row (too few
/// training points with weight in the pilot window, a singular pilot design, no residual
/// degrees of freedom).
MvBwSelection mse_dpi_multivariate(const arma::mat& X, const arma::vec& y,
                                   const arma::mat& X_eval, const MvBwOptions& opt = {});

/// The criterion t'Mt + V0 / prod h_j at h (t_j = h_j^2; the pointwise MSE or the IMSE).
double mv_plugin_mse(const arma::mat& M, double V0, const arma::vec& h);

/// Its minimiser over the box [1e-6 range_j, range_j], by the coordinate descent above from the
/// common-scale start c_start * scale.
arma::vec mv_plugin_minimise(const arma::mat& M, double V0, const arma::vec& range,
                             const arma::vec& start);

/// The common-scale closed form c = (d V0 / (4 Q prod s))^{1/(d+4)}, Q = s2'M s2, capped at
/// min_j range_j / s_j.
double mv_plugin_common_scale(const arma::mat& M, double V0, const arma::vec& scale,
                              const arma::vec& range);

}  // namespace attnreg
