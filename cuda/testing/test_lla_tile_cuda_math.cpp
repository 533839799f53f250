// CPU tests of the CUDA backend's math (cuda/): the lla_tile.hpp primitives the kernels added,
// and the kernels of cuda/src/lla_kernels.cuh themselves, run on the host by the thread-block
// emulator (cuda/testing/cta_emulator.hpp) and compared with the float64 naive LLA / softmax
// of the CPU engine. These run in every build (no GPU, no CUDA toolkit needed; the CMake target
// attnreg_cuda_emulator_tests): the same kernel source nvcc compiles, with threads as fibers,
// __syncthreads as a checked barrier, and nvcuda::wmma emulated. tests/test_cuda_attention.cpp runs the compiled kernels on a real GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "attnreg/attention/attention.hpp"
#include "attnreg/detail/attention_internal.hpp"
#include "attnreg/attention/lla_tile.hpp"

#define ATTNREG_CUDA_EMULATION 1
#include "static_switch.hpp"

namespace {

namespace at = attnreg::attention;
namespace tile = attnreg::tile;
namespace ce = attnreg::cuda_emulated;
namespace emu = attnreg::cuda_emu;
using attnreg::cuda::FwdParams;
using attnreg::cuda::Kind;
using i64 = std::int64_t;

// ================================================================== new lla_tile primitives

TEST(LLATileCuda, KeyRangeIsTheCpuGeometry) {
  // tile::key_range is the device copy of the CPU engine's Geometry::range: compare on every
  // query of many geometries, and check block_key_range against the brute-force union.
  int checked = 0;
  for (i64 nq : {1, 5, 17, 40})
    for (i64 nk : {1, 5, 17, 40, 64})
      for (bool causal : {false, true})
        for (i64 w : {0, 1, 3, 16}) {
          if (causal && nq > nk) continue;
          at::detail::Geometry g;
          g.n_q = nq;
          g.n_k = nk;
          g.causal = causal;
          g.window = w;
          for (i64 i = 0; i < nq; ++i) {
            i64 lo, hi;
            g.range(i, lo, hi);
            long long tlo, thi;
            tile::key_range(i, nq, nk, causal, w, tlo, thi);
            ASSERT_EQ(tlo, lo) << nq << " " << nk << " " << causal << " " << w << " " << i;
            ASSERT_EQ(thi, hi) << nq << " " << nk << " " << causal << " " << w << " " << i;
            ++checked;
          }
          for (i64 i0 = 0; i0 < nq; i0 += 7) {
            const i64 i1 = std::min(nq, i0 + 7);
            long long blo, bhi;
            tile::block_key_range(i0, i1, nq, nk, causal, w, blo, bhi);
            long long ulo = std::numeric_limits<long long>::max(), uhi = -1;
            for (i64 i = i0; i < i1; ++i) {
              long long lo, hi;
              tile::key_range(i, nq, nk, causal, w, lo, hi);
              if (hi < lo) continue;
              ulo = std::min(ulo, lo);
              uhi = std::max(uhi, hi);
            }
            if (uhi >= 0) {
              EXPECT_LE(blo, ulo);
              EXPECT_GE(bhi, uhi);
              // Not wider than needed: the first and last query's ranges bound it exactly.
              long long l0, h0, l1, h1;
              tile::key_range(i0, nq, nk, causal, w, l0, h0);
              tile::key_range(i1 - 1, nq, nk, causal, w, l1, h1);
              EXPECT_EQ(blo, std::min(l0, l1));
              EXPECT_EQ(bhi, std::max(h0, h1));
            }
          }
        }
  EXPECT_GT(checked, 1000);
  // Bottom-right alignment, spelled out: 3 queries on 8 keys, causal: keys <= 5, 6, 7.
  long long lo, hi;
  tile::key_range(0, 3, 8, true, 0, lo, hi);
  EXPECT_EQ(lo, 0);
  EXPECT_EQ(hi, 5);
  tile::key_range(2, 3, 8, true, 2, lo, hi);
  EXPECT_EQ(lo, 6);
  EXPECT_EQ(hi, 7);
}

TEST(LLATileCuda, WeightRowIsTheHadamardFactorOfAlgorithm2) {
  float u[5] = {1, -2, 3, 0.5f, 7};
  const float w[5] = {0.5f, 0, 2, -4, 1};
  tile::weight_row(u, w, 5);
  const float want[5] = {0.5f, 0, 6, -2, 7};
  for (int j = 0; j < 5; ++j) EXPECT_EQ(u[j], want[j]);
  double ud[3] = {1e300, 2, 3};
  const double wd[3] = {1e-300, 0.25, 0};
  tile::weight_row(ud, wd, 2);  // only the first n are touched
  EXPECT_DOUBLE_EQ(ud[0], 1.0);
  EXPECT_EQ(ud[1], 0.5);
  EXPECT_EQ(ud[2], 3.0);
}

// ================================================================== the emulator itself

TEST(CudaEmulator, SixteenBitConversionsRoundToNearestEven) {
  // bfloat16: 1 + 2^-8 is a tie between 1 and 1 + 2^-7 -> even (1); 1 + 3 * 2^-8 -> 1 + 2^-6.
  EXPECT_EQ(emu::bf16_to_float(emu::float_to_bf16(1.0f + std::ldexp(1.0f, -8))), 1.0f);
  EXPECT_EQ(emu::bf16_to_float(emu::float_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8))),
            1.0f + std::ldexp(1.0f, -6));
  // float16: max 65504, 65520 rounds to infinity, 2^-24 is the smallest subnormal.
  EXPECT_EQ(emu::half_to_float(emu::float_to_half(65504.0f)), 65504.0f);
  EXPECT_TRUE(std::isinf(emu::half_to_float(emu::float_to_half(65520.0f))));
  EXPECT_EQ(emu::half_to_float(emu::float_to_half(std::ldexp(1.0f, -24))), std::ldexp(1.0f, -24));
  EXPECT_EQ(emu::half_to_float(emu::float_to_half(std::ldexp(1.0f, -26))), 0.0f);
  EXPECT_EQ(emu::half_to_float(emu::float_to_half(1.0f + std::ldexp(1.0f, -11))), 1.0f);
  EXPECT_EQ(emu::half_to_float(emu::float_to_half(-1.5f)), -1.5f);
  EXPECT_TRUE(std::isnan(emu::half_to_float(emu::float_to_half(NAN))));
  // Round trip of every float16 value that is finite.
  for (unsigned b = 0; b < 0x7C00u; b += 7) {
    emu::half_t h;
    h.bits = static_cast<std::uint16_t>(b);
    EXPECT_EQ(emu::float_to_half(emu::half_to_float(h)).bits, h.bits) << b;
  }
}

