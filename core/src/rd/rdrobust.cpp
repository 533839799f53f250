// Regression discontinuity estimation and bandwidth selection (see attnreg/rd/rdrobust.hpp for
// the references). All local fits use the basis in bandwidth units, t = (x - c) / h, and convert
// coefficients to the scale of (x - c) at the end (beta_j = beta_t,j / h^j), so the polynomial
// Gram matrices stay well conditioned for any scale of x and any order.
#include "attnreg/rd/rdrobust.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <sstream>
#include <utility>

#include "attnreg/base/error.hpp"
#include "attnreg/base/runtime.hpp"

namespace attnreg {
namespace rd {
namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kSqrtEps = std::sqrt(std::numeric_limits<double>::epsilon());

double kernel_value(RdKernel k, double u) {
  const double a = std::fabs(u);
  if (!(a <= 1.0)) return 0.0;
  switch (k) {
    case RdKernel::epanechnikov: return 0.75 * (1.0 - u * u);
    case RdKernel::uniform: return 0.5;
    default: return 1.0 - a;
  }
}

// Kernel constant of the pilot bandwidth rule (C_K of CCT 2014, supplement S.2.2).
double pilot_constant(RdKernel k) {
  switch (k) {
    case RdKernel::epanechnikov: return 2.34;
    case RdKernel::uniform: return 1.843;
    default: return 2.576;
  }
}

double factorial(int k) {
  double f = 1;
  for (int i = 2; i <= k; ++i) f *= i;
  return f;
}

// ---------------------------------------------------------------- small dense algebra
// In-place Cholesky of a symmetric positive definite k x k matrix (row-major, lower factor);
// false when a pivot is not positive.
bool cholesky(std::vector<double>& a, int k) {
  for (int j = 0; j < k; ++j) {
    double d = a[j * k + j];
    for (int m = 0; m < j; ++m) d -= a[j * k + m] * a[j * k + m];
    if (!(d > 0) || !std::isfinite(d)) return false;
    d = std::sqrt(d);
    a[j * k + j] = d;
    for (int i = j + 1; i < k; ++i) {
      double s = a[i * k + j];
      for (int m = 0; m < j; ++m) s -= a[i * k + m] * a[j * k + m];
      a[i * k + j] = s / d;
    }
  }
  return true;
}

// Inverse of an SPD matrix from its Cholesky factor (row-major, k x k).
std::vector<double> spd_inverse(const std::vector<double>& g, int k, bool& ok) {
  std::vector<double> l = g;
  ok = cholesky(l, k);
  std::vector<double> inv(static_cast<std::size_t>(k) * k, 0.0);
  if (!ok) return inv;
  for (int col = 0; col < k; ++col) {
    std::vector<double> v(k, 0.0);
    v[col] = 1.0;
    for (int i = 0; i < k; ++i) {  // L v = e
      double s = v[i];
      for (int m = 0; m < i; ++m) s -= l[i * k + m] * v[m];
      v[i] = s / l[i * k + i];
    }
    for (int i = k - 1; i >= 0; --i) {  // L' x = v
      double s = v[i];
      for (int m = i + 1; m < k; ++m) s -= l[m * k + i] * v[m];
      v[i] = s / l[i * k + i];
    }
    for (int i = 0; i < k; ++i) inv[i * k + col] = v[i];
  }
  return inv;
}

// ---------------------------------------------------------------- data on one side
struct Side {
  std::vector<double> x;           // sorted ascending (units of the caller)
  std::vector<double> D;           // row-major n x k: outcome, [treatment], covariates
  std::size_t k = 1;
  std::vector<double> fw;          // unit weights (empty: none)
  std::vector<std::int64_t> cl;    // cluster codes (empty: none)
  std::vector<std::size_t> row;    // input row of each element
  std::size_t n() const { return x.size(); }
};

// The rows of one side with a positive weight at bandwidth h, with their data.
struct Window {
  std::vector<std::size_t> idx;    // positions in the side
  std::vector<double> x, u;        // x and x - c
  std::vector<double> D;           // row-major n x k
  std::size_t k = 1;
  std::vector<std::int64_t> cl;
  std::size_t n() const { return idx.size(); }
};

// Kernel weight fw_i K((x_i - c) / h) / h, as rdpackages computes it.
inline double unit_weight(const Side& s, std::size_t i, double c, double h, RdKernel kern) {
  double w = kernel_value(kern, (s.x[i] - c) / h) / h;
  if (!s.fw.empty()) w *= s.fw[i];
  return w;
}

Window gather(const Side& s, double c, double h, RdKernel kern) {
  Window w;
  w.k = s.k;
  // Only rows with |x - c| <= h can have a positive weight: a binary search of the sorted side
  // bounds the candidates (with a margin above the rounding of (x - c) / h), which are then
  // tested with the weight itself.
  const double lo_x = c - h * (1 + 1e-9), hi_x = c + h * (1 + 1e-9);
  const std::size_t first =
      std::lower_bound(s.x.begin(), s.x.end(), lo_x) - s.x.begin();
  const std::size_t last = std::upper_bound(s.x.begin(), s.x.end(), hi_x) - s.x.begin();
  for (std::size_t i = first; i < last; ++i) {
    if (unit_weight(s, i, c, h, kern) > 0) w.idx.push_back(i);
  }
  const std::size_t n = w.idx.size();
  w.x.resize(n);
  w.u.resize(n);
  w.D.resize(n * s.k);
  if (!s.cl.empty()) w.cl.resize(n);
  for (std::size_t j = 0; j < n; ++j) {
    const std::size_t i = w.idx[j];
    w.x[j] = s.x[i];
    w.u[j] = s.x[i] - c;
    for (std::size_t m = 0; m < s.k; ++m) w.D[j * s.k + m] = s.D[i * s.k + m];
    if (!s.cl.empty()) w.cl[j] = s.cl[i];
  }
  return w;
}

std::vector<double> window_weights(const Side& s, const Window& w, double c, double h,
                                   RdKernel kern) {
  std::vector<double> out(w.n());
  for (std::size_t j = 0; j < w.n(); ++j) out[j] = unit_weight(s, w.idx[j], c, h, kern);
  return out;
}

std::size_t distinct_positive(const Window& w, const std::vector<double>& wt) {
  std::size_t m = 0;
  double last = kNaN;
  bool any = false;
  for (std::size_t j = 0; j < w.n(); ++j) {
    if (!(wt[j] > 0)) continue;
    if (!any || w.x[j] != last) ++m;
    any = true;
    last = w.x[j];
  }
  return m;
}

// Weighted polynomial fit of order o in t = u / hs: Gram G, its inverse, coefficients (o+1) x k
// in t units (row-major).
struct Fit {
  int o = 0;
  double hs = 1;
  std::vector<double> Ginv;
  std::vector<double> beta;
  bool ok = false;
};

Fit poly_fit(const Window& w, const std::vector<double>& wt, int o, double hs) {
  Fit f;
  f.o = o;
  f.hs = hs;
  const int k1 = o + 1;
  const std::size_t k = w.k;
  std::vector<double> G(k1 * k1, 0.0), RD(k1 * k, 0.0), s(k1);
  for (std::size_t j = 0; j < w.n(); ++j) {
    const double wj = wt[j];
    if (wj == 0) continue;
    const double t = w.u[j] / hs;
    s[0] = 1;
    for (int a = 1; a < k1; ++a) s[a] = s[a - 1] * t;
    for (int a = 0; a < k1; ++a) {
      const double ws = wj * s[a];
      for (int b = 0; b <= a; ++b) G[a * k1 + b] += ws * s[b];
      for (std::size_t m = 0; m < k; ++m) RD[a * k + m] += ws * w.D[j * k + m];
    }
  }
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

// Equivalent-kernel weights of coefficient `coef` (scale of (x - c)): l_j = e' Ginv s_j w_j.
std::vector<double> coef_weights(const Window& w, const std::vector<double>& wt, const Fit& f,
                                 int coef) {
  const int k1 = f.o + 1;
  std::vector<double> out(w.n(), 0.0), s(k1);
  const double scale = std::pow(f.hs, -coef);
  for (std::size_t j = 0; j < w.n(); ++j) {
    if (wt[j] == 0) continue;
    const double t = w.u[j] / f.hs;
    s[0] = 1;
    for (int a = 1; a < k1; ++a) s[a] = s[a - 1] * t;
    double v = 0;
    for (int b = 0; b < k1; ++b) v += f.Ginv[coef * k1 + b] * s[b];
    out[j] = v * wt[j] * scale;
  }
  return out;
}

// (Ginv sum_j w_j s_j t_j^(o+1))[coef]: the leading bias term of coefficient `coef`.
double bias_constant(const Window& w, const std::vector<double>& wt, const Fit& f, int coef) {
  const int k1 = f.o + 1;
  std::vector<double> L(k1, 0.0), s(k1 + 1);
  for (std::size_t j = 0; j < w.n(); ++j) {
    if (wt[j] == 0) continue;
    const double t = w.u[j] / f.hs;
    s[0] = 1;
    for (int a = 1; a <= k1; ++a) s[a] = s[a - 1] * t;
    for (int a = 0; a < k1; ++a) L[a] += wt[j] * s[a] * s[k1];
  }
  double v = 0;
  for (int b = 0; b < k1; ++b) v += f.Ginv[coef * k1 + b] * L[b];
  return v;
}

// Residuals (row-major n x k) for the variance: nearest-neighbour (Abadie and Imbens 2006;
// CCT 2014, section 3: the mean of at least `nnmatch` nearest neighbours within the window, ties
// in x taken together, distances equal up to sqrt(eps) relative taken from both sides, scaled
// by sqrt(J / (J + 1))) or the fit's residuals with the HC0-HC3 factors.
std::vector<double> residuals(const Window& w, RdVce vce, bool clustered, int nnmatch,
                              const Fit* f, const std::vector<double>* wt, int d) {
  const std::size_t n = w.n(), k = w.k;
  std::vector<double> res(n * k, 0.0);
  if (vce == RdVce::nn) {
    // Tie groups in the sorted window.
    std::vector<std::size_t> gstart, gid(n);
    for (std::size_t j = 0; j < n; ++j) {
      if (j == 0 || w.x[j] != w.x[j - 1]) gstart.push_back(j);
      gid[j] = gstart.size() - 1;
    }
    gstart.push_back(n);
    const std::size_t cap = std::min<std::size_t>(nnmatch, n - 1);
    std::vector<double> sum(k);
    for (std::size_t g = 0; g + 1 < gstart.size(); ++g) {
      std::size_t lo = gstart[g], hi = gstart[g + 1];
      const double xg = w.x[lo];
      while (hi - lo - 1 < cap) {
        if (lo == 0) {
          hi = gstart[gid[hi] + 1];
        } else if (hi >= n) {
          lo = gstart[gid[lo - 1]];
        } else {
          const double dl = xg - w.x[lo - 1], dr = w.x[hi] - xg;
          const double tol = std::max(dl, dr) * kSqrtEps;
          if (dl - dr > tol) {
            hi = gstart[gid[hi] + 1];
          } else if (dr - dl > tol) {
            lo = gstart[gid[lo - 1]];
          } else {
            hi = gstart[gid[hi] + 1];
            lo = gstart[gid[lo - 1]];
          }
        }
      }
      std::fill(sum.begin(), sum.end(), 0.0);
      for (std::size_t j = lo; j < hi; ++j)
        for (std::size_t m = 0; m < k; ++m) sum[m] += w.D[j * k + m];
      const double J = static_cast<double>(hi - lo - 1);
      const double sf = std::sqrt(J / (J + 1));
      for (std::size_t j = gstart[g]; j < gstart[g + 1]; ++j)
        for (std::size_t m = 0; m < k; ++m) {
          const double yj = w.D[j * k + m];
          res[j * k + m] = sf * (yj - (sum[m] - yj) / J);
        }
    }
    return res;
  }
  const int k1 = f->o + 1;
  std::vector<double> s(k1);
  const double nn = static_cast<double>(n);
  for (std::size_t j = 0; j < n; ++j) {
    const double t = w.u[j] / f->hs;
    s[0] = 1;
    for (int a = 1; a < k1; ++a) s[a] = s[a - 1] * t;
    double fac = 1.0;
    if (vce == RdVce::hc1) {
      fac = clustered ? 1.0 : std::sqrt(nn / (nn - d));
    } else if (vce == RdVce::hc2 || vce == RdVce::hc3) {
      double hii = 0;
      for (int a = 0; a < k1; ++a) {
        double v = 0;
        for (int b = 0; b < k1; ++b) v += f->Ginv[a * k1 + b] * s[b];
        hii += s[a] * v;
      }
      hii *= (*wt)[j];
      const double om = std::max(1.0 - hii, 1e-8);
      fac = vce == RdVce::hc2 ? std::sqrt(1.0 / om) : 1.0 / om;
    }
    for (std::size_t m = 0; m < k; ++m) {
      double pred = 0;
      for (int a = 0; a < k1; ++a) pred += s[a] * f->beta[a * k + m];
      res[j * k + m] = fac * (w.D[j * k + m] - pred);
    }
  }
  return res;
}

// sum_j (l_j r_j)^2 with r_j = s' res_j, or with clusters (CR1) the sum over clusters of
// (sum_g l_j r_j)^2 times (n - 1) / (n - k_df) * G / (G - 1).
double variance_sum(const Window& w, const std::vector<double>& ell,
                    const std::vector<double>& res, const std::vector<double>& s, int k_df,
                    std::size_t* n_clusters = nullptr) {
  const std::size_t n = w.n(), k = w.k;
  auto comb = [&](std::size_t j) {
    double r = 0;
    for (std::size_t m = 0; m < k; ++m) r += s[m] * res[j * k + m];
    return r;
  };
  if (w.cl.empty()) {
    double v = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const double a = ell[j] * comb(j);
      v += a * a;
    }
    return v;
  }
  std::map<std::int64_t, double> by;
  for (std::size_t j = 0; j < n; ++j) by[w.cl[j]] += ell[j] * comb(j);
  const double g = static_cast<double>(by.size());
  if (n_clusters) *n_clusters = by.size();
  if (by.size() < 2)
    throw NumericalError("cluster: only one cluster within the bandwidth on a side of the "
                         "cutoff; cluster-robust variances need at least two (widen h or drop "
                         "cluster)");
  double v = 0;
  for (const auto& kv : by) v += kv.second * kv.second;
  const double nn = static_cast<double>(n);
  return v * ((nn - 1) / (nn - k_df)) * (g / (g - 1));
}

// ---------------------------------------------------------------- covariate adjustment
// Partial the polynomial out of every column (weights wt): sums over the window of
// w Ztilde Ztilde' (dz x dz) and w Ztilde Dtilde (dz x (1 + dT)), Dtilde the residuals of the
// outcome/treatment columns (CCFT 2019, eq. 4).
void partial_sums(const Window& w, const std::vector<double>& wt, const Fit& f, std::size_t ny,
                  std::size_t dz, std::vector<double>& ZZ, std::vector<double>& ZY,
                  std::vector<double>* Ztil = nullptr) {
  const std::size_t k = w.k;
  const int k1 = f.o + 1;
  std::vector<double> s(k1), r(k);
  if (Ztil) Ztil->assign(w.n() * dz, 0.0);
  for (std::size_t j = 0; j < w.n(); ++j) {
    const double t = w.u[j] / f.hs;
    s[0] = 1;
    for (int a = 1; a < k1; ++a) s[a] = s[a - 1] * t;
    for (std::size_t m = 0; m < k; ++m) {
      double pred = 0;
      for (int a = 0; a < k1; ++a) pred += s[a] * f.beta[a * k + m];
      r[m] = w.D[j * k + m] - pred;
    }
    if (Ztil)
      for (std::size_t a = 0; a < dz; ++a) (*Ztil)[j * dz + a] = r[ny + a];
    if (wt[j] == 0) continue;
    for (std::size_t a = 0; a < dz; ++a) {
      const double wz = wt[j] * r[ny + a];
      for (std::size_t b = 0; b < dz; ++b) ZZ[a * dz + b] += wz * r[ny + b];
      for (std::size_t m = 0; m < ny; ++m) ZY[a * ny + m] += wz * r[m];
    }
  }
}

// gamma = ZZ^{-1} ZY (dz x ny, row-major).
std::vector<double> solve_gamma(const std::vector<double>& ZZ, const std::vector<double>& ZY,
                                std::size_t dz, std::size_t ny) {
  bool ok = false;
  std::vector<double> inv = spd_inverse(ZZ, static_cast<int>(dz), ok);
  if (!ok)
    throw NumericalError("covs: the covariates are collinear with the local polynomial within "
                         "the bandwidth; drop covariates that are constant or collinear there");
  std::vector<double> g(dz * ny, 0.0);
  for (std::size_t a = 0; a < dz; ++a)
    for (std::size_t m = 0; m < ny; ++m) {
      double v = 0;
      for (std::size_t b = 0; b < dz; ++b) v += inv[a * dz + b] * ZY[b * ny + m];
      g[a * ny + m] = v;
    }
  return g;
}

// ---------------------------------------------------------------- prepared data
struct Prepared {
  Side left, right;           // raw units
  std::size_t n = 0, n_dropped = 0, dz = 0;
  bool fuzzy = false;
  double x_min = 0, x_max = 0;
  std::size_t m_left = 0, m_right = 0;
  std::vector<double> x_sorted;
  std::vector<double> y_all;  // outcome of the kept rows (any order)
  std::vector<std::size_t> covs_kept, covs_dropped;
  std::size_t n_input = 0;
  std::size_t g_left = 0, g_right = 0;
};

std::string row_msg(std::size_t i) {
  std::ostringstream o;
  o << "row " << (i + 1);
  return o.str();
}

void require_finite_or_nan(const std::vector<double>& v, const char* name) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (std::isinf(v[i]))
      throw InvalidArgument(std::string(name) + ": infinite value at " + row_msg(i) +
                            " (remove the row or set it to NaN to drop it)");
}

// Collinearity of the covariates among themselves and with the running variable: modified
// Gram-Schmidt in column order on centred columns; a column whose remaining norm is below
// 1e-7 of its centred norm is dropped (collinear with earlier ones), and one collinear with
// [1, x] is an error.
void check_covariates(const std::vector<double>& z, std::size_t n, std::size_t dz,
                      const std::vector<double>& x, std::vector<std::size_t>& kept,
                      std::vector<std::size_t>& dropped) {
  auto centred = [&](const double* col) {
    std::vector<double> v(col, col + n);
    const double mean = std::accumulate(v.begin(), v.end(), 0.0) / n;
    for (double& e : v) e -= mean;
    return v;
  };
  auto norm = [](const std::vector<double>& v) {
    double s = 0;
    for (double e : v) s += e * e;
    return std::sqrt(s);
  };
  auto project_out = [](std::vector<double>& v, const std::vector<double>& q) {
    double d = 0;
    for (std::size_t i = 0; i < v.size(); ++i) d += v[i] * q[i];
    for (std::size_t i = 0; i < v.size(); ++i) v[i] -= d * q[i];
  };
  std::vector<double> xc = centred(x.data());
  const double xn = norm(xc);
  for (double& e : xc) e /= xn;
  std::vector<std::vector<double>> basis;
  for (std::size_t a = 0; a < dz; ++a) {
    std::vector<double> v = centred(z.data() + a * n);
    const double n0 = norm(v);
    std::vector<double> vx = v;
    project_out(vx, xc);
    if (n0 == 0 || norm(vx) <= 1e-7 * n0) {
      std::ostringstream o;
      o << "covs: column " << (a + 1)
        << (n0 == 0 ? " is constant" : " is collinear with the running variable x")
        << "; remove it (covariates must vary apart from x)";
      throw InvalidArgument(o.str());
    }
    for (const auto& q : basis) project_out(v, q);
    const double n1 = norm(v);
    if (n1 <= 1e-7 * n0) {
      dropped.push_back(a);
      continue;
    }
    for (double& e : v) e /= n1;
    basis.push_back(std::move(v));
    kept.push_back(a);
  }
}

Prepared prepare(const RdData& d, const RdOptions& opt) {
  Prepared P;
  const std::size_t n = d.x.size();
  P.n_input = n;
  check::require(n > 0, "x", "is empty (pass the running variable)");
  check::require(d.y.size() == n, "y", "must have the length of x");
  const bool fuzzy = !d.t.empty();
  P.fuzzy = fuzzy;
  check::require(!fuzzy || d.t.size() == n, "fuzzy", "must have the length of x");
  check::require(d.z.size() == n * d.dz, "covs", "must have as many rows as x");
  check::require(d.weights.empty() || d.weights.size() == n, "weights",
                 "must have the length of x");
  check::require(d.cluster.empty() || d.cluster.size() == n, "cluster",
                 "must have the length of x");
  require_finite_or_nan(d.y, "y");
  require_finite_or_nan(d.x, "x");
  require_finite_or_nan(d.t, "fuzzy");
  require_finite_or_nan(d.z, "covs");
  require_finite_or_nan(d.weights, "weights");
  for (std::size_t i = 0; i < d.weights.size(); ++i)
    if (d.weights[i] < 0)
      throw InvalidArgument("weights: negative value at " + row_msg(i) +
                            " (weights must be >= 0)");
  std::vector<std::size_t> keep;
  keep.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    bool ok = std::isfinite(d.x[i]) && std::isfinite(d.y[i]);
    if (fuzzy) ok = ok && std::isfinite(d.t[i]);
    for (std::size_t a = 0; ok && a < d.dz; ++a) ok = std::isfinite(d.z[a * n + i]);
    if (!d.weights.empty()) ok = ok && std::isfinite(d.weights[i]);
    if (!d.cluster.empty()) ok = ok && d.cluster[i] >= 0;
    if (ok) keep.push_back(i);
  }
  P.n_dropped = n - keep.size();
  check::require(!keep.empty(), "y", "every row has a missing value");
  if (!d.weights.empty()) {
    double s = 0;
    for (std::size_t i : keep) s += d.weights[i];
    check::require(s > 0, "weights", "must include a positive value");
  }
  std::vector<std::pair<double, std::size_t>> order(keep.size());
  for (std::size_t j = 0; j < keep.size(); ++j) order[j] = {d.x[keep[j]], keep[j]};
  std::sort(order.begin(), order.end());
  const std::size_t nk = order.size();
  P.n = nk;
  P.x_sorted.resize(nk);
  for (std::size_t j = 0; j < nk; ++j) P.x_sorted[j] = order[j].first;
  P.x_min = P.x_sorted.front();
  P.x_max = P.x_sorted.back();
  const double c = opt.c;
  check::require(std::isfinite(c), "c", "must be a finite number");
  if (!(c > P.x_min && c < P.x_max)) {
    std::ostringstream o;
    o << "c: the cutoff " << c << " is outside the range of x [" << P.x_min << ", " << P.x_max
      << "]; pass a cutoff with observations on both sides";
    throw InvalidArgument(o.str());
  }
  // Covariates: collinearity on the kept rows.
  if (d.dz > 0) {
    std::vector<double> zk(nk * d.dz), xk(nk);
    for (std::size_t j = 0; j < nk; ++j) {
      xk[j] = d.x[keep[j]];
      for (std::size_t a = 0; a < d.dz; ++a) zk[a * nk + j] = d.z[a * n + keep[j]];
    }
    check_covariates(zk, nk, d.dz, xk, P.covs_kept, P.covs_dropped);
  }
  P.dz = P.covs_kept.size();
  const std::size_t k = 1 + (fuzzy ? 1 : 0) + P.dz;
  for (Side* s : {&P.left, &P.right}) {
    s->k = k;
  }
  for (std::size_t j = 0; j < nk; ++j) {
    const std::size_t i = order[j].second;
    Side& s = order[j].first < c ? P.left : P.right;
    s.x.push_back(order[j].first);
    s.row.push_back(i);
    s.D.push_back(d.y[i]);
    if (fuzzy) s.D.push_back(d.t[i]);
    for (std::size_t a : P.covs_kept) s.D.push_back(d.z[a * n + i]);
    if (!d.weights.empty()) s.fw.push_back(d.weights[i]);
    if (!d.cluster.empty()) s.cl.push_back(d.cluster[i]);
  }
  auto distinct = [](const std::vector<double>& v) {
    std::size_t m = 0;
    for (std::size_t i = 0; i < v.size(); ++i)
      if (i == 0 || v[i] != v[i - 1]) ++m;
    return m;
  };
  P.m_left = distinct(P.left.x);
  P.m_right = distinct(P.right.x);
  const int q = opt.q;
  if (std::min(P.m_left, P.m_right) < static_cast<std::size_t>(q + 1)) {
    std::ostringstream o;
    o << "x: only " << std::min(P.m_left, P.m_right) << " distinct values on the "
      << (P.m_left < P.m_right ? "left" : "right") << " side of the cutoff; a polynomial of "
      << "order q = " << q << " needs at least " << (q + 1);
    throw InvalidArgument(o.str());
  }
  auto nclusters = [](const Side& s) {
    std::vector<std::int64_t> v = s.cl;
    std::sort(v.begin(), v.end());
    return static_cast<std::size_t>(std::unique(v.begin(), v.end()) - v.begin());
  };
  if (!d.cluster.empty()) {
    P.g_left = nclusters(P.left);
    P.g_right = nclusters(P.right);
  }
  return P;
}

