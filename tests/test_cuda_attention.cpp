// GPU tests of the CUDA attention kernels (cuda/): run when attnreg was built with CUDA and a
// GPU is visible (build_info().gpu_count > 0), and skip with the reason otherwise. Every run
// starts from outputs poisoned with NaN, so an element the kernels fail to write fails the
// comparison. The reference is the CPU engine's float64 naive LLA / softmax on the very inputs
// the GPU saw (after rounding to float32 / float16 / bfloat16). The same kernels also run on
// the CPU under the thread-block emulator (cuda/testing/test_lla_tile_cuda_math.cpp), in every build.
//
// Bounds: ||out - ref|| / ||ref|| < 1e-4 for float32 LLA (float32 accumulation over d <= 128
// terms per dot product and the float32 CG solve), 1e-5 for float32
// softmax / NW; tensor cores with 16-bit inputs: 1e-2 for bfloat16 and 2e-3 for float16 (the
// output alone is rounded to the input type, unit roundoff 2^-8 and 2^-11; the rest is
// float32 accumulation in the tensor cores' order).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "attnreg/attention/attention.hpp"
#include "attnreg/attention/attention_device.hpp"
#include "attnreg/base/build_info.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/attention/lla_tile.hpp"

#if defined(ATTNREG_WITH_CUDA) && defined(ATTNREG_CUDA_EMULATED_BACKEND)
// CPU check of this file with the kernels emulated (see cuda/testing/cta_emulator.hpp).
#include "attnreg/cuda/attention_cuda.hpp"
#include "cuda_runtime_emulation.hpp"
#elif defined(ATTNREG_WITH_CUDA)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "attnreg/cuda/attention_cuda.hpp"
#endif

