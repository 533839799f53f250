// The manipulation test of an RD design (attnreg/rd/rddensity.hpp): local polynomial density
// estimators on each side of the cutoff (Cattaneo, Jansson and Ma 2020, JASA 115(531)), their
// jackknife variances, the rdpackages bandwidth rules and the binomial window tests.
#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "attnreg/base/error.hpp"
#include "attnreg/detail/rddensity_internal.hpp"
#include "attnreg/rd/rddensity.hpp"

namespace attnreg {
namespace rd {
namespace {

using dens::chol_solve;
using dens::Fit;
using dens::kern;
using dens::kmoment;

// One side's normal equations in u = x/h: S (d x d), the weighted design rows are W u^k.
// X: window rows sorted, centred (left rows [lo, hi) all < 0 or all >= 0); Y: the ECDF.
void side_fit(const double* X, const double* Y, std::size_t lo, std::size_t hi, double h, int p,
              RdKernel k, std::vector<double>& beta, std::vector<double>& a1,
              const char* side) {
  const int d = p + 1;
  std::vector<double> S(d * d, 0.0), r(d, 0.0), pw(2 * d);
  for (std::size_t i = lo; i < hi; ++i) {
    const double u = X[i] / h, w = kern(k, u) / h;
    pw[0] = w;
    for (int j = 1; j < 2 * d; ++j) pw[j] = pw[j - 1] * u;
    for (int a = 0; a < d; ++a) {
      r[a] += pw[a] * Y[i];
      for (int b = 0; b <= a; ++b) S[a * d + b] += pw[a + b];
    }
  }
  for (int a = 0; a < d; ++a)
    for (int b = a + 1; b < d; ++b) S[a * d + b] = S[b * d + a];
  beta = r;
  a1.assign(d, 0.0);
  a1[1] = 1.0;
  if (!chol_solve(S, beta, d) || !chol_solve(S, a1, d)) {
    std::ostringstream m;
    m << "rddensity: the local polynomial fit of order " << p << " " << side
      << " of the cutoff is singular (" << (hi - lo)
      << " rows in the window): use a larger bandwidth h or a smaller p";
    throw InvalidArgument(m.str());
  }
}

// The density fit of order p on the window (Cattaneo, Jansson and Ma 2020, eq. (2)-(3)) and its
// jackknife variance (their section 3.2, as rddensity computes it: row i's influence is the sum
// of the weighted design over the rows after it, or after its tie group's first row).
Fit density_fit(const double* X, const double* Y, std::size_t nh, std::size_t nlh,
                std::size_t n, double hl, double hr, int p, int s, RdKernel k, bool mass) {
  std::vector<double> bl, br, al, ar;
  side_fit(X, Y, 0, nlh, hl, p, k, bl, al, "left");
  side_fit(X, Y, nlh, nh, hr, p, k, br, ar, "right");
  Fit f;
  f.hat[0] = bl[1] / hl;
  f.hat[1] = br[1] / hr;
  f.hat[2] = f.hat[1] - f.hat[0];
  f.hat[3] = f.hat[1] + f.hat[0];
  f.s[0] = bl[s] / std::pow(hl, s);
  f.s[1] = br[s] / std::pow(hr, s);
  f.s[2] = f.s[1] - f.s[0];
  f.s[3] = f.s[1] + f.s[0];
  // g_i = sum_k W_i u_i^k a_k: each row's contribution to the slope's influence function.
  std::vector<double> g(nh);
  for (std::size_t i = 0; i < nh; ++i) {
    const bool left = i < nlh;
    const double h = left ? hl : hr;
    const std::vector<double>& a = left ? al : ar;
    const double u = X[i] / h;
    double t = 0.0, pk = kern(k, u) / h;
    for (int j = 0; j <= p; ++j) {
      t += pk * a[j];
      pk *= u;
    }
    g[i] = t;
  }
  // Exclusive tail sums per side: T_i = sum_{j > i, same side} g_j; with mass points every row of
  // a tie group takes the value of the group's first row.
  std::vector<double> T(nh);
  auto tails = [&](std::size_t lo, std::size_t hi) {
    double acc = 0.0;
    for (std::size_t i = hi; i-- > lo;) {
      T[i] = acc;
      acc += g[i];
    }
    if (mass) {
      std::size_t i = lo;
      while (i < hi) {
        std::size_t j = i + 1;
        while (j < hi && X[j] == X[i]) ++j;
        for (std::size_t m = i + 1; m < j; ++m) T[m] = T[i];
        i = j;
      }
    }
    return acc;
  };
  tails(0, nlh);
  const double R = tails(nlh, nh);  // every left row precedes all right rows
  double sll = 0.0, slr = 0.0, srr = 0.0;
  for (std::size_t i = 0; i < nlh; ++i) {
    sll += T[i] * T[i];
    slr += T[i];
  }
  for (std::size_t i = nlh; i < nh; ++i) srr += T[i] * T[i];
  const double n1 = static_cast<double>(n - 1);
  const double vll = sll / (n1 * n1 * hl * hl);
  const double vrr = (srr + static_cast<double>(nlh) * R * R) / (n1 * n1 * hr * hr);
  const double vlr = slr * R / (n1 * n1 * hl * hr);
  f.jk[0] = vll;
  f.jk[1] = vrr;
  f.jk[2] = vll + vrr - 2.0 * vlr;
  f.jk[3] = vll + vrr + 2.0 * vlr;
  for (double& v : f.pl) v = std::nan("");
  return f;
}

double hermite(double x, int p) {  // probabilists' Hermite polynomial He_p
  double a = 1.0, b = x;
  if (p == 0) return a;
  for (int k = 1; k < p; ++k) {
    const double c = x * b - k * a;
    a = b;
    b = c;
  }
  return b;
}

double norm_pdf(double z) { return std::exp(-0.5 * z * z) / std::sqrt(2.0 * M_PI); }

double median3(double a, double b, double c) {
  return std::max(std::min(a, b), std::min(std::max(a, b), c));
}

// k-th smallest (1-based, clamped to [1, size]) of a sorted-ascending range.
double kth(const std::vector<double>& v, std::size_t k) {
  if (v.empty()) return 0.0;
  k = std::min(std::max<std::size_t>(k, 1), v.size());
  return v[k - 1];
}

}  // namespace

double binomial_test(std::size_t k, std::size_t n, double prob) {
  if (n == 0) return 1.0;
  if (prob <= 0.0 || prob >= 1.0) return (prob <= 0.0 ? k == 0 : k == n) ? 1.0 : 0.0;
  // pmf by the ratio recurrence from the mode (scaled at the mode, so no underflow near it).
  const std::size_t mode = std::min<std::size_t>(n, static_cast<std::size_t>((n + 1) * prob));
  const double logmode = std::lgamma(n + 1.0) - std::lgamma(mode + 1.0) -
                         std::lgamma(n - mode + 1.0) + mode * std::log(prob) +
                         (n - mode) * std::log1p(-prob);
  std::vector<double> pmf(n + 1, 0.0);
  pmf[mode] = std::exp(logmode);
  const double odds = prob / (1.0 - prob);
  for (std::size_t i = mode; i < n && pmf[i] > 0.0; ++i)
    pmf[i + 1] = pmf[i] * static_cast<double>(n - i) / static_cast<double>(i + 1) * odds;
  for (std::size_t i = mode; i > 0 && pmf[i] > 0.0; --i)
    pmf[i - 1] = pmf[i] * static_cast<double>(i) / static_cast<double>(n - i + 1) / odds;
  const double d = pmf[k] * (1.0 + 1e-7);
  const double m = n * prob;
  if (static_cast<double>(k) == m) return 1.0;
  double pv = 0.0;
  // R binom.test: the outcomes no more likely than k (pmf monotone on each side of the mode).
  for (std::size_t i = 0; i <= n; ++i)
    if (pmf[i] <= d) pv += pmf[i];
  return std::min(1.0, pv);
}

namespace {

// The sorted, centred sample: the ECDF per row, the distinct values, and |x - c| per side.
struct Sample {
  std::vector<double> X, Y, U, XL, XR, UL, UR;
  std::size_t n = 0, nl = 0, nr = 0;
  bool mass = false;
  void window(double hl, double hr, std::size_t& lo, std::size_t& hi) const {
    lo = std::lower_bound(X.begin(), X.end(), -hl) - X.begin();
    hi = std::upper_bound(X.begin(), X.end(), hr) - X.begin();
  }
};

Sample prepare(const std::vector<double>& xin, double c, bool masspoints) {
  Sample smp;
  for (double v : xin)
    if (!std::isfinite(v))
      throw InvalidArgument("rddensity: x has an infinite or missing value; drop those rows");
  const std::size_t n = xin.size();
  if (n < 2) throw InvalidArgument("rddensity: x needs at least 2 values");
  std::vector<double> X(xin);
  std::sort(X.begin(), X.end());
  if (c < X.front() || c > X.back())
    throw InvalidArgument("rddensity: the cutoff c must lie within the range of x");
  const std::size_t nl = std::lower_bound(X.begin(), X.end(), c) - X.begin();
  const std::size_t nr = n - nl;
  if (nl == 0 || nr == 0)
    throw InvalidArgument("rddensity: x needs values on both sides of the cutoff c "
                          "(left: x < c, right: x >= c)");
  for (double& v : X) v -= c;
  // ECDF at each row: (i - 1)/(n - 1), a tie group takes its last member's value.
  std::vector<double> Y(n);
  std::size_t nunique = 0;
  std::vector<double> U;  // unique centred values
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i + 1;
    while (j < n && X[j] == X[i]) ++j;
    U.push_back(X[i]);
    ++nunique;
    i = j;
  }
  const bool mass = masspoints && nunique != n;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i + 1;
    while (j < n && X[j] == X[i]) ++j;
    for (std::size_t m = i; m < j; ++m)
      Y[m] = static_cast<double>(mass ? j - 1 : m) / static_cast<double>(n - 1);
    i = j;
  }
  const std::size_t nlu = std::lower_bound(U.begin(), U.end(), 0.0) - U.begin();
  // |x - c| of each side, ascending (R rddensity's sort(abs(X[X < 0])); the Python port of
  // rddensity 3.0 indexes the unsorted left values, docs/rd.md).
  std::vector<double> XL(X.begin(), X.begin() + nl), XR(X.begin() + nl, X.end());
  for (double& v : XL) v = -v;
  std::reverse(XL.begin(), XL.end());
  std::vector<double> UL(U.begin(), U.begin() + nlu), UR(U.begin() + nlu, U.end());
  for (double& v : UL) v = -v;
  std::reverse(UL.begin(), UL.end());
  smp.n = n;
  smp.nl = nl;
  smp.nr = nr;
  smp.mass = mass;
  smp.X = std::move(X);
  smp.Y = std::move(Y);
  smp.U = std::move(U);
  smp.XL = std::move(XL);
  smp.XR = std::move(XR);
  smp.UL = std::move(UL);
  smp.UR = std::move(UR);
  return smp;
}

// The density fit of order p on the window [c - hl, c + hr] under opt's model (rows lo..hi of the
// sorted sample), with the plug-in variances when opt.vce asks for them.
Fit model_fit(const Sample& smp, const RdDensityOptions& opt, double hl, double hr, int p,
              int s) {
  std::size_t lo, hi;
  smp.window(hl, hr, lo, hi);
  const double *X = smp.X.data() + lo, *Y = smp.Y.data() + lo;
  const bool plugin = opt.vce == "plugin";
  if (opt.fitselect == "restricted")
    return dens::restricted_fit(X, Y, hi - lo, smp.nl - lo, smp.n, hl, p, s, opt.kernel, smp.mass,
                                plugin);
  Fit f = density_fit(X, Y, hi - lo, smp.nl - lo, smp.n, hl, hr, p, s, opt.kernel, smp.mass);
  if (plugin) dens::plugin_unrestricted(f, opt.kernel, p, smp.n, hl, hr);
  return f;
}

// rdbwdensity's normal-reference pilot bandwidths (Cattaneo, Jansson and Ma 2018, Stata Journal
// 18(1)): b (order p + 2, for the (p+1)-th derivative) and c (order p, for the variance).
void pilot_bandwidths(const Sample& smp, const RdDensityOptions& opt, double& bn, double& cn) {
  const std::vector<double>&X = smp.X, &U = smp.U;
  const std::size_t n = smp.n;
  const int p = opt.p;
  const std::size_t nlocal = opt.nlocalmin < 0 ? 20 + p + 1 : opt.nlocalmin;
  const std::size_t nuniq = opt.nuniquemin < 0 ? 20 + p + 1 : opt.nuniquemin;
  double mu = 0.0;
  for (double v : X) mu += v;
  mu /= n;
  double ss = 0.0;
  for (double v : X) ss += (v - mu) * (v - mu);
  const double sd = std::sqrt(ss / (n - 1));
  const double z = mu / sd;
  static const double Cb[7] = {25884.444444494150957, 3430865.4551236177795,
                               845007948.04262602329, 330631733667.03808594,
                               187774809656037.3125,  145729502641999264.0,
                               146013502974449876992.0};
  static const double Cc[7] = {4.8000000000000246914, 548.57142857155463389,
                               100800.00000020420703, 29558225.458100609481,
                               12896196859.612621307, 7890871468221.609375,
                               6467911284037581.0};
  const double hb = hermite(z, p + 2), hc = hermite(z, p);
  const double fb = 1.0 / (hb * hb * norm_pdf(z)), fc = 1.0 / (hc * hc * norm_pdf(z));
  bn = std::pow((2.0 * p + 1) / 4.0 * fb * Cb[p - 1] / n, 1.0 / (2 * p + 5)) * sd;
  cn = std::pow(1.0 / (2 * p) * fc * Cc[p - 1] / n, 1.0 / (2 * p + 1)) * sd;
  if (opt.regularize) {
    const double umax = std::max(std::fabs(U.front()), std::fabs(U.back()));
    bn = std::min(bn, umax);
    cn = std::min(cn, umax);
    if (nlocal > 0) {
      bn = std::max({bn, kth(smp.XL, 20 + p + 3), kth(smp.XR, 20 + p + 3)});
      cn = std::max({cn, kth(smp.XL, 20 + p + 1), kth(smp.XR, 20 + p + 1)});
    }
    if (nuniq > 0) {
      bn = std::max({bn, kth(smp.UL, 20 + p + 3), kth(smp.UR, 20 + p + 3)});
      cn = std::max({cn, kth(smp.UL, 20 + p + 1), kth(smp.UR, 20 + p + 1)});
    }
  }
}

// rdbwdensity's regularization of the table's bandwidths: at most the range of the distinct
// values, at least nlocalmin rows and nuniquemin distinct values per side.
void regularize_table(const Sample& smp, const RdDensityOptions& opt, double (*tab)[3]) {
  const int p = opt.p;
  const std::size_t nlocal = opt.nlocalmin < 0 ? 20 + p + 1 : opt.nlocalmin;
  const std::size_t nuniq = opt.nuniquemin < 0 ? 20 + p + 1 : opt.nuniquemin;
  const double ul = std::fabs(smp.U.front()), ur = smp.U.back(), um = std::max(ul, ur);
  tab[0][0] = std::min(tab[0][0], ul);
  tab[1][0] = std::min(tab[1][0], ur);
  tab[2][0] = std::min(tab[2][0], um);
  tab[3][0] = std::min(tab[3][0], um);
  auto floor_at = [&](double lmin, double rmin) {
    tab[0][0] = std::max(tab[0][0], lmin);
    tab[1][0] = std::max(tab[1][0], rmin);
    for (int r = 2; r < 4; ++r) tab[r][0] = std::max({tab[r][0], lmin, rmin});
  };
  if (nlocal > 0) floor_at(kth(smp.XL, nlocal), kth(smp.XR, nlocal));
  if (nuniq > 0) floor_at(kth(smp.UL, nuniq), kth(smp.UR, nuniq));
}

// rdbwdensity's table and the bandwidths of bwselect (sets hl/hr where they are NaN).
void select_bandwidths(const Sample& smp, const RdDensityOptions& opt, RdDensityResult& res,
                       double& hl, double& hr) {
  const std::size_t n = smp.n;
  const int p = opt.p;
  const std::string& bs = opt.bwselect;
  const bool restricted = opt.fitselect == "restricted";
  double bn, cn;
  pilot_bandwidths(smp, opt, bn, cn);
  const Fit fbv = model_fit(smp, opt, bn, bn, p + 2, p + 1);
  const Fit fcv = model_fit(smp, opt, cn, cn, p, 1);
  const double* var = opt.vce == "plugin" ? fcv.pl : fcv.jk;
  double tab[4][3];
  for (int r = 0; r < 4; ++r) tab[r][1] = n * cn * var[r];
  if (restricted) {
    // The restricted fit's leading bias (Cattaneo, Jansson and Ma 2018, section 2): the
    // densities of the variance pilot weight the two sides' kernel moments.
    dens::restricted_bias(opt.kernel, p, fcv.hat[0], fcv.hat[1], fbv.s[0], tab[0][2],
                          tab[1][2]);
  } else {
    // Bias constant e_1' S^{-1} C of the boundary equivalent kernel on [0, 1].
    const int d = p + 1;
    std::vector<double> S(d * d), C(d);
    for (int a = 0; a < d; ++a) {
      C[a] = kmoment(opt.kernel, a + p + 1);
      for (int b = 0; b < d; ++b) S[a * d + b] = kmoment(opt.kernel, a + b);
    }
    chol_solve(S, C, d);
    const double bc = C[1];
    tab[0][2] = fbv.s[0] * bc * ((p % 2) ? -1.0 : 1.0);
    tab[1][2] = fbv.s[1] * bc;
  }
  tab[2][2] = tab[1][2] - tab[0][2];
  tab[3][2] = tab[1][2] + tab[0][2];
  for (int r = 0; r < 4; ++r) {
    tab[r][2] *= tab[r][2];
    tab[r][0] = std::pow(1.0 / (2 * p) * tab[r][1] / tab[r][2] / n, 1.0 / (2 * p + 1));
    if (!(tab[r][1] >= 0)) tab[r][0] = 0.0;
    if (std::isnan(tab[r][0])) tab[r][0] = 0.0;
  }
  if (opt.regularize) regularize_table(smp, opt, tab);
  res.bw_table.assign(&tab[0][0], &tab[0][0] + 12);
  double sl, sr;
  if (bs == "each") {
    sl = tab[0][0];
    sr = tab[1][0];
  } else if (bs == "diff") {
    sl = sr = tab[2][0];
  } else if (bs == "sum") {
    sl = sr = tab[3][0];
  } else if (restricted) {  // comb under the restricted model: the smaller of diff and sum
    sl = sr = std::min(tab[2][0], tab[3][0]);
  } else {
    sl = median3(tab[0][0], tab[2][0], tab[3][0]);
    sr = median3(tab[1][0], tab[2][0], tab[3][0]);
  }
  if (!std::isfinite(hl)) hl = sl;
  if (!std::isfinite(hr)) hr = sr;
}

// Binomial tests (R rddensity's windows).
void binomial_windows(const Sample& smp, const RdDensityOptions& opt, double hl, double hr,
                      RdDensityResult& res) {
  const std::vector<double>&XL = smp.XL, &XR = smp.XR;
  const std::size_t nl = smp.nl, nr = smp.nr;
  // Binomial tests in windows [c - w_l, c + w_r] (R rddensity's rule): the first window holds
  // at least bino_n rows on each side, later ones grow by its length up to h, in bino_nw steps.
  if (opt.bino_nw > 0) {
    if (!(opt.bino_p >= 0 && opt.bino_p <= 1))
      throw InvalidArgument("rddensity: bino_p must be a probability in [0, 1]");
    std::size_t nw = opt.bino_nw;
    double wl0, wr0;
    if (std::isfinite(opt.bino_w)) {
      if (!(opt.bino_w > 0)) throw InvalidArgument("rddensity: bino_w must be positive");
      wl0 = wr0 = opt.bino_w;
    } else {
      if (opt.bino_n <= 0) throw InvalidArgument("rddensity: bino_n must be a positive integer");
      wl0 = wr0 = std::max(kth(XL, std::min<std::size_t>(opt.bino_n, nl)),
                           kth(XR, std::min<std::size_t>(opt.bino_n, nr)));
    }
    std::vector<double> wl(nw, wl0), wr(nw, wr0);
    if (nw > 1) {
      if (wl0 >= hl || wr0 >= hr) {
        nw = 1;
        wl.resize(1);
        wr.resize(1);
      } else {
        for (std::size_t j = 1; j < nw; ++j) {
          wl[j] = wl0 * nw > hl ? wl0 + j * (hl - wl0) / (nw - 1) : wl0 + j * wl0;
          wr[j] = wr0 * nw > hr ? wr0 + j * (hr - wr0) / (nw - 1) : wr0 + j * wr0;
        }
      }
    }
    for (std::size_t j = 0; j < nw; ++j) {
      const std::size_t a = std::upper_bound(XL.begin(), XL.end(), wl[j]) - XL.begin();
      const std::size_t b = std::upper_bound(XR.begin(), XR.end(), wr[j]) - XR.begin();
      res.bino_w_left.push_back(wl[j]);
      res.bino_w_right.push_back(wr[j]);
      res.bino_n_left.push_back(a);
      res.bino_n_right.push_back(b);
      res.bino_p_value.push_back(binomial_test(a, a + b, opt.bino_p));
    }
  }
}

}  // namespace

