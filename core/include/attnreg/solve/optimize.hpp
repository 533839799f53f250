// attnreg: a small bound-constrained quasi-Newton minimiser (projected L-BFGS) for the
// bandwidth searches and the attention regression. Objectives return f and fill the gradient
// (exact, analytic); bounds keep log-bandwidths and categorical bandwidths in range so that no
// out-of-range value is ever evaluated or returned.
//
// Method: at each iteration the variables held at a bound by the sign of their gradient are
// frozen; the L-BFGS two-loop recursion (Nocedal and Wright 2006, Alg. 7.4) gives a direction on
// the free ones; a backtracking line search along the projected path P[x + t d] accepts the
// first t with f(P[x + t d]) <= f(x) + c1 g'(P[x + t d] - x) (Armijo). Curvature pairs with
// s'y <= eps ||s|| ||y|| are skipped; a step without curvature pairs (the first, or a restart
// along the projected steepest descent) has unit Euclidean length. A quasi-Newton step accepted
// only at t < 1e-3 drops the memory (its curvature overshoots, as on a plateau of very large
// bandwidths beside an undefined region). Converged when the projected
// gradient's infinity norm is at most gtol (f_start - f) (or exactly zero), or the last
// iteration's decrease is at most ftol (f_start - f), f_start being f at the run's start point.
// Both tests, and so the whole path, are invariant under f -> a f + b (a > 0) and under shifts
// of x: a bandwidth search over log h finds the same bandwidths (times c) when the data are
// scaled, whether the criterion scales with them (least-squares cross-validation) or shifts
// (AICc, likelihood cross-validation). A tolerance relative to |f| would be neither: it depends
// on where zero is, and an absolute one on the units of f.
//
// Why not LBFGS++'s L-BFGS-B (Debian liblbfgspp-dev 0.1.0; measured 2026-11-25 on the
// local linear cv_ls objective over log h, n = 90, two columns, same start and box): its stopping
// tests are ||Pg||_inf <= max(epsilon, epsilon_rel ||x||) and |f_{k-1} - f_k| <= delta
// max(1, |f_k|, |f_{k-1}|), absolute in the units of f and relative to the norm of the
// log-bandwidths, so neither is scale-free. At y * 2^-30 and y * 1e-150 it stopped at the start
// (h = (0.3, 0.3) after one iteration, against (0.10287, 0.10068) at y * 1); with x * 1e150
// (log h shifted by 345) it stopped at (0.102892, 0.100529); at y * 1e150 its line search
// produced NaN steps (it has no treatment of a non-finite or undefined objective, which the
// bandwidth objectives return below the estimator's limit). minimize_box gave (0.102870,
// 0.100684) at every one of these scales. It would also add Eigen to the core and the R package.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "attnreg/base/arma.hpp"

namespace attnreg {

struct MinimizeOptions {
  int max_iter = 200;     ///< iterations (each one or more objective evaluations)
  int max_evals = 2000;   ///< objective evaluations in all
  int memory = 8;         ///< L-BFGS pairs kept
  double gtol = 1e-7;     ///< projected-gradient infinity norm, relative to f_start - f
  double ftol = 1e-12;    ///< last decrease of f, relative to f_start - f
  /// A difference of objective values the caller knows to be the objective's natural scale
  /// (e.g. the spread of an objective curve over the search range); 0 = none. The two tests
  /// then measure against max(f_start - f, f_scale), so a run started next to the minimum (a
  /// warm start, where f_start - f is tiny) does not chase a tolerance far below the
  /// objective's own scale. Being a difference, it keeps the tests invariant under f -> a f + b.
  double f_scale = 0.0;
  /// The line search gives up when the step it would try moves no coordinate by more than
  /// this (the bandwidth searches run over log-bandwidths: 1e-10 = a relative change of 1e-10
  /// in every bandwidth, far below any digit a selector reports). Saves the halvings at a kink
  /// of a compact kernel's objective, which no step length can pass.
  double xtol = 1e-10;
};

struct MinimizeResult {
  arma::vec x;             ///< best point found (always within bounds)
  double f = 0;            ///< objective at x
  arma::vec grad;          ///< gradient at x
  int n_evals = 0;         ///< objective evaluations
  int n_iter = 0;          ///< iterations
  bool converged = false;  ///< a convergence test passed (not just the evaluation budget)
  std::string message;     ///< why it stopped
};

/// f(x, grad) -> value; must fill grad (same size as x). A non-finite value is treated as
/// +infinity by the line search (the step is shortened), never accepted.
using Objective = std::function<double(const arma::vec& x, arma::vec& grad)>;

/// Minimise f over the box [lower, upper] from x0 (projected into the box first).
MinimizeResult minimize_box(const Objective& f, arma::vec x0, const arma::vec& lower,
                            const arma::vec& upper, const MinimizeOptions& opt = {});

/// Run minimize_box from each start (columns of `starts`) and keep the best; n_evals adds up
/// over the starts, converged is that of the best run.
MinimizeResult minimize_multistart(const Objective& f, const arma::mat& starts,
                                   const arma::vec& lower, const arma::vec& upper,
                                   const MinimizeOptions& opt = {});

/// Starting points of a multistart bandwidth search (one column each): column 0 is `base`; each
/// further column draws u ~ U(0, 1) per coordinate from a generator seeded with `seed` (columns
/// then coordinates): coordinates on the log scale (log_scale[j]: log-bandwidths) at
/// base + log(4) (2u - 1), clamped to the box; the others (categorical bandwidths) at
/// lower + (0.05 + 0.9 u) (upper - lower).
arma::mat search_starts(const arma::vec& base, const arma::vec& lower, const arma::vec& upper,
                        const std::vector<bool>& log_scale, int n_starts, std::uint64_t seed);

/// minimize_box from each start, keeping the best run in `best`. A start where f is undefined
/// (minimize_box throws NumericalError) moves its log-scale coordinates up by log 2 -- at most
/// 12 times, never past the box -- and is skipped when it stays undefined. Returns false when
/// no start produced a result (`best` is then untouched).
bool minimize_from_starts(const Objective& f, const arma::mat& starts, const arma::vec& lower,
                          const arma::vec& upper, const std::vector<bool>& log_scale,
                          const MinimizeOptions& opt, MinimizeResult& best);

}  // namespace attnreg
