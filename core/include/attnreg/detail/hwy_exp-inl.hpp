// attnreg (internal, not part of the public API): per-target vector exp for kernel weights,
// built on Highway's contrib/math Exp (Google Highway, https://github.com/google/highway; Debian
// libhwy-dev). Reusable by any translation unit that compiles per-target code with
// hwy/foreach_target.h (HWY_TARGET_INCLUDE) and calls it through HWY_DYNAMIC_DISPATCH; see
// kernel_tiles-inl.hpp and kernel_pairs.cpp for the pattern.
//
//   ExpNonpositive(d, x): e^x for x <= 0, lane-wise, with
//     * Highway's Exp inside [-708, 0]: at most 1 ulp from the correctly rounded value
//       (documented bound; tests/test_kernel_simd.cpp checks it against libm), exp(0) = 1 exactly;
//     * exactly 0 below -708 and for -inf (a far pair, or a squared distance that overflowed):
//       every result is a normal double or 0, never a subnormal (they are slow and lose
//       precision; callers reject rows whose largest weight underflows).
//   Arguments are <= 0 (kernel weights exp(-||z||^2 / 2), or softmax-style exp(s - max s) after
//   the caller subtracted its running maximum), so nothing can overflow.
//
// Per-target header: include it after hwy/highway.h inside a HWY_TARGET_INCLUDE'd file (it uses
// the usual Highway toggle guard, so it is compiled once per target).
#if defined(ATTNREG_DETAIL_HWY_EXP_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ATTNREG_DETAIL_HWY_EXP_INL_H_
#undef ATTNREG_DETAIL_HWY_EXP_INL_H_
#else
#define ATTNREG_DETAIL_HWY_EXP_INL_H_
#endif

#include <cstdint>

#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>

HWY_BEFORE_NAMESPACE();
namespace attnreg {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// Below this, ExpNonpositive returns exactly 0 (e^-708 = 3.3e-308 is still a normal double).
constexpr double kExpCutoff = -708.0;

/// Highway's contrib/math Exp, restricted as above.
template <class D, class V = hn::Vec<D>>
HWY_INLINE V ExpNonpositiveHwy(D d, V x) {
  const V cut = hn::Set(d, kExpCutoff);
  const auto keep = hn::Ge(x, cut);  // false for x < -708, -inf and NaN
  // Clamp first so that Exp never sees -inf (its integer conversion would be undefined).
  return hn::IfThenElseZero(keep, hn::Exp(d, hn::Max(x, cut)));
}

/// kernel_detail::exp_nonpositive (kernel.hpp) in Highway operations: Cody-Waite reduction
/// x = n ln2 + r, |r| <= ln2/2, with n from the 1.5 * 2^52 shift (no float-int conversion),
/// the degree-13 Taylor polynomial of e^r in Horner form, and 2^n built in the exponent field.
template <class D, class V = hn::Vec<D>>
HWY_INLINE V ExpNonpositivePoly(D d, V x) {
  const hn::RebindToSigned<D> di;
  constexpr double kShift = 6755399441055744.0;  // 1.5 * 2^52: t - kShift is an integer
  constexpr std::int64_t kShiftBits = 0x4338000000000000LL;
  const V cut = hn::Set(d, kExpCutoff);
  const auto under = hn::Lt(x, cut);  // true for x < -708 and -inf
  const V xc = hn::Max(x, cut);
  const V shift = hn::Set(d, kShift);
  const V t = hn::MulAdd(xc, hn::Set(d, 1.4426950408889634074), shift);
  const V n = hn::Sub(t, shift);
  V r = hn::NegMulAdd(n, hn::Set(d, 6.93147180369123816490e-01), xc);
  r = hn::NegMulAdd(n, hn::Set(d, 1.90821492927058770002e-10), r);
  V p = hn::Set(d, 1.0 / 6227020800.0);
  p = hn::MulAdd(p, r, hn::Set(d, 1.0 / 479001600.0));
  p = hn::MulAdd(p, r, hn::Set(d, 1.0 / 39916800.0));
  p = hn::MulAdd(p, r, hn::Set(d, 1.0 / 3628800.0));
  p = hn::MulAdd(p, r, hn::Set(d, 1.0 / 362880.0));
  p = hn::MulAdd(p, r, hn::Set(d, 1.0 / 40320.0));
  p = hn::MulAdd(p, r, hn::Set(d, 1.0 / 5040.0));
  p = hn::MulAdd(p, r, hn::Set(d, 1.0 / 720.0));
  p = hn::MulAdd(p, r, hn::Set(d, 1.0 / 120.0));
  p = hn::MulAdd(p, r, hn::Set(d, 1.0 / 24.0));
  p = hn::MulAdd(p, r, hn::Set(d, 1.0 / 6.0));
  p = hn::MulAdd(p, r, hn::Set(d, 0.5));
  const V one = hn::Set(d, 1.0);
  p = hn::MulAdd(p, r, one);
  p = hn::MulAdd(p, r, one);
  // bits(t) = bits(kShift) + n, so the biased exponent of 2^n is bits(t) - bits(kShift) + 1023.
  const auto eb = hn::ShiftLeft<52>(hn::Add(hn::BitCast(di, t), hn::Set(di, 1023 - kShiftBits)));
  return hn::IfThenZeroElse(under, hn::Mul(p, hn::BitCast(d, eb)));
}

/// The exp of the kernel tiles: ExpNonpositivePoly. On AMD Zen 3/4 (AVX2 and AVX-512) it runs
/// about 1.4x the throughput of ExpNonpositiveHwy and 1.2x glibc's libmvec exp in the same loop
/// (bench/kernel_floor.cpp, bench/results/kernel_simd.md); both are within 1 ulp on [-708, 0]
/// (tests/test_kernel_simd.cpp).
template <class D, class V = hn::Vec<D>>
HWY_INLINE V ExpNonpositive(D d, V x) {
  return ExpNonpositivePoly(d, x);
}

}  // namespace HWY_NAMESPACE
}  // namespace attnreg
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
