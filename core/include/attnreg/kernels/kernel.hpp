// attnreg: kernels for kernel regression, as small value types.
//
// Continuous kernels act on the standardised distance u = (x_j - X_ij) / h_j of one column; a
// multivariate weight is the product over columns, with one bandwidth per column (DESIGN.md §2).
// Every kernel here is a symmetric second-order density, K(u) = c_K k(u), where k is the
// *shape* with k(0) = 1 and c_K makes K integrate to 1:
//
//   name          shape k(u)                support     c_K            mu2 = int u^2 K   R = int K^2
//   gaussian      exp(-u^2/2)               R           1/sqrt(2 pi)   1                 1/(2 sqrt(pi))
//   epanechnikov  1 - u^2                   [-1, 1]     3/4            1/5               3/5
//   uniform       1                         [-1, 1]     1/2            1/3               1/2
//   triangular    1 - |u|                   [-1, 1]     1              1/6               2/3
//   biweight      (1 - u^2)^2               [-1, 1]     15/16          1/7               5/7
//   triweight     (1 - u^2)^3               [-1, 1]     35/32          1/9               350/429
//   tricube       (1 - |u|^3)^3             [-1, 1]     70/81          35/243            175/247
//   cosine        cos(pi u / 2)             [-1, 1]     pi/4           1 - 8/pi^2        pi^2/16
//
// Compact supports are closed: |u| <= 1 belongs to the support (this only matters for the
// uniform kernel, whose shape does not vanish at the edge). Estimators that are ratios of kernel
// sums (local constant, local linear, local polynomial) use the shape k: c_K cancels.
//
// Bandwidth conventions of other packages (h here = the scale in K((x - X_i)/h)):
//   * R np (npreg/npregbw), ckertype = "gaussian": the standard normal density, same h.
//     ckertype = "epanechnikov": np rescales the kernel to unit variance,
//     K_np(u) = 3/(4 sqrt 5) (1 - u^2/5) on |u| < sqrt(5). An np bandwidth h_np therefore
//     corresponds to h = sqrt(5) * h_np here (and h here to h / sqrt(5) in np).
//     ckertype = "uniform": the rectangular kernel on [-1, 1], same h.
//     np's higher-order kernels (ckerorder 4, 6, 8) are not provided.
//   * statsmodels (KernelReg, KDEMultivariate): ckertype "gaussian" is the standard normal and
//     "tricube" is 70/81 (1 - |u|^3)^3 on [-1, 1]: both use the same h as here.
//   * R's density(): its `bw` is the kernel's standard deviation for every kernel, so
//     h = bw / sqrt(mu2(K)) here (e.g. epanechnikov: h = sqrt(5) bw).
//
// Categorical columns (codes: finite integers; for ordered columns the numeric distance
// |x - X_i| between codes is the distance, so pass 0, 1, 2, ... for the levels of an ordered
// factor) use a bandwidth lambda in the kernel's valid range:
//
//   unordered  aitchison_aitken  1 - lambda if x == X_i, lambda / (c - 1) otherwise;
//                                lambda in [0, (c - 1)/c], c = number of levels
//   unordered  li_racine         1 if x == X_i, lambda otherwise; lambda in [0, 1]
//   ordered    wang_van_ryzin    1 - lambda if x == X_i, (1 - lambda)/2 lambda^|x - X_i|
//                                otherwise; lambda in [0, 1) (identically 0 at 1)
//   ordered    li_racine         lambda^|x - X_i| (1 when equal); lambda in [0, 1]
//
// lambda = 0 is the indicator (cell-by-cell estimation); the largest lambda smooths the column
// away (li_racine at 1, aitchison_aitken at (c-1)/c give equal weight to every level). These
// are np's ukertype = "aitchisonaitken" / "liracine" and okertype = "wangvanryzin" /
// "liracine", with np's bandwidth meaning. statsmodels' KDEMultivariate "aitchisonaitken" and
// "wangryzin" are the first and third; KernelReg's "aitchison_aitken_reg" is li_racine
// (unordered) and its "wangryzin_reg" is li_racine (ordered), again with the same lambda.
//
// var_types strings, as np and statsmodels spell them: one character per column, 'c'
// continuous, 'u' unordered, 'o' ordered; spaces are ignored ("ccu o" is four columns).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "attnreg/base/hd.hpp"

