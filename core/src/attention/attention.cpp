// attnreg attention engine: argument checks, option resolution, dispatch and diagnostics.
// The numerical paths live in attention_blockwise.cpp (softmax/NW and FlashLLA, input
// precision) and attention_reference.cpp (naive and direct LLA, linear attention, Mesa,
// dense weights; float64).
#include <cmath>
#include <sstream>

#include "attnreg/detail/attention_internal.hpp"

#if !defined(ATTNREG_R_BUILD) && !defined(ATTNREG_NO_SGEMM) && defined(ARMA_USE_BLAS)
#define ATTNREG_FLOAT_BLAS 1
#endif

namespace attnreg {
namespace attention {
namespace detail {

namespace {

template <class T>
const char* dtype_name() {
  return sizeof(T) == 4 ? "float32" : "float64";
}

std::string shape_str(const std::int64_t s[4]) {
  std::ostringstream o;
  o << "(" << s[0] << ", " << s[1] << ", " << s[2] << ", " << s[3] << ")";
  return o.str();
}

template <class T>
void check_view(const View<T>& v, const char* name) {
  for (int i = 0; i < 4; ++i) {
    if (v.shape[i] < 1) {
      static const char* axes[4] = {"batch", "heads", "seq", "dim"};
      std::ostringstream msg;
      msg << "shape " << shape_str(v.shape) << " has " << axes[i] << " = " << v.shape[i]
          << " (every extent must be >= 1; pass at least one row and one column)";
      check::require(false, name, msg.str());
    }
  }
  check::require(v.data != nullptr, name, "data pointer is null (pass an allocated array)");
  check::require(v.shape[2] < (std::int64_t(1) << 40) && v.shape[3] < (std::int64_t(1) << 24),
                 name, "too large (seq must be < 2^40 and dim < 2^24)");
}

template <class T>
void check_finite_impl(const View<const T>& v, const char* name) {
  for (i64 b = 0; b < v.shape[0]; ++b)
    for (i64 h = 0; h < v.shape[1]; ++h)
      for (i64 s = 0; s < v.shape[2]; ++s) {
        const T* row = v.data + b * v.strides[0] + h * v.strides[1] + s * v.strides[2];
        for (i64 c = 0; c < v.shape[3]; ++c) {
          const T x = row[c * v.strides[3]];
          if (!std::isfinite(x)) {
            std::ostringstream msg;
            msg << "contains " << (std::isnan(x) ? "NaN" : "Inf") << " at (batch " << b + 1
                << ", head " << h + 1 << ", position " << s + 1 << ", column " << c + 1
                << ") (remove or impute missing/infinite values first)";
            check::require(false, name, msg.str());
          }
        }
      }
}

bool is_set(double x) { return !std::isnan(x); }

}  // namespace

template <class T>
void check_finite(const View<const T>& v, const char* name) {
  check_finite_impl(v, name);
}
template void check_finite<float>(const View<const float>&, const char*);
template void check_finite<double>(const View<const double>&, const char*);

std::string where(i64 b, i64 h, i64 i) {
  std::ostringstream o;
  o << "(batch " << b + 1 << ", head " << h + 1 << ", query " << i + 1 << ")";
  return o.str();
}

std::string to_sci(double v) {
  std::ostringstream o;
  o << v;
  return o.str();
}

namespace {
// The causal mask and window, checked against the query/key geometry.
void apply_geometry(Plan& p, const Options& opt) {
  p.geo.causal = opt.causal;
  check::require(opt.window >= 0, "window",
                 "must be >= 0 (0 = no window, w = the last w positions), got " +
                     std::to_string(opt.window));
  p.geo.window = opt.window;
  if (opt.causal && p.geo.n_q > p.geo.n_k) {
    std::ostringstream msg;
    msg << "needs n_q <= n_k (queries are aligned to the last n_q keys), got n_q = "
        << p.geo.n_q << " > n_k = " << p.geo.n_k
        << " (use causal = FALSE for cross-attention, or pass all keys)";
    check::require(false, "causal", msg.str());
  }
  for (i64 i = 0; i < p.geo.n_q; ++i) {
    if (p.geo.count(i) == 0) {
      std::ostringstream msg;
      msg << "query " << i + 1 << " sees no key with window = " << opt.window
          << ", n_q = " << p.geo.n_q << ", n_k = " << p.geo.n_k
          << " (widen the window or pass more keys)";
      check::require(false, "window", msg.str());
    }
  }
}

// The kernel's scale: a = scale (dot-product logits) or a = 1 / h^2 (Gaussian logits).
void apply_kernel_scale(Plan& p, const Options& opt, bool is_float) {
  p.method = opt.method;
  p.algorithm = opt.lla_algorithm;
  const bool dot_kernel = opt.method == Method::softmax ||
                          (opt.method == Method::lla && opt.lla_kernel == LLAKernel::dot);
  const bool rbf_kernel = opt.method == Method::nw_rbf ||
                          (opt.method == Method::lla && opt.lla_kernel == LLAKernel::rbf);
  const std::string mname = to_string(opt.method);
  if (is_set(opt.scale)) {
    check::require(std::isfinite(opt.scale) && opt.scale > 0, "scale",
                   "must be > 0 and finite, got " + std::to_string(opt.scale));
    check::require(dot_kernel, "scale",
                   "is not used by " + mname +
                       (rbf_kernel ? " (the Gaussian kernel takes bandwidth)" : ""));
  }
  if (is_set(opt.bandwidth)) {
    check::require(std::isfinite(opt.bandwidth) && opt.bandwidth > 0, "bandwidth",
                   "must be > 0 and finite, got " + std::to_string(opt.bandwidth) +
                       " (pass a positive number)");
    check::require(dot_kernel || rbf_kernel, "bandwidth", "is not used by " + mname);
  }
  check::require(!(is_set(opt.scale) && is_set(opt.bandwidth)), "scale",
                 "give scale or bandwidth, not both (scale = 1 / bandwidth)");
  const double d = static_cast<double>(p.d);
  if (dot_kernel) {
    p.rbf = false;
    p.a = is_set(opt.scale) ? opt.scale
                            : (is_set(opt.bandwidth) ? 1.0 / opt.bandwidth : 1.0 / std::sqrt(d));
  } else if (rbf_kernel) {
    p.rbf = true;
    const double h = is_set(opt.bandwidth) ? opt.bandwidth : std::pow(d, 0.25);
    p.a = 1.0 / (h * h);
    // Check in the arithmetic's precision: the kernels use a as T, so for float32 inputs
    // 1 / h^2 must fit a float (h >~ 1e-19), not just a double.
    check::require(std::isfinite(p.a) && (!is_float || std::isfinite(static_cast<float>(p.a))),
                   "bandwidth",
                   "is too small: 1 / bandwidth^2 overflows " +
                       std::string(is_float ? "float32" : "float64") + " (got bandwidth = " +
                       to_sci(h) + "; pass a larger bandwidth" +
                       (is_float ? " or float64 inputs)" : ")"));
  }
  if (dot_kernel && is_float) {
    check::require(std::isfinite(static_cast<float>(p.a)), is_set(opt.scale) ? "scale" : "bandwidth",
                   std::string("overflows float32 as a scale (scale = 1 / bandwidth = ") +
                       to_sci(p.a) + "; pass a smaller scale or float64 inputs)");
  }
}

// The ridge of the local solve (lla, mesa): one value, or one per query position.
void apply_ridge(Plan& p, const Options& opt) {
  const std::string mname = to_string(opt.method);
  const bool uses_ridge = opt.method == Method::lla || opt.method == Method::mesa;
  check::require(std::isfinite(opt.ridge) && opt.ridge >= 0, "ridge",
                 "must be >= 0 and finite, got " + std::to_string(opt.ridge));
  if (!opt.ridge_per_query.empty()) {
    const i64 n = static_cast<i64>(opt.ridge_per_query.size());
    if (n != p.geo.n_q && n != p.B * p.H * p.geo.n_q) {
      std::ostringstream msg;
      msg << "has length " << n << "; pass one value per query position (" << p.geo.n_q
          << ") or per (batch, head, query) (" << p.B * p.H * p.geo.n_q << ")";
      check::require(false, "ridge", msg.str());
    }
    for (i64 i = 0; i < n; ++i) {
      const double r = opt.ridge_per_query[i];
      if (!(std::isfinite(r) && r >= 0)) {
        std::ostringstream msg;
        msg << "element " << i + 1 << " is " << r << " (every ridge must be >= 0 and finite)";
        check::require(false, "ridge", msg.str());
      }
    }
    p.ridge_vec = &opt.ridge_per_query;
  }
  if (!uses_ridge) {
    check::require(opt.ridge == 0 && opt.ridge_per_query.empty(), "ridge",
                   "is not used by " + mname + " (only lla and mesa take a ridge)");
  }
  p.ridge = opt.ridge;
}

// Tiling, the conjugate-gradient solver, the feature map and threads.
void apply_engine(Plan& p, const Options& opt, bool is_float) {
  check::require(opt.block_q >= 1 && opt.block_q <= 65536, "block_q",
                 "must be in [1, 65536], got " + std::to_string(opt.block_q));
  check::require(opt.block_k >= 1 && opt.block_k <= 65536, "block_k",
                 "must be in [1, 65536], got " + std::to_string(opt.block_k));
  p.Br = opt.block_q;
  p.Bc = opt.block_k;
  if (is_set(opt.cg_tol)) {
    check::require(std::isfinite(opt.cg_tol) && opt.cg_tol >= 0, "cg_tol",
                   "must be >= 0 and finite, got " + std::to_string(opt.cg_tol));
    p.cg_tol = opt.cg_tol;
  } else {
    p.cg_tol = is_float ? 1e-6 : 1e-12;
  }
  check::require(opt.cg_max_iter >= 0, "cg_max_iter",
                 "must be >= 0 (0 = 2 d + 10), got " + std::to_string(opt.cg_max_iter));
  p.cg_max_iter = opt.cg_max_iter > 0 ? opt.cg_max_iter : static_cast<int>(2 * p.d + 10);

  p.feature_map = opt.feature_map;
  p.normalize = opt.normalize;
  p.feature_tau = opt.feature_tau;
  if (opt.method == Method::linear && opt.feature_map == FeatureMap::epanechnikov) {
    check::require(std::isfinite(opt.feature_tau) && opt.feature_tau >= 2, "feature_tau",
                   "must be >= 2 for the Epanechnikov feature map (sqrt(1 - 2/tau) must be "
                   "real; tau >= 4 makes it Epanechnikov NW on unit-norm inputs), got " +
                       std::to_string(opt.feature_tau));
  }
  p.n_threads = resolve_threads(opt.n_threads);
}
}  // namespace

void apply_options(Plan& p, const Options& opt, bool is_float) {
  apply_geometry(p, opt);
  apply_kernel_scale(p, opt, is_float);
  apply_ridge(p, opt);
  apply_engine(p, opt, is_float);
}

template <class T>
Plan make_plan(const View<const T>& Q, const View<const T>& K, const View<const T>* V,
               const View<T>* out, const Options& opt, const char* out_name,
               i64 n_keys_total) {
  Plan p;
  check_view(Q, "Q");
  check_view(K, "K");
  if (V) check_view(*V, "V");
  if (out) check_view(*out, out_name);
  p.B = Q.shape[0];
  p.H = Q.shape[1];
  p.d = Q.shape[3];
  p.dv = V ? V->shape[3] : K.shape[2];
  auto same = [&](const char* name, const std::int64_t* s, int axis, i64 want,
                  const char* what) {
    if (s[axis] == want) return;
    std::ostringstream msg;
    msg << "shape " << shape_str(s) << " does not match Q " << shape_str(Q.shape) << ": "
        << what << " must be " << want;
    check::require(false, name, msg.str());
  };
  same("K", K.shape, 0, p.B, "batch");
  same("K", K.shape, 1, p.H, "heads");
  same("K", K.shape, 3, p.d, "dim (keys and queries live in the same space)");
  if (V) {
    same("V", V->shape, 0, p.B, "batch");
    same("V", V->shape, 1, p.H, "heads");
    if (V->shape[2] != K.shape[2]) {
      std::ostringstream msg;
      msg << "has seq = " << V->shape[2] << " but K has seq = " << K.shape[2]
          << " (pass one value row per key)";
      check::require(false, "V", msg.str());
    }
  }
  if (out) {
    const i64 want[4] = {p.B, p.H, Q.shape[2], p.dv};
    for (int i = 0; i < 4; ++i) {
      if (out->shape[i] != want[i]) {
        std::ostringstream msg;
        msg << "shape " << shape_str(out->shape) << " must be " << shape_str(want)
            << " (batch, heads, n_q, " << (V ? "dim of V" : "n_k") << ")";
        check::require(false, out_name, msg.str());
      }
    }
  }
  check_finite_impl(Q, "Q");
  check_finite_impl(K, "K");
  if (V) check_finite_impl(*V, "V");

  p.geo.n_q = Q.shape[2];
  p.geo.n_k = n_keys_total >= 0 ? n_keys_total : K.shape[2];
  apply_options(p, opt, sizeof(T) == 4);
  return p;
}

void check_ridge_rank(const Plan& p, const char* method_name) {
  for (i64 i = 0; i < p.geo.n_q; ++i) {
    const i64 n = p.geo.count(i);
    if (n >= p.d) continue;
    for (i64 b = 0; b < p.B; ++b)
      for (i64 h = 0; h < p.H; ++h)
        if (p.ridge_at(b, h, i) == 0) {
          std::ostringstream msg;
          msg << "must be > 0 for " << method_name << ": query " << i + 1 << " sees only " << n
              << " key" << (n == 1 ? "" : "s") << ", fewer than dim = " << p.d
              << ", so its Sigma is singular (early causal positions and short windows need a "
                 "ridge; pass e.g. ridge = 1e-3, or one ridge per position)";
          check::require(false, "ridge", msg.str());
        }
  }
}

void add_denominator_warning(Diagnostics& diag, double min_rel, bool is_float) {
  diag.min_relative_denominator = min_rel;
  const double thr = is_float ? 1e-4 : 1e-8;
  if (min_rel < thr) {
    std::ostringstream msg;
    msg << "LLA: the local-linear denominator (omega - mu'rho) / omega fell to " << min_rel
        << " (queries at the edge of their weighted keys: large weights of both signs, "
           "sensitive to rounding); increase ridge or the bandwidth";
    diag.warnings.push_back(msg.str());
  }
}

// ---------------------------------------------------------------- GEMM

#if defined(ARMA_USE_BLAS)
namespace {
template <class T>
void blas_gemm_rowmajor(bool transB, int m, int n, int k, T alpha, const T* A, int lda,
                        const T* B, int ldb, T beta, T* C, int ldc) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) C[static_cast<i64>(i) * ldc + j] = beta == T(0) ? T(0) : beta * C[static_cast<i64>(i) * ldc + j];
    return;
  }
  // Row-major C = A op(B) is column-major C' = op(B)' A'.
  const char ta = transB ? 'T' : 'N';
  const char tb = 'N';
  const arma::blas_int M = n, N = m, Kk = k, LDA = ldb, LDB = lda, LDC = ldc;
  arma::blas::gemm<T>(&ta, &tb, &M, &N, &Kk, &alpha, B, &LDA, A, &LDB, &beta, C, &LDC);
}
}  // namespace

