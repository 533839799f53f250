// attnreg: what every continuous kernel's traits type provides, with the defaults a kernel
// inherits when it has nothing special to say. One traits type per kernel lives in
// kernels/shapes/<name>.hpp; kernels/registry.hpp lists them (see core/README.md, "Adding a
// kernel"). Kernel (kernel.hpp) is the run-time value that dispatches to them once
// (dispatch_kernel in registry.hpp).
//
// Members of a traits type K (static; u is the standardised distance (x - X_i) / h):
//   name, aliases      lower-case name and the other names from_name accepts (space-separated)
//   order              2 for the usual densities, 4 for fourth-order kernels (mu2 = 0)
//   nonnegative        K(u) >= 0 everywhere (paths that need it refuse other kernels)
//   compact            support |u| <= 1 (closed); otherwise the whole line
//   exp_quadratic      k(u) = exp(-u^2/2): the product over columns is exp(-||u||^2/2)
//   constant, mu2, roughness    c_K, int u^2 K, R(K) = int K^2
//   lp_rule_constant   local-polynomial rule-of-thumb constant (Fan & Gijbels 1996, Table 3.2);
//                      0 = none
//   shape(u)           k(u) with k(0) = 1 (ATTNREG_HD: also on the GPU)
//   pdf(u), deriv(u), cdf(u), conv(t, &d)   K, K', int_{-inf}^u K, (K*K)(t) and its derivative
//   dlogk(u)           k'(u) / k(u) where k(u) != 0 (0 elsewhere; marginal effects, tests)
//   psi(u)             -u k'(u) / k(u) (bandwidth derivative h dk/dh = k psi)
//   has_fast_sums, fast_sum_form()   exact sorted-sweep sums (fast_sums.cpp): k and -u k'(u)
//                      as polynomials (or cos/sin times polynomials) on each side of 0
// A vectorised shape for the Highway weight tiles (kernel_tiles-inl.hpp) is optional: a kernel
// header may add `HWY_INLINE V VShape(D d, V u, K)` in a block guarded by
// ATTNREG_KERNEL_VSHAPES; without one the tiles evaluate shape(u) lane by lane.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "attnreg/base/hd.hpp"

namespace attnreg {

namespace kernel_detail {

constexpr double kPi = 3.14159265358979323846;
constexpr double kHalfPi = 1.5707963267948966192;

/// exp(x) for x <= 0, to about 1 ulp, written without tables or library calls so that compilers
/// vectorise it inside `omp simd` loops (and CUDA can use it). Returns exactly 0 for x < -708,
/// where exp(x) is below the smallest normal double; callers that need to know whether all
/// weights underflowed check the row maximum. Cody-Waite reduction x = n ln2 + r, |r| <= ln2/2,
/// then the degree-13 Taylor polynomial of e^r (truncation error < 5e-18 relative), then 2^n
/// built in the exponent field.
ATTNREG_HD double exp_nonpositive(double x) {
  constexpr double kLog2e = 1.4426950408889634074;
  constexpr double kLn2Hi = 6.93147180369123816490e-01;  // ln 2, upper bits (exact n * kLn2Hi)
  constexpr double kLn2Lo = 1.90821492927058770002e-10;  // ln 2 - kLn2Hi
  constexpr double kShift = 6755399441055744.0;          // 1.5 * 2^52: rounds to an integer
  const double xc = x < -708.0 ? -708.0 : x;
  const double t = xc * kLog2e + kShift;
  const double n = t - kShift;  // nearest integer to x / ln 2
  double r = xc - n * kLn2Hi;
  r = r - n * kLn2Lo;
  double p = 1.0 / 6227020800.0;  // 1/13!
  p = p * r + 1.0 / 479001600.0;
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  // 2^n: the low bits of t hold n (t = 1.5 * 2^52 + n exactly), so the biased exponent is
  // (bits(t) - bits(kShift) + 1023) << 52.
  std::int64_t tb, sb;
  std::memcpy(&tb, &t, sizeof tb);
  const double shift = kShift;
  std::memcpy(&sb, &shift, sizeof sb);
  const std::int64_t eb = (tb - sb + 1023) << 52;
  double scale;
  std::memcpy(&scale, &eb, sizeof scale);
  const double v = p * scale;
  return x < -708.0 ? 0.0 : v;
}

/// (1 - u^2)_+, the base of the polynomial compact kernels.
ATTNREG_HD double one_minus_u2(double u) {
  const double t = 1.0 - u * u;
  return t > 0.0 ? t : 0.0;
}

}  // namespace kernel_detail

namespace kernels {

/// One term of a fast-sum form: sum_j c[j] u^j times 1 (tau 0), cos(pi u / 2) (tau 1) or
/// sin(pi u / 2) (tau 2).
struct FastSumTerm {
  int tau = 0;
  int deg = 0;
  double c[10] = {0};
};

inline FastSumTerm fs_poly(int tau, std::initializer_list<double> coef) {
  FastSumTerm t;
  t.tau = tau;
  int j = 0;
  for (double v : coef) t.c[j++] = v;
  t.deg = j - 1;
  return t;
}

/// The shape k and the h-derivative weight -u k'(u) of a compact kernel, as polynomials in u
/// (or cos / sin times a polynomial), separately for u < 0 (left) and u >= 0 (right).
struct FastSumForm {
  bool split = false;   // left and right forms differ (kernels in |u|)
  bool trig = false;    // features cos(pi v / 2) v^j and sin(pi v / 2) v^j
  bool closed = false;  // support |u| <= 1 (uniform) instead of |u| < 1
  std::vector<FastSumTerm> w[2], d[2];  // [side]: 0 left, 1 right
  int max_deg = 0;

