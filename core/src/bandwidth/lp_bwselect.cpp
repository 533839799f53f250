// attnreg: MSE/IMSE-DPI bandwidths of Calonico, Cattaneo and Farrell (see lp_bwselect.hpp).
#include "attnreg/bandwidth/lp_bwselect.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "attnreg/detail/lp_window_fit.hpp"
#include "attnreg/detail/pow2_scale.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/inference/nn_variance.hpp"
#include "attnreg/base/runtime.hpp"

namespace attnreg {

namespace {

/// Quantile of type 7 (R's default; linear interpolation of the order statistics).
double quantile7(const arma::vec& sorted, double p) {
  const double h = (static_cast<double>(sorted.n_elem) - 1) * p;
  const arma::uword lo = static_cast<arma::uword>(std::floor(h));
  if (lo + 1 >= sorted.n_elem) return sorted(sorted.n_elem - 1);
  return sorted(lo) + (h - static_cast<double>(lo)) * (sorted(lo + 1) - sorted(lo));
}

double rule_constant(const Kernel& k) {
  const double c = dispatch_kernel(k.type, [](auto K) { return decltype(K)::lp_rule_constant; });
  if (c > 0.0) return c;
  throw InvalidArgument(std::string("kernel: '") + k.name() +
                        "' has no rule-of-thumb constant in this plug-in; use 'epanechnikov', "
                        "'uniform', 'triangular' or 'gaussian'");
}

using detail::LpWindowFit;

/// Squared residuals r_i^2 of the window's rows (nn: of y; hc: of the window's fit of `deg`),
/// on x, y sorted by x.
std::vector<double> window_r2(const arma::vec& xs, const arma::vec& ys, const LpWindowFit& f,
                              const LpBwOptions& opt) {
  const arma::uword lo = f.lo(), m = f.size();
  if (opt.kind == VarianceKind::nn) {
    const arma::vec r2 = nn_residual_variance(xs.subvec(lo, lo + m - 1), ys.subvec(lo, lo + m - 1),
                                              opt.nnmatch);
    return std::vector<double>(r2.begin(), r2.end());
  }
  const int deg = f.degree();
  std::vector<std::vector<double>> C(static_cast<std::size_t>(deg) + 1);
  std::vector<double> beta(C.size(), 0.0);
  for (std::size_t j = 0; j < C.size(); ++j) {
    C[j] = f.coef_row(static_cast<int>(j));
    for (arma::uword i = 0; i < m; ++i) beta[j] += C[j][i] * ys(lo + i);
  }
  const double dm = static_cast<double>(m), d = deg + 1;
  if (opt.kind == VarianceKind::hc1 && !(dm > d))
    throw NumericalError("kind: hc1 needs more observations than coefficients "
                         "in every local window; use 'nn' or 'hc0'");
  if (opt.kind != VarianceKind::hc0 && opt.kind != VarianceKind::hc1 &&
      opt.kind != VarianceKind::hc2 && opt.kind != VarianceKind::hc3)
    throw InvalidArgument("kind: use 'nn', 'hc0', 'hc1', 'hc2' or 'hc3'");
  std::vector<double> r2(m);
  for (arma::uword i = 0; i < m; ++i) {
    double fit = 0, lev = 0, p = 1;
    for (std::size_t j = 0; j < C.size(); ++j) {
      fit += p * beta[j];
      lev += p * C[j][i];
      p *= f.u(i);
    }
    const double e = ys(lo + i) - fit;
    r2[i] = e * e;
    if (opt.kind == VarianceKind::hc1) {
      r2[i] *= dm / (dm - d);
    } else if (opt.kind == VarianceKind::hc2 || opt.kind == VarianceKind::hc3) {
      const double one_m = 1 - lev;
      if (!(one_m > 1e-12))
        throw NumericalError(std::string("kind: a local leverage is >= 1, so ") +
                             variance_kind_name(opt.kind) + " is undefined; use 'nn' or 'hc0'");
      r2[i] /= (opt.kind == VarianceKind::hc2 ? one_m : one_m * one_m);
    }
  }
  return r2;
}

double sandwich(const std::vector<double>& c, const std::vector<double>& r2) {
  double s = 0;
  for (std::size_t i = 0; i < c.size(); ++i) s += c[i] * c[i] * r2[i];
  return s;
}

/// x and y sorted by x (a stable sort: tied rows keep their order).
struct Sorted {
  arma::vec x, y;
};

Sorted sorted_by_x(const arma::vec& x, const arma::vec& y) {
  const arma::uvec o = arma::stable_sort_index(x);
  return {x(o), y(o)};
}

/// The distance from c to its k-th nearest observation (k >= 1) of the sorted xs, by merging
/// outward from c: O(k) (|x_i - c| is computed as c - x_i or x_i - c, the same double).
double kth_distance(const arma::vec& xs, double c, arma::uword k) {
  const double* b = xs.memptr();
  arma::uword r = static_cast<arma::uword>(std::lower_bound(b, b + xs.n_elem, c) - b), l = r;
  double d = 0;
  for (arma::uword t = 0; t < k; ++t) {
    const bool has_l = l > 0, has_r = r < xs.n_elem;
    if (has_l && (!has_r || c - xs(l - 1) <= xs(r) - c)) d = c - xs(--l);
    else d = xs(r++) - c;
  }
  return d;
}

/// The piece of lp_bw_piece on data sorted by x.
LpBwPiece piece_sorted(const arma::vec& xs, const arma::vec& ys, double c, int o, int nu,
                       int o_B, double h_V, double h_B1, double h_B2, double scale,
                       const LpBwOptions& opt) {
  LpBwPiece P;
  const double n = static_cast<double>(xs.n_elem);
  const auto dot_y = [&](const std::vector<double>& row, const LpWindowFit& f) {
    double s = 0;
    for (arma::uword i = 0; i < f.size(); ++i) s += row[i] * ys(f.lo() + i);
    return s;
  };
  // Variance and bias constants of the degree-o fit at h_V.
  const LpWindowFit fv(xs, c, h_V, o, opt.kernel);
  const std::vector<double> cv = fv.coef_row(nu);
  // Var of the raw coefficient nu is Var_u / h^(2 nu); V = n h^(2nu+1) Var = n h Var_u.
  P.V = n * h_V * sandwich(cv, window_r2(xs, ys, fv, opt));
  double bc1 = 0, bc2 = 0;
  for (arma::uword i = 0; i < fv.size(); ++i) {
    bc1 += cv[i] * std::pow(fv.u(i), o + 1);
    bc2 += cv[i] * std::pow(fv.u(i), o + 2);
  }
  // Pilot derivatives.
  const LpWindowFit f1(xs, c, h_B1, o_B, opt.kernel);
  const std::vector<double> c1 = f1.coef_row(o + 1);
  const double s1 = std::pow(h_B1, o + 1);
  const double beta1 = dot_y(c1, f1) / s1;
  if (scale > 0) P.R = 3 * bc1 * bc1 * sandwich(c1, window_r2(xs, ys, f1, opt)) / (s1 * s1);
  const LpWindowFit f2(xs, c, h_B2, o_B + 1, opt.kernel);
  const double beta2 = dot_y(f2.coef_row(o + 2), f2) / std::pow(h_B2, o + 2);
  P.B1 = bc1 * beta1;
  P.B2 = bc2 * beta2;
  P.rB = 2 * (o + 1 - nu);
  P.rV = 2 * nu + 1;
  P.bw = std::pow(P.rV * P.V / (n * P.rB * (P.B1 * P.B1 + scale * P.R)), 1.0 / (2 * o + 3));
  return P;
}

struct Setup {
  double n = 0, range = 0, rot = 0;
};

Setup setup(const arma::vec& x, const LpBwOptions& opt) {
  Setup s;
  const arma::vec xs = arma::sort(x);
  s.n = static_cast<double>(x.n_elem);
  s.range = xs(xs.n_elem - 1) - xs(0);
  const double iqr = quantile7(xs, 0.75) - quantile7(xs, 0.25);
  const double sd = arma::stddev(x);
  s.rot = rule_constant(opt.kernel) * std::min(sd, iqr / 1.349) * std::pow(s.n, -0.2);
  return s;
}

void check_inputs(const arma::vec& x, const arma::vec& y, const arma::vec& eval,
                  const LpBwOptions& opt) {
  check::require(x.n_elem == y.n_elem, "y",
                 "must have the same length as x (" + std::to_string(x.n_elem) + "), got " +
                     std::to_string(y.n_elem));
  check::all_finite(x, "x");
  check::all_finite(y, "y");
  check::all_finite(eval, "eval_points");
  check::require(x.n_elem >= 10, "x", "needs at least 10 observations for a plug-in bandwidth");
  check::require(opt.degree >= 0 && opt.degree <= 3, "degree", "must be 0, 1, 2 or 3");
  check::require(opt.deriv >= 0 && opt.deriv <= opt.degree, "deriv",
                 "must be between 0 and the degree (" + std::to_string(opt.degree) + ")");
  check::require(opt.kind == VarianceKind::nn || opt.kind == VarianceKind::hc0 ||
                     opt.kind == VarianceKind::hc1 || opt.kind == VarianceKind::hc2 ||
                     opt.kind == VarianceKind::hc3,
                 "kind", std::string("'") + variance_kind_name(opt.kind) +
                             "' is not available for this plug-in; use 'nn' (nearest-neighbour "
                             "residuals, the default) or 'hc0'..'hc3'");
  check::require(opt.nnmatch >= 1, "nnmatch", "must be >= 1 (default 3)");
  check::require(opt.bwcheck >= 0 && static_cast<arma::uword>(opt.bwcheck) <= x.n_elem,
                 "bwcheck",
                 "must be between 0 (off) and the number of observations (" +
                     std::to_string(x.n_elem) + "), got " + std::to_string(opt.bwcheck));
  check::require(std::isfinite(opt.bwregul) && opt.bwregul >= 0, "bwregul",
                 "must be a finite number >= 0 (default 1; 0 = no regularisation)");
  rule_constant(opt.kernel);
  check::require(x.max() > x.min(), "x", "is constant; a bandwidth needs spread in x");
}

/// The minimiser of f over (DBL_EPSILON range, range), by Brent's method in units of the range
/// (so the result is equivariant in x) to the method's full accuracy. nprobust calls R's
/// optimize() on (DBL_EPSILON, range) with its absolute tolerance 1.2e-4, so its bandwidths for
/// even p - nu agree with these to about that.
template <class F>
double minimize_over_range(F f, double range) {
  const double eps = std::numeric_limits<double>::epsilon();
  return range * brent_minimize([&](double t) { return f(t * range); }, eps, 1.0, 1e-12);
}

struct PointResult {
  double h = 0, b = 0, Vh = 0, Bh = 0, Vb = 0, Bb = 0;
};

PointResult mse_point(const arma::vec& xs, const arma::vec& ys, double c, const Setup& s,
                      const LpBwOptions& opt) {
  const int p = opt.degree, nu = opt.deriv, q = p + 1;
  const bool closed = ((p - nu) % 2 == 1) || opt.interior;
  const double bw_max = std::max(std::fabs(c - xs(0)), std::fabs(c - xs(xs.n_elem - 1)));
  double bw_min = 0;
  if (opt.bwcheck > 0) bw_min = kth_distance(xs, c, static_cast<arma::uword>(opt.bwcheck));
  const auto clip = [&](double h) {
    h = std::min(h, bw_max);
    return opt.bwcheck > 0 ? std::max(h, bw_min) : h;
  };
  double c_bw = std::min(s.rot, bw_max);
  if (opt.bwcheck > 0) c_bw = std::max(c_bw, bw_min);
  // Even p - nu: minimise the MSE with the second bias term (o: degree, v: derivative).
  const auto solve = [&](const LpBwPiece& P, int o, int v, double scale) {
    if (closed) return P.bw;
    const double a = 2.0 * (o + 1 - v), e = 1.0 + 2.0 * v;
    return minimize_over_range(
        [&](double H) {
          const double B = P.B1 + H * P.B2;
          return std::fabs(std::pow(H, a) * (B * B + scale * P.R) + P.V / (s.n * std::pow(H, e)));
        },
        s.range);
  };
  const LpBwPiece d2 = piece_sorted(xs, ys, c, q + 1, q + 1, q + 2, c_bw, s.range, s.range, 0,
                                    opt);
  const LpBwPiece d3 = piece_sorted(xs, ys, c, q + 2, q + 2, q + 3, c_bw, s.range, s.range, 0,
                                    opt);
  const double mp2 = clip(solve(d2, q + 1, q + 1, 0));
  const double mp3 = clip(solve(d3, q + 2, q + 2, 0));
  const LpBwPiece pb = piece_sorted(xs, ys, c, q, p + 1, q + 1, c_bw, mp2, mp3, opt.bwregul,
                                    opt);
  PointResult r;
  r.b = clip(solve(pb, q, p + 1, opt.bwregul));
  const LpBwPiece ph = piece_sorted(xs, ys, c, p, nu, q, c_bw, r.b, mp2, opt.bwregul, opt);
  r.h = clip(solve(ph, p, nu, opt.bwregul));
  if (closed) {
    r.Vh = ph.rV * ph.V;
    r.Bh = ph.rB * ph.B1 * ph.B1;
    r.Vb = pb.rV * pb.V;
    r.Bb = pb.rB * pb.B1 * pb.B1;
  } else {
    r.Vh = ph.V;
    r.Bh = (ph.B1 + r.h * ph.B2) * (ph.B1 + r.h * ph.B2);
    r.Vb = pb.V;
    r.Bb = (pb.B1 + r.b * pb.B2) * (pb.B1 + r.b * pb.B2);
  }
  return r;
}

/// Runs `body` on x, y rescaled by powers of two (exact) when they are extreme, so the squared
/// y and the powers of h in the constants neither under- nor overflow; bandwidths scale back.
template <class Body>
LpBwSelection scaled(const arma::vec& x, const arma::vec& y, const arma::vec& eval, Body body) {
  const int ex = detail::extreme_scale_exponent(x.max() - x.min(), 64);
  const int ey = detail::extreme_scale_exponent(arma::abs(y).max(), 64);
  if (ex == 0 && ey == 0) return body(x, y, eval);
  const double cx = std::ldexp(1.0, -ex), cy = std::ldexp(1.0, -ey);
  LpBwSelection r = body(arma::vec(x * cx), arma::vec(y * cy), arma::vec(eval * cx));
  r.eval = eval;
  for (double& v : r.h) v = std::ldexp(v, ex);
  for (double& v : r.b) v = std::ldexp(v, ex);
  r.h_imse = std::ldexp(r.h_imse, ex);
  r.b_imse = std::ldexp(r.b_imse, ex);
  return r;
}

// The MSE-optimal h and b at each evaluation point, in order; `each` sees every point's
// result (the IMSE rule sums their variance and bias constants).
template <class Each>
LpBwSelection select_at_points(const arma::vec& x, const arma::vec& y, const arma::vec& eval,
                               const Setup& s, const LpBwOptions& opt, Each&& each) {
  LpBwSelection r;
  r.eval = eval;
  r.h.set_size(eval.n_elem);
  r.b.set_size(eval.n_elem);
  InterruptGuard guard;
  const Sorted d = sorted_by_x(x, y);  // once: every window is a run of it
  for (arma::uword j = 0; j < eval.n_elem; ++j) {
    if (guard.poll()) throw Interrupted();
    const PointResult pr = mse_point(d.x, d.y, eval(j), s, opt);
    r.h(j) = pr.h;
    r.b(j) = pr.b;
    each(pr);
  }
  return r;
}

}  // namespace

LpBwPiece lp_bw_piece(const arma::vec& x, const arma::vec& y, double c, int o, int nu, int o_B,
                      double h_V, double h_B1, double h_B2, double scale,
                      const LpBwOptions& opt) {
  const Sorted d = sorted_by_x(x, y);
  return piece_sorted(d.x, d.y, c, o, nu, o_B, h_V, h_B1, h_B2, scale, opt);
}

LpBwSelection lp_mse_dpi(const arma::vec& x_in, const arma::vec& y_in, const arma::vec& eval_in,
                         const LpBwOptions& opt) {
  check_inputs(x_in, y_in, eval_in, opt);
  check::require(!eval_in.is_empty(), "eval_points", "must hold at least one point");
  return scaled(x_in, y_in, eval_in, [&](const arma::vec& x, const arma::vec& y,
                                         const arma::vec& eval) {
    const Setup s = setup(x, opt);
    return select_at_points(x, y, eval, s, opt, [](const PointResult&) {});
  });
}

LpBwSelection lp_imse_dpi(const arma::vec& x_in, const arma::vec& y_in, const arma::vec& eval_in,
                          const LpBwOptions& opt) {
  check_inputs(x_in, y_in, eval_in, opt);
  const arma::vec grid = eval_in.is_empty() ? arma::linspace(x_in.min(), x_in.max(), 30) : eval_in;
  return scaled(x_in, y_in, grid, [&](const arma::vec& x, const arma::vec& y,
                                      const arma::vec& eval) {
    const Setup s = setup(x, opt);
    const int p = opt.degree, nu = opt.deriv, q = p + 1;
    double Vh = 0, Bh = 0, Vb = 0, Bb = 0;
    LpBwSelection r = select_at_points(x, y, eval, s, opt, [&](const PointResult& pr) {
      Vh += pr.Vh;
      Bh += pr.Bh;
      Vb += pr.Vb;
      Bb += pr.Bb;
    });
    const double m = static_cast<double>(eval.n_elem);
    Vh /= m; Bh /= m; Vb /= m; Bb /= m;
    if (!(Bh > 0) || !(Bb > 0))
      throw NumericalError("y: the estimated bias is zero at every evaluation point (a "
                           "polynomial of low degree?); the plug-in bandwidth is unbounded");
    if (((p - nu) % 2 == 1) || opt.interior) {
      r.b_imse = std::pow(Vb / (s.n * Bb), 1.0 / (2 * q + 3));
      r.h_imse = std::pow(Vh / (s.n * Bh), 1.0 / (2 * p + 3));
    } else {
      r.b_imse = minimize_over_range(
          [&](double H) {
            return std::fabs(std::pow(H, 2.0 * q + 2 - 2.0 * (p + 1)) * Bb +
                             Vb / (s.n * std::pow(H, 1.0 + 2 * (p + 1))));
          },
          s.range);
      r.h_imse = minimize_over_range(
          [&](double H) {
            return std::fabs(std::pow(H, 2.0 * p + 2 - 2.0 * nu) * Bh +
                             Vh / (s.n * std::pow(H, 1.0 + 2 * nu)));
          },
          s.range);
    }
    return r;
  });
}

}  // namespace attnreg
