// attnreg attention engine: the device switch (attention_device.hpp). device = "cpu" is
// forward() of attention.cpp; device = "cuda" validates with the CPU engine's own plan (same
// checks, same messages), converts to float32, runs the CUDA kernels (cuda/attention_cuda.hpp)
// and turns their report into Diagnostics. Without ATTNREG_WITH_CUDA (the R package, CPU-only
// builds) the CUDA branch is require_cuda()'s clear error.
#include "attnreg/attention/attention_device.hpp"

#include <cmath>
#include <sstream>

#include "attnreg/base/build_info.hpp"
#include "attnreg/detail/attention_internal.hpp"
#include "attnreg/base/error.hpp"

#ifdef ATTNREG_WITH_CUDA
#include "attention_cuda.hpp"
#endif

namespace attnreg {
namespace attention {

namespace device_detail {
void throw_invalid_argument(const std::string& msg) { throw InvalidArgument(msg); }
void throw_numerical_error(const std::string& msg) { throw NumericalError(msg); }
}  // namespace device_detail

Device parse_device(const std::string& s, const std::string& arg) {
  if (s == "cpu") return Device::cpu;
  if (s == "cuda" || s == "gpu") return Device::cuda;
  throw InvalidArgument(arg + ": unknown '" + s + "' (choose cpu or cuda)");
}

std::string to_string(Device d) { return d == Device::cuda ? "cuda" : "cpu"; }

namespace {

#ifdef ATTNREG_WITH_CUDA
using detail::i64;

template <class T>
Diagnostics forward_cuda(const View<const T>& Q, const View<const T>& K,
                         const View<const T>& V, const View<T>& out, const Options& opt) {
  // The CPU engine's plan: every shape, finiteness and option check, with its messages.
  const detail::Plan p = detail::make_plan<T>(Q, K, &V, &out, opt, "out");
  cuda::ForwardOptions co;
  switch (p.method) {
    case Method::softmax:
    case Method::nw_rbf:
      co.kind = cuda::Kind::softmax;
      break;
    case Method::lla:
      if (p.algorithm == LLAAlgorithm::naive) {
        throw InvalidArgument(
            "algorithm: 'naive' runs on the CPU only (it materialises the n_q x n_k weights in "
            "float64 as the reference); use 'blockwise' or 'direct' with device = 'cuda'");
      }
      detail::check_ridge_rank(p, "lla");
      co.kind = p.algorithm == LLAAlgorithm::direct ? cuda::Kind::lla_direct
                                                    : cuda::Kind::lla_blockwise;
      break;
    default:
      throw InvalidArgument("method: '" + to_string(p.method) +
                            "' has no CUDA kernel (softmax, nw_rbf and lla do); use device = "
                            "'cpu'");
  }
  require_cuda("device");
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

  cuda::Shape s;
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
  const cuda::ForwardReport rep = cuda::forward(
      cuda::DType::float32, s, cuda::contiguous(q.data(), s, false, false),
      cuda::contiguous(k.data(), s, true, false), cuda::contiguous(v.data(), s, true, true),
      cuda::contiguous_out(o.data(), s), co, cuda::Memory::host);
  for (i64 b = 0; b < p.B; ++b)
    for (i64 h = 0; h < p.H; ++h)
      detail::unpack_rows(o.data() + (b * p.H + h) * s.n_q * s.dv, s.dv, s.n_q, out, b, h, 0);

  Diagnostics diag;
  diag.n_threads = 1;
  diag.n_query_blocks = rep.n_query_blocks;
  const std::string suffix = sizeof(T) == 4 ? "/cuda" : "/cuda-float32";
  diag.method = (p.method == Method::lla ? "lla/" + to_string(p.algorithm)
                                         : to_string(p.method)) + suffix;
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
#endif

}  // namespace

template <class T>
Diagnostics forward(const View<const T>& Q, const View<const T>& K, const View<const T>& V,
                    const View<T>& out, const Options& opt, Device device) {
  if (device == Device::cpu) return forward<T>(Q, K, V, out, opt);
#ifdef ATTNREG_WITH_CUDA
  return forward_cuda<T>(Q, K, V, out, opt);
#else
  (void)Q, (void)K, (void)V, (void)out, (void)opt;
  require_cuda("device");  // throws: this build has no CUDA backend
  throw InvalidArgument("device: 'cuda' is not available in this build; use 'cpu'");
#endif
}

template Diagnostics forward<float>(const View<const float>&, const View<const float>&,
                                    const View<const float>&, const View<float>&,
                                    const Options&, Device);
template Diagnostics forward<double>(const View<const double>&, const View<const double>&,
                                     const View<const double>&, const View<double>&,
                                     const Options&, Device);

}  // namespace attention
}  // namespace attnreg