double column_var(const Side& s, std::size_t col) {
  const std::size_t n = s.n();
  if (n < 2) return 0;
  double m = 0;
  for (std::size_t i = 0; i < n; ++i) m += s.D[i * s.k + col];
  m /= n;
  double v = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double e = s.D[i * s.k + col] - m;
    v += e * e;
  }
  return v / n;
}

double column_mean(const Side& s, std::size_t col) {
  double m = 0;
  for (std::size_t i = 0; i < s.n(); ++i) m += s.D[i * s.k + col];
  return m / s.n();
}

// ---------------------------------------------------------------- bandwidth selection
struct BwSide {
  Side s;               // bandwidth units (x / sd, y / sd), D = y, [t], covariates
  std::size_t ny = 1;   // outcome (+ treatment) columns
  std::size_t dz = 0;
};

struct PilotV {
  double V = kNaN, BConst = kNaN;
  std::vector<double> s;
};

struct BwTerms {
  double V = kNaN, B = kNaN, R = kNaN, rate = 0;
};

struct BwContext {
  const RdOptions* opt = nullptr;
  double c = 0, c_bw = 0;
  std::map<std::pair<int, int>, PilotV> cache[2];
};

// The combination vector s of the columns (outcome, treatment, covariates) whose variance and
// bias enter the bandwidth (CCFT 2019; fuzzy: the delta method of the ratio), from the fit f.
std::vector<double> combination(const Window& w, const std::vector<double>& wt, const Fit& f,
                                int nu, std::size_t ny, std::size_t dz) {
  const std::size_t k = w.k;
  std::vector<double> s(k, 0.0);
  const double hn = std::pow(f.hs, -nu) * factorial(nu);
  auto coef = [&](std::size_t m) { return hn * f.beta[nu * k + m]; };
  if (dz == 0) {
    if (ny == 1) {
      s[0] = 1;
    } else {
      const double tY = coef(0), tT = coef(1);
      s[0] = 1 / tT;
      s[1] = -tY / (tT * tT);
    }
    return s;
  }
  std::vector<double> ZZ(dz * dz, 0.0), ZY(dz * ny, 0.0);
  partial_sums(w, wt, f, ny, dz, ZZ, ZY);
  const std::vector<double> g = solve_gamma(ZZ, ZY, dz, ny);
  if (ny == 1) {
    s[0] = 1;
    for (std::size_t a = 0; a < dz; ++a) s[1 + a] = -g[a];
    return s;
  }
  double tY = coef(0), tT = coef(1);
  for (std::size_t a = 0; a < dz; ++a) {
    tY -= g[a * ny + 0] * coef(ny + a);
    tT -= g[a * ny + 1] * coef(ny + a);
  }
  s[0] = 1 / tT;
  s[1] = -tY / (tT * tT);
  for (std::size_t a = 0; a < dz; ++a)
    s[2 + a] = -(1 / tT) * g[a * ny + 0] + (tY / (tT * tT)) * g[a * ny + 1];
  return s;
}

