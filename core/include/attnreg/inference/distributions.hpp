// attnreg: the normal, Student t, chi-square and Fisher F distribution functions the inference needs, from Boost.Math
// (Debian libboost-math-dev; BH in R).
//
// Why Boost and not the hand-written versions this replaced (Acklam's normal quantile with one
// Halley step; the t tail by the incomplete beta continued fraction): against 50-digit mpmath
// over a grid with tails down to 1e-300 and df in {0.5, 1, 2, ..., 1e6, 1e8}, Boost 1.74's
// worst relative error was 4.5e-15 (t tail) and 2.3e-16 (normal quantile), the hand-written
// ones' 2.4e-9 (t tail at df = 1e8) and 1.1e-9 (normal quantile at p = 1 - 1.3e-13), and
// scipy.stats' 2.3e-14 and 3.7e-16 (bench/results/distributions.md).
#pragma once

namespace attnreg {

/// Standard normal quantile Phi^{-1}(p) for p in (0, 1); -inf / +inf at 0 / 1, NaN outside.
double normal_quantile(double p);

/// Standard normal upper tail P(Z > z).
double normal_sf(double z);

/// Fisher F upper tail P(F > f) with df1, df2 > 0 (the regularised incomplete beta function);
/// NaN for non-positive df or NaN input.
double fisher_f_sf(double f, double df1, double df2);

/// Chi-square distribution function P(X <= x) with df > 0 degrees of freedom (the regularised
/// lower incomplete gamma function P(df / 2, x / 2)); 0 for x <= 0, NaN for df <= 0 or NaN.
double chi_squared_cdf(double x, double df);

/// Student t quantile for p in (0, 1) and df > 0 (df = +inf: the normal quantile); NaN for
/// df <= 0 or NaN input.
double student_t_quantile(double p, double df);

}  // namespace attnreg
