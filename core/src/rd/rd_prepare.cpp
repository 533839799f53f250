// Regression discontinuity: input checks, missing rows, the sort by x, covariate
// collinearity, and the option rules (attnreg/detail/rd_local.hpp).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <sstream>
#include <utility>

#include "attnreg/base/error.hpp"
#include "attnreg/detail/rd_local.hpp"

namespace attnreg {
namespace rd {
namespace detail {

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

// Stable LSD radix sort of the rows by x (11-bit digits of the order-preserving bit pattern of
// a double, at most six passes): O(n), rows with equal x keep their input order (-0.0 is taken
// as 0.0). x_sorted receives the sorted values, decoded from the keys (no gather through rows).
void sort_by_x(const std::vector<double>& x, std::vector<std::size_t>& rows,
               std::vector<double>& x_sorted) {
  const std::size_t n = rows.size();
  std::vector<std::uint64_t> key(n), key2(n);
  std::vector<std::size_t> rows2(n);
  for (std::size_t j = 0; j < n; ++j) {
    const double v = x[rows[j]] + 0.0;
    std::uint64_t b;
    std::memcpy(&b, &v, sizeof b);
    key[j] = (b >> 63) ? ~b : (b | (std::uint64_t(1) << 63));
  }
  std::vector<std::size_t> count(2049);
  for (int shift = 0; shift < 64; shift += 11) {
    std::fill(count.begin(), count.end(), 0);
    for (std::size_t j = 0; j < n; ++j) ++count[((key[j] >> shift) & 2047) + 1];
    if (*std::max_element(count.begin(), count.end()) == n) continue;  // one digit: no-op
    for (std::size_t b = 1; b < count.size(); ++b) count[b] += count[b - 1];
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t pos = count[(key[j] >> shift) & 2047]++;
      key2[pos] = key[j];
      rows2[pos] = rows[j];
    }
    key.swap(key2);
    rows.swap(rows2);
  }
  x_sorted.resize(n);
  for (std::size_t j = 0; j < n; ++j) {
    const std::uint64_t k = key[j];
    const std::uint64_t b = (k >> 63) ? (k & ~(std::uint64_t(1) << 63)) : ~k;
    std::memcpy(&x_sorted[j], &b, sizeof b);
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
  sort_by_x(d.x, keep, P.x_sorted);
  const std::size_t nk = keep.size();
  P.n = nk;
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
  // The sides: rows with x < c, then the others (x is sorted), each filled in place.
  const std::size_t n_left =
      std::lower_bound(P.x_sorted.begin(), P.x_sorted.end(), c) - P.x_sorted.begin();
  for (int side = 0; side < 2; ++side) {
    Side& s = side ? P.right : P.left;
    const std::size_t j0 = side ? n_left : 0, m = side ? nk - n_left : n_left;
    s.k = k;
    s.x.assign(P.x_sorted.begin() + j0, P.x_sorted.begin() + j0 + m);
    s.row.assign(keep.begin() + j0, keep.begin() + j0 + m);
    s.D.resize(m * k);
    if (!d.weights.empty()) s.fw.resize(m);
    if (!d.cluster.empty()) s.cl.resize(m);
    for (std::size_t r = 0; r < m; ++r) {
      const std::size_t i = keep[j0 + r];
      double* D = s.D.data() + r * k;
      *D++ = d.y[i];
      if (fuzzy) *D++ = d.t[i];
      for (std::size_t a : P.covs_kept) *D++ = d.z[a * n + i];
      if (!d.weights.empty()) s.fw[r] = d.weights[i];
      if (!d.cluster.empty()) s.cl[r] = d.cluster[i];
    }
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

// q defaults to p + 1. With clusters the names map as rdrobust 2.1.1 maps them: nn, hc0, hc1 and
// cr1 give CR1, built from the fits' own residuals (internally hc1 with clusters: rdrobust's HC1
// residuals without the n / (n - k) factor, which CR1 carries); hc2 and cr2 give CR2
// (Bell-McCaffrey); hc3 and cr3 give CR3. cr1/cr2/cr3 without clusters are refused (rdrobust
// falls back to hc1/hc2/hc3 with a warning; a silent change of estimator is not ours).
RdOptions normalised(RdOptions opt, bool clustered) {
  if (opt.q < 0) opt.q = opt.p + 1;
  if (clustered) {
    if (opt.vce == RdVce::hc2) opt.vce = RdVce::cr2;
    else if (opt.vce == RdVce::hc3) opt.vce = RdVce::cr3;
    else if (opt.vce != RdVce::cr2 && opt.vce != RdVce::cr3) opt.vce = RdVce::hc1;
  } else {
    check::require(opt.vce != RdVce::cr1 && opt.vce != RdVce::cr2 && opt.vce != RdVce::cr3,
                   "vce", "cr1, cr2 and cr3 are cluster-robust variances and need cluster ids "
                   "(pass the clusters, or use hc1, hc2 or hc3 without them)");
  }
  return opt;
}

std::string vce_label(RdVce vce, bool clustered) {
  switch (vce) {
    case RdVce::hc0: return "hc0";
    case RdVce::hc1: return clustered ? "cr1" : "hc1";
    case RdVce::hc2: return "hc2";
    case RdVce::hc3: return "hc3";
    case RdVce::cr1: return "cr1";
    case RdVce::cr2: return "cr2";
    case RdVce::cr3: return "cr3";
    default: return "nn";
  }
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

}  // namespace detail
}  // namespace rd
}  // namespace attnreg