namespace attnreg {

enum class KernelType : int {
  gaussian = 0,
  epanechnikov,
  uniform,
  triangular,
  biweight,
  triweight,
  tricube,
  cosine
};

namespace kernel_detail {

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

/// The shape k(u) of each continuous kernel (k(0) = 1). Branch-free so that it vectorises.
ATTNREG_HD double epanechnikov_shape(double u) {
  const double t = 1.0 - u * u;
  return t > 0.0 ? t : 0.0;
}
ATTNREG_HD double uniform_shape(double u) { return (u <= 1.0 && u >= -1.0) ? 1.0 : 0.0; }
ATTNREG_HD double triangular_shape(double u) {
  const double t = 1.0 - (u < 0.0 ? -u : u);
  return t > 0.0 ? t : 0.0;
}
ATTNREG_HD double biweight_shape(double u) {
  const double t = epanechnikov_shape(u);
  return t * t;
}
ATTNREG_HD double triweight_shape(double u) {
  const double t = epanechnikov_shape(u);
  return t * t * t;
}
ATTNREG_HD double tricube_shape(double u) {
  const double a = u < 0.0 ? -u : u;
  double t = 1.0 - a * a * a;
  t = t > 0.0 ? t : 0.0;
  return t * t * t;
}
/// cos(pi u / 2) on [-1, 1] by its Taylor polynomial in x = pi |u| / 2 to degree 20 (the first
/// omitted term, x^22/22! at x = pi/2, is 1.9e-17), so that the loop vectorises without libm.
ATTNREG_HD double cosine_shape(double u) {
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

}  // namespace kernel_detail

/// psi(u) = -u k'(u) / k(u) for |u| inside the support (0 outside): the bandwidth derivative
/// of a kernel weight is h d/dh k(u) = k(u) psi(u) (bandwidth selection, binned.cpp).
inline double kernel_psi(KernelType t, double u) {
  const double u2 = u * u;
  switch (t) {
    case KernelType::gaussian: return u2;
    case KernelType::epanechnikov: {
      const double s = 1.0 - u2;
      return s > 0.0 ? 2.0 * u2 / s : 0.0;
    }
    case KernelType::uniform: return 0.0;
    case KernelType::triangular: {
      const double a = std::fabs(u), s = 1.0 - a;
      return s > 0.0 ? a / s : 0.0;
    }
    case KernelType::biweight: {
      const double s = 1.0 - u2;
      return s > 0.0 ? 4.0 * u2 / s : 0.0;
    }
    case KernelType::triweight: {
      const double s = 1.0 - u2;
      return s > 0.0 ? 6.0 * u2 / s : 0.0;
    }
    case KernelType::tricube: {
      const double a3 = std::fabs(u) * u2, s = 1.0 - a3;
      return s > 0.0 ? 9.0 * a3 / s : 0.0;
    }
    case KernelType::cosine: {
      const double a = std::fabs(u);
      if (a >= 1.0) return 0.0;
      const double x = 1.5707963267948966192 * a;
      return x * std::tan(x);
    }
  }
  return 0.0;
}

/// A continuous kernel: a value type (one enum) with its shape, density and constants.
struct Kernel {
  KernelType type = KernelType::gaussian;

  constexpr Kernel() = default;
  constexpr explicit Kernel(KernelType t) : type(t) {}

  /// Shape k(u), with k(0) = 1 (what the estimators use; the normalising constant cancels).
  ATTNREG_HD double shape(double u) const {
    switch (type) {
      case KernelType::gaussian: return kernel_detail::exp_nonpositive(-0.5 * u * u);
      case KernelType::epanechnikov: return kernel_detail::epanechnikov_shape(u);
      case KernelType::uniform: return kernel_detail::uniform_shape(u);
      case KernelType::triangular: return kernel_detail::triangular_shape(u);
      case KernelType::biweight: return kernel_detail::biweight_shape(u);
      case KernelType::triweight: return kernel_detail::triweight_shape(u);
      case KernelType::tricube: return kernel_detail::tricube_shape(u);
      case KernelType::cosine: return kernel_detail::cosine_shape(u);
    }
    return 0.0;
  }
  /// The density K(u) = c_K k(u) (integrates to 1).
  ATTNREG_HD double operator()(double u) const { return constant() * shape(u); }