// A kernel with a data race: thread t reads the slot thread t+1 writes in the same phase.
void racy_kernel(int* out) {
  ATTNREG_DYNAMIC_SMEM(smem);
  int* s = reinterpret_cast<int*>(smem);
  const int t = static_cast<int>(threadIdx.x);
  s[t] = 0;
  __syncthreads();
  s[t] = t + 1;
  out[t] = s[(t + 1) % 64];  // missing __syncthreads before this read
}

void divergent_kernel() {
  if (threadIdx.x < 32) {
    __syncthreads();
  } else {
    __syncthreads();
  }
}

TEST(CudaEmulator, CatchesRacesAndDivergentBarriers) {
  std::vector<int> fwd(64), rev(64);
  emu::launch(emu::dim3e(1), emu::dim3e(64), 256, [&] { racy_kernel(fwd.data()); },
              emu::Order::forward);
  emu::launch(emu::dim3e(1), emu::dim3e(64), 256, [&] { racy_kernel(rev.data()); },
              emu::Order::reverse);
  EXPECT_NE(fwd, rev) << "the fiber order must expose a read-before-write race";
  EXPECT_THROW(emu::launch(emu::dim3e(1), emu::dim3e(64), 0, [] { divergent_kernel(); }),
               std::runtime_error);
}

