// attnreg: kernels for kernel regression, as small value types.
//
// Continuous kernels act on the standardised distance u = (x_j - X_ij) / h_j of one column; a
// multivariate weight is the product over columns, with one bandwidth per column (core/README.md,
// Conventions). Every kernel is symmetric and integrates to 1, K(u) = c_K k(u), where k is the
// *shape* with k(0) = 1. Each kernel is a traits type in its own header, kernels/shapes/<name>.hpp,
// listed in kernels/registry.hpp (kernel_traits.hpp says what a traits type holds). The
// second-order densities (kernels of higher order, with mu2 = 0, are in shapes/ beside them):
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
//     np's higher-order kernels: ckertype = "gaussian", ckerorder = 4 is gaussian4, same h
//     (shapes/gaussian4.hpp); orders 6 and 8 are not provided.
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
//   ordered    li_racine_normalized
//                                lambda^|x - X_i| (1 - lambda) / (1 + lambda); lambda in [0, 1)
//                                (identically 0 at 1)
//
// lambda = 0 is the indicator (cell-by-cell estimation); the largest lambda smooths the column
// away (li_racine at 1, aitchison_aitken at (c-1)/c give equal weight to every level). These
// are np's ukertype = "aitchisonaitken" / "liracine" and okertype = "wangvanryzin" /
// "liracine", with np's bandwidth meaning. statsmodels' KDEMultivariate "aitchisonaitken" and
// "wangryzin" are the first and third; KernelReg's "aitchison_aitken_reg" is li_racine
// (unordered) and its "wangryzin_reg" is li_racine (ordered), again with the same lambda.
//
// Which ordered kernels sum to one. Over all integer codes z (not only the observed levels),
// sum_z lambda^|z - X_i| = (1 + lambda) / (1 - lambda), so li_racine_normalized sums to one for
// every X_i and lambda < 1, whatever the observed support, and so does wang_van_ryzin; li_racine
// does not. A density (or distribution) in an ordered column needs one of the two: it is a
// probability mass function on the integers, positive also at integers between and beyond the
// observed levels. li_racine_normalized is Li and Racine's ordered kernel (Li and Racine 2007,
// "Nonparametric Econometrics", Princeton UP) divided by that sum: R np's
// kernel "nliracine" (np 0.70-4, help page np.kernels: "normalized Li-Racine ordered kernel";
// not np's "racineliyan", which normalises over the observed support), which np's npudens and
// the response of npcdens / npcdist use when okertype = "liracine" (np's default). On the
// conditioning columns of a conditional estimate and in a regression the factor
// (1 - lambda) / (1 + lambda) is common to every row and cancels, so li_racine and
// li_racine_normalized give the same estimate there (regressions refuse the normalised name).
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
#include "attnreg/kernels/registry.hpp"

namespace attnreg {

/// psi(u) = -u k'(u) / k(u) for |u| inside the support (0 outside): the bandwidth derivative
/// of a kernel weight is h d/dh k(u) = k(u) psi(u) (bandwidth selection, binned.cpp).
inline double kernel_psi(KernelType t, double u) {
  return dispatch_kernel(t, [u](auto k) { return decltype(k)::psi(u); });
}

/// k'(u) / k(u) where k(u) != 0, 0 elsewhere (the uniform kernel's shape is flat; the
/// triangular kernel's kink at 0 is given derivative 0). Marginal effects, specification tests.
inline double kernel_dlogk(KernelType t, double u) {
  return dispatch_kernel(t, [u](auto k) { return decltype(k)::dlogk(u); });
}

namespace kernel_detail {
struct ShapeAt {
  double u;
  template <class K>
  ATTNREG_HD double operator()(K) const { return K::shape(u); }
};
struct ConstantOf {
  template <class K>
  ATTNREG_HD double operator()(K) const { return K::constant; }
};
}  // namespace kernel_detail

/// A continuous kernel: a value type (one enum) with its shape, density and constants, each
/// read from the kernel's traits (kernels/shapes/<name>.hpp) through dispatch_kernel.
struct Kernel {
  KernelType type = KernelType::gaussian;

  constexpr Kernel() = default;
  constexpr explicit Kernel(KernelType t) : type(t) {}

