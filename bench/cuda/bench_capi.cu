// attnreg CUDA backend: benchmark entry point for bench/bench_cuda_lla.py, which compiles it
// with the backend's kernels (cuda/src/*.cu) into a shared library of its own; no CMake target
// builds it. It allocates random inputs on the GPU (no framework needed), runs forward() with
// device memory `repeats` times and reports the kernel times (CUDA events), the device bytes
// the call holds and the CG sweeps.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "attnreg/cuda/attention_cuda.hpp"

namespace {

thread_local std::string g_bench_error;

__device__ __forceinline__ float hash_uniform(std::uint64_t i, std::uint64_t seed) {
  std::uint64_t x = i * 0x9E3779B97F4A7C15ull + seed;
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 31;
  return static_cast<float>(x >> 40) * (1.0f / 16777216.0f) - 0.5f;  // [-0.5, 0.5)
}

template <class T>
__device__ __forceinline__ T cvt(float x);
template <>
__device__ __forceinline__ float cvt<float>(float x) {
  return x;
}
template <>
__device__ __forceinline__ __half cvt<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ __forceinline__ __nv_bfloat16 cvt<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

/// x_i = scale * sqrt(12) * U(-1/2, 1/2): mean 0, standard deviation `scale`.
template <class T>
__global__ void fill_kernel(T* x, std::int64_t n, float scale, std::uint64_t seed) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    x[i] = cvt<T>(3.4641016f * scale * hash_uniform(static_cast<std::uint64_t>(i), seed));
}

struct Buf {
  void* p = nullptr;
  ~Buf() {
    if (p) cudaFree(p);
  }
};

void check(cudaError_t st, const char* what) {
  if (st != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(st));
}

template <class T>
void fill(void* p, std::int64_t n, float scale, std::uint64_t seed) {
  fill_kernel<T><<<1024, 256>>>(static_cast<T*>(p), n, scale, seed);
  check(cudaGetLastError(), "fill kernel");
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) const char* attnreg_cuda_bench_last_error(void) {
  return g_bench_error.c_str();
}

/// Returns 0 and fills the outputs, or non-zero (attnreg_cuda_bench_last_error() says why).
/// times_ms receives `repeats` kernel times. cg_sweeps_max / cg_sweeps_mean: over the
/// (batch, head, query block) work items of the last run (0 for softmax).
__attribute__((visibility("default"))) int attnreg_cuda_bench(
    int dtype, int kind, int batch, int heads, long long n, int d, int causal, double ridge,
    double cg_tol, int repeats, unsigned long long seed, double* times_ms, long long* bytes,
    int* cg_sweeps_max, double* cg_sweeps_mean, int* block_q, int* block_k) {
  using namespace attnreg::cuda;
  try {
    const std::size_t es = dtype == 0 ? 4 : 2;
    const std::int64_t elems = static_cast<std::int64_t>(batch) * heads * n * d;
    const std::int64_t rows = static_cast<std::int64_t>(batch) * heads * n;
    Buf q, k, v, o, rho, delta;
    check(cudaMalloc(&q.p, es * elems), "cudaMalloc(Q)");
    check(cudaMalloc(&k.p, es * elems), "cudaMalloc(K)");
    check(cudaMalloc(&v.p, es * elems), "cudaMalloc(V)");
    check(cudaMalloc(&o.p, es * elems), "cudaMalloc(out)");
    const bool lla = kind != 0;
    if (lla) {
      check(cudaMalloc(&rho.p, sizeof(float) * elems), "cudaMalloc(rho)");
      check(cudaMalloc(&delta.p, sizeof(float) * rows), "cudaMalloc(delta)");
    }
    auto fill_all = [&](void* p, float scale, std::uint64_t s) {
      if (dtype == 0) fill<float>(p, elems, scale, s);
      if (dtype == 1) fill<__half>(p, elems, scale, s);
      if (dtype == 2) fill<__nv_bfloat16>(p, elems, scale, s);
    };
    fill_all(q.p, 0.3f, seed);
    fill_all(k.p, 0.3f, seed + 1);
    fill_all(v.p, 1.0f, seed + 2);
    check(cudaDeviceSynchronize(), "fill");
    Shape s;
    s.batch = batch;
    s.heads = heads;
    s.n_q = s.n_k = n;
    s.d = s.dv = d;
    ForwardOptions opt;
    opt.kind = static_cast<Kind>(kind);
    opt.scale = 1.0 / std::sqrt(static_cast<double>(d));
    opt.causal = causal != 0;
    opt.ridge = lla ? ridge : 0.0;
    opt.cg_tol = cg_tol;
    AuxOutputs aux;
    aux.rho = static_cast<float*>(rho.p);
    aux.delta = static_cast<float*>(delta.p);
    ForwardReport rep;
    for (int r = 0; r < repeats; ++r) {
      rep = forward(static_cast<DType>(dtype), s, contiguous(q.p, s, false, false),
                    contiguous(k.p, s, true, false), contiguous(v.p, s, true, true),
                    contiguous_out(o.p, s), opt, Memory::device, lla ? &aux : nullptr);
      times_ms[r] = rep.kernel_ms;
    }
    // Device memory of one call: inputs, output, rho and delta, and the launcher's per-row
    // diagnostics (omega, delta, residual, status: 16 bytes a row) and per-block sweeps.
    long long total = static_cast<long long>(4 * es * elems);
    if (lla) total += static_cast<long long>(sizeof(float) * (elems + rows) + 16 * rows);
    else total += static_cast<long long>(4 * rows);
    total += static_cast<long long>(sizeof(int) * rep.n_query_blocks);
    *bytes = total;
    *cg_sweeps_max = rep.cg_max_iterations;
    double sum = 0;
    for (int it : rep.cg_iterations) sum += it;
    *cg_sweeps_mean = rep.cg_iterations.empty() ? 0.0 : sum / rep.cg_iterations.size();
    *block_q = rep.block_q;
    *block_k = rep.block_k;
    g_bench_error.clear();
    return 0;
  } catch (const std::exception& e) {
    g_bench_error = e.what();
    return 1;
  }
}

}  // extern "C"