void gemm_nt(int m, int n, int k, double alpha, const double* A, int lda, const double* B,
             int ldb, double beta, double* C, int ldc) {
  blas_gemm_rowmajor<double>(true, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
void gemm_nn(int m, int n, int k, double alpha, const double* A, int lda, const double* B,
             int ldb, double beta, double* C, int ldc) {
  blas_gemm_rowmajor<double>(false, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
#else
void gemm_nt(int m, int n, int k, double alpha, const double* A, int lda, const double* B,
             int ldb, double beta, double* C, int ldc) {
  tile::gemm_nt(m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
void gemm_nn(int m, int n, int k, double alpha, const double* A, int lda, const double* B,
             int ldb, double beta, double* C, int ldc) {
  tile::gemm_nn(m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
#endif

// float: BLAS sgemm where the build links a BLAS that has it. R's own reference BLAS has no
// single-precision routines and R has no float32 data, so the R build uses the portable loops.
#if defined(ATTNREG_FLOAT_BLAS)
void gemm_nt(int m, int n, int k, float alpha, const float* A, int lda, const float* B, int ldb,
             float beta, float* C, int ldc) {
  blas_gemm_rowmajor<float>(true, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
void gemm_nn(int m, int n, int k, float alpha, const float* A, int lda, const float* B, int ldb,
             float beta, float* C, int ldc) {
  blas_gemm_rowmajor<float>(false, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
#else
void gemm_nt(int m, int n, int k, float alpha, const float* A, int lda, const float* B, int ldb,
             float beta, float* C, int ldc) {
  tile::gemm_nt(m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
void gemm_nn(int m, int n, int k, float alpha, const float* A, int lda, const float* B, int ldb,
             float beta, float* C, int ldc) {
  tile::gemm_nn(m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
#endif

}  // namespace detail

// ---------------------------------------------------------------- public entry points

using detail::i64;
using detail::Plan;

template <class T>
Diagnostics forward(const View<const T>& Q, const View<const T>& K, const View<const T>& V,
                    const View<T>& out, const Options& opt) {
  Plan p = detail::make_plan<T>(Q, K, &V, &out, opt, "out");
  Diagnostics diag;
  diag.n_threads = p.n_threads;
  switch (p.method) {
    case Method::softmax:
    case Method::nw_rbf:
      diag.method = to_string(p.method);
      diag.n_query_blocks = p.B * p.H * p.n_blocks();
      detail::run_softmax_blockwise<T>(p, Q, K, V, out, diag);
      break;
    case Method::lla:
      diag.method = "lla/" + to_string(p.algorithm);
      detail::check_ridge_rank(p, "lla");
      if (p.algorithm == LLAAlgorithm::blockwise) {
        diag.n_query_blocks = p.B * p.H * p.n_blocks();
        detail::run_lla_blockwise<T>(p, Q, K, V, out, diag);
      } else if (p.algorithm == LLAAlgorithm::direct) {
        diag.n_query_blocks = p.B * p.H * p.n_blocks();
        detail::run_lla_direct<T>(p, Q, K, V, out, diag);
      } else {
        detail::run_lla_naive<T>(p, Q, K, V, out, diag);
      }
      break;
    case Method::linear:
      diag.method = "linear";
      detail::run_linear<T>(p, Q, K, V, out, diag);
      break;
    case Method::mesa:
      diag.method = "mesa";
      detail::check_ridge_rank(p, "mesa");
      detail::run_mesa<T>(p, Q, K, V, out, diag);
      break;
  }
  return diag;
}

#define ATTNREG_WRAPPER(name, m)                                                              \
  template <class T>                                                                          \
  Diagnostics name(const View<const T>& Q, const View<const T>& K, const View<const T>& V,    \
                   const View<T>& out, Options opt) {                                         \
    opt.method = Method::m;                                                                   \
    return forward<T>(Q, K, V, out, opt);                                                     \
  }
ATTNREG_WRAPPER(softmax, softmax)
ATTNREG_WRAPPER(nw_rbf, nw_rbf)
ATTNREG_WRAPPER(lla, lla)
ATTNREG_WRAPPER(linear, linear)
ATTNREG_WRAPPER(mesa, mesa)
#undef ATTNREG_WRAPPER

template <class T>
Diagnostics attention_weights(const View<const T>& Q, const View<const T>& K,
                              const View<T>& weights, const Options& opt) {
  Plan p = detail::make_plan<T>(Q, K, nullptr, &weights, opt, "weights");
  Diagnostics diag;
  diag.n_threads = p.n_threads;
  diag.method = to_string(p.method) + "/weights";
  if (p.method == Method::lla) detail::check_ridge_rank(p, "lla");
  if (p.method == Method::mesa) detail::check_ridge_rank(p, "mesa");
  std::vector<double> W;
  for (i64 b = 0; b < p.B; ++b)
    for (i64 h = 0; h < p.H; ++h) {
      detail::dense_weights<T>(p, Q, K, b, h, W);
      for (i64 i = 0; i < p.geo.n_q; ++i)
        for (i64 j = 0; j < p.geo.n_k; ++j)
          weights.at(b, h, i, j) = static_cast<T>(W[i * p.geo.n_k + j]);
    }
  return diag;
}

// ---------------------------------------------------------------- names

Method parse_method(const std::string& s, const std::string& arg) {
  if (s == "softmax") return Method::softmax;
  if (s == "nw_rbf") return Method::nw_rbf;
  if (s == "lla") return Method::lla;
  if (s == "linear") return Method::linear;
  if (s == "mesa") return Method::mesa;
  throw InvalidArgument(arg + ": unknown '" + s +
                        "' (choose softmax, nw_rbf, lla, linear or mesa)");
}

LLAAlgorithm parse_lla_algorithm(const std::string& s, const std::string& arg) {
  if (s == "naive") return LLAAlgorithm::naive;
  if (s == "direct") return LLAAlgorithm::direct;
  if (s == "blockwise") return LLAAlgorithm::blockwise;
  throw InvalidArgument(arg + ": unknown '" + s +
                        "' (choose naive, direct or blockwise)");
}

LLAKernel parse_lla_kernel(const std::string& s, const std::string& arg) {
  if (s == "dot") return LLAKernel::dot;
  if (s == "rbf" || s == "gaussian") return LLAKernel::rbf;
  throw InvalidArgument(arg + ": unknown '" + s + "' (choose dot or rbf)");
}

FeatureMap parse_feature_map(const std::string& s, const std::string& arg) {
  if (s == "elu_plus_one" || s == "elu+1" || s == "elu") return FeatureMap::elu_plus_one;
  if (s == "relu") return FeatureMap::relu;
  if (s == "identity") return FeatureMap::identity;
  if (s == "epanechnikov") return FeatureMap::epanechnikov;
  throw InvalidArgument(arg + ": unknown '" + s +
                        "' (choose elu_plus_one, relu, identity or epanechnikov)");
}

std::string to_string(Method m) {
  switch (m) {
    case Method::softmax: return "softmax";
    case Method::nw_rbf: return "nw_rbf";
    case Method::lla: return "lla";
    case Method::linear: return "linear";
    case Method::mesa: return "mesa";
  }
  return "?";
}

std::string to_string(LLAAlgorithm a) {
  switch (a) {
    case LLAAlgorithm::naive: return "naive";
    case LLAAlgorithm::direct: return "direct";
    case LLAAlgorithm::blockwise: return "blockwise";
  }
  return "?";
}

// ---------------------------------------------------------------- instantiations

#define ATTNREG_INSTANTIATE(T)                                                                \
  template Diagnostics forward<T>(const View<const T>&, const View<const T>&,                 \
                                  const View<const T>&, const View<T>&, const Options&);      \
  template Diagnostics softmax<T>(const View<const T>&, const View<const T>&,                 \
                                  const View<const T>&, const View<T>&, Options);             \
  template Diagnostics nw_rbf<T>(const View<const T>&, const View<const T>&,                  \
                                 const View<const T>&, const View<T>&, Options);              \
  template Diagnostics lla<T>(const View<const T>&, const View<const T>&,                     \
                              const View<const T>&, const View<T>&, Options);                 \
  template Diagnostics linear<T>(const View<const T>&, const View<const T>&,                  \
                                 const View<const T>&, const View<T>&, Options);              \
  template Diagnostics mesa<T>(const View<const T>&, const View<const T>&,                    \
                               const View<const T>&, const View<T>&, Options);                \
  template Diagnostics attention_weights<T>(const View<const T>&, const View<const T>&,       \
                                            const View<T>&, const Options&);                  \
  template detail::Plan detail::make_plan<T>(const View<const T>&, const View<const T>&,      \
                                             const View<const T>*, const View<T>*,            \
                                             const Options&, const char*, i64);
ATTNREG_INSTANTIATE(float)
ATTNREG_INSTANTIATE(double)
#undef ATTNREG_INSTANTIATE

}  // namespace attention
}  // namespace attnreg