TEST(CudaEmulator, WmmaProductsAndAlignmentRules) {
  // One warp: C = A B with A row-major 16x16 bfloat16 and B col-major, against a plain loop.
  namespace wmma = nvcuda::wmma;
  std::vector<ce::bf16_t> A(16 * 24), B(16 * 24);
  std::vector<float> C(16 * 20, 0.0f), ref(16 * 16, 0.0f);
  std::mt19937 g(3);
  std::uniform_real_distribution<float> u(-1, 1);
  for (auto& x : A) x = ce::from_float<ce::bf16_t>(u(g));
  for (auto& x : B) x = ce::from_float<ce::bf16_t>(u(g));
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j)
      for (int k = 0; k < 16; ++k)
        ref[i * 16 + j] += ce::to_float(A[i * 24 + k]) * ce::to_float(B[j * 24 + k]);
  alignas(32) static ce::bf16_t As[16 * 24], Bs[16 * 24];
  alignas(32) static float Cs[16 * 20];
  std::copy(A.begin(), A.end(), As);
  std::copy(B.begin(), B.end(), Bs);
  emu::launch(emu::dim3e(1), emu::dim3e(32), 0, [&] {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, ce::bf16_t, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, ce::bf16_t, wmma::col_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
    wmma::fill_fragment(c, 0.0f);
    wmma::load_matrix_sync(a, As, 24);
    wmma::load_matrix_sync(b, Bs, 24);
    wmma::mma_sync(c, a, b, c);
    wmma::store_matrix_sync(Cs, c, 20, wmma::mem_row_major);
  });
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j) EXPECT_NEAR(Cs[i * 20 + j], ref[i * 16 + j], 1e-5);
  // A leading dimension of 12 bfloat16 (24 bytes) breaks the 16-byte rule.
  EXPECT_THROW(emu::launch(emu::dim3e(1), emu::dim3e(32), 0,
                           [&] {
                             wmma::fragment<wmma::matrix_a, 16, 16, 16, ce::bf16_t,
                                            wmma::row_major>
                                 a;
                             wmma::load_matrix_sync(a, As, 12);
                           }),
               std::runtime_error);
}

/// Records the configuration the static switch selects.
struct Probe {
  int D = 0, Br = 0, Bc = 0;
  bool TC = false;
  Kind kind = Kind::softmax;
  std::size_t smem = 0;
  template <class C>
  void operator()() {
    D = C::D;
    Br = C::Br;
    Bc = C::Bc;
    TC = C::TC;
    kind = C::kind;
    smem = ce::kern::Layout<C>::bytes;
  }
};

TEST(CudaEmulator, StaticSwitchPicksTheDocumentedConfigurations) {
  using attnreg::cuda::DType;
  std::size_t max_smem = 0;
  for (DType t : {DType::float32, DType::float16, DType::bfloat16})
    for (Kind k : {Kind::softmax, Kind::lla_blockwise, Kind::lla_direct})
      for (int d : {8, 16, 32, 33, 64, 65, 100, 128}) {
        if (k == Kind::lla_direct && d > 32) continue;
        Probe pr;
        ce::dispatch_config(t, k, d, d / 2 + 1, pr);
        EXPECT_EQ(pr.kind, k);
        EXPECT_EQ(pr.D, k == Kind::lla_direct ? 32 : ce::head_dim_bucket(d, d / 2 + 1));
        EXPECT_GE(pr.D, d);
        EXPECT_EQ(pr.TC, t != DType::float32 && k != Kind::lla_direct);
        max_smem = std::max(max_smem, pr.smem);
      }
  // Every configuration fits the 163 KiB of shared memory an sm_80 block may opt into.
  EXPECT_LE(max_smem, std::size_t(166912));
  EXPECT_EQ(ce::head_dim_bucket(129, 1), 0);
}

// ================================================================== the kernels vs float64

struct Case {
  const char* name;
  int B, H;
  i64 nq, nk;
  int d, dv;
  bool causal;
  i64 window;
  bool rbf;
  double h;          // bandwidth: a = 1/h (dot) or 1/h^2 (rbf)
  double ridge;
  int ridge_mode;    // 0 scalar, 1 one per query position, 2 one per (batch, head, query)
  bool shared_kv;    // K and V broadcast over heads (head stride 0)
  double sd;         // scale of Q and K entries
};

template <class E>
struct Run {
  std::vector<E> out;
  std::vector<float> rho, delta, omega, row_max, rel_res;
  std::vector<int> status, sweeps;
  std::vector<double> ref;  // float64 naive on the (rounded) inputs
  std::vector<double> qd, kd, vd;
  std::vector<double> ridge;
  int n_blocks = 0, Br = 0;
  long long barriers = 0;
};

template <class E>
E round_to(double x) {
  return ce::from_float<E>(static_cast<float>(x));
}

