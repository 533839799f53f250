// attnreg: the epanechnikov kernel's traits (kernel_traits.hpp lists the members).
#ifndef ATTNREG_KERNELS_SHAPES_EPANECHNIKOV_HPP
#define ATTNREG_KERNELS_SHAPES_EPANECHNIKOV_HPP

#include "attnreg/kernels/kernel_traits.hpp"

namespace attnreg {
namespace kernels {

/// k(u) = 1 - u^2 on [-1, 1].
struct Epanechnikov : CompactKernel<Epanechnikov> {
  static constexpr const char* name = "epanechnikov";
  static constexpr const char* aliases = "epa epan";
  static constexpr double constant = 0.75;
  static constexpr double lp_rule_constant = 2.34;
  static double mu2() { return 1.0 / 5.0; }
  static double roughness() { return 3.0 / 5.0; }
  ATTNREG_HD static double shape(double u) { return kernel_detail::one_minus_u2(u); }
  static double deriv(double u) { return std::abs(u) < 1.0 ? constant * (-2.0 * u) : 0.0; }
  static double cdf_inside(double u) { return 0.5 + 0.75 * (u - u * u * u / 3.0); }
  static double dlogk(double u) { return std::fabs(u) < 1.0 ? -2.0 * u / (1.0 - u * u) : 0.0; }
  static double psi(double u) {
    const double u2 = u * u, s = 1.0 - u2;
    return s > 0.0 ? 2.0 * u2 / s : 0.0;
  }
  static FastSumForm fast_sum_form() {
    return FastSumForm::both({fs_poly(0, {1, 0, -1})}, {fs_poly(0, {0, 0, 2})});
  }
};

}  // namespace kernels
}  // namespace attnreg
#endif

#ifdef ATTNREG_KERNEL_VSHAPES  // per Highway target, inside kernel_tiles-inl.hpp's namespace
HWY_INLINE V VShape(D d, V u, kernels::Epanechnikov) {
  return hn::Max(hn::NegMulAdd(u, u, hn::Set(d, 1.0)), hn::Zero(d));
}
#endif
