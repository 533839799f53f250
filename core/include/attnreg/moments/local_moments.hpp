// attnreg: the local moments of the weights -> moments -> solve pipeline, one value type with
// one associative merge.
//
// For one query x with weights w_i >= 0 over rows i (kernel weights K((x_i - x)/h), attention
// weights exp(l_i)) and the centred design z_i (x_i - x in bandwidth units, or a key k_i; for a
// local polynomial the basis terms of z), the solve (local_fit.hpp, lla_tile.hpp; Zuo et al. 2025,
// arXiv:2510.01450, eq. 7-11) needs only the sums
//     A = sum_i w_i [1; z_i][1; z_i]' = [omega mu'; mu Sigma]      (q x q, q = 1 + p)
//     T = sum_i w_i [1; z_i] y_i'     = [nu'; Gamma']              (q x k, k value columns)
// and, for the h-gradient of the bandwidth objective, the same sums with the weights replaced
// by their derivatives dw_i/dtheta for each parameter theta (the derivative moments).
//
// Exp-domain weights are kept relative to a running max m (the largest logit seen, or the log
// of the divisor of the weights): the numbers stored are the sums times exp(-m). Sums over
// disjoint sets of rows add once brought to a common scale, so
//     merge((m_a, S_a), (m_b, S_b)) = (m, exp(m_a - m) S_a + exp(m_b - m) S_b),  m = max(m_a, m_b)
// is associative and commutative with the empty moments (m = -inf, S = 0) as identity: partials
// over blocks of rows merge into the moments over their union in any grouping and order (equal
// to rounding). Optionally a per-query peak (the largest single weight, relative to exp(m))
// rides along, merged by max(exp(m_a - m) peak_a, exp(m_b - m) peak_b): the local fit decides
// its no-weight / underflow statuses on it.
//
// Storage of one query's numbers (MomentLayout):
//   full   (local fit, bandwidth objective): A (q x q row-major; the solve reads the upper
//          triangle) then T (q x k row-major);
//   packed (attention partials): A's upper triangle row by row, which is omega, mu~ (p) and
//          Sigma~ packed (p(p+1)/2), then nu (k) and Gamma (k x p row-major). With p = 0 it is
//          omega and nu: the softmax / Nadaraya-Watson statistics.
// Each derivative weight vector appends one more such block. The merge does not depend on the
// storage; finalisation (solve_inputs) unpacks either storage into the solve's A and T.
//
// merge_factors / merge_running / solve_inputs are ATTNREG_HD templates on float/double
// (shared with the CUDA kernels); LocalMoments itself is the host container (double).
#pragma once

#include "attnreg/base/hd.hpp"

#include <cstdint>
#include <vector>

namespace attnreg {
namespace moments {

/// Where the moments of one query sit in its row of numbers (see the header comment).
struct MomentLayout {
  int p = 0;            ///< centred design columns (mu has p entries, Sigma is p x p)
  int k = 0;            ///< value columns (T is q x k)
  int n_deriv = 0;      ///< derivative weight vectors, each with its own A and T block
  bool packed = false;  ///< attention storage instead of the local-fit storage

  /// The local-fit storage (A q x q, T q x k per block).
  ATTNREG_HD static MomentLayout full_storage(int p, int k, int n_deriv = 0) {
    MomentLayout L;
    L.p = p;
    L.k = k;
    L.n_deriv = n_deriv;
    return L;
  }
  /// The attention storage (packed A, nu, Gamma); p = 0: softmax / Nadaraya-Watson.
  ATTNREG_HD static MomentLayout packed_storage(int p, int k) {
    MomentLayout L;
    L.p = p;
    L.k = k;
    L.packed = true;
    return L;
  }

