// attnreg: MSE- and IMSE-optimal plug-in bandwidths for local polynomial regression by the
// data-driven steps of Calonico, Cattaneo and Farrell (2018, JASA 113(522), 767-779,
// doi:10.1080/01621459.2017.1285776, §4 and Supplement S.2) as implemented in their nprobust
// package (Calonico, Cattaneo and Farrell 2019, J. Stat. Softw. 91(8), §4.1,
// doi:10.18637/jss.v091.i08; lpbwselect with bwselect = "mse-dpi" / "imse-dpi").
//
// One continuous regressor x, response y (n observations), local polynomial of degree p for
// the derivative nu = deriv, bias-correction degree q = p + 1. At an evaluation point c:
//
//  * Building block B(o, nu', o_B, h_V, h_B1, h_B2, s) ("piece"): a local polynomial of degree
//    o at h_V with kernel weights K((x - c)/h_V)/h_V gives the sandwich variance of its nu'-th
//    coefficient, Var_V = e' G^{-1} (sum_i w_i^2 r_i^2 R_i R_i') G^{-1} e, with residuals r_i
//    from the nearest-neighbour estimator (nn_variance.hpp, computed on the observations inside
//    the window) or from the fit (hc0..hc3), and V = n h_V^{2 nu'+1} Var_V. The bias constants
//    BC_k = h_V^{nu'} e' G^{-1} sum_i w_i R_i ((x_i - c)/h_V)^{o+k}, k = 1, 2, are the
//    equivalent-kernel moments of the fit. The derivative m^{(o+1)}/(o+1)! is the coefficient
//    of degree o + 1 of a pilot fit of degree o_B at h_B1 (beta_1), m^{(o+2)}/(o+2)! the one of
//    degree o + 2 of a fit of degree o_B + 1 at h_B2 (beta_2); B1 = BC_1 beta_1, B2 = BC_2
//    beta_2. With s > 0 a regularisation R = 3 BC_1^2 Var(beta_1) (the sandwich variance of
//    beta_1 in its own window) is added:
//        h = [ (2 nu' + 1) V / (n 2 (o + 1 - nu') (B1^2 + s R)) ]^{1/(2 o + 3)}.
//    Polynomial fits are weighted least squares by thin QR in the scaled design
//    ((x - c)/h)^k; coefficients are scaled back by h^-k.
//  * Chain at c (rule of thumb -> d -> b -> h): c_bw = C_K min(sd, IQR/1.349) n^{-1/5}
//    (C_K = 2.34 Epanechnikov, 1.843 uniform, 2.576 triangular, 1.06 Gaussian), capped at
//    bw_max = max(|c - min x|, |c - max x|) and raised to bw_min, the distance to the bwcheck-th
//    nearest observation. d_2 = piece(q+1, q+1, q+2, c_bw, range, range, 0),
//    d_3 = piece(q+2, q+2, q+3, c_bw, range, range, 0); b = piece(q, p+1, q+1, c_bw, d_2, d_3,
//    bwregul); h = piece(p, nu, q, c_bw, b, d_2, bwregul); every bandwidth clipped to
//    [bw_min, bw_max].
//  * Even p - nu (not interior): the closed form is replaced by the minimiser over
//    (0, range] of H^{2(o+1-nu')} ((B1 + H B2)^2 + s R) + V / (n H^{2nu'+1}) (Brent's (1973)
//    local minimiser, as R's optimize(), here in units of the range and to full accuracy;
//    nprobust stops at optimize()'s absolute tolerance 1.2e-4). nprobust 1.0.0 writes
//    (B1 + H B2 + s R)^2, adding R (the units of B1^2) to B1, so that its bandwidth changes with
//    the units of x and y; here R is added to the squared bias as in the closed form, which
//    keeps h equivariant in x and invariant in y. For odd p - nu (local linear for the
//    function, nprobust's default) the two agree.
//  * IMSE: V_h = (2nu+1) V and B_h = 2(p+1-nu) B1^2 of the h-piece at each grid point (for even
//    p - nu: V and (B1 + h B2)^2), and h_imse = [mean V_h / (n mean B_h)]^{1/(2p+3)} (even:
//    the minimiser of |H^{2(p+1-nu)} mean B_h + mean V_h / (n H^{2nu+1})|); the same with the
//    b-piece and q for b_imse. Default grid: 30 equally spaced points over [min x, max x].
#pragma once

#include "attnreg/base/arma.hpp"
#include "attnreg/inference/diagnostics.hpp"
#include "attnreg/kernels/kernel.hpp"

