#include "attnreg/detail/pow2_scale.hpp"
#include "attnreg/bandwidth/plugin_bandwidth.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>
#include <vector>

#include "attnreg/base/error.hpp"

namespace attnreg {

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kTau = 4.0;  // Gaussian weights truncated at tau bandwidths (as locpoly)

// Gaussian weights exp(-(delta l / h)^2 / 2) for l = 0..L, L = floor(tau h / delta).
std::vector<double> gauss_weights(double h, double delta) {
  const auto L = static_cast<long>(std::floor(kTau * h / delta));
  std::vector<double> k(static_cast<std::size_t>(L) + 1);
  for (long l = 0; l <= L; ++l) {
    const double u = delta * static_cast<double>(l) / h;
    k[static_cast<std::size_t>(l)] = std::exp(-0.5 * u * u);
  }
  return k;
}

// Solve the small dense system A z = r (A is (p+1) x (p+1)); false if singular.
bool solve_small(arma::mat A, arma::vec r, arma::vec& z) {
  return arma::solve(z, A, r, arma::solve_opts::no_approx);
}

// Per grid point moment sums S_k = sum_j c_j K(j - g) (x_j - x_g)^k, k = 0..2p, and the same
// with weights `w2` (K^2) when asked. Offsets are delta * (j - g), as KernSmooth's locpol.f.
struct Moments {
  arma::mat s;  // M x (2p + 1)
  arma::mat t;  // M x (p + 1)
  arma::mat u;  // M x (2p + 1), K^2 weighted (only when requested)
};

Moments grid_moments(const arma::vec& xc, const arma::vec* yc, double delta, double h, int p,
                     bool squared) {
  const arma::uword M = xc.n_elem;
  const std::vector<double> kap = gauss_weights(h, delta);
  const long L = static_cast<long>(kap.size()) - 1;
  Moments mo;
  mo.s.zeros(M, 2 * p + 1);
  mo.t.zeros(M, p + 1);
  if (squared) mo.u.zeros(M, 2 * p + 1);
  for (arma::uword g = 0; g < M; ++g) {
    const long lo = std::max<long>(0, static_cast<long>(g) - L);
    const long hi = std::min<long>(static_cast<long>(M) - 1, static_cast<long>(g) + L);
    for (long j = lo; j <= hi; ++j) {
      const double c = xc(static_cast<arma::uword>(j));
      const double yv = yc ? (*yc)(static_cast<arma::uword>(j)) : 0.0;
      if (c == 0.0 && yv == 0.0) continue;
      const double k = kap[static_cast<std::size_t>(std::labs(j - static_cast<long>(g)))];
      const double off = delta * static_cast<double>(j - static_cast<long>(g));
      double fac = 1.0;
      for (int e = 0; e <= 2 * p; ++e) {
        mo.s(g, e) += c * k * fac;
        if (squared) mo.u(g, e) += c * k * k * fac;
        if (e <= p && yc) mo.t(g, e) += yv * k * fac;
        fac *= off;
      }
    }
  }
  return mo;
}

arma::mat hankel(const arma::mat& s, arma::uword g, int p) {
  arma::mat A(p + 1, p + 1);
  for (int a = 0; a <= p; ++a)
    for (int b = 0; b <= p; ++b) A(a, b) = s(g, a + b);
  return A;
}

[[noreturn]] void singular_pilot(const char* what, double h) {
  std::ostringstream msg;
  msg << "dpi: the " << what << " pilot fit (bandwidth " << h
      << ") is singular at some grid point: too few occupied bins within 4 pilot bandwidths. "
         "The data are too sparse or too clustered in x for the plug-in rule; use cv_ls or "
         "give a bandwidth";
  throw NumericalError(msg.str());
}

// Least-squares polynomial of degree q on (x, y) in the basis t = (x - c) / s; returns the
// coefficients b (in t) and the residual sum of squares.
struct BlockFit {
  arma::vec b;
  double c, s, rss;
};

BlockFit poly_fit(const arma::vec& x, const arma::vec& y, int q) {
  BlockFit f;
  f.c = 0.5 * (x.min() + x.max());
  f.s = std::max(0.5 * (x.max() - x.min()), 1e-300);
  const arma::vec t = (x - f.c) / f.s;
  arma::mat T(x.n_elem, q + 1);
  T.col(0).ones();
  for (int k = 1; k <= q; ++k) T.col(k) = T.col(k - 1) % t;
  if (!arma::solve(f.b, T, y, arma::solve_opts::no_approx)) {
    throw NumericalError("dpi: a blocked quartic pilot fit is singular (a block has fewer than "
                         "5 distinct x values); use cv_ls or give a bandwidth");
  }
  const arma::vec r = y - T * f.b;
  f.rss = arma::dot(r, r);
  return f;
}

// Exact local polynomial at each (sorted) data point: returns the drv-th derivative estimate
// and, for drv = 0, the smoother row's self weight L_ii and squared norm sum_j L_ij^2.
struct PointFits {
  arma::vec est, self, norm2;
};

PointFits exact_local_poly(const arma::vec& x, const arma::vec& y, double h, int p, int drv) {
  const arma::uword n = x.n_elem;
  const double reach = 8.6 * h;  // exp(-8.6^2 / 2) < 1e-16
  PointFits out;
  out.est.set_size(n);
  out.self.set_size(n);
  out.norm2.set_size(n);
  double fact = 1.0;
  for (int k = 2; k <= drv; ++k) fact *= k;
  arma::uword lo = 0, hi = 0;
  for (arma::uword i = 0; i < n; ++i) {
    while (x(i) - x(lo) > reach) ++lo;
    while (hi + 1 < n && x(hi + 1) - x(i) <= reach) ++hi;
    arma::mat S(p + 1, p + 1, arma::fill::zeros), U(p + 1, p + 1, arma::fill::zeros);
    arma::vec t(p + 1, arma::fill::zeros), z(p + 1);
    for (arma::uword j = lo; j <= hi; ++j) {
      const double d = x(j) - x(i), u = d / h, k = std::exp(-0.5 * u * u);
      double f = 1.0;
      for (int e = 0; e <= p; ++e) {
        z(e) = f;
        f *= d;
      }
      S += k * (z * z.t());
      if (drv == 0) U += k * k * (z * z.t());
      t += k * y(j) * z;
    }
    arma::vec beta;
    if (!solve_small(S, t, beta)) singular_pilot("local", h);
    out.est(i) = fact * beta(drv);
    if (drv == 0) {
      arma::vec e1(p + 1, arma::fill::zeros);
      e1(0) = 1.0;
      arma::vec w;
      if (!solve_small(S, e1, w)) singular_pilot("local", h);
      out.self(i) = w(0);  // K(0) = 1
      out.norm2(i) = arma::as_scalar(w.t() * U * w);
    }
  }
  return out;
}

}  // namespace