  ATTNREG_HD int q() const { return 1 + p; }
  /// Numbers of A in one block: q*q (full) or q(q+1)/2 (packed upper triangle).
  ATTNREG_HD long long n_design() const {
    return packed ? static_cast<long long>(q()) * (q() + 1) / 2 : static_cast<long long>(q()) * q();
  }
  ATTNREG_HD long long n_values() const { return static_cast<long long>(q()) * k; }
  /// Numbers of one weight vector's block (A, then T).
  ATTNREG_HD long long n_block() const { return n_design() + n_values(); }
  /// Numbers of one query: the weights' block and one block per derivative.
  ATTNREG_HD long long n_stats() const { return n_block() * (1 + n_deriv); }
  /// Offset of A(i, j), i <= j, in a block.
  ATTNREG_HD long long a_index(int i, int j) const {
    return packed ? static_cast<long long>(i) * q() - (static_cast<long long>(i) * (i - 1)) / 2 +
                        (j - i)
                  : static_cast<long long>(i) * q() + j;
  }
  /// Offset of T(a, o) (design term a, value column o) in a block.
  ATTNREG_HD long long t_index(int a, int o) const {
    if (!packed) return n_design() + static_cast<long long>(a) * k + o;
    return a == 0 ? n_design() + o : n_design() + k + static_cast<long long>(o) * p + (a - 1);
  }
  ATTNREG_HD bool operator==(const MomentLayout& o) const {
    return p == o.p && k == o.k && n_deriv == o.n_deriv && packed == o.packed;
  }
};

/// Common scale of two partials with maxima ma, mb: returns m = max(ma, mb) and the factors
/// ca = exp(ma - m), cb = exp(mb - m) (0 for an empty partial, whose max is -inf).
template <class T>
ATTNREG_HD T merge_factors(T ma, T mb, T& ca, T& cb) {
  const T m = tile::max_t(ma, mb);
  if (m == tile::neg_inf<T>()) {
    ca = T(1);
    cb = T(0);
    return m;
  }
  ca = (ma == tile::neg_inf<T>()) ? T(0) : tile::exp_t(ma - m);
  cb = (mb == tile::neg_inf<T>()) ? T(0) : tile::exp_t(mb - m);
  return m;
}

/// The merge: a (max ma, n numbers, optional peak) absorbs b (max mb). Afterwards a holds the
/// moments over both row sets relative to max(ma, mb), as if one pass had seen all the rows.
/// peak_a null: no peak is tracked.
template <class T>
ATTNREG_HD void merge_running(T& ma, T* a, T mb, const T* b, long long n, T* peak_a = nullptr,
                              T peak_b = T(0)) {
  T ca, cb;
  const T m = merge_factors(ma, mb, ca, cb);
  for (long long i = 0; i < n; ++i) a[i] = ca * a[i] + cb * b[i];
  if (peak_a != nullptr) *peak_a = tile::max_t(ca * *peak_a, cb * peak_b);
  ma = m;
}

/// Finalisation of one block (v = 0: the weights; v = 1 + j: derivative j) of one query's
/// numbers into the solve's inputs: A full and symmetric (q x q row-major) and T (q x k
/// row-major), whatever the storage.
template <class T>
ATTNREG_HD void solve_inputs(const MomentLayout& L, const T* row, int v, T* A, T* Tv) {
  const T* blk = row + static_cast<long long>(v) * L.n_block();
  const int q = L.q();
  for (int i = 0; i < q; ++i)
    for (int j = i; j < q; ++j) {
      const T x = blk[L.a_index(i, j)];
      A[i * q + j] = x;
      A[j * q + i] = x;
    }
  for (int a = 0; a < q; ++a)
    for (int o = 0; o < L.k; ++o) Tv[a * L.k + o] = blk[L.t_index(a, o)];
}

/// The local moments of a set of queries (host, double): per query the running max, the
/// optional peak and layout.n_stats() numbers.
struct LocalMoments {
  MomentLayout layout;
  std::vector<double> max;    ///< per query: running max (log scale); -inf: no row seen
  std::vector<double> peak;   ///< per query, or empty (not tracked): largest weight / exp(max)
  std::vector<double> stats;  ///< query-major: query i's numbers at [i n_stats, (i + 1) n_stats)

  /// The moments of no rows (the identity of merge) for `rows` queries.
  static LocalMoments empty(std::int64_t rows, const MomentLayout& layout, bool track_peak);

  std::int64_t rows() const { return static_cast<std::int64_t>(max.size()); }
  double* row(std::int64_t i) { return stats.data() + i * layout.n_stats(); }
  const double* row(std::int64_t i) const { return stats.data() + i * layout.n_stats(); }
  /// Same layout, number of queries and peak tracking (what merge requires).
  bool same_shape(const LocalMoments& other) const;
  /// this <- this (+) other, query by query (merge_running). Throws InvalidArgument naming
  /// "other" when the shapes differ.
  void merge(const LocalMoments& other);
};

}  // namespace moments
}  // namespace attnreg
