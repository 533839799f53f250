// attnreg attention engine: the device switch (attention_device.hpp) and the registration
// point of device backends (device_backend.hpp). device = "cpu" is forward() of
// attention.cpp; device = "cuda" is the registered backend's forward() (the CUDA backend of
// cuda/ registers itself when it is linked in, cuda/README.md). Without one (the R package,
// CPU-only builds) the CUDA branch is require_cuda()'s clear error.
#include "attnreg/attention/attention_device.hpp"

#include <atomic>

#include "attnreg/attention/device_backend.hpp"
#include "attnreg/base/build_info.hpp"
#include "attnreg/base/error.hpp"

namespace attnreg {
namespace attention {

Device parse_device(const std::string& s, const std::string& arg) {
  if (s == "cpu") return Device::cpu;
  if (s == "cuda" || s == "gpu") return Device::cuda;
  throw InvalidArgument(arg + ": unknown '" + s + "' (choose cpu or cuda)");
}

std::string to_string(Device d) { return d == Device::cuda ? "cuda" : "cpu"; }

namespace {
// A function-local static: backends register during static initialisation, in any order.
std::atomic<const DeviceBackend*>& cuda_backend_slot() {
  static std::atomic<const DeviceBackend*> slot{nullptr};
  return slot;
}
}  // namespace

void register_backend(Device device, const DeviceBackend* backend) {
  if (device == Device::cpu) {
    throw InvalidArgument("device: the CPU engine is built in and cannot be replaced; register "
                          "a backend for 'cuda'");
  }
  cuda_backend_slot().store(backend);
}

const DeviceBackend* registered_backend(Device device) {
  return device == Device::cuda ? cuda_backend_slot().load() : nullptr;
}

template <class T>
Diagnostics forward(const View<const T>& Q, const View<const T>& K, const View<const T>& V,
                    const View<T>& out, const Options& opt, Device device) {
  if (device == Device::cpu) return forward<T>(Q, K, V, out, opt);
  if (const DeviceBackend* backend = registered_backend(device))
    return backend->forward(Q, K, V, out, opt);
  require_cuda("device");  // throws: no CUDA backend in this build
  throw InvalidArgument("device: 'cuda' is not available in this build; use 'cpu'");
}

template Diagnostics forward<float>(const View<const float>&, const View<const float>&,
                                    const View<const float>&, const View<float>&,
                                    const Options&, Device);
template Diagnostics forward<double>(const View<const double>&, const View<const double>&,
                                     const View<const double>&, const View<double>&,
                                     const Options&, Device);

}  // namespace attention
}  // namespace attnreg
