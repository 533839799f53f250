#include "attnreg/solve/local_fit.hpp"
#include "attnreg/kernels/fast_sums.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "attnreg/base/error.hpp"
#include "attnreg/base/runtime.hpp"
#include "attnreg/detail/kernel_simd.hpp"
#include "attnreg/moments/local_moments.hpp"
#include "attnreg/bandwidth/criteria.hpp"

namespace attnreg {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---------------------------------------------------------------- reductions over a tile
// out[g] += sum_i a[i] * bs[g][i] for G columns, with 8-lane vector accumulators combined in a
// fixed order and a zero-padded tail (kernel_simd.hpp): no dependence on alignment or threads.
template <int G>
ATTNREG_SIMD_INLINE void dot_group(const double* a, const double* const* bs, std::size_t len, double* out) {
  using namespace simd;
  vd acc[G];
  for (int g = 0; g < G; ++g) acc[g] = splat(0.0);
  std::size_t i = 0;
  // Fully unrolled over g so that the accumulators live in registers.
  const double* b[G];
  ATTNREG_UNROLL
  for (int g = 0; g < G; ++g) b[g] = bs[g];
  for (; i + kLanes <= len; i += kLanes) {
    const vd av = load(a + i);
    ATTNREG_UNROLL
    for (int g = 0; g < G; ++g) acc[g] += av * load(b[g] + i);
  }
  if (i < len) {
    const vd av = load_partial(a + i, len - i);
    ATTNREG_UNROLL
    for (int g = 0; g < G; ++g) acc[g] += av * load_partial(b[g] + i, len - i);
  }
  for (int g = 0; g < G; ++g) out[g] += hsum(acc[g]);
}

/// out[g] += sum_i a[i] * bs[g][i] for g < nb, four columns at a time.
ATTNREG_SIMD_INLINE void multi_dot(const double* a, const double* const* bs, std::size_t nb, std::size_t len,
                      double* out) {
  std::size_t g = 0;
  for (; g + 4 <= nb; g += 4) dot_group<4>(a, bs + g, len, out + g);
  if (g + 3 == nb) {
    dot_group<3>(a, bs + g, len, out + g);
  } else if (g + 2 == nb) {
    dot_group<2>(a, bs + g, len, out + g);
  } else if (g + 1 == nb) {
    dot_group<1>(a, bs + g, len, out + g);
  }
}

// One tile of local moments: with design columns D_0 = 1, D_{1+a} = basis[a],
//   A[r][c] += sum_i w_i D_r D_c (upper triangle, row-major q x q),
//   T[r][o] += sum_i w_i D_r y_o (row-major q x k).
struct MomentTile {
  const double* w = nullptr;
  std::size_t len = 0;
  const double* const* basis = nullptr;  // p columns
  std::size_t p = 0;
  const double* const* y = nullptr;  // k columns
  std::size_t k = 0;
  const double* ones = nullptr;   // len ones
  const double* zeros = nullptr;  // len zeros
  double* A = nullptr;
  double* T = nullptr;
  double* wb = nullptr;              // scratch p x len
  const double** cols = nullptr;     // scratch, 2 (p + k) + 8 pointers
};

// 4 x 4 register block of the products sum_i L_r[i] R_c[i] (a tiny GEMM: 16 accumulators,
// 8 loads per 16 fused multiply-adds), added to out[r * 4 + c].
ATTNREG_SIMD_INLINE void block4x4(const double* const* L, const double* const* R, std::size_t len,
                                  double* out) {
  using namespace simd;
  vd acc[16];
  ATTNREG_UNROLL
  for (int j = 0; j < 16; ++j) acc[j] = splat(0.0);
  std::size_t i = 0;
  for (; i + kLanes <= len; i += kLanes) {
    vd a[4], b[4];
    ATTNREG_UNROLL
    for (int j = 0; j < 4; ++j) {
      a[j] = load(L[j] + i);
      b[j] = load(R[j] + i);
    }
    ATTNREG_UNROLL
    for (int r = 0; r < 4; ++r) {
      ATTNREG_UNROLL
      for (int c = 0; c < 4; ++c) acc[r * 4 + c] += a[r] * b[c];
    }
  }
  if (i < len) {
    vd a[4], b[4];
    ATTNREG_UNROLL
    for (int j = 0; j < 4; ++j) {
      a[j] = load_partial(L[j] + i, len - i);
      b[j] = load_partial(R[j] + i, len - i);
    }
    ATTNREG_UNROLL
    for (int r = 0; r < 4; ++r) {
      ATTNREG_UNROLL
      for (int c = 0; c < 4; ++c) acc[r * 4 + c] += a[r] * b[c];
    }
  }
  ATTNREG_UNROLL
  for (int j = 0; j < 16; ++j) out[j] = hsum(acc[j]);
}

// Whether 4 x 4 register blocks fit the registers of the running clone (32 vector registers
// of 8 doubles: AVX-512); otherwise dot products four columns at a time.
bool wide_registers() {
#if defined(__GNUC__) && defined(__x86_64__) && !defined(ATTNREG_NO_CLONES)
  static const bool wide = __builtin_cpu_supports("avx512f");
  return wide;
#else
  return false;
#endif
}

ATTNREG_SIMD_CLONES void accumulate_moments(const MomentTile& t) {
  const std::size_t q = t.p + 1, len = t.len;
  // Left rows w * D_r (D_0 = 1, D_{1+a} = basis a) and right columns D_c, then y_o.
  for (std::size_t a = 0; a < t.p; ++a) {
    double* wb = t.wb + a * len;
    const double* ba = t.basis[a];
#pragma omp simd
    for (std::size_t i = 0; i < len; ++i) wb[i] = t.w[i] * ba[i];
  }
  if (t.p >= 3 && wide_registers()) {
    // Blocked: rows r in [rb, rb+4) against columns c >= rb, padded with a zero column.
    const std::size_t nr = q + t.k;
    const std::size_t ql = (q + 3) / 4 * 4, nrp = (nr + 3) / 4 * 4;
    const double** L = t.cols;
    const double** R = t.cols + ql;
    for (std::size_t r = 0; r < ql; ++r) L[r] = r == 0 ? t.w : (r < q ? t.wb + (r - 1) * len : t.zeros);
    for (std::size_t c = 0; c < nrp; ++c)
      R[c] = c == 0 ? t.ones : (c < q ? t.basis[c - 1] : (c < nr ? t.y[c - q] : t.zeros));
    double out[16];
    for (std::size_t rb = 0; rb < q; rb += 4) {
      for (std::size_t cb = rb; cb < nr; cb += 4) {
        block4x4(L + rb, R + cb, len, out);
        for (std::size_t r = rb; r < rb + 4 && r < q; ++r)
          for (std::size_t c = std::max(cb, r); c < cb + 4 && c < nr; ++c) {
            const double v = out[(r - rb) * 4 + (c - cb)];
            if (c < q) {
              t.A[r * q + c] += v;
            } else {
              t.T[r * t.k + (c - q)] += v;
            }
          }
      }
    }
    return;
  }
  // Row 0: omega, mu', T_0.
  t.cols[0] = t.ones;
  for (std::size_t a = 0; a < t.p; ++a) t.cols[1 + a] = t.basis[a];
  for (std::size_t o = 0; o < t.k; ++o) t.cols[q + o] = t.y[o];
  double row[256];
  double* r = (q + t.k) <= 256 ? row : nullptr;
  std::vector<double> big;
  if (r == nullptr) {
    big.resize(q + t.k);
    r = big.data();
  }
  std::fill(r, r + q + t.k, 0.0);
  multi_dot(t.w, t.cols, q + t.k, len, r);
  for (std::size_t c = 0; c < q; ++c) t.A[c] += r[c];
  for (std::size_t o = 0; o < t.k; ++o) t.T[o] += r[q + o];
  // Rows 1..p: w * basis_a against basis_b (b >= a) and y.
  for (std::size_t a = 0; a < t.p; ++a) {
    const double* wb = t.wb + a * len;
    std::size_t nc = 0;
    for (std::size_t b = a; b < t.p; ++b) t.cols[nc++] = t.basis[b];
    for (std::size_t o = 0; o < t.k; ++o) t.cols[nc++] = t.y[o];
    std::fill(r, r + nc, 0.0);
    multi_dot(wb, t.cols, nc, len, r);
    for (std::size_t b = a; b < t.p; ++b) t.A[(1 + a) * q + 1 + b] += r[b - a];
    for (std::size_t o = 0; o < t.k; ++o) t.T[(1 + a) * t.k + o] += r[t.p - a + o];
  }
}

// Local-linear moments with P continuous columns and K outputs in one pass, all accumulators
// in registers: z_a = x_a - q_a is formed on the fly, D = [1, z]. Same sums as
// accumulate_moments (a different but equally fixed summation order).
template <int P, int K>
ATTNREG_SIMD_INLINE void fused_linear(const double* w, const double* const* x, const double* q,
                                      const double* const* y, std::size_t len, double* A,
                                      double* T) {
  using namespace simd;
  constexpr int kQ = P + 1;
  vd acc[kQ * (kQ + 1) / 2];
  vd tacc[kQ * K];
  for (auto& v : acc) v = splat(0.0);
  for (auto& v : tacc) v = splat(0.0);
  for (std::size_t i = 0; i < len; i += kLanes) {
    const std::size_t nl = len - i < static_cast<std::size_t>(kLanes) ? len - i : kLanes;
    auto ld = [&](const double* p) ATTNREG_LAMBDA_INLINE {
      return nl == kLanes ? load(p) : load_partial(p, nl);
    };
    const vd wv = ld(w + i);  // zero in padded lanes
    vd d[kQ], wd[kQ];
    d[0] = splat(1.0);
    wd[0] = wv;
    ATTNREG_UNROLL
    for (int a = 0; a < P; ++a) {
      d[1 + a] = ld(x[a] + i) - q[a];
      wd[1 + a] = wv * d[1 + a];
    }
    int idx = 0;
    ATTNREG_UNROLL
    for (int r = 0; r < kQ; ++r) {
      ATTNREG_UNROLL
      for (int c = r; c < kQ; ++c) acc[idx++] += c == 0 ? wd[0] : wd[r] * d[c];
    }
    ATTNREG_UNROLL
    for (int o = 0; o < K; ++o) {
      const vd yv = ld(y[o] + i);
      ATTNREG_UNROLL
      for (int r = 0; r < kQ; ++r) tacc[r * K + o] += wd[r] * yv;
    }
  }
  int idx = 0;
  for (int r = 0; r < kQ; ++r)
    for (int c = r; c < kQ; ++c) A[r * kQ + c] += hsum(acc[idx++]);
  for (int r = 0; r < kQ; ++r)
    for (int o = 0; o < K; ++o) T[r * K + o] += hsum(tacc[r * K + o]);
}

/// Dispatch for P in 0..3 (0 = local constant), K in 1..2; false for other shapes.
ATTNREG_SIMD_CLONES bool fused_linear_dispatch(std::size_t P, std::size_t K, const double* w,
                                               const double* const* x, const double* q,
                                               const double* const* y, std::size_t len,
                                               double* A, double* T) {
  switch (P * 10 + K) {
    case 1: fused_linear<0, 1>(w, x, q, y, len, A, T); return true;
    case 2: fused_linear<0, 2>(w, x, q, y, len, A, T); return true;
    case 11: fused_linear<1, 1>(w, x, q, y, len, A, T); return true;
    case 12: fused_linear<1, 2>(w, x, q, y, len, A, T); return true;
    case 21: fused_linear<2, 1>(w, x, q, y, len, A, T); return true;
    case 22: fused_linear<2, 2>(w, x, q, y, len, A, T); return true;
    case 31: fused_linear<3, 1>(w, x, q, y, len, A, T); return true;
    case 32: fused_linear<3, 2>(w, x, q, y, len, A, T); return true;
    default: return false;
  }
}

// ---------------------------------------------------------------- basis in bandwidth units
// Degree 1: z_a = xs_a - q_a for each continuous column. Degree p >= 2 (one continuous column):
// u, u^2, ..., u^p with u = xs_0 - q_0.
ATTNREG_SIMD_CLONES void build_basis(const KernelSpace& space, const PreparedQueries& Q, std::size_t qi, int degree,
                 std::size_t first, std::size_t len, double* buf, const double** ptrs) {
  if (degree == 0) return;
  const arma::mat& xs = space.scaled();
  const double* qc = Q.cont.colptr(qi);
  if (degree == 1) {
    for (std::size_t a = 0; a < space.n_continuous(); ++a) {
      const double* x = xs.colptr(a) + first;
      const double qa = qc[a];
      double* b = buf + a * len;
#pragma omp simd
      for (std::size_t i = 0; i < len; ++i) b[i] = x[i] - qa;
      ptrs[a] = b;
    }
    return;
  }
  const std::size_t dc = space.n_continuous();
  if (degree == 2 && dc > 1) {
    // Linear terms z_a, then the products z_a z_b (a <= b), as documented in local_fit.hpp.
    for (std::size_t a = 0; a < dc; ++a) {
      const double* x = xs.colptr(a) + first;
      const double qa = qc[a];
      double* b = buf + a * len;
#pragma omp simd
      for (std::size_t i = 0; i < len; ++i) b[i] = x[i] - qa;
      ptrs[a] = b;
    }
    std::size_t t = dc;
    for (std::size_t a = 0; a < dc; ++a)
      for (std::size_t c = a; c < dc; ++c, ++t) {
        const double* za = buf + a * len;
        const double* zc = buf + c * len;
        double* b = buf + t * len;
#pragma omp simd
        for (std::size_t i = 0; i < len; ++i) b[i] = za[i] * zc[i];
        ptrs[t] = b;
      }
    return;
  }
  const double* x = xs.colptr(0) + first;
  const double q0 = qc[0];
  double* b0 = buf;
#pragma omp simd
  for (std::size_t i = 0; i < len; ++i) b0[i] = x[i] - q0;
  ptrs[0] = b0;
  for (int a = 1; a < degree; ++a) {
    double* b = buf + static_cast<std::size_t>(a) * len;
    const double* prev = buf + static_cast<std::size_t>(a - 1) * len;
#pragma omp simd
    for (std::size_t i = 0; i < len; ++i) b[i] = prev[i] * b0[i];
    ptrs[a] = b;
  }
}

QueryStatus weight_status(double row_max) {
  if (!(row_max > 0.0)) return QueryStatus::no_weight;
  if (row_max < KernelSpace::kTinyWeight) return QueryStatus::underflow;
  return QueryStatus::ok;
}

// ---------------------------------------------------------------- the moments sink
class MomentSink final : public TileSink {
 public:
  MomentSink(const KernelSpace& space, const arma::mat& Y, const LocalPolySpec& spec,
             const PreparedQueries& Q, const LocalEvalRequest& req, LocalEvalResult& out,
             const std::vector<double>& penalty)
      : space_(space), Y_(Y), spec_(spec), Q_(Q), req_(req), out_(out), pen_(penalty) {
    p_ = LocalPolySpec::n_terms(spec.degree, space.n_continuous());
    q_ = p_ + 1;
    k_ = Y.n_cols;
    // Per slot one query's LocalMoments row: A (q x q) then T (q x k).
    block_ = moments::LocalMoments::empty(
        KernelSpace::kBlock,
        moments::MomentLayout::full_storage(static_cast<int>(p_), static_cast<int>(k_)), false);
    basis_.resize(std::max<std::size_t>(p_, 1) * KernelSpace::kTile);
    wb_.resize(std::max<std::size_t>(p_, 1) * KernelSpace::kTile);
    ones_.assign(KernelSpace::kTile, 1.0);
    zeros_.assign(KernelSpace::kTile, 0.0);
    bptr_.resize(std::max<std::size_t>(p_, 1));
    yptr_.resize(k_);
    cols_.resize(2 * (q_ + k_) + 8);
    Af_.resize(q_ * q_);
    R_.resize(q_ * (1 + k_));
    L_.resize(q_ * q_);
    s_.resize(q_);
  }