/// Draws out.size() normals times sd, rounds each to R and then to E, and keeps the rounded
/// values in float64 in d (the naive reference runs on exactly the kernel's inputs).
template <class E, class R>
void draw_rounded(std::vector<E>& out, std::vector<double>& d, double sd, std::mt19937_64& g,
                  std::normal_distribution<double>& nd) {
  d.resize(out.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = round_to<E>(ce::to_float(round_to<R>(sd * nd(g))));
    d[i] = ce::to_float(out[i]);
  }
}

/// Run configuration C on the case under the emulator, and the float64 naive CPU engine. The
/// inputs are rounded to R first (R = float32 / float16 / bfloat16; default the kernel's type).
template <class C, class R = typename C::Elem>
Run<typename C::Elem> run_case(const Case& c, emu::Order order = emu::Order::forward,
                               double cg_tol = 1e-6, int cg_max_iter = 0) {
  using E = typename C::Elem;
  Run<E> r;
  const int B = c.B, H = c.H, Hk = c.shared_kv ? 1 : c.H;
  std::mt19937_64 g(std::hash<std::string>{}(c.name));
  std::normal_distribution<double> nd(0.0, 1.0);
  std::vector<E> q(static_cast<std::size_t>(B * H * c.nq * c.d));
  std::vector<E> k(static_cast<std::size_t>(B * Hk * c.nk * c.d));
  std::vector<E> v(static_cast<std::size_t>(B * Hk * c.nk * c.dv));
  draw_rounded<E, R>(q, r.qd, c.sd, g, nd);
  draw_rounded<E, R>(k, r.kd, c.sd, g, nd);
  draw_rounded<E, R>(v, r.vd, 1.0, g, nd);
  const i64 rows = static_cast<i64>(B) * H * c.nq;
  if (c.ridge_mode == 1) {
    for (i64 i = 0; i < c.nq; ++i) r.ridge.push_back(c.ridge * (1.0 + 0.5 * std::sin(double(i))));
  } else if (c.ridge_mode == 2) {
    for (i64 i = 0; i < rows; ++i) r.ridge.push_back(c.ridge * (1.0 + 0.7 * std::cos(double(i))));
  }
  std::vector<float> ridge_f(r.ridge.begin(), r.ridge.end());
  for (std::size_t i = 0; i < ridge_f.size(); ++i) r.ridge[i] = ridge_f[i];  // what the GPU sees

  const float nanf = std::numeric_limits<float>::quiet_NaN();
  r.out.assign(static_cast<std::size_t>(rows * c.dv), ce::from_float<E>(nanf));  // poisoned
  r.rho.assign(static_cast<std::size_t>(rows * c.d), nanf);
  r.delta.assign(rows, nanf);
  r.omega.assign(rows, nanf);
  r.row_max.assign(rows, nanf);
  r.rel_res.assign(rows, nanf);
  r.status.assign(rows, -1);
  r.n_blocks = static_cast<int>((c.nq + C::Br - 1) / C::Br);
  r.Br = C::Br;
  r.sweeps.assign(static_cast<std::size_t>(B * H * r.n_blocks), -1);

  FwdParams p;
  p.q = q.data();
  p.k = k.data();
  p.v = v.data();
  p.o = r.out.data();
  p.q_rstride = c.d, p.q_hstride = c.nq * c.d, p.q_bstride = H * c.nq * c.d;
  p.k_rstride = c.d, p.k_hstride = c.shared_kv ? 0 : c.nk * c.d, p.k_bstride = Hk * c.nk * c.d;
  p.v_rstride = c.dv, p.v_hstride = c.shared_kv ? 0 : c.nk * c.dv,
  p.v_bstride = Hk * c.nk * c.dv;
  p.o_rstride = c.dv, p.o_hstride = c.nq * c.dv, p.o_bstride = H * c.nq * c.dv;
  p.batch = B;
  p.heads = H;
  p.n_q = c.nq;
  p.n_k = c.nk;
  p.d = c.d;
  p.dv = c.dv;
  p.a = static_cast<float>(c.rbf ? 1.0 / (c.h * c.h) : 1.0 / c.h);
  p.rbf = c.rbf;
  p.causal = c.causal;
  p.window = c.window;
  p.ridge = static_cast<float>(c.ridge);
  if (!ridge_f.empty()) {
    p.ridge_vec = ridge_f.data();
    p.ridge_len = static_cast<i64>(ridge_f.size());
  }
  p.cg_tol = static_cast<float>(cg_tol);
  p.cg_max_iter = cg_max_iter > 0 ? cg_max_iter : 2 * c.d + 10;
  p.n_blocks = r.n_blocks;
  p.reverse_blocks = c.causal;
  p.rho = r.rho.data();
  p.delta = r.delta.data();
  p.omega = r.omega.data();
  p.row_max = r.row_max.data();
  p.rel_res = r.rel_res.data();
  p.status = r.status.data();
  p.block_sweeps = r.sweeps.data();
  r.barriers = emu::launch(
      emu::dim3e(static_cast<unsigned>(r.n_blocks), static_cast<unsigned>(H),
                 static_cast<unsigned>(B)),
      emu::dim3e(ce::kern::kThreads), ce::kern::Layout<C>::bytes,
      [&] {
        if constexpr (C::kLLA) {
          ce::kern::lla_forward_kernel<C>(p);
        } else {
          ce::kern::softmax_forward_kernel<C>(p);
        }
      },
      order, 7);

  // The float64 naive reference of the CPU engine on exactly these inputs.
  at::Options o;
  if (C::kLLA) {
    o.method = at::Method::lla;
    o.lla_algorithm = at::LLAAlgorithm::naive;
    o.lla_kernel = c.rbf ? at::LLAKernel::rbf : at::LLAKernel::dot;
    o.bandwidth = c.h;
    o.ridge = c.ridge;
    o.ridge_per_query = r.ridge;
  } else if (c.rbf) {
    o.method = at::Method::nw_rbf;
    o.bandwidth = c.h;
  } else {
    o.method = at::Method::softmax;
    o.scale = 1.0 / c.h;
  }
  o.causal = c.causal;
  o.window = c.window;
  at::View<const double> Qv = at::make_view<const double>(r.qd.data(), B, H, c.nq, c.d);
  at::View<const double> Kv = at::make_view<const double>(r.kd.data(), B, Hk, c.nk, c.d);
  at::View<const double> Vv = at::make_view<const double>(r.vd.data(), B, Hk, c.nk, c.dv);
  Kv.shape[1] = Vv.shape[1] = H;
  if (c.shared_kv) Kv.strides[1] = Vv.strides[1] = 0;
  r.ref.assign(static_cast<std::size_t>(rows * c.dv), 0.0);
  at::forward<double>(Qv, Kv, Vv, at::make_view<double>(r.ref.data(), B, H, c.nq, c.dv), o);
  return r;
}

