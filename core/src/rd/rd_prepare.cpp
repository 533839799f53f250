// Regression discontinuity: input checks, missing rows, the sort by x, covariate
// collinearity, and the option rules (attnreg/detail/rd_local.hpp).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
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

// The order-preserving unsigned key of a double (-0.0 taken as 0.0): a < b iff key(a) < key(b).
std::uint64_t sort_key(double v) {
  v += 0.0;
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return (b >> 63) ? ~b : (b | (std::uint64_t(1) << 63));
}

double from_sort_key(std::uint64_t k) {
  const std::uint64_t b = (k >> 63) ? (k & ~(std::uint64_t(1) << 63)) : ~k;
  double v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

// Stable LSD radix sort of the rows by x (11-bit digits of sort_key, at most six passes): O(n),
// rows with equal x keep their input order. The six digit histograms come from the one pass
// that builds the keys; a digit shared by every row costs no pass, and x already ascending (or
// strictly descending: then no ties, so reversing is stable) costs none at all. The sorted
// values, decoded from the keys, go to the sides: xl (x < c) and xr (x >= c).
void sort_by_x(const double* x, std::vector<std::uint32_t>& rows, double c,
               std::vector<double>& xl, std::vector<double>& xr) {
  const std::size_t n = rows.size();
  constexpr int kBits = 11, kPasses = 6;
  constexpr std::size_t kBuckets = std::size_t(1) << kBits;
  std::vector<std::uint64_t> key(n);
  std::vector<std::uint32_t> count(kPasses * kBuckets, 0);  // n < 2^32
  bool ascending = true, descending = n > 1;
  for (std::size_t j = 0; j < n; ++j) {
    const std::uint64_t k = sort_key(x[rows[j]]);
    key[j] = k;
    for (int d = 0; d < kPasses; ++d) ++count[d * kBuckets + ((k >> (kBits * d)) & (kBuckets - 1))];
    if (j > 0) {
      ascending = ascending && k >= key[j - 1];
      descending = descending && k < key[j - 1];
    }
  }
  if (!ascending && descending) {
    std::reverse(key.begin(), key.end());
    std::reverse(rows.begin(), rows.end());
  } else if (!ascending) {
    std::vector<std::uint64_t> key2(n);
    std::vector<std::uint32_t> rows2(n);
    for (int d = 0; d < kPasses; ++d) {
      std::uint32_t* cnt = count.data() + d * kBuckets;
      const int shift = kBits * d;
      if (cnt[(key[0] >> shift) & (kBuckets - 1)] == n) continue;  // one digit: no-op
      std::uint32_t sum = 0;
      for (std::size_t b = 0; b < kBuckets; ++b) {  // exclusive prefix sums: first positions
        const std::uint32_t v = cnt[b];
        cnt[b] = sum;
        sum += v;
      }
      for (std::size_t j = 0; j < n; ++j) {
        const std::uint32_t pos = cnt[(key[j] >> shift) & (kBuckets - 1)]++;
        key2[pos] = key[j];
        rows2[pos] = rows[j];
      }
      key.swap(key2);
      rows.swap(rows2);
    }
  }
  const std::size_t n_left = std::lower_bound(key.begin(), key.end(), sort_key(c)) - key.begin();
  xl.resize(n_left);
  xr.resize(n - n_left);
  for (std::size_t j = 0; j < n_left; ++j) xl[j] = from_sort_key(key[j]);
  for (std::size_t j = n_left; j < n; ++j) xr[j - n_left] = from_sort_key(key[j]);
}

template <class V>
void require_finite_or_nan(const V& v, const char* name) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (std::isinf(v[i]))
      throw InvalidArgument(std::string(name) + ": infinite value at " + row_msg(i) +
                            " (remove the row or set it to NaN to drop it)");
}

// The sides: rows with x < c, then the others (x is sorted and already in the sides); the
// sorted rows are split between them (keep is released) and the columns gathered in that order.
void fill_sides(Prepared& P, const RdDataView& d, std::vector<std::uint32_t>& keep,
                std::size_t k) {
  const std::size_t n = d.x.size();
  const bool fuzzy = !d.t.empty();
  const std::size_t n_left = P.left.x.size();
  P.left.row.assign(keep.begin(), keep.begin() + n_left);
  P.right.row.assign(keep.begin() + n_left, keep.end());
  std::vector<std::uint32_t>().swap(keep);
  for (Side* sp : {&P.left, &P.right}) {
    Side& s = *sp;
    const std::size_t m = s.row.size();
    s.k = k;
    s.D.resize(m * k);
    if (k == 1) {  // sharp, no covariates: the outcome column alone
      for (std::size_t r = 0; r < m; ++r) s.D[r] = d.y[s.row[r]];
    } else {
      for (std::size_t r = 0; r < m; ++r) {
        const std::size_t i = s.row[r];
        double* D = s.D.data() + r * k;
        *D++ = d.y[i];
        if (fuzzy) *D++ = d.t[i];
        for (std::size_t a : P.covs_kept) *D++ = d.z[a * n + i];
      }
    }
    if (!d.weights.empty()) {
      s.fw.resize(m);
      for (std::size_t r = 0; r < m; ++r) s.fw[r] = d.weights[s.row[r]];
    }
    if (!d.cluster.empty()) {
      s.cl.resize(m);
      for (std::size_t r = 0; r < m; ++r) s.cl[r] = d.cluster[s.row[r]];
    }
  }
}

Prepared prepare(const RdDataView& d, const RdOptions& opt) {
  Prepared P;
  const std::size_t n = d.x.size();
  P.n_input = n;
  check::require(n > 0, "x", "is empty (pass the running variable)");
  check::require(n <= std::numeric_limits<std::uint32_t>::max(), "x",
                 "has more than 4,294,967,295 rows; split the data or subsample it");
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
  std::vector<std::uint32_t> keep;
  keep.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    bool ok = std::isfinite(d.x[i]) && std::isfinite(d.y[i]);
    if (fuzzy) ok = ok && std::isfinite(d.t[i]);
    for (std::size_t a = 0; ok && a < d.dz; ++a) ok = std::isfinite(d.z[a * n + i]);
    if (!d.weights.empty()) ok = ok && std::isfinite(d.weights[i]);
    if (!d.cluster.empty()) ok = ok && d.cluster[i] >= 0;
    if (ok) keep.push_back(static_cast<std::uint32_t>(i));
  }
  P.n_dropped = n - keep.size();
  check::require(!keep.empty(), "y", "every row has a missing value");
  if (!d.weights.empty()) {
    double s = 0;
    for (std::size_t i : keep) s += d.weights[i];
    check::require(s > 0, "weights", "must include a positive value");
  }
  const double c = opt.c;
  check::require(std::isfinite(c), "c", "must be a finite number");
  sort_by_x(d.x.data(), keep, c, P.left.x, P.right.x);
  const std::size_t nk = keep.size();
  P.n = nk;
  P.x_min = P.x_sorted(0);
  P.x_max = P.x_sorted(nk - 1);
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
  fill_sides(P, d, keep, k);
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