  void begin_block(const std::size_t* queries, std::size_t count) override {
    qs_ = queries;
    count_ = count;
    std::fill(block_.row(0), block_.row(static_cast<std::int64_t>(count)), 0.0);
  }

  void tile(std::size_t slot, std::size_t first, std::size_t len, const double* w) override {
    for (std::size_t o = 0; o < k_; ++o) yptr_[o] = Y_.colptr(o) + first;
    if (spec_.degree <= 1) {
      const arma::mat& xs = space_.scaled();
      for (std::size_t a = 0; a < p_ && a < 3; ++a) xptr_[a] = xs.colptr(a) + first;
      if (fused_linear_dispatch(p_, k_, w, xptr_, Q_.cont.colptr(qs_[slot]), yptr_.data(), len,
                                A_of(slot), T_of(slot)))
        return;
    }
    // Sub-chunks small enough that the basis columns and w * basis stay in L1.
    const std::size_t chunk = p_ <= 2 ? len : std::max<std::size_t>(64, 2048 / p_ / 8 * 8);
    for (std::size_t c0 = 0; c0 < len; c0 += chunk) {
      const std::size_t cl = std::min(chunk, len - c0);
      build_basis(space_, Q_, qs_[slot], spec_.degree, first + c0, cl, basis_.data(), bptr_.data());
      for (std::size_t o = 0; o < k_; ++o) yptr_[o] = Y_.colptr(o) + first + c0;
      MomentTile t;
      t.w = w + c0;
      t.len = cl;
      t.basis = bptr_.data();
      t.p = p_;
      t.y = yptr_.data();
      t.k = k_;
      t.ones = ones_.data();
      t.zeros = zeros_.data();
      t.A = A_of(slot);
      t.T = T_of(slot);
      t.wb = wb_.data();
      t.cols = cols_.data();
      accumulate_moments(t);
    }
  }