[[noreturn]] void pilot_error(int o, double h) {
  std::ostringstream o_;
  o_ << "bwselect: a pilot fit of order " << o << " at bandwidth " << h
     << " has too few distinct x values on a side of the cutoff; pass h (and b) by hand, "
        "lower p, or set bwcheck";
  throw NumericalError(o_.str());
}

// One side's variance, bias and regularisation terms of the plug-in rule (CCT 2014 supplement
// S.2): the V-fit of order o at the pilot c_bw, the B-fit of order o_B at h_B.
BwTerms bw_terms(BwContext& ctx, int side, const BwSide& bs, int o, int nu, int o_B, double h_B,
                 double scale) {
  const RdOptions& opt = *ctx.opt;
  const Side& s = bs.s;
  const bool clustered = !s.cl.empty();
  const auto key = std::make_pair(o, nu);
  auto it = ctx.cache[side].find(key);
  if (it == ctx.cache[side].end()) {
    PilotV pv;
    const double hV = ctx.c_bw;
    Window w = gather(s, ctx.c, hV, opt.kernel);
    std::vector<double> wt = window_weights(s, w, ctx.c, hV, opt.kernel);
    if (distinct_positive(w, wt) < static_cast<std::size_t>(o + 1)) pilot_error(o, hV);
    Fit f = poly_fit(w, wt, o, hV);
    if (!f.ok) pilot_error(o, hV);
    pv.s = combination(w, wt, f, nu, bs.ny, bs.dz);
    std::vector<double> res = residuals(w, opt.vce, clustered, opt.nnmatch, &f, &wt, o + 1);
    std::vector<double> ell = coef_weights(w, wt, f, nu);
    pv.V = variance_sum(w, ell, res, pv.s, o + 1);
    pv.BConst = bias_constant(w, wt, f, nu);
    it = ctx.cache[side].emplace(key, std::move(pv)).first;
  }
  const PilotV& pv = it->second;
  BwTerms out;
  out.rate = 1.0 / (2 * o + 3);
  if (!(std::isfinite(h_B) && h_B > 0)) return out;
  Window w = gather(s, ctx.c, h_B, opt.kernel);
  std::vector<double> wt = window_weights(s, w, ctx.c, h_B, opt.kernel);
  if (distinct_positive(w, wt) < static_cast<std::size_t>(o_B + 1)) pilot_error(o_B, h_B);
  Fit f = poly_fit(w, wt, o_B, h_B);
  if (!f.ok) pilot_error(o_B, h_B);
  double BWreg = 0;
  if (scale > 0) {
    std::vector<double> res = residuals(w, opt.vce, clustered, opt.nnmatch, &f, &wt, o_B + 1);
    std::vector<double> ell = coef_weights(w, wt, f, o + 1);
    const double VB = variance_sum(w, ell, res, pv.s, o_B + 1);
    BWreg = 3 * pv.BConst * pv.BConst * VB;
  }
  // The bias of the order-o fit involves the (o+1)-th derivative: coefficient o + 1 of the
  // B-fit (CCT 2014, eq. S.2 of the supplement; rdrobust's R code). rdrobust 2.1.1's Python
  // takes the last coefficient (o_B), which differs when q > p + 1 (docs/rd.md).
  const double hb = std::pow(h_B, -(o + 1));
  double sb = 0;
  for (std::size_t m = 0; m < s.k; ++m) sb += pv.s[m] * f.beta[(o + 1) * s.k + m] * hb;
  out.B = std::sqrt(2.0 * (o + 1 - nu)) * pv.BConst * sb;
  out.V = (2 * nu + 1) * std::pow(ctx.c_bw, 2 * nu + 1) * pv.V;
  out.R = scale * (2 * (o + 1 - nu)) * BWreg;
  return out;
}

