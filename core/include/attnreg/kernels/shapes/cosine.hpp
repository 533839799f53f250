// attnreg: the cosine kernel's traits (kernel_traits.hpp lists the members).
#ifndef ATTNREG_KERNELS_SHAPES_COSINE_HPP
#define ATTNREG_KERNELS_SHAPES_COSINE_HPP

#include "attnreg/kernels/kernel_traits.hpp"

namespace attnreg {
namespace kernels {

/// k(u) = cos(pi u / 2) on [-1, 1].
struct Cosine : CompactKernel<Cosine> {
  static constexpr const char* name = "cosine";
  static constexpr double constant = 0.78539816339744830962;  // pi/4
  static double mu2() { return 1.0 - 8.0 / (kernel_detail::kPi * kernel_detail::kPi); }
  static double roughness() { return kernel_detail::kPi * kernel_detail::kPi / 16.0; }
  /// cos(pi u / 2) on [-1, 1] by its Taylor polynomial in x = pi |u| / 2 to degree 20 (the first
  /// omitted term, x^22/22! at x = pi/2, is 1.9e-17), so that the loop vectorises without libm.
  ATTNREG_HD static double shape(double u) {
    const double a = u < 0.0 ? -u : u;
    const double x = 1.5707963267948966192 * (a > 1.0 ? 1.0 : a);  // pi/2 * |u|, in [0, pi/2]
    const double x2 = x * x;
    double p = 1.0 / 2432902008176640000.0;  // 1/20!
    p = p * x2 - 1.0 / 6402373705728000.0;   // 1/18!
    p = p * x2 + 1.0 / 20922789888000.0;     // 1/16!
    p = p * x2 - 1.0 / 87178291200.0;        // 1/14!
    p = p * x2 + 1.0 / 479001600.0;          // 1/12!
    p = p * x2 - 1.0 / 3628800.0;            // 1/10!
    p = p * x2 + 1.0 / 40320.0;              // 1/8!
    p = p * x2 - 1.0 / 720.0;                // 1/6!
    p = p * x2 + 1.0 / 24.0;                 // 1/4!
    p = p * x2 - 0.5;                        // 1/2!
    p = p * x2 + 1.0;
    p = p > 0.0 ? p : 0.0;  // cos(pi/2) rounds to +-1e-17
    return a <= 1.0 ? p : 0.0;
  }
  static double deriv(double u) {
    const double kPi = kernel_detail::kPi;
    return std::abs(u) < 1.0 ? constant * (-0.5 * kPi * std::sin(0.5 * kPi * u)) : 0.0;
  }
  static double cdf_inside(double u) { return 0.5 + 0.5 * std::sin(0.5 * kernel_detail::kPi * u); }
  static double dlogk(double u) {
    const double a = std::fabs(u);
    if (a >= 1.0) return 0.0;
    return -1.5707963267948966192 * (u < 0.0 ? -1.0 : 1.0) * std::tan(1.5707963267948966192 * a);
  }
  static double psi(double u) {
    const double a = std::fabs(u);
    if (a >= 1.0) return 0.0;
    const double x = 1.5707963267948966192 * a;
    return x * std::tan(x);
  }
  static FastSumForm fast_sum_form() {
    FastSumForm f = FastSumForm::both({fs_poly(1, {1})}, {fs_poly(2, {0, kernel_detail::kHalfPi})});
    f.trig = true;  // cos(pi u / 2); -u k'(u) = (pi/2) u sin(pi u / 2)
    return f;
  }
};

}  // namespace kernels
}  // namespace attnreg
#endif

#ifdef ATTNREG_KERNEL_VSHAPES  // per Highway target, inside kernel_tiles-inl.hpp's namespace
// cos(pi u / 2) on [-1, 1] by the degree-20 Taylor polynomial of Cosine::shape.
HWY_INLINE V VShape(D d, V u, kernels::Cosine) {
  const V one = hn::Set(d, 1.0);
  const V a = hn::Abs(u);
  const auto inside = hn::Le(a, one);
  const V x = hn::Mul(hn::Set(d, 1.5707963267948966192), hn::Min(a, one));
  const V x2 = hn::Mul(x, x);
  V p = hn::Set(d, 1.0 / 2432902008176640000.0);
  p = hn::MulAdd(p, x2, hn::Set(d, -1.0 / 6402373705728000.0));
  p = hn::MulAdd(p, x2, hn::Set(d, 1.0 / 20922789888000.0));
  p = hn::MulAdd(p, x2, hn::Set(d, -1.0 / 87178291200.0));
  p = hn::MulAdd(p, x2, hn::Set(d, 1.0 / 479001600.0));
  p = hn::MulAdd(p, x2, hn::Set(d, -1.0 / 3628800.0));
  p = hn::MulAdd(p, x2, hn::Set(d, 1.0 / 40320.0));
  p = hn::MulAdd(p, x2, hn::Set(d, -1.0 / 720.0));
  p = hn::MulAdd(p, x2, hn::Set(d, 1.0 / 24.0));
  p = hn::MulAdd(p, x2, hn::Set(d, -0.5));
  p = hn::MulAdd(p, x2, one);
  return hn::IfThenElseZero(inside, hn::Max(p, hn::Zero(d)));
}
#endif
