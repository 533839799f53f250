// Regression discontinuity: the sums of the one-sided polynomial fits -- the Gram sums and
// their solution, and the equivalent-kernel weights -- unrolled for each polynomial order
// (attnreg/detail/rd_local.hpp). Every sum adds the same products in the same order as a plain
// loop with run-time bounds, so the results do not depend on which version runs.
#include <cmath>
#include <vector>

#include "attnreg/detail/rd_local.hpp"

namespace attnreg {
namespace rd {
namespace detail {

// The Gram sums G = sum_j w_j s_j s_j' (lower triangle) and RD = sum_j w_j s_j D_j' of a
// window, s_j = (1, t, ..., t^o), t = (x_j - c) / hs. The order K1 = o + 1 (and the column
// count KC, 0: any) are compile-time constants so the sums stay in registers; every sum adds
// the same products in the same order as the generic loop, so the results are the same to the
// last bit.
template <int K1, int KC>
void gram_sums(const Window& w, const std::vector<double>& wt, double hs, std::size_t k,
               double* Gout, double* RDout) {
  double G[K1 * K1] = {}, s[K1];
  double RD1[K1] = {};
  const std::size_t n = w.n();
  for (std::size_t j = 0; j < n; ++j) {
    const double wj = wt[j];
    if (wj == 0) continue;
    const double t = w.u(j) / hs;
    s[0] = 1;
    for (int a = 1; a < K1; ++a) s[a] = s[a - 1] * t;
    for (int a = 0; a < K1; ++a) {
      const double ws = wj * s[a];
      for (int b = 0; b <= a; ++b) G[a * K1 + b] += ws * s[b];
      if (KC == 1) {
        RD1[a] += ws * w.D[j];
      } else {
        for (std::size_t m = 0; m < k; ++m) RDout[a * k + m] += ws * w.D[j * k + m];
      }
    }
  }
  for (int a = 0; a < K1 * K1; ++a) Gout[a] = G[a];
  if (KC == 1)
    for (int a = 0; a < K1; ++a) RDout[a] = RD1[a];
}

template <int KC>
void gram_sums_dispatch(int k1, const Window& w, const std::vector<double>& wt, double hs,
                        std::size_t k, double* G, double* RD) {
  switch (k1) {
    case 1: return gram_sums<1, KC>(w, wt, hs, k, G, RD);
    case 2: return gram_sums<2, KC>(w, wt, hs, k, G, RD);
    case 3: return gram_sums<3, KC>(w, wt, hs, k, G, RD);
    case 4: return gram_sums<4, KC>(w, wt, hs, k, G, RD);
    case 5: return gram_sums<5, KC>(w, wt, hs, k, G, RD);
    case 6: return gram_sums<6, KC>(w, wt, hs, k, G, RD);
    case 7: return gram_sums<7, KC>(w, wt, hs, k, G, RD);
    case 8: return gram_sums<8, KC>(w, wt, hs, k, G, RD);
    case 9: return gram_sums<9, KC>(w, wt, hs, k, G, RD);
    case 10: return gram_sums<10, KC>(w, wt, hs, k, G, RD);
    case 11: return gram_sums<11, KC>(w, wt, hs, k, G, RD);
    case 12: return gram_sums<12, KC>(w, wt, hs, k, G, RD);
    default: break;
  }
  std::vector<double> s(k1);  // any order: the same sums with run-time bounds
  for (std::size_t j = 0; j < w.n(); ++j) {
    const double wj = wt[j];
    if (wj == 0) continue;
    const double t = w.u(j) / hs;
    s[0] = 1;
    for (int a = 1; a < k1; ++a) s[a] = s[a - 1] * t;
    for (int a = 0; a < k1; ++a) {
      const double ws = wj * s[a];
      for (int b = 0; b <= a; ++b) G[a * k1 + b] += ws * s[b];
      for (std::size_t m = 0; m < k; ++m) RD[a * k + m] += ws * w.D[j * k + m];
    }
  }
}

Fit poly_fit(const Window& w, const std::vector<double>& wt, int o, double hs) {
  Fit f;
  f.o = o;
  f.hs = hs;
  const int k1 = o + 1;
  const std::size_t k = w.k;
  std::vector<double> G(k1 * k1, 0.0), RD(k1 * k, 0.0);
  if (k == 1) gram_sums_dispatch<1>(k1, w, wt, hs, k, G.data(), RD.data());
  else gram_sums_dispatch<0>(k1, w, wt, hs, k, G.data(), RD.data());
  for (int a = 0; a < k1; ++a)
    for (int b = a + 1; b < k1; ++b) G[a * k1 + b] = G[b * k1 + a];
  f.Ginv = spd_inverse(G, k1, f.ok);
  f.beta.assign(k1 * k, 0.0);
  if (!f.ok) return f;
  for (int a = 0; a < k1; ++a)
    for (std::size_t m = 0; m < k; ++m) {
      double v = 0;
      for (int b = 0; b < k1; ++b) v += f.Ginv[a * k1 + b] * RD[b * k + m];
      f.beta[a * k + m] = v;
    }
  return f;
}

// Equivalent-kernel weights of coefficient `coef` (scale of (x - c)): l_j = e' Ginv s_j w_j,
// written to out (which may be wt itself: each l_j needs only its own w_j). The order K1 is a
// compile-time constant (0: any) so the row of Ginv stays in registers; the same operations
// in the same order either way.
template <int K1>
void coef_weights_impl(const Window& w, const double* wt, const Fit& f, int coef, double* out) {
  const int k1 = K1 > 0 ? K1 : f.o + 1;
  constexpr int kMax = K1 > 0 ? K1 : 1;
  double gs[kMax], ss[kMax];
  std::vector<double> gv, sv;
  double* g = gs;
  double* s = ss;
  if (K1 == 0) {
    gv.resize(k1);
    sv.resize(k1);
    g = gv.data();
    s = sv.data();
  }
  for (int b = 0; b < k1; ++b) g[b] = f.Ginv[coef * k1 + b];
  const double scale = std::pow(f.hs, -coef);
  for (std::size_t j = 0; j < w.n(); ++j) {
    const double wj = wt[j];
    if (wj == 0) {
      out[j] = 0.0;
      continue;
    }
    const double t = w.u(j) / f.hs;
    s[0] = 1;
    for (int a = 1; a < k1; ++a) s[a] = s[a - 1] * t;
    double v = 0;
    for (int b = 0; b < k1; ++b) v += g[b] * s[b];
    out[j] = v * wj * scale;
  }
}

void coef_weights_to(const Window& w, const double* wt, const Fit& f, int coef, double* out) {
  switch (f.o + 1) {
    case 1: return coef_weights_impl<1>(w, wt, f, coef, out);
    case 2: return coef_weights_impl<2>(w, wt, f, coef, out);
    case 3: return coef_weights_impl<3>(w, wt, f, coef, out);
    case 4: return coef_weights_impl<4>(w, wt, f, coef, out);
    case 5: return coef_weights_impl<5>(w, wt, f, coef, out);
    case 6: return coef_weights_impl<6>(w, wt, f, coef, out);
    default: return coef_weights_impl<0>(w, wt, f, coef, out);
  }
}

std::vector<double> coef_weights(const Window& w, const std::vector<double>& wt, const Fit& f,
                                 int coef) {
  std::vector<double> out(w.n());
  coef_weights_to(w, wt.data(), f, coef, out.data());
  return out;
}

void coef_weights_into(const Window& w, std::vector<double>& wt, const Fit& f, int coef) {
  coef_weights_to(w, wt.data(), f, coef, wt.data());
}

}  // namespace detail
}  // namespace rd
}  // namespace attnreg