namespace attnreg {

struct LpBwOptions {
  int degree = 1;    ///< p, 0..3
  int deriv = 0;     ///< nu, 0..p
  Kernel kernel{KernelType::epanechnikov};  ///< epanechnikov, uniform, triangular or gaussian
  VarianceKind kind = VarianceKind::nn;      ///< nn or hc0..hc3
  int nnmatch = 3;   ///< neighbours of the nn variance
  int bwcheck = 21;  ///< every bandwidth covers >= bwcheck observations; 0 = off
  double bwregul = 1.0;  ///< scale of the regularisation term R (0 = none)
  bool interior = false; ///< treat every point as interior (closed forms for even p - nu)
};

/// One building block at one point (see the file comment).
struct LpBwPiece {
  double V = 0, B1 = 0, B2 = 0, R = 0, bw = 0;
  int rB = 0, rV = 0;
};

/// The piece B(o, nu, o_B, h_V, h_B1, h_B2, scale) at c (exposed for tests).
LpBwPiece lp_bw_piece(const arma::vec& x, const arma::vec& y, double c, int o, int nu, int o_B,
                      double h_V, double h_B1, double h_B2, double scale, const LpBwOptions& opt);

struct LpBwSelection {
  arma::vec eval;    ///< evaluation points
  arma::vec h, b;    ///< MSE-optimal h and bias-correction b at each point
  double h_imse = 0, b_imse = 0;  ///< IMSE-optimal over the points (imse only)
};

/// MSE-DPI bandwidths (h, b) at each point of `eval` (non-empty). Throws InvalidArgument for
/// bad options (naming them) and NumericalError when a local fit in the chain is singular.
LpBwSelection lp_mse_dpi(const arma::vec& x, const arma::vec& y, const arma::vec& eval,
                         const LpBwOptions& opt = {});

/// IMSE-DPI bandwidths over the grid `eval` (empty = 30 equally spaced points over the range
/// of x); h and b hold the pointwise MSE-DPI bandwidths on the grid as a by-product.
LpBwSelection lp_imse_dpi(const arma::vec& x, const arma::vec& y, const arma::vec& eval,
                          const LpBwOptions& opt = {});

/// Brent's (1973) local minimiser of f on [a, b] (the algorithm of R's optimize(); absolute
/// tolerance `tol`).
template <class F>
double brent_minimize(F f, double a, double b, double tol);

}  // namespace attnreg

// ---- implementation of the template ----
#include <cmath>
#include <limits>

namespace attnreg {

template <class F>
double brent_minimize(F f, double a, double b, double tol) {
  const double c = (3.0 - std::sqrt(5.0)) * 0.5;
  const double eps = std::sqrt(std::numeric_limits<double>::epsilon());
  double v = a + c * (b - a), w = v, x = v;
  double d = 0.0, e = 0.0;
  double fx = f(x), fv = fx, fw = fx;
  const double tol3 = tol / 3.0;
  for (;;) {
    const double xm = (a + b) * 0.5;
    const double tol1 = eps * std::fabs(x) + tol3;
    const double t2 = tol1 * 2.0;
    if (std::fabs(x - xm) <= t2 - (b - a) * 0.5) break;
    double p = 0.0, q = 0.0, r = 0.0;
    if (std::fabs(e) > tol1) {  // trial parabola through x, v, w
      r = (x - w) * (fx - fv);
      q = (x - v) * (fx - fw);
      p = (x - v) * q - (x - w) * r;
      q = (q - r) * 2.0;
      if (q > 0.0) p = -p; else q = -q;
      r = e;
      e = d;
    }
    if (std::fabs(p) >= std::fabs(q * 0.5 * r) || p <= q * (a - x) || p >= q * (b - x)) {
      e = (x < xm) ? b - x : a - x;  // golden-section step
      d = c * e;
    } else {                          // parabolic step
      d = p / q;
      const double u = x + d;
      if (u - a < t2 || b - u < t2) {
        d = tol1;
        if (x >= xm) d = -d;
      }
    }
    double u;
    if (std::fabs(d) >= tol1) u = x + d;
    else if (d > 0.0) u = x + tol1;
    else u = x - tol1;
    const double fu = f(u);
    if (fu <= fx) {
      if (u < x) b = x; else a = x;
      v = w; w = x; x = u;
      fv = fw; fw = fx; fx = fu;
    } else {
      if (u < x) a = u; else b = u;
      if (fu <= fw || w == x) {
        v = w; fv = fw; w = u; fw = fu;
      } else if (fu <= fv || v == x || v == w) {
        v = u; fv = fu;
      }
    }
  }
  return x;
}

}  // namespace attnreg
