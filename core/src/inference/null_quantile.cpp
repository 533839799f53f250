// attnreg: the finite-sample critical value of a studentised linear statistic
// t = a'e / sqrt(e'Ae) under e ~ N(0, sigma^2 I) (core/include/attnreg/detail/null_quantile.hpp).
// t does not depend on sigma, so e ~ N(0, I) below; |a| = 1. With Z = a'e and
// e = Z a + e_perp, e'Ae = kappa Z^2 + 2 Z g'e_perp + e_perp' A_perp e_perp, g = (I - aa')Aa,
// A_perp = (I - aa')A(I - aa'). Given Z it is a quadratic form plus a linear term in e_perp,
// with cumulants k1 = kappa Z^2 + tr A_perp, k2 = 2 tr A_perp^2 + 4 Z^2 g'g,
// k3 = 8 tr A_perp^3 + 24 Z^2 g'A_perp g.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <boost/math/tools/toms748_solve.hpp>

#include "attnreg/base/constants.hpp"
#include "attnreg/detail/null_quantile.hpp"
#include "attnreg/inference/distributions.hpp"

namespace attnreg::detail {

namespace {

// P(e'Ae < q | Z) by Pearson's three-moment chi-square: a0 + b chi2(nu) with the cumulants
// above (Pearson 1959, Biometrika 46(3-4); the approximation that Imhof 1961, Biometrika
// 48(3-4), sets beside the exact distribution of a quadratic form in normal variables).
double conditional_cdf(const NullMoments& s, double z2, double q) {
  const double k1 = s.kappa * z2 + s.tr1, k2 = 2 * s.tr2 + 4 * z2 * s.gg,
               k3 = 8 * s.tr3 + 24 * z2 * s.gAg;
  if (!(k2 > 1e-14 * k1 * k1)) return q > k1 ? 1.0 : 0.0;  // e'Ae fixed given Z
  if (!(k3 > 1e-10 * std::pow(k2, 1.5))) return 1.0 - normal_sf((q - k1) / std::sqrt(k2));
  const double nu = 8 * k2 * k2 * k2 / (k3 * k3), b = k3 / (4 * k2), a0 = k1 - b * nu;
  return chi_squared_cdf((q - a0) / b, nu);
}

// The c with P(|t| > c) = 1 - level, cdf(z, c) = P(e'Ae < z^2 / c^2 | Z = z):
// 2 int_0^inf phi(z) cdf(z, c) dz = 1 - level, decreasing in c. Adaptive Gauss-Kronrod
// (Boost.Math) over z: with many degrees of freedom the conditional probability is close to a
// step at |z| = c, which a fixed Gauss-Hermite rule resolves badly (0.01 off in c at 400
// residual degrees of freedom); TOMS 748 (Alefeld, Potra and Shi 1995, ACM TOMS 21(3)) on a
// bracket for the root, whose values (each an adaptive quadrature) are computed once.
template <class Cdf>
double critical_value_of(Cdf cdf, double level) {
  const double phi0 = 0.3989422804014327;  // 1 / sqrt(2 pi)
  auto miss = [&](double c) {
    auto f = [&](double z) { return 2 * phi0 * std::exp(-0.5 * z * z) * cdf(z, c); };
    return boost::math::quadrature::gauss_kronrod<double, 31>::integrate(f, 0.0, 40.0, 20,
                                                                          1e-10) -
           (1 - level);
  };
  const double lo = 0.05, f_lo = miss(lo);
  double hi = 4.0, f_hi = miss(hi);
  while (f_hi > 0 && hi < 1e6) f_hi = miss(hi *= 4);
  if (!(f_lo > 0) || !(f_hi <= 0)) return kNaN;
  std::uintmax_t iters = 200;
  const auto r = boost::math::tools::toms748_solve(
      miss, lo, hi, f_lo, f_hi, boost::math::tools::eps_tolerance<double>(40), iters);
  return 0.5 * (r.first + r.second);
}

double normal_cdf(double x) { return normal_sf(-x); }

}  // namespace

// A_perp's traces from those of A: tr A_perp = t1 - k1, tr A_perp^2 = t2 - 2 k2 + k1^2,
// tr A_perp^3 = t3 - 3 k3 + 3 k1 k2 - k1^3; g'g = k2 - k1^2, g'A_perp g = k3 - 2 k1 k2 + k1^3.
// Each is >= 0 in exact arithmetic; rounding is clipped.
NullMoments null_moments_from(double k1, double k2, double k3, double t1, double t2, double t3) {
  NullMoments s;
  s.kappa = k1;
  s.gg = std::max(k2 - k1 * k1, 0.0);
  s.gAg = std::max(k3 - 2 * k1 * k2 + k1 * k1 * k1, 0.0);
  s.tr1 = std::max(t1 - k1, 0.0);
  s.tr2 = std::max(t2 - 2 * k2 + k1 * k1, 0.0);
  s.tr3 = std::max(t3 - 3 * k3 + 3 * k1 * k2 - k1 * k1 * k1, 0.0);
  return s;
}

double null_critical_value(const NullMoments& s, double level) {
  return critical_value_of(
      [&](double z, double c) {
        const double z2 = z * z;
        return conditional_cdf(s, z2, z2 / (c * c));
      },
      level);
}

}  // namespace attnreg::detail

