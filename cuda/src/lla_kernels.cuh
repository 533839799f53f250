// attnreg CUDA backend: blockwise attention forward kernels (core/README.md, Conventions).
//
//   lla_forward_kernel<Cfg>      Zuo et al. 2025, arXiv:2510.01450, Algorithm 1 (FlashLLA) with the batched conjugate
//                                gradients of Algorithm 2 (lines 9-10 corrected: inner products
//                                with P, ridge times P), Kind::lla_blockwise; or, for small d,
//                                the explicit-Sigma variant (eqs. 10-11 + Cholesky),
//                                Kind::lla_direct.
//   softmax_forward_kernel<Cfg>  online-softmax Nadaraya-Watson attention (dot or rbf logits):
//                                the rho = 0 case of the same output pass.
//
// One CTA (kThreads = 128 threads, 4 warps) per (query block, head, batch): grid (n_blocks,
// heads, batch). The query block (Br rows, padded with zeros to the head-dim bucket D) stays in
// shared memory; key / value tiles of Bc rows stream through shared memory. Every per-row and
// per-tile piece of arithmetic is a function of attnreg/attention/lla_tile.hpp, the header the CPU
// blockwise path calls: online_update_row, rescale_row, weights_from_max_row, mask_row,
// add_key_bias_row, rbf_key_bias, center_mu_row, cg_init_row, sigma_p_finish_row, cg_step_row,
// lla_delta_row, lla_weights_row, normalize_row, weight_row, key_range, center_sigma, cholesky,
// cholesky_solve. This file adds only the tile GEMMs, the loads and stores, and the thread
// orchestration. Row r of a block is handled by thread r for the row operations.
//
// Two GEMM engines (the Cfg's TC flag):
//   TC = false  float32 SIMT: Q, K, V tiles are float in shared memory, each thread computes a
//               TMxTN register block. The accurate path (float32 inputs) and the direct kernel.
//   TC = true   tensor cores (nvcuda::wmma m16n16k16, float accumulators) for float16 and
//               bfloat16 inputs. Q, K, V stay in their 16-bit type (exact). Operands that are
//               float32 state (the weights W, W .* (P K'), the LLA output weights, the CG
//               direction P and the solution rho) are split into hi + lo 16-bit parts
//               (x = hi + lo to about 2^-16 relative) and multiplied twice, so statistics,
//               CG and output keep close to float32 accuracy; P and rho are first scaled per
//               row by a power of two (exact) so float16's range cannot overflow.
//
// Shapes: d and dv are padded with zeros up to D (32, 64 or 128). Zero columns change no logit,
// and the CG iterates stay in the span of mu, whose padded coordinates are zero, so the padded
// solve is the unpadded one. Tail rows of a query block and tail keys of a tile are zero-filled
// and masked (their logits are -inf, their weights 0).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "attnreg/attention/lla_tile.hpp"
#include "cuda_compat.cuh"
#include "attnreg/cuda/lla_params.hpp"

namespace attnreg {
namespace ATTNREG_CUDA_NS {
#if defined(ATTNREG_CUDA_SEPARATE_NS)
using ::attnreg::cuda::DType;
using ::attnreg::cuda::FwdParams;
using ::attnreg::cuda::Kind;
#endif
namespace kern {

namespace tile = ::attnreg::tile;

constexpr int kThreads = 128;
constexpr int kWarps = kThreads / 32;
constexpr int kDirectMaxD = 32;                                        // direct: d, dv <= 32
constexpr int kDirectPack = kDirectMaxD * (kDirectMaxD + 1) / 2;       // packed Sigma~ per row
constexpr int kCholRows = 8;                                           // rows factored at once

// ------------------------------------------------------------------ configurations

/// Block sizes per head-dim bucket, engine and kind (chosen so shared memory stays under the
/// 163 KiB an sm_80 block may opt into; sm_90 allows 227 KiB).
template <int D, bool TC, Kind K>
struct Blocks;
template <bool TC, Kind K>
struct Blocks<32, TC, K> {
  static constexpr int Br = K == Kind::lla_direct ? 32 : 64;
  static constexpr int Bc = K == Kind::lla_direct ? 32 : 64;
};
template <bool TC, Kind K>
struct Blocks<64, TC, K> {
  static constexpr int Br = (K == Kind::softmax || !TC) ? 64 : 32;
  static constexpr int Bc = (K == Kind::softmax || TC) ? 64 : 32;
};
template <bool TC, Kind K>
struct Blocks<128, TC, K> {
  static constexpr int Br = K == Kind::softmax ? 64 : 32;
  static constexpr int Bc = K == Kind::softmax ? 64 : 32;
};

template <class Elem_, int D_, bool TC_, Kind K_>
struct Cfg {
  using Elem = Elem_;  ///< element type of Q, K, V and O in global memory
  static constexpr int D = D_;
  static constexpr bool TC = TC_;
  static constexpr Kind kind = K_;
  /// Element type of the Q, K, V tiles in shared memory.
  using SElem = typename std::conditional<TC_, Elem_, float>::type;
  static constexpr int Br = Blocks<D_, TC_, K_>::Br;
  static constexpr int Bc = Blocks<D_, TC_, K_>::Bc;
  static constexpr int LDE = D_ + (TC_ ? 8 : 4);  ///< Q, K, V tiles (elements)
  static constexpr int LDF = D_ + 4;              ///< float Br x D row vectors
  static constexpr int LDS = Bc + 4;              ///< float Br x Bc tiles (S, U)
  static constexpr int LDH = D_ + 8;              ///< 16-bit split of a Br x D operand
  static constexpr int LDW = Bc + 8;              ///< 16-bit split of a Br x Bc operand
  static constexpr bool kCG = K_ == Kind::lla_blockwise;
  static constexpr bool kLLA = K_ != Kind::softmax;
  static constexpr bool kSigma = K_ == Kind::lla_direct;
  static_assert(!TC_ || !std::is_same<Elem_, float>::value, "tensor cores take 16-bit inputs");
  static_assert(!kSigma || (D_ == kDirectMaxD && !TC_), "direct: D = 32, SIMT");
  static_assert(Br % 16 == 0 && Bc % 16 == 0 && D_ % 16 == 0, "16-multiples (WMMA, SIMT)");
};

/// Byte offsets of the shared-memory arrays of a configuration (each 128-byte aligned).
template <class C>
struct Layout {
  static constexpr std::size_t up(std::size_t x) { return (x + 127) / 128 * 128; }
  static constexpr std::size_t kVec = up(sizeof(float) * C::Br * C::LDF);
  static constexpr std::size_t kTileE = up(sizeof(typename C::SElem) * C::Bc * C::LDE);
  static constexpr std::size_t kRowF = up(sizeof(float) * C::Br);

