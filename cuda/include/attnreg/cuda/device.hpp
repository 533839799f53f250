// attnreg CUDA backend: device discovery (host code; compiled by nvcc only when the backend
// is built). The blockwise LLA and NW kernels of the CUDA issue live beside this file.
#pragma once

#include <string>

namespace attnreg {
namespace cuda {

struct DeviceQuery {
  int count = 0;
  std::string name;   ///< device 0
  std::string error;  ///< CUDA's message when no device can be used
};

DeviceQuery query_devices();

}  // namespace cuda
}  // namespace attnreg
