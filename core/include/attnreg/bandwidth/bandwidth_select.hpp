// attnreg: data-driven bandwidths for local constant (Nadaraya-Watson) and local linear
// regression, any kernel, mixed continuous / categorical data (core/README.md, Conventions
// selection").
//
// Objectives (n training rows, L the smoother matrix of the fit, L_ii = l_i(x_i)):
//   cv_ls  CV(h)   = (1/n) sum_i (y_i - m_{-i}(x_i))^2, m_{-i} the exact refit without row i
//                    (for the omega-scaled ridge leaving i out also lowers the penalty; the
//                    objective is built from the leave-one-out moments, as
//                    LocalPolynomial::loo_fitted() is, so the two agree for every ridge);
//   aic    AICc(h) = ln(sigma^2) + (1 + tr L / n) / (1 - (tr L + 2) / n), sigma^2 = RSS / n
//                    (Hurvich, Simonoff and Tsai 1998, eq. 4; R np's bwmethod = "cv.aic");
//   gcv    GCV(h)  = n RSS / (n - tr L)^2 (Craven and Wahba 1979);
//   rot    normal-reference rule per continuous column,
//                    h_j = 1.06 min(sd_j, IQR_j / 1.349) n^(-1/(4 + q)) * (delta(K) / delta(phi)),
//                    delta(K) = (R(K) / mu2(K)^2)^(1/5) the canonical bandwidth (Marron and
//                    Nolan 1988), q the number of continuous columns (no categorical columns);
//   dpi    Ruppert-Sheather-Wand direct plug-in (plugin_bandwidth.hpp; 1-D, Gaussian, ll).
//
// Search parameters theta: log h_j for continuous columns, lambda_j itself for categorical
// columns (box bounds inside the kernel's range). The objective and its exact gradient come
// from one pass over the pairs (GradientSink in bandwidth_gradient.cpp; the derivation is written
// there); the minimiser is optimize.hpp's projected L-BFGS from several starts.
//
// Weights (observation weights w_i > 0; rows of weight 0 are dropped). They enter the local
// fits as they do in LocalPolynomial (each kernel weight multiplied by w_k) and the criterion as
//   CV_w(h) = sum_i w_i (y_i - m_{-i}(x_i))^2 / sum_i w_i,
// where m_{-i} is the weighted fit without observation i: leaving i out removes all of its
// weight (sampling or precision weights; R np's npregbw takes no weights). So integer weights
// are not the same as repeating rows: in a repeated data set the leave-one-out fit keeps the
// other copies of row i. aic and gcv use the weighted RSS over sum w_i as sigma^2 and n, the
// number of rows, in their penalties. Equal weights give the unweighted criterion exactly.
//
// Floor of the search box (continuous h_j): the estimator's own limit of definition, not a
// heuristic. Local constant: every leave-one-out fit keeps one neighbour whose weight the engine
// accepts (compact kernels: within h; the Gaussian: within sqrt(2 ln(1/kTinyWeight)) ~ 36.5 h,
// beyond which all weights underflow); local linear: every leave-one-out local design keeps two
// distinct design values and, for the Gaussian, a smallest equilibrated Cholesky pivot >= 1e-8
// (the fit keeps 8 of its 16 digits). Derived per column from the sorted distinct values and
// their counts (definition_floor in bandwidth_floor.cpp, with the closed form); a repeated own
// value counts as a neighbour (the other rows of its tie stay in the leave-one-out fit). The
// search then checks the objective at each column's floor (other columns at their start) and
// raises the floor by bisection to where the objective is defined, and after the search
// compares the objective at the floor with the optimum found (on discrete data the objective
// approaches the cell-means value on a plateau; the floor wins ties). With min_neighbors = k > 0
// the floor is nprobust's bwcheck guard instead: the largest distance to the k-th nearest other
// distinct value, times 1 for compact kernels and 1/3 for the Gaussian. Both are per-column
// necessary conditions; a multivariate bandwidth at which some leave-one-out fit does not exist
// gets objective +inf and the line search steps back. No returned bandwidth is ever <= 0,
// infinite or out of range.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "attnreg/base/arma.hpp"
#include "attnreg/kernels/binned.hpp"
#include "attnreg/base/option_spec.hpp"
#include "attnreg/kernels/kernel.hpp"
#include "attnreg/kernels/kernel_pairs.hpp"
#include "attnreg/solve/optimize.hpp"

