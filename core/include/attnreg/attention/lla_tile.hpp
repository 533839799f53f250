// attnreg: the per-tile arithmetic of blockwise attention (online-max softmax / Nadaraya-Watson and
// FlashLLA, Zuo et al. 2025, arXiv:2510.01450, Algorithms 1 and 2), written once for the CPU path
// and the CUDA kernels. Everything here is an ATTNREG_HD function template on float/double over
// raw, contiguous row-major buffers with explicit leading dimensions: no Armadillo, no std::
// containers, no exceptions, no allocation. Callers own the memory and the loops over tiles.
//
// Notation (Zuo et al. 2025, Sec. 3): a query block Q_r has Br rows, a key/value tile K_c, V_c has
// Bc rows; d is the key dimension, dv the value dimension. The kernel weight of query i and key j
// is w_ij = exp(l_ij) with logit
//     dot kernel:  l_ij = a q_i'k_j                         (a = 1/h; softmax: a = 1/tau)
//     rbf kernel:  l_ij = a q_i'k_j - (a/2)||k_j||^2         (a = 1/h^2)
// The rbf logit drops the per-query constant -(a/2)||q_i||^2: every quantity below is invariant
// to a common factor in one query's weights, so that constant (like the running max) cancels.
//
// Ridge convention (core/README.md, Conventions): Sigma_i = sum_j w_ij z_ij z_ij' + lambda_i
// omega_i I with z_ij = k_j - q_i and omega_i = sum_j w_ij. Scaling the ridge by the weight sum
// makes the local linear fit (eq. 8) invariant to a common factor of the weights, so the
// running-max shift of Algorithm 1 is exact. The literal "+ lambda I" of eq. 7 is not, and is not
// used.
//
// Which pieces a blockwise LLA forward calls, per query block r:
//   statistics pass (Alg. 1 lines 6-12), for each key tile c:
//     S = a Q_r K_c' (a GEMM; gemm_nt below or the caller's own), add_key_bias_row,
//     mask_row, online_update_row -> (alpha, rowsum), rescale_row + gemm_nn for M += W K_c.
//   centring (eq. 11): center_mu_row.
//   CG (Alg. 2): per iteration, for each key tile: S recomputed, weights_from_max_row,
//     U = P K_c' (GEMM), U .*= W, SigmaP += U K_c (GEMM); then sigma_p_finish_row (eq. 13,
//     Alg. 2 lines 9-10 corrected) and cg_step_row (lines 11-16) for every active row.
//   denominator (Alg. 1 line 16): lla_delta_row.
//   output pass (Alg. 1 lines 17-22): S recomputed, weights_from_max_row, X = R K_c' (GEMM),
//     lla_weights_row (relmm eq. 12 + line 20), O += S V_c (GEMM).
// Softmax / NW is the rho = 0 case: one pass of online_update_row, rescale_row and O += W V_c,
// then normalize_row.
//
// The running statistics of a row (m, omega, mu~ and, for the direct algorithm, Sigma~ and the
// value moments) are a LocalMoments row (attnreg/moments/local_moments.hpp, packed storage):
// a commutative monoid under merge_running(): a partial over keys A and a partial over keys B
// merge into the partial over A u B, in any grouping. That is what lets key blocks be
// processed in any order and, later, on different workers.
#pragma once

#include <math.h>

#include "attnreg/base/hd.hpp"
#include "attnreg/moments/local_moments.hpp"
#include "attnreg/solve/local_solve.hpp"