template <class E>
double rel_error(const Run<E>& r) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < r.ref.size(); ++i) {
    const double e = static_cast<double>(ce::to_float(r.out[i])) - r.ref[i];
    num += e * e;
    den += r.ref[i] * r.ref[i];
  }
  return std::sqrt(num / den);
}

template <class E>
void expect_all_written(const Run<E>& r, bool lla, const char* name) {
  for (std::size_t i = 0; i < r.out.size(); ++i)
    ASSERT_TRUE(std::isfinite(ce::to_float(r.out[i]))) << name << ": output " << i;
  for (std::size_t i = 0; i < r.omega.size(); ++i) {
    ASSERT_TRUE(std::isfinite(r.omega[i]) && r.omega[i] >= 1.0f) << name << ": omega " << i;
    ASSERT_TRUE(std::isfinite(r.row_max[i])) << name << ": row max " << i;
  }
  if (!lla) return;
  for (std::size_t i = 0; i < r.rho.size(); ++i)
    ASSERT_TRUE(std::isfinite(r.rho[i])) << name << ": rho " << i;
  for (std::size_t i = 0; i < r.delta.size(); ++i) {
    ASSERT_GT(r.delta[i], 0.0f) << name << ": delta " << i;
    ASSERT_EQ(r.status[i], tile::kCGConverged) << name << ": CG status of row " << i;
  }
}

// Shapes: seq never a multiple of the block sizes (32 / 64), several blocks per head, every
// head-dim bucket, causal and not, windows, cross-attention with bottom-right alignment, per
// position ridge, both kernels, and K / V broadcast over heads.
const Case kD16Causal{"d16_causal_dot", 2, 2, 150, 150, 16, 12, true, 0, false, 4.0, 0.1, 0, false, 0.25};
const Case kD32Window{"d32_window_rbf", 1, 2, 100, 100, 32, 24, false, 20, true, 3.0, 0.2, 0, false, 0.4};
const Case kD64Cross{"d64_cross_causal", 1, 2, 40, 130, 64, 64, true, 0, false, 8.0, 0.3, 1, true, 0.35};
const Case kD128{"d128_causal_perrow_ridge", 1, 1, 70, 70, 128, 96, true, 0, false, 11.3, 0.5, 2, false, 0.3};
const Case kD64WindowCausal{"d64_window_causal", 2, 1, 90, 90, 64, 40, true, 33, true, 6.0, 0.2, 0, false, 0.4};

