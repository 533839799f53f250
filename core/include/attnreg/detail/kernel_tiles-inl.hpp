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
// ||z||^2 / 2 > 708). Compact kernels: the polynomial shapes of kernel.hpp, lane-wise (they
// need no library); results agree with the scalar kernel_detail::*_shape to rounding.

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

// Shapes k(u) of the compact kernels (kernel_detail::*_shape in kernel.hpp), lane-wise.
HWY_INLINE V Epanechnikov(D d, V u) {
  return hn::Max(hn::NegMulAdd(u, u, hn::Set(d, 1.0)), hn::Zero(d));
}
HWY_INLINE V Uniform(D d, V u) {
  const V one = hn::Set(d, 1.0);
  return hn::IfThenElseZero(hn::Le(hn::Abs(u), one), one);
}
HWY_INLINE V Triangular(D d, V u) { return hn::Max(hn::Sub(hn::Set(d, 1.0), hn::Abs(u)), hn::Zero(d)); }
HWY_INLINE V Biweight(D d, V u) {
  const V t = Epanechnikov(d, u);
  return hn::Mul(t, t);
}
HWY_INLINE V Triweight(D d, V u) {
  const V t = Epanechnikov(d, u);
  return hn::Mul(hn::Mul(t, t), t);
}
HWY_INLINE V Tricube(D d, V u) {
  const V a = hn::Abs(u);
  const V t = hn::Max(hn::NegMulAdd(hn::Mul(a, a), a, hn::Set(d, 1.0)), hn::Zero(d));
  return hn::Mul(hn::Mul(t, t), t);
}
// cos(pi u / 2) on [-1, 1] by the degree-20 Taylor polynomial of kernel_detail::cosine_shape.
HWY_INLINE V Cosine(D d, V u) {
  const V one = hn::Set(d, 1.0);
  const V a = hn::Abs(u);
  const auto inside = hn::Le(a, one);
  const V x = hn::Mul(hn::Set(d, 1.5707963267948966192), hn::Min(a, one));
  const V x2 = hn::Mul(x, x);
  V p = hn::Set(d, 1.0 / 2432902008176640000.0);
  p = hn::MulAdd(p, x2, hn::Set(d, -1.0 / 6402373705728000.0));
  p = hn::MulAdd(p, x2, hn::Set(d, 1.0 / 20922789888000.0));
  p = hn::MulAdd(p, x2, hn::Set(d, -1.0 / 87178291200.0));
  p = hn::MulAdd(p, x2, hn::Set(d, 1.0 / 479001600.0));
  p = hn::MulAdd(p, x2, hn::Set(d, -1.0 / 3628800.0));
  p = hn::MulAdd(p, x2, hn::Set(d, 1.0 / 40320.0));
  p = hn::MulAdd(p, x2, hn::Set(d, -1.0 / 720.0));
  p = hn::MulAdd(p, x2, hn::Set(d, 1.0 / 24.0));
  p = hn::MulAdd(p, x2, hn::Set(d, -0.5));
  p = hn::MulAdd(p, x2, one);
  return hn::IfThenElseZero(inside, hn::Max(p, hn::Zero(d)));
}

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

template <class Shape>
HWY_INLINE double Compact(D d, const detail::TileArgs& a, std::size_t first, std::size_t len,
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
  switch (a.kernel) {
    case KernelType::gaussian: {
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
    }
    case KernelType::epanechnikov:
      return tiles::Compact(d, a, first, len, w, [](tiles::D dd, V u) HWY_ATTR { return tiles::Epanechnikov(dd, u); });
    case KernelType::uniform:
      return tiles::Compact(d, a, first, len, w, [](tiles::D dd, V u) HWY_ATTR { return tiles::Uniform(dd, u); });
    case KernelType::triangular:
      return tiles::Compact(d, a, first, len, w, [](tiles::D dd, V u) HWY_ATTR { return tiles::Triangular(dd, u); });
    case KernelType::biweight:
      return tiles::Compact(d, a, first, len, w, [](tiles::D dd, V u) HWY_ATTR { return tiles::Biweight(dd, u); });
    case KernelType::triweight:
      return tiles::Compact(d, a, first, len, w, [](tiles::D dd, V u) HWY_ATTR { return tiles::Triweight(dd, u); });
    case KernelType::tricube:
      return tiles::Compact(d, a, first, len, w, [](tiles::D dd, V u) HWY_ATTR { return tiles::Tricube(dd, u); });
    case KernelType::cosine:
      return tiles::Compact(d, a, first, len, w, [](tiles::D dd, V u) HWY_ATTR { return tiles::Cosine(dd, u); });
  }
  return 0.0;
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

/// Lane-wise kernel shape (kernel_detail::*_shape; the Gaussian as exp(-u^2 / 2)) over u[0..n).
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