  void end_block(const double* row_max) override {
    for (std::size_t s = 0; s < count_; ++s) finish(s, row_max[s]);
  }

  /// Moments of `slot` computed elsewhere (fast sums): one row of layout() (A then T).
  void set_moments(std::size_t slot, const double* row) {
    std::copy(row, row + block_.layout.n_stats(), block_.row(static_cast<std::int64_t>(slot)));
  }
  const moments::MomentLayout& layout() const { return block_.layout; }

 private:
  double* A_of(std::size_t slot) { return block_.row(static_cast<std::int64_t>(slot)); }
  double* T_of(std::size_t slot) { return A_of(slot) + q_ * q_; }

  // Solve the system for moments (A, T) plus the ridge lambda * omega * penalty. Writes the
  // solution [A^{-1} e1, A^{-1} T] into R_ (q x (1 + k), row-major). False when singular.
  bool solve(const double* A, const double* T) {
    const std::size_t r = 1 + k_;
    for (std::size_t i = 0; i < q_; ++i) {
      R_[i * r] = i == 0 ? 1.0 : 0.0;
      for (std::size_t o = 0; o < k_; ++o) R_[i * r + 1 + o] = T[i * k_ + o];
    }
    return local_solve::ridge_spd_solve(A, q_, spec_.ridge, pen_.data(), R_.data(), r,
                                        Af_.data(), L_.data(), s_.data()) ==
           local_solve::SolveStatus::ok;
  }