  /// Shape k(u), with k(0) = 1 (what the estimators use; the normalising constant cancels).
  ATTNREG_HD double shape(double u) const {
    return dispatch_kernel(type, kernel_detail::ShapeAt{u});
  }
  /// The density K(u) = c_K k(u) (integrates to 1).
  ATTNREG_HD double operator()(double u) const { return constant() * shape(u); }

  /// Normalising constant c_K.
  ATTNREG_HD double constant() const { return dispatch_kernel(type, kernel_detail::ConstantOf{}); }
  /// mu2(K) = int u^2 K(u) du (0 for kernels of order > 2).
  double mu2() const;
  /// R(K) = int K(u)^2 du (the roughness).
  double roughness() const;
  /// Support radius: 1 for the compact kernels, +infinity otherwise.
  double support() const {
    return compact() ? 1.0 : std::numeric_limits<double>::infinity();
  }
  bool compact() const;
  /// Order of the kernel: 2, or 4 for the fourth-order Gaussian.
  int order() const;
  /// K(u) >= 0 for every u.
  bool nonnegative() const;
  /// Lower-case name as accepted by from_name.
  const char* name() const;
  /// Throws InvalidArgument naming `arg` when the kernel takes negative values, saying that
  /// `what` needs nonnegative weights and naming second-order kernels as the alternative.
  void require_nonnegative(const std::string& what, const std::string& arg = "kernel") const;
  /// Throws InvalidArgument naming `arg` when the kernel is not of order 2 (plug-in constants
  /// divide by mu2(K), which is 0 for higher-order kernels).
  void require_second_order(const std::string& what, const std::string& arg = "kernel") const;

  /// Parse a kernel name (case-insensitive; each kernel's aliases, e.g. "normal" and "gauss"
  /// mean gaussian, "epa" and "epan" epanechnikov, "rectangular" and "box" uniform, "quartic"
  /// biweight). Throws InvalidArgument naming `arg` and listing the choices.
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
  li_racine_ordered,     ///< ordered
  li_racine_normalized   ///< ordered: li_racine_ordered times (1 - lambda) / (1 + lambda)
};

/// A categorical kernel l(x, X_i; lambda) with its valid bandwidth range (see the file comment).
struct CategoricalKernel {
  CategoricalKernelType type = CategoricalKernelType::aitchison_aitken;

  constexpr CategoricalKernel() = default;
  constexpr explicit CategoricalKernel(CategoricalKernelType t) : type(t) {}

  bool ordered() const {
    return type == CategoricalKernelType::wang_van_ryzin ||
           type == CategoricalKernelType::li_racine_ordered ||
           type == CategoricalKernelType::li_racine_normalized;
  }
  /// Sums to one over the integer codes for every training code and lambda in its range (the
  /// kernel a density's own ordered or unordered column needs; see the file comment).
  bool sums_to_one() const {
    return type == CategoricalKernelType::aitchison_aitken ||
           type == CategoricalKernelType::wang_van_ryzin ||
           type == CategoricalKernelType::li_racine_normalized;
  }
  /// The range of lambda is open at the top (the kernel vanishes identically at 1).
  bool open_top() const {
    return type == CategoricalKernelType::wang_van_ryzin ||
           type == CategoricalKernelType::li_racine_normalized;
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
      case CategoricalKernelType::li_racine_normalized:
        return (dist == 0.0 ? 1.0 : std::pow(lambda, dist)) * ((1.0 - lambda) / (1.0 + lambda));
    }
    return 0.0;
  }
  /// Largest valid lambda for a column with n_levels levels: (c-1)/c for aitchison_aitken,
  /// 1 otherwise (excluded for wang_van_ryzin and li_racine_normalized, which vanish there).
  /// The smallest is 0.
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
  /// and "li_racine_normalized" / "li_racine_normalised" / "nliracine" (np's name) (ordered);
  /// underscores, hyphens and case are ignored. Throws InvalidArgument naming `arg` when the name does not fit the column type.
  static CategoricalKernel from_name(const std::string& name, bool ordered,
                                     const std::string& arg);
};

}  // namespace attnreg
