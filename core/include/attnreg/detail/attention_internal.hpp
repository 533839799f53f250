// attnreg attention engine: declarations shared by core/src/attention*.cpp. Internal: not part
// of the public API (it lives under include/ so that every build, the R one included, finds it).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "attnreg/base/arma.hpp"
#include "attnreg/attention/attention.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/attention/lla_tile.hpp"
#include "attnreg/base/runtime.hpp"

namespace attnreg {
namespace attention {
namespace detail {

using i64 = std::int64_t;

/// Which keys each query may use (global positions, see attention.hpp).
struct Geometry {
  i64 n_q = 0, n_k = 0;  ///< n_k: the full key sequence length
  bool causal = false;
  i64 window = 0;

  /// Keys [lo, hi] of query i (empty when lo > hi).
  void range(i64 i, i64& lo, i64& hi) const {
    const i64 a = i + n_k - n_q;
    lo = 0;
    hi = n_k - 1;
    if (causal) hi = std::min(hi, a);
    if (window > 0) {
      lo = std::max(lo, a - window + 1);
      if (!causal) hi = std::min(hi, a + window - 1);
    }
  }
  i64 count(i64 i) const {
    i64 lo, hi;
    range(i, lo, hi);
    return hi >= lo ? hi - lo + 1 : 0;
  }
  /// Union of the key ranges of queries [i0, i1): [lo, hi]. Ranges are monotone in i.
  void block_range(i64 i0, i64 i1, i64& lo, i64& hi) const {
    i64 l0, h0, l1, h1;
    range(i0, l0, h0);
    range(i1 - 1, l1, h1);
    lo = std::min(l0, l1);
    hi = std::max(h0, h1);
  }
};

/// Options resolved against the data: everything a path needs, validated.
struct Plan {
  Geometry geo;
  i64 B = 0, H = 0, d = 0, dv = 0;
  Method method = Method::softmax;
  LLAAlgorithm algorithm = LLAAlgorithm::blockwise;
  bool rbf = false;   ///< logits a q'k - (a/2)||k||^2 instead of a q'k
  double a = 1.0;     ///< logit scale
  double ridge = 0.0;
  const std::vector<double>* ridge_vec = nullptr;
  i64 Br = 64, Bc = 64;
  double cg_tol = 1e-12;
  int cg_max_iter = 0;
  FeatureMap feature_map = FeatureMap::elu_plus_one;
  double feature_tau = 4.0;
  bool normalize = true;
  int n_threads = 1;