  /// The same form on both sides (kernels in u^2).
  static FastSumForm both(std::vector<FastSumTerm> w, std::vector<FastSumTerm> d) {
    FastSumForm f;
    f.w[0] = f.w[1] = std::move(w);
    f.d[0] = f.d[1] = std::move(d);
    return f;
  }
};

/// Defaults shared by every kernel. A kernel derives from CompactKernel<K> (support [-1, 1]) or
/// WholeLineKernel<K> and overrides what differs.
template <class K>
struct KernelBase {
  static constexpr const char* aliases = "";
  static constexpr int order = 2;
  static constexpr bool nonnegative = true;
  static constexpr bool exp_quadratic = false;
  static constexpr bool has_fast_sums = false;
  static constexpr double lp_rule_constant = 0.0;
  /// The density K(u) = c_K k(u).
  static double pdf(double u) { return K::constant * K::shape(u); }
  /// -u k'(u) / k(u), from dlogk.
  static double psi(double u) { return -u * K::dlogk(u); }
  static FastSumForm fast_sum_form() {
    FastSumForm f;
    return f;
  }
};

/// Gauss-Legendre nodes and weights on [-1, 1] (12 points, symmetric: 6 positive nodes).
constexpr double kGLx[6] = {0.1252334085114689154724414, 0.3678314989981801937526915,
                            0.5873179542866174472967024, 0.7699026741943046870368938,
                            0.9041172563704748566784659, 0.9815606342467192506905491};
constexpr double kGLw[6] = {0.2491470458134027850005624, 0.2334925365383548087608499,
                            0.2031674267230659217490645, 0.1600783285433462263346525,
                            0.1069393259953184309602547, 0.0471753363865118271946160};

template <class K>
struct CompactKernel : KernelBase<K> {
  static constexpr bool compact = true;
  static constexpr bool has_fast_sums = true;
  /// int_{-1}^u K, from the kernel's cdf_inside on (-1, 1).
  static double cdf(double u) {
    if (u <= -1.0) return 0.0;
    if (u >= 1.0) return 1.0;
    return K::cdf_inside(u);
  }
  /// (K*K)(t) = int K(s) K(s + t) ds over [max(-1, -1 - t), min(1, 1 - t)], split where either
  /// factor has a kink (s = 0 and s = -t); each piece is a polynomial (or smooth) of low degree,
  /// integrated by 12-point Gauss-Legendre. *deriv (when non-null) gets d/dt.
  static double conv(double t, double* deriv) {
    const double a = std::abs(t);
    if (a >= 2.0) {
      if (deriv) *deriv = 0.0;
      return 0.0;
    }
    const double lo = std::max(-1.0, -1.0 - t), hi = std::min(1.0, 1.0 - t);
    double cuts[4] = {lo, hi, 0.0, -t};
    std::sort(cuts, cuts + 4);
    double v = 0.0, dv = 0.0;
    for (int p = 0; p < 3; ++p) {
      const double x0 = std::max(cuts[p], lo), x1 = std::min(cuts[p + 1], hi);
      if (!(x1 > x0)) continue;
      const double m = 0.5 * (x0 + x1), r = 0.5 * (x1 - x0);
      for (int q = 0; q < 6; ++q) {
        for (int sgn = -1; sgn <= 1; sgn += 2) {
          const double s = m + sgn * r * kGLx[q];
          const double ks = K::constant * K::shape(s);
          v += kGLw[q] * r * ks * (K::constant * K::shape(s + t));
          dv += kGLw[q] * r * ks * K::deriv(s + t);
        }
      }
    }
    if (deriv) *deriv = dv;
    return v;
  }
};

template <class K>
struct WholeLineKernel : KernelBase<K> {
  static constexpr bool compact = false;
};

}  // namespace kernels
}  // namespace attnreg