namespace attnreg {

enum class BandwidthMethod : int { cv_ls = 0, aic, gcv, rot, dpi };

/// Parse "cv_ls" / "cv.ls", "aic" / "cv.aic", "gcv", "rot", "dpi" (case-insensitive). Throws
/// InvalidArgument naming `arg` and listing the choices.
BandwidthMethod bandwidth_method_from_name(const std::string& name,
                                           const std::string& arg = "method");
const char* bandwidth_method_name(BandwidthMethod m);

struct BandwidthSelectOptions {
  int degree = spec::bandwidth::degree;  ///< 0 = local constant (lc), 1 = local linear (ll)
  BandwidthMethod method = BandwidthMethod::cv_ls;
  /// Kernels, column types, pair algorithm, truncation and threads (kernel_pairs.hpp).
  KernelSpec kernel;
  double ridge = spec::bandwidth::ridge;  ///< local-linear ridge (Zuo et al. 2025, arXiv:2510.01450, eq. 6), scaled by omega
  int n_starts = spec::bandwidth::n_starts;  ///< starting points of the search (>= 1)
  /// First starting point (bandwidths, length d; clamped into the search box); empty = the
  /// normal-reference bandwidths. With grid_size = 0 and n_starts = 1 the search is a local
  /// refinement from here (used to re-select bandwidths on bootstrap samples).
  arma::vec start;
  std::uint64_t seed = spec::bandwidth::seed;  ///< random starts are reproducible from this
  /// Observation weights (length n, finite, >= 0, not all 0; empty = unweighted); see
  /// "Weights" above.
  arma::vec weights;
  int grid_size = spec::bandwidth::grid_size;  ///< 1-D: points of the objective curve (0 = no curve)
  /// 1-D: how the curve that locates the search's starts is computed. false (default): where a
  /// cheap source applies (cv_ls, no weights, not the uniform kernel, approx exact, at least
  /// economy_min_rows distinct rows), from the binned objective (binned.hpp, on
  /// economy_guide_grid points, at most kBinnedSelectGrid1D = 4001):
  /// its local minima are refined on it and the best of them polished by the exact objective
  /// with its exact gradient (see "Search economy" in bandwidth_curve.cpp), so the answer is
  /// the exact objective's local minimum; curve_values are then the binned values (NaN at
  /// points below its resolution that were not needed). true: the exact objective at every
  /// point (each one full cross-validation pass), and every local minimum among the best
  /// n_starts is searched from its grid point.
  bool exact_curve = spec::bandwidth::exact_curve;
  int min_neighbors = spec::bandwidth::min_neighbors;  ///< 0 = the estimator's limit (see Floor); k > 0 = bwcheck guard
  MinimizeOptions minimize{};
  /// cv_ls only: "exact" (default) or the binned objective (binned.hpp; one or two continuous
  /// columns) on approx_grid_size points per column (0 = 401 in 1-D, 101 x 101 in 2-D).
  Approximation approx = Approximation::exact;
  int approx_grid_size = spec::bandwidth::approx_grid_size;
  /// Called on the calling thread after each objective evaluation: (evaluations so far, best
  /// objective so far). May throw (e.g. to stop).
  std::function<void(int, double)> on_eval;
};

struct BandwidthSelectResult {
  arma::vec bandwidth;    ///< per column (h for continuous, lambda for categorical)
  double objective = 0;   ///< the method's objective at `bandwidth` (cv_ls score for rot/dpi)
  int n_evals = 0;        ///< objective evaluations (exact curve points included; not the
                          ///< binned curve's of the economical search, see exact_curve)
  bool converged = false;
  std::string method;
  std::string message;
  arma::vec lower, upper; ///< the search box per column (bandwidth units, not logs)
  /// Per column: -1 when the answer sits at the lower end of the search box, +1 at the
  /// upper end, 0 inside (all 0 for rot/dpi, which do not search). Empty only when unset.
  std::vector<int> at_bound;
  arma::vec curve_grid;   ///< 1-D: bandwidths of the curve (empty otherwise)
  arma::vec curve_values; ///< objective on curve_grid (+inf where undefined; NaN not evaluated)
  /// true: curve_values are the exact objective; false: the binned objective's (the search
  /// economy of BandwidthSelectOptions::exact_curve) or no curve.
  bool curve_exact = false;
};

/// Distinct rows from which a one-column search locates its starts on the binned objective
/// (BandwidthSelectOptions::exact_curve): below, exact evaluations cost no more than the
/// guide's. The pair engine's objective (the Gaussian and other kernels without fast sums)
/// costs O(n^2) an evaluation, so the guide pays from kEconomyMinRows on a grid of one node
/// per distinct row (economy_guide_grid), and from kEconomyFullGridRows on the full
/// 4001-point grid (the binned objective removes each point's own binned weight from its
/// leave-one-out moments, binned_cv.cpp, so the coarse grid stays accurate where the data are
/// sparse; above, the full grid costs less than the exact evaluations). A compact kernel's exact
/// fast sums (fast_sums.hpp) cost O(n); its guide always has the full grid and applies from
/// kEconomyMinRowsFastSums.
constexpr std::size_t kEconomyMinRows = 500;
constexpr std::size_t kEconomyFullGridRows = 1500;
constexpr std::size_t kEconomyMinRowsFastSums = 1000;

/// The objective of one method on fixed data: evaluate at any bandwidth, with the exact
/// gradient. Construct once, evaluate many times.
class BandwidthObjective {
 public:
  /// X n x d, y length n. Validates (names the argument): NaN/Inf, shapes, n >= 5, each
  /// continuous column with at least 3 distinct values, each categorical column with at
  /// least 2 levels. method must be cv_ls, aic or gcv.
  BandwidthObjective(const arma::mat& X, const arma::vec& y, const BandwidthSelectOptions& opt);

