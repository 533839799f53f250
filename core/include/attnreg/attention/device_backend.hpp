// attnreg: the device interface of the attention engine (core/README.md, "Devices"). The core
// knows no device but the CPU; a backend (the CUDA one lives in cuda/, cuda/README.md)
// implements DeviceBackend and registers itself, and forward(..., Device) of
// attention_device.hpp hands it the call. The dependency runs one way: a backend includes the
// core's headers, never the reverse.
//
// A backend's forward() validates with the CPU engine's own plan (same checks, same
// messages), throws only the core's error types (attnreg::InvalidArgument, NumericalError) and
// returns the same Diagnostics as the CPU engine. Without a registered backend, device =
// "cuda" is require_cuda()'s clear error (build_info.hpp).
#pragma once

#include <string>

#include "attnreg/attention/attention.hpp"
#include "attnreg/attention/attention_device.hpp"

namespace attnreg {
namespace attention {

/// What a backend reports about its devices (BuildInfo's cuda fields read it).
struct DeviceStatus {
  std::string archs;   ///< the architectures it was compiled for, e.g. "80,90"
  int count = 0;       ///< devices visible now
  std::string name;    ///< the first device's name
  std::string error;   ///< why no device can be used (empty when count > 0)
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  virtual DeviceStatus status() const = 0;
  virtual Diagnostics forward(const View<const float>& Q, const View<const float>& K,
                              const View<const float>& V, const View<float>& out,
                              const Options& opt) const = 0;
  virtual Diagnostics forward(const View<const double>& Q, const View<const double>& K,
                              const View<const double>& V, const View<double>& out,
                              const Options& opt) const = 0;
};

/// Register `backend` (not owned; it must outlive every call) for `device`; a second
/// registration replaces the first. Device::cpu cannot be replaced (InvalidArgument).
void register_backend(Device device, const DeviceBackend* backend);

/// The backend registered for `device`, or nullptr (always nullptr for Device::cpu, which is
/// forward() of attention.hpp).
const DeviceBackend* registered_backend(Device device);

}  // namespace attention
}  // namespace attnreg
