// attnreg CUDA backend: the two error hooks of attention_device.hpp for a standalone build of
// cuda/ without the C++ core (bench/bench_cuda_lla.py compiles cuda/*.cu into a shared library
// with -DATTNREG_CUDA_STANDALONE to reach the kernels through the C interface). In the normal
// build, core/src/attention_device.cpp defines them (throwing attnreg::InvalidArgument /
// NumericalError) and this file compiles to nothing.
#ifdef ATTNREG_CUDA_STANDALONE
#include <stdexcept>
#include <string>

#include "attnreg/attention/attention_device.hpp"

namespace attnreg {
namespace attention {
namespace device_detail {
void throw_invalid_argument(const std::string& msg) { throw std::invalid_argument(msg); }
void throw_numerical_error(const std::string& msg) { throw std::runtime_error(msg); }
}  // namespace device_detail
}  // namespace attention
}  // namespace attnreg
#endif