  /// Objective at `bandwidth` (length d). When grad is non-null it is set to the gradient
  /// with respect to theta (d/d log h_j for continuous columns, d/d lambda_j for categorical
  /// ones). Returns +inf when some fit the objective needs does not exist (no weight, or a
  /// singular local design). Categorical lambdas must be inside (0, max) when grad is asked.
  double operator()(const arma::vec& bandwidth, arma::vec* grad = nullptr) const;

  /// tr(L) and RSS of the full fit at the last evaluation (aic, gcv), for tests.
  double last_trace() const { return last_trace_; }
  double last_rss() const { return last_rss_; }

  /// The guard's lower bound per column (continuous: bwcheck h; categorical: smallest lambda
  /// searched) and the upper bound (continuous: 100 x range; categorical: largest lambda).
  const arma::vec& lower() const { return lower_; }
  const arma::vec& upper() const { return upper_; }
  std::size_t n() const { return X_.n_rows; }
  const std::vector<VarType>& var_types() const { return types_; }
  /// Levels of categorical column j (j a column index of X) as seen in the data.
  int n_levels(std::size_t j) const { return levels_[j]; }
  /// Distinct rows of X: the objective runs over these (see "Ties" in bandwidth_gradient.cpp).
  std::size_t n_unique() const { return Xu_.n_rows; }
  /// True when an evaluation runs on the exact fast sums of one sorted column (fast_sums.hpp;
  /// O(n)) instead of the pair engine.
  bool fast_sums() const { return fast_; }

 private:
  arma::mat X_;
  arma::vec y_;
  // Rows of X grouped by identical values: distinct rows, their counts, the mean of y over
  // each group and the within-group sum of squares sum (y_i - ybar)^2.
  arma::mat Xu_;
  arma::vec count_, ybar_, ss_;
  // Observation weights (divided by their maximum; empty = unweighted), and per group the
  // number of rows, the weight of each of them (1 without weights) and count_ = rows_ * unit_
  // (the group's weight in the kernel sums); weight_sum_ = sum of all weights.
  arma::vec w_, rows_, unit_;
  double weight_sum_ = 0.0;
  BandwidthSelectOptions opt_;
  std::vector<VarType> types_;
  std::vector<int> levels_;
  arma::vec lower_, upper_;
  mutable double last_trace_ = 0, last_rss_ = 0;
  // One continuous column and a compact kernel (fast_sums.hpp): the distinct rows sorted once
  // for every evaluation -- their sorted values, weights (count_ / max; empty when all equal),
  // and rows_, unit_, ybar_, ss_ in sorted order; the queries are the distinct rows in sorted
  // order (each its own sorted position), so every access of an evaluation is sequential.
  bool fast_ = false;
  double fast_center_ = 0.0;
  arma::vec fast_x_, fast_w_, fast_y_, fast_rows_, fast_unit_, fast_ss_;
  std::vector<std::int64_t> fast_self_;
  // Distinct rows whose leave-one-out (or full) fit did not exist at recent evaluations, most
  // recent first. Each evaluation runs them before the others and stops at the first fit that
  // does not exist, so an undefined objective (+inf: about a third of the evaluations of a
  // multivariate search that probes small bandwidths) costs a few queries, not a full pass.
  // It orders work only; no value depends on it. Shared by copies; guarded by a mutex.
  struct UndefinedHint;
  std::shared_ptr<UndefinedHint> hint_;
};

/// The distinct rows from which the search economy applies to this objective
/// (kEconomyMinRows or kEconomyMinRowsFastSums).
std::size_t economy_min_rows(const BandwidthObjective& obj);
/// The binned guide's grid points: kBinnedSelectGrid1D, or one node per distinct row for the
/// pair engine below kEconomyFullGridRows (its cost then follows n, as the exact
/// evaluations' does).
int economy_guide_grid(const BandwidthObjective& obj);

/// Normal-reference bandwidths (continuous columns only).
arma::vec rot_bandwidth(const arma::mat& X, const Kernel& kernel);

/// The objective curve of a one-column search and the starts it gives: value(t) at G >= 2
/// log-bandwidths t evenly spaced from lo to max(lo + 1e-3, min(hi, log(2 range), base + log 4))
/// (the search may leave the grid up to hi). Fills grid (exp(t)) and values (+inf where value is
/// not finite); returns the log-bandwidths of the curve's local minima, best first, at most
/// n_starts of them; empty when the objective is undefined at every grid point.
std::vector<double> search_curve(const std::function<double(double)>& value, double lo,
                                 double hi, double range, double base, std::size_t G,
                                 int n_starts, arma::vec& grid, arma::vec& values);

/// Select bandwidths (see the file comment). Throws InvalidArgument for bad input (naming the
/// argument and the fix) and NumericalError when no bandwidth in the search box has a finite
/// objective.
BandwidthSelectResult select_bandwidth(const arma::mat& X, const arma::vec& y,
                                       const BandwidthSelectOptions& opt);

}  // namespace attnreg