struct SelectorSet {
  std::map<std::string, RdBandwidths> bws;
};

double median3(double a, double b, double c) {
  if (std::isnan(a) || std::isnan(b) || std::isnan(c)) return kNaN;
  return std::max(std::min(a, b), std::min(std::max(a, b), c));
}

// The ten selectors (rdbwselect's definitions); `which` empty: all.
std::map<std::string, RdBandwidths> select_bandwidths(const Prepared& P, const RdOptions& opt,
                                                      const std::string& which, int bwcheck) {
  const int p = opt.p, q = opt.q, deriv = opt.deriv;
  const bool all = which.empty();
  auto want = [&](std::initializer_list<const char*> names) {
    if (all) return true;
    for (const char* nm : names)
      if (which == nm) return true;
    return false;
  };
  // Scale (stdvars): x and the outcome divided by their standard deviations; the rule is
  // equivariant, so this changes only rounding.
  const std::size_t N = P.n;
  auto sd = [&](auto get) {
    double m = 0;
    for (std::size_t i = 0; i < N; ++i) m += get(i);
    m /= N;
    double v = 0;
    for (std::size_t i = 0; i < N; ++i) {
      const double e = get(i) - m;
      v += e * e;
    }
    return std::sqrt(v / (N - 1));
  };
  const Side* sides[2] = {&P.left, &P.right};
  auto xget = [&](std::size_t i) { return P.x_sorted[i]; };
  auto yget = [&](std::size_t i) {
    return i < P.left.n() ? P.left.D[i * P.left.k] : P.right.D[(i - P.left.n()) * P.right.k];
  };
  const double x_sd_raw = sd(xget);
  // Hyndman-Fan type 2 quantiles (R's quantile(type = 2)).
  auto q2 = [&](double prob) {
    const double h = N * prob;
    const std::size_t j = static_cast<std::size_t>(std::floor(h));
    if (h == j) return 0.5 * (P.x_sorted[j - 1] + P.x_sorted[j]);
    return P.x_sorted[j];
  };
  const double iqr = q2(0.75) - q2(0.25);
  double x_sd = 1, y_sd = 1, BWp = std::min(x_sd_raw, iqr / 1.349);
  if (opt.stdvars) {
    x_sd = x_sd_raw;
    y_sd = sd(yget);
    BWp = std::min(1.0, (iqr / x_sd) / 1.349);
  }
  const bool fuzzy_bw = P.fuzzy && !opt.sharpbw && column_var(P.left, 1) > 0 &&
                        column_var(P.right, 1) > 0;
  BwSide bs[2];
  for (int sd_i = 0; sd_i < 2; ++sd_i) {
    const Side& src = *sides[sd_i];
    Side& s = bs[sd_i].s;
    const std::size_t ny = fuzzy_bw ? 2 : 1;
    bs[sd_i].ny = ny;
    bs[sd_i].dz = P.dz;
    s.k = ny + P.dz;
    s.fw = src.fw;
    s.cl = src.cl;
    s.x.resize(src.n());
    s.D.resize(src.n() * s.k);
    for (std::size_t i = 0; i < src.n(); ++i) {
      s.x[i] = opt.stdvars ? src.x[i] / x_sd : src.x[i];
      s.D[i * s.k] = opt.stdvars ? src.D[i * src.k] / y_sd : src.D[i * src.k];
      if (fuzzy_bw) s.D[i * s.k + 1] = src.D[i * src.k + 1];
      const std::size_t off = P.fuzzy ? 2 : 1;
      for (std::size_t a = 0; a < P.dz; ++a) s.D[i * s.k + ny + a] = src.D[i * src.k + off + a];
    }
  }
  const double c = opt.stdvars ? opt.c / x_sd : opt.c;
  const double x_min = opt.stdvars ? P.x_min / x_sd : P.x_min;
  const double x_max = opt.stdvars ? P.x_max / x_sd : P.x_max;
  const double range_l = std::fabs(c - bs[0].s.x.front());
  const double range_r = std::fabs(c - bs[1].s.x.back());
  double c_bw = pilot_constant(opt.kernel) * BWp *
                std::pow(static_cast<double>(opt.masspoints == MassPoints::adjust
                                                 ? P.m_left + P.m_right
                                                 : N),
                         -0.2);
  const double bw_max_l = std::fabs(c - x_min), bw_max_r = std::fabs(c - x_max);
  const double bw_max = std::max(bw_max_l, bw_max_r);
  if (opt.bwrestrict) c_bw = std::min(c_bw, bw_max);
  double bw_min_l = 0, bw_min_r = 0;
  if (bwcheck > 0) {
    // The bwcheck-th distinct x from the cutoff on each side, padded so that it keeps a
    // positive weight.
    auto kth = [&](const Side& s, bool left) {
      std::vector<double> u;
      for (std::size_t i = 0; i < s.n(); ++i)
        if (i == 0 || s.x[i] != s.x[i - 1]) u.push_back(s.x[i]);
      if (left) std::reverse(u.begin(), u.end());
      const std::size_t kk = std::min<std::size_t>(bwcheck, u.size());
      return std::fabs(u[kk - 1] - c) * (1 + kSqrtEps);
    };
    bw_min_l = kth(bs[0].s, true);
    bw_min_r = kth(bs[1].s, false);
    c_bw = std::max({c_bw, bw_min_l, bw_min_r});
  }
  BwContext ctx;
  ctx.opt = &opt;
  ctx.c = c;
  ctx.c_bw = c_bw;
  const double sr = opt.scaleregul;
  BwTerms Cd[2];
  for (int i = 0; i < 2; ++i)
    Cd[i] = bw_terms(ctx, i, bs[i], q + 1, q + 1, q + 2, (i ? range_r : range_l) * (1 + kSqrtEps),
                     0);
  std::map<std::string, RdBandwidths> out;
  double h_two[2] = {kNaN, kNaN}, b_two[2] = {kNaN, kNaN};
  double h_sum = kNaN, b_sum = kNaN, h_rd = kNaN, b_rd = kNaN;
  const bool need_two = want({"msetwo", "certwo", "msecomb2", "cercomb2"});
  const bool need_sum = want({"msesum", "cersum", "msecomb1", "msecomb2", "cercomb1", "cercomb2"});
  const bool need_rd = want({"mserd", "cerrd", "msecomb1", "msecomb2", "cercomb1", "cercomb2"});
  if (need_two) {
    for (int i = 0; i < 2; ++i) {
      const double bmax = i ? bw_max_r : bw_max_l, bmin = i ? bw_min_r : bw_min_l;
      double d = std::pow(Cd[i].V / (Cd[i].B * Cd[i].B), Cd[i].rate);
      if (opt.bwrestrict) d = std::min(d, bmax);
      if (bwcheck > 0) d = std::max(d, bmin);
      BwTerms Cb = bw_terms(ctx, i, bs[i], q, p + 1, q + 1, d, sr);
      double b = std::pow(Cb.V / (Cb.B * Cb.B + sr * Cb.R), Cb.rate);
      if (opt.bwrestrict) b = std::min(b, bmax);
      BwTerms Ch = bw_terms(ctx, i, bs[i], p, deriv, q, b, sr);
      double h = std::pow(Ch.V / (Ch.B * Ch.B + sr * Ch.R), Ch.rate);
      if (opt.bwrestrict) h = std::min(h, bmax);
      h_two[i] = x_sd * h;
      b_two[i] = x_sd * b;
    }
  }
  // The common bandwidths: sign -1 for the difference (RD), +1 for the sum.
  auto common = [&](double sign, double& h_out, double& b_out) {
    double d = std::pow((Cd[0].V + Cd[1].V) / std::pow(Cd[1].B + sign * Cd[0].B, 2), Cd[0].rate);
    if (opt.bwrestrict) d = std::min(d, bw_max);
    if (bwcheck > 0) d = std::max({d, bw_min_l, bw_min_r});
    BwTerms Cb[2], Ch[2];
    for (int i = 0; i < 2; ++i) Cb[i] = bw_terms(ctx, i, bs[i], q, p + 1, q + 1, d, sr);
    double b = std::pow((Cb[0].V + Cb[1].V) /
                            (std::pow(Cb[1].B + sign * Cb[0].B, 2) + sr * (Cb[1].R + Cb[0].R)),
                        Cb[0].rate);
    if (opt.bwrestrict) b = std::min(b, bw_max);
    for (int i = 0; i < 2; ++i) Ch[i] = bw_terms(ctx, i, bs[i], p, deriv, q, b, sr);
    double h = std::pow((Ch[0].V + Ch[1].V) /
                            (std::pow(Ch[1].B + sign * Ch[0].B, 2) + sr * (Ch[1].R + Ch[0].R)),
                        Ch[0].rate);
    if (opt.bwrestrict) h = std::min(h, bw_max);
    h_out = x_sd * h;
    b_out = x_sd * b;
  };
  if (need_sum) common(+1.0, h_sum, b_sum);
  if (need_rd) common(-1.0, h_rd, b_rd);
  // CER-optimal: the MSE-optimal h times n^(-p / ((3 + p)(3 + 2p))) (CCF 2020, section 4.1;
  // with clusters the number of clusters).
  const double expo = -static_cast<double>(p) / ((3.0 + p) * (3.0 + 2.0 * p));
  const double nn = P.left.cl.empty() ? static_cast<double>(N)
                                      : static_cast<double>(P.g_left + P.g_right);
  const double cer = std::pow(nn, expo);
  auto put = [&](const char* name, double hl, double hr, double bl, double br) {
    if (want({name})) out[name] = RdBandwidths{hl, hr, bl, br};
  };
  const double h_c1 = std::isnan(h_rd) || std::isnan(h_sum) ? kNaN : std::min(h_rd, h_sum);
  const double b_c1 = std::isnan(b_rd) || std::isnan(b_sum) ? kNaN : std::min(b_rd, b_sum);
  const double h_c2l = median3(h_rd, h_sum, h_two[0]), h_c2r = median3(h_rd, h_sum, h_two[1]);
  const double b_c2l = median3(b_rd, b_sum, b_two[0]), b_c2r = median3(b_rd, b_sum, b_two[1]);
  put("mserd", h_rd, h_rd, b_rd, b_rd);
  put("msetwo", h_two[0], h_two[1], b_two[0], b_two[1]);
  put("msesum", h_sum, h_sum, b_sum, b_sum);
  put("msecomb1", h_c1, h_c1, b_c1, b_c1);
  put("msecomb2", h_c2l, h_c2r, b_c2l, b_c2r);
  put("cerrd", h_rd * cer, h_rd * cer, b_rd, b_rd);
  put("certwo", h_two[0] * cer, h_two[1] * cer, b_two[0], b_two[1]);
  put("cersum", h_sum * cer, h_sum * cer, b_sum, b_sum);
  put("cercomb1", h_c1 * cer, h_c1 * cer, b_c1, b_c1);
  put("cercomb2", h_c2l * cer, h_c2r * cer, b_c2l, b_c2r);
  for (const auto& kv : out) {
    const RdBandwidths& b = kv.second;
    for (double v : {b.h_left, b.h_right, b.b_left, b.b_right})
      if (!(std::isfinite(v) && v > 0))
        throw NumericalError("bwselect: the " + kv.first +
                             " bandwidth is not a positive finite number (the estimated bias "
                             "is zero or the pilot fits are degenerate); pass h by hand");
  }
  return out;
}