RdDensityResult rddensity(const std::vector<double>& xin, const RdDensityOptions& opt) {
  const int p = opt.p;
  const int q = opt.q < 0 ? p + 1 : opt.q;
  if (p < 1 || p > 7) throw InvalidArgument("rddensity: p must be an integer from 1 to 7");
  if (q < p || q > 8) throw InvalidArgument("rddensity: q must be an integer from p to 8");
  const double c = opt.c;
  if (!std::isfinite(c)) throw InvalidArgument("rddensity: c must be a finite number");
  const bool restricted = opt.fitselect == "restricted";
  if (!restricted && opt.fitselect != "unrestricted")
    throw InvalidArgument("rddensity: fitselect must be 'unrestricted' or 'restricted', got '" +
                          opt.fitselect + "'");
  if (opt.vce != "jackknife" && opt.vce != "plugin")
    throw InvalidArgument("rddensity: vce must be 'jackknife' or 'plugin', got '" + opt.vce +
                          "'");
  const Sample smp = prepare(xin, c, opt.masspoints);
  RdDensityResult res;
  res.mass_points = smp.mass;
  double hl = opt.h_left, hr = opt.h_right;
  if ((std::isfinite(hl) && !(hl > 0)) || (std::isfinite(hr) && !(hr > 0)))
    throw InvalidArgument("rddensity: h must be positive");
  if (std::isfinite(hl) && std::isfinite(hr)) {
    res.bwselect = "manual";
  } else {
    const std::string& bs = opt.bwselect;
    if (bs != "each" && bs != "diff" && bs != "sum" && bs != "comb")
      throw InvalidArgument("rddensity: bwselect must be one of 'each', 'diff', 'sum', 'comb'");
    if (restricted && bs == "each")
      throw InvalidArgument("rddensity: bwselect='each' gives two bandwidths, the restricted "
                            "model has one: use 'diff', 'sum' or 'comb', or "
                            "fitselect='unrestricted'");
    res.bwselect = bs;
    select_bandwidths(smp, opt, res, hl, hr);
  }
  if (restricted && hl != hr)
    throw InvalidArgument("rddensity: the restricted model fits both sides with one bandwidth: "
                          "give a single h (or h_left == h_right), or use "
                          "fitselect='unrestricted'");
  const std::size_t nl = smp.nl;
  res.fitselect = opt.fitselect;
  res.vce = opt.vce;
  res.h_left = hl;
  res.h_right = hr;
  res.n = smp.n;
  res.n_left = nl;
  res.n_right = smp.nr;
  std::size_t lo, hi;
  smp.window(hl, hr, lo, hi);
  res.nh_left = nl - lo;
  res.nh_right = hi - nl;
  const Fit f = model_fit(smp, opt, hl, hr, q, 1);
  const double* var = opt.vce == "plugin" ? f.pl : f.jk;
  // A density estimate <= 0 gives a negative plug-in variance on its side (rddensity reports NaN
  // there and still adds it into the difference's variance): refuse instead.
  if (opt.vce == "plugin" && !(var[0] > 0 && var[1] > 0 && var[2] > 0)) {
    std::ostringstream m;
    m << "rddensity: the plug-in variance needs positive density estimates on both sides of the "
         "cutoff (left "
      << f.hat[0] << ", right " << f.hat[1] << "): use vce='jackknife' or a larger h";
    throw InvalidArgument(m.str());
  }
  res.f_left = f.hat[0];
  res.f_right = f.hat[1];
  res.diff = f.hat[2];
  res.se_left = std::sqrt(var[0]);
  res.se_right = std::sqrt(var[1]);
  res.se_diff = std::sqrt(var[2]);
  res.statistic = f.hat[2] / res.se_diff;
  res.p_value = std::erfc(std::fabs(res.statistic) / std::sqrt(2.0));
  binomial_windows(smp, opt, hl, hr, res);
  return res;
}

}  // namespace rd
}  // namespace attnreg
