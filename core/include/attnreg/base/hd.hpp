// attnreg: one macro that marks small inline functions as usable from both host code (OpenMP
// loops) and CUDA kernels, so the per-pair / per-tile arithmetic is written once.
#pragma once

#if defined(__CUDACC__)
#define ATTNREG_HD __host__ __device__ __forceinline__
#else
#define ATTNREG_HD inline
#endif

#include <math.h>

namespace attnreg {
namespace tile {

// Scalar helpers of the host/device arithmetic (lla_tile.hpp, local_moments.hpp).

// exp(-inf) = 0 on host and device, which is what a masked key (logit -inf) must weigh.
ATTNREG_HD float exp_t(float x) { return expf(x); }
ATTNREG_HD double exp_t(double x) { return exp(x); }
ATTNREG_HD float sqrt_t(float x) { return sqrtf(x); }
ATTNREG_HD double sqrt_t(double x) { return sqrt(x); }

/// -infinity of T (the logit of a masked key and the initial running max).
template <class T>
ATTNREG_HD T neg_inf() {
  return -static_cast<T>(HUGE_VAL);
}

/// True for finite x (false for NaN and +-Inf) without <cmath> macros, which differ between
/// host and device compilers.
template <class T>
ATTNREG_HD bool is_finite(T x) {
  return (x - x) == T(0);
}

template <class T>
ATTNREG_HD T max_t(T a, T b) {
  return a > b ? a : b;
}

}  // namespace tile
}  // namespace attnreg
