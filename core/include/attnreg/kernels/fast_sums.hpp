// attnreg: exact fast sums for compact kernels in one continuous dimension.
//
// For a compact kernel whose shape is a polynomial in u (uniform, Epanechnikov, biweight,
// triweight), a polynomial in |u| (triangular, tricube) or cos(pi u / 2) (cosine), every
// local moment at a query t,
//     M_r,c(t) = sum_i a_i k(u_i) u_i^r Y_ic,   u_i = x_i - t (bandwidth units), |u_i| <= 1,
// is a fixed combination of window sums sum_{i in window} a_i f(v_i) Y_ic of a few features
// f(v) = v^j, cos(pi v / 2) v^j, sin(pi v / 2) v^j of the training points (v = x - centre),
// because (v - s)^n and cos / sin(pi (v - s) / 2) expand binomially / by the addition
// theorems. After one sort of x the window of a query is an index range, and window sums are
// differences of running prefix sums: "fast sum updating" (Seifert, Brockmann, Engel and
// Gasser 1994, J. Comput. Graph. Statist. 3(2); Langrene and Warin 2019, arXiv:1712.00993).
// The same holds for the h-derivative weights a_i (-u k'(u)) u^r Y_ic of the bandwidth
// objective (bandwidth_gradient.cpp eq. (1)): -u k'(u) is again of the same form.
//
// Cancellation guard. The queries are sorted and cut into blocks spanning at most one
// bandwidth; each block re-centres the features at its midpoint (so |v| <= 2.5 and the
// binomial shift |s| <= 0.5) and restarts its prefix sums from zero at the block's first
// window, and the prefix sums are compensated (TwoSum), so a window sum is accurate to a few
// ulps of the sum of its absolute terms however large n or the offset of x. Leaving a query's
// own training point out (leave-one-out) subtracts its features from the window sums.
//
// Windows of at most 16 points are summed directly (as cheap, and borderline decisions such as
// a near-singular design from two points are then taken on the all-pairs numbers).
//
// Cost: O(n log n) for the sort, then O(n + m) per call (each training point enters the
// prefix sums of at most about four blocks), independent of the bandwidth.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "attnreg/kernels/kernel.hpp"
#include "attnreg/kernels/kernel_pairs.hpp"

namespace attnreg {

/// Whether the fast-sum path supports this continuous kernel (every compact kernel).
bool fast_sums_supported(KernelType kernel);

/// Training rows from which the estimators (local_polynomial_eval, the bandwidth objective)
/// switch to fast sums automatically (measured: bench/results/fast_sums.md).
constexpr std::size_t kFastSumsMinRows = 64;

/// True when an estimator over `space` with local polynomial degree `degree` takes the fast-sum
/// path: one continuous column and no categorical one, a compact kernel, degree 0 or 1, the
/// automatic pair algorithm (an explicit "all_pairs" or "neighbors" keeps that path), at least
/// kFastSumsMinRows training rows, and positive observation weights no smaller than 1e-200 of
/// the largest (so every positive weight in a window is far above KernelSpace::kTinyWeight
/// and the query status is decided by counting).
bool fast_sums_eligible(const KernelSpace& space, int degree);

/// Per-query output of fast_window_moments.
struct FastMomentsQuery {
  std::size_t query;     ///< index of the query (in the caller's order)
  const double* M;       ///< (R + 1) x C, row-major: M[r * C + c] = sum a k(u) u^r Y_c (Y_0 = 1)
  const double* D;       ///< same with a (-u k'(u)) in place of a k(u); null unless requested
  std::size_t positive;  ///< training points in the window with a_i > 0 (own row excluded)
};

/// Receives the moments of one thread's queries (one consumer per thread).
class FastMomentsConsumer {
 public:
  virtual ~FastMomentsConsumer() = default;
  virtual void query(const FastMomentsQuery& q) = 0;
  /// The thread has handed over its last query.
  virtual void finish() {}
};

/// Inputs of fast_window_moments. Training points: x (n, bandwidth units, any order), optional
/// observation weights a (n, >= 0; null = all 1), responses Y (column-major n x k, leading
/// dimension n; channel c >= 1 of the moments is column c - 1). Queries: t (m, bandwidth units)
/// and optionally self (m; the training index of the query's own row, or -1) to leave out.
struct FastMomentsProblem {
  KernelType kernel = KernelType::epanechnikov;
  std::size_t n = 0;
  const double* x = nullptr;
  const double* a = nullptr;
  const double* Y = nullptr;
  std::size_t k = 0;
  std::size_t m = 0;
  const double* t = nullptr;
  const std::int64_t* self = nullptr;
  int max_power = 2;       ///< R: moments r = 0..R
  bool derivative = false; ///< also the -u k'(u) moments (D)
  int n_threads = 0;       ///< 0 = OpenMP default
};

/// Compute the moments of every query and hand each to a consumer made once per thread by
/// make_consumer (each query is handed over exactly once; the values do not depend
/// on the number of threads). A training point belongs to a query's window when its weight is
/// non-zero: |x_i - t| < 1 (|x_i - t| <= 1 for the uniform kernel, whose support is closed),
/// with x_i - t evaluated as the all-pairs path does.
void fast_window_moments(const FastMomentsProblem& problem,
                         const std::function<std::unique_ptr<FastMomentsConsumer>()>& make_consumer);

}  // namespace attnreg
