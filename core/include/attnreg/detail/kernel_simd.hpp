// attnreg (internal, not part of the public API): eight-lane SIMD helpers for the moment
// reductions over kernel-weight tiles (local_fit.cpp, bandwidth_gradient.cpp). The weights
// themselves (exp and the kernel shapes) are computed by Highway code, kernel_tiles-inl.hpp.
// It lives under include/ so that the R package, which copies only core/include and
// core/src/*.cpp, can compile the core.
//
// With GCC or clang the lanes are a vector-extension type (8 doubles), lowered to AVX-512,
// AVX2 or SSE2 by whichever function clone is running (ATTNREG_SIMD_CLONES). Elsewhere the same
// code runs on a plain 8-element struct. Every reduction keeps 8 partial sums and combines them
// in one fixed order, and tails are padded to a full vector, so a sum never depends on memory
// alignment, on where a tile starts, or on the number of threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "attnreg/kernels/kernel.hpp"

// 64-byte vector types in functions compiled for the baseline ISA draw GCC's ABI note; every
// function here is always inlined into its caller's clone, so no such call exists.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#pragma GCC diagnostic ignored "-Wabi"
#endif

namespace attnreg {
namespace simd {

constexpr int kLanes = 8;

// Everything here must be inlined into the (multi-versioned) tile loops that call it: an
// out-of-line helper would be compiled for the baseline ISA and pass vectors through memory.
#if defined(__GNUC__)
#define ATTNREG_SIMD_INLINE inline __attribute__((always_inline))
#define ATTNREG_LAMBDA_INLINE __attribute__((always_inline))
#else
#define ATTNREG_SIMD_INLINE inline
#define ATTNREG_LAMBDA_INLINE
#endif
// Full unrolling of short constant-trip loops over accumulators keeps them in registers.
#if defined(__clang__)
#define ATTNREG_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define ATTNREG_UNROLL _Pragma("GCC unroll 16")
#else
#define ATTNREG_UNROLL
#endif

#if defined(__GNUC__)
typedef double vd __attribute__((vector_size(64)));
typedef std::int64_t vi __attribute__((vector_size(64)));
ATTNREG_SIMD_INLINE vd splat(double x) { return vd{x, x, x, x, x, x, x, x}; }
ATTNREG_SIMD_INLINE vd select(const vi& mask, const vd& a, const vd& b) { return mask ? a : b; }
ATTNREG_SIMD_INLINE vi lt(const vd& a, const vd& b) { return a < b; }
ATTNREG_SIMD_INLINE vi le(const vd& a, const vd& b) { return a <= b; }
ATTNREG_SIMD_INLINE vi gt(const vd& a, const vd& b) { return a > b; }
ATTNREG_SIMD_INLINE vd bits_to_double(const vi& v) {
  vd r;
  std::memcpy(&r, &v, sizeof r);
  return r;
}
ATTNREG_SIMD_INLINE vi double_to_bits(const vd& v) {
  vi r;
  std::memcpy(&r, &v, sizeof r);
  return r;
}
#else
struct vd {
  double v[kLanes];
  double& operator[](int i) { return v[i]; }
  double operator[](int i) const { return v[i]; }
};
struct vi {
  std::int64_t v[kLanes];
  std::int64_t& operator[](int i) { return v[i]; }
  std::int64_t operator[](int i) const { return v[i]; }
};
#define ATTNREG_SIMD_BINOP(OP)                                                   \
  ATTNREG_SIMD_INLINE vd operator OP(vd a, vd b) {                                           \
    for (int l = 0; l < kLanes; ++l) a.v[l] = a.v[l] OP b.v[l];                 \
    return a;                                                                   \
  }                                                                             \
  ATTNREG_SIMD_INLINE vd operator OP(vd a, double b) {                                       \
    for (int l = 0; l < kLanes; ++l) a.v[l] = a.v[l] OP b;                      \
    return a;                                                                   \
  }                                                                             \
  ATTNREG_SIMD_INLINE vd operator OP(double a, vd b) {                                       \
    for (int l = 0; l < kLanes; ++l) b.v[l] = a OP b.v[l];                      \
    return b;                                                                   \
  }                                                                             \
  ATTNREG_SIMD_INLINE vd& operator OP##=(vd& a, vd b) { return a = a OP b; }
ATTNREG_SIMD_BINOP(+)
ATTNREG_SIMD_BINOP(-)
ATTNREG_SIMD_BINOP(*)
#undef ATTNREG_SIMD_BINOP
ATTNREG_SIMD_INLINE vd operator-(vd a) {
  for (int l = 0; l < kLanes; ++l) a.v[l] = -a.v[l];
  return a;
}
ATTNREG_SIMD_INLINE vd splat(double x) {
  vd r;
  for (int l = 0; l < kLanes; ++l) r.v[l] = x;
  return r;
}
ATTNREG_SIMD_INLINE vd select(vi mask, vd a, vd b) {
  for (int l = 0; l < kLanes; ++l) a.v[l] = mask.v[l] ? a.v[l] : b.v[l];
  return a;
}
#define ATTNREG_SIMD_CMP(NAME, OP)                                      \
  inline vi NAME(vd a, vd b) {                                          \
    vi r;                                                               \
    for (int l = 0; l < kLanes; ++l) r.v[l] = a.v[l] OP b.v[l] ? -1 : 0; \
    return r;                                                           \
  }
ATTNREG_SIMD_CMP(lt, <)
ATTNREG_SIMD_CMP(le, <=)
ATTNREG_SIMD_CMP(gt, >)
#undef ATTNREG_SIMD_CMP
ATTNREG_SIMD_INLINE vd bits_to_double(vi v) {
  vd r;
  std::memcpy(&r, &v, sizeof r);
  return r;
}
ATTNREG_SIMD_INLINE vi double_to_bits(vd v) {
  vi r;
  std::memcpy(&r, &v, sizeof r);
  return r;
}
#endif

ATTNREG_SIMD_INLINE vd load(const double* p) {
  vd v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
ATTNREG_SIMD_INLINE void store(double* p, const vd& v) { std::memcpy(p, &v, sizeof v); }
/// Load len < 8 values, zero-padded.
ATTNREG_SIMD_INLINE vd load_partial(const double* p, std::size_t len) {
  double buf[kLanes] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (std::size_t l = 0; l < len; ++l) buf[l] = p[l];
  return load(buf);
}
ATTNREG_SIMD_INLINE void store_partial(double* p, const vd& v, std::size_t len) {
  double buf[kLanes];
  store(buf, v);
  for (std::size_t l = 0; l < len; ++l) p[l] = buf[l];
}
/// Sum of the lanes in a fixed order.
ATTNREG_SIMD_INLINE double hsum(const vd& v) {
  return ((v[0] + v[4]) + (v[1] + v[5])) + ((v[2] + v[6]) + (v[3] + v[7]));
}
ATTNREG_SIMD_INLINE double hmax(const vd& v) {
  double r = v[0];
  for (int l = 1; l < kLanes; ++l) r = v[l] > r ? v[l] : r;
  return r;
}
ATTNREG_SIMD_INLINE vd vmax(const vd& a, const vd& b) { return select(gt(a, b), a, b); }
ATTNREG_SIMD_INLINE vd vabs(const vd& a) { return select(lt(a, splat(0.0)), -a, a); }
ATTNREG_SIMD_INLINE vd pos(const vd& a) { return select(gt(a, splat(0.0)), a, splat(0.0)); }

}  // namespace simd
}  // namespace attnreg
