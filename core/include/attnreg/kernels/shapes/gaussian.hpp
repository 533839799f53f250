// attnreg: the gaussian kernel's traits (kernel_traits.hpp lists the members).
#ifndef ATTNREG_KERNELS_SHAPES_GAUSSIAN_HPP
#define ATTNREG_KERNELS_SHAPES_GAUSSIAN_HPP

#include "attnreg/kernels/kernel_traits.hpp"

namespace attnreg {
namespace kernels {

/// k(u) = exp(-u^2/2) on the whole line; K is the standard normal density.
struct Gaussian : WholeLineKernel<Gaussian> {
  static constexpr const char* name = "gaussian";
  static constexpr const char* aliases = "normal gauss";
  static constexpr bool exp_quadratic = true;
  static constexpr double constant = 0.39894228040143267794;  // 1/sqrt(2 pi)
  static constexpr double lp_rule_constant = 1.06;
  static double mu2() { return 1.0; }
  static double roughness() { return 1.0 / (2.0 * std::sqrt(kernel_detail::kPi)); }
  ATTNREG_HD static double shape(double u) { return kernel_detail::exp_nonpositive(-0.5 * u * u); }
  static double pdf(double u) { return constant * std::exp(-0.5 * u * u); }
  static double deriv(double u) { return -u * pdf(u); }
  static double cdf(double u) { return 0.5 * std::erfc(-u * 0.70710678118654752440); }
  static double conv(double t, double* deriv) {
    const double v = 0.28209479177387814347 * std::exp(-0.25 * t * t);  // 1 / (2 sqrt(pi))
    if (deriv) *deriv = -0.5 * t * v;
    return v;
  }
  static double dlogk(double u) { return -u; }
  static double psi(double u) { return u * u; }
};

}  // namespace kernels
}  // namespace attnreg
#endif
