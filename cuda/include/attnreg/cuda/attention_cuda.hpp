// attnreg CUDA backend: host API of the blockwise attention kernels (lla_kernels.cuh).
//
//   forward()  softmax / Nadaraya-Watson (dot or rbf logits), LLA blockwise (FlashLLA with
//              in-kernel batched conjugate gradients) or LLA direct (explicit Sigma, Cholesky,
//              d and dv <= 32), on float32, float16 or bfloat16 tensors that live in host
//              memory (copied in and out) or device memory (used in place).
//
// Tensors are (batch, heads, seq, dim) with unit stride along dim and any element strides for
// batch, head and seq (a zero stride broadcasts). Queries may be fewer or more than keys
// (cross-attention); with `causal`, query i sees keys j <= i + n_k - n_q (bottom-right
// alignment), and a sliding window w keeps the last w of them (|j - a_i| < w without causal),
// exactly as attnreg/attention/attention.hpp. The math is that of the CPU engine: w = exp(a q'k) (dot)
// or exp(a q'k - (a/2)||k||^2) (rbf; the per-query constant cancels), Sigma = sum w z z' +
// lambda omega I with the omega-scaled ridge, m(q) = sum_j w_j (1 - z_j'rho) v_j / (omega -
// mu'rho).
//
// Precision. float32 inputs: float32 arithmetic on CUDA cores throughout (the accurate path).
// float16 / bfloat16 inputs: tile products on tensor cores with float32 accumulation; the CG
// state, statistics and output accumulators are float32, and the float32 operands of the
// products are split into two 16-bit halves, so the result is close to float32 arithmetic on
// the 16-bit inputs; the output is rounded to the input type.
//
// Errors: CudaError (attnreg/cuda/error.hpp) of kind invalid_argument for bad shapes / options /
// pointers (naming the argument), of kind numerical when CUDA fails (the CUDA error string is
// quoted) or an LLA denominator omega - mu'rho is not positive (naming the (batch, head,
// query), 1-based), or a direct-kind Sigma is not positive definite in float32. Every CUDA
// call's status is checked.
// Host-only header: no CUDA types, so any C++ compiler can include it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attnreg/cuda/error.hpp"
#include "attnreg/cuda/lla_params.hpp"

namespace attnreg {
namespace cuda {

struct Shape {
  int batch = 1, heads = 1;
  std::int64_t n_q = 0, n_k = 0;
  int d = 0, dv = 0;
};

/// A (batch, heads, seq, dim) tensor with unit stride along dim; strides in elements.
struct TensorRef {
  const void* data = nullptr;
  std::int64_t bstride = 0, hstride = 0, rstride = 0;
};
struct MutTensorRef {
  void* data = nullptr;
  std::int64_t bstride = 0, hstride = 0, rstride = 0;
};

/// C-contiguous strides of a (batch, heads, seq, dim) tensor.
TensorRef contiguous(const void* data, const Shape& s, bool keys, bool values);
MutTensorRef contiguous_out(void* data, const Shape& s);

enum class Memory { host, device };

struct ForwardOptions {
  Kind kind = Kind::lla_blockwise;
  bool rbf = false;      ///< Gaussian logits a q'k - (a/2)||k||^2 (a = 1/h^2)
  double scale = 1.0;    ///< a: dot kernel exp(a q'k) (a = 1/h for LLA, 1/sqrt(d) softmax)
  bool causal = false;
  std::int64_t window = 0;
  double ridge = 0.0;                  ///< lambda (lla)
  std::vector<float> ridge_per_query;  ///< empty, n_q or batch * heads * n_q values (lla)
  double cg_tol = 1e-6;                ///< relative: stop a row when ||r|| <= cg_tol ||mu||
  int cg_max_iter = 0;                 ///< 0: 2 d + 10
  bool reverse_blocks = true;          ///< causal: start the longest query blocks first
};

/// Optional per-(batch, head, query) outputs, row-major (b, h, i), float32, in the memory of
/// the call (host arrays for Memory::host, device arrays for Memory::device). rho is
/// (b, h, i, d). Any pointer may be null.
struct AuxOutputs {
  float* rho = nullptr;
  float* delta = nullptr;
  float* row_max = nullptr;
  float* omega = nullptr;
};

struct ForwardReport {
  std::string kernel;          ///< e.g. "lla_blockwise<bfloat16, D=64, tensor cores>"
  int block_q = 0, block_k = 0, head_dim_bucket = 0;
  std::size_t shared_bytes = 0;  ///< dynamic shared memory per block
  std::int64_t n_query_blocks = 0;  ///< batch * heads * ceil(n_q / block_q)
  // LLA blockwise: CG sweeps per (batch, head, query block), row-major.
  std::vector<int> cg_iterations;
  int cg_max_iterations = 0;
  int cg_iteration_limit = 0;
  double cg_tol = 0.0;
  std::int64_t cg_rows_not_converged = 0;
  double cg_max_relative_residual = 0.0;
  double min_relative_denominator = 1.0;  ///< min over queries of (omega - mu'rho) / omega
  double kernel_ms = 0.0;                 ///< kernel time (CUDA events), transfers excluded
};

/// Run one forward. `o` receives (batch, heads, n_q, dv) in `dtype`. Throws as described in
/// the header comment; on return the output is complete. `stream` is a cudaStream_t (null:
/// the default stream); the call synchronises it before returning.
ForwardReport forward(DType dtype, const Shape& shape, const TensorRef& q, const TensorRef& k,
                      const TensorRef& v, const MutTensorRef& o, const ForwardOptions& opt,
                      Memory memory, const AuxOutputs* aux = nullptr, void* stream = nullptr);

/// Block sizes and shared memory of the configuration forward() would use.
struct ConfigInfo {
  std::string kernel;
  int block_q = 0, block_k = 0, head_dim_bucket = 0;
  std::size_t shared_bytes = 0;
};
ConfigInfo config_info(DType dtype, Kind kind, int d, int dv);

std::string to_string(DType t);
std::string to_string(Kind k);

}  // namespace cuda
}  // namespace attnreg

// C interface for callers that hold device pointers from another framework (the benchmark
// script passes torch tensors through ctypes). Returns 0 on success; otherwise a non-zero code
// and attnreg_cuda_last_error() says why. dtype: 0 float32, 1 float16, 2 bfloat16; kind: 0
// softmax, 1 lla blockwise, 2 lla direct. Contiguous (batch, heads, seq, dim) device tensors.
// rho / delta (device, may be null) receive the per-row outputs; *kernel_ms the kernel time;
// *cg_max_iterations the largest CG sweep count.
extern "C" {
int attnreg_cuda_forward(int dtype, int kind, int batch, int heads, long long n_q,
                         long long n_k, int d, int dv, const void* q, const void* k,
                         const void* v, void* o, int causal, long long window, int rbf,
                         double scale, double ridge, double cg_tol, int cg_max_iter,
                         float* rho, float* delta, double* kernel_ms, int* cg_max_iterations);
const char* attnreg_cuda_last_error(void);
}
