// attnreg: the fourth-order Gaussian kernel's traits (kernel_traits.hpp lists the members).
//
//   K(u) = (3 - u^2) / 2 phi(u),  phi the standard normal density,
//
// the Gaussian kernel of order 4 (Marron & Wand 1992, "Exact mean integrated squared error",
// Ann. Statist. 20(2), doi:10.1214/aos/1176348653; Li & Racine 2007, "Nonparametric
// Econometrics", section 1.11). It is R np's ckertype = "gaussian", ckerorder = 4, with the same
// bandwidth. int K = 1, mu2 = int u^2 K = 0, int u^4 K = -3, R(K) = 27 / (32 sqrt(pi)).
// K is negative for |u| > sqrt(3): estimates may be negative and weight sums may vanish, so
// paths that need nonnegative weights (plug-in bandwidths, fast sums, binned sums, marginal
// effects, specification tests, Gaussian truncation) refuse it.
#ifndef ATTNREG_KERNELS_SHAPES_GAUSSIAN4_HPP
#define ATTNREG_KERNELS_SHAPES_GAUSSIAN4_HPP

#include "attnreg/kernels/kernel_traits.hpp"

namespace attnreg {
namespace kernels {

/// k(u) = (1 - u^2/3) exp(-u^2/2) on the whole line; c_K = 3 / (2 sqrt(2 pi)).
struct Gaussian4 : WholeLineKernel<Gaussian4> {
  static constexpr const char* name = "gaussian4";
  static constexpr const char* aliases = "gaussian_order4";
  static constexpr int order = 4;
  static constexpr bool nonnegative = false;
  static constexpr double constant = 0.59841342060214901691;  // 3 / (2 sqrt(2 pi))
  static double mu2() { return 0.0; }
  static double roughness() { return 27.0 / (32.0 * std::sqrt(kernel_detail::kPi)); }
  ATTNREG_HD static double shape(double u) {
    const double u2 = u * u;  // 0 where exp underflows (also keeps inf * 0 away)
    return u2 <= 1416.0 ? (1.0 - u2 * (1.0 / 3.0)) * kernel_detail::exp_nonpositive(-0.5 * u2)
                        : 0.0;
  }
  static double phi(double u) { return 0.39894228040143267794 * std::exp(-0.5 * u * u); }
  static double pdf(double u) { return 0.5 * (3.0 - u * u) * phi(u); }
  static double deriv(double u) { return 0.5 * u * (u * u - 5.0) * phi(u); }
  /// Phi(u) + u phi(u) / 2.
  static double cdf(double u) {
    return 0.5 * std::erfc(-u * 0.70710678118654752440) + 0.5 * u * phi(u);
  }
  /// (K*K)(t) = exp(-t^2/4) / sqrt(pi) (t^4 - 28 t^2 + 108) / 128.
  static double conv(double t, double* deriv) {
    const double t2 = t * t, e = 0.56418958354775628695 * std::exp(-0.25 * t2);  // 1/sqrt(pi)
    if (deriv) *deriv = -t * (t2 * t2 - 36.0 * t2 + 220.0) / 256.0 * e;
    return (t2 * t2 - 28.0 * t2 + 108.0) / 128.0 * e;
  }
  /// k'/k = u (u^2 - 5) / (3 - u^2); 0 where k vanishes (u^2 = 3).
  static double dlogk(double u) {
    const double s = 3.0 - u * u;
    return s != 0.0 ? u * (u * u - 5.0) / s : 0.0;
  }
};

}  // namespace kernels
}  // namespace attnreg
#endif

#ifdef ATTNREG_KERNEL_VSHAPES  // per Highway target, inside kernel_tiles-inl.hpp's namespace
HWY_INLINE V VShape(D d, V u, kernels::Gaussian4) {
  const V u2 = hn::Mul(u, u);
  const V p = hn::NegMulAdd(u2, hn::Set(d, 1.0 / 3.0), hn::Set(d, 1.0));
  const V k = hn::Mul(p, ExpNonpositive(d, hn::Mul(hn::Set(d, -0.5), u2)));
  return hn::IfThenElseZero(hn::Le(u2, hn::Set(d, 1416.0)), k);
}
#endif
