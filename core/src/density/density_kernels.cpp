#include "attnreg/detail/density_kernels.hpp"

#include <algorithm>
#include <cmath>

#include "attnreg/kernels/kernel_pairs.hpp"  // ATTNREG_SIMD_CLONES

// Inlined into the cloned callers, so that their loops get the callers' instruction sets.
#if defined(__GNUC__)
#define ATTNREG_DENSITY_INLINE __attribute__((always_inline)) inline
#else
#define ATTNREG_DENSITY_INLINE inline
#endif

namespace attnreg {
namespace density_detail {

namespace {

constexpr double kInv2SqrtPi = 0.28209479177387814347;  // 1 / (2 sqrt(pi))

// Gaussian pdf-mode column: f = phi(u) / h, df = f (u^2 - 1), u = (q - t) / h. Compiled for
// AVX-512, AVX2 and the baseline (kernel_pairs.hpp).
ATTNREG_SIMD_CLONES void gauss_pdf(double q, const double* t, std::size_t m, double ih, double* f,
                                   double* df) {
  const double c = 0.39894228040143267794 * ih;
  if (df) {
#pragma omp simd
    for (std::size_t b = 0; b < m; ++b) {
      const double u = (q - t[b]) * ih;
      const double v = c * kernel_detail::exp_nonpositive(-0.5 * u * u);
      f[b] = v;
      df[b] = v * (u * u - 1.0);
    }
  } else {
#pragma omp simd
    for (std::size_t b = 0; b < m; ++b) {
      const double u = (q - t[b]) * ih;
      f[b] = c * kernel_detail::exp_nonpositive(-0.5 * u * u);
    }
  }
}

// Gaussian conv-mode column: Kbar(u) = exp(-u^2/4) / (2 sqrt(pi)), f = Kbar / h,
// df = f (u^2/2 - 1).
ATTNREG_SIMD_CLONES void gauss_conv(double q, const double* t, std::size_t m, double ih, double* f,
                                    double* df) {
  const double c = kInv2SqrtPi * ih;
  if (df) {
#pragma omp simd
    for (std::size_t b = 0; b < m; ++b) {
      const double u = (q - t[b]) * ih;
      const double v = c * kernel_detail::exp_nonpositive(-0.25 * u * u);
      f[b] = v;
      df[b] = v * (0.5 * u * u - 1.0);
    }
  } else {
#pragma omp simd
    for (std::size_t b = 0; b < m; ++b) {
      const double u = (q - t[b]) * ih;
      f[b] = c * kernel_detail::exp_nonpositive(-0.25 * u * u);
    }
  }
}

}  // namespace

ATTNREG_SIMD_CLONES void gauss_pairs_ml(double ya, double ca, const double* y, const double* c,
                                        std::size_t m, double ih, bool der, double* row,
                                        double* col, std::size_t stride) {
  double s0 = 0.0, s1 = 0.0;
  double* c0 = col;
  if (der) {
    double* c1 = col + stride;
#pragma omp simd reduction(+ : s0, s1)
    for (std::size_t b = 0; b < m; ++b) {
      const double u = (ya - y[b]) * ih, w = u * u;
      const double e = kernel_detail::exp_nonpositive(-0.5 * w);
      const double de = e * (w - 1.0);
      s0 += c[b] * e;
      s1 += c[b] * de;
      c0[b] += ca * e;
      c1[b] += ca * de;
    }
  } else {
#pragma omp simd reduction(+ : s0)
    for (std::size_t b = 0; b < m; ++b) {
      const double u = (ya - y[b]) * ih;
      const double e = kernel_detail::exp_nonpositive(-0.5 * u * u);
      s0 += c[b] * e;
      c0[b] += ca * e;
    }
  }
  row[0] += s0;
  row[1] += s1;
}

ATTNREG_SIMD_CLONES void gauss_pairs_ls(double ya, double ca, const double* y, const double* c,
                                        std::size_t m, double ih, bool der, double* row,
                                        double* col, std::size_t stride) {
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  double *c0 = col, *c2 = col + 2 * stride;
  if (der) {
    double *c1 = col + stride, *c3 = col + 3 * stride;
#pragma omp simd reduction(+ : s0, s1, s2, s3)
    for (std::size_t b = 0; b < m; ++b) {
      const double u = (ya - y[b]) * ih, w = u * u;
      const double v = kernel_detail::exp_nonpositive(-0.25 * w);
      const double e = -0.5 * w < -708.0 ? 0.0 : v * v;  // exp(-w/2), as exp_nonpositive
      const double de = e * (w - 1.0), dv = v * (0.5 * w - 1.0);
      s0 += c[b] * e;
      s1 += c[b] * de;
      s2 += c[b] * v;
      s3 += c[b] * dv;
      c0[b] += ca * e;
      c1[b] += ca * de;
      c2[b] += ca * v;
      c3[b] += ca * dv;
    }
  } else {
#pragma omp simd reduction(+ : s0, s2)
    for (std::size_t b = 0; b < m; ++b) {
      const double u = (ya - y[b]) * ih, w = u * u;
      const double v = kernel_detail::exp_nonpositive(-0.25 * w);
      const double e = -0.5 * w < -708.0 ? 0.0 : v * v;
      s0 += c[b] * e;
      s2 += c[b] * v;
      c0[b] += ca * e;
      c2[b] += ca * v;
    }
  }
  row[0] += s0;
  row[1] += s1;
  row[2] += s2;
  row[3] += s3;
}

ATTNREG_SIMD_CLONES double row_col_update(const double* w, const double* c, std::size_t m,
                                           double ca, double* col) {
  double s = 0.0;
#pragma omp simd reduction(+ : s)
  for (std::size_t b = 0; b < m; ++b) {
    s += c[b] * w[b];
    col[b] += ca * w[b];
  }
  return s;
}

ATTNREG_SIMD_CLONES double dot(const double* x, const double* y, std::size_t T) {
  double s = 0.0;
#pragma omp simd reduction(+ : s)
  for (std::size_t t = 0; t < T; ++t) s += x[t] * y[t];
  return s;
}

ATTNREG_SIMD_CLONES void mix_columns4(const double* M, std::size_t ld, std::size_t T,
                                      const double* P, std::size_t G, std::size_t g0,
                                      double* out, std::size_t ldo) {
  constexpr std::size_t kChunk = 512;
  const std::size_t ng = std::min<std::size_t>(4, G - g0);
  double pad[kChunk];  // stands in for the missing outputs when fewer than 4 remain
  for (std::size_t t0 = 0; t0 < T; t0 += kChunk) {
    const std::size_t m = std::min(T, t0 + kChunk) - t0;
    double* o[4];
    for (std::size_t k = 0; k < 4; ++k) {
      o[k] = k < ng ? out + k * ldo + t0 : pad;
      std::fill(o[k], o[k] + m, 0.0);
    }
    for (std::size_t h = 0; h < G; ++h) {
      // The own column gets the coefficient 0: adding 0 * W leaves each sum as it is, so every
      // output is the sum over h != g in the order h = 0, 1, ...
      double cf[4];
      for (std::size_t k = 0; k < 4; ++k)
        cf[k] = k < ng && h != g0 + k ? P[(g0 + k) * G + h] : 0.0;
      const double* x = M + h * ld + t0;
      double *a = o[0], *b = o[1], *c = o[2], *d = o[3];
#pragma omp simd
      for (std::size_t t = 0; t < m; ++t) {
        const double w = x[t];
        a[t] += cf[0] * w;
        b[t] += cf[1] * w;
        c[t] += cf[2] * w;
        d[t] += cf[3] * w;
      }
    }
  }
}

ATTNREG_SIMD_CLONES void axpy(double a, const double* x, std::size_t T, double* out) {
#pragma omp simd
  for (std::size_t t = 0; t < T; ++t) out[t] += a * x[t];
}

namespace {
// dist_row over [t0, t1) with the indicator fixed at I (0 or 1) and G(y_t | Y_r) read from
// Gr[t] (dGr[t]), or, when Gr is null, equal to the constant gc there (dG = 0).
ATTNREG_DENSITY_INLINE void dist_range(
    double I, std::size_t t0, std::size_t t1, const double* m, const double* Ag,
    const double* Wg, const double* Gr, double gc, double s, double iden, const double* dAy,
    const double* dWg, const double* dGr, double* me, double* acc) {
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  if (dWg && Gr) {
#pragma omp simd reduction(+ : s0, s1, s2, s3)
    for (std::size_t t = t0; t < t1; ++t) {
      const double dg = Wg[t] - Gr[t];
      const double F = (Ag[t] + s * dg) * iden;
      const double e = I - F, w = m[t] * e;
      s0 += w * e;
      s1 += w * dg;
      s2 += w * F;
      s3 += w * (dAy[t] + s * (dWg[t] - dGr[t]));
      me[t] = w;
    }
  } else if (dWg) {
#pragma omp simd reduction(+ : s0, s1, s2, s3)
    for (std::size_t t = t0; t < t1; ++t) {
      const double dg = Wg[t] - gc;
      const double F = (Ag[t] + s * dg) * iden;
      const double e = I - F, w = m[t] * e;
      s0 += w * e;
      s1 += w * dg;
      s2 += w * F;
      s3 += w * (dAy[t] + s * dWg[t]);
      me[t] = w;
    }
  } else if (Gr) {
#pragma omp simd reduction(+ : s0)
    for (std::size_t t = t0; t < t1; ++t) {
      const double F = (Ag[t] + s * (Wg[t] - Gr[t])) * iden;
      const double e = I - F;
      s0 += m[t] * e * e;
    }
  } else {
#pragma omp simd reduction(+ : s0)
    for (std::size_t t = t0; t < t1; ++t) {
      const double F = (Ag[t] + s * (Wg[t] - gc)) * iden;
      const double e = I - F;
      s0 += m[t] * e * e;
    }
  }
  acc[0] += s0;
  acc[1] += s1;
  acc[2] += s2;
  acc[3] += s3;
}
}  // namespace

ATTNREG_SIMD_CLONES void dist_row(std::size_t T, std::size_t tr, std::size_t lo, std::size_t hi,
                                  const double* m, const double* Ag, const double* Wg,
                                  const double* Gb, double s, double iden, const double* dAy,
                                  const double* dWg, const double* dGb, double* me, double* out) {
  double acc[4] = {0.0, 0.0, 0.0, 0.0};
  const double* Gr = Gb - lo;  // Gr[t] for t in [lo, hi]
  const double* dGr = dGb ? dGb - lo : nullptr;
  dist_range(0.0, 0, lo, m, Ag, Wg, nullptr, 0.0, s, iden, dAy, dWg, nullptr, me, acc);
  dist_range(0.0, lo, tr, m, Ag, Wg, Gr, 0.0, s, iden, dAy, dWg, dGr, me, acc);
  dist_range(1.0, tr, hi + 1, m, Ag, Wg, Gr, 0.0, s, iden, dAy, dWg, dGr, me, acc);
  dist_range(1.0, hi + 1, T, m, Ag, Wg, nullptr, 1.0, s, iden, dAy, dWg, nullptr, me, acc);
  for (int q = 0; q < 4; ++q) out[q] = acc[q];
}

// Phi(a) on [-8.5, 0] by Taylor series about the nodes a_j = -j / 256 (j = 0 .. 2176):
// Phi(a_j + d) = sum_{k=0}^{7} c_{j,k} d^k, |d| <= 1/512, with c_{j,0} = Phi(a_j) (libm erfc)
// and c_{j,k} = Phi^(k)(a_j) / k! = (-1)^(k-1) He_{k-1}(a_j) phi(a_j) / k! (He the Hermite
// polynomials). Lagrange remainder: |R| <= max |He_7| phi d^8 / 8! <= 2.4e6 * 1.02 phi(a)
// * 2.1e-22 / 40320 = 1.3e-20 phi(a), i.e. below 1.2e-19 Phi(a) on the whole range (Mills'
// ratio Phi(a) >= phi(a) |a| / (1 + a^2)); the terms fall by a factor >= 30 each, so the
// Horner sum adds about one rounding to c_{j,0}'s. Measured against 40-digit values: absolute
// error below 7e-17, and within 2e-14 relative (1.2e-16 absolute) of kcdf's 0.5 erfc(-a/sqrt 2)
// on [-8.5, 0] (both formulas inherit the rounding of a: relative error up to ~2 x^2 ulp at
// x = -a/sqrt 2). Branch-free, vectorised by the compiler (gathers); d = a - a_j is exact
// (Sterbenz). Cheaper than libm's erfc and than SLEEF's vectorised one: npcdist's cv_ls on
// Italy took 0.38 s with it against 0.49 s with SLEEF's erfc (and 0.79 s with libm's, measured
// one change earlier).
namespace {
struct PhiTable {
  static constexpr int kPerUnit = 256;
  static constexpr int kNodes = 8 * 256 + 128 + 1;  // a_j down to -8.5
  static constexpr int kTerms = 8;
  std::vector<double> c;  // kTerms x kNodes, coefficient-major
  PhiTable() : c(static_cast<std::size_t>(kTerms) * kNodes) {
    for (int j = 0; j < kNodes; ++j) {
      const double a = -static_cast<double>(j) / kPerUnit;
      const double phi = 0.39894228040143267794 * std::exp(-0.5 * a * a);
      c[j] = 0.5 * std::erfc(-a * 0.70710678118654752440);
      double hm = 0.0, h = 1.0, fact = 1.0;  // He_{k-2}, He_{k-1}, k!
      for (int k = 1; k < kTerms; ++k) {
        fact *= k;
        c[static_cast<std::size_t>(k) * kNodes + j] = ((k - 1) % 2 == 0 ? 1.0 : -1.0) * h * phi / fact;
        const double next = a * h - (k - 1) * hm;  // He_k = a He_{k-1} - (k-1) He_{k-2}
        hm = h;
        h = next;
      }
    }
  }
};
const PhiTable& phi_table() {
  static const PhiTable t;
  return t;
}

ATTNREG_SIMD_CLONES void phi_band(const double* y, std::size_t m, double ys, double ih,
                                  const double* c, bool der, double* G, double* dG) {
  constexpr int N = PhiTable::kNodes;
  const double *c0 = c, *c1 = c + N, *c2 = c + 2 * N, *c3 = c + 3 * N, *c4 = c + 4 * N,
               *c5 = c + 5 * N, *c6 = c + 6 * N, *c7 = c + 7 * N;
#pragma omp simd
  for (std::size_t t = 0; t < m; ++t) {
    const double a = (y[t] - ys) * ih;  // in [-8.5, 0]
    double x = -a * PhiTable::kPerUnit + 0.5;
    x = x < 0.0 ? 0.0 : (x > N - 1 ? N - 1 : x);
    const int j = static_cast<int>(x);
    const double d = a + static_cast<double>(j) / PhiTable::kPerUnit;
    double p = c7[j];
    p = p * d + c6[j];
    p = p * d + c5[j];
    p = p * d + c4[j];
    p = p * d + c3[j];
    p = p * d + c2[j];
    p = p * d + c1[j];
    G[t] = p * d + c0[j];
  }
  if (der) {
#pragma omp simd
    for (std::size_t t = 0; t < m; ++t) {
      const double a = (y[t] - ys) * ih;
      dG[t] = -a * (0.39894228040143267794 * kernel_detail::exp_nonpositive(-0.5 * a * a));
    }
  }
}
}  // namespace

void gauss_cdf_band(const double* y, std::size_t m, double ys, double ih, bool der, double* G,
                    double* dG) {
  phi_band(y, m, ys, ih, phi_table().c.data(), der, G, dG);
}

double kdens(const Kernel& k, double u) {
  return dispatch_kernel(k.type, [u](auto K) { return decltype(K)::pdf(u); });
}

double kderiv(const Kernel& k, double u) {
  return dispatch_kernel(k.type, [u](auto K) { return decltype(K)::deriv(u); });
}

double kcdf(const Kernel& k, double u) {
  return dispatch_kernel(k.type, [u](auto K) { return decltype(K)::cdf(u); });
}

double kconv(const Kernel& k, double t, double* deriv) {
  return dispatch_kernel(k.type, [t, deriv](auto K) { return decltype(K)::conv(t, deriv); });
}

double cat_deriv(const CategoricalKernel& ck, double x, double xi, double lambda, int n_levels) {
  const double dist = std::abs(x - xi);
  switch (ck.type) {
    case CategoricalKernelType::aitchison_aitken:
      return dist == 0.0 ? -1.0 : (n_levels > 1 ? 1.0 / (n_levels - 1) : 0.0);
    case CategoricalKernelType::li_racine_unordered: return dist == 0.0 ? 0.0 : 1.0;
    case CategoricalKernelType::wang_van_ryzin:
      if (dist == 0.0) return -1.0;
      return 0.5 * (-std::pow(lambda, dist) + (1.0 - lambda) * dist * std::pow(lambda, dist - 1.0));
    case CategoricalKernelType::li_racine_ordered:
      return dist == 0.0 ? 0.0 : dist * std::pow(lambda, dist - 1.0);
    case CategoricalKernelType::li_racine_normalized: {
      // d/dlambda lambda^d (1 - lambda) / (1 + lambda)
      //   = lambda^(d-1) (d (1 - lambda^2) - 2 lambda) / (1 + lambda)^2  (d >= 1; -2/(1+l)^2 at 0)
      const double s2 = (1.0 + lambda) * (1.0 + lambda);
      if (dist == 0.0) return -2.0 / s2;
      return std::pow(lambda, dist - 1.0) * (dist * (1.0 - lambda * lambda) - 2.0 * lambda) / s2;
    }
  }
  return 0.0;
}

namespace {

// The normalised Li-Racine kernel l(z, t) = lambda^|z - t| (1 - lambda) / (1 + lambda) summed
// over all integers z (it is a probability mass function on the integers for each t; kernel.hpp),
// in closed form (geometric series), with the derivatives in lambda:
//   cdf   G(a | t) = sum_{z <= a} l(z, t) = lambda^(t - a) / (1 + lambda)          (a < t)
//                                        = 1 - lambda^(a - t + 1) / (1 + lambda)  (a >= t)
//   conv  sum_z l(z, a) l(z, b) = lambda^d [(1 - lambda)(1 + lambda^2) / (1 + lambda)^3
//                                           + d (1 - lambda)^2 / (1 + lambda)^2],  d = |a - b|
// (the terms with z between a and b give (d + 1) lambda^d, each side beyond them
// lambda^d lambda^2 / (1 - lambda^2)). These are R np's cdf and convolution forms of its
// "nliracine" kernel (np 0.70-4, src/jksum.c), derived here from the definition.
double nlr_cdf(double a, double t, double lambda, double* deriv) {
  const double s = 1.0 + lambda;
  if (a < t) {
    const double d = t - a;  // >= 1
    const double p = std::pow(lambda, d - 1.0);
    if (deriv) *deriv = p * (d * s - lambda) / (s * s);
    return p * lambda / s;
  }
  const double e = a - t + 1.0;  // >= 1
  const double p = std::pow(lambda, e - 1.0);
  if (deriv) *deriv = -p * (e * s - lambda) / (s * s);
  return 1.0 - p * lambda / s;
}

double nlr_conv(double a, double b, double lambda, double* deriv) {
  const double d = std::abs(a - b), s = 1.0 + lambda, m = 1.0 - lambda;
  const double N = m * (1.0 + lambda * lambda);           // (1 - l)(1 + l^2)
  const double dN = -1.0 + 2.0 * lambda - 3.0 * lambda * lambda;
  const double P = N / (s * s * s), Q = m * m / (s * s);
  const double dP = (dN * s - 3.0 * N) / (s * s * s * s), dQ = -4.0 * m / (s * s * s);
  const double ld = d == 0.0 ? 1.0 : std::pow(lambda, d);
  if (deriv) {
    const double dld = d == 0.0 ? 0.0 : d * std::pow(lambda, d - 1.0);
    *deriv = dld * (P + d * Q) + ld * (dP + d * dQ);
  }
  return ld * (P + d * Q);
}

}  // namespace

ColumnState make_state(const Column& col, Mode mode, double bw, bool derivs) {
  ColumnState st;
  st.mode = mode;
  st.bw = bw;
  if (col.continuous()) return st;
  const int L = col.n_levels();
  st.L = L;
  const std::vector<double>& lv = col.levels;
  auto l = [&](int a, int b) { return col.ck(lv[a], lv[b], bw, L); };
  auto dl = [&](int a, int b) { return cat_deriv(col.ck, lv[a], lv[b], bw, L); };
  if (mode == Mode::pdf) {
    st.tab.resize(static_cast<std::size_t>(L) * L);
    if (derivs) st.dtab.resize(st.tab.size());
    for (int a = 0; a < L; ++a)
      for (int b = 0; b < L; ++b) {
        st.tab[a * L + b] = l(a, b);
        if (derivs) st.dtab[a * L + b] = dl(a, b);
      }
  } else if (mode == Mode::cdf && col.ck.type == CategoricalKernelType::li_racine_normalized) {
    // Row a: query with a levels <= it, i.e. at level a - 1 (queries are first added to the
    // levels, at their integer part; row 0 stands for the integer below the lowest level). The
    // sum runs over all integers, not only the levels.
    st.tab.assign(static_cast<std::size_t>(L + 1) * L, 0.0);
    if (derivs) st.dtab.assign(st.tab.size(), 0.0);
    for (int a = 0; a <= L; ++a)
      for (int b = 0; b < L; ++b) {
        const double za = a == 0 ? lv[0] - 1.0 : lv[a - 1];
        double dv = 0.0;
        st.tab[a * L + b] = nlr_cdf(za, lv[b], bw, derivs ? &dv : nullptr);
        if (derivs) st.dtab[a * L + b] = dv;
      }
  } else if (mode == Mode::conv && col.ck.type == CategoricalKernelType::li_racine_normalized) {
    st.tab.assign(static_cast<std::size_t>(L) * L, 0.0);
    if (derivs) st.dtab.assign(st.tab.size(), 0.0);
    for (int a = 0; a < L; ++a)
      for (int b = 0; b < L; ++b) {
        double dv = 0.0;
        st.tab[a * L + b] = nlr_conv(lv[a], lv[b], bw, derivs ? &dv : nullptr);
        if (derivs) st.dtab[a * L + b] = dv;
      }
  } else if (mode == Mode::cdf) {
    // Row a: query with a levels <= it (a = 0: below every level).
    st.tab.assign(static_cast<std::size_t>(L + 1) * L, 0.0);
    if (derivs) st.dtab.assign(st.tab.size(), 0.0);
    for (int a = 1; a <= L; ++a)
      for (int b = 0; b < L; ++b) {
        st.tab[a * L + b] = st.tab[(a - 1) * L + b] + l(a - 1, b);
        if (derivs) st.dtab[a * L + b] = st.dtab[(a - 1) * L + b] + dl(a - 1, b);
      }
  } else {
    st.tab.assign(static_cast<std::size_t>(L) * L, 0.0);
    if (derivs) st.dtab.assign(st.tab.size(), 0.0);
    for (int a = 0; a < L; ++a)
      for (int b = 0; b < L; ++b) {
        double s = 0.0, ds = 0.0;
        for (int z = 0; z < L; ++z) {
          s += l(z, a) * l(z, b);
          if (derivs) ds += dl(z, a) * l(z, b) + l(z, a) * dl(z, b);
        }
        st.tab[a * L + b] = s;
        if (derivs) st.dtab[a * L + b] = ds;
      }
  }
  return st;
}

void eval_column(const Column& col, const Kernel& k, const ColumnState& st, double q,
                 const double* t, std::size_t m, double* f, double* df) {
  if (!col.continuous()) {
    const std::size_t row = static_cast<std::size_t>(q) * static_cast<std::size_t>(st.L);
    const double* tr = st.tab.data() + row;
    for (std::size_t b = 0; b < m; ++b) f[b] = tr[static_cast<std::size_t>(t[b])];
    if (df) {
      const double* dr = st.dtab.data() + row;
      for (std::size_t b = 0; b < m; ++b) df[b] = dr[static_cast<std::size_t>(t[b])];
    }
    return;
  }
  const double h = st.bw, ih = 1.0 / h;
  switch (st.mode) {
    case Mode::pdf:
      if (k.type == KernelType::gaussian) {
        gauss_pdf(q, t, m, ih, f, df);
      } else {
        for (std::size_t b = 0; b < m; ++b) {
          const double u = (q - t[b]) * ih;
          const double v = k(u);
          f[b] = v * ih;
          if (df) df[b] = -(v + u * kderiv(k, u)) * ih;
        }
      }
      return;
    case Mode::cdf:
      for (std::size_t b = 0; b < m; ++b) {
        const double u = (q - t[b]) * ih;
        f[b] = kcdf(k, u);
        if (df) df[b] = -u * kdens(k, u);
      }
      return;
    case Mode::conv:
      if (k.type == KernelType::gaussian) {
        gauss_conv(q, t, m, ih, f, df);
        return;
      }
      for (std::size_t b = 0; b < m; ++b) {
        const double u = (q - t[b]) * ih;
        double d = 0.0;
        const double v = kconv(k, u, df ? &d : nullptr);
        f[b] = v * ih;
        if (df) df[b] = -(v + u * d) * ih;
      }
      return;
  }
}

void eval_column_cdf_reversed(const Column& col, const Kernel& k, const ColumnState& st,
                              double t, const double* q, std::size_t m, double* f, double* df) {
  if (!col.continuous()) {
    const std::size_t L = static_cast<std::size_t>(st.L), tc = static_cast<std::size_t>(t);
    for (std::size_t a = 0; a < m; ++a) {
      const std::size_t row = static_cast<std::size_t>(q[a]) * L + tc;
      f[a] = st.tab[row];
      if (df) df[a] = st.dtab[row];
    }
    return;
  }
  const double ih = 1.0 / st.bw;
  for (std::size_t a = 0; a < m; ++a) {
    const double u = (q[a] - t) * ih;
    f[a] = kcdf(k, u);
    if (df) df[a] = -u * kdens(k, u);
  }
}

double self_value(const Column& col, const Kernel& k, const ColumnState& st, double q,
                  double* deriv) {
  if (!col.continuous()) {
    const std::size_t i = static_cast<std::size_t>(q) * static_cast<std::size_t>(st.L) +
                          static_cast<std::size_t>(q);
    if (deriv) *deriv = st.dtab[i];
    return st.tab[i];
  }
  const double v = k.constant() / st.bw;
  if (deriv) *deriv = -v;
  return v;
}

}  // namespace density_detail
}  // namespace attnreg
