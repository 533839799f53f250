// attnreg: the uniform kernel's traits (kernel_traits.hpp lists the members).
#ifndef ATTNREG_KERNELS_SHAPES_UNIFORM_HPP
#define ATTNREG_KERNELS_SHAPES_UNIFORM_HPP

#include "attnreg/kernels/kernel_traits.hpp"

namespace attnreg {
namespace kernels {

/// k(u) = 1 on the closed interval [-1, 1].
struct Uniform : CompactKernel<Uniform> {
  static constexpr const char* name = "uniform";
  static constexpr const char* aliases = "rectangular box";
  static constexpr double constant = 0.5;
  static constexpr double lp_rule_constant = 1.843;
  static double mu2() { return 1.0 / 3.0; }
  static double roughness() { return 1.0 / 2.0; }
  ATTNREG_HD static double shape(double u) { return (u <= 1.0 && u >= -1.0) ? 1.0 : 0.0; }
  static double deriv(double) { return 0.0; }
  static double cdf_inside(double u) { return 0.5 * (u + 1.0); }
  /// (2 - |t|) / 4: its derivative is not an integral.
  static double conv(double t, double* deriv) {
    const double a = std::abs(t);
    if (a >= 2.0) {
      if (deriv) *deriv = 0.0;
      return 0.0;
    }
    if (deriv) *deriv = t > 0 ? -0.25 : (t < 0 ? 0.25 : 0.0);
    return 0.25 * (2.0 - a);
  }
  static double dlogk(double) { return 0.0; }
  static double psi(double) { return 0.0; }
  static FastSumForm fast_sum_form() {
    FastSumForm f = FastSumForm::both({fs_poly(0, {1})}, {});
    f.closed = true;
    return f;
  }
};

}  // namespace kernels
}  // namespace attnreg
#endif

#ifdef ATTNREG_KERNEL_VSHAPES  // per Highway target, inside kernel_tiles-inl.hpp's namespace
HWY_INLINE V VShape(D d, V u, kernels::Uniform) {
  const V one = hn::Set(d, 1.0);
  return hn::IfThenElseZero(hn::Le(hn::Abs(u), one), one);
}
#endif
