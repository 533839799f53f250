// attnreg: the triweight kernel's traits (kernel_traits.hpp lists the members).
#ifndef ATTNREG_KERNELS_SHAPES_TRIWEIGHT_HPP
#define ATTNREG_KERNELS_SHAPES_TRIWEIGHT_HPP

#include "attnreg/kernels/kernel_traits.hpp"

namespace attnreg {
namespace kernels {

/// k(u) = (1 - u^2)^3 on [-1, 1].
struct Triweight : CompactKernel<Triweight> {
  static constexpr const char* name = "triweight";
  static constexpr double constant = 35.0 / 32.0;
  static double mu2() { return 1.0 / 9.0; }
  static double roughness() { return 350.0 / 429.0; }
  ATTNREG_HD static double shape(double u) {
    const double t = kernel_detail::one_minus_u2(u);
    return t * t * t;
  }
  static double deriv(double u) {
    const double t = 1.0 - u * u;
    return std::abs(u) < 1.0 ? constant * (-6.0 * u * t * t) : 0.0;
  }
  static double cdf_inside(double u) {
    const double u2 = u * u;
    return 0.5 + 35.0 / 32.0 * (u - u * u2 + 0.6 * u * u2 * u2 - u * u2 * u2 * u2 / 7.0);
  }
  static double dlogk(double u) { return std::fabs(u) < 1.0 ? -6.0 * u / (1.0 - u * u) : 0.0; }
  static double psi(double u) {
    const double u2 = u * u, s = 1.0 - u2;
    return s > 0.0 ? 6.0 * u2 / s : 0.0;
  }
  static FastSumForm fast_sum_form() {
    return FastSumForm::both({fs_poly(0, {1, 0, -3, 0, 3, 0, -1})},
                             {fs_poly(0, {0, 0, 6, 0, -12, 0, 6})});
  }
};

}  // namespace kernels
}  // namespace attnreg
#endif

#ifdef ATTNREG_KERNEL_VSHAPES  // per Highway target, inside kernel_tiles-inl.hpp's namespace
HWY_INLINE V VShape(D d, V u, kernels::Triweight) {
  const V t = VShape(d, u, kernels::Epanechnikov{});
  return hn::Mul(hn::Mul(t, t), t);
}
#endif
