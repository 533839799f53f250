// attnreg CUDA backend: device discovery for the "emulated backend" build only (the CPU check
// of the host launcher and the GPU tests with the kernels emulated; see cta_emulator.hpp). In
// every other build this file is empty and device.cu answers.
#if defined(ATTNREG_CUDA_EMULATED_BACKEND)
#include "cuda_runtime_emulation.hpp"
#include "attnreg/cuda/device.hpp"

namespace attnreg {
namespace cuda {

DeviceQuery query_devices() {
  DeviceQuery q;
  q.count = 1;
  q.name = "attnreg CTA emulator (no GPU: kernels run on the host)";
  return q;
}

}  // namespace cuda
}  // namespace attnreg
#endif