  /// Normalising constant c_K.
  ATTNREG_HD double constant() const {
    switch (type) {
      case KernelType::gaussian: return 0.39894228040143267794;  // 1/sqrt(2 pi)
      case KernelType::epanechnikov: return 0.75;
      case KernelType::uniform: return 0.5;
      case KernelType::triangular: return 1.0;
      case KernelType::biweight: return 15.0 / 16.0;
      case KernelType::triweight: return 35.0 / 32.0;
      case KernelType::tricube: return 70.0 / 81.0;
      case KernelType::cosine: return 0.78539816339744830962;  // pi/4
    }
    return 0.0;
  }
  /// mu2(K) = int u^2 K(u) du.
  double mu2() const;
  /// R(K) = int K(u)^2 du (the roughness).
  double roughness() const;
  /// Support radius: 1 for the compact kernels, +infinity for the Gaussian.
  double support() const {
    return type == KernelType::gaussian ? std::numeric_limits<double>::infinity() : 1.0;
  }
  bool compact() const { return type != KernelType::gaussian; }
  /// Lower-case name as accepted by from_name.
  const char* name() const;

  /// Parse a kernel name (case-insensitive; "normal" and "gauss" mean gaussian, "epa" and
  /// "epan" epanechnikov, "rectangular" and "box" uniform, "quartic" biweight). Throws
  /// InvalidArgument naming `arg` and listing the choices.
  static Kernel from_name(const std::string& name, const std::string& arg = "kernel");
  /// All kernel names, in KernelType order.
  static std::vector<std::string> names();
};

/// Column types, as np / statsmodels spell them in var_types strings.
enum class VarType : char { continuous = 'c', unordered = 'u', ordered = 'o' };

/// Parse a var_types string: one of 'c', 'u', 'o' per column (case-insensitive), spaces
/// ignored. An empty string means n_cols continuous columns. Throws InvalidArgument when a
/// character is not c/u/o or the count differs from n_cols (pass n_cols = 0 to skip the count
/// check).
std::vector<VarType> parse_var_types(const std::string& s, std::size_t n_cols,
                                     const std::string& arg = "var_types");
/// The inverse of parse_var_types (no spaces).
std::string format_var_types(const std::vector<VarType>& types);

enum class CategoricalKernelType : int {
  aitchison_aitken = 0,  ///< unordered
  li_racine_unordered,   ///< unordered
  wang_van_ryzin,        ///< ordered
  li_racine_ordered      ///< ordered
};

/// A categorical kernel l(x, X_i; lambda) with its valid bandwidth range (see the file comment).
struct CategoricalKernel {
  CategoricalKernelType type = CategoricalKernelType::aitchison_aitken;

  constexpr CategoricalKernel() = default;
  constexpr explicit CategoricalKernel(CategoricalKernelType t) : type(t) {}

  bool ordered() const {
    return type == CategoricalKernelType::wang_van_ryzin ||
           type == CategoricalKernelType::li_racine_ordered;
  }
  /// Kernel value for codes x (query) and xi (training), bandwidth lambda, and the number of
  /// levels c of the column (used by aitchison_aitken only). 0^0 is taken as 1.
  ATTNREG_HD double operator()(double x, double xi, double lambda, int n_levels) const {
    const double dist = x > xi ? x - xi : xi - x;
    switch (type) {
      case CategoricalKernelType::aitchison_aitken:
        return dist == 0.0 ? 1.0 - lambda : (n_levels > 1 ? lambda / (n_levels - 1) : 0.0);
      case CategoricalKernelType::li_racine_unordered: return dist == 0.0 ? 1.0 : lambda;
      case CategoricalKernelType::wang_van_ryzin:
        return dist == 0.0 ? 1.0 - lambda : 0.5 * (1.0 - lambda) * std::pow(lambda, dist);
      case CategoricalKernelType::li_racine_ordered:
        return dist == 0.0 ? 1.0 : std::pow(lambda, dist);
    }
    return 0.0;
  }
  /// Largest valid lambda for a column with n_levels levels: (c-1)/c for aitchison_aitken,
  /// 1 otherwise (excluded for wang_van_ryzin, which vanishes there). The smallest is 0.
  double max_bandwidth(int n_levels) const {
    if (type == CategoricalKernelType::aitchison_aitken)
      return n_levels > 0 ? static_cast<double>(n_levels - 1) / n_levels : 0.0;
    return 1.0;
  }
  /// Throws InvalidArgument naming `arg` when lambda is outside [0, max_bandwidth(n_levels)]
  /// or not finite.
  void check_bandwidth(double lambda, int n_levels, const std::string& arg) const;
  const char* name() const;

  /// Parse "aitchison_aitken" / "aitchisonaitken" (unordered), "li_racine" / "liracine"
  /// (unordered or ordered, by `ordered`), "wang_van_ryzin" / "wangvanryzin" / "wangryzin"
  /// (ordered). Throws InvalidArgument naming `arg` when the name does not fit the column type.
  static CategoricalKernel from_name(const std::string& name, bool ordered,
                                     const std::string& arg);
};

}  // namespace attnreg
