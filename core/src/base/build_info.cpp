#include "attnreg/base/build_info.hpp"

#include "attnreg/attention/device_backend.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/base/runtime.hpp"
#include "attnreg/detail/simd_dispatch.hpp"

#ifndef ATTNREG_VERSION
#error "ATTNREG_VERSION must come from the build (CMakeLists.txt and R-package/build-package.sh read the VERSION file)"
#endif

namespace attnreg {

BuildInfo build_info() {
  BuildInfo b;
  b.version = ATTNREG_VERSION;
  b.openmp = has_openmp();
  b.max_threads = resolve_threads(0);
  b.simd = simd_dispatch::target_name();
#ifdef ATTNREG_BLAS_NAME
  b.blas = ATTNREG_BLAS_NAME;
#else
  b.blas = "system BLAS/LAPACK (through Armadillo)";
#endif
  // The CUDA backend, when linked in, has registered itself (device_backend.hpp).
  if (const attention::DeviceBackend* backend =
          attention::registered_backend(attention::Device::cuda)) {
    const attention::DeviceStatus q = backend->status();
    b.cuda_compiled = true;
    b.cuda_archs = q.archs;
    b.gpu_count = q.count;
    b.gpu_name = q.name;
    b.cuda_error = q.error;
  } else {
#if defined(ATTNREG_R_BUILD)
    b.cuda_error = "attnreg was built without the CUDA backend (the R package is CPU-only)";
#else
    b.cuda_error =
        "attnreg was built without the CUDA backend (ATTNREG_CUDA=OFF, or no nvcc at build time)";
#endif
  }
  if (!b.cuda_compiled) {
    b.cuda = "not compiled: " + b.cuda_error;
  } else {
    const std::string built = "compiled (architectures " + b.cuda_archs + ")";
    b.cuda = b.gpu_count > 0 ? built + "; GPU visible: " + b.gpu_name +
                                   (b.gpu_count > 1 ? " and " + std::to_string(b.gpu_count - 1) +
                                                          " more" : "")
                             : built + "; no GPU visible: " + b.cuda_error;
  }
  return b;
}

void require_cuda(const std::string& arg) {
  const BuildInfo b = build_info();
  if (!b.cuda_compiled) {
    throw InvalidArgument(arg +
                          ": 'cuda' requested but attnreg was built without CUDA support "
                          "(rebuild with nvcc available and ATTNREG_CUDA=ON, or use 'cpu')");
  }
  if (b.gpu_count == 0) {
    throw InvalidArgument(arg + ": 'cuda' requested but no GPU is visible (" + b.cuda_error +
                          "); use 'cpu'");
  }
}

}  // namespace attnreg