namespace attnreg::detail {

// The eigenvalues of Sigma beyond the 48 largest (and beyond those holding all but 1e-12 of
// tr Sigma) are many and small in a smoother's variance (a Gaussian kernel's spectrum decays
// slowly); they enter as one term g chi^2_nu (non-central), the moments of their sum
// matched: nu g = sum lambda_k, nu g^2 = sum lambda_k^2 (Satterthwaite 1946, Biometrics
// Bulletin 2(6)), its non-centrality the sum of their c_k^2 (the mean exact, the variance's
// non-central part with g in place of each lambda_k). A sum of many small terms is close to
// normal, so two moments fix it; the saddlepoint sum then costs 49 terms per evaluation, not
// |S|.
NullSpectrum null_spectrum(const arma::mat& M, const arma::vec& f) {
  arma::mat Sigma = M - f * f.t();
  Sigma = 0.5 * (Sigma + Sigma.t());
  const arma::uword kept_max = 48;
  arma::vec lam;
  arma::mat V;
  NullSpectrum s;
  if (!arma::eig_sym(lam, V, Sigma)) {
    s.rho = kNaN;
    return s;
  }
  const arma::uvec order = arma::sort_index(lam, "descend");
  lam = arma::vec(lam(order));
  const arma::vec c2 = arma::square(arma::mat(V.cols(order)).t() * f);
  // the tail's sums from the totals: tr Sigma, |Sigma|_F^2, |f|^2 = sum c_k^2
  double tail1 = arma::trace(Sigma), tail2 = arma::accu(arma::square(Sigma)),
         tail_c2 = arma::dot(f, f);
  const double top = std::max(lam.n_elem ? lam(0) : 0.0, 0.0), total = tail1;
  std::vector<double> l, nu, c;
  double cum = 0;
  for (arma::uword k = 0; k < lam.n_elem && k < kept_max; ++k) {
    // rounding leaves the null eigenvalues at +-1e-16 of the largest: 0
    if (!(lam(k) > 1e-13 * top) || cum > (1 - 1e-12) * total) break;
    l.push_back(lam(k));
    nu.push_back(1);
    c.push_back(c2(k));
    cum += lam(k);
    tail1 -= lam(k);
    tail2 -= lam(k) * lam(k);
    tail_c2 -= c2(k);
  }
  // what is left of the trace after rounding (<= 1e-12 of it) is null
  if (tail1 > 1e-12 * total && tail2 > 0) {
    l.push_back(tail2 / tail1);
    nu.push_back(tail1 * tail1 / tail2);
    c.push_back(std::max(tail_c2, 0.0));
  } else {
    s.rho = std::max(tail_c2, 0.0);
  }
  s.lambda = arma::vec(l);
  s.nu = arma::vec(nu);
  s.c2 = arma::vec(c);
  return s;
}

namespace {

// P(Q < q) for Q = sum_k lambda_k chi^2_{nu_k}(b_k^2), lambda_k > 0 (non-central chi-squares
// with nu_k degrees of freedom), with delta_k = lambda_k b_k^2, by the Lugannani-Rice
// saddlepoint formula (Lugannani and Rice 1980, Adv. Appl. Prob. 12(2); for quadratic forms in
// normal variables Kuonen 1999, Biometrika 86(4)). Its error is largest where one or two terms
// dominate: against Student t the critical value comes out 0.135 of itself too large at one
// degree of freedom, 0.017 at three, below 1e-4 from twelve (tests/test_null_quantile.cpp).
// Cumulant generating function
// K(s) = sum -nu log(1 - 2 s lambda) / 2 + delta s / (1 - 2 s lambda), s < 1 / (2 lambda_max).
double quadratic_form_cdf(const arma::vec& lam, const arma::vec& nu, const arma::vec& delta,
                          double q) {
  if (!(q > 0)) return 0.0;
  const arma::uword r = lam.n_elem;
  // K'(s) and K''(s); K(s) itself (a logarithm per term) only at the saddlepoint
  auto derivs = [&](double s, double& k1, double& k2) {
    k1 = k2 = 0;
    for (arma::uword i = 0; i < r; ++i) {
      const double u = 1.0 / (1.0 - 2 * s * lam(i)), ld = lam(i) * u;
      k1 += nu(i) * ld + delta(i) * u * u;
      k2 += 2 * nu(i) * ld * ld + 4 * lam(i) * delta(i) * u * u * u;
    }
  };
  double k1, k2;
  derivs(0.0, k1, k2);
  const double mean = k1, var = k2;
  // the saddlepoint s with K'(s) = q: K' increases from 0 (s -> -inf) to +inf (the pole);
  // Newton's steps, bisection where they leave the bracket
  const double pole = 0.5 / lam(0);
  double lo, hi;
  if (q > mean) {
    lo = 0;
    hi = pole;
  } else {
    hi = 0;
    lo = -pole;
    for (derivs(lo, k1, k2); k1 > q; derivs(lo, k1, k2)) lo *= 4;
  }
  double s = q > mean ? std::min(0.5 * pole, (q - mean) / var) : std::max(lo, (q - mean) / var);
  for (int it = 0; it < 200; ++it) {
    derivs(s, k1, k2);
    if (k1 > q) hi = s; else lo = s;
    double next = s - (k1 - q) / k2;
    if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
    const bool done = std::abs(next - s) <= 1e-13 * (std::abs(s) + 1.0 / lam(0));
    s = next;
    if (done) break;
  }
  derivs(s, k1, k2);
  double k0 = 0;
  for (arma::uword i = 0; i < r; ++i)
    k0 += -0.5 * nu(i) * std::log1p(-2 * s * lam(i)) + delta(i) * s / (1.0 - 2 * s * lam(i));
  const double w2 = 2 * (s * q - k0);
  if (std::abs(s) * std::sqrt(var) < 1e-5 || !(w2 > 0)) {
    // at the mean the formula's two terms cancel; its limit is 1/2 + k3 / (6 sqrt(2 pi) k2^1.5)
    double k3 = 0;
    for (arma::uword i = 0; i < r; ++i)
      k3 += 8 * nu(i) * std::pow(lam(i), 3) + 24 * lam(i) * lam(i) * delta(i);
    return std::clamp(normal_cdf((q - mean) / std::sqrt(var)) +
                          k3 / (6 * 2.5066282746310002 * std::pow(var, 1.5)),
                      0.0, 1.0);
  }
  const double w = (s > 0 ? 1.0 : -1.0) * std::sqrt(w2), u = s * std::sqrt(k2);
  return std::clamp(normal_cdf(w) + std::exp(-0.5 * w2) / 2.5066282746310002 * (1 / w - 1 / u),
                    0.0, 1.0);
}

}  // namespace

double null_critical_value(const NullSpectrum& s, double level) {
  if (!std::isfinite(s.rho)) return kNaN;
  arma::vec delta(s.lambda.n_elem);
  return critical_value_of(
      [&](double z, double c) {
        const double z2 = z * z, q = z2 / (c * c) - s.rho * z2;
        if (s.lambda.is_empty()) return q > 0 ? 1.0 : 0.0;
        delta = s.c2 * z2;
        return quadratic_form_cdf(s.lambda, s.nu, delta, q);
      },
      level);
}

}  // namespace attnreg::detail
