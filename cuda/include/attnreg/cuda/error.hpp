// attnreg CUDA backend: its error type. The kernels' host code (cuda/src/*.cu, compiled by
// nvcc) throws CudaError, never the core's error types (whose header brings Armadillo into
// nvcc's host pass); the one place that translates it into attnreg::InvalidArgument /
// attnreg::NumericalError is the backend adapter, cuda/src/backend.cpp (cuda/README.md).
#pragma once

#include <stdexcept>
#include <string>

namespace attnreg {
namespace cuda {

class CudaError : public std::runtime_error {
 public:
  enum class Kind {
    invalid_argument,  ///< bad shape, option, pointer or device (the message names the argument)
    numerical,         ///< a CUDA call failed, or the float32 arithmetic broke down
  };
  CudaError(Kind kind, const std::string& msg) : std::runtime_error(msg), kind_(kind) {}
  Kind kind() const noexcept { return kind_; }

 private:
  Kind kind_;
};

[[noreturn]] inline void throw_invalid_argument(const std::string& msg) {
  throw CudaError(CudaError::Kind::invalid_argument, msg);
}
[[noreturn]] inline void throw_numerical_error(const std::string& msg) {
  throw CudaError(CudaError::Kind::numerical, msg);
}

}  // namespace cuda
}  // namespace attnreg