arma::mat linear_bin(const arma::vec& x, const arma::vec& y, double a, double b, arma::uword m) {
  arma::mat out(m, 2, arma::fill::zeros);
  const double delta = (b - a) / static_cast<double>(m - 1);
  for (arma::uword i = 0; i < x.n_elem; ++i) {
    const double lx = (x(i) - a) / delta;  // 0-based position on the grid
    const double fl = std::floor(lx);
    if (fl < 0.0 || fl > static_cast<double>(m - 1)) continue;  // outside [a, b]: dropped
    const auto li = static_cast<arma::uword>(fl);
    const double rem = lx - fl;
    if (li < m - 1) {
      out(li, 0) += 1.0 - rem;
      out(li + 1, 0) += rem;
      out(li, 1) += (1.0 - rem) * y(i);
      out(li + 1, 1) += rem * y(i);
    } else {  // exactly at b
      out(m - 1, 0) += 1.0;
      out(m - 1, 1) += y(i);
    }
  }
  return out;
}

arma::vec binned_local_poly(const arma::vec& xcounts, const arma::vec& ycounts, double a,
                            double b, double h, int degree, int drv) {
  const arma::uword M = xcounts.n_elem;
  const double delta = (b - a) / static_cast<double>(M - 1);
  const Moments mo = grid_moments(xcounts, &ycounts, delta, h, degree, false);
  arma::vec est(M);
  double fact = 1.0;
  for (int k = 2; k <= drv; ++k) fact *= k;
  for (arma::uword g = 0; g < M; ++g) {
    arma::vec z;
    if (!solve_small(hankel(mo.s, g, degree), mo.t.row(g).t(), z)) singular_pilot("local", h);
    est(g) = fact * z(drv);
  }
  return est;
}