TEST(CudaKernelEmulation, LLABlockwiseFloat32Within1e4OfFloat64Naive) {
  for (const Case& c : {kD16Causal, kD32Window}) {
    const auto r = run_case<ce::kern::Cfg<float, 32, false, Kind::lla_blockwise>>(c);
    expect_all_written(r, true, c.name);
    EXPECT_LT(rel_error(r), 1e-4) << c.name;
    int max_sweeps = 0;
    for (int s : r.sweeps) {
      EXPECT_GT(s, 0) << c.name;
      max_sweeps = std::max(max_sweeps, s);
    }
    EXPECT_LT(max_sweeps, 2 * c.d + 10) << c.name << ": early exit";
  }
  for (const Case& c : {kD64Cross, kD64WindowCausal}) {
    const auto r = run_case<ce::kern::Cfg<float, 64, false, Kind::lla_blockwise>>(c);
    expect_all_written(r, true, c.name);
    EXPECT_LT(rel_error(r), 1e-4) << c.name;
  }
  const auto r = run_case<ce::kern::Cfg<float, 128, false, Kind::lla_blockwise>>(kD128);
  expect_all_written(r, true, kD128.name);
  EXPECT_LT(rel_error(r), 1e-4) << kD128.name;
}

TEST(CudaKernelEmulation, StoredRhoAndDeltaSolveTheLocalSystem) {
  // For a backward pass the kernel stores rho = Sigma^-1 mu and delta = omega - mu'rho. Check a
  // few rows against a direct float64 solve of eqs. 7-8 (Sigma built explicitly from the
  // normalised weights, omega-scaled ridge), independent of the kernel's running max.
  const Case c = kD16Causal;
  const auto r = run_case<ce::kern::Cfg<float, 32, false, Kind::lla_blockwise>>(c);
  const int d = c.d;
  for (i64 row : {i64(0), i64(3), i64(77), i64(149), i64(2 * 150 + 64), i64(4 * 150 - 1)}) {
    const i64 i = row % c.nq, bh = row / c.nq;
    const double* q = r.qd.data() + row * d;
    const double* K = r.kd.data() + bh * c.nk * d;
    long long lo, hi;
    tile::key_range(i, c.nq, c.nk, c.causal, c.window, lo, hi);
    std::vector<double> w(static_cast<std::size_t>(hi - lo + 1));
    double mx = -INFINITY;
    for (long long j = lo; j <= hi; ++j)
      mx = std::max(mx, tile::dot(q, K + j * d, d) / c.h);
    double omega = 0;
    for (long long j = lo; j <= hi; ++j) omega += (w[j - lo] = std::exp(tile::dot(q, K + j * d, d) / c.h - mx));
    std::vector<double> mu(d, 0.0), S(d * d, 0.0);
    for (long long j = lo; j <= hi; ++j)
      for (int a = 0; a < d; ++a) {
        const double za = K[j * d + a] - q[a];
        mu[a] += w[j - lo] * za;
        for (int b = 0; b < d; ++b) S[a * d + b] += w[j - lo] * za * (K[j * d + b] - q[b]);
      }
    for (int a = 0; a < d; ++a) S[a * d + a] += c.ridge * omega;
    std::vector<double> rho = mu;
    ASSERT_TRUE(tile::cholesky(S.data(), d));
    tile::cholesky_solve(S.data(), d, rho.data());
    double num = 0, den = 0;
    for (int a = 0; a < d; ++a) {
      num += (r.rho[row * d + a] - rho[a]) * (r.rho[row * d + a] - rho[a]);
      den += rho[a] * rho[a];
    }
    EXPECT_LT(std::sqrt(num / den), 1e-4) << "row " << row;
    // delta is relative to the kernel's running max: compare delta / omega.
    const double rel_delta = (omega - tile::dot(mu.data(), rho.data(), d)) / omega;
    EXPECT_NEAR(r.delta[row] / r.omega[row], rel_delta, 1e-4 * std::fabs(rel_delta)) << row;
    EXPECT_LE(r.rel_res[row], 1e-6f) << row;
  }
}

