// attnreg: the list of continuous kernels. Adding a kernel = a traits header in kernels/shapes/
// (kernel_traits.hpp lists its members) + its #include below + its line in ATTNREG_KERNEL_LIST
// (+ its test). Everything else (KernelType, names, from_name, constants, the weight tiles,
// density, fast sums, bandwidth derivatives, marginal effects) reaches the kernel through
// dispatch_kernel.
//
// The #include lines have no guard of their own: kernel_tiles-inl.hpp includes this file again
// once per Highway target with ATTNREG_KERNEL_VSHAPES defined, which emits each header's
// optional vectorised shape (the scalar parts are include-guarded).
#include "attnreg/kernels/shapes/gaussian.hpp"
#include "attnreg/kernels/shapes/epanechnikov.hpp"
#include "attnreg/kernels/shapes/uniform.hpp"
#include "attnreg/kernels/shapes/triangular.hpp"
#include "attnreg/kernels/shapes/biweight.hpp"
#include "attnreg/kernels/shapes/triweight.hpp"
#include "attnreg/kernels/shapes/tricube.hpp"
#include "attnreg/kernels/shapes/cosine.hpp"
#include "attnreg/kernels/shapes/gaussian4.hpp"

#ifndef ATTNREG_KERNELS_REGISTRY_HPP
#define ATTNREG_KERNELS_REGISTRY_HPP

/// X(enumerator, traits type), in KernelType order (the enum values are stable: append).
#define ATTNREG_KERNEL_LIST(X) \
  X(gaussian, Gaussian)        \
  X(epanechnikov, Epanechnikov) \
  X(uniform, Uniform)          \
  X(triangular, Triangular)    \
  X(biweight, Biweight)        \
  X(triweight, Triweight)      \
  X(tricube, Tricube)          \
  X(cosine, Cosine)            \
  X(gaussian4, Gaussian4)

namespace attnreg {

enum class KernelType : int {
#define ATTNREG_KERNEL_ENUM(id, T) id,
  ATTNREG_KERNEL_LIST(ATTNREG_KERNEL_ENUM)
#undef ATTNREG_KERNEL_ENUM
};

/// Calls f(Traits{}) with the traits type of kernel t and returns its result: the one place a
/// KernelType becomes a type. f is typically a generic lambda, [&](auto k) { using K =
/// decltype(k); ... K::shape(u) ... }.
#if defined(__CUDACC__)
#pragma nv_exec_check_disable  // host-only f (generic lambdas) in host code is fine
#endif
template <class F>
ATTNREG_HD auto dispatch_kernel(KernelType t, F&& f) -> decltype(f(kernels::Gaussian{})) {
  switch (t) {
#define ATTNREG_KERNEL_CASE(id, T) \
  case KernelType::id: return f(kernels::T{});
    ATTNREG_KERNEL_LIST(ATTNREG_KERNEL_CASE)
#undef ATTNREG_KERNEL_CASE
  }
  return f(kernels::Gaussian{});  // not reached: every enumerator has a case
}

}  // namespace attnreg
#endif
