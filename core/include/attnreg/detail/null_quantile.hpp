// attnreg: the critical value of a studentised linear statistic t = a'e / sqrt(e'Ae) under
// e ~ N(0, sigma^2 I) (internal; used by the local residual variance,
// core/src/inference/local_variance.cpp, and the robust variances' finite-sample critical
// values, core/src/inference/robust_null.cpp). Formulas in core/src/inference/null_quantile.cpp.
#pragma once

namespace attnreg::detail {

// The moments that fix the distribution of t, with |a| = 1: kappa = a'Aa, and for the
// quadratic form plus linear term that e'Ae is given Z = a'e, gg = g'g and gAg = g'A_perp g
// (g = (I - aa')Aa) and the traces of A_perp = (I - aa')A(I - aa') and its square and cube.
struct NullMoments {
  double kappa, gg, gAg, tr1, tr2, tr3;
};

// NullMoments from k_j = a'A^j a (j = 1, 2, 3) and the traces t_j = tr A^j.
NullMoments null_moments_from(double k1, double k2, double k3, double t1, double t2, double t3);

// The c with P(|t| > c) = 1 - level; NaN when the null is degenerate (no root).
double null_critical_value(const NullMoments& s, double level);

}  // namespace attnreg::detail

#include "attnreg/base/arma.hpp"

namespace attnreg::detail {

// The same null from the spectrum of the variance's quadratic form: with Y = F e (F the
// variance's factor, e'Ae = |Y|^2) and Z = a'e, Y given Z is N(f Z, Sigma), f = F a,
// Sigma = F F' - f f' = V diag(lambda) V'; with c = V'f,
// e'Ae given Z = z is rho z^2 + sum_k lambda_k (xi_k + c_k z / sqrt(lambda_k))^2 over the
// lambda_k > 0 (xi ~ N(0, I); rho = sum of c_k^2 over the null eigenvalues), a non-central
// quadratic form whose distribution the saddlepoint approximation gives in both tails
// (null_quantile.cpp).
struct NullSpectrum {
  // the terms lambda_k (xi_k + c_k z / sqrt(lambda_k))^2 kept exactly: the largest eigenvalues
  // (descending) with multiplicity nu_k = 1 and c2_k = c_k^2, and a last term standing for all
  // the smaller ones (null_spectrum)
  arma::vec lambda, nu, c2;
  double rho = 0;  // sum of c_k^2 over the eigenvalues that are 0
};

// NullSpectrum of Sigma = M - f f' (M = F F', symmetric positive semi-definite).
NullSpectrum null_spectrum(const arma::mat& M, const arma::vec& f);

// The c with P(|t| > c) = 1 - level, t = Z / sqrt(e'Ae); NaN when there is none.
double null_critical_value(const NullSpectrum& s, double level);

}  // namespace attnreg::detail