void validate(const RdOptions& opt) {
  check::require(opt.p >= 0 && opt.p <= 8, "p", "must be an integer in 0..8");
  check::require(opt.q > opt.p && opt.q <= 9, "q",
                 "must be greater than p (q = p + 1 by default) and at most 9");
  check::require(opt.deriv >= 0 && opt.deriv <= opt.p, "deriv", "must be in 0..p");
  check::require(opt.nnmatch >= 1, "nnmatch", "must be a positive integer");
  check::require(opt.bwcheck >= 0, "bwcheck", "must be a positive integer or none");
  check::require(std::isfinite(opt.scaleregul) && opt.scaleregul >= 0, "scaleregul",
                 "must be >= 0");
  check::require(opt.level > 0 && opt.level < 1, "level",
                 "level is a fraction: 0.95 for a 95% interval");
  check::require(std::isnan(opt.rho) || (std::isfinite(opt.rho) && opt.rho > 0), "rho",
                 "must be a positive number");
  for (double v : {opt.h_left, opt.h_right, opt.b_left, opt.b_right})
    check::require(std::isnan(v) || (std::isfinite(v) && v > 0), "h/b",
                   "bandwidths must be positive finite numbers");
  check::require(std::isnan(opt.h_left) == std::isnan(opt.h_right), "h",
                 "give one bandwidth or one per side");
  check::require(std::isnan(opt.b_left) == std::isnan(opt.b_right), "b",
                 "give one bandwidth or one per side");
  check::require(std::isnan(opt.b_left) || !std::isnan(opt.h_left), "b",
                 "a fixed b needs a fixed h (pass h too, or neither)");
  const auto& names = selector_names();
  check::require(std::find(names.begin(), names.end(), opt.bwselect) != names.end(), "bwselect",
                 "must be one of mserd, msetwo, msesum, msecomb1, msecomb2, cerrd, certwo, "
                 "cersum, cercomb1, cercomb2");
}

