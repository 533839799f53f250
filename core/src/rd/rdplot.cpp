// Regression discontinuity plots (see attnreg/rd/rdplot.hpp for the references): the numbers of
// bins of Calonico, Cattaneo and Titiunik (2015, JASA 110(512)), the binned means with their t
// intervals and the global polynomial fits on each side of the cutoff.
#include "attnreg/rd/rdplot.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "attnreg/base/error.hpp"
#include "attnreg/detail/rdplot_detail.hpp"
#include "attnreg/inference/distributions.hpp"

namespace attnreg {
namespace rd {
namespace rdplot_detail {

// Householder QR: the reflections are applied to A's later columns and to B; R stays in A.
std::vector<double> qr_ls(std::vector<double> A, std::size_t n, std::size_t k,
                          std::vector<double> B, std::size_t r, std::vector<double>& rdiag) {
  for (std::size_t j = 0; j < k && j < n; ++j) {
    double* a = &A[j * n];
    double norm = 0;
    for (std::size_t i = j; i < n; ++i) norm = std::hypot(norm, a[i]);
    if (norm == 0) continue;
    const double alpha = a[j] > 0 ? -norm : norm;
    a[j] -= alpha;  // v = a_j - alpha e_j, stored in place; R_jj = alpha
    double vv = 0;
    for (std::size_t i = j; i < n; ++i) vv += a[i] * a[i];
    auto reflect = [&](double* col) {
      double s = 0;
      for (std::size_t i = j; i < n; ++i) s += a[i] * col[i];
      s = 2 * s / vv;
      for (std::size_t i = j; i < n; ++i) col[i] -= s * a[i];
    };
    for (std::size_t l = j + 1; l < k; ++l) reflect(&A[l * n]);
    for (std::size_t l = 0; l < r; ++l) reflect(&B[l * n]);
    // keep R_jj in the diagonal; the rest of column j is no longer needed
    a[j] = alpha;
  }
  rdiag.assign(k, 0.0);
  bool full = n >= k;
  for (std::size_t j = 0; j < k && j < n; ++j) {
    rdiag[j] = std::fabs(A[j * n + j]);
    full = full && rdiag[j] > 0;
  }
  std::vector<double> X(k * r, kNaN);
  if (!full) return X;
  for (std::size_t l = 0; l < r; ++l)
    for (std::size_t jj = k; jj-- > 0;) {
      double s = B[l * n + jj];
      for (std::size_t m = jj + 1; m < k; ++m) s -= A[m * n + jj] * X[l * k + m];
      X[l * k + jj] = s / A[jj * n + jj];
    }
  return X;
}

std::vector<double> qr_solve(std::vector<double> A, std::size_t n, std::size_t k,
                             std::vector<double> B, std::size_t r, const std::string& what) {
  if (n < k) throw NumericalError(what + ": fewer rows than coefficients");
  std::vector<double> rdiag;
  std::vector<double> X = qr_ls(std::move(A), n, k, std::move(B), r, rdiag);
  const double rmax = *std::max_element(rdiag.begin(), rdiag.end());
  const double tol = rmax * static_cast<double>(n) * std::numeric_limits<double>::epsilon();
  for (std::size_t j = 0; j < k; ++j)
    if (!(rdiag[j] > tol))
      throw NumericalError(what + ": the polynomial design is rank deficient (too few distinct x "
                                  "values for its order); lower the order");
  return X;
}

double kernel_weight(RdKernel k, double u) {
  const double a = std::fabs(u);
  if (a > 1) return 0;
  switch (k) {
    case RdKernel::triangular: return 1 - a;
    case RdKernel::epanechnikov: return 0.75 * (1 - u * u);
    case RdKernel::uniform: return 0.5;
  }
  return 0;
}

// numpy.linspace(a, b, J + 1): a + i * ((b - a) / J), the last point exactly b.
std::vector<double> linspace_edges(double a, double b, int J) {
  std::vector<double> e(J + 1);
  const double step = (b - a) / J;
  for (int i = 0; i <= J; ++i) e[i] = i * step + a;
  e[J] = b;
  return e;
}

// The empirical quantiles of sorted x at i / J, i = 0..J (Hyndman and Fan 1996 type 7, the
// default of R's quantile and numpy.quantile, interpolated as numpy does).
std::vector<double> quantile_edges(const std::vector<double>& xs, int J) {
  const std::size_t n = xs.size();
  std::vector<double> e(J + 1);
  const double step = 1.0 / J;
  for (int i = 0; i <= J; ++i) {
    const double q = i == J ? 1.0 : i * step;
    const double v = (static_cast<double>(n) - 1) * q;
    double lo = std::floor(v);
    std::size_t ilo = static_cast<std::size_t>(lo);
    if (ilo >= n - 1) { e[i] = xs[n - 1]; continue; }
    const double g = v - lo, a = xs[ilo], b = xs[ilo + 1], d = b - a;
    e[i] = g >= 0.5 ? b - d * (1 - g) : a + d * g;
  }
  return e;
}

// The quartic (or lower, with few distinct x) fits of E[y|x] and E[y^2|x] on one side and the
// spacings sums of CCT 2015 section 3 (their B and V estimators).
struct SideConstants {
  double sum_mu1sq = 0;       // sum_i mu1(x_i)^2
  double sum_dx_dy2 = 0;      // sum dx_i dy_i^2
  double sum_dx_s2bar = 0;    // sum dx_i sigma2(xbar_i)
  double sum_dx2_mu1bar2 = 0; // sum dx_i^2 mu1(xbar_i)^2
  double sum_dy2 = 0;         // sum dy_i^2
  double sum_s2 = 0;          // sum sigma2(x_i)
};

SideConstants side_constants(const SideData& s, double c, std::size_t m, double var_y,
                             const std::string& side) {
  const std::size_t n = s.x.size();
  const int k = static_cast<int>(std::min<std::size_t>(4, m - 1));
  double sc = 0;
  for (double v : s.x) sc = std::max(sc, std::fabs(v - c));
  std::vector<double> A(n * (k + 1)), B(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    const double t = (s.x[i] - c) / sc;
    double pw = 1;
    for (int j = 0; j <= k; ++j) { A[j * n + i] = pw; pw *= t; }
    B[i] = s.y[i];
    B[n + i] = s.y[i] * s.y[i];
  }
  const std::vector<double> g = qr_solve(A, n, k + 1, B, 2, "rdplot (" + side + " side)");
  auto mu = [&](int col, double x) {
    const double t = (x - c) / sc;
    double v = 0;
    for (int j = k; j >= 0; --j) v = v * t + g[col * (k + 1) + j];
    return v;
  };
  auto mu1 = [&](double x) {
    const double t = (x - c) / sc;
    double v = 0;
    for (int j = k; j >= 1; --j) v = v * t + j * g[j];
    return v / sc;
  };
  auto sigma2 = [&](double x) {
    const double m0 = mu(0, x), s2 = mu(1, x) - m0 * m0;
    return s2 < 0 ? var_y : s2;
  };
  SideConstants out;
  for (std::size_t i = 0; i < n; ++i) {
    const double d1 = mu1(s.x[i]);
    out.sum_mu1sq += d1 * d1;
    out.sum_s2 += sigma2(s.x[i]);
  }
  for (std::size_t i = 0; i + 1 < n; ++i) {
    const double dx = s.x[i + 1] - s.x[i], dy = s.y[i + 1] - s.y[i];
    const double xbar = (s.x[i + 1] + s.x[i]) / 2;
    const double d1 = mu1(xbar);
    out.sum_dx_dy2 += dx * dy * dy;
    out.sum_dx_s2bar += dx * sigma2(xbar);
    out.sum_dx2_mu1bar2 += dx * dx * d1 * d1;
    out.sum_dy2 += dy * dy;
  }
  return out;
}

double sample_var(const std::vector<double>& v) {
  const std::size_t n = v.size();
  double m = 0;
  for (double a : v) m += a;
  m /= n;
  double s = 0;
  for (double a : v) s += (a - m) * (a - m);
  return s / (n - 1);
}

// What the rule needs to know, fixed for both sides.
struct Rule {
  BinSelect bs;
  bool quantile, pr, mv;
  double dn;  // total sample size
};

// The numbers of bins of one side (CCT 2015 section 3) and the J used.
void choose_bins(const SideData& s, RdPlotSide& out, bool right, const RdPlotOptions& opt,
                 const Rule& rule, double range) {
  const bool pr = rule.pr, quantile = rule.quantile, mv = rule.mv;
  const BinSelect bs = rule.bs;
  const double dn = rule.dn;
  const double logn2 = std::log(dn) * std::log(dn);
  auto J_imse = [&](double B, double V) { return std::ceil(std::pow(2 * B / V * dn, 1.0 / 3.0)); };
  auto J_mv = [&](double var_y, double V) { return std::ceil(var_y / V * (dn / logn2)); };
  const std::string name = right ? "right" : "left";
  const double c = opt.c;
  const std::size_t ns = s.x.size();
  const double dns = static_cast<double>(ns);
  out.var_y = sample_var(s.y);
  out.scale = right ? opt.scale_right : opt.scale_left;

  // CCT 2015 section 3: B and V of evenly spaced (es) and quantile spaced (qs) bins.
  const SideConstants k = side_constants(s, c, out.m, out.var_y, name);
  const double B_es = range * range / (12 * dn) * k.sum_mu1sq;
  const double V_es = pr ? k.sum_dx_s2bar / range : 0.5 / range * k.sum_dx_dy2;
  const double B_qs = dns * dns / (24 * dn) * k.sum_dx2_mu1bar2;
  const double V_qs = pr ? k.sum_s2 / dns : k.sum_dy2 / (2 * dns);
  const double B = quantile ? B_qs : B_es, V = quantile ? V_qs : V_es;
  out.J_imse = J_imse(B, V);
  out.J_mv = J_mv(out.var_y, V);
  const int nb = right ? opt.nbins_right : opt.nbins_left;
  double J;
  if (nb > 0) {
    J = nb;
  } else {
    const double Jsel = mv ? out.J_mv : out.J_imse;
    J = std::floor(out.scale * Jsel);
    if (!(std::isfinite(J) && J >= 1) && out.var_y > 0)
      throw NumericalError("binselect: the " + binselect_name(bs) + " rule gives no finite "
                           "number of bins on the " + name + " side (a zero variance or bias "
                           "estimate); set nbins");
  }
  if (out.var_y == 0) J = 1;  // a constant outcome: one bin (as rdplot)
  out.J = static_cast<int>(J);
  out.rscale = out.J / out.J_imse;
}

// The bins of one side: edges, counts, means and t intervals.
void fill_bins(const SideData& s, RdPlotSide& out, bool right, const RdPlotOptions& opt,
               bool quantile, double xmin, double xmax) {
  const double c = opt.c;
  const std::size_t ns = s.x.size();
  // Bins: [e_j, e_{j+1}), the last closed on the right.
  out.edges = quantile ? quantile_edges(s.x, out.J)
                       : (right ? linspace_edges(c, xmax, out.J) : linspace_edges(xmin, c, out.J));
  const std::size_t J_ = out.J;
  out.count.assign(J_, 0);
  std::vector<double> sx(J_, 0), sy(J_, 0);
  std::vector<std::size_t> bin(ns);
  for (std::size_t i = 0; i < ns; ++i) {
    const std::size_t b = bin_index(out.edges, s.x[i]);
    bin[i] = b;
    ++out.count[b];
    sx[b] += s.x[i];
    sy[b] += s.y[i];
  }
  out.mid.resize(J_);
  out.mean_x.assign(J_, kNaN);
  out.mean_y.assign(J_, kNaN);
  out.sd_y.assign(J_, kNaN);
  out.se_y.assign(J_, kNaN);
  out.ci_low.assign(J_, kNaN);
  out.ci_high.assign(J_, kNaN);
  std::vector<double> ss(J_, 0);
  for (std::size_t j = 0; j < J_; ++j) {
    out.mid[j] = (out.edges[j] + out.edges[j + 1]) / 2;
    if (out.count[j] == 0) continue;
    out.mean_x[j] = sx[j] / out.count[j];
    out.mean_y[j] = sy[j] / out.count[j];
  }
  for (std::size_t i = 0; i < ns; ++i) {
    const double d = s.y[i] - out.mean_y[bin[i]];
    ss[bin[i]] += d * d;
  }
  for (std::size_t j = 0; j < J_; ++j) {
    const std::size_t N = out.count[j];
    if (N == 0) continue;
    // The t interval of a bin mean (one observation: sd 0, the interval is the point).
    out.sd_y[j] = N > 1 ? std::sqrt(ss[j] / (N - 1)) : 0.0;
    out.se_y[j] = out.sd_y[j] / std::sqrt(double(N));
    const double q = student_t_quantile((1 + opt.level) / 2,
                                                   std::max<double>(double(N) - 1, 1));
    out.ci_low[j] = out.mean_y[j] - q * out.se_y[j];
    out.ci_high[j] = out.mean_y[j] + q * out.se_y[j];
  }
}

// The weighted polynomial fit of one side (and of covariate columns, when asked).
std::vector<double> side_ls(const SideData& s, RdPlotSide& out, bool right,
                            const RdPlotOptions& opt, double range, std::size_t dz,
                            const std::vector<std::size_t>& cols, std::vector<double>* resid,
                            bool kh) {
  using check::require;
  const std::string name = right ? "right" : "left";
  const double c = opt.c;
  const std::size_t ns = s.x.size();
  const bool hl = !std::isnan(opt.h_left), hr = !std::isnan(opt.h_right);
  // The global polynomial of order p in (x - c), weighted by K((x - c) / h) * weights,
  // computed in (x - c) / h and rescaled.
  out.h = (right ? hr : hl) ? (right ? opt.h_right : opt.h_left) : range;
  out.n_h = 0;
  const std::size_t P = opt.p + 1, r = 1 + cols.size();
  std::vector<double> A(ns * P), Y(ns * r);
  std::size_t npos = 0;
  for (std::size_t i = 0; i < ns; ++i) {
    const double t = (s.x[i] - c) / out.h;
    const double kw = kh ? kernel_weight(opt.kernel, t) / out.h : kernel_weight(opt.kernel, t);
    if (kw > 0) ++out.n_h;
    const double sw = std::sqrt(kw * s.w[i]);
    if (sw > 0) ++npos;
    double pw = sw;
    for (std::size_t j = 0; j < P; ++j) { A[j * ns + i] = pw; pw *= t; }
    Y[i] = sw * s.y[i];
    for (std::size_t a = 0; a < cols.size(); ++a) Y[(a + 1) * ns + i] = sw * s.z[i * dz + cols[a]];
  }
  require(npos >= P, "p", "the " + name + " side has fewer observations with positive weight "
                          "than the polynomial has coefficients; lower p or widen h");
  std::vector<double> g = qr_solve(A, ns, P, Y, r, "rdplot polynomial fit (" + name + " side)");
  if (resid) {
    // r = B - A g, column by column (A holds sqrt(w) t^j).
    resid->assign(Y.begin(), Y.end());
    for (std::size_t l = 0; l < r; ++l)
      for (std::size_t j = 0; j < P; ++j) {
        const double gj = g[l * P + j];
        for (std::size_t i = 0; i < ns; ++i) (*resid)[l * ns + i] -= A[j * ns + i] * gj;
      }
  }
  return g;
}

void set_curve(RdPlotSide& out, bool right, const RdPlotOptions& opt, const double* g,
               double shift, bool add_shift) {
  const double c = opt.c;
  const std::size_t P = opt.p + 1;
  out.coef.resize(P);
  double hp = 1;
  for (std::size_t j = 0; j < P; ++j) { out.coef[j] = g[j] / hp; hp *= out.h; }
  out.curve_x = right ? linspace_edges(c, c + out.h, opt.nplot - 1)
                      : linspace_edges(c - out.h, c, opt.nplot - 1);
  out.curve_y.resize(out.curve_x.size());
  for (std::size_t i = 0; i < out.curve_x.size(); ++i) {
    const double t = (out.curve_x[i] - c) / out.h;
    double v = 0;
    for (std::size_t j = P; j-- > 0;) v = v * t + g[j];
    out.curve_y[i] = add_shift ? v + shift : v;
  }
}

// The global polynomial of one side and its curve (no covariates).
void fit_global(const SideData& s, RdPlotSide& out, bool right, const RdPlotOptions& opt,
                double range) {
  const std::vector<double> g = side_ls(s, out, right, opt, range, 0, {}, nullptr, false);
  set_curve(out, right, opt, g.data(), 0.0, false);
}

std::size_t bin_index(const std::vector<double>& edges, double x) {
  const std::ptrdiff_t J = static_cast<std::ptrdiff_t>(edges.size()) - 1;
  std::ptrdiff_t b = std::upper_bound(edges.begin(), edges.end(), x) - edges.begin() - 1;
  return static_cast<std::size_t>(std::min<std::ptrdiff_t>(std::max<std::ptrdiff_t>(b, 0), J - 1));
}

}  // namespace rdplot_detail

std::string binselect_name(BinSelect b) {
  switch (b) {
    case BinSelect::es: return "es";
    case BinSelect::espr: return "espr";
    case BinSelect::esmv: return "esmv";
    case BinSelect::esmvpr: return "esmvpr";
    case BinSelect::qs: return "qs";
    case BinSelect::qspr: return "qspr";
    case BinSelect::qsmv: return "qsmv";
    case BinSelect::qsmvpr: return "qsmvpr";
  }
  return "";
}

BinSelect parse_binselect(const std::string& s) {
  for (BinSelect b : {BinSelect::es, BinSelect::espr, BinSelect::esmv, BinSelect::esmvpr,
                      BinSelect::qs, BinSelect::qspr, BinSelect::qsmv, BinSelect::qsmvpr})
    if (binselect_name(b) == s) return b;
  throw InvalidArgument("binselect: '" + s +
                        "' is not one of es, espr, esmv, esmvpr, qs, qspr, qsmv, qsmvpr");
}

RdPlotResult rdplot(const std::vector<double>& y, const std::vector<double>& x,
                    const std::vector<double>& weights, const RdPlotOptions& opt) {
  return rdplot(y, x, {}, 0, weights, opt);
}

namespace rdplot_detail {

// The complete rows (no NaN in y, x, a weight or a covariate), sorted by x (stable) and split at
// the cutoff; xmin and xmax get the range of x.
void split_rows(const std::vector<double>& y, const std::vector<double>& x,
                const std::vector<double>& z, std::size_t dz, const std::vector<double>& weights,
                const RdPlotOptions& opt, RdPlotResult& res, SideData& L, SideData& R,
                double& xmin, double& xmax) {
  using check::require;
  const std::size_t n0 = x.size();
  xmin = std::numeric_limits<double>::infinity();
  xmax = -xmin;
  std::vector<std::size_t> order;
  order.reserve(n0);
  for (std::size_t i = 0; i < n0; ++i) {
    const double wi = weights.empty() ? 1.0 : weights[i];
    bool nan_z = false;
    for (std::size_t a = 0; a < dz; ++a) {
      const double v = z[a * n0 + i];
      require(!std::isinf(v), "covs", "has an infinite value; drop or fix that row");
      nan_z = nan_z || std::isnan(v);
    }
    if (std::isnan(y[i]) || std::isnan(x[i]) || std::isnan(wi) || nan_z) {
      ++res.n_dropped;
      continue;
    }
    require(std::isfinite(y[i]), "y", "has an infinite value; drop or fix that row");
    require(std::isfinite(x[i]), "x", "has an infinite value; drop or fix that row");
    require(std::isfinite(wi) && wi >= 0, "weights", "must be finite and non-negative");
    order.push_back(i);
    xmin = std::min(xmin, x[i]);
    xmax = std::max(xmax, x[i]);
  }
  require(order.size() >= 20, "x", "rdplot needs at least 20 complete rows");
  require(opt.c > xmin && opt.c < xmax, "c",
          "the cutoff must lie strictly inside the range of x");
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return x[a] < x[b]; });
  for (std::size_t i : order) {
    SideData& s = x[i] < opt.c ? L : R;
    s.x.push_back(x[i]);
    s.y.push_back(y[i]);
    s.w.push_back(weights.empty() ? 1.0 : weights[i]);
    for (std::size_t a = 0; a < dz; ++a) s.z.push_back(z[a * n0 + i]);
  }
  require(L.x.size() >= 2, "c", "fewer than 2 observations left of the cutoff");
  require(R.x.size() >= 2, "c", "fewer than 2 observations right of the cutoff");
}

}  // namespace rdplot_detail

