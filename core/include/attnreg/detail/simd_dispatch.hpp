// attnreg (internal, not part of the public API): entry points into the Highway per-target code
// of kernel_pairs.cpp (kernel_tiles-inl.hpp), each dispatched to the best SIMD target of the
// running CPU. For tests, benchmarks and build_info().
#pragma once

#include <cstddef>

#include "attnreg/kernels/kernel.hpp"

namespace attnreg {
namespace simd_dispatch {

/// y[i] = e^x[i] for x[i] <= 0 with the kernel tiles' exp: Highway's Exp (<= 1 ulp) on
/// [-708, 0], exactly 0 below -708 and at -inf.
void exp_nonpositive(const double* x, std::size_t n, double* y);
/// y[i] = the kernel tiles' shape k(u[i]) (the Gaussian as exp(-u^2 / 2)).
void kernel_shape(KernelType kernel, const double* u, std::size_t n, double* y);
/// Highway's name of the target the tiles run on here ("AVX2", "AVX3", "SSE4", ...).
const char* target_name();
/// The environment variable ATTNREG_SIMD (avx512, avx2, sse4 or scalar), read once when the
/// library is loaded, caps the run-time dispatch at that target, so that tests can run every
/// SIMD path on one machine (Highway's DisableTargets). Throws InvalidArgument naming the
/// variable when its value is unknown or the CPU lacks the target asked for; the bindings call
/// it when they load.
void check_simd_policy();

}  // namespace simd_dispatch
}  // namespace attnreg
