// attnreg CUDA backend: the plain parameter block that crosses from the host launchers to the
// attention kernels (the FlashAttention `Flash_fwd_params` pattern): pointers, extents, element
// strides and flags, no CUDA types, so host code compiled by any compiler can fill it.
#pragma once

#include <cstdint>

namespace attnreg {
namespace cuda {

/// Which forward a kernel computes.
enum class Kind : int {
  softmax = 0,        ///< online-softmax NW (dot or rbf logits): LLA with rho = 0
  lla_blockwise = 1,  ///< Zuo et al. 2025, arXiv:2510.01450, Algorithm 1 with the batched CG of Algorithm 2
  lla_direct = 2,     ///< explicit Sigma per query (eq. 10-11) and Cholesky; d, dv <= 32
};

/// Element type of Q, K, V and the output.
enum class DType : int { float32 = 0, float16 = 1, bfloat16 = 2 };

/// Per-(batch, head, query) CG status written by the LLA kernels (the lla_tile.hpp codes).
enum : int { kRowActive = 0, kRowConverged = 1, kRowBreakdown = 2 };

struct FwdParams {
  // Tensors (batch, heads, seq, dim) with unit stride along dim; strides are in elements.
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;
  std::int64_t q_bstride = 0, q_hstride = 0, q_rstride = 0;
  std::int64_t k_bstride = 0, k_hstride = 0, k_rstride = 0;
  std::int64_t v_bstride = 0, v_hstride = 0, v_rstride = 0;
  std::int64_t o_bstride = 0, o_hstride = 0, o_rstride = 0;
  int batch = 0, heads = 0;
  std::int64_t n_q = 0, n_k = 0;
  int d = 0, dv = 0;

  // Kernel and mask (attention.hpp): logits a q'k, minus (a/2)||k||^2 when rbf.
  float a = 1.0f;
  bool rbf = false;
  bool causal = false;
  std::int64_t window = 0;

  // LLA ridge lambda of Sigma = sum w z z' + lambda omega I: scalar `ridge` when ridge_len is
  // 0, else ridge_vec (device memory) of length n_q or batch * heads * n_q.
  float ridge = 0.0f;
  const float* ridge_vec = nullptr;
  std::int64_t ridge_len = 0;
  float cg_tol = 1e-6f;
  int cg_max_iter = 0;

  // Per-(batch, head, query) outputs, row-major (b, h, i), float32, device memory. rho (also
  // with trailing dim d) and delta are what a backward pass needs besides the inputs; row_max
  // and omega give the weights' scale (exp(l - row_max) / omega are the NW weights).
  // Any of them may be null.
  float* rho = nullptr;       ///< (b, h, i, d): Sigma^-1 mu (lla)
  float* delta = nullptr;     ///< omega - mu'rho, the LLA denominator (lla)
  float* row_max = nullptr;   ///< running max of the logits after the last key
  float* omega = nullptr;     ///< sum_j exp(l_j - row_max)
  float* rel_res = nullptr;   ///< ||r|| / ||mu|| of the CG recurrence (lla)
  int* status = nullptr;      ///< kRowActive / kRowConverged / kRowBreakdown (lla)
  int* block_sweeps = nullptr;  ///< (b, h, query block): CG sweeps executed (lla_blockwise)

  int n_blocks = 0;             ///< ceil(n_q / Br) for the chosen configuration
  bool reverse_blocks = false;  ///< causal: launch the longest query blocks first
};

}  // namespace cuda
}  // namespace attnreg