  void finish(std::size_t s, double row_max) {
    const std::size_t qi = qs_[s];
    double* A = A_of(s);
    double* T = T_of(s);
    const std::size_t r = 1 + k_;
    const std::int64_t self =
        (req_.loo || (req_.moments && !Q_.self.empty())) ? Q_.self[qi] : -1;

    // Raw moments for partials (partials.hpp): the sums as accumulated (own row excluded).
    if (req_.moments) {
      std::copy(A, A + q_ * q_, out_.moment_A.colptr(qi));
      std::copy(T, T + q_ * k_, out_.moment_T.colptr(qi));
      out_.moment_max(qi) = row_max;
      if (!(req_.fit || req_.coefficients || req_.gradient || req_.loo)) return;
    }

    // Leave-one-out first: the accumulated sums exclude the query's own row.
    if (self >= 0 && req_.loo) {
      QueryStatus st = weight_status(row_max);
      if (st == QueryStatus::ok && !solve(A, T)) st = QueryStatus::singular;
      out_.loo_status[qi] = st;
      for (std::size_t o = 0; o < k_; ++o) out_.loo(qi, o) = st == QueryStatus::ok ? R_[1 + o] : kNaN;
    }

    // Full fit: add the own row back (its basis is 0, so only A_00 and T_0 change).
    double w_self = 0.0;
    if (self >= 0) {
      const auto k = static_cast<std::size_t>(self);
      w_self = space_.self_weight(k);
      A[0] += w_self;
      for (std::size_t o = 0; o < k_; ++o) T[o] += w_self * Y_(k, o);
      row_max = std::max(row_max, w_self);
    }
    QueryStatus st = weight_status(row_max);
    if (st == QueryStatus::ok && !solve(A, T)) st = QueryStatus::singular;
    out_.status[qi] = st;
    const bool ok = st == QueryStatus::ok;
    if (req_.fit)
      for (std::size_t o = 0; o < k_; ++o) out_.fit(qi, o) = ok ? R_[1 + o] : kNaN;
    if (req_.coefficients)
      for (std::size_t a = 0; a < q_; ++a) out_.coefficients(a, qi) = ok ? R_[a * r] : kNaN;
    if (req_.loo && self >= 0) out_.leverage(qi) = ok ? w_self * R_[0] : kNaN;
    if (req_.solution)
      for (std::size_t a = 0; a < q_; ++a)
        for (std::size_t o = 0; o < k_; ++o)
          out_.solution(qi, a, o) = ok ? R_[a * r + 1 + o] : kNaN;
    if (req_.gradient) {
      // Slopes in bandwidth units divided by h give d m / d x in data units (the first
      // n_continuous basis terms are the linear ones for every degree >= 1).
      const auto& cc = space_.continuous_columns();
      const std::size_t n_grad = cc.size();
      for (std::size_t a = 0; a < n_grad; ++a) {
        const std::size_t col = cc[a];
        const double h = space_.bandwidth()(col);
        for (std::size_t o = 0; o < k_; ++o)
          out_.gradient(qi, col, o) = ok ? R_[(1 + a) * r + 1 + o] / h : kNaN;
      }
    }
  }

  const KernelSpace& space_;
  const arma::mat& Y_;
  const LocalPolySpec& spec_;
  const PreparedQueries& Q_;
  const LocalEvalRequest& req_;
  LocalEvalResult& out_;
  const std::vector<double>& pen_;
  std::size_t p_ = 0, q_ = 1, k_ = 1;
  const std::size_t* qs_ = nullptr;
  std::size_t count_ = 0;
  moments::LocalMoments block_;  // the block's moments, one row per slot
  std::vector<double> basis_, wb_, ones_, zeros_, Af_, R_, L_, s_;
  std::vector<const double*> bptr_, yptr_, cols_;
  const double* xptr_[3] = {nullptr, nullptr, nullptr};
};

// ---------------------------------------------------------------- the weights sink
// l_i(x) = w_i (c_0 + sum_a c_a z_ia) with c = A^{-1} e1, written to W(q, original row).
class WeightSink final : public TileSink {
 public:
  WeightSink(const KernelSpace& space, const PreparedQueries& Q, int degree,
             const arma::mat& coef, arma::mat& W)
      : space_(space), Q_(Q), degree_(degree), coef_(coef), W_(W) {
    p_ = LocalPolySpec::n_terms(degree, space.n_continuous());
    basis_.resize(std::max<std::size_t>(p_, 1) * KernelSpace::kTile);
    bptr_.resize(std::max<std::size_t>(p_, 1));
    l_.resize(KernelSpace::kTile);
  }
  void begin_block(const std::size_t* queries, std::size_t) override { qs_ = queries; }
  void tile(std::size_t slot, std::size_t first, std::size_t len, const double* w) override {
    const std::size_t qi = qs_[slot];
    build_basis(space_, Q_, qi, degree_, first, len, basis_.data(), bptr_.data());
    const double c0 = coef_(0, qi);
    for (std::size_t i = 0; i < len; ++i) l_[i] = c0;
    for (std::size_t a = 0; a < p_; ++a) {
      const double ca = coef_(1 + a, qi);
      const double* b = bptr_[a];
      for (std::size_t i = 0; i < len; ++i) l_[i] += ca * b[i];
    }
    const auto& order = space_.order();
    for (std::size_t i = 0; i < len; ++i) W_(qi, order[first + i]) = w[i] * l_[i];
  }
  void end_block(const double*) override {}

 private:
  const KernelSpace& space_;
  const PreparedQueries& Q_;
  int degree_;
  const arma::mat& coef_;
  arma::mat& W_;
  std::size_t p_ = 0;
  const std::size_t* qs_ = nullptr;
  std::vector<double> basis_, l_;
  std::vector<const double*> bptr_;
};

// Feeds fast-sum moments (fast_sums.hpp) to a MomentSink in blocks of KernelSpace::kBlock.
class FastMomentFeeder final : public FastMomentsConsumer {
 public:
  FastMomentFeeder(const KernelSpace& space, const arma::mat& Y, const LocalPolySpec& spec,
                   const PreparedQueries& Q, const LocalEvalRequest& req, LocalEvalResult& out,
                   const std::vector<double>& penalty)
      : sink_(space, Y, spec, Q, req, out, penalty),
        q_(1 + LocalPolySpec::n_terms(spec.degree, 1)),
        k_(Y.n_cols) {
    block_ = moments::LocalMoments::empty(KernelSpace::kBlock, sink_.layout(), false);
  }
  void query(const FastMomentsQuery& fq) override {
    const std::size_t s = qs_.size(), C = 1 + k_;
    qs_.push_back(fq.query);
    // A[a][b] = sum w u^(a+b), T[a][o] = sum w u^a y_o (basis u, ..., u^p in bandwidth units).
    double* A = block_.row(static_cast<std::int64_t>(s));
    double* T = A + q_ * q_;
    for (std::size_t a = 0; a < q_; ++a) {
      for (std::size_t b = 0; b < q_; ++b) A[a * q_ + b] = fq.M[(a + b) * C];
      for (std::size_t o = 0; o < k_; ++o) T[a * k_ + o] = fq.M[a * C + 1 + o];
    }
    // Every positive weight in a window is >= kTinyWeight (fast_sums_eligible).
    rmax_[s] = fq.positive > 0 ? 1.0 : 0.0;
    if (qs_.size() == KernelSpace::kBlock) finish();
  }
  void finish() override {
    if (qs_.empty()) return;
    sink_.begin_block(qs_.data(), qs_.size());
    for (std::size_t s = 0; s < qs_.size(); ++s)
      sink_.set_moments(s, block_.row(static_cast<std::int64_t>(s)));
    sink_.end_block(rmax_);
    qs_.clear();
  }

