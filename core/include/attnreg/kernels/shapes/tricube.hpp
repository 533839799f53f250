// attnreg: the tricube kernel's traits (kernel_traits.hpp lists the members).
#ifndef ATTNREG_KERNELS_SHAPES_TRICUBE_HPP
#define ATTNREG_KERNELS_SHAPES_TRICUBE_HPP

#include "attnreg/kernels/kernel_traits.hpp"

namespace attnreg {
namespace kernels {

/// k(u) = (1 - |u|^3)^3 on [-1, 1].
struct Tricube : CompactKernel<Tricube> {
  static constexpr const char* name = "tricube";
  static constexpr double constant = 70.0 / 81.0;
  static double mu2() { return 35.0 / 243.0; }
  static double roughness() { return 175.0 / 247.0; }
  ATTNREG_HD static double shape(double u) {
    const double a = u < 0.0 ? -u : u;
    double t = 1.0 - a * a * a;
    t = t > 0.0 ? t : 0.0;
    return t * t * t;
  }
  static double deriv(double u) {
    const double a = std::abs(u), t = 1.0 - a * a * a;
    return a < 1.0 ? constant * (-9.0 * u * a * t * t) : 0.0;
  }
  static double cdf_inside(double u) {
    const double a = std::abs(u), a3 = a * a * a;
    const double v = 70.0 / 81.0 * (a - 0.75 * a * a3 + 3.0 / 7.0 * a * a3 * a3 -
                                     0.1 * a * a3 * a3 * a3);
    return u < 0.0 ? 0.5 - v : 0.5 + v;
  }
  static double dlogk(double u) {
    const double a = std::fabs(u);
    return a < 1.0 ? -9.0 * u * a / (1.0 - a * a * a) : 0.0;
  }
  static double psi(double u) {
    const double a3 = std::fabs(u) * u * u, s = 1.0 - a3;
    return s > 0.0 ? 9.0 * a3 / s : 0.0;
  }
  static FastSumForm fast_sum_form() {
    FastSumForm f;
    f.split = true;  // (1 - |u|^3)^3
    f.w[0] = {fs_poly(0, {1, 0, 0, 3, 0, 0, 3, 0, 0, 1})};
    f.w[1] = {fs_poly(0, {1, 0, 0, -3, 0, 0, 3, 0, 0, -1})};
    f.d[0] = {fs_poly(0, {0, 0, 0, -9, 0, 0, -18, 0, 0, -9})};
    f.d[1] = {fs_poly(0, {0, 0, 0, 9, 0, 0, -18, 0, 0, 9})};
    return f;
  }
};

}  // namespace kernels
}  // namespace attnreg
#endif

#ifdef ATTNREG_KERNEL_VSHAPES  // per Highway target, inside kernel_tiles-inl.hpp's namespace
HWY_INLINE V VShape(D d, V u, kernels::Tricube) {
  const V a = hn::Abs(u);
  const V t = hn::Max(hn::NegMulAdd(hn::Mul(a, a), a, hn::Set(d, 1.0)), hn::Zero(d));
  return hn::Mul(hn::Mul(t, t), t);
}
#endif