namespace {
DpiResult dpi_local_linear_unscaled(const arma::vec& x_in, const arma::vec& y_in,
                                    const DpiOptions& opt);
}  // namespace

DpiResult dpi_local_linear(const arma::vec& x, const arma::vec& y, const DpiOptions& opt) {
  // The plug-in bandwidth is equivariant in x (h -> c h) and invariant in y, but its pilots
  // raise x to the 7th power and y to the square: at x or y ~ 1e+-300 they under/overflow and
  // the message blamed the data ("exact low-order polynomial?"). Bring both to order one by
  // powers of two (exact), select, and scale every reported quantity back.
  int ex = 0, ey = 0;
  if (x.n_elem == y.n_elem && x.is_finite() && y.is_finite() && !x.is_empty()) {
    ex = detail::extreme_scale_exponent(x.max() - x.min(), 64);
    if (ex != 0 && !std::isfinite(std::ldexp(arma::abs(x).max(), -ex))) ex = 0;
    ey = detail::extreme_scale_exponent(arma::abs(y).max(), 64);
  }
  if (ex == 0 && ey == 0) return dpi_local_linear_unscaled(x, y, opt);
  const arma::vec xs = x * std::ldexp(1.0, -ex), ys = y * std::ldexp(1.0, -ey);
  DpiResult r = dpi_local_linear_unscaled(xs, ys, opt);
  r.bandwidth = std::ldexp(r.bandwidth, ex);
  r.gamma = std::ldexp(r.gamma, ex);
  r.lambda = std::ldexp(r.lambda, ex);
  r.sigma2 = std::ldexp(r.sigma2, 2 * ey);
  r.sigma2_blocks = std::ldexp(r.sigma2_blocks, 2 * ey);
  r.theta22 = std::ldexp(r.theta22, 2 * ey - 4 * ex);                // y^2 / x^4
  r.theta24_blocks = std::ldexp(r.theta24_blocks, 2 * ey - 6 * ex);  // y^2 / x^6
  return r;
}

namespace {
// Sorts (x, y) by x (stable, as R's sort.list) and trims floor(trim n) points from each end.
void sort_and_trim(const arma::vec& x_in, const arma::vec& y_in, const DpiOptions& opt,
                   arma::vec& x, arma::vec& y) {
  const arma::uword n0 = x_in.n_elem;
  std::vector<arma::uword> idx(n0);
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(),
                   [&](arma::uword i, arma::uword j) { return x_in(i) < x_in(j); });
  const auto cut = static_cast<arma::uword>(std::floor(opt.trim * static_cast<double>(n0)));
  check::require(n0 >= 10 && n0 > 2 * cut + 9, "x", "needs at least 10 observations after trimming");
  const arma::uword n = n0 - 2 * cut;
  x.set_size(n);
  y.set_size(n);
  for (arma::uword i = 0; i < n; ++i) {
    x(i) = x_in(idx[i + cut]);
    y(i) = y_in(idx[i + cut]);
  }
  check::require(arma::vec(arma::unique(x)).n_elem >= 6, "x",
                 "needs at least 6 distinct values for the plug-in rule's quartic pilots");
}

