// attnreg CUDA backend: one launcher per kernel configuration (FlashAttention's
// *_launch_template.h pattern). Declared here, defined in lla_launch_template.cuh and
// explicitly instantiated per head dimension in lla_fwd_d32.cu, lla_fwd_d64.cu and
// lla_fwd_d128.cu, so the instantiations compile in parallel and `nvcc --resource-usage`
// reports them file by file; attention_cuda.cu only calls them.
#pragma once

#if defined(ATTNREG_CUDA_EMULATION)
#include "cuda_runtime_emulation.hpp"
#else
#include <cuda_runtime.h>
#endif

#include <string>

#include "attnreg/cuda/error.hpp"
#include "lla_kernels.cuh"
#include "attnreg/cuda/lla_params.hpp"

namespace attnreg {
namespace cuda {

/// Throw CudaError (numerical) naming the CUDA call and quoting CUDA's message.
inline void check_cuda(cudaError_t st, const char* what) {
  if (st == cudaSuccess) return;
  const std::string msg = std::string("CUDA: ") + what + " failed: " + cudaGetErrorName(st) +
                          " (" + cudaGetErrorString(st) + ")" +
                          (st == cudaErrorMemoryAllocation
                               ? "; the GPU is out of memory: use a smaller batch or device='cpu'"
                               : "");
  cudaGetLastError();  // clear a non-sticky error so the next call starts clean
  ::attnreg::cuda::throw_numerical_error(msg);
}

/// Launch the kernel of configuration C on grid (p.n_blocks, p.heads, p.batch). p.n_blocks must
/// be ceil(p.n_q / C::Br). Checks the launch; does not synchronise.
template <class C>
void launch_config(const FwdParams& p, cudaStream_t stream);

}  // namespace cuda
}  // namespace attnreg