// q defaults to p + 1. With clusters the variance is CR1 built from the fits' own residuals
// (rdrobust's vce = "cr1": its HC1 residuals without the n / (n - k) factor, which CR1 carries).
RdOptions normalised(RdOptions opt, bool clustered) {
  if (opt.q < 0) opt.q = opt.p + 1;
  if (clustered) {
    check::require(opt.vce != RdVce::hc2 && opt.vce != RdVce::hc3, "vce",
                   "with cluster only CR1 is available (vce 'nn', 'hc0' or 'hc1' with cluster "
                   "give CR1); CR2/CR3 are not implemented yet");
    opt.vce = RdVce::hc1;
  }
  return opt;
}

int effective_bwcheck(const Prepared& P, const RdOptions& opt, bool& mass) {
  mass = false;
  int bwcheck = opt.bwcheck;
  if (opt.masspoints != MassPoints::off) {
    const double ml = 1.0 - double(P.m_left) / P.left.n();
    const double mr = 1.0 - double(P.m_right) / P.right.n();
    mass = ml >= 0.2 || mr >= 0.2;
    if (mass && bwcheck == 0 && opt.masspoints == MassPoints::adjust) bwcheck = 10;
  }
  return bwcheck;
}

// One side of the main estimate: the windows, the p- and q-fits, the equivalent-kernel weights
// of the conventional and the bias-corrected coefficient, and the residuals.
struct SideFit {
  Window w;
  std::vector<double> wh, wb, ellp, ellbc, resh, resb, Ztil;
  Fit fp, fq;
  std::vector<double> cl_coef, bc_coef;  // per column: coefficient deriv (conventional, bc)
  std::vector<double> ZZ, ZY;
  std::size_t nh = 0, nb = 0;
  std::vector<double> beta_p;           // outcome column, scale of (x - c)
};