 private:
  MomentSink sink_;
  std::size_t q_, k_;
  std::vector<std::size_t> qs_;
  moments::LocalMoments block_;
  double rmax_[KernelSpace::kBlock];
};

std::vector<double> penalty_scales(const KernelSpace& space, int degree) {
  const auto& cc = space.continuous_columns();
  arma::vec h(cc.size());
  for (std::size_t a = 0; a < cc.size(); ++a) h(a) = space.bandwidth()(cc[a]);
  return local_penalty_scales(h, degree);
}

const char* degree_name(int degree) {
  switch (degree) {
    case 0: return "local constant";
    case 1: return "local linear";
    case 2: return "local quadratic";
    default: return "local cubic";
  }
}

}  // namespace

std::vector<double> local_penalty_scales(const arma::vec& h, int degree) {
  // Ridge on the slopes in data units: lambda * omega * sum_a beta_a^2. In bandwidth units the
  // coefficient of (x_a / h_a)^e is beta h^e, so the penalty weight is h^(-2e).
  std::vector<double> pen;
  if (degree == 1 || (degree == 2 && h.n_elem > 1)) {
    for (std::size_t a = 0; a < h.n_elem; ++a) pen.push_back(1.0 / (h(a) * h(a)));
    if (degree == 2)  // products z_a z_b: coefficient beta h_a h_b
      for (std::size_t a = 0; a < h.n_elem; ++a)
        for (std::size_t c = a; c < h.n_elem; ++c) pen.push_back(1.0 / (h(a) * h(a) * h(c) * h(c)));
  } else if (degree >= 2 && h.n_elem >= 1) {
    for (int e = 1; e <= degree; ++e) pen.push_back(std::pow(h(0), -2.0 * e));
  }
  return pen;
}

void local_polynomial_solve(const arma::mat& A, const arma::mat& T, const arma::vec& row_max,
                            std::size_t k, double ridge, const std::vector<double>& penalty,
                            arma::mat& fit, std::vector<QueryStatus>& status) {
  const std::size_t q = penalty.size() + 1, m = A.n_cols;
  check::require(A.n_rows == q * q && T.n_rows == q * k && T.n_cols == m && row_max.n_elem == m,
                 "partial", "moments of inconsistent shape (merge partials of the same fit)");
  fit.set_size(m, k);
  status.assign(m, QueryStatus::ok);
  std::vector<double> Af(q * q), R(q * (1 + k)), L(q * q), sc(q);
  const std::size_t r = 1 + k;
  for (std::size_t qi = 0; qi < m; ++qi) {
    const double* Tq = T.colptr(qi);
    for (std::size_t i = 0; i < q; ++i) {
      R[i * r] = i == 0 ? 1.0 : 0.0;
      for (std::size_t o = 0; o < k; ++o) R[i * r + 1 + o] = Tq[i * k + o];
    }
    QueryStatus st = weight_status(row_max(qi));
    // The steps of MomentSink::solve: the omega-scaled ridge, then the equilibrated solve.
    if (st == QueryStatus::ok &&
        local_solve::ridge_spd_solve(A.colptr(qi), q, ridge, penalty.data(), R.data(), r,
                                     Af.data(), L.data(), sc.data()) != local_solve::SolveStatus::ok)
      st = QueryStatus::singular;
    status[qi] = st;
    for (std::size_t o = 0; o < k; ++o) fit(qi, o) = st == QueryStatus::ok ? R[1 + o] : kNaN;
  }
}

LocalEvalResult local_polynomial_eval(const KernelSpace& space, const arma::mat& Y_internal,
                                      const LocalPolySpec& spec, const PreparedQueries& Q,
                                      const LocalEvalRequest& request, int n_threads) {
  check::require(spec.degree >= 0 && spec.degree <= 3, "degree", "must be 0, 1, 2 or 3");
  check::require(spec.degree <= 1 || (spec.degree == 2 && space.n_continuous() >= 1) ||
                     space.n_continuous() == 1,
                 "degree",
                 "degree 2 needs a continuous column and degree 3 exactly one (use degree 1 or 2 "
                 "for several)");
  check::require(std::isfinite(spec.ridge) && spec.ridge >= 0.0, "ridge",
                 "must be >= 0 and finite");
  check::require(!request.gradient || spec.degree >= 1, "gradient",
                 "needs degree >= 1 (a local constant fit has no slope; use local linear)");
  check::require(Y_internal.n_rows == space.n(), "Y_internal", "must have one row per training row");
  check::require(!request.loo || Q.self.size() == Q.m, "queries",
                 "leave-one-out needs the training rows as queries (training_queries())");
  const std::size_t m = Q.m, k = Y_internal.n_cols;
  const std::size_t q = 1 + LocalPolySpec::n_terms(spec.degree, space.n_continuous());
  LocalEvalResult out;
  out.status.assign(m, QueryStatus::ok);
  if (request.fit) out.fit.set_size(m, k);
  if (request.gradient) out.gradient.set_size(m, space.dim(), k);
  if (request.gradient) out.gradient.fill(kNaN);
  if (request.coefficients) out.coefficients.set_size(q, m);
  if (request.solution) out.solution.set_size(m, q, k);
  if (request.moments) {
    out.moment_A.zeros(q * q, m);
    out.moment_T.zeros(q * k, m);
    out.moment_max.zeros(m);
  }
  if (request.loo) {
    out.leverage.set_size(m);
    out.loo.set_size(m, k);
    out.loo_status.assign(m, QueryStatus::ok);
  }
  const std::vector<double> pen = penalty_scales(space, spec.degree);
  if (!request.moments && fast_sums_eligible(space, spec.degree)) {
    // 1-D compact kernel: exact fast sums over sorted windows (fast_sums.hpp).
    FastMomentsProblem fp;
    fp.kernel = space.spec().kernel.type;
    fp.n = space.n();
    fp.x = space.scaled().colptr(0);
    fp.a = space.obs_weights().is_empty() ? nullptr : space.obs_weights().memptr();
    fp.Y = Y_internal.memptr();
    fp.k = k;
    fp.m = m;
    fp.t = Q.cont.memptr();
    fp.self = request.loo ? Q.self.data() : nullptr;
    fp.max_power = static_cast<int>(2 * (q - 1));
    fp.n_threads = n_threads;
    fast_window_moments(fp, [&]() {
      return std::unique_ptr<FastMomentsConsumer>(
          new FastMomentFeeder(space, Y_internal, spec, Q, request, out, pen));
    });
    return out;
  }
  RunOptions ro;
  ro.n_threads = n_threads;
  ro.exclude_self = request.loo || (request.moments && Q.self.size() == Q.m && Q.m > 0);
  ro.label = degree_name(spec.degree);
  space.run(
      Q,
      [&]() {
        return std::unique_ptr<TileSink>(
            new MomentSink(space, Y_internal, spec, Q, request, out, pen));
      },
      ro);
  return out;
}