namespace {

namespace at = attnreg::attention;
using i64 = std::int64_t;

/// Empty when a GPU can run the kernels; otherwise why not.
std::string gpu_skip_reason() {
  const attnreg::BuildInfo b = attnreg::build_info();
  if (!b.cuda_compiled) return "attnreg was built without the CUDA backend (ATTNREG_CUDA=OFF or no nvcc)";
  if (b.gpu_count == 0) return b.cuda_error.empty() ? "no CUDA device found" : b.cuda_error;
  return "";
}

#define ATTNREG_REQUIRE_GPU()                                      \
  do {                                                             \
    const std::string why_ = gpu_skip_reason();                    \
    if (!why_.empty()) GTEST_SKIP() << "no GPU visible: " << why_; \
  } while (0)

struct Shape {
  int B, H;
  i64 nq, nk;
  int d, dv;
};

std::vector<double> randn(std::size_t n, std::mt19937_64& g, double sd) {
  std::normal_distribution<double> nd(0.0, sd);
  std::vector<double> x(n);
  for (auto& v : x) v = nd(g);
  return x;
}

double rel_fro(const std::vector<double>& a, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - ref[i]) * (a[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return std::sqrt(num / den);
}

/// float64 naive reference of the CPU engine.
std::vector<double> reference(const Shape& s, const std::vector<double>& q,
                              const std::vector<double>& k, const std::vector<double>& v,
                              at::Options o) {
  if (o.method == at::Method::lla) o.lla_algorithm = at::LLAAlgorithm::naive;
  std::vector<double> out(static_cast<std::size_t>(s.B * s.H * s.nq * s.dv));
  at::forward<double>(at::make_view<const double>(q.data(), s.B, s.H, s.nq, s.d),
                      at::make_view<const double>(k.data(), s.B, s.H, s.nk, s.d),
                      at::make_view<const double>(v.data(), s.B, s.H, s.nk, s.dv),
                      at::make_view<double>(out.data(), s.B, s.H, s.nq, s.dv), o);
  return out;
}

struct GpuCase {
  Shape s;
  bool causal;
  i64 window;
  bool rbf;
  bool per_position_ridge;
  double ridge;
};

/// Random shapes: seq never a multiple of the block sizes, d in {16, 32, 64, 128}, causal and
/// not, windows, cross-attention (bottom-right causal alignment), per-position ridge.
std::vector<GpuCase> random_cases() {
  std::mt19937_64 g(20240601);
  std::vector<GpuCase> cases;
  const int dims[4] = {16, 32, 64, 128};
  for (int rep = 0; rep < 12; ++rep) {
    GpuCase c;
    c.s.d = dims[rep % 4];
    c.s.dv = 1 + static_cast<int>(g() % static_cast<unsigned>(c.s.d));
    c.s.B = 1 + static_cast<int>(g() % 2);
    c.s.H = 1 + static_cast<int>(g() % 3);
    c.s.nk = 65 + static_cast<i64>(g() % 200);
    if (c.s.nk % 32 == 0) ++c.s.nk;
    c.causal = (rep / 4) % 2 == 0;
    const bool cross = rep % 3 == 1;
    c.s.nq = cross ? 33 + static_cast<i64>(g() % static_cast<unsigned>(c.s.nk - 33)) : c.s.nk;
    if (c.s.nq % 32 == 0) --c.s.nq;
    // Windows narrower than the sequence (and at d = 128 narrower than d: the ridge keeps
    // Sigma positive definite).
    c.window = rep % 5 == 2 || rep % 5 == 4 ? c.s.d / 2 + 8 + static_cast<i64>(g() % 48) : 0;
    c.rbf = rep % 2 == 1;
    c.per_position_ridge = rep % 4 == 3;
    c.ridge = c.s.d >= 64 ? 0.4 : 0.15;
    cases.push_back(c);
  }
  return cases;
}

at::Options lla_options(const GpuCase& c, at::LLAAlgorithm alg, std::vector<double>* ridge) {
  at::Options o;
  o.method = at::Method::lla;
  o.lla_algorithm = alg;
  o.lla_kernel = c.rbf ? at::LLAKernel::rbf : at::LLAKernel::dot;
  o.causal = c.causal;
  o.window = c.window;
  o.ridge = c.ridge;
  if (c.per_position_ridge) {
    ridge->clear();
    for (i64 i = 0; i < c.s.nq; ++i) ridge->push_back(c.ridge * (1.0 + 0.5 * std::sin(0.3 * i)));
    o.ridge_per_query = *ridge;
  }
  return o;
}

/// The public entry point on float32 arrays: poisoned output, GPU run, diagnostics.
std::vector<double> run_device_float(const GpuCase& c, const std::vector<double>& q,
                                     const std::vector<double>& k, const std::vector<double>& v,
                                     const at::Options& o, at::Diagnostics* diag) {
  const Shape& s = c.s;
  std::vector<float> qf(q.begin(), q.end()), kf(k.begin(), k.end()), vf(v.begin(), v.end());
  std::vector<float> out(static_cast<std::size_t>(s.B * s.H * s.nq * s.dv),
                         std::numeric_limits<float>::quiet_NaN());
  *diag = at::forward<float>(at::make_view<const float>(qf.data(), s.B, s.H, s.nq, s.d),
                             at::make_view<const float>(kf.data(), s.B, s.H, s.nk, s.d),
                             at::make_view<const float>(vf.data(), s.B, s.H, s.nk, s.dv),
                             at::make_view<float>(out.data(), s.B, s.H, s.nq, s.dv), o,
                             at::Device::cuda);
  std::vector<double> r(out.begin(), out.end());
  for (double x : r) EXPECT_TRUE(std::isfinite(x)) << "an output element was not written";
  return r;
}

/// Inputs rounded to float32 (the reference sees exactly what the GPU sees).
void make_inputs(const GpuCase& c, unsigned seed, std::vector<double>& q, std::vector<double>& k,
                 std::vector<double>& v) {
  std::mt19937_64 g(seed);
  const Shape& s = c.s;
  q = randn(static_cast<std::size_t>(s.B * s.H * s.nq * s.d), g, 0.3);
  k = randn(static_cast<std::size_t>(s.B * s.H * s.nk * s.d), g, 0.3);
  v = randn(static_cast<std::size_t>(s.B * s.H * s.nk * s.dv), g, 1.0);
  for (auto* x : {&q, &k, &v})
    for (auto& e : *x) e = static_cast<float>(e);
}

// ================================================================== float32 through the core

TEST(CudaAttention, LLABlockwiseFloat32RandomShapesWithin1e4OfFloat64Naive) {
  ATTNREG_REQUIRE_GPU();
  const auto cases = random_cases();
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    const GpuCase& c = cases[ci];
    std::vector<double> q, k, v, ridge;
    make_inputs(c, static_cast<unsigned>(100 + ci), q, k, v);
    const at::Options o = lla_options(c, at::LLAAlgorithm::blockwise, &ridge);
    at::Diagnostics dg;
    const auto got = run_device_float(c, q, k, v, o, &dg);
    const auto ref = reference(c.s, q, k, v, o);
    const std::string what = "case " + std::to_string(ci) + ": B " + std::to_string(c.s.B) +
                             " H " + std::to_string(c.s.H) + " nq " + std::to_string(c.s.nq) +
                             " nk " + std::to_string(c.s.nk) + " d " + std::to_string(c.s.d) +
                             " dv " + std::to_string(c.s.dv) + (c.causal ? " causal" : "") +
                             " window " + std::to_string(c.window) + (c.rbf ? " rbf" : " dot");
    EXPECT_LT(rel_fro(got, ref), 1e-4) << what;
    EXPECT_EQ(dg.method, "lla/blockwise/cuda") << what;
    EXPECT_TRUE(dg.cg_converged) << what << ": residual " << dg.cg_max_relative_residual;
    EXPECT_GT(dg.cg_max_iterations, 0) << what;
    EXPECT_LT(dg.cg_max_iterations, 2 * c.s.d + 10) << what << ": no early exit";
    EXPECT_FALSE(dg.cg_iterations.empty()) << what;
  }
}

TEST(CudaAttention, LLADirectFloat32Within1e4OfFloat64Naive) {
  ATTNREG_REQUIRE_GPU();
  for (const GpuCase& c0 : random_cases()) {
    if (c0.s.d > 32 || c0.s.dv > 32) continue;
    std::vector<double> q, k, v, ridge;
    make_inputs(c0, 7, q, k, v);
    const at::Options o = lla_options(c0, at::LLAAlgorithm::direct, &ridge);
    at::Diagnostics dg;
    const auto got = run_device_float(c0, q, k, v, o, &dg);
    EXPECT_LT(rel_fro(got, reference(c0.s, q, k, v, o)), 1e-4) << "d " << c0.s.d;
    EXPECT_EQ(dg.method, "lla/direct/cuda");
  }
}

TEST(CudaAttention, SoftmaxAndNWFloat32Within1e5OfFloat64) {
  ATTNREG_REQUIRE_GPU();
  for (const GpuCase& c : random_cases()) {
    std::vector<double> q, k, v;
    make_inputs(c, 11, q, k, v);
    at::Options o;
    o.method = c.rbf ? at::Method::nw_rbf : at::Method::softmax;
    o.causal = c.causal;
    o.window = c.window;
    at::Diagnostics dg;
    const auto got = run_device_float(c, q, k, v, o, &dg);
    EXPECT_LT(rel_fro(got, reference(c.s, q, k, v, o)), 1e-5) << "d " << c.s.d;
  }
}

TEST(CudaAttention, Float64AndStridedViewsAreConvertedAndPacked) {
  ATTNREG_REQUIRE_GPU();
  // Column-major (R-style) float64 matrices: packed into float32 on the way in and out.
  const i64 n = 97;
  const int d = 24;
  std::mt19937_64 g(5);
  auto q = randn(n * d, g, 0.3), k = randn(n * d, g, 0.3), v = randn(n * 5, g, 1.0);
  for (auto* x : {&q, &k, &v})
    for (auto& e : *x) e = static_cast<float>(e);
  at::Options o;
  o.method = at::Method::lla;
  o.ridge = 0.1;
  o.causal = true;
  std::vector<double> out(n * 5, std::numeric_limits<double>::quiet_NaN()), ref(n * 5);
  const at::Diagnostics dg = at::forward<double>(
      at::col_major_matrix_view<const double>(q.data(), n, d),
      at::col_major_matrix_view<const double>(k.data(), n, d),
      at::col_major_matrix_view<const double>(v.data(), n, 5),
      at::col_major_matrix_view<double>(out.data(), n, 5), o, at::Device::cuda);
  o.lla_algorithm = at::LLAAlgorithm::naive;
  at::forward<double>(at::col_major_matrix_view<const double>(q.data(), n, d),
                      at::col_major_matrix_view<const double>(k.data(), n, d),
                      at::col_major_matrix_view<const double>(v.data(), n, 5),
                      at::col_major_matrix_view<double>(ref.data(), n, 5), o);
  EXPECT_LT(rel_fro(out, ref), 1e-4);
  EXPECT_EQ(dg.method, "lla/blockwise/cuda-float32");
}

TEST(CudaAttention, UnsupportedRequestsFailClearly) {
  ATTNREG_REQUIRE_GPU();
  std::vector<float> x(64 * 200, 0.5f), out(64 * 200);
  auto cv = [&](i64 n, i64 d) { return at::make_view<const float>(x.data(), 1, 1, n, d); };
  at::Options o;
  o.method = at::Method::linear;
  EXPECT_THROW(at::forward<float>(cv(64, 8), cv(64, 8), cv(64, 8),
                                  at::make_view<float>(out.data(), 1, 1, 64, 8), o,
                                  at::Device::cuda),
               attnreg::InvalidArgument);
  o.method = at::Method::lla;
  o.lla_algorithm = at::LLAAlgorithm::naive;
  o.ridge = 0.1;
  EXPECT_THROW(at::forward<float>(cv(64, 8), cv(64, 8), cv(64, 8),
                                  at::make_view<float>(out.data(), 1, 1, 64, 8), o,
                                  at::Device::cuda),
               attnreg::InvalidArgument);
  o.lla_algorithm = at::LLAAlgorithm::blockwise;
  try {
    at::forward<float>(cv(40, 200), cv(40, 200), cv(40, 8),
                       at::make_view<float>(out.data(), 1, 1, 40, 8), o, at::Device::cuda);
    ADD_FAILURE() << "d = 200 accepted";
  } catch (const attnreg::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("128"), std::string::npos) << e.what();
  }
  o.lla_algorithm = at::LLAAlgorithm::direct;
  EXPECT_THROW(at::forward<float>(cv(40, 48), cv(40, 48), cv(40, 8),
                                  at::make_view<float>(out.data(), 1, 1, 40, 8), o,
                                  at::Device::cuda),
               attnreg::InvalidArgument);
}

