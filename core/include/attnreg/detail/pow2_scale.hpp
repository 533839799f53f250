// attnreg: power-of-two rescaling for scale-equivariant computations at extreme scales.
#pragma once

#include <cmath>

namespace attnreg::detail {

/// Exponent e such that 2^-e * spread lies in [0.5, 1), when spread lies outside
/// [2^-limit, 2^limit); 0 otherwise and for a zero or non-finite spread. Scaling data by 2^-e is
/// exact in floating point (no rounding, barring under/overflow), so an estimator that is
/// equivariant under x -> c x can run on the rescaled data and scale its answer back exactly.
inline int extreme_scale_exponent(double spread, int limit) {
  if (!(spread > 0) || !std::isfinite(spread)) return 0;
  int e = 0;
  std::frexp(spread, &e);
  return (e > -limit && e < limit) ? 0 : e;
}

}  // namespace attnreg::detail
