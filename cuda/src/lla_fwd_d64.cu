// attnreg CUDA backend: the kernel instantiations for head dimensions up to 64 (see
// lla_launch.cuh).
#include "lla_launch_template.cuh"

namespace attnreg {
namespace cuda {

#define ATTNREG_INSTANTIATE(E, TC, K) \
  template void launch_config<kern::Cfg<E, 64, TC, K>>(const FwdParams&, cudaStream_t);
ATTNREG_INSTANTIATE(float, false, Kind::softmax)
ATTNREG_INSTANTIATE(float, false, Kind::lla_blockwise)
ATTNREG_INSTANTIATE(f16_t, true, Kind::softmax)
ATTNREG_INSTANTIATE(f16_t, true, Kind::lla_blockwise)
ATTNREG_INSTANTIATE(bf16_t, true, Kind::softmax)
ATTNREG_INSTANTIATE(bf16_t, true, Kind::lla_blockwise)
#undef ATTNREG_INSTANTIATE

}  // namespace cuda
}  // namespace attnreg
