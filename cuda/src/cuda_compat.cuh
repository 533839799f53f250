// attnreg CUDA backend: the few spellings that differ between a real CUDA compile (nvcc) and
// the host emulation of thread blocks (cta_emulator.hpp, ATTNREG_CUDA_EMULATION) that the CPU
// tests use to run the very same kernel source. Kernel code writes ATTNREG_DEV, ATTNREG_UNROLL,
// ATTNREG_DYNAMIC_SMEM, the 16-bit element types f16_t / bf16_t and to_float / from_float;
// everything else (threadIdx, __syncthreads, __syncthreads_count, nvcuda::wmma) is plain CUDA,
// which the emulator provides on the host.
#pragma once

#if defined(ATTNREG_CUDA_EMULATION)
#include "cta_emulator.hpp"
#define ATTNREG_DEV inline
#define ATTNREG_UNROLL
#define ATTNREG_GLOBAL
#define ATTNREG_LAUNCH_BOUNDS(n)
#define ATTNREG_DYNAMIC_SMEM(name) unsigned char* name = ::attnreg::cuda_emu::dynamic_smem()
// The emulated kernels live in their own namespace: a test binary that links the real CUDA
// backend as well must not merge the two instantiations of a kernel template. The "emulated
// backend" build (cuda_runtime_emulation.hpp: no real CUDA at all) keeps the real namespace.
#if defined(ATTNREG_CUDA_EMULATED_BACKEND)
#define ATTNREG_CUDA_NS cuda
#else
#define ATTNREG_CUDA_NS cuda_emulated
#define ATTNREG_CUDA_SEPARATE_NS 1
#endif
#else
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>
#define ATTNREG_DEV __device__ __forceinline__
#define ATTNREG_UNROLL _Pragma("unroll")
#define ATTNREG_GLOBAL __global__
#define ATTNREG_LAUNCH_BOUNDS(n) __launch_bounds__(n)
#define ATTNREG_DYNAMIC_SMEM(name) extern __shared__ __align__(128) unsigned char name[]
#define ATTNREG_CUDA_NS cuda
#endif

namespace attnreg {
namespace ATTNREG_CUDA_NS {

#if defined(ATTNREG_CUDA_EMULATION)
using f16_t = ::attnreg::cuda_emu::half_t;
using bf16_t = ::attnreg::cuda_emu::bf16_t;
ATTNREG_DEV float to_float(f16_t x) { return ::attnreg::cuda_emu::half_to_float(x); }
ATTNREG_DEV float to_float(bf16_t x) { return ::attnreg::cuda_emu::bf16_to_float(x); }
template <class E>
ATTNREG_DEV E from_float(float x);
template <>
ATTNREG_DEV f16_t from_float<f16_t>(float x) {
  return ::attnreg::cuda_emu::float_to_half(x);
}
template <>
ATTNREG_DEV bf16_t from_float<bf16_t>(float x) {
  return ::attnreg::cuda_emu::float_to_bf16(x);
}
#else
using f16_t = __half;
using bf16_t = __nv_bfloat16;
ATTNREG_DEV float to_float(f16_t x) { return __half2float(x); }
ATTNREG_DEV float to_float(bf16_t x) { return __bfloat162float(x); }
template <class E>
ATTNREG_DEV E from_float(float x);
template <>
ATTNREG_DEV f16_t from_float<f16_t>(float x) {
  return __float2half_rn(x);
}
template <>
ATTNREG_DEV bf16_t from_float<bf16_t>(float x) {
  return __float2bfloat16_rn(x);
}
#endif

ATTNREG_DEV float to_float(float x) { return x; }
template <>
ATTNREG_DEV float from_float<float>(float x) {
  return x;
}

}  // namespace ATTNREG_CUDA_NS
}  // namespace attnreg
