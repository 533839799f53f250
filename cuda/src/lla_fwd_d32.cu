// attnreg CUDA backend: the kernel instantiations for head dimensions up to 32 (see
// lla_launch.cuh).
#include "lla_launch_template.cuh"

namespace attnreg {
namespace cuda {

#define ATTNREG_INSTANTIATE(E, TC, K) \
  template void launch_config<kern::Cfg<E, 32, TC, K>>(const FwdParams&, cudaStream_t);
ATTNREG_INSTANTIATE(float, false, Kind::softmax)
ATTNREG_INSTANTIATE(float, false, Kind::lla_blockwise)
ATTNREG_INSTANTIATE(f16_t, true, Kind::softmax)
ATTNREG_INSTANTIATE(f16_t, true, Kind::lla_blockwise)
ATTNREG_INSTANTIATE(bf16_t, true, Kind::softmax)
ATTNREG_INSTANTIATE(bf16_t, true, Kind::lla_blockwise)
// The direct kind (explicit Sigma, Cholesky) exists for d, dv <= 32 only, SIMT for every type.
ATTNREG_INSTANTIATE(float, false, Kind::lla_direct)
ATTNREG_INSTANTIATE(f16_t, false, Kind::lla_direct)
ATTNREG_INSTANTIATE(bf16_t, false, Kind::lla_direct)
#undef ATTNREG_INSTANTIATE

}  // namespace cuda
}  // namespace attnreg
