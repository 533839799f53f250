// attnreg: the triangular kernel's traits (kernel_traits.hpp lists the members).
#ifndef ATTNREG_KERNELS_SHAPES_TRIANGULAR_HPP
#define ATTNREG_KERNELS_SHAPES_TRIANGULAR_HPP

#include "attnreg/kernels/kernel_traits.hpp"

namespace attnreg {
namespace kernels {

/// k(u) = 1 - |u| on [-1, 1].
struct Triangular : CompactKernel<Triangular> {
  static constexpr const char* name = "triangular";
  static constexpr const char* aliases = "triangle";
  static constexpr double constant = 1.0;
  static constexpr double lp_rule_constant = 2.576;
  static double mu2() { return 1.0 / 6.0; }
  static double roughness() { return 2.0 / 3.0; }
  ATTNREG_HD static double shape(double u) {
    const double t = 1.0 - (u < 0.0 ? -u : u);
    return t > 0.0 ? t : 0.0;
  }
  static double deriv(double u) {
    return std::abs(u) < 1.0 ? constant * (u > 0 ? -1.0 : (u < 0 ? 1.0 : 0.0)) : 0.0;
  }
  static double cdf_inside(double u) {
    return u < 0.0 ? 0.5 * (1.0 + u) * (1.0 + u) : 1.0 - 0.5 * (1.0 - u) * (1.0 - u);
  }
  /// The kink at 0 is given derivative 0.
  static double dlogk(double u) {
    const double a = std::fabs(u);
    if (!(a < 1.0) || u == 0.0) return 0.0;
    return (u > 0.0 ? -1.0 : 1.0) / (1.0 - a);
  }
  static double psi(double u) {
    const double a = std::fabs(u), s = 1.0 - a;
    return s > 0.0 ? a / s : 0.0;
  }
  static FastSumForm fast_sum_form() {
    FastSumForm f;
    f.split = true;
    f.w[0] = {fs_poly(0, {1, 1})};  // 1 + u for u < 0
    f.w[1] = {fs_poly(0, {1, -1})};
    f.d[0] = {fs_poly(0, {0, -1})};  // -u k'(u) = |u|
    f.d[1] = {fs_poly(0, {0, 1})};
    return f;
  }
};

}  // namespace kernels
}  // namespace attnreg
#endif

#ifdef ATTNREG_KERNEL_VSHAPES  // per Highway target, inside kernel_tiles-inl.hpp's namespace
HWY_INLINE V VShape(D d, V u, kernels::Triangular) {
  return hn::Max(hn::Sub(hn::Set(d, 1.0), hn::Abs(u)), hn::Zero(d));
}
#endif