// Stage 1: blocked quartic fits, the number of blocks N by Mallows' Cp (q + 1 = 5 coefficients
// per block): res.n_blocks, res.sigma2_blocks, res.theta24_blocks.
void blocked_quartic_pilots(const arma::vec& x, const arma::vec& y, const DpiOptions& opt,
                            DpiResult& res) {
  const arma::uword n = x.n_elem;
  const double nn = static_cast<double>(n);
  const int q = 4, qq = 5;
  const int Nmax = std::max(
      std::min(static_cast<int>(std::floor(nn / opt.divisor)), opt.blockmax), 1);
  auto blocks = [&](int N, double* th24, double* th22) {
    const arma::uword div = n / static_cast<arma::uword>(N);
    double rss = 0, s24 = 0, s22 = 0;
    for (int j = 0; j < N; ++j) {
      const arma::uword lo = static_cast<arma::uword>(j) * div;
      const arma::uword hi = (j == N - 1) ? n - 1 : (static_cast<arma::uword>(j) + 1) * div - 1;
      const arma::vec xb = x.subvec(lo, hi), yb = y.subvec(lo, hi);
      const BlockFit f = poly_fit(xb, yb, q);
      rss += f.rss;
      if (th24) {
        const arma::vec t = (xb - f.c) / f.s;
        const double s2 = f.s * f.s;
        const arma::vec m2 = (2 * f.b(2) + 6 * f.b(3) * t + 12 * f.b(4) * t % t) / s2;
        const double m4 = 24 * f.b(4) / (s2 * s2);
        s24 += arma::accu(m2) * m4;
        s22 += arma::dot(m2, m2);
      }
    }
    if (th24) *th24 = s24 / nn;
    if (th22) *th22 = s22 / nn;
    return rss;
  };
  std::vector<double> rss(static_cast<std::size_t>(Nmax));
  for (int N = 1; N <= Nmax; ++N) rss[static_cast<std::size_t>(N - 1)] = blocks(N, nullptr, nullptr);
  const double denom = nn - qq * Nmax;
  check::require(denom > 0, "x", "too few observations for the blocked quartic pilots");
  int best = 1;
  double best_cp = 0;
  for (int N = 1; N <= Nmax; ++N) {
    const double cp = rss[static_cast<std::size_t>(N - 1)] * denom / rss[static_cast<std::size_t>(Nmax - 1)] +
                      2.0 * qq * N - nn;
    if (N == 1 || cp < best_cp) {
      best_cp = cp;
      best = N;
    }
  }
  res.n_blocks = best;
  double th24 = 0, th22q = 0;
  const double rss_best = blocks(best, &th24, &th22q);
  res.sigma2_blocks = rss_best / (nn - qq * best);
  res.theta24_blocks = th24;
  if (!(std::abs(th24) > 0) || !(res.sigma2_blocks > 0)) {
    throw NumericalError("dpi: the quartic pilot estimates zero curvature or zero noise "
                         "(is y an exact low-order polynomial of x?); use cv_ls or give a bandwidth");
  }
}

// Stage 2: pilot gamma for m'' (local cubic), theta_22 over the middle of the grid (res.gamma,
// res.theta22).
void curvature_theta22(const arma::vec& x, const arma::vec& y, const arma::vec& xc,
                       const arma::vec& yc, const DpiOptions& opt, DpiResult& res) {
  const arma::uword n = x.n_elem;
  const double nn = static_cast<double>(n), a = x(0), b = x(n - 1);
  const auto M = static_cast<arma::uword>(opt.gridsize);
  const double th24 = res.theta24_blocks;
  double g = res.sigma2_blocks * (b - a) / (std::abs(th24) * nn);
  g = th24 < 0 ? std::pow(3.0 * g / (8.0 * std::sqrt(kPi)), 1.0 / 7.0)
               : std::pow(15.0 * g / (16.0 * std::sqrt(kPi)), 1.0 / 7.0);
  res.gamma = g;
  double th22 = 0;
  if (opt.binned) {
    const arma::vec m2 = binned_local_poly(xc, yc, a, b, g, 3, 2);
    const auto lo = static_cast<arma::uword>(std::floor(opt.proptrun * M));
    const arma::uword hi = M - 1 - lo;
    for (arma::uword k = lo; k <= hi; ++k) th22 += m2(k) * m2(k) * xc(k);
  } else {
    const arma::vec m2 = exact_local_poly(x, y, g, 3, 2).est;
    const double lo = a + opt.proptrun * (b - a), hi = b - opt.proptrun * (b - a);
    for (arma::uword i = 0; i < n; ++i)
      if (x(i) >= lo && x(i) <= hi) th22 += m2(i) * m2(i);
  }
  th22 /= nn;
  res.theta22 = th22;
  if (!(th22 > 0)) {
    throw NumericalError("dpi: the estimated curvature theta_22 is zero; the plug-in rule "
                         "does not apply (use cv_ls or give a bandwidth)");
  }
}