TEST(CudaKernelEmulation, EarlyExitOnlyWhenEveryRowConverged) {
  // A block stops at the first sweep after which none of its rows is active: with the limit
  // one sweep lower, the block that needed the fewest sweeps must leave a row unconverged.
  Case c = kD16Causal;
  c.B = 1;
  c.H = 1;
  using C = ce::kern::Cfg<float, 32, false, Kind::lla_blockwise>;
  const auto r = run_case<C>(c);
  int smin = 1 << 30, smax = 0;
  for (int s : r.sweeps) {
    smin = std::min(smin, s);
    smax = std::max(smax, s);
  }
  ASSERT_GT(smin, 1);
  EXPECT_LT(smax, 2 * c.d + 10) << "no early exit";
  for (int st : r.status) EXPECT_EQ(st, tile::kCGConverged);
  const auto cut = run_case<C>(c, emu::Order::forward, 1e-6, smin - 1);
  for (std::size_t blk = 0; blk < r.sweeps.size(); ++blk) {
    EXPECT_EQ(cut.sweeps[blk], smin - 1);
    if (r.sweeps[blk] != smin) continue;
    int active = 0;
    for (i64 i = static_cast<i64>(blk) * r.Br; i < std::min<i64>(c.nq, (blk + 1) * r.Br); ++i) {
      if (cut.status[i] == tile::kCGActive) {
        ++active;
        EXPECT_GT(cut.rel_res[i], 1e-6f);
      }
    }
    EXPECT_GT(active, 0) << "block " << blk << " stopped later than needed";
  }
  // A looser tolerance needs fewer sweeps and is less accurate.
  const auto loose = run_case<C>(c, emu::Order::forward, 1e-2);
  for (std::size_t blk = 0; blk < r.sweeps.size(); ++blk)
    EXPECT_LT(loose.sweeps[blk], r.sweeps[blk]);
  EXPECT_GT(rel_error(loose), rel_error(r));
}

TEST(CudaKernelEmulation, LLADirectFloat32Within1e4OfFloat64Naive) {
  Case c1 = kD16Causal;
  c1.window = 40;
  const auto r1 = run_case<ce::kern::Cfg<float, 32, false, Kind::lla_direct>>(c1);
  expect_all_written(r1, true, "direct d16");
  EXPECT_LT(rel_error(r1), 1e-4);
  const auto r2 = run_case<ce::kern::Cfg<float, 32, false, Kind::lla_direct>>(kD32Window);
  expect_all_written(r2, true, "direct d32");
  EXPECT_LT(rel_error(r2), 1e-4);
  // 16-bit inputs go through the same SIMT kernel (float32 arithmetic on the rounded inputs).
  const auto r3 = run_case<ce::kern::Cfg<ce::bf16_t, 32, false, Kind::lla_direct>>(kD32Window);
  expect_all_written(r3, true, "direct bf16");
  EXPECT_LT(rel_error(r3), 5e-3);  // the output is rounded to bfloat16 (unit roundoff 2^-8)
}

TEST(CudaKernelEmulation, SoftmaxAndNWFloat32Within1e5OfFloat64) {
  const auto r1 = run_case<ce::kern::Cfg<float, 64, false, Kind::softmax>>(kD64WindowCausal);
  expect_all_written(r1, false, "nw_rbf d64");
  EXPECT_LT(rel_error(r1), 1e-5);
  const auto r2 = run_case<ce::kern::Cfg<float, 128, false, Kind::softmax>>(kD128);
  expect_all_written(r2, false, "softmax d128");
  EXPECT_LT(rel_error(r2), 1e-5);
  const auto r3 = run_case<ce::kern::Cfg<float, 32, false, Kind::softmax>>(kD16Causal);
  EXPECT_LT(rel_error(r3), 1e-5);
}

