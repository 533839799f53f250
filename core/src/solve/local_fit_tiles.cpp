#include "attnreg/detail/local_fit_internal.hpp"

#include <algorithm>
#include <vector>

#include "attnreg/detail/kernel_simd.hpp"

namespace attnreg {
namespace local_fit_detail {

namespace {

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

ATTNREG_SIMD_CLONES void accumulate_moments_clones(const MomentTile& t) {
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
ATTNREG_SIMD_CLONES bool fused_linear_dispatch_clones(std::size_t P, std::size_t K,
                                                      const double* w, const double* const* x,
                                                      const double* q, const double* const* y,
                                                      std::size_t len, double* A, double* T) {
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

// z_a = xs_a - q_a over rows [first, first + len) for the first dc columns, into buf.
ATTNREG_SIMD_INLINE void linear_terms(const arma::mat& xs, const double* qc, std::size_t dc,
                                      std::size_t first, std::size_t len, double* buf,
                                      const double** ptrs) {
  for (std::size_t a = 0; a < dc; ++a) {
    const double* x = xs.colptr(a) + first;
    const double qa = qc[a];
    double* b = buf + a * len;
#pragma omp simd
    for (std::size_t i = 0; i < len; ++i) b[i] = x[i] - qa;
    ptrs[a] = b;
  }
}

// Degree 1: z_a = xs_a - q_a for each continuous column. Degree p >= 2 (one continuous column):
// u, u^2, ..., u^p with u = xs_0 - q_0.
ATTNREG_SIMD_CLONES void build_basis_clones(const KernelSpace& space, const PreparedQueries& Q,
                                            std::size_t qi, int degree, std::size_t first,
                                            std::size_t len, double* buf, const double** ptrs) {
  if (degree == 0) return;
  const arma::mat& xs = space.scaled();
  const double* qc = Q.cont.colptr(qi);
  if (degree == 1) {
    linear_terms(xs, qc, space.n_continuous(), first, len, buf, ptrs);
    return;
  }
  const std::size_t dc = space.n_continuous();
  if (degree == 2 && dc > 1) {
    // Linear terms z_a, then the products z_a z_b (a <= b), as documented in local_fit.hpp.
    linear_terms(xs, qc, dc, first, len, buf, ptrs);
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

}  // namespace

void accumulate_moments(const MomentTile& t) { accumulate_moments_clones(t); }

bool fused_linear_dispatch(std::size_t P, std::size_t K, const double* w, const double* const* x,
                           const double* q, const double* const* y, std::size_t len, double* A,
                           double* T) {
  return fused_linear_dispatch_clones(P, K, w, x, q, y, len, A, T);
}

void build_basis(const KernelSpace& space, const PreparedQueries& Q, std::size_t qi, int degree,
                 std::size_t first, std::size_t len, double* buf, const double** ptrs) {
  build_basis_clones(space, Q, qi, degree, first, len, buf, ptrs);
}

}  // namespace local_fit_detail
}  // namespace attnreg
