// attnreg (internal, not part of the public API): the kernel-weight tile loop of KernelSpace
// (kernel_pairs.cpp), written once with Google Highway and compiled for every x86 target
// Highway supports (SSE4, AVX2, AVX-512, ...) through hwy/foreach_target.h; kernel_pairs.cpp
// picks the best one for the running CPU at the first call (HWY_DYNAMIC_DISPATCH). It lives
// under include/ so that the R package, which copies only core/include and core/src/*.cpp, can
// compile it.
//
// A tile is weights w[0..len) of training points first .. first+len-1 for one query. Each
// weight is computed lane-wise (no reduction crosses lanes except the maximum, which is exact),
// and the tail is padded to a full vector whose extra lanes are dropped, so every weight is the
// same number wherever the tile starts, however many lanes the target has, and for any number
// of threads.
//
// Gaussian: exp(-||z||^2 / 2) by hwy_exp-inl.hpp (Highway's Exp, <= 1 ulp; exactly 0 beyond
// ||z||^2 / 2 > 708). Other kernels: the product of each column's vectorised shape, from the
// kernel's header (kernels/shapes/*.hpp) or lane by lane from its scalar shape; results agree
// with the scalar Kernel::shape to rounding. Weights may be negative (higher-order kernels);
// the returned maximum is then that of the positive ones (0 when none is positive).

// ------------------------------------------------------------ once: the argument block
#ifndef ATTNREG_DETAIL_KERNEL_TILES_ONCE
#define ATTNREG_DETAIL_KERNEL_TILES_ONCE
#include <cstddef>
#include <cstdint>

#include "attnreg/kernels/kernel.hpp"

namespace attnreg {
namespace detail {

// Everything the tile loop needs about one query, as raw pointers.
struct TileArgs {
  const double* xs = nullptr;  // column-major n x dc, scaled continuous columns
  std::size_t ld = 0;
  std::size_t dc = 0;
  const double* q = nullptr;  // dc scaled query coordinates
  KernelType kernel = KernelType::gaussian;
  std::size_t ncat = 0;
  const std::uint32_t* const* codes = nullptr;  // per categorical column, internal order
  const double* const* rows = nullptr;          // per categorical column: the query's table row
  const double* ow = nullptr;                   // observation weights or null
};

}  // namespace detail
}  // namespace attnreg
#endif

// ------------------------------------------------------------ per target
#if defined(ATTNREG_DETAIL_KERNEL_TILES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ATTNREG_DETAIL_KERNEL_TILES_INL_H_
#undef ATTNREG_DETAIL_KERNEL_TILES_INL_H_
#else
#define ATTNREG_DETAIL_KERNEL_TILES_INL_H_
#endif

#include <hwy/highway.h>

#include "attnreg/detail/hwy_exp-inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace attnreg {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace tiles {

using D = hn::ScalableTag<double>;
using V = hn::Vec<D>;
constexpr std::size_t kMaxLanes = HWY_MAX_BYTES / sizeof(double);

/// Lanes [i, i + nl) of p; a short tail is zero-padded.
HWY_INLINE V LoadTail(D d, const double* p, std::size_t nl) {
  if (nl == hn::Lanes(d)) return hn::LoadU(d, p);
  HWY_ALIGN double buf[kMaxLanes] = {0};
  for (std::size_t l = 0; l < nl; ++l) buf[l] = p[l];
  return hn::Load(d, buf);
}

/// The shape k(u) of kernel K, lane by lane from K::shape: the fallback for kernels whose
/// header has no vectorised shape (an exact overload below, from each kernel header's
/// ATTNREG_KERNEL_VSHAPES block, is preferred to this template).
template <class K>
HWY_INLINE V VShape(D d, V u, K) {
  HWY_ALIGN double buf[kMaxLanes];
  hn::Store(u, d, buf);
  for (std::size_t l = 0; l < hn::Lanes(d); ++l) buf[l] = K::shape(buf[l]);
  return hn::Load(d, buf);
}

#define ATTNREG_KERNEL_VSHAPES
#include "attnreg/kernels/registry.hpp"
#undef ATTNREG_KERNEL_VSHAPES