SideFit fit_side(const Side& s, const RdOptions& opt, double h, double b, bool right,
                 bool clustered, std::size_t ny, std::size_t dz) {
  const int p = opt.p, q = opt.q, deriv = opt.deriv;
  const double c = opt.c;
  SideFit F;
  F.w = gather(s, c, std::max(h, b), opt.kernel);
  F.wh = window_weights(s, F.w, c, h, opt.kernel);
  F.wb = window_weights(s, F.w, c, b, opt.kernel);
  for (std::size_t j = 0; j < F.w.n(); ++j) {
    F.nh += F.wh[j] > 0;
    F.nb += F.wb[j] > 0;
  }
  if (distinct_positive(F.w, F.wh) < static_cast<std::size_t>(p + 1) ||
      distinct_positive(F.w, F.wb) < static_cast<std::size_t>(q + 1)) {
    std::ostringstream o;
    o << "h/b: too few distinct x values within the bandwidths on the "
      << (right ? "right" : "left") << " side of the cutoff (need " << (p + 1)
      << " within h and " << (q + 1) << " within b); widen h or b";
    throw InvalidArgument(o.str());
  }
  F.fp = poly_fit(F.w, F.wh, p, h);
  F.fq = poly_fit(F.w, F.wb, q, b);
  if (!F.fp.ok || !F.fq.ok)
    throw NumericalError("h/b: the local polynomial design is singular within the bandwidth");
  F.ellp = coef_weights(F.w, F.wh, F.fp, deriv);
  const std::vector<double> ellq = coef_weights(F.w, F.wb, F.fq, p + 1);
  // Bias correction (CCT 2014, eq. 3.4 and Theorem 1): beta_bc = beta_p - h^(p+1-nu)
  // (Ginv L)_nu beta_q,p+1, linear in the data with weights l_p - k l_q.
  const double kfac = std::pow(h, p + 1 - deriv) * bias_constant(F.w, F.wh, F.fp, deriv);
  F.ellbc.resize(F.w.n());
  for (std::size_t j = 0; j < F.w.n(); ++j) F.ellbc[j] = F.ellp[j] - kfac * ellq[j];
  const std::size_t k = F.w.k;
  F.cl_coef.assign(k, 0.0);
  F.bc_coef.assign(k, 0.0);
  for (std::size_t m = 0; m < k; ++m) {
    double a = 0, bsum = 0;
    for (std::size_t j = 0; j < F.w.n(); ++j) {
      a += F.ellp[j] * F.w.D[j * k + m];
      bsum += F.ellbc[j] * F.w.D[j * k + m];
    }
    F.cl_coef[m] = a;
    F.bc_coef[m] = bsum;
  }
  F.beta_p.resize(p + 1);
  for (int a = 0; a <= p; ++a) F.beta_p[a] = F.fp.beta[a * k] * std::pow(h, -a);
  F.resh = residuals(F.w, opt.vce, clustered, opt.nnmatch, &F.fp, &F.wh, p + 1);
  F.resb = opt.vce == RdVce::nn
               ? F.resh
               : residuals(F.w, opt.vce, clustered, opt.nnmatch, &F.fq, &F.wb, q + 1);
  if (dz > 0) {
    F.ZZ.assign(dz * dz, 0.0);
    F.ZY.assign(dz * ny, 0.0);
    partial_sums(F.w, F.wh, F.fp, ny, dz, F.ZZ, F.ZY, &F.Ztil);
  }
  return F;
}

}  // namespace

const std::vector<std::string>& selector_names() {
  static const std::vector<std::string> names = {"mserd", "msetwo", "msesum", "msecomb1",
                                                 "msecomb2", "cerrd", "certwo", "cersum",
                                                 "cercomb1", "cercomb2"};
  return names;
}

RdBwResult rdbwselect(const RdData& data, const RdOptions& opt_in, bool all) {
  const RdOptions opt = normalised(opt_in, !data.cluster.empty());
  validate(opt);
  Prepared P = prepare(data, opt);
  RdBwResult r;
  r.n_left = P.left.n();
  r.n_right = P.right.n();
  r.n_dropped = P.n_dropped;
  r.m_left = P.m_left;
  r.m_right = P.m_right;
  r.covs_dropped = P.covs_dropped;
  r.bwcheck_used = effective_bwcheck(P, opt, r.mass_points);
  auto bws = select_bandwidths(P, opt, all ? std::string() : opt.bwselect, r.bwcheck_used);
  for (const auto& nm : selector_names()) {
    auto it = bws.find(nm);
    if (it == bws.end()) continue;
    r.selectors.push_back(nm);
    r.bws.push_back(it->second);
  }
  return r;
}