// Stage 3: pilot lambda for sigma^2 from a local-linear fit and its degrees of freedom
// (res.lambda, res.sigma2).
void local_linear_sigma2(const arma::vec& x, const arma::vec& y, const arma::vec& xc,
                         const arma::vec& yc, const DpiOptions& opt, DpiResult& res) {
  const arma::uword n = x.n_elem;
  const double nn = static_cast<double>(n), a = x(0), b = x(n - 1), th22 = res.theta22;
  const auto M = static_cast<arma::uword>(opt.gridsize);
  const double C3K = std::pow(
      4.0 * (0.5 + 2.0 * std::sqrt(2.0) - (4.0 / 3.0) * std::sqrt(3.0)) / std::sqrt(2.0 * kPi),
      1.0 / 9.0);
  const double lam = C3K * std::pow(res.sigma2_blocks * res.sigma2_blocks * (b - a) /
                                        ((th22 * nn) * (th22 * nn)),
                                    1.0 / 9.0);
  res.lambda = lam;
  double rss_ll = arma::dot(y, y), df = nn;
  if (!opt.binned) {
    const PointFits f = exact_local_poly(x, y, lam, 1, 0);
    const arma::vec r = y - f.est;
    rss_ll = arma::dot(r, r);
    df = nn - 2.0 * arma::accu(f.self) + arma::accu(f.norm2);
  }
  const double delta = (b - a) / static_cast<double>(M - 1);
  const Moments mo = opt.binned ? grid_moments(xc, &yc, delta, lam, 1, true) : Moments{};
  for (arma::uword k = 0; opt.binned && k < M; ++k) {
    const arma::mat S = hankel(mo.s, k, 1);
    arma::mat Sinv;
    if (!arma::inv(Sinv, S)) singular_pilot("local-linear", lam);  // 2 x 2, for tr S and S'S
    const arma::vec beta = Sinv * mo.t.row(k).t();
    const arma::mat U = hankel(mo.u, k, 1);
    const double sdg = Sinv(0, 0);                                  // K(0) = 1
    const double sst = arma::as_scalar(Sinv.row(0) * U * Sinv.col(0));
    rss_ll += -2.0 * beta(0) * yc(k) + beta(0) * beta(0) * xc(k);
    df += -2.0 * sdg * xc(k) + sst * xc(k);
  }
  res.sigma2 = rss_ll / df;
  if (!(res.sigma2 > 0)) {
    throw NumericalError("dpi: the estimated error variance is not positive; use cv_ls");
  }
}

DpiResult dpi_local_linear_unscaled(const arma::vec& x_in, const arma::vec& y_in,
                                    const DpiOptions& opt) {
  check::require(x_in.n_elem == y_in.n_elem, "y",
                 "has " + std::to_string(y_in.n_elem) + " values but x has " +
                     std::to_string(x_in.n_elem) + " (pass one y per x)");
  check::all_finite(x_in, "x");
  check::all_finite(y_in, "y");
  check::require(opt.gridsize >= 10, "gridsize", "must be at least 10");
  check::require(opt.trim >= 0 && opt.trim < 0.5, "trim", "must be in [0, 0.5)");
  check::require(opt.proptrun >= 0 && opt.proptrun < 0.5, "proptrun", "must be in [0, 0.5)");
  check::require(opt.blockmax >= 1 && opt.divisor >= 1, "blockmax",
                 "blockmax and divisor must be >= 1");

  arma::vec x, y;
  sort_and_trim(x_in, y_in, opt, x, y);
  const arma::uword n = x.n_elem;
  DpiResult res;
  res.n_used = n;
  const double a = x(0), b = x(n - 1);
  const double nn = static_cast<double>(n);
  const auto M = static_cast<arma::uword>(opt.gridsize);
  const arma::mat bins = linear_bin(x, y, a, b, M);
  const arma::vec xc = bins.col(0), yc = bins.col(1);

  blocked_quartic_pilots(x, y, opt, res);
  curvature_theta22(x, y, xc, yc, opt, res);
  local_linear_sigma2(x, y, xc, yc, opt, res);
  res.bandwidth = std::pow(res.sigma2 * (b - a) / (2.0 * std::sqrt(kPi) * res.theta22 * nn), 0.2);
  return res;
}
}  // namespace

}  // namespace attnreg