void throw_on_failed_query(const std::vector<QueryStatus>& status, const KernelSpace& space,
                           int degree, double ridge, const std::string& arg, bool leave_one_out) {
  throw_on_failed_query(status, space.spec().kernel, space.n_continuous(), space.n_categorical(),
                        degree, ridge, arg, leave_one_out);
}

void throw_on_failed_query(const std::vector<QueryStatus>& status, const Kernel& kernel,
                           std::size_t n_continuous, std::size_t n_categorical, int degree,
                           double ridge, const std::string& arg, bool leave_one_out) {
  std::size_t bad = status.size();
  for (std::size_t i = 0; i < status.size(); ++i)
    if (status[i] != QueryStatus::ok) {
      bad = i;
      break;
    }
  if (bad == status.size()) return;
  std::size_t count = 0;
  for (QueryStatus s : status) count += s != QueryStatus::ok;
  std::ostringstream msg;
  if (leave_one_out)
    msg << "leave-one-out fit at training row " << (bad + 1) << ": ";
  else
    msg << arg << " row " << (bad + 1) << ": ";
  switch (status[bad]) {
    case QueryStatus::no_weight:
    case QueryStatus::underflow: {
      const bool compact = kernel.compact() && n_continuous > 0;
      const char* other = leave_one_out ? " other than the row itself" : "";
      if (compact) {
        msg << "no training point" << other << " has a positive kernel weight (the "
            << kernel.name()
            << " kernel is zero beyond one bandwidth in any continuous column)";
      } else if (n_continuous > 0) {
        msg << "every kernel weight" << (status[bad] == QueryStatus::underflow ? " underflows" : " is 0 or underflows")
            << " in double precision (the nearest training point" << other
            << " is more than about 36 bandwidths away in the Gaussian metric)";
      } else {
        msg << "no training point" << other << " has a positive kernel weight";
      }
      if (n_categorical > 0)
        msg << "; categorical lambdas of 0 also give weight 0 to every other level";
      msg << "; increase the bandwidth or drop the point";
      break;
    }
    case QueryStatus::singular:
      msg << "the " << degree_name(degree) << " design is singular: the training points with "
          << "positive weight do not determine the " << (1 + LocalPolySpec::n_terms(degree, n_continuous))
          << " local coefficients (too few distinct neighbours"
          << (leave_one_out ? " once the row itself is left out" : "")
          << ", or a column constant among them); increase the bandwidth"
          << (ridge > 0.0 ? "" : ", set ridge > 0") << " or lower the degree";
      break;
    case QueryStatus::ok: break;
  }
  if (count > 1) msg << " [" << count << " of " << status.size() << " rows fail]";
  throw NumericalError(msg.str());
}

// ---------------------------------------------------------------- LocalPolynomial

void LocalPolynomial::require_fitted(const char* what) const {
  if (!fitted_flag_)
    throw InvalidArgument(std::string(what) + ": the model is not fitted yet (call fit first)");
}

LocalPolynomial& LocalPolynomial::fit(const arma::mat& X, const arma::mat& Y,
                                      const arma::vec& bandwidth,
                                      const arma::vec& sample_weight) {
  fitted_flag_ = false;
  have_fitted_ = false;
  check::require(opt_.degree >= 0 && opt_.degree <= 3, "degree",
                 "must be 0 (local constant), 1 (local linear), 2 or 3");
  check::require(std::isfinite(opt_.ridge) && opt_.ridge >= 0.0, "ridge",
                 "must be >= 0 and finite (0 = classical local linear)");
  (void)resolve_threads(opt_.n_threads);  // a bad n_threads is named at fit, not on first use
  check::require(X.n_rows >= 1, "X", "needs at least one row");
  check::require(Y.n_cols >= 1, "y", "needs at least one column (one output)");
  check::rows_match(Y, X.n_rows, "y", "X");
  check::all_finite(Y, "y");
  KernelSpec ks;
  ks.kernel = opt_.kernel;
  ks.var_types = parse_var_types(opt_.var_types, X.n_cols, "var_types");
  ks.unordered = opt_.unordered_kernel;
  ks.ordered = opt_.ordered_kernel;
  ks.algorithm = opt_.algorithm;
  ks.truncation = opt_.truncation;
  KernelSpace space(X, bandwidth, ks, sample_weight);

  const std::size_t dc = space.n_continuous();
  if ((opt_.degree == 3 && dc != 1) || (opt_.degree == 2 && dc == 0)) {
    std::ostringstream msg;
    msg << "degree " << opt_.degree << " needs "
        << (opt_.degree == 3 ? "exactly one continuous column" : "a continuous column")
        << ", X has " << dc
        << (opt_.degree == 3 ? " (use degree 1 or 2 for several continuous columns)"
                             : " (use degree 0 for categorical regressors only)");
    throw InvalidArgument("degree: " + msg.str());
  }
  const std::size_t q = 1 + LocalPolySpec::n_terms(opt_.degree, dc);
  if (X.n_rows < q && opt_.ridge == 0.0) {  // with a ridge the local fit is always defined
    std::ostringstream msg;
    msg << "a " << degree_name(opt_.degree) << " fit with " << dc << " continuous column"
        << (dc == 1 ? "" : "s") << " estimates " << q << " coefficients per point and needs at "
        << "least " << q << " rows, got " << X.n_rows << (X.n_rows == 1 ? " sample" : " samples")
        << " (use more data or a lower degree)";
    throw InvalidArgument("X: " + msg.str());
  }
  if (opt_.degree >= 1 && opt_.ridge == 0.0) {
    for (std::size_t j : space.continuous_columns()) {
      if (arma::all(X.col(j) == X(0, j))) {
        std::ostringstream msg;
        msg << "continuous column " << (j + 1) << " is constant, so its local slope is not "
            << "identified (drop the column, declare it categorical, or set ridge > 0)";
        throw InvalidArgument("X: " + msg.str());
      }
    }
  }

  space_ = std::move(space);
  x_ = X;
  y_ = Y;
  sample_weight_ = sample_weight;
  y_internal_.set_size(Y.n_rows, Y.n_cols);
  const auto& order = space_.order();
  for (std::size_t k = 0; k < order.size(); ++k) y_internal_.row(k) = Y.row(order[k]);
  // Distinct rows (see "Ties" in local_fit.hpp): the grouped space is only built with ties.
  groups_ = distinct_rows(X);
  const std::size_t G = groups_.X.n_rows, n = X.n_rows, kout = Y.n_cols;
  gweight_.zeros(G);
  gsum_.zeros(G, kout);
  for (std::size_t i = 0; i < n; ++i) {
    const double a = sample_weight.is_empty() ? 1.0 : sample_weight(i);
    const std::size_t g = groups_.group_of[i];
    gweight_(g) += a;
    gsum_.row(g) += a * Y.row(i);
  }
  gspace_ = KernelSpace();
  gy_internal_.reset();
  if (groups_.has_ties()) {
    const bool weighted = !sample_weight.is_empty() || arma::any(groups_.count != 1.0);
    gspace_ = KernelSpace(groups_.X, bandwidth, ks, weighted ? gweight_ : arma::vec());
    gy_internal_.zeros(G, kout);
    const auto& gorder = gspace_.order();
    for (std::size_t k = 0; k < G; ++k) {
      const std::size_t g = gorder[k];
      if (gweight_(g) > 0.0) gy_internal_.row(k) = gsum_.row(g) / gweight_(g);
    }
  }
  fitted_flag_ = true;
  fitted_.reset();
  leverage_.reset();
  loo_.reset();
  loo_status_.clear();
  fit_status_.clear();
  have_fitted_ = false;
  have_trace_ltl_ = false;
  stats_evaluations_ = 0;

  if (opt_.compute_fitted) {
    try {
      compute_statistics();
    } catch (...) {
      fitted_flag_ = false;
      throw;
    }
  }
  return *this;
}

