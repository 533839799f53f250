// attnreg (internal): what the files of the bandwidth selection (bandwidth_select.hpp) share.
//   bandwidth_gradient.cpp   the derivation (eqs. (1)-(4)), the per-query gradient sink and its
//                            SIMD helpers, the fast-sum feeder;
//   bandwidth_objective.cpp  BandwidthObjective (input checks, tie groups, one evaluation) and
//                            the method names;
//   bandwidth_floor.cpp      the search box (definition floor, bwcheck guard, lambda range)
//                            and the normal-reference rule;
//   bandwidth_curve.cpp      the 1-D objective curve (search_curve, the search economy);
//   bandwidth_select.cpp     select_bandwidth: starts, floors, the multistart search, polish;
//                            and the start and box-end steps that search_bandwidth
//                            (solve/local_polynomial.cpp) shares.
#pragma once

#include "attnreg/base/constants.hpp"
#include <cstddef>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attnreg/base/arma.hpp"
#include "attnreg/base/runtime.hpp"
#include "attnreg/bandwidth/bandwidth_select.hpp"
#include "attnreg/kernels/fast_sums.hpp"
#include "attnreg/kernels/kernel_pairs.hpp"  // KernelSpace, PreparedQueries, TileSink

namespace attnreg {
namespace bandwidth_detail {


// ------------------------------------------------------------------ the gradient pass
// What one evaluation of the objective gives every GradientSink (bandwidth_gradient.cpp), and
// the per-query outputs they write.
struct Shared {
  const KernelSpace* space = nullptr;  // null on the fast-sum path (one continuous column)
  const arma::vec* fast_w = nullptr;   // fast-sum path: weights, sorted order (empty = all 1)
  const arma::vec* y_int = nullptr;   // internal order
  const arma::vec* y = nullptr;       // original order (queries are original rows)
  int degree = 1;
  double ridge = 0.0;
  bool full = false;                  // aic / gcv (full fit) vs cv_ls (leave-one-out)
  std::size_t n_par = 0;              // 0 = value only
  std::vector<double> pen;            // per basis term (bandwidth units)
  // Parameter p -> column kind: continuous index, or categorical index.
  std::vector<int> par_cont;          // continuous index or -1
  std::vector<int> par_cat;           // categorical index or -1
  std::vector<const double*> cat_codes_int;  // raw codes, internal order, per categorical col
  std::vector<const double*> cat_codes_q;    // raw codes, original order, per categorical col
  std::vector<CategoricalKernel> cat_kern;
  std::vector<double> cat_lambda;
  const arma::vec* count = nullptr;   // rows per distinct row (query order)
  const arma::vec* ss = nullptr;      // within-group sum of squares (query order)
  // Outputs per query (original index): resid is r_g (cv_ls) or ybar_g - m_g (full fit); b and
  // db the leave-one-out b of eq. (4) and its derivatives (cv_ls only).
  std::vector<double> resid, lev, dm, dlev, b, db;
  std::vector<unsigned char> ok;
  // KernelSpace path: a query whose fit does not exist throws UndefinedFit (the objective is
  // +inf whatever the other queries give), so the run stops at that block.
  bool stop_at_undefined = false;
};

// Thrown by GradientSink when a query's fit does not exist; names the query (original index).
struct UndefinedFit {
  std::size_t query;
};

// The sinks are made in bandwidth_gradient.cpp, next to their target_clones helpers (clones
// are local to their file).

/// A GradientSink for the KernelSpace run over queries Q; orig maps a query index to the
/// original query (null = the same).
std::unique_ptr<TileSink> make_gradient_sink(const Shared& sh, const PreparedQueries& Q,
                                             const std::size_t* orig);

/// Feeds fast-sum moments (fast_sums.hpp; 1-D, compact kernel) to a GradientSink in blocks.
std::unique_ptr<FastMomentsConsumer> make_fast_gradient_feeder(const Shared& sh,
                                                               const PreparedQueries& Q,
                                                               int degree);

// ------------------------------------------------------------------ the search box
/// Per column of X: the lower end of the search box (continuous: the definition floor or,
/// with min_neighbors > 0, the bwcheck guard; categorical: the smallest lambda searched), the
/// upper end, and the levels of categorical columns (0 for continuous). Throws for a
/// continuous column with too few distinct values and for bad categorical columns
/// (bandwidth_floor.cpp).
void search_box(const arma::mat& X, const std::vector<VarType>& types,
                const BandwidthSelectOptions& opt, arma::vec& lower, arma::vec& upper,
                std::vector<int>& levels);

// ------------------------------------------------------------------ starts and box ends
// Shared by select_bandwidth and search_bandwidth (solve/local_polynomial.cpp); theta is log h
// for continuous columns and lambda for categorical ones, [lo, hi] the box in theta.

/// The first start: the normal-reference bandwidths of the continuous columns of X (in logs,
/// clamped into the box) and the middle of the categorical ones' range.
arma::vec rule_start(const arma::mat& X, const std::vector<VarType>& types, const arma::vec& lo,
                     const arma::vec& hi, const Kernel& kernel);

/// The caller's start (bandwidths, one per column; empty = none) replaces base: checked, in
/// theta, clamped into the box.
void apply_start(const arma::vec& start, const std::vector<VarType>& types, const arma::vec& lo,
                 const arma::vec& hi, arma::vec& base);

/// Marks the columns whose bandwidth ended at an end of the search box [lower, upper]
/// (res.at_bound, and a note in res.message, followed by note(j, at_lower) when given).
void mark_box_ends(const arma::vec& lower, const arma::vec& upper, BandwidthSelectResult& res,
                   const std::function<std::string(std::size_t, bool)>& note = nullptr);

// ------------------------------------------------------------------ the search
// The state of one select_bandwidth search (bandwidth_select.cpp), shared with its curve steps
// (bandwidth_curve.cpp). Search parameters theta: log h (continuous), lambda (categorical).
struct Search {
  Search(const arma::mat& X, const arma::vec& y, const BandwidthSelectOptions& opt);

