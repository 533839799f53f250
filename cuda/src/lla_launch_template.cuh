// attnreg CUDA backend: the definition of launch_config<C> (see lla_launch.cuh). Included only
// by the per-head-dimension instantiation files.
#pragma once

#include "lla_launch.cuh"

namespace attnreg {
namespace cuda {

template <class C>
void launch_config(const FwdParams& p, cudaStream_t stream) {
  constexpr std::size_t smem = kern::Layout<C>::bytes;
  void (*kernel)(const FwdParams);
  if constexpr (C::kLLA) {
    kernel = kern::lla_forward_kernel<C>;
  } else {
    kernel = kern::softmax_forward_kernel<C>;
  }
  check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(smem)),
             "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
  const dim3 grid(static_cast<unsigned>(p.n_blocks), static_cast<unsigned>(p.heads),
                  static_cast<unsigned>(p.batch));
#if defined(ATTNREG_CUDA_EMULATION)
  (void)stream;
  ::attnreg::cuda_emu::launch(grid, dim3(kern::kThreads), smem, [&] { kernel(p); });
#else
  kernel<<<grid, kern::kThreads, smem, stream>>>(p);
#endif
  check_cuda(cudaGetLastError(), "kernel launch");
}

}  // namespace cuda
}  // namespace attnreg