/// The loop shared by every kernel: cont(i, nl) gives the continuous factor of lanes
/// [i, i + nl); categorical table entries and observation weights multiply it. Writes w[0..len)
/// and returns the largest weight.
template <class Cont>
HWY_INLINE double Loop(D d, const detail::TileArgs& a, std::size_t first, std::size_t len,
                       double* HWY_RESTRICT w, const Cont& cont) {
  const std::size_t N = hn::Lanes(d);
  const hn::RebindToSigned<D> di;
  const hn::RebindToUnsigned<D> du;
  const hn::Rebind<std::uint32_t, D> d32;
  V mx = hn::Zero(d);
  HWY_ALIGN double g[kMaxLanes];
  for (std::size_t i = 0; i < len; i += N) {
    const std::size_t nl = len - i < N ? len - i : N;
    V v = cont(i, nl);
    for (std::size_t c = 0; c < a.ncat; ++c) {
      const std::uint32_t* code = a.codes[c] + first + i;
      const double* row = a.rows[c];
      if (nl == N) {
        // A vector gather of the table entries (lane-wise stores into g and a vector load of
        // it stalled on store forwarding, the larger part of the tile's time).
        const auto idx = hn::BitCast(di, hn::PromoteTo(du, hn::LoadU(d32, code)));
        v = hn::Mul(v, hn::GatherIndex(d, row, idx));
      } else {
        for (std::size_t l = 0; l < N; ++l) g[l] = l < nl ? row[code[l]] : 0.0;
        v = hn::Mul(v, hn::Load(d, g));
      }
    }
    if (a.ow != nullptr) v = hn::Mul(v, LoadTail(d, a.ow + first + i, nl));
    if (nl == N) {
      hn::StoreU(v, d, w + i);
    } else {
      v = hn::IfThenElseZero(hn::FirstN(d, nl), v);
      hn::Store(v, d, g);
      for (std::size_t l = 0; l < nl; ++l) w[i + l] = g[l];
    }
    mx = hn::Max(mx, v);
  }
  return hn::GetLane(hn::MaxOfLanes(d, mx));
}

/// Product over the continuous columns of a one-column shape.
template <class Shape>
HWY_INLINE double Product(D d, const detail::TileArgs& a, std::size_t first, std::size_t len,
                          double* HWY_RESTRICT w, const Shape& shape) {
  return Loop(d, a, first, len, w, [&](std::size_t i, std::size_t nl) HWY_ATTR {
    V v = shape(d, hn::Sub(LoadTail(d, a.xs + first + i, nl), hn::Set(d, a.q[0])));
    for (std::size_t j = 1; j < a.dc; ++j)
      v = hn::Mul(v, shape(d, hn::Sub(LoadTail(d, a.xs + j * a.ld + first + i, nl),
                                      hn::Set(d, a.q[j]))));
    return v;
  });
}

}  // namespace tiles

/// Kernel weights of one tile (see the top of this file); returns the largest.
double TileWeights(const detail::TileArgs& a, std::size_t first, std::size_t len, double* w) {
  using tiles::V;
  const tiles::D d;
  if (a.dc == 0)
    return tiles::Loop(d, a, first, len, w,
                       [&](std::size_t, std::size_t) HWY_ATTR { return hn::Set(d, 1.0); });
  return dispatch_kernel(a.kernel, [&](auto k) HWY_ATTR -> double {
    using K = decltype(k);
    if constexpr (K::exp_quadratic) {  // the product is exp(-||z||^2 / 2)
      const V mhalf = hn::Set(d, -0.5);
      if (a.dc == 1) {
        const V q0 = hn::Set(d, a.q[0]);
        return tiles::Loop(d, a, first, len, w, [&](std::size_t i, std::size_t nl) HWY_ATTR {
          const V z = hn::Sub(tiles::LoadTail(d, a.xs + first + i, nl), q0);
          return ExpNonpositive(d, hn::Mul(mhalf, hn::Mul(z, z)));
        });
      }
      return tiles::Loop(d, a, first, len, w, [&](std::size_t i, std::size_t nl) HWY_ATTR {
        V z = hn::Sub(tiles::LoadTail(d, a.xs + first + i, nl), hn::Set(d, a.q[0]));
        V e = hn::Mul(z, z);
        for (std::size_t j = 1; j < a.dc; ++j) {
          z = hn::Sub(tiles::LoadTail(d, a.xs + j * a.ld + first + i, nl), hn::Set(d, a.q[j]));
          e = hn::MulAdd(z, z, e);
        }
        return ExpNonpositive(d, hn::Mul(mhalf, e));
      });
    } else {
      return tiles::Product(d, a, first, len, w,
                            [](tiles::D dd, V u) HWY_ATTR { return tiles::VShape(dd, u, K{}); });
    }
  });
}

/// Lane-wise ExpNonpositive over x[0..n) into y (for tests and benchmarks of the exp itself).
void ExpNonpositiveArray(const double* x, std::size_t n, double* y) {
  const tiles::D d;
  const std::size_t N = hn::Lanes(d);
  HWY_ALIGN double buf[tiles::kMaxLanes];
  for (std::size_t i = 0; i < n; i += N) {
    const std::size_t nl = n - i < N ? n - i : N;
    const tiles::V v = ExpNonpositive(d, tiles::LoadTail(d, x + i, nl));
    hn::Store(v, d, buf);
    for (std::size_t l = 0; l < nl; ++l) y[i + l] = buf[l];
  }
}

/// Lane-wise kernel shape (Kernel::shape; the Gaussian as exp(-u^2 / 2)) over u[0..n).
void KernelShapeArray(KernelType kernel, const double* u, std::size_t n, double* y) {
  detail::TileArgs a;
  a.xs = u;
  a.ld = n;
  a.dc = 1;
  const double zero = 0.0;
  a.q = &zero;
  a.kernel = kernel;
  TileWeights(a, 0, n, y);
}

/// Name of this target (AVX2, AVX3, SSE4, ...), for build_info().
const char* SimdTargetName() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace attnreg
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