  const arma::mat& X;
  const arma::vec& y;
  const BandwidthSelectOptions& opt;
  BandwidthSelectResult res;
  BandwidthObjective obj;  // validates X, y
  std::size_t d;
  const std::vector<VarType>& types;
  std::vector<std::size_t> cont, cat;
  // The searched objective: exact, or binned (approx = binned).
  std::unique_ptr<BinnedCVObjective> binned;
  arma::vec lo, hi;      // the box in theta
  arma::vec box_lower;   // the box's lower end in bandwidths (floors raised where undefined)
  arma::vec base;        // the first start, in theta
  int evals = 0;
  double best = kInf;
  InterruptGuard guard;
  // The searches' options (f_scale set from the curve where there is one).
  MinimizeOptions mopt;
  arma::uvec curve_is_exact;  // per curve point: 1 where curve_values holds the exact objective
  // Evaluations of the searched objective already made, by bandwidths (exactly equal): the
  // floor checked first is a candidate again at the end, the minimiser evaluates its final
  // point again where the step rounds to nothing, and one full cross-validation pass is the
  // unit of cost at small n. Values are those of a new evaluation (deterministic).
  struct Recalled {
    arma::vec b;
    double v;
    bool has_grad;
    arma::vec g;
  };
  std::vector<Recalled> memo;

  /// The searched objective (binned or exact) at bandwidths b.
  double eval(const arma::vec& b, arma::vec* g) const {
    return binned ? (*binned)(b, g) : obj(b, g);
  }
  /// Counts an evaluation, keeps the best value, polls for interrupts, calls on_eval.
  void note(double f);
  /// eval(b) without gradient, +inf where it throws NumericalError; noted. A bandwidth
  /// evaluated before (memo) returns its value without a new evaluation (not noted again).
  double eval_noted(const arma::vec& b);
  /// The memo's value (and gradient, when g is non-null and one was computed) at exactly b,
  /// or false.
  bool recall(const arma::vec& b, double& v, arma::vec* g) const;
  /// theta -> bandwidths, clamped into [box_lower, upper].
  arma::vec to_bw(const arma::vec& t) const;
  /// The minimiser's objective in theta (noted; +inf and zero gradient where undefined).
  double objective(const arma::vec& t, arma::vec& g);
};

/// A candidate of the search economy: its binned value, log h, and the binned objective's
/// curvature d^2 CV / d(log h)^2 there (0 where unknown).
struct EconomyCandidate {
  double value;
  double t;
  double curvature;
};

/// Candidates of the search economy (one continuous column, cv_ls, many distinct rows; see
/// "Search economy" in bandwidth_curve.cpp), best binned value first. Fills the curve; false
/// (curve reset) when the binned guide is not used.
bool economy_curve(Search& s, std::vector<EconomyCandidate>& cand);

/// minimize_from_starts from the one start t0 (one column, over log h) whose first step is
/// the Newton step -g(t0) / curvature of a model of f (curvature > 0: the binned objective's,
/// or the curve's second difference) instead of the minimiser's unit step, at most as long;
/// see "Newton first step" in bandwidth_curve.cpp. Without a usable curvature (not finite or
/// <= 0), or where f is undefined at t0, exactly minimize_from_starts.
bool minimize_newton_start(const Objective& f, double t0, double curvature, double lo,
                           double hi, const MinimizeOptions& opt, MinimizeResult& best);

/// The exact objective curve of a one-column search (search_curve), its starts in `starts`;
/// true when that is already the answer (uniform kernel: the grid minimum, in s.res).
bool exact_curve(Search& s, arma::mat& starts);

}  // namespace bandwidth_detail
}  // namespace attnreg
