// attnreg: kernel density, conditional density, conditional distribution and conditional
// quantile estimation for mixed continuous / categorical data (R np's npudens, npcdens,
// npcdist and npqreg), with likelihood and least-squares cross-validation and the
// normal-reference rule for the bandwidths.
//
// Product kernels. For a row z with columns of type 'c', 'u', 'o' (kernel.hpp) and bandwidths
// (h or lambda per column), the kernel between z and a training row Z_i is
//     K(z, Z_i) = prod_{c} K((z_j - Z_ij) / h_j) / h_j * prod_{u, o} l_j(z_j, Z_ij; lambda_j)
// with K the continuous kernel *density* (integrates to 1; kernel.hpp's c_K k(u)) and l_j the
// categorical kernel: Aitchison and Aitken (1976) for unordered columns; for ordered ones the
// normalised Li-Racine kernel lambda^|d| (1 - lambda) / (1 + lambda) (R np's default on a
// density's own ordered column, its "nliracine") or Wang and van Ryzin (1981) (statsmodels'
// KDEMultivariate). Both sum to one over all the integers (kernel.hpp): the estimate of an
// ordered column is a probability mass function on the integers, so it is defined (and
// positive) at codes between and beyond the observed levels, which may be queried. The plain
// Li-Racine kernels do not sum to one and are refused for a density's own columns; on the
// conditioning columns of the conditional kinds any kernel is accepted (it cancels in the
// ratio). The distribution of an ordered y sums the kernel over all integers z <= y for the
// normalised Li-Racine kernel (np's npcdist) and over the observed levels z <= y for
// Wang-van Ryzin; the cv_ls convolution likewise (all integers / observed levels).
//
// Estimators (n training rows, counts c_i = 1):
//   density               f(x)   = (1/n) sum_i K(x, X_i)
//   conditional density   f(y|x) = sum_i Kx(x, X_i) Ky(y, Y_i) / sum_i Kx(x, X_i)
//   conditional CDF       F(y|x) = sum_i Kx(x, X_i) G(y, Y_i) / sum_i Kx(x, X_i)
//                         G the product over y columns of the integrated kernel
//                         int_{-inf}^{(y - Y)/h} K (continuous) or sum_{levels z <= y} l(z, Y)
//                         (ordered), as np's npcdist
//   conditional quantile  q_tau(x) = inf { y : F(y|x) >= tau }, one continuous y, found by
//                         bisection on the monotone F (np's npqreg)
//
// Bandwidth selection (theta = log h for continuous columns, lambda for categorical ones,
// projected L-BFGS from several starts, exact gradients):
//   cv_ml  minus the leave-one-out log likelihood, -sum_i log f_{-i}(X_i) with
//          f_{-i}(X_i) = (1/(n-1)) sum_{k != i} K(X_i, X_k) (density), and
//          -sum_i log f_{-i}(Y_i | X_i) (conditional density); np's cv.ml, statsmodels'
//          loo_likelihood (Li and Racine 2007, ch. 1 and 5).
//   cv_ls  density: the integrated squared error up to a constant,
//            (1/n^2) sum_{i,k} Kbar(X_i, X_k) - (2/(n(n-1))) sum_i sum_{k != i} K(X_i, X_k)
//          with Kbar the convolution kernel (int K(z - a) K(z - b) dz per continuous column,
//          sum over the levels z of l(z, a) l(z, b) per categorical column) (Li and Racine
//          2007, eq. 1.44 and sec. 4.5);
//          conditional density: Hall, Racine and Li (2004, JASA 99, eq. 2.2),
//            (1/n) sum_l [ G_{-l} / mu_{-l}^2 - 2 f_{-l}(X_l, Y_l) / mu_{-l} ],
//            G_{-l} = sum_{i,j != l} Kx(X_l, X_i) Kx(X_l, X_j) Kbar_y(Y_i, Y_j),
//            mu_{-l} = sum_{i != l} Kx(X_l, X_i), f_{-l}(X_l, Y_l) = sum_{i != l} Kx Ky;
//          conditional distribution: Li, Lin and Racine (2013, JBES 31, eq. 2.4) with the
//            empirical distribution of Y as the weight, as np's npcdistbw:
//            (1/n^2) sum_l sum_j ( 1(Y_l <= Y_j) - F_{-l}(Y_j | X_l) )^2
//          (Gaussian G taken as 0 / 1 beyond 8.5 bandwidths, where it is below 1e-17).
//   normal_reference  h_j = (4/3)^(1/5) min(sd_j, IQR_j / 1.349) n^(-1/(4 + q)) delta(K) / delta(phi)
//          for each continuous column (q continuous columns in all, x and y together; np's
//          constants: (4/3)^(1/5) = 1.0592 is Silverman's 1.06 unrounded, 1.348979500392163),
//          delta the canonical-bandwidth constant (R(K) / mu2(K)^2)^(1/5) (Marron and Nolan
//          1988); categorical columns get lambda = 0 (cell frequencies).
//
// Ties: identical rows are grouped once (distinct_rows.hpp) and every sum runs over distinct
// rows with their counts, so cv_ml and the density cv_ls cost O(distinct pairs); the
// conditional cv_ls objectives are triple sums, computed as O(distinct x values * distinct
// rows * distinct y values). Sums are taken in a fixed order with parallel loops over
// independent outputs: results do not depend on the number of threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attnreg/base/arma.hpp"
#include "attnreg/kernels/kernel.hpp"
#include "attnreg/solve/optimize.hpp"

