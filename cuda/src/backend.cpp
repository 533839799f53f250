// attnreg CUDA backend: the adapter between the core's device interface
// (attnreg/attention/device_backend.hpp) and the kernels' host API (attention_cuda.hpp).
// forward() validates with the CPU engine's own plan (same checks, same messages), converts to
// float32, runs the kernels and turns their report into the core's Diagnostics. This is the one
// place where the backend's CudaError becomes attnreg::InvalidArgument / NumericalError.
// Compiled by the C++ compiler (not nvcc), so the core's headers (Armadillo included) are fine
// here. The static registrar at the end registers the backend for device = "cuda".
#include "attnreg/cuda/backend.hpp"

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "attnreg/base/build_info.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/cuda/attention_cuda.hpp"
#include "attnreg/cuda/device.hpp"
#include "attnreg/cuda/error.hpp"
#include "attnreg/detail/attention_internal.hpp"

#ifndef ATTNREG_CUDA_ARCHS
#error "ATTNREG_CUDA_ARCHS must come from the build (CMakeLists.txt: CMAKE_CUDA_ARCHITECTURES)"
#endif

namespace attnreg {
namespace cuda {

namespace {

using attention::Diagnostics;
using attention::LLAAlgorithm;
using attention::Method;
using attention::Options;
using attention::View;
namespace detail = attention::detail;
using detail::i64;

/// The kernels' forward(), with CudaError translated into the core's error types.
ForwardReport run_kernels(DType dtype, const Shape& s, const TensorRef& q, const TensorRef& k,
                          const TensorRef& v, const MutTensorRef& o, const ForwardOptions& co,
                          Memory memory) {
  try {
    return forward(dtype, s, q, k, v, o, co, memory);
  } catch (const CudaError& e) {
    if (e.kind() == CudaError::Kind::invalid_argument) throw InvalidArgument(e.what());
    throw NumericalError(e.what());
  }
}

template <class T>
Diagnostics forward_on_gpu(const View<const T>& Q, const View<const T>& K, const View<const T>& V,
                           const View<T>& out, const Options& opt) {
  // The CPU engine's plan: every shape, finiteness and option check, with its messages.
  const detail::Plan p = detail::make_plan<T>(Q, K, &V, &out, opt, "out");
  ForwardOptions co;
  switch (p.method) {
    case Method::softmax:
    case Method::nw_rbf:
      co.kind = Kind::softmax;
      break;
    case Method::lla:
      if (p.algorithm == LLAAlgorithm::naive) {
        throw InvalidArgument(
            "algorithm: 'naive' runs on the CPU only (it materialises the n_q x n_k weights in "
            "float64 as the reference); use 'blockwise' or 'direct' with device = 'cuda'");
      }
      detail::check_ridge_rank(p, "lla");
      co.kind = p.algorithm == LLAAlgorithm::direct ? Kind::lla_direct : Kind::lla_blockwise;
      break;
    default:
      throw InvalidArgument("method: '" + attention::to_string(p.method) +
                            "' has no CUDA kernel (softmax, nw_rbf and lla do); use device = "
                            "'cpu'");
  }
  ::attnreg::require_cuda("device");
  co.rbf = p.rbf;
  co.scale = p.a;
  co.causal = p.geo.causal;
  co.window = p.geo.window;
  co.ridge = p.ridge;
  if (p.ridge_vec && !p.ridge_vec->empty())
    co.ridge_per_query.assign(p.ridge_vec->begin(), p.ridge_vec->end());
  // Float32 arithmetic: a float64 default tolerance (1e-12) is out of reach.
  co.cg_tol = std::isnan(opt.cg_tol) ? 1e-6 : opt.cg_tol;
  co.cg_max_iter = p.cg_max_iter;

  Shape s;
  s.batch = static_cast<int>(p.B);
  s.heads = static_cast<int>(p.H);
  s.n_q = p.geo.n_q;
  s.n_k = p.geo.n_k;
  s.d = static_cast<int>(p.d);
  s.dv = static_cast<int>(p.dv);
  // One contiguous float32 copy of each input (the kernels read float32 (b, h, s, d)).
  std::vector<float> q(static_cast<std::size_t>(p.B * p.H * s.n_q * s.d));
  std::vector<float> k(static_cast<std::size_t>(p.B * p.H * s.n_k * s.d));
  std::vector<float> v(static_cast<std::size_t>(p.B * p.H * s.n_k * s.dv));
  std::vector<float> o(static_cast<std::size_t>(p.B * p.H * s.n_q * s.dv));
  for (i64 b = 0; b < p.B; ++b)
    for (i64 h = 0; h < p.H; ++h) {
      const i64 bh = b * p.H + h;
      detail::pack_rows(Q, b, h, 0, s.n_q, q.data() + bh * s.n_q * s.d, s.d);
      detail::pack_rows(K, b, h, 0, s.n_k, k.data() + bh * s.n_k * s.d, s.d);
      detail::pack_rows(V, b, h, 0, s.n_k, v.data() + bh * s.n_k * s.dv, s.dv);
    }
  const ForwardReport rep = run_kernels(
      DType::float32, s, contiguous(q.data(), s, false, false),
      contiguous(k.data(), s, true, false), contiguous(v.data(), s, true, true),
      contiguous_out(o.data(), s), co, Memory::host);
  for (i64 b = 0; b < p.B; ++b)
    for (i64 h = 0; h < p.H; ++h)
      detail::unpack_rows(o.data() + (b * p.H + h) * s.n_q * s.dv, s.dv, s.n_q, out, b, h, 0);

  Diagnostics diag;
  diag.n_threads = 1;
  diag.n_query_blocks = rep.n_query_blocks;
  const std::string suffix = sizeof(T) == 4 ? "/cuda" : "/cuda-float32";
  diag.method = (p.method == Method::lla ? "lla/" + attention::to_string(p.algorithm)
                                         : attention::to_string(p.method)) +
                suffix;
  if (p.method == Method::lla) {
    diag.cg_iterations = rep.cg_iterations;
    diag.cg_max_iterations = rep.cg_max_iterations;
    diag.cg_iteration_limit = rep.cg_iteration_limit;
    diag.cg_tol = rep.cg_tol;
    diag.cg_rows_not_converged = rep.cg_rows_not_converged;
    diag.cg_converged = rep.cg_rows_not_converged == 0;
    diag.cg_max_relative_residual = rep.cg_max_relative_residual;
    if (!diag.cg_converged) {
      std::ostringstream msg;
      msg << "LLA (blockwise, CUDA): conjugate gradients did not reach cg_tol = " << co.cg_tol
          << " for " << rep.cg_rows_not_converged << " of " << p.B * p.H * p.geo.n_q
          << " queries within cg_max_iter = " << co.cg_max_iter << " (largest relative residual "
          << rep.cg_max_relative_residual
          << "); increase cg_max_iter or ridge, or use algorithm = \"direct\"";
      diag.warnings.push_back(msg.str());
    }
    detail::add_denominator_warning(diag, rep.min_relative_denominator, true);
  }
  return diag;
}

class CudaBackend final : public attention::DeviceBackend {
 public:
  attention::DeviceStatus status() const override {
    const DeviceQuery q = query_devices();
    attention::DeviceStatus s;
    s.archs = ATTNREG_CUDA_ARCHS;
    s.count = q.count;
    s.name = q.name;
    s.error = q.error;
    return s;
  }
  attention::Diagnostics forward(const attention::View<const float>& Q,
                                 const attention::View<const float>& K,
                                 const attention::View<const float>& V,
                                 const attention::View<float>& out,
                                 const attention::Options& opt) const override {
    return forward_on_gpu<float>(Q, K, V, out, opt);
  }
  attention::Diagnostics forward(const attention::View<const double>& Q,
                                 const attention::View<const double>& K,
                                 const attention::View<const double>& V,
                                 const attention::View<double>& out,
                                 const attention::Options& opt) const override {
    return forward_on_gpu<double>(Q, K, V, out, opt);
  }
};

const CudaBackend& instance() {
  static const CudaBackend b;
  return b;
}

// Linking this file in is what makes device = "cuda" reach the kernels.
const bool registered =
    (attention::register_backend(attention::Device::cuda, &instance()), true);

}  // namespace

const attention::DeviceBackend& backend() {
  (void)registered;
  return instance();
}

}  // namespace cuda
}  // namespace attnreg
