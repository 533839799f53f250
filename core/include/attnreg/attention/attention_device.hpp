// attnreg: the attention engine on a chosen device (core/README.md, Conventions): `device = "cpu"`
// runs the CPU engine of attention.hpp, `device = "cuda"` the backend registered for it through
// device_backend.hpp (the CUDA kernels of cuda/, cuda/README.md: blockwise softmax / NW and LLA,
// blockwise or direct).
//
// CUDA specifics (everything else is forward() of attention.hpp, with the same validation and
// messages):
//   - methods softmax, nw_rbf and lla (algorithms blockwise and direct; `naive` is the float64
//     CPU oracle and stays on the CPU); linear and mesa have no CUDA kernel;
//   - the kernels compute in float32: float64 views are converted on the way in and out (the
//     diagnostics' method then ends in "/cuda-float32"), and cg_tol defaults to 1e-6;
//   - Options::block_q / block_k / n_threads do not apply: block sizes are fixed per head
//     dimension (32, 64, 128; d and d_v at most 128, at most 32 for direct);
//   - without a CUDA backend (none registered) or without a visible GPU the call throws
//     InvalidArgument with require_cuda()'s message ("... built without CUDA support ..." /
//     "... no GPU is visible ..."), so faces can pass device = "cuda" through unconditionally.
#pragma once

#include <string>

#include "attnreg/attention/attention.hpp"

namespace attnreg {
namespace attention {

enum class Device { cpu, cuda };

/// "cpu" or "cuda"; errors name `arg`.
Device parse_device(const std::string& s, const std::string& arg = "device");
std::string to_string(Device d);

/// forward() of attention.hpp on `device` (see the header comment for CUDA's specifics).
template <class T>
Diagnostics forward(const View<const T>& Q, const View<const T>& K, const View<const T>& V,
                    const View<T>& out, const Options& opt, Device device);

}  // namespace attention
}  // namespace attnreg
