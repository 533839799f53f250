// attnreg: what this build contains and what it can see at run time.
#pragma once

#include <string>

namespace attnreg {

struct BuildInfo {
  std::string version;
  bool openmp = false;
  int max_threads = 1;        ///< OpenMP's default thread count (1 without OpenMP)
  std::string blas;           ///< how BLAS/LAPACK reached us (as far as the build knows)
  bool cuda_compiled = false; ///< the CUDA backend was compiled in
  std::string cuda_archs;     ///< e.g. "80;90"
  int gpu_count = 0;          ///< CUDA devices visible now (0 without CUDA or without a GPU)
  std::string gpu_name;       ///< name of device 0, when visible
  std::string cuda_error;     ///< why no GPU is usable (also when the backend is not compiled)
  /// One line, the same in Python and R: "compiled (architectures ...); GPU visible: <name>",
  /// "compiled (architectures ...); no GPU visible: <why>" or "not compiled: <why>".
  std::string cuda;
  /// SIMD target of the kernel-weight tiles on this CPU (Highway's name: "AVX3", "AVX2", ...).
  std::string simd;
};

BuildInfo build_info();

/// Throw attnreg::InvalidArgument with a clear message unless the CUDA backend is compiled in
/// and a GPU is visible. `arg` names the argument ("device").
void require_cuda(const std::string& arg = "device");

}  // namespace attnreg
