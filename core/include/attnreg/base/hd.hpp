// attnreg: one macro that marks small inline functions as usable from both host code (OpenMP
// loops) and CUDA kernels, so the per-pair / per-tile arithmetic is written once.
#pragma once

#if defined(__CUDACC__)
#define ATTNREG_HD __host__ __device__ __forceinline__
#else
#define ATTNREG_HD inline
#endif
