// attnreg: the biweight kernel's traits (kernel_traits.hpp lists the members).
#ifndef ATTNREG_KERNELS_SHAPES_BIWEIGHT_HPP
#define ATTNREG_KERNELS_SHAPES_BIWEIGHT_HPP

#include "attnreg/kernels/kernel_traits.hpp"

namespace attnreg {
namespace kernels {

/// k(u) = (1 - u^2)^2 on [-1, 1].
struct Biweight : CompactKernel<Biweight> {
  static constexpr const char* name = "biweight";
  static constexpr const char* aliases = "quartic";
  static constexpr double constant = 15.0 / 16.0;
  static double mu2() { return 1.0 / 7.0; }
  static double roughness() { return 5.0 / 7.0; }
  ATTNREG_HD static double shape(double u) {
    const double t = kernel_detail::one_minus_u2(u);
    return t * t;
  }
  static double deriv(double u) {
    return std::abs(u) < 1.0 ? constant * (-4.0 * u * (1.0 - u * u)) : 0.0;
  }
  static double cdf_inside(double u) {
    const double u2 = u * u;
    return 0.5 + 15.0 / 16.0 * (u - 2.0 * u * u2 / 3.0 + u * u2 * u2 / 5.0);
  }
  static double dlogk(double u) { return std::fabs(u) < 1.0 ? -4.0 * u / (1.0 - u * u) : 0.0; }
  static double psi(double u) {
    const double u2 = u * u, s = 1.0 - u2;
    return s > 0.0 ? 4.0 * u2 / s : 0.0;
  }
  static FastSumForm fast_sum_form() {
    return FastSumForm::both({fs_poly(0, {1, 0, -2, 0, 1})}, {fs_poly(0, {0, 0, 4, 0, -4})});
  }
};

}  // namespace kernels
}  // namespace attnreg
#endif

#ifdef ATTNREG_KERNEL_VSHAPES  // per Highway target, inside kernel_tiles-inl.hpp's namespace
HWY_INLINE V VShape(D d, V u, kernels::Biweight) {
  const V t = VShape(d, u, kernels::Epanechnikov{});
  return hn::Mul(t, t);
}
#endif
