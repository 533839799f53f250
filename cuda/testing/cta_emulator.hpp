// attnreg CUDA backend: a host emulation of CUDA thread blocks, so that the CPU tests run the
// kernels of lla_kernels.cuh themselves (the same source nvcc compiles), not a re-statement.
// Host-only; used by cuda/testing/test_lla_tile_cuda_math.cpp with ATTNREG_CUDA_EMULATION defined.
//
// Model. A launch runs its blocks one after another. The threads of a block are user-level
// fibers (ucontext) on the calling OS thread; a fiber runs until it reaches __syncthreads (or
// __syncthreads_count / __syncthreads_or) or returns. When every thread waits at a barrier the
// barrier opens. The order in which the fibers run between two barriers is forward, reverse or
// shuffled: a kernel with a data race between barriers (a thread reading shared memory that
// another thread writes in the same phase) gives different results under different orders,
// which the tests compare bit for bit.
//
// Checks that fail the launch (launch() throws std::runtime_error with the reason):
//   - threads waiting at different __syncthreads (divergent barrier), or some threads exiting
//     while others wait at a barrier;
//   - a write past the end of the dynamic shared memory (guard bytes);
//   - WMMA loads/stores with a pointer not 32-byte aligned or a leading dimension that is not a
//     multiple of 16 bytes (the rules of nvcuda::wmma).
// Shared memory starts filled with 0xFF bytes (NaN in float, half and bfloat16), so a read of
// shared memory that no thread wrote propagates NaN into the results.
//
// WMMA (nvcuda::wmma, m16n16k16): every lane of a warp holds the whole 16x16 tile in its
// fragment (the real distribution over lanes is unspecified, so code may only apply uniform
// element-wise operations to fragment elements, which is all the kernels do); loads read the
// whole tile; store_matrix_sync writes from each lane only the elements whose index is the
// lane number modulo 32, so a thread that reads another lane's stored elements without a
// barrier in between sees stale data under some fiber order. Products are formed in float from
// the 16-bit operands and summed in float.
//
// Emulated backend. With ATTNREG_CUDA_EMULATED_BACKEND as well, cuda_runtime_emulation.hpp
// stands in for the CUDA runtime, so the host launcher (cuda/src/attention_cuda.cu), the
// backend adapter (cuda/src/backend.cpp, which registers device = "cuda") and the GPU tests
// run on a machine without a GPU. From the repository root, with a CPU build of the core in
// $B (libattnreg_core.a):
//   F="-std=c++17 -O2 -fopenmp -DATTNREG_WITH_CUDA=1 -DATTNREG_CUDA_ARCHS=\"emulated\"
//      -DATTNREG_CUDA_EMULATION=1 -DATTNREG_CUDA_EMULATED_BACKEND=1 -Icore/include
//      -Icuda/include -Icuda/src -Icuda/testing"
//   g++ $F -c cuda/src/backend.cpp
//   S="cuda/src/attention_cuda.cu cuda/src/lla_fwd_d*.cu cuda/testing/emulated_backend.cu"
//   for f in $S tests/test_cuda_attention.cpp; do g++ $F -x c++ -c $f; done
//   L="-lgtest -lgtest_main -larmadillo -llapack -lblas -pthread"
//   g++ -fopenmp *.o $B/libattnreg_core.a $L -o emulated_gpu_tests && ./emulated_gpu_tests
#pragma once

#include <ucontext.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define ATTNREG_EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ATTNREG_EMU_ASAN 1
#endif
#endif
#if defined(ATTNREG_EMU_ASAN)
#include <sanitizer/common_interface_defs.h>
#endif

