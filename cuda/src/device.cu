#include <cuda_runtime.h>

#include "attnreg/cuda/device.hpp"

namespace attnreg {
namespace cuda {

DeviceQuery query_devices() {
  DeviceQuery q;
  int n = 0;
  const cudaError_t st = cudaGetDeviceCount(&n);
  if (st != cudaSuccess) {
    q.error = cudaGetErrorString(st);
    cudaGetLastError();  // clear the sticky error so later calls start clean
    return q;
  }
  q.count = n;
  if (n > 0) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) q.name = prop.name;
  } else {
    q.error = "no CUDA device found";
  }
  return q;
}

}  // namespace cuda
}  // namespace attnreg