namespace attnreg {

enum class DensityMethod : int { cv_ml = 0, cv_ls, normal_reference };

/// Parse "cv_ml" / "cv.ml", "cv_ls" / "cv.ls", "normal_reference" / "normal-reference" /
/// "rot". Throws InvalidArgument naming `arg`.
DensityMethod density_method_from_name(const std::string& name,
                                       const std::string& arg = "bandwidth");
const char* density_method_name(DensityMethod m);

enum class DensityKind : int {
  density = 0,               ///< f(x)
  conditional_density,       ///< f(y|x)
  conditional_distribution   ///< F(y|x)
};

struct DensityOptions {
  Kernel kernel{KernelType::gaussian};
  CategoricalKernel unordered{CategoricalKernelType::aitchison_aitken};
  /// Ordered columns of X (every column of an unconditional density). The Python and R faces
  /// pass np's defaults (li_racine_normalized for a density, li_racine for conditioning
  /// columns); the C++ default is kept for existing callers.
  CategoricalKernel ordered{CategoricalKernelType::wang_van_ryzin};
  /// Ordered columns of y (conditional kinds): its kernel must sum to one over the integers
  /// (li_racine_normalized, the faces' default, or wang_van_ryzin).
  CategoricalKernel ordered_y{CategoricalKernelType::wang_van_ryzin};
  int n_starts = 3;          ///< starting points of the search (>= 1)
  std::uint64_t seed = 0;    ///< random starts are reproducible from this
  int n_threads = 0;         ///< 0 = OpenMP default
  MinimizeOptions minimize{};
};

struct DensityBandwidthResult {
  arma::vec bandwidth;   ///< per column, x columns then y columns
  double objective = 0;  ///< cv_ml / cv_ls objective at `bandwidth` (NaN for normal_reference)
  std::string method;
  int n_evals = 0;
  bool converged = false;
  std::string message;
  arma::vec lower, upper;  ///< search box (bandwidth units)
  /// Per column: -1 / +1 when a continuous bandwidth ended at the lower / upper end of the
  /// box (then converged is false and message says so), 0 otherwise.
  std::vector<int> at_bound;
};

/// Training data of one estimator: X (conditioning columns; for `density` the only data) and
/// Y (responses; empty for `density`), with their column types. Validates (names the
/// argument): finite values, integer codes in categorical columns, n >= 2, Y rows match X,
/// categorical kernels that sum to one, Y types allowed for the kind.
class DensityData {
 public:
  DensityData(DensityKind kind, const arma::mat& X, const std::string& x_types,
              const arma::mat& Y, const std::string& y_types, const DensityOptions& opt);
  DensityKind kind() const { return kind_; }
  const arma::mat& X() const { return X_; }
  const arma::mat& Y() const { return Y_; }
  std::size_t n() const { return X_.n_rows; }
  /// Number of bandwidths: columns of X plus columns of Y.
  std::size_t n_bandwidths() const { return X_.n_cols + Y_.n_cols; }
  const std::vector<VarType>& types() const { return types_; }  ///< x then y
  const DensityOptions& options() const { return opt_; }
  /// Check a bandwidth vector (length, positivity, categorical ranges), naming `arg`.
  void check_bandwidth(const arma::vec& bw, const std::string& arg) const;

 private:
  DensityKind kind_;
  arma::mat X_, Y_;
  std::vector<VarType> types_;
  DensityOptions opt_;
};

/// Estimates at query rows (Xq for density; Xq and Yq for the conditional kinds), one value
/// per row. Conditional kinds throw NumericalError naming the row when no training point has
/// positive x-weight there (compact kernels far from the data).
arma::vec density_evaluate(const DensityData& data, const arma::vec& bandwidth,
                           const arma::mat& Xq, const arma::mat& Yq = arma::mat());

/// Conditional quantiles q_tau(x) for each query row of Xq (kind conditional_distribution,
/// one continuous y column), tau in (0, 1). Bisection to 1e-12 of the data's y scale.
arma::vec conditional_quantile(const DensityData& data, const arma::vec& bandwidth,
                               const arma::mat& Xq, const arma::vec& tau);

/// The cross-validation objective of `method` (cv_ml or cv_ls) for the data's kind, with the
/// exact gradient with respect to theta (d/d log h for continuous columns, d/d lambda for
/// categorical ones) when grad is non-null. +inf when some leave-one-out estimate is zero.
class DensityObjective {
 public:
  DensityObjective(const DensityData& data, DensityMethod method);
  double operator()(const arma::vec& bandwidth, arma::vec* grad = nullptr) const;
  const arma::vec& lower() const { return lower_; }
  const arma::vec& upper() const { return upper_; }
  /// Number of distinct training rows (x and y together).
  std::size_t n_unique() const;

  struct Impl;

 private:
  const DensityData* data_;
  DensityMethod method_;
  arma::vec lower_, upper_;
  std::shared_ptr<Impl> impl_;
};

/// Normal-reference bandwidths (see the file comment). Throws InvalidArgument naming `arg`
/// when no column is continuous.
arma::vec density_normal_reference(const DensityData& data, const std::string& arg = "bandwidth");

/// Select bandwidths by `method`. Throws InvalidArgument for bad input and NumericalError
/// when the objective is undefined everywhere the search went.
DensityBandwidthResult select_density_bandwidth(const DensityData& data, DensityMethod method);

}  // namespace attnreg