RdResult rdrobust(const RdData& data, const RdOptions& opt_in) {
  const RdOptions opt = normalised(opt_in, !data.cluster.empty());
  validate(opt);
  Prepared P = prepare(data, opt);
  const int p = opt.p, q = opt.q, deriv = opt.deriv;
  const double c = opt.c;
  RdResult r;
  r.fuzzy = P.fuzzy;
  r.n_left = P.left.n();
  r.n_right = P.right.n();
  r.n_dropped = P.n_dropped;
  r.m_left = P.m_left;
  r.m_right = P.m_right;
  r.covs_kept = P.covs_kept;
  r.covs_dropped = P.covs_dropped;
  const bool clustered = !data.cluster.empty();
  if (P.fuzzy) {
    const double vl = column_var(P.left, 1), vr = column_var(P.right, 1);
    if (vl == 0 && vr == 0 &&
        std::fabs(column_mean(P.left, 1) - column_mean(P.right, 1)) < kSqrtEps)
      throw InvalidArgument("fuzzy: the treatment has no variation and no jump at the cutoff; "
                            "the fuzzy estimate is not identified");
  }
  const int bwcheck = effective_bwcheck(P, opt, r.mass_points);
  double hl = opt.h_left, hr = opt.h_right, bl = opt.b_left, br = opt.b_right;
  if (!std::isnan(hl)) {
    r.bwselect = "Manual";
    if (!std::isnan(opt.rho)) {
      bl = hl / opt.rho;
      br = hr / opt.rho;
    } else if (std::isnan(bl)) {
      bl = hl;
      br = hr;
    }
  } else if (P.n < 20) {
    // Too few observations for the plug-in rule: the widest one-sided range (rdrobust's rule).
    hl = hr = std::max(std::fabs(c - P.x_min), std::fabs(P.x_max - c));
    bl = br = std::isnan(opt.rho) ? hl : hl / opt.rho;
    r.bwselect = "Manual";
  } else {
    auto bws = select_bandwidths(P, opt, opt.bwselect, bwcheck);
    const RdBandwidths& b = bws.at(opt.bwselect);
    hl = b.h_left;
    hr = b.h_right;
    bl = b.b_left;
    br = b.b_right;
    if (!std::isnan(opt.rho)) {
      bl = hl / opt.rho;
      br = hr / opt.rho;
    }
    r.bwselect = opt.bwselect;
  }
  r.bw = RdBandwidths{hl, hr, bl, br};

  const std::size_t ny = P.fuzzy ? 2 : 1, dz = P.dz;
  const double fac = factorial(deriv);
  SideFit S[2] = {fit_side(P.left, opt, hl, bl, false, clustered, ny, dz),
                  fit_side(P.right, opt, hr, br, true, clustered, ny, dz)};
  const Side* sides[2] = {&P.left, &P.right};
  r.nh_left = S[0].nh;
  r.nh_right = S[1].nh;
  r.nb_left = S[0].nb;
  r.nb_right = S[1].nb;
  r.beta_p_left = S[0].beta_p;
  r.beta_p_right = S[1].beta_p;
  // Covariate coefficients (common to both sides).
  std::vector<double> gamma;
  if (dz > 0) {
    std::vector<double> ZZ(dz * dz), ZY(dz * ny);
    for (std::size_t a = 0; a < ZZ.size(); ++a) ZZ[a] = S[0].ZZ[a] + S[1].ZZ[a];
    for (std::size_t a = 0; a < ZY.size(); ++a) ZY[a] = S[0].ZY[a] + S[1].ZY[a];
    gamma = solve_gamma(ZZ, ZY, dz, ny);
    r.gamma.resize(dz);
    for (std::size_t a = 0; a < dz; ++a) r.gamma[a] = gamma[a * ny];
  }
  // Adjusted jump of column m (outcome 0 or treatment 1): s_m' coefficients.
  auto adjusted = [&](const std::vector<double>& coef, std::size_t m) {
    double v = coef[m];
    for (std::size_t a = 0; a < dz; ++a) v -= gamma[a * ny + m] * coef[ny + a];
    return fac * v;
  };
  double tY_cl[2], tY_bc[2], tT_cl[2] = {0, 0}, tT_bc[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    tY_cl[i] = adjusted(S[i].cl_coef, 0);
    tY_bc[i] = adjusted(S[i].bc_coef, 0);
    if (P.fuzzy) {
      tT_cl[i] = adjusted(S[i].cl_coef, 1);
      tT_bc[i] = adjusted(S[i].bc_coef, 1);
    }
  }
  r.tau_cl_left = tY_cl[0];
  r.tau_cl_right = tY_cl[1];
  r.tau_bc_left = tY_bc[0];
  r.tau_bc_right = tY_bc[1];
  const double tauY_cl = tY_cl[1] - tY_cl[0], tauY_bc = tY_bc[1] - tY_bc[0];
  const std::size_t k = ny + dz;
  std::vector<double> sY(k, 0.0), sT(k, 0.0);
  double tau_cl = tauY_cl, tau_bc = tauY_bc;
  if (!P.fuzzy) {
    sY[0] = 1;
    for (std::size_t a = 0; a < dz; ++a) sY[1 + a] = -gamma[a];
    r.bias_left = tY_cl[0] - tY_bc[0];
    r.bias_right = tY_cl[1] - tY_bc[1];
  } else {
    const double tauT_cl = tT_cl[1] - tT_cl[0], tauT_bc = tT_bc[1] - tT_bc[0];
    check::require(tauT_cl != 0, "fuzzy", "the estimated first-stage jump is exactly zero");
    tau_cl = tauY_cl / tauT_cl;
    const double s0 = 1 / tauT_cl, s1 = -tauY_cl / (tauT_cl * tauT_cl);
    tau_bc = tau_cl - (s0 * (tauY_cl - tauY_bc) + s1 * (tauT_cl - tauT_bc));
    r.bias_left = s0 * (tY_cl[0] - tY_bc[0]) + s1 * (tT_cl[0] - tT_bc[0]);
    r.bias_right = s0 * (tY_cl[1] - tY_bc[1]) + s1 * (tT_cl[1] - tT_bc[1]);
    sY[0] = s0;
    sY[1] = s1;
    sT[1] = 1;
    for (std::size_t a = 0; a < dz; ++a) {
      sY[2 + a] = -s0 * gamma[a * ny] - s1 * gamma[a * ny + 1];
      sT[2 + a] = -gamma[a * ny + 1];
    }
    r.first_stage.coef[0] = tauT_cl;
    r.first_stage.coef[1] = r.first_stage.coef[2] = tauT_bc;
  }
  r.est.coef[0] = tau_cl;
  r.est.coef[1] = r.est.coef[2] = tau_bc;
  auto variance = [&](const std::vector<double>& s) {
    double vcl = 0, vrb = 0;
    for (int i = 0; i < 2; ++i) {
      std::size_t g = 0;
      vcl += variance_sum(S[i].w, S[i].ellp, S[i].resh, s, p + 1, &g);
      vrb += variance_sum(S[i].w, S[i].ellbc, S[i].resb, s, q + 1);
      if (clustered) (i ? r.clusters_right : r.clusters_left) = g;
    }
    return std::make_pair(fac * fac * vcl, fac * fac * vrb);
  };
  auto vY = variance(sY);
  r.est.se[0] = r.est.se[1] = std::sqrt(vY.first);
  r.est.se[2] = std::sqrt(vY.second);
  if (P.fuzzy) {
    auto vT = variance(sT);
    r.first_stage.se[0] = r.first_stage.se[1] = std::sqrt(vT.first);
    r.first_stage.se[2] = std::sqrt(vT.second);
  }
  if (clustered) {
    std::vector<std::int64_t> all;
    for (int i = 0; i < 2; ++i) all.insert(all.end(), S[i].w.cl.begin(), S[i].w.cl.end());
    std::sort(all.begin(), all.end());
    r.clusters = static_cast<std::size_t>(std::unique(all.begin(), all.end()) - all.begin());
  }
  // Attention weights: +-nu! l_p, minus the covariate adjustment (a'Z) ZZ^{-1} w_h Ztilde.
  r.weights.assign(P.n_input, 0.0);
  std::vector<double> adj(dz, 0.0);
  if (dz > 0) {
    std::vector<double> ZZ(dz * dz), dZ(dz);
    for (std::size_t a = 0; a < ZZ.size(); ++a) ZZ[a] = S[0].ZZ[a] + S[1].ZZ[a];
    for (std::size_t a = 0; a < dz; ++a)
      dZ[a] = fac * (S[1].cl_coef[ny + a] - S[0].cl_coef[ny + a]);
    bool ok = false;
    const std::vector<double> inv = spd_inverse(ZZ, static_cast<int>(dz), ok);
    for (std::size_t a = 0; a < dz; ++a)
      for (std::size_t b2 = 0; b2 < dz; ++b2) adj[a] += dZ[b2] * inv[b2 * dz + a];
  }
  for (int i = 0; i < 2; ++i) {
    const double sign = i ? 1.0 : -1.0;
    const SideFit& F = S[i];
    const Side& s = *sides[i];
    for (std::size_t j = 0; j < F.w.n(); ++j) {
      double a = sign * fac * F.ellp[j];
      for (std::size_t m = 0; m < dz; ++m) a -= adj[m] * F.wh[j] * F.Ztil[j * dz + m];
      r.weights[s.row[F.w.idx[j]]] = a;
    }
  }
  return r;
}

}  // namespace rd
}  // namespace attnreg