// ================================================================== the launcher, device memory

#ifdef ATTNREG_WITH_CUDA
namespace cu = attnreg::cuda;

template <class T>
struct DeviceArray {
  T* p = nullptr;
  std::size_t n = 0;
  explicit DeviceArray(std::size_t n_) : n(n_) {
    EXPECT_EQ(cudaMalloc(&p, n * sizeof(T)), cudaSuccess);
  }
  ~DeviceArray() { cudaFree(p); }
  void put(const std::vector<T>& h) {
    EXPECT_EQ(cudaMemcpy(p, h.data(), n * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  }
  std::vector<T> get() const {
    std::vector<T> h(n);
    EXPECT_EQ(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return h;
  }
  void poison() { EXPECT_EQ(cudaMemset(p, 0xFF, n * sizeof(T)), cudaSuccess); }
};

float to_f(float x) { return x; }
float to_f(__half x) { return __half2float(x); }
float to_f(__nv_bfloat16 x) { return __bfloat162float(x); }
template <class E>
E from_f(float x);
template <>
__half from_f<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__nv_bfloat16 from_f<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}
template <>
float from_f<float>(float x) {
  return x;
}

/// One forward through cuda::forward on device memory, inputs rounded to E, output poisoned.
template <class E>
double device_run(const GpuCase& c, cu::Kind kind, cu::DType dtype, unsigned seed,
                  std::vector<float>* rho_out = nullptr, std::vector<double>* qd_out = nullptr,
                  std::vector<double>* kd_out = nullptr) {
  const Shape& s = c.s;
  std::vector<double> q, k, v;
  make_inputs(c, seed, q, k, v);
  std::vector<E> qe(q.size()), ke(k.size()), ve(v.size());
  for (std::size_t i = 0; i < q.size(); ++i) q[i] = to_f(qe[i] = from_f<E>(static_cast<float>(q[i])));
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = to_f(ke[i] = from_f<E>(static_cast<float>(k[i])));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = to_f(ve[i] = from_f<E>(static_cast<float>(v[i])));
  DeviceArray<E> dq(qe.size()), dk(ke.size()), dv(ve.size());
  DeviceArray<E> dout(static_cast<std::size_t>(s.B * s.H * s.nq * s.dv));
  DeviceArray<float> drho(static_cast<std::size_t>(s.B * s.H * s.nq * s.d));
  DeviceArray<float> ddelta(static_cast<std::size_t>(s.B * s.H * s.nq));
  dq.put(qe);
  dk.put(ke);
  dv.put(ve);
  dout.poison();
  drho.poison();
  ddelta.poison();
  cu::Shape cs;
  cs.batch = s.B, cs.heads = s.H, cs.n_q = s.nq, cs.n_k = s.nk, cs.d = s.d, cs.dv = s.dv;
  cu::ForwardOptions fo;
  fo.kind = kind;
  fo.rbf = c.rbf;
  const double h = c.rbf ? std::pow(double(s.d), 0.25) : std::sqrt(double(s.d));
  fo.scale = c.rbf ? 1.0 / (h * h) : 1.0 / h;
  fo.causal = c.causal;
  fo.window = c.window;
  at::Options o;
  o.causal = c.causal;
  o.window = c.window;
  o.bandwidth = h;
  if (kind == cu::Kind::softmax) {
    o.method = c.rbf ? at::Method::nw_rbf : at::Method::softmax;
    if (!c.rbf) {
      o.bandwidth = std::numeric_limits<double>::quiet_NaN();
      o.scale = 1.0 / h;
    }
  } else {
    o.method = at::Method::lla;
    o.lla_kernel = c.rbf ? at::LLAKernel::rbf : at::LLAKernel::dot;
    o.ridge = fo.ridge = c.ridge;
  }
  cu::AuxOutputs aux;
  aux.rho = drho.p;
  aux.delta = ddelta.p;
  const cu::ForwardReport rep =
      cu::forward(dtype, cs, cu::contiguous(dq.p, cs, false, false),
                  cu::contiguous(dk.p, cs, true, false), cu::contiguous(dv.p, cs, true, true),
                  cu::contiguous_out(dout.p, cs), fo, cu::Memory::device, &aux);
  EXPECT_GT(rep.kernel_ms, 0.0);
  const std::vector<E> oe = dout.get();
  std::vector<double> got(oe.size());
  for (std::size_t i = 0; i < oe.size(); ++i) {
    got[i] = to_f(oe[i]);
    EXPECT_TRUE(std::isfinite(got[i])) << "output element " << i << " not written";
  }
  if (kind != cu::Kind::softmax) {
    for (float dl : ddelta.get()) EXPECT_GT(dl, 0.0f);
    if (rho_out) *rho_out = drho.get();
  }
  if (qd_out) *qd_out = q;
  if (kd_out) *kd_out = k;
  return rel_fro(got, reference(s, q, k, v, o));
}

TEST(CudaAttention, TensorCores16BitWithinDocumentedBounds) {
  ATTNREG_REQUIRE_GPU();
  const auto cases = random_cases();
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    const GpuCase& c = cases[ci];
    if (c.per_position_ridge) continue;  // covered through the core above
    EXPECT_LT(device_run<__nv_bfloat16>(c, cu::Kind::lla_blockwise, cu::DType::bfloat16, 3), 1e-2)
        << "bf16 lla case " << ci;
    EXPECT_LT(device_run<__half>(c, cu::Kind::lla_blockwise, cu::DType::float16, 3), 2e-3)
        << "fp16 lla case " << ci;
    EXPECT_LT(device_run<__nv_bfloat16>(c, cu::Kind::softmax, cu::DType::bfloat16, 4), 1e-2)
        << "bf16 softmax case " << ci;
    EXPECT_LT(device_run<float>(c, cu::Kind::lla_blockwise, cu::DType::float32, 5), 1e-4)
        << "float32 device-memory case " << ci;
  }
}

TEST(CudaAttention, StoredRhoSolvesTheLocalSystem) {
  ATTNREG_REQUIRE_GPU();
  GpuCase c{{1, 1, 90, 90, 16, 8}, true, 0, false, false, 0.2};
  std::vector<float> rho;
  std::vector<double> q, k;
  EXPECT_LT(device_run<float>(c, cu::Kind::lla_blockwise, cu::DType::float32, 9, &rho, &q, &k),
            1e-4);
  const int d = c.s.d;
  const double h = std::sqrt(double(d));
  for (i64 i : {i64(0), i64(20), i64(89)}) {
    // Sigma and mu from the normalised weights (eqs. 7-8), float64, explicit centring.
    std::vector<double> mu(d, 0.0), S(d * d, 0.0);
    double mx = -INFINITY, omega = 0;
    for (i64 j = 0; j <= i; ++j) mx = std::max(mx, attnreg::tile::dot(&q[i * d], &k[j * d], d) / h);
    for (i64 j = 0; j <= i; ++j) {
      const double w = std::exp(attnreg::tile::dot(&q[i * d], &k[j * d], d) / h - mx);
      omega += w;
      for (int a = 0; a < d; ++a) {
        mu[a] += w * (k[j * d + a] - q[i * d + a]);
        for (int b = 0; b < d; ++b)
          S[a * d + b] += w * (k[j * d + a] - q[i * d + a]) * (k[j * d + b] - q[i * d + b]);
      }
    }
    for (int a = 0; a < d; ++a) S[a * d + a] += c.ridge * omega;
    ASSERT_TRUE(attnreg::tile::cholesky(S.data(), d));
    attnreg::tile::cholesky_solve(S.data(), d, mu.data());
    double num = 0, den = 0;
    for (int a = 0; a < d; ++a) {
      num += (rho[i * d + a] - mu[a]) * (rho[i * d + a] - mu[a]);
      den += mu[a] * mu[a];
    }
    EXPECT_LT(std::sqrt(num / den), 1e-4) << "query " << i;
  }
}

TEST(CudaAttention, LauncherRejectsHostPointersAsDeviceMemory) {
  ATTNREG_REQUIRE_GPU();
  std::vector<float> host(64 * 16, 0.1f);
  cu::Shape cs;
  cs.n_q = cs.n_k = 64;
  cs.d = cs.dv = 16;
  cu::ForwardOptions fo;
  EXPECT_THROW(cu::forward(cu::DType::float32, cs, cu::contiguous(host.data(), cs, false, false),
                           cu::contiguous(host.data(), cs, true, false),
                           cu::contiguous(host.data(), cs, true, true),
                           cu::contiguous_out(host.data(), cs), fo, cu::Memory::device),
               cu::CudaError);
  // The kernels' API throws the backend's own error type (attnreg/cuda/error.hpp); the
  // adapter (cuda/src/backend.cpp) turns it into the core's.
  try {
    cu::forward(cu::DType::float32, cs, cu::contiguous(host.data(), cs, false, false),
                cu::contiguous(host.data(), cs, true, false),
                cu::contiguous(host.data(), cs, true, true), cu::contiguous_out(host.data(), cs),
                fo, cu::Memory::device);
  } catch (const cu::CudaError& e) {
    EXPECT_EQ(e.kind(), cu::CudaError::Kind::invalid_argument) << e.what();
  }
}
#endif  // ATTNREG_WITH_CUDA

// ================================================================== without a GPU

TEST(CudaAttention, DeviceCudaWithoutAGpuFailsWithAClearMessage) {
  const std::string why = gpu_skip_reason();
  if (why.empty()) GTEST_SKIP() << "a GPU is visible: the failure path cannot be exercised here";
  std::vector<float> x(16 * 4, 0.25f), out(16 * 4);
  const auto v = at::make_view<const float>(x.data(), 1, 1, 16, 4);
  at::Options o;
  o.method = at::Method::lla;
  o.ridge = 0.1;
  try {
    at::forward<float>(v, v, v, at::make_view<float>(out.data(), 1, 1, 16, 4), o,
                       at::Device::cuda);
    ADD_FAILURE() << "device = cuda ran without a usable GPU";
  } catch (const attnreg::InvalidArgument& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("device: ", 0), 0u) << msg;
    const bool compiled = attnreg::build_info().cuda_compiled;
    EXPECT_NE(msg.find(compiled ? "no GPU is visible" : "built without CUDA support"),
              std::string::npos)
        << msg;
  }
  // The CPU device is unaffected.
  EXPECT_NO_THROW(at::forward<float>(v, v, v, at::make_view<float>(out.data(), 1, 1, 16, 4), o,
                                     at::Device::cpu));
  EXPECT_EQ(at::parse_device("cuda"), at::Device::cuda);
  EXPECT_EQ(at::parse_device("cpu"), at::Device::cpu);
  EXPECT_THROW(at::parse_device("tpu"), attnreg::InvalidArgument);
}

}  // namespace
