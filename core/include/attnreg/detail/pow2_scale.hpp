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

/// Run a bandwidth selection `select(y_scaled)` on the response brought to order one by a power
/// of two when |y| lies beyond 2^+-200 (squared residuals would lose digits in subnormals or
/// overflow), and undo the scale on the objective and its curve: least-squares criteria scale
/// by 4^e, AICc (`log_criterion`) shifts by 2 e log 2. The bandwidths are those of the scaled
/// problem: the criteria's minimisers do not depend on the scale of y, and the search's every
/// decision is invariant under f -> a f + b (optimize.hpp).
template <class Result, class Vec, class Select>
Result select_on_scaled_response(const Vec& y, bool log_criterion, Select&& select) {
  double mag = 0.0;
  for (const double v : y) mag = std::fmax(mag, std::fabs(v));
  const int e = extreme_scale_exponent(mag, 200);
  if (e == 0) return select(y);
  const Vec ys = y * std::ldexp(1.0, -e);
  Result res = select(ys);
  auto unscale = [&](double v) {
    if (!std::isfinite(v)) return v;
    return log_criterion ? v + 2.0 * e * std::log(2.0) : std::ldexp(v, 2 * e);
  };
  res.objective = unscale(res.objective);
  for (double& v : res.curve_values) v = unscale(v);
  return res;
}

}  // namespace attnreg::detail