RdPlotResult rdplot(const std::vector<double>& y, const std::vector<double>& x,
                    const std::vector<double>& z, std::size_t dz,
                    const std::vector<double>& weights, const RdPlotOptions& opt) {
  using namespace rdplot_detail;
  using check::require;
  const std::size_t n0 = x.size();
  require(y.size() == n0, "y", "must have the length of x");
  require(weights.empty() || weights.size() == n0, "weights", "must have the length of x");
  require(z.size() == n0 * dz, "covs", "must have one row per observation of x");
  require(opt.covs_names.empty() || opt.covs_names.size() == dz, "covs",
          "needs one name per column");
  require(std::isfinite(opt.c), "c", "must be a finite number");
  require(opt.p >= 0 && opt.p <= 20, "p", "the polynomial order must be in 0..20");
  require(opt.scale_left > 0 && opt.scale_right > 0, "scale", "must be positive");
  require(opt.nbins_left >= 0 && opt.nbins_right >= 0, "nbins", "must be positive integers");
  require(opt.level > 0 && opt.level < 1, "level",
          "level is a fraction: 0.95 for a 95% interval");
  require(opt.nplot >= 2, "nplot", "needs at least 2 points");
  const bool hl = !std::isnan(opt.h_left), hr = !std::isnan(opt.h_right);
  require((!hl || opt.h_left > 0) && (!hr || opt.h_right > 0), "h", "must be positive");

  RdPlotResult res;
  SideData L, R;
  double xmin, xmax;
  split_rows(y, x, z, dz, weights, opt, res, L, R, xmin, xmax);
  const std::size_t n = L.x.size() + R.x.size();
  if (!std::isnan(opt.support_low)) {
    require(std::isfinite(opt.support_low), "support", "must be finite");
    xmin = std::min(xmin, opt.support_low);
  }
  if (!std::isnan(opt.support_high)) {
    require(std::isfinite(opt.support_high), "support", "must be finite");
    xmax = std::max(xmax, opt.support_high);
  }
  const double range_l = opt.c - xmin, range_r = xmax - opt.c;

  auto distinct = [](const std::vector<double>& v) {
    std::size_t m = v.empty() ? 0 : 1;
    for (std::size_t i = 1; i < v.size(); ++i) m += v[i] != v[i - 1];
    return m;
  };
  res.left.n = L.x.size();
  res.right.n = R.x.size();
  res.left.m = distinct(L.x);
  res.right.m = distinct(R.x);

  // Mass points (rdplot's rule): >= 20% repeated values on a side; "adjust" then uses the
  // polynomial-regression variance estimators, which do not rely on spacings.
  BinSelect bs = opt.binselect;
  res.mass_points = opt.masspoints != MassPoints::off &&
                    (1.0 - double(res.left.m) / res.left.n >= 0.2 ||
                     1.0 - double(res.right.m) / res.right.n >= 0.2);
  if (res.mass_points && opt.masspoints == MassPoints::adjust) {
    if (bs == BinSelect::es) bs = BinSelect::espr;
    if (bs == BinSelect::esmv) bs = BinSelect::esmvpr;
    if (bs == BinSelect::qs) bs = BinSelect::qspr;
    if (bs == BinSelect::qsmv) bs = BinSelect::qsmvpr;
  }
  const bool quantile = bs == BinSelect::qs || bs == BinSelect::qspr || bs == BinSelect::qsmv ||
                        bs == BinSelect::qsmvpr;
  const bool pr = bs == BinSelect::espr || bs == BinSelect::esmvpr || bs == BinSelect::qspr ||
                  bs == BinSelect::qsmvpr;
  const bool mv = bs == BinSelect::esmv || bs == BinSelect::esmvpr || bs == BinSelect::qsmv ||
                  bs == BinSelect::qsmvpr;
  const bool manual = opt.nbins_left > 0 || opt.nbins_right > 0;
  res.binselect = manual ? "manual" : binselect_name(bs);

  const Rule rule{bs, quantile, pr, mv, static_cast<double>(n)};
  choose_bins(L, res.left, false, opt, rule, range_l);
  choose_bins(R, res.right, true, opt, rule, range_r);
  fill_bins(L, res.left, false, opt, quantile, xmin, xmax);
  fill_bins(R, res.right, true, opt, quantile, xmin, xmax);
  if (dz > 0) {
    covs_prepare(L, R, dz, res, opt, range_l, range_r);
    fit_global_covs(L, R, dz, res, opt, range_l, range_r);
    adjust_bins(L, R, dz, res, opt);
  } else {
    fit_global(L, res.left, false, opt, range_l);
    fit_global(R, res.right, true, opt, range_r);
  }
  return res;
}

}  // namespace rd
}  // namespace attnreg