  double ridge_at(i64 b, i64 h, i64 i) const {
    if (ridge_vec == nullptr || ridge_vec->empty()) return ridge;
    if (static_cast<i64>(ridge_vec->size()) == geo.n_q) return (*ridge_vec)[i];
    return (*ridge_vec)[(b * H + h) * geo.n_q + i];
  }
  i64 n_blocks() const { return (geo.n_q + Br - 1) / Br; }
};

/// Validate shapes, finiteness and options; resolve defaults. `is_float` picks the default CG
/// tolerance. V may be null (attention_weights).
template <class T>
Plan make_plan(const View<const T>& Q, const View<const T>& K, const View<const T>* V,
               const View<T>* out, const Options& opt, const char* out_name,
               i64 n_keys_total = -1);

/// Resolve and check every option against p.B, p.H, p.d, p.dv and p.geo.n_q / n_k (set by
/// the caller): kernel scale, ridge, blocks, CG, feature map, threads, causal and window.
void apply_options(Plan& p, const Options& opt, bool is_float);

/// Every element of a view finite; otherwise InvalidArgument naming `name` and the element.
template <class T>
void check_finite(const View<const T>& v, const char* name);

/// LLA / Mesa with ridge 0 at a query seeing fewer than d keys: Sigma is singular.
void check_ridge_rank(const Plan& p, const char* method_name);

// ---------------------------------------------------------------- BLAS / portable GEMM

/// Row-major C (m x n) = alpha A (m x k) B (n x k)' + beta C.
void gemm_nt(int m, int n, int k, double alpha, const double* A, int lda, const double* B,
             int ldb, double beta, double* C, int ldc);
void gemm_nt(int m, int n, int k, float alpha, const float* A, int lda, const float* B, int ldb,
             float beta, float* C, int ldc);
/// Row-major C (m x n) = alpha A (m x k) B (k x n) + beta C.
void gemm_nn(int m, int n, int k, double alpha, const double* A, int lda, const double* B,
             int ldb, double beta, double* C, int ldc);
void gemm_nn(int m, int n, int k, float alpha, const float* A, int lda, const float* B, int ldb,
             float beta, float* C, int ldc);

/// Copy rows [row0, row0 + n) of (b, h) of X into dst (n x dim, row-major, ld), converting.
template <class T, class U>
void pack_rows(const View<const T>& X, i64 b, i64 h, i64 row0, i64 n, U* dst, i64 ld) {
  const T* base = X.data + b * X.strides[0] + h * X.strides[1];
  const i64 dim = X.shape[3];
  for (i64 r = 0; r < n; ++r) {
    const T* src = base + (row0 + r) * X.strides[2];
    U* o = dst + r * ld;
    if (X.strides[3] == 1) {
      for (i64 c = 0; c < dim; ++c) o[c] = static_cast<U>(src[c]);
    } else {
      for (i64 c = 0; c < dim; ++c) o[c] = static_cast<U>(src[c * X.strides[3]]);
    }
  }
}

/// Write n rows (n x dim, row-major, ld) into rows [row0, row0 + n) of (b, h) of out.
template <class T, class U>
void unpack_rows(const U* src, i64 ld, i64 n, const View<T>& out, i64 b, i64 h, i64 row0) {
  T* base = out.data + b * out.strides[0] + h * out.strides[1];
  const i64 dim = out.shape[3];
  for (i64 r = 0; r < n; ++r) {
    T* o = base + (row0 + r) * out.strides[2];
    const U* s = src + r * ld;
    for (i64 c = 0; c < dim; ++c) o[c * out.strides[3]] = static_cast<T>(s[c]);
  }
}

/// Run fn(item, thread_state) for item in [0, n_items) on n_threads OpenMP threads, each item
/// on one thread, dynamic schedule. The first exception (lowest item) is rethrown afterwards;
/// Ctrl-C (the faces' checker) stops the loop and throws Interrupted.
template <class State, class Fn>
void parallel_items(i64 n_items, int n_threads, Fn fn) {
  InterruptGuard guard;
  std::atomic<bool> failed{false};
  std::exception_ptr first_error;
  i64 first_item = n_items;
#ifdef _OPENMP
#pragma omp parallel num_threads(n_threads)
#endif
  {
    State state;
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
    for (i64 it = 0; it < n_items; ++it) {
      if (failed.load(std::memory_order_relaxed) || guard.poll()) continue;
      try {
        fn(it, state);
      } catch (...) {
#ifdef _OPENMP
#pragma omp critical(attnreg_attention_error)
#endif
        {
          if (it < first_item) {
            first_item = it;
            first_error = std::current_exception();
          }
        }
        failed.store(true, std::memory_order_relaxed);
      }
    }
  }
  guard.rethrow_if_interrupted();
  if (first_error) std::rethrow_exception(first_error);
  (void)n_threads;
}

/// "(batch b, head h, query i)" with 1-based numbers, for messages.
std::string where(i64 b, i64 h, i64 i);

/// NumericalError for a Sigma (LLA) or H (Mesa) that is not positive definite at (b, h, i);
/// `what` names the path ("LLA (direct)", "LLA backward", "Mesa", ...).
[[noreturn]] void throw_not_pd(const char* what, i64 b, i64 h, i64 i);
/// NumericalError for an LLA denominator omega - mu'rho that is not positive and finite.
[[noreturn]] void throw_bad_delta(const char* what, double delta, i64 b, i64 h, i64 i);

/// Feature maps of linear attention (attention.hpp): phi has feature_dim(p) = d or d + 1
/// entries; feature_row writes phi(X[b, h, s, :]).
i64 feature_dim(const Plan& p);
template <class T>
void feature_row(const Plan& p, const View<const T>& X, i64 b, i64 h, i64 s, double* phi);

// ---------------------------------------------------------------- the paths

template <class T>
void run_softmax_blockwise(const Plan& p, const View<const T>& Q, const View<const T>& K,
                           const View<const T>& V, const View<T>& out, Diagnostics& diag);
template <class T>
void run_lla_blockwise(const Plan& p, const View<const T>& Q, const View<const T>& K,
                       const View<const T>& V, const View<T>& out, Diagnostics& diag);
template <class T>
void run_lla_naive(const Plan& p, const View<const T>& Q, const View<const T>& K,
                   const View<const T>& V, const View<T>& out, Diagnostics& diag);
template <class T>
void run_lla_direct(const Plan& p, const View<const T>& Q, const View<const T>& K,
                    const View<const T>& V, const View<T>& out, Diagnostics& diag);
template <class T>
void run_linear(const Plan& p, const View<const T>& Q, const View<const T>& K,
                const View<const T>& V, const View<T>& out, Diagnostics& diag);
template <class T>
void run_mesa(const Plan& p, const View<const T>& Q, const View<const T>& K,
              const View<const T>& V, const View<T>& out, Diagnostics& diag);
/// Dense (b, h) weights in float64: W (n_q x n_k, row-major) with W * V = output. For lla,
/// *min_rel (when given) receives the smallest (omega - mu'rho) / omega.
template <class T>
void dense_weights(const Plan& p, const View<const T>& Q, const View<const T>& K, i64 b, i64 h,
                   std::vector<double>& W, double* min_rel = nullptr);

/// Warnings about LLA denominators (shared by the three algorithms).
void add_denominator_warning(Diagnostics& diag, double min_rel, bool is_float);

/// The split-key partials (lla_partial, softmax_partial): the key slice
/// [key_offset, key_offset + n_k) must lie in [0, n_keys_total).
void check_key_slice(std::int64_t key_offset, std::int64_t n_k, std::int64_t n_keys_total);
/// An empty KeyPartial for plan `p` covering that slice, its moments in the packed storage
/// with `design_dim` design columns (d for LLA, 0 for softmax / nw_rbf) and p.dv values.
KeyPartial empty_key_partial(const Plan& p, std::int64_t key_offset, std::int64_t n_k,
                             std::int64_t n_keys_total, int design_dim);

}  // namespace detail
}  // namespace attention
}  // namespace attnreg
