// Regression discontinuity: kernel weights, windows, the one-sided polynomial fits, their
// equivalent-kernel weights, residuals and variance sums (attnreg/detail/rd_local.hpp).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <sstream>
#include <utility>

#include "attnreg/base/arma.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/detail/rd_local.hpp"

namespace attnreg {
namespace rd {
namespace detail {

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



// Kernel weight fw_i K((x_i - c) / h) / h, as rdpackages computes it.
double unit_weight(const Side& s, std::size_t i, double c, double h, RdKernel kern) {
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
  w.c = c;
  if (s.fw.empty() && first < last && (s.x[first] >= c || s.x[last - 1] <= c)) {
    // No unit weights and the candidates on one side of c: |x - c| / h, as unit_weight
    // computes it, is monotone in x there (rounding is monotone), and so is K > 0 (K is
    // positive exactly below a threshold of |u| for each kernel). The positive rows are a
    // contiguous run that ends (left of c) or starts (right of c) at the candidate nearest c:
    // two binary searches with the weight itself find it, without evaluating every row.
    const bool right = s.x[first] >= c;
    auto positive = [&](std::size_t i) { return unit_weight(s, i, c, h, kern) > 0; };
    std::size_t lo = first, hi = last;
    if (right) {
      std::size_t a = first, b = last;  // first non-positive in [first, last)
      while (a < b) {
        const std::size_t m = a + (b - a) / 2;
        if (positive(m)) a = m + 1;
        else b = m;
      }
      hi = a;
    } else {
      std::size_t a = first, b = last;  // first positive in [first, last)
      while (a < b) {
        const std::size_t m = a + (b - a) / 2;
        if (positive(m)) b = m;
        else a = m + 1;
      }
      lo = a;
    }
    w.n_ = hi > lo ? hi - lo : 0;
    w.block = true;
    w.first = w.n_ == 0 ? first : lo;
    w.x = s.x.data() + w.first;
    w.D = s.D.data() + w.first * s.k;
    if (!s.cl.empty()) w.cl = s.cl.data() + w.first;
    return w;
  }
  std::size_t n = 0, lo = last, hi = first;
  for (std::size_t i = first; i < last; ++i) {
    if (unit_weight(s, i, c, h, kern) > 0) {
      ++n;
      lo = std::min(lo, i);
      hi = i + 1;
    }
  }
  w.n_ = n;
  if (n == 0 || hi - lo == n) {  // a contiguous block: a view of the side
    w.block = true;
    w.first = n == 0 ? first : lo;
    w.x = s.x.data() + w.first;
    w.D = s.D.data() + w.first * s.k;
    if (!s.cl.empty()) w.cl = s.cl.data() + w.first;
    return w;
  }
  w.block = false;  // unit weights of 0 inside the window: a gathered copy
  for (std::size_t i = lo; i < hi; ++i)
    if (unit_weight(s, i, c, h, kern) > 0) w.idx_.push_back(i);
  w.x_.resize(n);
  w.D_.resize(n * s.k);
  if (!s.cl.empty()) w.cl_.resize(n);
  for (std::size_t j = 0; j < n; ++j) {
    const std::size_t i = w.idx_[j];
    w.x_[j] = s.x[i];
    for (std::size_t m = 0; m < s.k; ++m) w.D_[j * s.k + m] = s.D[i * s.k + m];
    if (!s.cl.empty()) w.cl_[j] = s.cl[i];
  }
  w.x = w.x_.data();
  w.D = w.D_.data();
  if (!s.cl.empty()) w.cl = w.cl_.data();
  return w;
}

// kernel_value with the kernel fixed at compile time (the same operations).
template <RdKernel K>
inline double kernel_of(double u) {
  const double a = std::fabs(u);
  if (!(a <= 1.0)) return 0.0;
  if (K == RdKernel::epanechnikov) return 0.75 * (1.0 - u * u);
  if (K == RdKernel::uniform) return 0.5;
  return 1.0 - a;
}

template <RdKernel K>
void block_weights(const Window& w, double c, double h, double* out) {
  for (std::size_t j = 0; j < w.n(); ++j) out[j] = kernel_of<K>((w.x[j] - c) / h) / h;
}

std::vector<double> window_weights(const Side& s, const Window& w, double c, double h,
                                   RdKernel kern) {
  std::vector<double> out(w.n());
  if (w.block && s.fw.empty()) {  // unit_weight of each row, without a call per row
    if (kern == RdKernel::epanechnikov)
      block_weights<RdKernel::epanechnikov>(w, c, h, out.data());
    else if (kern == RdKernel::uniform)
      block_weights<RdKernel::uniform>(w, c, h, out.data());
    else
      block_weights<RdKernel::triangular>(w, c, h, out.data());
    return out;
  }
  for (std::size_t j = 0; j < w.n(); ++j) out[j] = unit_weight(s, w.idx(j), c, h, kern);
  return out;
}

std::size_t distinct_positive(const Window& w, const std::vector<double>& wt,
                              std::size_t enough) {
  std::size_t m = 0;
  double last = kNaN;
  bool any = false;
  for (std::size_t j = 0; j < w.n() && m < enough; ++j) {
    if (!(wt[j] > 0)) continue;
    if (!any || w.x[j] != last) ++m;
    any = true;
    last = w.x[j];
  }
  return m;
}


// (Ginv sum_j w_j s_j t_j^(o+1))[coef]: the leading bias term of coefficient `coef`.
double bias_constant(const Window& w, const std::vector<double>& wt, const Fit& f, int coef) {
  const int k1 = f.o + 1;
  std::vector<double> L(k1, 0.0), s(k1 + 1);
  for (std::size_t j = 0; j < w.n(); ++j) {
    if (wt[j] == 0) continue;
    const double t = w.u(j) / f.hs;
    s[0] = 1;
    for (int a = 1; a <= k1; ++a) s[a] = s[a - 1] * t;
    for (int a = 0; a < k1; ++a) L[a] += wt[j] * s[a] * s[k1];
  }
  double v = 0;
  for (int b = 0; b < k1; ++b) v += f.Ginv[coef * k1 + b] * L[b];
  return v;
}

// Nearest-neighbour residuals (Abadie and Imbens 2006; CCT 2014, section 3) of the tie groups
// starting in rows [from, to) of a sorted block of n rows (x ascending, D row-major n x k): the
// mean of at least cap = min(nnmatch, n - 1) nearest neighbours within the block, ties in x taken
// together, distances equal up to sqrt(eps) relative taken from both sides, scaled by
// sqrt(J / (J + 1)). `from` must start a tie group; groups are stepped over by scanning equal x.
void nn_residuals(const double* x, const double* D, std::size_t n, std::size_t k, int nnmatch,
                  std::size_t from, std::size_t to, double* res, std::size_t base) {
  const std::size_t cap = std::min<std::size_t>(nnmatch, n - 1);
  auto group_end = [&](std::size_t j) {  // one past the tie group of row j
    const double v = x[j];
    while (++j < n && x[j] == v) {}
    return j;
  };
  auto group_start = [&](std::size_t j) {  // the first row of the tie group of row j
    const double v = x[j];
    while (j > 0 && x[j - 1] == v) --j;
    return j;
  };
  std::size_t g0 = from;
  while (g0 < to) {
    const std::size_t g1 = group_end(g0);
    std::size_t lo = g0, hi = g1;
    const double xg = x[g0];
    while (hi - lo - 1 < cap) {
      if (lo == 0) {
        hi = group_end(hi);
      } else if (hi >= n) {
        lo = group_start(lo - 1);
      } else {
        const double dl = xg - x[lo - 1], dr = x[hi] - xg;
        const double tol = std::max(dl, dr) * kSqrtEps;
        if (dl - dr > tol) {
          hi = group_end(hi);
        } else if (dr - dl > tol) {
          lo = group_start(lo - 1);
        } else {
          hi = group_end(hi);
          lo = group_start(lo - 1);
        }
      }
    }
    const double J = static_cast<double>(hi - lo - 1);
    const double sf = std::sqrt(J / (J + 1));
    for (std::size_t m = 0; m < k; ++m) {
      double sum = 0;
      for (std::size_t j = lo; j < hi; ++j) sum += D[j * k + m];
      for (std::size_t j = g0; j < g1; ++j) {
        const double yj = D[j * k + m];
        res[(j - base) * k + m] = sf * (yj - (sum - yj) / J);
      }
    }
    g0 = g1;
  }
}

// The nearest-neighbour residuals of a window that is the contiguous block [first, last) of the
// side's rows, from those of the whole side (full): a group's neighbours differ only if they
// would reach past the block's edge. A neighbour group L is taken only while fewer than cap + 1
// rows are held, and the rows between L and the group are held before L, so a group more than
// cap rows away from the edge group never reaches it and keeps the side's residuals; the groups
// within cap rows of a cut edge are recomputed within the block (test_rd.cpp compares this with
// the window-local computation on ties, few points and shifted x).
void NnSide::cover(std::size_t first, std::size_t last, int nnmatch) {
  if (r1 > r0 && first >= r0 && last <= r1) return;
  const Side& s = *side;
  const std::size_t n = s.n(), k = s.k;
  if (!res) res.reset(new double[n * k]);  // uninitialised: untouched rows cost no memory
  std::size_t a = r1 > r0 ? std::min(first, r0) : first;
  std::size_t b = r1 > r0 ? std::max(last, r1) : last;
  while (a > 0 && s.x[a - 1] == s.x[a]) --a;          // back to the start of a tie group
  while (b > 0 && b < n && s.x[b] == s.x[b - 1]) ++b;  // on to the end of one
  const double* x = s.x.data();
  const double* D = s.D.data();
  if (r1 > r0) {
    if (a < r0) nn_residuals(x, D, n, k, nnmatch, a, r0, res.get());
    if (r1 < b) nn_residuals(x, D, n, k, nnmatch, r1, b, res.get());
  } else {
    nn_residuals(x, D, n, k, nnmatch, a, b, res.get());
  }
  r0 = a;
  r1 = b;
}

void nn_residuals_from_side(const Side& s, const NnSide& full, std::size_t first,
                            std::size_t last, int nnmatch, std::vector<double>& res) {
  const std::size_t k = s.k, n = last - first;
  res.assign(full.res.get() + first * k, full.res.get() + last * k);
  const std::size_t cap = std::min<std::size_t>(nnmatch, n - 1);
  const double* x = s.x.data() + first;
  const double* D = s.D.data() + first * k;
  if (first > 0) {  // groups starting before the end of the first group + cap
    std::size_t e = 0;
    while (e < n && x[e] == x[0]) ++e;
    std::size_t to = std::min(n, e + cap);
    while (to < n && to > 0 && x[to] == x[to - 1]) ++to;  // finish the group
    nn_residuals(x, D, n, k, nnmatch, 0, to, res.data());
  }
  if (last < s.n()) {  // groups ending after the start of the last group - cap
    std::size_t b = n - 1;
    while (b > 0 && x[b - 1] == x[n - 1]) --b;
    std::size_t from = b > cap ? b - cap : 0;
    while (from > 0 && x[from - 1] == x[from]) --from;  // back to the group's start
    nn_residuals(x, D, n, k, nnmatch, from, n, res.data());
  }
}

// Residuals (row-major n x k) for the variance: nearest-neighbour (nn_residuals, within the
// window; from the side's own, `nn_side`, when the window is a contiguous block of the side)
// or the fit's residuals with the HC0-HC3 factors.
std::vector<double> residuals(const Window& w, RdVce vce, bool clustered, int nnmatch,
                              const Fit* f, const std::vector<double>* wt, int d,
                              const NnSide* nn_side) {
  const std::size_t n = w.n(), k = w.k;
  if (vce == RdVce::nn) {
    std::vector<double> res;
    if (n == 0) return res;
    if (nn_side && w.block && n > static_cast<std::size_t>(nnmatch)) {
      nn_residuals_from_side(*nn_side->side, *nn_side, w.first, w.first + n, nnmatch, res);
      return res;
    }
    res.assign(n * k, 0.0);
    nn_residuals(w.x, w.D, n, k, nnmatch, 0, n, res.data());
    return res;
  }
  std::vector<double> res(n * k, 0.0);
  const int k1 = f->o + 1;
  std::vector<double> s(k1);
  const double nn = static_cast<double>(n);
  for (std::size_t j = 0; j < n; ++j) {
    const double t = w.u(j) / f->hs;
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
  if (clustered && cluster_leverage(vce)) cluster_adjust(w, vce == RdVce::cr3, *f, *wt, res);
  return res;
}

// sum_j (l_j r_j)^2 with r_j = s' res_j, or with clusters (CR1) the sum over clusters of
// (sum_g l_j r_j)^2 times (n - 1) / (n - k_df) * G / (G - 1).
double variance_sum(const Window& w, const std::vector<double>& ell,
                    const std::vector<double>& res, const std::vector<double>& s, int k_df,
                    std::size_t* n_clusters, bool cr1_factor) {
  const std::size_t n = w.n(), k = w.k;
  auto comb = [&](std::size_t j) {
    double r = 0;
    for (std::size_t m = 0; m < k; ++m) r += s[m] * res[j * k + m];
    return r;
  };
  if (!w.cl) {
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
  if (!cr1_factor) return v;  // CR2/CR3: the residuals carry the adjustment (cluster_adjust)
  const double nn = static_cast<double>(n);
  return v * ((nn - 1) / (nn - k_df)) * (g / (g - 1));
}

// CR2 (Bell and McCaffrey 2002, Survey Methodology 28(2), 169-181, section 3) and CR3 (its
// jackknife form; Pustejovsky and Tipton 2018, J. Bus. Econ. Stat. 36(4), eq. 7 with
// A_g = (I - H_gg)^{-1}): the residuals e_g of cluster g become
//     e*_g = W_g^{-1/2} A_g W_g^{1/2} e_g,  A_g = (I - H_gg)^{-1/2} (CR2) or (I - H_gg)^{-1} (CR3),
// H_gg = W_g^{1/2} X_g G^{-1} X_g' W_g^{1/2} the cluster's block of the weighted hat matrix of the
// fit f that produced the residuals (G = X'WX, X the basis t^a of the fit, W its kernel weights
// wt), and the variance is sum_g (sum_{j in g} l_j s'e*_j)^2 with no small-sample factor.
// With G^{-1} = C C' (Cholesky) and C' L_g C = V diag(tau) V' (L_g = X_g' W_g X_g), tau are the
// nonzero eigenvalues of H_gg and
//     e*_g = e_g + X_g C V diag(c(tau)) V' C' X_g' W_g e_g,
//     c(tau) = ((1 - tau)^{-1/2} - 1) / tau (CR2, 1/2 at tau = 0) or 1 / (1 - tau) (CR3, so that
//     C V diag(c) V' C' = (G - L_g)^{-1}, the leave-cluster-out inverse).
// This form needs no W^{-1/2}: rows of the window with weight 0 in this fit (within max(h, b)
// but outside its bandwidth) get the correction X_j (...) too, as rdrobust 2.1.1's robust
// variance with h != b does. A cluster without which the fit is not identified (an eigenvalue
// of H_gg within 1e-8 of 1: I - H_gg singular) is an error, as the least-squares CR3 of
// core/src/least_squares/cluster_inference.cpp refuses an unidentified leave-cluster-out fit.
void cluster_adjust(const Window& w, bool cr3, const Fit& f, const std::vector<double>& wt,
                    std::vector<double>& res) {
  const std::size_t n = w.n(), k = w.k;
  const int k1 = f.o + 1;
  arma::mat Ginv(f.Ginv.data(), k1, k1);
  Ginv = 0.5 * (Ginv + Ginv.t());
  arma::mat C;
  if (!arma::chol(C, Ginv, "lower"))
    throw NumericalError("vce: CR2/CR3: the local polynomial design is not positive definite; "
                         "widen h or b, or use vce='cr1'");
  std::map<std::int64_t, std::vector<std::size_t>> members;
  for (std::size_t j = 0; j < n; ++j) members[w.cl[j]].push_back(j);
  arma::mat X(n, k1);
  for (std::size_t j = 0; j < n; ++j) {
    const double t = w.u(j) / f.hs;
    double v = 1;
    for (int a = 0; a < k1; ++a) {
      X(j, a) = v;
      v *= t;
    }
  }
  for (const auto& kv : members) {
    const std::vector<std::size_t>& rows = kv.second;
    arma::mat L(k1, k1, arma::fill::zeros);
    arma::mat XWe(k1, k, arma::fill::zeros);
    for (std::size_t j : rows) {
      const arma::rowvec xj = X.row(j);
      L += wt[j] * (xj.t() * xj);
      for (std::size_t m = 0; m < k; ++m) XWe.col(m) += (wt[j] * res[j * k + m]) * xj.t();
    }
    arma::mat F = C.t() * L * C;
    F = 0.5 * (F + F.t());
    arma::vec tau;
    arma::mat V;
    if (!arma::eig_sym(tau, V, F))
      throw NumericalError("vce: CR2/CR3: eigendecomposition of a cluster's leverage failed");
    arma::vec cfac(k1);
    for (int a = 0; a < k1; ++a) {
      const double ta = std::max(tau(a), 0.0);
      if (1.0 - ta <= 1e-8) {
        std::ostringstream o;
        o << "cluster: without cluster " << kv.first << " (its code) the local polynomial fit "
          << "on one side of the cutoff is not identified (I - H_gg is singular), so CR2/CR3 are "
          << "undefined; use vce='cr1', widen h or b, or merge that cluster with another";
        throw InvalidArgument(o.str());
      }
      if (cr3) cfac(a) = 1.0 / (1.0 - ta);
      else cfac(a) = ta < 1e-12 ? 0.5 : (1.0 / std::sqrt(1.0 - ta) - 1.0) / ta;
    }
    const arma::mat CV = C * V;
    const arma::mat adj = CV * arma::diagmat(cfac) * (CV.t() * XWe);  // k1 x k
    for (std::size_t j : rows)
      for (std::size_t m = 0; m < k; ++m) res[j * k + m] += arma::dot(X.row(j), adj.col(m));
  }
}

// ---------------------------------------------------------------- covariate adjustment
// Partial the polynomial out of every column (weights wt): sums over the window of
// w Ztilde Ztilde' (dz x dz) and w Ztilde Dtilde (dz x (1 + dT)), Dtilde the residuals of the
// outcome/treatment columns (CCFT 2019, eq. 4).
void partial_sums(const Window& w, const std::vector<double>& wt, const Fit& f, std::size_t ny,
                  std::size_t dz, std::vector<double>& ZZ, std::vector<double>& ZY,
                  std::vector<double>* Ztil) {
  const std::size_t k = w.k;
  const int k1 = f.o + 1;
  std::vector<double> s(k1), r(k);
  if (Ztil) Ztil->assign(w.n() * dz, 0.0);
  for (std::size_t j = 0; j < w.n(); ++j) {
    const double t = w.u(j) / f.hs;
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

}  // namespace detail
}  // namespace rd
}  // namespace attnreg