// Tensor cores (emulated WMMA) with 16-bit inputs. The reference sees the same rounded inputs,
// so the error is the kernel's arithmetic plus the rounding of the output to the input type:
// bounds 5e-3 for bfloat16 (unit roundoff 2^-8 = 3.9e-3) and 1e-3 for float16 (2^-11).
TEST(CudaKernelEmulation, LLABlockwiseTensorCores16Bit) {
  const auto r1 = run_case<ce::kern::Cfg<ce::bf16_t, 32, true, Kind::lla_blockwise>>(kD16Causal);
  expect_all_written(r1, true, "bf16 d16");
  EXPECT_LT(rel_error(r1), 5e-3);
  const auto r2 = run_case<ce::kern::Cfg<ce::f16_t, 64, true, Kind::lla_blockwise>>(kD64Cross);
  expect_all_written(r2, true, "fp16 d64");
  EXPECT_LT(rel_error(r2), 1e-3);
  Case small = kD128;
  small.nq = small.nk = 40;
  const auto r3 = run_case<ce::kern::Cfg<ce::bf16_t, 128, true, Kind::lla_blockwise>>(small);
  expect_all_written(r3, true, "bf16 d128");
  EXPECT_LT(rel_error(r3), 5e-3);
  // The float32 operands of the products (weights, CG direction, rho) are split into two
  // 16-bit halves, so the solver state is close to float32: the rho stored by the tensor-core
  // kernel matches the float32 SIMT kernel run on the same bfloat16-rounded inputs to well
  // below bfloat16's unit roundoff 2^-8 (one-half operands would give errors near 2^-8).
  const auto f = run_case<ce::kern::Cfg<float, 32, false, Kind::lla_blockwise>, ce::bf16_t>(
      kD16Causal);
  ASSERT_EQ(f.qd, r1.qd);  // the very same inputs
  double num = 0, den = 0;
  for (std::size_t i = 0; i < f.rho.size(); ++i) {
    num += (r1.rho[i] - f.rho[i]) * (r1.rho[i] - f.rho[i]);
    den += f.rho[i] * f.rho[i];
  }
  EXPECT_LT(std::sqrt(num / den), 2e-4);
  EXPECT_LT(rel_error(f), 1e-4);  // and the float32 kernel meets its own bound on them
}

TEST(CudaKernelEmulation, SoftmaxTensorCores16Bit) {
  const auto r1 = run_case<ce::kern::Cfg<ce::bf16_t, 64, true, Kind::softmax>>(kD64WindowCausal);
  expect_all_written(r1, false, "bf16 softmax");
  EXPECT_LT(rel_error(r1), 5e-3);
  const auto r2 = run_case<ce::kern::Cfg<ce::f16_t, 32, true, Kind::softmax>>(kD32Window);
  EXPECT_LT(rel_error(r2), 1e-3);
}

TEST(CudaKernelEmulation, NoRaceBetweenBarriers) {
  // The same launch with the threads of every phase run forward, backward and shuffled must
  // give bit-identical outputs (a read of shared memory another thread writes in the same
  // phase would differ), for both GEMM engines and the direct kernel.
  Case c = kD32Window;
  c.B = 1;
  c.H = 1;
  c.nq = c.nk = 70;
  auto same = [](const auto& a, const auto& b) {
    return a.out.size() == b.out.size() &&
           std::memcmp(a.out.data(), b.out.data(), a.out.size() * sizeof(a.out[0])) == 0 &&
           std::memcmp(a.rho.data(), b.rho.data(), a.rho.size() * sizeof(float)) == 0;
  };
  {
    using C = ce::kern::Cfg<float, 32, false, Kind::lla_blockwise>;
    const auto a = run_case<C>(c, emu::Order::forward);
    EXPECT_TRUE(same(a, run_case<C>(c, emu::Order::reverse)));
    EXPECT_TRUE(same(a, run_case<C>(c, emu::Order::shuffled)));
  }
  {
    using C = ce::kern::Cfg<ce::bf16_t, 32, true, Kind::lla_blockwise>;
    const auto a = run_case<C>(c, emu::Order::forward);
    EXPECT_TRUE(same(a, run_case<C>(c, emu::Order::reverse)));
    EXPECT_TRUE(same(a, run_case<C>(c, emu::Order::shuffled)));
  }
  {
    using C = ce::kern::Cfg<float, 32, false, Kind::lla_direct>;
    const auto a = run_case<C>(c, emu::Order::forward);
    EXPECT_TRUE(same(a, run_case<C>(c, emu::Order::reverse)));
  }
  {
    using C = ce::kern::Cfg<ce::bf16_t, 32, true, Kind::softmax>;
    const auto a = run_case<C>(c, emu::Order::forward);
    EXPECT_TRUE(same(a, run_case<C>(c, emu::Order::shuffled)));
  }
}

}  // namespace