void LocalPolynomial::ensure_statistics() const {
  std::lock_guard<std::mutex> lock(*stats_mutex_);
  if (!have_fitted_) compute_statistics();
}

void LocalPolynomial::compute_statistics() const {
  const std::size_t n = x_.n_rows, k = y_.n_cols;
  const LocalPolySpec spec{opt_.degree, opt_.ridge};
  ++stats_evaluations_;
  if (!groups_.has_ties()) {
    const PreparedQueries Q = space_.training_queries();
    LocalEvalRequest req;
    req.fit = true;
    req.loo = true;
    LocalEvalResult r = local_polynomial_eval(space_, y_internal_, spec, Q, req, opt_.n_threads);
    throw_on_failed_query(r.status, space_, opt_.degree, opt_.ridge,
                          "X (fitted values at the training rows)", false);
    fitted_ = std::move(r.fit);
    leverage_ = std::move(r.leverage);
    loo_ = std::move(r.loo);
    loo_status_ = std::move(r.loo_status);
    have_fitted_ = true;
    return;
  }
  // Grouped path: one pass over the distinct rows gives the full fit, the group's leverage
  // sum and the moments without the group; then one small solve per row for its LOO fit.
  const KernelSpace& gs = gspace_;
  const std::size_t G = gs.n();
  const PreparedQueries Q = gs.training_queries();
  LocalEvalRequest req;
  req.fit = true;
  req.loo = true;
  req.moments = true;
  LocalEvalResult r = local_polynomial_eval(gs, gy_internal_, spec, Q, req, opt_.n_threads);
  std::vector<QueryStatus> row_status(n);
  for (std::size_t i = 0; i < n; ++i) row_status[i] = r.status[groups_.group_of[i]];
  throw_on_failed_query(row_status, space_, opt_.degree, opt_.ridge,
                        "X (fitted values at the training rows)", false);
  const std::size_t q = 1 + LocalPolySpec::n_terms(opt_.degree, gs.n_continuous());
  std::vector<double> unit(G);  // u_g: kernel weight of one unit of observation weight at 0
  for (std::size_t g = 0; g < G; ++g) {
    const double sw = gs.self_weight(gs.position()[g]);
    unit[g] = gweight_(g) > 0.0 ? sw / gweight_(g) : 0.0;
  }
  arma::mat A(q * q, n), T(q * k, n);
  arma::vec rmax(n);
  fitted_.set_size(n, k);
  leverage_.set_size(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t g = groups_.group_of[i];
    const double a = sample_weight_.is_empty() ? 1.0 : sample_weight_(i);
    fitted_.row(i) = r.fit.row(g);
    leverage_(i) = gweight_(g) > 0.0 ? r.leverage(g) * (a / gweight_(g)) : 0.0;
    std::copy(r.moment_A.colptr(g), r.moment_A.colptr(g) + q * q, A.colptr(i));
    std::copy(r.moment_T.colptr(g), r.moment_T.colptr(g) + q * k, T.colptr(i));
    const double others = unit[g] * (gweight_(g) - a);  // exact 0 when no other row weighs
    A(0, i) += others;
    for (std::size_t o = 0; o < k; ++o) T(o, i) += unit[g] * (gsum_(g, o) - a * y_(i, o));
    rmax(i) = std::max(r.moment_max(g), others);
  }
  local_polynomial_solve(A, T, rmax, k, opt_.ridge, penalty_scales(gs, opt_.degree), loo_,
                         loo_status_);
  have_fitted_ = true;
}

double LocalPolynomial::trace_LtL() const {
  require_fitted("trace_LtL");
  std::lock_guard<std::mutex> lock(*stats_mutex_);
  if (have_trace_ltl_) return trace_ltl_;
  // Equivalent-kernel weights over the distinct rows, in blocks of queries (distinct rows).
  const KernelSpace& gs = grouped_space();
  const std::size_t G = gs.n(), n = x_.n_rows;
  arma::vec f(G, arma::fill::zeros);  // sum_{j in h} a_j^2 / W_h^2
  for (std::size_t j = 0; j < n; ++j) {
    const double a = sample_weight_.is_empty() ? 1.0 : sample_weight_(j);
    f(groups_.group_of[j]) += a * a;
  }
  for (std::size_t h = 0; h < G; ++h) f(h) = gweight_(h) > 0.0 ? f(h) / (gweight_(h) * gweight_(h)) : 0.0;
  const arma::mat& gy = groups_.has_ties() ? gy_internal_ : y_internal_;
  const std::size_t block = std::max<std::size_t>(1, std::min<std::size_t>(G, (1u << 22) / std::max<std::size_t>(G, 1)));
  double total = 0.0;
  for (std::size_t r0 = 0; r0 < G; r0 += block) {
    const std::size_t r1 = std::min(G, r0 + block);
    const PreparedQueries Q = gs.prepare(groups_.X.rows(r0, r1 - 1), "X");
    LocalEvalRequest req;
    req.fit = false;
    req.coefficients = true;
    LocalEvalResult r = local_polynomial_eval(gs, gy, LocalPolySpec{opt_.degree, opt_.ridge}, Q,
                                              req, opt_.n_threads);
    throw_on_failed_query(r.status, gs, opt_.degree, opt_.ridge, "X", false);
    arma::mat W(Q.m, G, arma::fill::zeros);
    RunOptions ro;
    ro.n_threads = opt_.n_threads;
    ro.label = "tr(L'L)";
    const int degree = opt_.degree;
    gs.run(
        Q,
        [&]() { return std::unique_ptr<TileSink>(new WeightSink(gs, Q, degree, r.coefficients, W)); },
        ro);
    for (std::size_t b = 0; b < Q.m; ++b) {
      double s = 0.0;
      for (std::size_t h = 0; h < G; ++h) s += f(h) * W(b, h) * W(b, h);
      total += groups_.count(r0 + b) * s;
    }
  }
  trace_ltl_ = total;
  have_trace_ltl_ = true;
  return total;
}

