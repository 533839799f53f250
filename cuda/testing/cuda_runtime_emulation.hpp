// attnreg CUDA backend: a host stand-in for the part of the CUDA runtime API that
// attention_cuda.cu, the launchers and tests/test_cuda_attention.cpp use, for the "emulated
// backend" build (ATTNREG_CUDA_EMULATION + ATTNREG_CUDA_EMULATED_BACKEND): the real host
// launcher, the core's device = "cuda" path and the GPU tests then run on a machine without a
// GPU, with the kernels executed by cta_emulator.hpp. Test tooling only: never part of the
// library build. How to build it is in cta_emulator.hpp's header comment.
//
// "Device" memory is host memory from this header's allocator; allocations are tracked so
// cudaPointerGetAttributes can tell device pointers from host pointers (as the launcher's
// checks need). Streams are ignored and everything is synchronous; events read a steady
// clock.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "cta_emulator.hpp"

enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
};
enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
};
enum cudaMemoryType {
  cudaMemoryTypeUnregistered = 0,
  cudaMemoryTypeHost = 1,
  cudaMemoryTypeDevice = 2,
  cudaMemoryTypeManaged = 3
};
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };

struct cudaPointerAttributes {
  cudaMemoryType type = cudaMemoryTypeUnregistered;
  int device = 0;
  void* devicePointer = nullptr;
  void* hostPointer = nullptr;
};
struct cudaDeviceProp {
  char name[256] = "attnreg CTA emulator";
  int major = 9, minor = 0;
  std::size_t sharedMemPerBlockOptin = 232448;  // sm_90
};
struct CUstream_st;
struct CUevent_st {
  std::chrono::steady_clock::time_point t;
};
typedef CUstream_st* cudaStream_t;
typedef CUevent_st* cudaEvent_t;
using dim3 = ::attnreg::cuda_emu::dim3e;

namespace attnreg {
namespace cuda_emu {
/// Live "device" allocations: start -> size.
inline std::map<const char*, std::size_t>& device_allocations() {
  static std::map<const char*, std::size_t> m;
  return m;
}
inline bool is_device_pointer(const void* p) {
  const char* c = static_cast<const char*>(p);
  auto& m = device_allocations();
  auto it = m.upper_bound(c);
  if (it == m.begin()) return false;
  --it;
  return c < it->first + it->second;
}
}  // namespace cuda_emu
}  // namespace attnreg

inline cudaError_t cudaMalloc(void** p, std::size_t bytes) {
  const std::size_t n = (bytes + 255) / 256 * 256;
  *p = std::aligned_alloc(256, n == 0 ? 256 : n);
  if (*p == nullptr) return cudaErrorMemoryAllocation;
  ::attnreg::cuda_emu::device_allocations()[static_cast<const char*>(*p)] = n == 0 ? 256 : n;
  return cudaSuccess;
}
template <class T>
cudaError_t cudaMalloc(T** p, std::size_t bytes) {
  void* v = nullptr;
  const cudaError_t st = cudaMalloc(&v, bytes);
  *p = static_cast<T*>(v);
  return st;
}
inline cudaError_t cudaFree(void* p) {
  if (p == nullptr) return cudaSuccess;
  auto& m = ::attnreg::cuda_emu::device_allocations();
  if (m.erase(static_cast<const char*>(p)) == 0) return cudaErrorInvalidValue;
  std::free(p);
  return cudaSuccess;
}
inline cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t n, cudaMemcpyKind) {
  std::memcpy(dst, src, n);
  return cudaSuccess;
}
inline cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t n, cudaMemcpyKind k,
                                   cudaStream_t = nullptr) {
  return cudaMemcpy(dst, src, n, k);
}
inline cudaError_t cudaMemset(void* p, int v, std::size_t n) {
  std::memset(p, v, n);
  return cudaSuccess;
}
inline cudaError_t cudaMemsetAsync(void* p, int v, std::size_t n, cudaStream_t = nullptr) {
  return cudaMemset(p, v, n);
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
inline cudaError_t cudaGetLastError() { return cudaSuccess; }
inline cudaError_t cudaGetDevice(int* d) {
  *d = 0;
  return cudaSuccess;
}
inline cudaError_t cudaGetDeviceCount(int* n) {
  *n = 1;
  return cudaSuccess;
}
inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int) {
  *p = cudaDeviceProp();
  return cudaSuccess;
}
inline cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* a, const void* p) {
  *a = cudaPointerAttributes();
  if (::attnreg::cuda_emu::is_device_pointer(p)) a->type = cudaMemoryTypeDevice;
  return cudaSuccess;
}
inline cudaError_t cudaEventCreate(cudaEvent_t* e) {
  *e = new CUevent_st();
  return cudaSuccess;
}
inline cudaError_t cudaEventDestroy(cudaEvent_t e) {
  delete e;
  return cudaSuccess;
}
inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t = nullptr) {
  e->t = std::chrono::steady_clock::now();
  return cudaSuccess;
}
inline cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
inline cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b) {
  *ms = std::chrono::duration<float, std::milli>(b->t - a->t).count();
  return cudaSuccess;
}
template <class F>
cudaError_t cudaFuncSetAttribute(F*, cudaFuncAttribute, int bytes) {
  return bytes <= 232448 ? cudaSuccess : cudaErrorInvalidValue;
}
inline const char* cudaGetErrorName(cudaError_t e) {
  return e == cudaSuccess ? "cudaSuccess"
                          : (e == cudaErrorMemoryAllocation ? "cudaErrorMemoryAllocation"
                                                            : "cudaErrorInvalidValue");
}
inline const char* cudaGetErrorString(cudaError_t e) {
  return e == cudaSuccess ? "no error"
                          : (e == cudaErrorMemoryAllocation ? "out of memory" : "invalid argument");
}

// 16-bit types of cuda_fp16.h / cuda_bf16.h.
using __half = ::attnreg::cuda_emu::half_t;
using __nv_bfloat16 = ::attnreg::cuda_emu::bf16_t;
inline float __half2float(__half h) { return ::attnreg::cuda_emu::half_to_float(h); }
inline __half __float2half_rn(float x) { return ::attnreg::cuda_emu::float_to_half(x); }
inline float __bfloat162float(__nv_bfloat16 h) { return ::attnreg::cuda_emu::bf16_to_float(h); }
inline __nv_bfloat16 __float2bfloat16_rn(float x) { return ::attnreg::cuda_emu::float_to_bf16(x); }
