// attnreg CUDA backend: the core's device interface (attnreg/attention/device_backend.hpp)
// implemented on the kernels of attention_cuda.hpp. Linking the backend in (the CMake target
// attnreg_cuda, an object library) registers it for device = "cuda" during static
// initialisation; backend() is the same object, for callers that want it without the switch.
// Its forward() throws only the core's error types: CudaError (error.hpp) is translated there,
// in one place (cuda/src/backend.cpp).
#pragma once

#include "attnreg/attention/device_backend.hpp"

namespace attnreg {
namespace cuda {

const attention::DeviceBackend& backend();

}  // namespace cuda
}  // namespace attnreg