namespace attnreg {
namespace tile {

// Scalar helpers (exp_t, sqrt_t, neg_inf, is_finite, max_t): attnreg/base/hd.hpp.

// ------------------------------------------------------------------ small dense vector ops

template <class T>
ATTNREG_HD T dot(const T* a, const T* b, int n) {
  T s = T(0);
  for (int i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

/// sum of x in four interleaved partial sums (vectorisable; a fixed order, so deterministic).
template <class T>
ATTNREG_HD T sum4(const T* x, int n) {
  T a = T(0), b = T(0), c = T(0), e = T(0);
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    a += x[i];
    b += x[i + 1];
    c += x[i + 2];
    e += x[i + 3];
  }
  for (; i < n; ++i) a += x[i];
  return (a + b) + (c + e);
}

/// y += alpha x
template <class T>
ATTNREG_HD void axpy(T alpha, const T* x, T* y, int n) {
  for (int i = 0; i < n; ++i) y[i] += alpha * x[i];
}

/// x *= alpha
template <class T>
ATTNREG_HD void scale(T alpha, T* x, int n) {
  for (int i = 0; i < n; ++i) x[i] *= alpha;
}

// ------------------------------------------------------------------ portable tile GEMMs
// Reference loops for the two products a tile needs. The CPU path calls BLAS for these where
// it can (same semantics); the CUDA kernels use their own MMA code. beta == 0 overwrites C
// (C may hold garbage, even NaN), as BLAS does.

/// C (m x n) = alpha * A (m x k) * B (n x k)' + beta * C, all row-major.
template <class T>
ATTNREG_HD void gemm_nt(int m, int n, int k, T alpha, const T* A, int lda, const T* B, int ldb,
                        T beta, T* C, int ldc) {
  for (int i = 0; i < m; ++i) {
    const T* a = A + static_cast<long long>(i) * lda;
    T* c = C + static_cast<long long>(i) * ldc;
    for (int j = 0; j < n; ++j) {
      const T s = alpha * dot(a, B + static_cast<long long>(j) * ldb, k);
      c[j] = beta == T(0) ? s : s + beta * c[j];
    }
  }
}

/// C (m x n) = alpha * A (m x k) * B (k x n) + beta * C, all row-major.
template <class T>
ATTNREG_HD void gemm_nn(int m, int n, int k, T alpha, const T* A, int lda, const T* B, int ldb,
                        T beta, T* C, int ldc) {
  for (int i = 0; i < m; ++i) {
    T* c = C + static_cast<long long>(i) * ldc;
    if (beta == T(0)) {
      for (int j = 0; j < n; ++j) c[j] = T(0);
    } else if (beta != T(1)) {
      for (int j = 0; j < n; ++j) c[j] *= beta;
    }
    const T* a = A + static_cast<long long>(i) * lda;
    for (int p = 0; p < k; ++p) {
      const T ap = alpha * a[p];
      if (ap == T(0)) continue;
      const T* b = B + static_cast<long long>(p) * ldb;
      for (int j = 0; j < n; ++j) c[j] += ap * b[j];
    }
  }
}

// ------------------------------------------------------------------ kernel logits and masks

/// rbf kernel: l_ij += key_bias[j] with key_bias[j] = -(a/2)||k_j||^2 (see the header comment).
template <class T>
ATTNREG_HD void add_key_bias_row(T* s, int n, const T* key_bias) {
  for (int j = 0; j < n; ++j) s[j] += key_bias[j];
}

/// The rbf key bias of one key: -(a/2)||k||^2.
template <class T>
ATTNREG_HD T rbf_key_bias(const T* k, int d, T a) {
  return -T(0.5) * a * dot(k, k, d);
}

/// Causal / sliding-window mask of one query row: the keys this query may use are the global
/// positions [lo, hi]; tile column j is global key key0 + j. Columns outside get -inf.
template <class T>
ATTNREG_HD void mask_row(T* s, int n, long long key0, long long lo, long long hi) {
  for (int j = 0; j < n; ++j) {
    const long long g = key0 + j;
    if (g < lo || g > hi) s[j] = neg_inf<T>();
  }
}

/// Keys [lo, hi] (global positions; empty when lo > hi) that query i of n_q may use among
/// n_k keys: the rule of attention.hpp. With `causal`, j <= a_i where a_i = i + n_k - n_q
/// (bottom-right alignment for cross-attention and decoding); a sliding window w > 0 keeps
/// a_i - w < j (and, without causal, j < a_i + w). Device code's copy of the CPU Geometry.
ATTNREG_HD void key_range(long long i, long long n_q, long long n_k, bool causal,
                          long long window, long long& lo, long long& hi) {
  const long long a = i + n_k - n_q;
  lo = 0;
  hi = n_k - 1;
  if (causal && a < hi) hi = a;
  if (window > 0) {
    if (a - window + 1 > lo) lo = a - window + 1;
    if (!causal && a + window - 1 < hi) hi = a + window - 1;
  }
}

/// Union [lo, hi] of the key ranges of queries [i0, i1) (i1 > i0): the ranges move
/// monotonically with i, so the first and last query bound it. A query block streams only
/// the key tiles that intersect this range.
ATTNREG_HD void block_key_range(long long i0, long long i1, long long n_q, long long n_k,
                                bool causal, long long window, long long& lo, long long& hi) {
  long long l0, h0, l1, h1;
  key_range(i0, n_q, n_k, causal, window, l0, h0);
  key_range(i1 - 1, n_q, n_k, causal, window, l1, h1);
  lo = l0 < l1 ? l0 : l1;
  hi = h0 > h1 ? h0 : h1;
}

/// Seed 002 Algorithm 2 line 7, the Hadamard factor of one row: u_j *= w_j, turning the row
/// of P K_c' into the row of W .* (P K_c') before it is multiplied by K_c.
template <class T>
ATTNREG_HD void weight_row(T* u, const T* w, int n) {
  for (int j = 0; j < n; ++j) u[j] *= w[j];
}

// ------------------------------------------------------------------ online max (Alg. 1 l. 8-10)

/// Result of folding one tile into a row's running max.
template <class T>
struct RowUpdate {
  T alpha;   ///< exp(m_old - m_new): factor for everything accumulated before this tile
  T rowsum;  ///< sum_j exp(l_j - m_new) over this tile
};

/// Seed 002 Algorithm 1 lines 8-10 for one query row: m_new = max(m, rowmax(l)); the tile's
/// logits s are overwritten by the shifted weights exp(l_j - m_new) (0 for masked keys), and
/// alpha = exp(m - m_new) rescales the row's earlier statistics (line 10-11). m is updated.
/// A row whose keys are all masked so far keeps m = -inf, alpha = 1 and zero weights.
template <class T>
ATTNREG_HD RowUpdate<T> online_update_row(T* s, int n, T& m) {
  T mx = m;
  for (int j = 0; j < n; ++j) mx = max_t(mx, s[j]);
  RowUpdate<T> u;
  if (mx == neg_inf<T>()) {
    for (int j = 0; j < n; ++j) s[j] = T(0);
    u.alpha = T(1);
    u.rowsum = T(0);
    return u;
  }
  u.alpha = (m == neg_inf<T>()) ? T(0) : exp_t(m - mx);
  for (int j = 0; j < n; ++j) s[j] = exp_t(s[j] - mx);  // -inf (masked) -> 0
  u.rowsum = sum4(s, n);
  m = mx;
  return u;
}

/// Weights of a later pass (Alg. 1 line 19, Alg. 2 line 6): s_j = exp(l_j - m) with the row's
/// final max m; masked keys (l = -inf) get 0.
template <class T>
ATTNREG_HD void weights_from_max_row(T* s, int n, T m) {
  for (int j = 0; j < n; ++j) s[j] = exp_t(s[j] - m);  // -inf (masked) -> 0
}

/// acc *= alpha (Alg. 1 line 11: bcast(alpha) .* M; also the softmax output accumulator).
template <class T>
ATTNREG_HD void rescale_row(T* acc, int n, T alpha) {
  if (alpha != T(1)) scale(alpha, acc, n);
}

// The merge of two partials (running max with rescaling) is the one of LocalMoments:
// attnreg/moments/local_moments.hpp (merge_factors, merge_running), in this namespace too.
using moments::merge_factors;
using moments::merge_running;

// ------------------------------------------------------------------ eq. 10-11 (centring)

/// Eq. 11: mu = mu~ - omega q.
template <class T>
ATTNREG_HD void center_mu_row(const T* mu_tilde, T omega, const T* q, T* mu, int d) {
  for (int i = 0; i < d; ++i) mu[i] = mu_tilde[i] - omega * q[i];
}

/// Index of (i, j), i <= j, in the packed upper triangle of a symmetric d x d matrix stored
/// row by row: (0,0) (0,1) ... (0,d-1) (1,1) ...
ATTNREG_HD int packed_index(int i, int j, int d) { return i * d - (i * (i - 1)) / 2 + (j - i); }

/// Packed outer product of one key: out[packed_index(i, j)] = k_i k_j for i <= j.
template <class T>
ATTNREG_HD void packed_outer(const T* k, int d, T* out) {
  int p = 0;
  for (int i = 0; i < d; ++i)
    for (int j = i; j < d; ++j) out[p++] = k[i] * k[j];
}

/// Eq. 11 for Sigma with the omega-scaled ridge (direct algorithm): S (d x d, row-major, full)
/// = Sigma~ - mu~ q' - q mu~' + omega q q' + lambda omega I, from the packed Sigma~ = sum w k k'.
template <class T>
ATTNREG_HD void center_sigma(const T* sigma_tilde_packed, const T* mu_tilde, T omega,
                             const T* q, T lambda, T* S, int d) {
  for (int i = 0; i < d; ++i) {
    for (int j = i; j < d; ++j) {
      const T v = sigma_tilde_packed[packed_index(i, j, d)] - mu_tilde[i] * q[j] -
                  q[i] * mu_tilde[j] + omega * q[i] * q[j];
      S[i * d + j] = v;
      S[j * d + i] = v;
    }
  }
  local_solve::add_ridge(S, static_cast<size_t>(d), 0, lambda, omega, static_cast<const T*>(nullptr));
}

// ------------------------------------------------------------------ eq. 13 (matrix-free Sigma p)

/// Eq. 13 / Algorithm 2 lines 9-10 for one row, with the paper's typos corrected (line 9 takes
/// the inner products with P, not Y; line 10 adds the ridge times P, not Y) and the ridge
/// scaled by omega. On entry sp = sum_j w_ij (k_j'p) k_j (line 7, accumulated over key tiles);
/// on exit sp = Sigma_i p:
///   Sigma p = sum_j w (k'p) k - (q'p) mu~ - (mu~'p) q + omega (q'p) q + lambda omega p.
template <class T>
ATTNREG_HD void sigma_p_finish_row(T* sp, const T* p, const T* q, const T* mu_tilde, T omega,
                                   T lambda, int d) {
  const T qp = dot(q, p, d);
  const T mp = dot(mu_tilde, p, d);
  const T lo = local_solve::ridge_diagonal(lambda, omega);
  for (int i = 0; i < d; ++i)
    sp[i] += -qp * mu_tilde[i] - mp * q[i] + omega * qp * q[i] + lo * p[i];
}

// ------------------------------------------------------------------ CG (Algorithm 2)

/// State of one row's CG solve (the row's slice of Algorithm 2's on-chip matrices lives in the
/// caller's buffers; these are the per-row scalars).
template <class T>
struct CGRow {
  T rr;       ///< current r'r (Algorithm 2 line 11's n)
  T tol2;     ///< stop when r'r <= tol2 (= (tol ||b||)^2, a relative tolerance)
  int status; ///< kCGActive, kCGConverged or kCGBreakdown
  int iters;  ///< CG iterations this row took
};

enum : int { kCGActive = 0, kCGConverged = 1, kCGBreakdown = 2 };

/// Algorithm 2 line 1 for one row, solving Sigma x = b from x = 0: r = p = b. A row whose
/// right-hand side is already within tolerance (b = 0) starts converged with x = 0.
template <class T>
ATTNREG_HD CGRow<T> cg_init_row(const T* b, T* x, T* r, T* p, int d, T tol) {
  CGRow<T> st;
  for (int i = 0; i < d; ++i) {
    x[i] = T(0);
    r[i] = b[i];
    p[i] = b[i];
  }
  st.rr = dot(r, r, d);
  st.tol2 = tol * tol * st.rr;
  st.iters = 0;
  st.status = (st.rr <= st.tol2 || st.rr == T(0)) ? kCGConverged : kCGActive;
  return st;
}

/// Algorithm 2 lines 11-16 for one active row, given sp = Sigma p (after sigma_p_finish_row):
/// alpha = r'r / p'Sigma p; x += alpha p; r -= alpha Sigma p; beta = r_new'r_new / r'r;
/// p = r + beta p. The row becomes inactive (the active mask of Appendix C) when r'r falls to
/// its tolerance; a non-positive or non-finite curvature p'Sigma p (Sigma not positive
/// definite in working precision) stops it with kCGBreakdown and leaves x at its last value.
template <class T>
ATTNREG_HD void cg_step_row(CGRow<T>& st, T* x, T* r, T* p, const T* sp, int d) {
  if (st.status != kCGActive) return;
  const T pap = dot(p, sp, d);
  if (!(pap > T(0)) || !is_finite(pap)) {
    st.status = kCGBreakdown;
    return;
  }
  const T alpha = st.rr / pap;
  for (int i = 0; i < d; ++i) {
    x[i] += alpha * p[i];
    r[i] -= alpha * sp[i];
  }
  const T rr_new = dot(r, r, d);
  ++st.iters;
  if (!is_finite(rr_new)) {
    st.status = kCGBreakdown;
    return;
  }
  if (rr_new <= st.tol2) {
    st.rr = rr_new;
    st.status = kCGConverged;
    return;
  }
  const T beta = rr_new / st.rr;
  for (int i = 0; i < d; ++i) p[i] = r[i] + beta * p[i];
  st.rr = rr_new;
}

// ------------------------------------------------------------------ output (Alg. 1, eq. 12)

/// Algorithm 1 line 16 for one row: delta = omega - mu' rho (the denominator of eq. 8).
template <class T>
ATTNREG_HD T lla_delta_row(T omega, const T* mu, const T* rho, int d) {
  return omega - dot(mu, rho, d);
}

/// relmm (eq. 12) and Algorithm 1 line 20 for one row. On entry s holds the shifted weights
/// w_j (weights_from_max_row) and xk holds rho'k_j (row of R K_c'); rho_q = rho'q is the
/// brsum(R .* Q) term of relmm. On exit s_j = w_j (1 - (rho'k_j - rho'q)) / delta: the LLA
/// attention weights of eq. 8 for this tile.
template <class T>
ATTNREG_HD void lla_weights_row(T* s, const T* xk, T rho_q, T inv_delta, int n) {
  for (int j = 0; j < n; ++j) s[j] = s[j] * (T(1) - (xk[j] - rho_q)) * inv_delta;
}

/// Final normalisation of softmax / NW (and of linear attention): acc /= denom.
template <class T>
ATTNREG_HD void normalize_row(T* acc, int n, T denom) {
  const T inv = T(1) / denom;
  for (int i = 0; i < n; ++i) acc[i] *= inv;
}

// ------------------------------------------------------------------ small Cholesky (direct)

// The direct algorithm's Cholesky of Sigma and its solve: the one local solve
// (solve/local_solve.hpp), shared with the CUDA kernels.
using local_solve::cholesky;
using local_solve::cholesky_solve;

}  // namespace tile
}  // namespace attnreg