  static constexpr std::size_t q = 0;
  static constexpr std::size_t k = q + up(sizeof(typename C::SElem) * C::Br * C::LDE);
  static constexpr std::size_t v = k + kTileE;
  static constexpr std::size_t s = v + kTileE;
  static constexpr std::size_t u = s + up(sizeof(float) * C::Br * C::LDS) * 1;
  static constexpr std::size_t qf = u + (C::kLLA ? up(sizeof(float) * C::Br * C::LDS) : 0);
  static constexpr std::size_t mt = qf + (C::TC ? kVec : 0);
  static constexpr std::size_t x = mt + (C::kLLA ? kVec : 0);
  static constexpr std::size_t r = x + (C::kLLA ? kVec : 0);
  static constexpr std::size_t p = r + (C::kCG ? kVec : 0);
  static constexpr std::size_t acc = p + (C::kCG ? kVec : 0);  ///< SP in CG, O in the output
  static constexpr std::size_t ah = acc + kVec;
  static constexpr std::size_t al = ah + (C::TC && C::kLLA ? up(2 * C::Br * C::LDH) : 0);
  static constexpr std::size_t wh = al + (C::TC && C::kLLA ? up(2 * C::Br * C::LDH) : 0);
  static constexpr std::size_t wl = wh + (C::TC ? up(2 * C::Br * C::LDW) : 0);
  static constexpr std::size_t sig = wl + (C::TC ? up(2 * C::Br * C::LDW) : 0);
  static constexpr std::size_t chol =
      sig + (C::kSigma ? up(sizeof(float) * C::Br * kDirectPack) : 0);
  static constexpr std::size_t kb =
      chol + (C::kSigma ? up(sizeof(float) * kCholRows * kDirectMaxD * kDirectMaxD) : 0);
  static constexpr std::size_t m = kb + up(sizeof(float) * C::Bc);
  static constexpr std::size_t omega = m + kRowF;
  static constexpr std::size_t lam = omega + kRowF;
  static constexpr std::size_t rhoq = lam + kRowF;
  static constexpr std::size_t delta = rhoq + kRowF;
  static constexpr std::size_t munorm = delta + kRowF;
  static constexpr std::size_t pexp = munorm + kRowF;
  static constexpr std::size_t cg = pexp + up(sizeof(int) * C::Br);
  static constexpr std::size_t bytes = cg + up(sizeof(tile::CGRow<float>) * C::Br);
};

/// Typed pointers into a block's shared memory.
template <class C>
struct Smem {
  using SE = typename C::SElem;
  SE *q, *k, *v;
  float *s, *u, *qf, *mt, *x, *r, *p, *acc, *sig, *chol, *kb;
  SE *ah, *al, *wh, *wl;
  float *m, *omega, *lam, *rhoq, *delta, *munorm;
  int* pexp;
  tile::CGRow<float>* cg;
};

template <class C>
ATTNREG_DEV Smem<C> carve(unsigned char* base) {
  using L = Layout<C>;
  using SE = typename C::SElem;
  Smem<C> sm;
  sm.q = reinterpret_cast<SE*>(base + L::q);
  sm.k = reinterpret_cast<SE*>(base + L::k);
  sm.v = reinterpret_cast<SE*>(base + L::v);
  sm.s = reinterpret_cast<float*>(base + L::s);
  sm.u = reinterpret_cast<float*>(base + L::u);
  // The SIMT engine keeps Q in float already: the row operations read it in place.
  sm.qf = C::TC ? reinterpret_cast<float*>(base + L::qf) : reinterpret_cast<float*>(base + L::q);
  sm.mt = reinterpret_cast<float*>(base + L::mt);
  sm.x = reinterpret_cast<float*>(base + L::x);
  sm.r = reinterpret_cast<float*>(base + L::r);
  sm.p = reinterpret_cast<float*>(base + L::p);
  sm.acc = reinterpret_cast<float*>(base + L::acc);
  sm.ah = reinterpret_cast<SE*>(base + L::ah);
  sm.al = reinterpret_cast<SE*>(base + L::al);
  sm.wh = reinterpret_cast<SE*>(base + L::wh);
  sm.wl = reinterpret_cast<SE*>(base + L::wl);
  sm.sig = reinterpret_cast<float*>(base + L::sig);
  sm.chol = reinterpret_cast<float*>(base + L::chol);
  sm.kb = reinterpret_cast<float*>(base + L::kb);
  sm.m = reinterpret_cast<float*>(base + L::m);
  sm.omega = reinterpret_cast<float*>(base + L::omega);
  sm.lam = reinterpret_cast<float*>(base + L::lam);
  sm.rhoq = reinterpret_cast<float*>(base + L::rhoq);
  sm.delta = reinterpret_cast<float*>(base + L::delta);
  sm.munorm = reinterpret_cast<float*>(base + L::munorm);
  sm.pexp = reinterpret_cast<int*>(base + L::pexp);
  sm.cg = reinterpret_cast<tile::CGRow<float>*>(base + L::cg);
  return sm;
}

// ------------------------------------------------------------------ tile GEMMs

/// SIMT: C (M x N) = alpha A (M x K) op(B) (ACC: C += ...), op(B) = B' with B (N x K) row-major
/// when TRANS_B, else B (K x N) row-major. All threads of the block take part; thread (ty, tx)
/// of a 16 x 8 grid owns rows ty + 16 i and columns tx + 8 j.
template <int M, int N, int K, bool TRANS_B, bool ACC>
ATTNREG_DEV void simt_gemm(float alpha, const float* A, int lda, const float* B, int ldb,
                           float* C, int ldc) {
  constexpr int TY = 16, TX = 8;
  static_assert(TY * TX == kThreads, "thread grid");
  static_assert(M % TY == 0 && N % TX == 0, "tile shape");
  constexpr int TM = M / TY, TN = N / TX;
  const int tid = static_cast<int>(threadIdx.x);
  const int tx = tid % TX, ty = tid / TX;
  float acc[TM][TN];
  ATTNREG_UNROLL
  for (int i = 0; i < TM; ++i)
    ATTNREG_UNROLL
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
  for (int kk = 0; kk < K; ++kk) {
    float a[TM], b[TN];
    ATTNREG_UNROLL
    for (int i = 0; i < TM; ++i) a[i] = A[(ty + TY * i) * lda + kk];
    ATTNREG_UNROLL
    for (int j = 0; j < TN; ++j)
      b[j] = TRANS_B ? B[(tx + TX * j) * ldb + kk] : B[kk * ldb + tx + TX * j];
    ATTNREG_UNROLL
    for (int i = 0; i < TM; ++i)
      ATTNREG_UNROLL
      for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
  }
  ATTNREG_UNROLL
  for (int i = 0; i < TM; ++i)
    ATTNREG_UNROLL
    for (int j = 0; j < TN; ++j) {
      float* c = C + (ty + TY * i) * ldc + tx + TX * j;
      *c = ACC ? *c + alpha * acc[i][j] : alpha * acc[i][j];
    }
}

/// Tensor cores: C (M x N) = alpha (Ahi [+ Alo]) op(B) (ACC: C += (Ahi [+ Alo]) op(B), alpha
/// must be 1). 16x16 output tiles are dealt round-robin to the warps.
template <class SE, int M, int N, int K, bool TRANS_B, bool ACC, bool SPLIT>
ATTNREG_DEV void wmma_gemm(float alpha, const SE* Ahi, const SE* Alo, int lda, const SE* B,
                           int ldb, float* C, int ldc) {
  namespace wmma = nvcuda::wmma;
  constexpr int TM = M / 16, TN = N / 16;
  static_assert(M % 16 == 0 && N % 16 == 0 && K % 16 == 0, "WMMA tile shape");
  using BLayout = typename std::conditional<TRANS_B, wmma::col_major, wmma::row_major>::type;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  for (int t = warp; t < TM * TN; t += kWarps) {
    const int i0 = (t / TN) * 16, j0 = (t % TN) * 16;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    if (ACC) {
      wmma::load_matrix_sync(acc, C + i0 * ldc + j0, static_cast<unsigned>(ldc),
                             wmma::mem_row_major);
    } else {
      wmma::fill_fragment(acc, 0.0f);
    }
    for (int k0 = 0; k0 < K; k0 += 16) {
      wmma::fragment<wmma::matrix_b, 16, 16, 16, SE, BLayout> b;
      wmma::load_matrix_sync(b, TRANS_B ? B + j0 * ldb + k0 : B + k0 * ldb + j0,
                             static_cast<unsigned>(ldb));
      wmma::fragment<wmma::matrix_a, 16, 16, 16, SE, wmma::row_major> a;
      if (SPLIT) {
        wmma::load_matrix_sync(a, Alo + i0 * lda + k0, static_cast<unsigned>(lda));
        wmma::mma_sync(acc, a, b, acc);
      }
      wmma::load_matrix_sync(a, Ahi + i0 * lda + k0, static_cast<unsigned>(lda));
      wmma::mma_sync(acc, a, b, acc);
    }
    if (!ACC && alpha != 1.0f)
      for (int e = 0; e < acc.num_elements; ++e) acc.x[e] *= alpha;
    wmma::store_matrix_sync(C + i0 * ldc + j0, acc, static_cast<unsigned>(ldc),
                            wmma::mem_row_major);
  }
}

/// S = a Q K_c' (Br x Bc). Inputs are exact in both engines, so no split.
template <class C>
ATTNREG_DEV void gemm_qk(const Smem<C>& sm, float a) {
  if constexpr (C::TC) {
    wmma_gemm<typename C::SElem, C::Br, C::Bc, C::D, true, false, false>(
        a, sm.q, sm.q, C::LDE, sm.k, C::LDE, sm.s, C::LDS);
  } else {
    simt_gemm<C::Br, C::Bc, C::D, true, false>(a, sm.q, C::LDE, sm.k, C::LDE, sm.s, C::LDS);
  }
}

/// U = X K_c' (Br x Bc) for a float Br x D operand X (the CG direction P, or rho). TC: X was
/// split into sm.ah / sm.al by split_row (scaled per row).
template <class C>
ATTNREG_DEV void gemm_xk(const Smem<C>& sm, const float* X) {
  if constexpr (C::TC) {
    (void)X;
    wmma_gemm<typename C::SElem, C::Br, C::Bc, C::D, true, false, true>(
        1.0f, sm.ah, sm.al, C::LDH, sm.k, C::LDE, sm.u, C::LDS);
  } else {
    simt_gemm<C::Br, C::Bc, C::D, true, false>(1.0f, X, C::LDF, sm.k, C::LDE, sm.u, C::LDS);
  }
}

/// Acc (Br x D) += A B with A a float Br x Bc tile (W, W .* U, or the output weights; TC: split
/// into sm.wh / sm.wl) and B the key or value tile (Bc x D).
template <class C>
ATTNREG_DEV void gemm_acc(const Smem<C>& sm, const float* A, const typename C::SElem* B,
                          float* Acc) {
  if constexpr (C::TC) {
    (void)A;
    wmma_gemm<typename C::SElem, C::Br, C::D, C::Bc, false, true, true>(
        1.0f, sm.wh, sm.wl, C::LDW, B, C::LDE, Acc, C::LDF);
  } else {
    simt_gemm<C::Br, C::D, C::Bc, false, true>(1.0f, A, C::LDS, B, C::LDE, Acc, C::LDF);
  }
}

// ------------------------------------------------------------------ row helpers (TC operands)

/// x = hi + lo in the 16-bit type SE, after scaling by `scale` (a power of two).
template <class SE>
ATTNREG_DEV void split_row(const float* x, int n, float scale, SE* hi, SE* lo) {
  for (int j = 0; j < n; ++j) {
    const float v = x[j] * scale;
    const SE h = from_float<SE>(v);
    hi[j] = h;
    lo[j] = from_float<SE>(v - to_float(h));
  }
}

/// e with max_j |x_j| = f 2^e, f in [0.5, 1) (0 for a zero or non-finite row): scaling the row
/// by 2^-e brings it into (-1, 1).
ATTNREG_DEV int row_exponent(const float* x, int n) {
  float mx = 0.0f;
  for (int j = 0; j < n; ++j) mx = tile::max_t(mx, fabsf(x[j]));
  if (!(mx > 0.0f) || !tile::is_finite(mx)) return 0;
  int e = 0;
  frexpf(mx, &e);
  return e;
}

// ------------------------------------------------------------------ loads and stores

/// Rows [0, nrows) x columns [0, dim) of a (seq, dim) slab with row stride `stride` into the
/// R x D shared tile dst (leading dimension ld), converted to SE; the rest of the R x D tile
/// is zero. All threads; consecutive threads read consecutive columns.
template <int R, int D, class E, class SE>
ATTNREG_DEV void load_tile(const E* src, std::int64_t stride, int nrows, int dim, SE* dst,
                           int ld) {
  for (int idx = static_cast<int>(threadIdx.x); idx < R * D; idx += kThreads) {
    const int r = idx / D, c = idx % D;
    float val = 0.0f;
    if (r < nrows && c < dim) val = to_float(src[static_cast<std::int64_t>(r) * stride + c]);
    dst[r * ld + c] = from_float<SE>(val);
  }
}

/// rbf kernel: kb[j] = -(a/2)||k_j||^2 for the Bc keys of the tile (0 past nrows), from global
/// memory in float, eight columns at a time (rbf_key_bias is linear in ||k||^2).
template <class C, class E>
ATTNREG_DEV void load_key_bias(const E* src, std::int64_t stride, int nrows, int dim, float a,
                               float* kb) {
  for (int j = static_cast<int>(threadIdx.x); j < C::Bc; j += kThreads) {
    float bias = 0.0f;
    if (j < nrows) {
      const E* row = src + static_cast<std::int64_t>(j) * stride;
      for (int c0 = 0; c0 < dim; c0 += 8) {
        float chunk[8];
        const int n = dim - c0 < 8 ? dim - c0 : 8;
        for (int c = 0; c < n; ++c) chunk[c] = to_float(row[c0 + c]);
        bias += tile::rbf_key_bias(chunk, n, a);
      }
    }
    kb[j] = bias;
  }
}

/// Logits of one row after the GEMM: rbf key bias, then the causal / window / tail mask of
/// global query i (valid = false: a padding row, everything masked).
template <class C>
ATTNREG_DEV void finish_logits_row(const FwdParams& p, float* srow, const float* kb,
                                   std::int64_t key0, std::int64_t i, bool valid) {
  if (p.rbf) tile::add_key_bias_row(srow, C::Bc, kb);
  long long lo = 1, hi = 0;
  if (valid) tile::key_range(i, p.n_q, p.n_k, p.causal, p.window, lo, hi);
  if (key0 < lo || key0 + C::Bc - 1 > hi) tile::mask_row(srow, C::Bc, key0, lo, hi);
}

ATTNREG_DEV float ridge_at(const FwdParams& p, int b, int h, std::int64_t i) {
  if (p.ridge_len == 0) return p.ridge;
  if (p.ridge_len == p.n_q) return p.ridge_vec[i];
  return p.ridge_vec[(static_cast<std::int64_t>(b) * p.heads + h) * p.n_q + i];
}

/// Geometry of the current block.
struct BlockPos {
  int b, h, blk, br;
  std::int64_t i0, klo, khi;
  std::int64_t row0;  ///< (b, h, i0) as a row index of the per-row outputs
};

template <class C>
ATTNREG_DEV BlockPos block_pos(const FwdParams& p) {
  BlockPos bp;
  bp.blk = p.reverse_blocks ? p.n_blocks - 1 - static_cast<int>(blockIdx.x)
                            : static_cast<int>(blockIdx.x);
  bp.h = static_cast<int>(blockIdx.y);
  bp.b = static_cast<int>(blockIdx.z);
  bp.i0 = static_cast<std::int64_t>(bp.blk) * C::Br;
  const std::int64_t left = p.n_q - bp.i0;
  bp.br = left < C::Br ? static_cast<int>(left) : C::Br;
  long long lo, hi;
  tile::block_key_range(bp.i0, bp.i0 + bp.br, p.n_q, p.n_k, p.causal, p.window, lo, hi);
  bp.klo = lo;
  bp.khi = hi;
  bp.row0 = (static_cast<std::int64_t>(bp.b) * p.heads + bp.h) * p.n_q + bp.i0;
  return bp;
}

/// Load the key tile starting at key0 (and its rbf biases; optionally the value tile).
template <class C, bool WITH_V>
ATTNREG_DEV void load_kv(const FwdParams& p, const Smem<C>& sm, const typename C::Elem* kbase,
                         const typename C::Elem* vbase, std::int64_t key0, std::int64_t khi) {
  const std::int64_t left = khi - key0 + 1;
  const int bc = left < C::Bc ? static_cast<int>(left) : C::Bc;
  load_tile<C::Bc, C::D>(kbase + key0 * p.k_rstride, p.k_rstride, bc, p.d, sm.k, C::LDE);
  if (WITH_V)
    load_tile<C::Bc, C::D>(vbase + key0 * p.v_rstride, p.v_rstride, bc, p.dv, sm.v, C::LDE);
  if (p.rbf) load_key_bias<C>(kbase + key0 * p.k_rstride, p.k_rstride, bc, p.d, p.a, sm.kb);
}

/// Write the Br x D float rows `src` (first dim columns, first br rows) to a (seq, dim) slab.
template <class C, class E>
ATTNREG_DEV void store_rows(const float* src, int br, int dim, E* dst, std::int64_t stride) {
  for (int idx = static_cast<int>(threadIdx.x); idx < C::Br * C::D; idx += kThreads) {
    const int r = idx / C::D, c = idx % C::D;
    if (r < br && c < dim)
      dst[static_cast<std::int64_t>(r) * stride + c] = from_float<E>(src[r * C::LDF + c]);
  }
}

// ------------------------------------------------------------------ the LLA forward

/// Statistics pass (Algorithm 1 lines 6-12): running max m, omega, mu~ = sum w k (and for the
/// direct kind the packed Sigma~ = sum w k k'), merged tile by tile with the online max.
template <class C>
ATTNREG_DEV void lla_statistics(const FwdParams& p, const Smem<C>& sm, const BlockPos& bp,
                                const typename C::Elem* kbase) {
  const int tid = static_cast<int>(threadIdx.x);
  const int npack = p.d * (p.d + 1) / 2;
  for (std::int64_t key0 = bp.klo; key0 <= bp.khi; key0 += C::Bc) {
    load_kv<C, false>(p, sm, kbase, kbase, key0, bp.khi);
    __syncthreads();
    gemm_qk<C>(sm, p.a);
    __syncthreads();
    if (tid < C::Br) {
      float* srow = sm.s + tid * C::LDS;
      finish_logits_row<C>(p, srow, sm.kb, key0, bp.i0 + tid, tid < bp.br);
      const tile::RowUpdate<float> up = tile::online_update_row(srow, C::Bc, sm.m[tid]);
      sm.omega[tid] = up.alpha * sm.omega[tid] + up.rowsum;         // line 10
      tile::rescale_row(sm.mt + tid * C::LDF, C::D, up.alpha);      // line 11
      if constexpr (C::kSigma) tile::rescale_row(sm.sig + tid * kDirectPack, npack, up.alpha);
      if constexpr (C::TC)
        split_row(srow, C::Bc, 1.0f, sm.wh + tid * C::LDW, sm.wl + tid * C::LDW);
    }
    __syncthreads();
    gemm_acc<C>(sm, sm.s, sm.k, sm.mt);  // M += W K_c
    if constexpr (C::kSigma) {
      // Sigma~ += sum_j w_j k_j k_j' (packed upper triangle); item (row, a) owns row a of it.
      const int d = p.d;
      for (int item = tid; item < C::Br * d; item += kThreads) {
        const int r = item / d, a = item % d;
        const float* w = sm.s + r * C::LDS;
        float* sig = sm.sig + r * kDirectPack;
        for (int bb = a; bb < d; ++bb) {
          float acc = 0.0f;
          for (int j = 0; j < C::Bc; ++j) acc += w[j] * sm.k[j * C::LDE + a] * sm.k[j * C::LDE + bb];
          sig[tile::packed_index(a, bb, d)] += acc;
        }
      }
    }
    __syncthreads();
  }
}

/// Batched CG (Algorithm 2): Sigma_i rho_i = mu_i for every row of the block, matrix-free
/// (eq. 13): each sweep streams the key tiles once. Rows leave the active mask when their
/// residual reaches the tolerance; the block stops when no row is active. Returns the sweeps.
template <class C>
ATTNREG_DEV int lla_cg(const FwdParams& p, const Smem<C>& sm, const BlockPos& bp,
                       const typename C::Elem* kbase) {
  const int tid = static_cast<int>(threadIdx.x);
  if (tid < C::Br) {
    float* mu = sm.acc + tid * C::LDF;  // scratch for mu until the first sweep
    tile::center_mu_row(sm.mt + tid * C::LDF, sm.omega[tid], sm.qf + tid * C::LDF, mu, C::D);
    sm.munorm[tid] = tile::sqrt_t(tile::dot(mu, mu, C::D));
    sm.cg[tid] = tile::cg_init_row(mu, sm.x + tid * C::LDF, sm.r + tid * C::LDF,
                                   sm.p + tid * C::LDF, C::D, p.cg_tol);
    if (tid >= bp.br) sm.cg[tid].status = tile::kCGConverged;  // padding rows never iterate
  }
  int sweeps = 0;
  for (int t = 0; t < p.cg_max_iter; ++t) {
    const int n_active =
        __syncthreads_count(tid < C::Br && sm.cg[tid].status == tile::kCGActive);
    if (n_active == 0) break;  // early exit: every row of the block converged
    if (tid < C::Br) {
      float* sp = sm.acc + tid * C::LDF;
      for (int c = 0; c < C::D; ++c) sp[c] = 0.0f;
      if constexpr (C::TC) {
        const float* prow = sm.p + tid * C::LDF;
        const int e = row_exponent(prow, C::D);
        sm.pexp[tid] = e;
        split_row(prow, C::D, ldexpf(1.0f, -e), sm.ah + tid * C::LDH, sm.al + tid * C::LDH);
      }
    }
    __syncthreads();
    for (std::int64_t key0 = bp.klo; key0 <= bp.khi; key0 += C::Bc) {  // lines 4-8
      load_kv<C, false>(p, sm, kbase, kbase, key0, bp.khi);
      __syncthreads();
      gemm_qk<C>(sm, p.a);
      gemm_xk<C>(sm, sm.p);  // P K_c'
      __syncthreads();
      if (tid < C::Br) {
        float* srow = sm.s + tid * C::LDS;
        float* urow = sm.u + tid * C::LDS;
        finish_logits_row<C>(p, srow, sm.kb, key0, bp.i0 + tid, tid < bp.br);
        tile::weights_from_max_row(srow, C::Bc, sm.m[tid]);  // line 6
        tile::weight_row(urow, srow, C::Bc);                  // W .* (P K_c')
        if constexpr (C::TC)
          split_row(urow, C::Bc, 1.0f, sm.wh + tid * C::LDW, sm.wl + tid * C::LDW);
      }
      __syncthreads();
      gemm_acc<C>(sm, sm.u, sm.k, sm.acc);  // line 7: Sigma_P += (W .* P K_c') K_c
      __syncthreads();
    }
    if (tid < C::Br && sm.cg[tid].status == tile::kCGActive) {  // lines 9-16
      float* sp = sm.acc + tid * C::LDF;
      if constexpr (C::TC) tile::rescale_row(sp, C::D, ldexpf(1.0f, sm.pexp[tid]));
      float* prow = sm.p + tid * C::LDF;
      tile::sigma_p_finish_row(sp, prow, sm.qf + tid * C::LDF, sm.mt + tid * C::LDF,
                               sm.omega[tid], sm.lam[tid], C::D);
      tile::cg_step_row(sm.cg[tid], sm.x + tid * C::LDF, sm.r + tid * C::LDF, prow, sp, C::D);
    }
    ++sweeps;
  }
  __syncthreads();
  return sweeps;
}

/// Direct variant: per row, Sigma = centred Sigma~ + lambda omega I (eq. 11), Cholesky, solve
/// Sigma rho = mu. kCholRows rows at a time share the d x d scratch.
template <class C>
ATTNREG_DEV void lla_direct_solve(const FwdParams& p, const Smem<C>& sm, const BlockPos& bp) {
  const int tid = static_cast<int>(threadIdx.x);
  const int d = p.d;
  for (int r0 = 0; r0 < C::Br; r0 += kCholRows) {
    if (tid >= r0 && tid < r0 + kCholRows) {
      const int r = tid;
      float* S = sm.chol + (r - r0) * kDirectMaxD * kDirectMaxD;
      float* rho = sm.x + r * C::LDF;
      float* mu = sm.acc + r * C::LDF;
      const float* q = sm.qf + r * C::LDF;
      tile::center_mu_row(sm.mt + r * C::LDF, sm.omega[r], q, mu, C::D);
      sm.munorm[r] = tile::sqrt_t(tile::dot(mu, mu, C::D));
      for (int c = 0; c < C::D; ++c) rho[c] = c < d ? mu[c] : 0.0f;
      tile::CGRow<float> st;
      st.rr = 0.0f;
      st.tol2 = 0.0f;
      st.iters = 0;
      st.status = tile::kCGConverged;
      if (r < bp.br) {
        tile::center_sigma(sm.sig + r * kDirectPack, sm.mt + r * C::LDF, sm.omega[r], q,
                           sm.lam[r], S, d);
        if (tile::cholesky(S, d)) {
          tile::cholesky_solve(S, d, rho);
        } else {
          st.status = tile::kCGBreakdown;
          for (int c = 0; c < C::D; ++c) rho[c] = 0.0f;
        }
      } else {
        for (int c = 0; c < C::D; ++c) rho[c] = 0.0f;
      }
      sm.cg[r] = st;
    }
    __syncthreads();
  }
}

/// Denominators and per-row outputs (Algorithm 1 line 16), then the output pass (lines 17-22):
/// O = sum_j w_j (1 - relmm) v_j / delta with relmm_j = rho'k_j - rho'q (eq. 12).
template <class C>
ATTNREG_DEV void lla_output(const FwdParams& p, const Smem<C>& sm, const BlockPos& bp,
                            const typename C::Elem* kbase, const typename C::Elem* vbase) {
  const int tid = static_cast<int>(threadIdx.x);
  if (tid < C::Br) {
    const float* q = sm.qf + tid * C::LDF;
    const float* rho = sm.x + tid * C::LDF;
    float* mu = sm.acc + tid * C::LDF;
    tile::center_mu_row(sm.mt + tid * C::LDF, sm.omega[tid], q, mu, C::D);
    const float delta = tile::lla_delta_row(sm.omega[tid], mu, rho, C::D);
    sm.delta[tid] = delta;
    sm.rhoq[tid] = tile::dot(rho, q, C::D);  // brsum(R .* Q) of relmm
    if (tid < bp.br) {
      const std::int64_t row = bp.row0 + tid;
      if (p.delta) p.delta[row] = delta;
      if (p.omega) p.omega[row] = sm.omega[tid];
      if (p.row_max) p.row_max[row] = sm.m[tid];
      if (p.status) p.status[row] = sm.cg[tid].status;
      if (p.rel_res) {
        const float nb = sm.munorm[tid];
        p.rel_res[row] = nb > 0.0f ? tile::sqrt_t(sm.cg[tid].rr) / nb : 0.0f;
      }
    }
    if constexpr (C::TC) {
      const int e = row_exponent(rho, C::D);
      sm.pexp[tid] = e;
      split_row(rho, C::D, ldexpf(1.0f, -e), sm.ah + tid * C::LDH, sm.al + tid * C::LDH);
    }
    for (int c = 0; c < C::D; ++c) mu[c] = 0.0f;  // the output accumulator from here on
  }
  __syncthreads();
  if (p.rho) {
    store_rows<C>(sm.x, bp.br, p.d, p.rho + bp.row0 * p.d, static_cast<std::int64_t>(p.d));
  }
  for (std::int64_t key0 = bp.klo; key0 <= bp.khi; key0 += C::Bc) {
    load_kv<C, true>(p, sm, kbase, vbase, key0, bp.khi);
    __syncthreads();
    gemm_qk<C>(sm, p.a);
    gemm_xk<C>(sm, sm.x);  // R K_c'
    __syncthreads();
    if (tid < C::Br) {
      float* srow = sm.s + tid * C::LDS;
      float* urow = sm.u + tid * C::LDS;
      finish_logits_row<C>(p, srow, sm.kb, key0, bp.i0 + tid, tid < bp.br);
      tile::weights_from_max_row(srow, C::Bc, sm.m[tid]);  // line 19
      if constexpr (C::TC) tile::rescale_row(urow, C::Bc, ldexpf(1.0f, sm.pexp[tid]));
      // Line 20 without the 1/delta, applied once at the end (normalize_row).
      tile::lla_weights_row(srow, urow, sm.rhoq[tid], 1.0f, C::Bc);
      if constexpr (C::TC)
        split_row(srow, C::Bc, 1.0f, sm.wh + tid * C::LDW, sm.wl + tid * C::LDW);
    }
    __syncthreads();
    gemm_acc<C>(sm, sm.s, sm.v, sm.acc);  // line 21: O += S V_c
    __syncthreads();
  }
  if (tid < bp.br) tile::normalize_row(sm.acc + tid * C::LDF, C::D, sm.delta[tid]);
  __syncthreads();
}

template <class C>
ATTNREG_GLOBAL void ATTNREG_LAUNCH_BOUNDS(kThreads) lla_forward_kernel(const FwdParams p) {
  static_assert(C::kLLA, "lla_forward_kernel: LLA configurations only");
  using E = typename C::Elem;
  ATTNREG_DYNAMIC_SMEM(smem_raw);
  const Smem<C> sm = carve<C>(smem_raw);
  const BlockPos bp = block_pos<C>(p);
  const int tid = static_cast<int>(threadIdx.x);
  const E* qbase = static_cast<const E*>(p.q) + bp.b * p.q_bstride + bp.h * p.q_hstride;
  const E* kbase = static_cast<const E*>(p.k) + bp.b * p.k_bstride + bp.h * p.k_hstride;
  const E* vbase = static_cast<const E*>(p.v) + bp.b * p.v_bstride + bp.h * p.v_hstride;
  E* obase = static_cast<E*>(p.o) + bp.b * p.o_bstride + bp.h * p.o_hstride;

  load_tile<C::Br, C::D>(qbase + bp.i0 * p.q_rstride, p.q_rstride, bp.br, p.d, sm.q, C::LDE);
  if constexpr (C::TC)
    load_tile<C::Br, C::D>(qbase + bp.i0 * p.q_rstride, p.q_rstride, bp.br, p.d, sm.qf, C::LDF);
  if (tid < C::Br) {
    // Padding rows (past n_q) start from max 0, not -inf: all their logits are masked, so
    // their weights are exp(-inf - 0) = 0 in every pass (exp(-inf - -inf) would be NaN).
    sm.m[tid] = tid < bp.br ? tile::neg_inf<float>() : 0.0f;
    sm.omega[tid] = 0.0f;
    sm.lam[tid] = tid < bp.br ? ridge_at(p, bp.b, bp.h, bp.i0 + tid) : 0.0f;
    float* mt = sm.mt + tid * C::LDF;
    for (int c = 0; c < C::D; ++c) mt[c] = 0.0f;
    if constexpr (C::kSigma) {
      float* sig = sm.sig + tid * kDirectPack;
      for (int c = 0; c < kDirectPack; ++c) sig[c] = 0.0f;
    }
  }
  __syncthreads();

  lla_statistics<C>(p, sm, bp, kbase);
  int sweeps = 0;
  if constexpr (C::kCG) {
    sweeps = lla_cg<C>(p, sm, bp, kbase);
  } else {
    lla_direct_solve<C>(p, sm, bp);
  }
  lla_output<C>(p, sm, bp, kbase, vbase);
  store_rows<C>(sm.acc, bp.br, p.dv, obase + bp.i0 * p.o_rstride, p.o_rstride);
  if (tid == 0 && p.block_sweeps)
    p.block_sweeps[(static_cast<std::int64_t>(bp.b) * p.heads + bp.h) * p.n_blocks + bp.blk] =
        sweeps;
}

// ------------------------------------------------------------------ softmax / NW

template <class C>
ATTNREG_GLOBAL void ATTNREG_LAUNCH_BOUNDS(kThreads) softmax_forward_kernel(const FwdParams p) {
  static_assert(!C::kLLA, "softmax_forward_kernel: softmax configurations only");
  using E = typename C::Elem;
  ATTNREG_DYNAMIC_SMEM(smem_raw);
  const Smem<C> sm = carve<C>(smem_raw);
  const BlockPos bp = block_pos<C>(p);
  const int tid = static_cast<int>(threadIdx.x);
  const E* qbase = static_cast<const E*>(p.q) + bp.b * p.q_bstride + bp.h * p.q_hstride;
  const E* kbase = static_cast<const E*>(p.k) + bp.b * p.k_bstride + bp.h * p.k_hstride;
  const E* vbase = static_cast<const E*>(p.v) + bp.b * p.v_bstride + bp.h * p.v_hstride;
  E* obase = static_cast<E*>(p.o) + bp.b * p.o_bstride + bp.h * p.o_hstride;

  load_tile<C::Br, C::D>(qbase + bp.i0 * p.q_rstride, p.q_rstride, bp.br, p.d, sm.q, C::LDE);
  if (tid < C::Br) {
    sm.m[tid] = tid < bp.br ? tile::neg_inf<float>() : 0.0f;  // see lla_forward_kernel
    sm.omega[tid] = 0.0f;
    float* o = sm.acc + tid * C::LDF;
    for (int c = 0; c < C::D; ++c) o[c] = 0.0f;
  }
  __syncthreads();
  for (std::int64_t key0 = bp.klo; key0 <= bp.khi; key0 += C::Bc) {
    load_kv<C, true>(p, sm, kbase, vbase, key0, bp.khi);
    __syncthreads();
    gemm_qk<C>(sm, p.a);
    __syncthreads();
    if (tid < C::Br) {
      float* srow = sm.s + tid * C::LDS;
      finish_logits_row<C>(p, srow, sm.kb, key0, bp.i0 + tid, tid < bp.br);
      const tile::RowUpdate<float> up = tile::online_update_row(srow, C::Bc, sm.m[tid]);
      sm.omega[tid] = up.alpha * sm.omega[tid] + up.rowsum;
      tile::rescale_row(sm.acc + tid * C::LDF, C::D, up.alpha);
      if constexpr (C::TC)
        split_row(srow, C::Bc, 1.0f, sm.wh + tid * C::LDW, sm.wl + tid * C::LDW);
    }
    __syncthreads();
    gemm_acc<C>(sm, sm.s, sm.v, sm.acc);  // O += W V_c
    __syncthreads();
  }
  if (tid < bp.br) {
    tile::normalize_row(sm.acc + tid * C::LDF, C::D, sm.omega[tid]);
    const std::int64_t row = bp.row0 + tid;
    if (p.omega) p.omega[row] = sm.omega[tid];
    if (p.row_max) p.row_max[row] = sm.m[tid];
  }
  __syncthreads();
  store_rows<C>(sm.acc, bp.br, p.dv, obase + bp.i0 * p.o_rstride, p.o_rstride);
}

}  // namespace kern
}  // namespace ATTNREG_CUDA_NS
}  // namespace attnreg