LocalEvalResult LocalPolynomial::evaluate(const arma::mat& X_new, const LocalEvalRequest& req,
                                          const std::string& arg) const {
  const PreparedQueries Q = space_.prepare(X_new, arg);
  LocalEvalResult r = local_polynomial_eval(space_, y_internal_, LocalPolySpec{opt_.degree, opt_.ridge},
                                            Q, req, opt_.n_threads);
  throw_on_failed_query(r.status, space_, opt_.degree, opt_.ridge, arg, false);
  return r;
}

arma::mat LocalPolynomial::predict(const arma::mat& X_new) const {
  require_fitted("predict");
  LocalEvalRequest req;
  return evaluate(X_new, req, "X_new").fit;
}

arma::cube LocalPolynomial::gradient(const arma::mat& X_new) const {
  require_fitted("gradient");
  check::require(opt_.degree >= 1, "gradient",
                 "needs degree >= 1 (a local constant fit has no slope; use local linear)");
  LocalEvalRequest req;
  req.fit = false;
  req.gradient = true;
  return evaluate(X_new, req, "X_new").gradient;
}

arma::mat LocalPolynomial::attention_weights(const arma::mat& X_new) const {
  require_fitted("attention_weights");
  const PreparedQueries Q = space_.prepare(X_new, "X_new");
  LocalEvalRequest req;
  req.fit = false;
  req.coefficients = true;
  LocalEvalResult r = local_polynomial_eval(space_, y_internal_, LocalPolySpec{opt_.degree, opt_.ridge},
                                            Q, req, opt_.n_threads);
  throw_on_failed_query(r.status, space_, opt_.degree, opt_.ridge, "X_new", false);
  arma::mat W(Q.m, space_.n(), arma::fill::zeros);
  RunOptions ro;
  ro.n_threads = opt_.n_threads;
  ro.label = "attention weights";
  const int degree = opt_.degree;
  space_.run(
      Q,
      [&]() {
        return std::unique_ptr<TileSink>(new WeightSink(space_, Q, degree, r.coefficients, W));
      },
      ro);
  return W;
}

const arma::mat& LocalPolynomial::fitted() const {
  require_fitted("fitted");
  ensure_statistics();
  return fitted_;
}

const arma::vec& LocalPolynomial::leverage() const {
  require_fitted("leverage");
  ensure_statistics();
  return leverage_;
}

arma::mat LocalPolynomial::loo_fitted() const {
  require_fitted("loo_fitted");
  ensure_statistics();
  throw_on_failed_query(loo_status_, space_, opt_.degree, opt_.ridge, "X", true);
  return loo_;
}

double LocalPolynomial::cv_score() const {
  require_fitted("cv_score");
  ensure_statistics();
  // A row of positive weight without a leave-one-out fit: the criterion does not exist.
  for (std::size_t i = 0; i < x_.n_rows; ++i) {
    const double w = sample_weight_.is_empty() ? 1.0 : sample_weight_(i);
    if (w > 0.0 && loo_status_[i] != QueryStatus::ok)
      return std::numeric_limits<double>::infinity();
  }
  return criteria::loo_mean_square(y_, loo_, sample_weight_);  // criteria.hpp
}

LocalFitState LocalPolynomial::state() const {
  require_fitted("state");
  LocalFitState s;
  s.degree = opt_.degree;
  s.kernel = opt_.kernel.name();
  s.var_types = format_var_types(space_.var_types());
  s.unordered_kernel = opt_.unordered_kernel.name();
  s.ordered_kernel = opt_.ordered_kernel.name();
  s.ridge = opt_.ridge;
  s.algorithm = pair_algorithm_name(opt_.algorithm);
  s.truncation = opt_.truncation;
  s.X = x_;
  s.Y = y_;
  s.bandwidth = space_.bandwidth();
  s.sample_weight = sample_weight_;
  if (have_fitted_) {
    s.fitted = fitted_;
    s.leverage = leverage_;
    s.loo = loo_;
    s.loo_status.set_size(loo_status_.size());
    for (std::size_t i = 0; i < loo_status_.size(); ++i)
      s.loo_status(i) = static_cast<double>(loo_status_[i]);
  }
  return s;
}

LocalPolynomial LocalPolynomial::from_state(const LocalFitState& s) {
  LocalFitOptions o;
  o.degree = s.degree;
  o.kernel = Kernel::from_name(s.kernel, "state.kernel");
  o.var_types = s.var_types;
  o.unordered_kernel = CategoricalKernel::from_name(s.unordered_kernel, false, "state.unordered_kernel");
  o.ordered_kernel = CategoricalKernel::from_name(s.ordered_kernel, true, "state.ordered_kernel");
  o.ridge = s.ridge;
  o.algorithm = pair_algorithm_from_name(s.algorithm, "state.algorithm");
  o.truncation = s.truncation;
  const bool have = !s.fitted.is_empty();
  if (have) {
    check::require(s.fitted.n_rows == s.X.n_rows && s.fitted.n_cols == s.Y.n_cols &&
                       s.leverage.n_elem == s.X.n_rows && s.loo.n_rows == s.X.n_rows &&
                       s.loo_status.n_elem == s.X.n_rows,
                   "state", "inconsistent local fit state (was it saved by this version of attnreg?)");
  }
  o.compute_fitted = false;
  LocalPolynomial m(o);
  m.fit(s.X, s.Y, s.bandwidth, s.sample_weight);
  m.opt_.compute_fitted = true;
  if (have) {
    m.fitted_ = s.fitted;
    m.leverage_ = s.leverage;
    m.loo_ = s.loo;
    m.loo_status_.resize(s.loo_status.n_elem);
    for (std::size_t i = 0; i < s.loo_status.n_elem; ++i)
      m.loo_status_[i] = static_cast<QueryStatus>(static_cast<int>(s.loo_status(i)));
    m.have_fitted_ = true;
  } else {
    m.opt_.compute_fitted = false;
  }
  return m;
}

}  // namespace attnreg