namespace attnreg {
namespace cuda_emu {

// ------------------------------------------------------------------ 16-bit float types

struct half_t {
  std::uint16_t bits = 0;
};
struct bf16_t {
  std::uint16_t bits = 0;
};

inline float bits_to_float(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline std::uint32_t float_to_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

inline float bf16_to_float(bf16_t h) { return bits_to_float(std::uint32_t(h.bits) << 16); }

/// Round to nearest even, as __float2bfloat16_rn.
inline bf16_t float_to_bf16(float f) {
  std::uint32_t u = float_to_bits(f);
  bf16_t h;
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) {  // NaN stays NaN
    h.bits = static_cast<std::uint16_t>((u >> 16) | 0x0040u);
    return h;
  }
  u += 0x7FFFu + ((u >> 16) & 1u);
  h.bits = static_cast<std::uint16_t>(u >> 16);
  return h;
}

inline float half_to_float(half_t h) {
  const std::uint32_t sign = std::uint32_t(h.bits & 0x8000u) << 16;
  const std::uint32_t e = (h.bits >> 10) & 0x1Fu, m = h.bits & 0x3FFu;
  if (e == 0) {  // zero or subnormal: m * 2^-24
    const float v = static_cast<float>(m) * 5.9604644775390625e-08f;
    return sign ? -v : v;
  }
  if (e == 31) return bits_to_float(sign | 0x7F800000u | (m << 13));
  return bits_to_float(sign | ((e + 112u) << 23) | (m << 13));
}

/// Round to nearest even, as __float2half_rn (overflow to infinity, gradual underflow).
inline half_t float_to_half(float f) {
  const std::uint32_t x = float_to_bits(f);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t ax = x & 0x7FFFFFFFu;
  half_t h;
  if (ax >= 0x7F800000u) {
    h.bits = static_cast<std::uint16_t>(sign | (ax > 0x7F800000u ? 0x7E00u : 0x7C00u));
  } else if (ax >= 0x477FF000u) {  // >= 65520 rounds to infinity
    h.bits = static_cast<std::uint16_t>(sign | 0x7C00u);
  } else if (ax < 0x38800000u) {  // below 2^-14: subnormal half (units of 2^-24) or zero
    const float scaled = bits_to_float(ax) * 16777216.0f;  // exact
    h.bits = static_cast<std::uint16_t>(sign | static_cast<std::uint32_t>(std::nearbyint(scaled)));
  } else {
    const std::uint32_t e = (ax >> 23) - 112u;
    const std::uint32_t mant = ax & 0x7FFFFFu;
    std::uint32_t v = (e << 10) | (mant >> 13);
    const std::uint32_t rem = mant & 0x1FFFu;
    if (rem > 0x1000u || (rem == 0x1000u && (v & 1u))) ++v;
    h.bits = static_cast<std::uint16_t>(sign | v);
  }
  return h;
}

inline float elem_to_float(float x) { return x; }
inline float elem_to_float(half_t x) { return half_to_float(x); }
inline float elem_to_float(bf16_t x) { return bf16_to_float(x); }
template <class T>
inline T elem_from_float(float x);
template <>
inline float elem_from_float<float>(float x) {
  return x;
}
template <>
inline half_t elem_from_float<half_t>(float x) {
  return float_to_half(x);
}
template <>
inline bf16_t elem_from_float<bf16_t>(float x) {
  return float_to_bf16(x);
}

// ------------------------------------------------------------------ the engine

struct uint3e {
  unsigned x = 0, y = 0, z = 0;
};
struct dim3e {
  unsigned x = 1, y = 1, z = 1;
  dim3e() = default;
  dim3e(unsigned x_, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

enum class Order { forward, reverse, shuffled };

struct Fiber {
  ucontext_t ctx;
  uint3e tid;
  unsigned linear = 0;
  bool done = false;
  bool waiting = false;
  const char* site_file = nullptr;
  int site_line = 0;
  int kind = 0;  // 0 __syncthreads, 1 _count, 2 _or
  int pred = 0;
  void* fake_stack = nullptr;  // AddressSanitizer's fake stack of this fiber
};

struct Engine {
  dim3e grid, block;
  uint3e bid;
  std::vector<Fiber> fibers;
  std::vector<char> stacks;
  std::size_t stack_bytes = 256 * 1024;
  Fiber* cur = nullptr;
  ucontext_t main_ctx;
  std::vector<unsigned char> smem_storage;
  unsigned char* smem = nullptr;  // 128-byte aligned start inside smem_storage
  std::size_t smem_bytes = 0;
  const std::function<void()>* body = nullptr;
  int bar_result = 0;
  std::string error;  // first error seen inside the block (reported after it)
  long long barriers = 0;
  void* fake_stack = nullptr;        // AddressSanitizer: the scheduler's fake stack
  const void* main_bottom = nullptr;  // AddressSanitizer: the scheduler's stack
  std::size_t main_size = 0;
};

inline Engine*& current_engine() {
  static Engine* e = nullptr;
  return e;
}

constexpr std::size_t kGuardBytes = 256;

inline void fail(const std::string& msg) {
  Engine* e = current_engine();
  if (e && e->error.empty()) e->error = msg;
}

inline unsigned char* dynamic_smem() { return current_engine()->smem; }

inline unsigned lane_id() { return current_engine()->cur->linear % 32u; }

inline void switch_to_main(Fiber* f) {
  Engine* e = current_engine();
#if defined(ATTNREG_EMU_ASAN)
  __sanitizer_start_switch_fiber(&f->fake_stack, e->main_bottom, e->main_size);
#endif
  swapcontext(&f->ctx, &e->main_ctx);
#if defined(ATTNREG_EMU_ASAN)
  __sanitizer_finish_switch_fiber(f->fake_stack, &e->main_bottom, &e->main_size);
#endif
}

inline int barrier(const char* file, int line, int kind, int pred) {
  Engine* e = current_engine();
  Fiber* f = e->cur;
  f->waiting = true;
  f->site_file = file;
  f->site_line = line;
  f->kind = kind;
  f->pred = pred;
  switch_to_main(f);
  return e->bar_result;
}

inline void fiber_entry() {
  Engine* e = current_engine();
#if defined(ATTNREG_EMU_ASAN)
  __sanitizer_finish_switch_fiber(nullptr, &e->main_bottom, &e->main_size);
#endif
  (*e->body)();
  e->cur->done = true;
#if defined(ATTNREG_EMU_ASAN)
  __sanitizer_start_switch_fiber(nullptr, e->main_bottom, e->main_size);
#endif
  // returning resumes uc_link (the scheduler)
}

inline std::string site(const Fiber& f) {
  return std::string(f.site_file ? f.site_file : "?") + ":" + std::to_string(f.site_line);
}

/// Run one block of the current launch to completion.
inline void run_block(Engine& e, Order order, std::mt19937& rng) {
  const std::size_t n = e.fibers.size();
  std::fill(e.smem, e.smem + e.smem_bytes, 0xFF);
  std::fill(e.smem + e.smem_bytes, e.smem + e.smem_bytes + kGuardBytes, 0xA5);
  for (std::size_t i = 0; i < n; ++i) {
    Fiber& f = e.fibers[i];
    f.done = false;
    f.waiting = false;
    f.linear = static_cast<unsigned>(i);
    f.tid.x = static_cast<unsigned>(i % e.block.x);
    f.tid.y = static_cast<unsigned>((i / e.block.x) % e.block.y);
    f.tid.z = static_cast<unsigned>(i / (e.block.x * e.block.y));
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = e.stacks.data() + i * e.stack_bytes;
    f.ctx.uc_stack.ss_size = e.stack_bytes;
    f.ctx.uc_link = &e.main_ctx;
    makecontext(&f.ctx, fiber_entry, 0);
  }
  std::vector<std::size_t> perm(n);
  for (;;) {
    std::iota(perm.begin(), perm.end(), std::size_t(0));
    if (order == Order::reverse) std::reverse(perm.begin(), perm.end());
    if (order == Order::shuffled) std::shuffle(perm.begin(), perm.end(), rng);
    for (std::size_t idx : perm) {
      Fiber& f = e.fibers[idx];
      if (f.done || f.waiting) continue;
      e.cur = &f;
#if defined(ATTNREG_EMU_ASAN)
      __sanitizer_start_switch_fiber(&e.fake_stack, e.stacks.data() + idx * e.stack_bytes,
                                     e.stack_bytes);
#endif
      swapcontext(&e.main_ctx, &f.ctx);
#if defined(ATTNREG_EMU_ASAN)
      __sanitizer_finish_switch_fiber(e.fake_stack, nullptr, nullptr);
#endif
    }
    e.cur = nullptr;
    std::size_t n_done = 0, n_wait = 0;
    for (const Fiber& f : e.fibers) {
      n_done += f.done;
      n_wait += f.waiting;
    }
    if (!e.error.empty()) throw std::runtime_error("cta_emulator: " + e.error);
    if (n_done == n) break;
    const Fiber* first = nullptr;
    for (const Fiber& f : e.fibers)
      if (f.waiting) {
        first = &f;
        break;
      }
    if (n_done > 0) {
      throw std::runtime_error("cta_emulator: " + std::to_string(n_done) +
                               " threads exited while others wait at the barrier at " +
                               site(*first));
    }
    int count = 0;
    for (const Fiber& f : e.fibers) {
      if (f.site_line != first->site_line || std::strcmp(f.site_file, first->site_file) != 0 ||
          f.kind != first->kind) {
        throw std::runtime_error("cta_emulator: divergent barrier: thread " +
                                 std::to_string(first->linear) + " waits at " + site(*first) +
                                 ", thread " + std::to_string(f.linear) + " at " + site(f));
      }
      count += f.pred != 0;
    }
    e.bar_result = first->kind == 1 ? count : (first->kind == 2 ? (count > 0) : 0);
    for (Fiber& f : e.fibers) f.waiting = false;
    ++e.barriers;
  }
  for (std::size_t i = e.smem_bytes; i < e.smem_bytes + kGuardBytes; ++i) {
    if (e.smem[i] != 0xA5) {
      throw std::runtime_error("cta_emulator: shared memory written past its end (byte " +
                               std::to_string(i - e.smem_bytes) + " after " +
                               std::to_string(e.smem_bytes) + " bytes)");
    }
  }
}

/// Launch `body` (which calls the kernel) on grid x block threads with `smem_bytes` of dynamic
/// shared memory. Returns the number of barriers executed. Throws std::runtime_error when a
/// check above fails.
inline long long launch(dim3e grid, dim3e block, std::size_t smem_bytes,
                        const std::function<void()>& body, Order order = Order::forward,
                        unsigned seed = 1) {
  Engine e;
  e.grid = grid;
  e.block = block;
  e.smem_bytes = smem_bytes;
  e.smem_storage.resize(smem_bytes + kGuardBytes + 128);
  const std::uintptr_t raw = reinterpret_cast<std::uintptr_t>(e.smem_storage.data());
  e.smem = e.smem_storage.data() + (128 - raw % 128) % 128;
  const std::size_t n = std::size_t(block.x) * block.y * block.z;
  e.fibers.resize(n);
  e.stacks.resize(n * e.stack_bytes);
  e.body = &body;
  std::mt19937 rng(seed);
  Engine* saved = current_engine();
  current_engine() = &e;
  try {
    for (unsigned z = 0; z < grid.z; ++z)
      for (unsigned y = 0; y < grid.y; ++y)
        for (unsigned x = 0; x < grid.x; ++x) {
          e.bid.x = x;
          e.bid.y = y;
          e.bid.z = z;
          run_block(e, order, rng);
        }
  } catch (...) {
    current_engine() = saved;
    throw;
  }
  current_engine() = saved;
  return e.barriers;
}

}  // namespace cuda_emu
}  // namespace attnreg

// ------------------------------------------------------------------ CUDA spellings

#define threadIdx (::attnreg::cuda_emu::current_engine()->cur->tid)
#define blockIdx (::attnreg::cuda_emu::current_engine()->bid)
#define blockDim (::attnreg::cuda_emu::current_engine()->block)
#define gridDim (::attnreg::cuda_emu::current_engine()->grid)
#define __syncthreads() ::attnreg::cuda_emu::barrier(__FILE__, __LINE__, 0, 0)
#define __syncthreads_count(p) ::attnreg::cuda_emu::barrier(__FILE__, __LINE__, 1, (p) ? 1 : 0)
#define __syncthreads_or(p) ::attnreg::cuda_emu::barrier(__FILE__, __LINE__, 2, (p) ? 1 : 0)

// ------------------------------------------------------------------ nvcuda::wmma

namespace nvcuda {
namespace wmma {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };

template <class Use, int M, int N, int K, class T, class Layout = void>
struct fragment {
  static constexpr int kRows = std::is_same<Use, matrix_b>::value ? K : M;
  static constexpr int kCols = std::is_same<Use, matrix_a>::value ? K : N;
  static constexpr int num_elements = kRows * kCols;
  T x[num_elements];  // logical (row, col) at row * kCols + col
};

namespace detail {
template <class T>
inline void check_ptr(const T* p, unsigned ldm, const char* what) {
  if (reinterpret_cast<std::uintptr_t>(p) % 32 != 0)
    ::attnreg::cuda_emu::fail(std::string(what) + ": pointer not 32-byte aligned");
  if ((ldm * sizeof(T)) % 16 != 0)
    ::attnreg::cuda_emu::fail(std::string(what) + ": ldm not a multiple of 16 bytes");
}
}  // namespace detail

template <class Use, int M, int N, int K, class T, class L, class V>
inline void fill_fragment(fragment<Use, M, N, K, T, L>& f, const V& v) {
  for (int i = 0; i < f.num_elements; ++i) f.x[i] = static_cast<T>(v);
}

template <class Use, int M, int N, int K, class T, class L>
inline void load_matrix_sync(fragment<Use, M, N, K, T, L>& f, const T* p, unsigned ldm) {
  static_assert(!std::is_same<Use, accumulator>::value, "accumulator loads take a layout");
  detail::check_ptr(p, ldm, "wmma::load_matrix_sync");
  using F = fragment<Use, M, N, K, T, L>;
  for (int r = 0; r < F::kRows; ++r)
    for (int c = 0; c < F::kCols; ++c)
      f.x[r * F::kCols + c] = std::is_same<L, row_major>::value ? p[r * ldm + c] : p[r + c * ldm];
}

template <int M, int N, int K, class T>
inline void load_matrix_sync(fragment<accumulator, M, N, K, T, void>& f, const T* p,
                             unsigned ldm, layout_t layout) {
  detail::check_ptr(p, ldm, "wmma::load_matrix_sync");
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < N; ++c)
      f.x[r * N + c] = layout == mem_row_major ? p[r * ldm + c] : p[r + c * ldm];
}

template <int M, int N, int K, class T>
inline void store_matrix_sync(T* p, const fragment<accumulator, M, N, K, T, void>& f,
                              unsigned ldm, layout_t layout) {
  detail::check_ptr(p, ldm, "wmma::store_matrix_sync");
  const unsigned lane = ::attnreg::cuda_emu::lane_id();
  for (int i = static_cast<int>(lane); i < M * N; i += 32) {
    const int r = i / N, c = i % N;
    if (layout == mem_row_major) {
      p[r * ldm + c] = f.x[i];
    } else {
      p[r + c * ldm] = f.x[i];
    }
  }
}

template <int M, int N, int K, class TA, class LA, class TB, class LB>
inline void mma_sync(fragment<accumulator, M, N, K, float, void>& d,
                     const fragment<matrix_a, M, N, K, TA, LA>& a,
                     const fragment<matrix_b, M, N, K, TB, LB>& b,
                     const fragment<accumulator, M, N, K, float, void>& c) {
  float af[M * K], bf[K * N], out[M * N];
  for (int i = 0; i < M * K; ++i) af[i] = ::attnreg::cuda_emu::elem_to_float(a.x[i]);
  for (int i = 0; i < K * N; ++i) bf[i] = ::attnreg::cuda_emu::elem_to_float(b.x[i]);
  for (int i = 0; i < M * N; ++i) out[i] = c.x[i];
  for (int i = 0; i < M; ++i)
    for (int k = 0; k < K; ++k) {
      const float aik = af[i * K + k];
      for (int j = 0; j < N; ++j) out[i * N + j] += aik * bf[k * N + j];
    }
  for (int i = 0; i < M * N; ++i) d.x[i] = out[i];
}

}  // namespace wmma
}  // namespace nvcuda
