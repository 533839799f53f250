// attnreg: MSE/IMSE-optimal bandwidth vectors with several continuous regressors (the pilot local
// quadratic plug-in); formulas and sources in
// core/include/attnreg/inference/rbc_bandwidth_multivariate.hpp.
#include "attnreg/inference/rbc_bandwidth_multivariate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "attnreg/base/error.hpp"
#include "attnreg/detail/diagnostics_checks.hpp"
#include "attnreg/kernels/distinct_rows.hpp"

namespace attnreg {

namespace {

struct PilotAt {
  arma::vec a;      // d bias coefficients
  arma::mat cov_a;  // d x d
  double sigma2 = 0, f = 0;
};

// The minimum-points rule (header): the smallest factor s >= 1 such that the window of the
// product kernel at s * h around x0 (the rows with positive weight) holds at least `target`
// distinct rows of Xd (all of them when there are fewer). Rows enter in order of
// r_i = max_c |x_ic - x0_c| / h_c; a kernel with unbounded support already weights every row.
double window_factor(const arma::mat& Xd, const arma::rowvec& x0, const arma::vec& h,
                     arma::uword target, const Kernel& K) {
  if (target == 0 || !K.compact()) return 1.0;
  const arma::uword G = Xd.n_rows;
  arma::vec r(G);
  for (arma::uword i = 0; i < G; ++i) {
    double v = 0;
    for (arma::uword c = 0; c < Xd.n_cols; ++c) v = std::max(v, std::abs(Xd(i, c) - x0(c)) / h(c));
    r(i) = v;
  }
  const arma::uword k = std::min(target, G);
  // the window is |u_c| < 1 (a compact kernel vanishes at its support's edge): r_(k) must fall
  // strictly inside, hence the factor 1 + 1e-9 (and rows tied at r_(k) all enter)
  arma::vec rs = arma::sort(r);
  arma::uword inside = 0;
  for (arma::uword i = 0; i < G; ++i) inside += (r(i) < 1.0 && K.shape(r(i)) > 0) ? 1 : 0;
  if (inside >= k) return 1.0;
  return std::max(1.0, rs(k - 1) * (1.0 + 1e-9));
}

// The pilot local quadratic at evaluation row j of E (see the header).
PilotAt pilot_at(const arma::mat& X, const arma::vec& y, const arma::mat& E, arma::uword j,
                 const arma::vec& b, const MvBwOptions& opt) {
  const arma::uword n = X.n_rows, d = X.n_cols;
  const arma::uword nt = 1 + d + d * (d + 1) / 2;
  arma::mat U(n, d);
  arma::vec w(n, arma::fill::ones);
  for (arma::uword c = 0; c < d; ++c) {
    U.col(c) = (X.col(c) - E(j, c)) / b(c);
    for (arma::uword i = 0; i < n; ++i) w(i) *= opt.kernel.shape(U(i, c));
  }
  const arma::uvec idx = arma::find(w > 0);
  if (idx.n_elem < nt + 1)
    throw NumericalError("pilot_bandwidth: the pilot local quadratic at " +
                         detail::evaluation_point(E, j) +
                         " has " + std::to_string(idx.n_elem) + " training point(s) with "
                         "kernel weight, fewer than its " + std::to_string(nt) +
                         " coefficients plus one (for its residual variance); use a larger "
                         "pilot_bandwidth");
  const arma::uword k = idx.n_elem;
  const arma::vec wk = w(idx) / w(idx).max();
  const arma::vec sw = arma::sqrt(wk);
  arma::mat Z(k, nt);
  Z.col(0).ones();
  arma::uvec sq(d);  // column of u_c^2
  arma::uword col = 1 + d;
  for (arma::uword c = 0; c < d; ++c) Z.col(1 + c) = arma::vec(U.col(c)).elem(idx);
  for (arma::uword c = 0; c < d; ++c)
    for (arma::uword e = c; e < d; ++e) {
      if (e == c) sq(c) = col;
      Z.col(col++) = Z.col(1 + c) % Z.col(1 + e);
    }
  arma::mat Q, R;
  if (!arma::qr_econ(Q, R, Z.each_col() % sw))
    throw NumericalError("pilot_bandwidth: QR of the pilot design failed at " +
                         detail::evaluation_point(E, j));
  const arma::vec rd = arma::abs(R.diag());
  if (!(rd.min() > 1e-10 * rd.max()))
    throw NumericalError("pilot_bandwidth: the pilot local quadratic at " +
                         detail::evaluation_point(E, j) +
                         " is singular (its weighted training points do not determine a "
                         "quadratic in every direction); use a larger pilot_bandwidth");
  const arma::mat C = arma::solve(arma::trimatu(R), Q.t()).eval().each_row() % sw.t();  // nt x k
  const arma::vec yk = y(idx);
  const arma::vec beta = C * yk;
  const arma::vec e = yk - Z * beta;
  const double lev = arma::accu(wk % arma::sum(arma::square(Q), 1));  // sum w_i^2 z_i'A z_i
  const double df = arma::accu(wk) - lev;
  if (!(df > 1e-8 * arma::accu(wk)))
    throw NumericalError("pilot_bandwidth: the pilot local quadratic at " +
                         detail::evaluation_point(E, j) +
                         " interpolates its data (no residual degrees of freedom for "
                         "sigma^2(x)); use a larger pilot_bandwidth");
  PilotAt P;
  P.sigma2 = arma::accu(wk % arma::square(e)) / df;
  double prod_b = 1, cK = 1;
  for (arma::uword c = 0; c < d; ++c) {
    prod_b *= b(c);
    cK *= opt.kernel.constant();
  }
  P.f = cK * arma::accu(w(idx)) / (static_cast<double>(n) * prod_b);
  if (!(P.f > 0) || !std::isfinite(P.f))
    throw NumericalError("pilot_bandwidth: the density estimate at " +
                         detail::evaluation_point(E, j) +
                         " is 0; use a larger pilot_bandwidth");
  const double mu2 = opt.kernel.mu2();
  arma::mat G(d, nt, arma::fill::zeros);
  for (arma::uword c = 0; c < d; ++c) {
    G(c, sq(c)) = mu2 / (b(c) * b(c));
    if (opt.degree == 0) {
      double s = 0;
      for (arma::uword t = 0; t < k; ++t) s += wk(t) * kernel_dlogk(opt.kernel.type, Z(t, 1 + c));
      const double g = -s / (b(c) * arma::accu(wk));  // f_c / f
      G(c, 1 + c) = mu2 * g / b(c);
    }
  }
  P.a = G * beta;
  const arma::mat GC = G * C;
  P.cov_a = P.sigma2 * (GC * GC.t());
  return P;
}

arma::vec rule_of_thumb_pilot(const arma::mat& X, const Kernel& K) {
  const double d = static_cast<double>(X.n_cols), n = static_cast<double>(X.n_rows);
  const double delta = std::pow(K.roughness() / (K.mu2() * K.mu2()), 0.2);
  const double delta_g = std::pow(0.5 / std::sqrt(arma::datum::pi), 0.2);
  return (delta / delta_g) * std::pow(n, -1.0 / (d + 8.0)) * arma::stddev(X, 0, 0).t();
}

}  // namespace

double mv_plugin_mse(const arma::mat& M, double V0, const arma::vec& h) {
  const arma::vec t = arma::square(h);
  return arma::as_scalar(t.t() * M * t) + V0 / arma::prod(h);
}

double mv_plugin_common_scale(const arma::mat& M, double V0, const arma::vec& scale,
                              const arma::vec& range) {
  const double d = static_cast<double>(scale.n_elem);
  const arma::vec s2 = arma::square(scale);
  const double Q = arma::as_scalar(s2.t() * M * s2);
  const double cap = arma::min(range / scale);
  if (!(Q > 0)) return cap;
  const double c = std::pow(d * V0 / (4.0 * Q * arma::prod(scale)), 1.0 / (d + 4.0));
  return std::min(c, cap);
}

arma::vec mv_plugin_minimise(const arma::mat& M, double V0, const arma::vec& range,
                             const arma::vec& start) {
  const arma::uword d = range.n_elem;
  arma::vec lo = arma::square(1e-6 * range), hi = arma::square(range);
  arma::vec t = arma::clamp(arma::square(start), 0.0, arma::datum::inf);
  for (arma::uword j = 0; j < d; ++j) t(j) = std::min(std::max(t(j), lo(j)), hi(j));
  for (int sweep = 0; sweep < 1000; ++sweep) {
    double moved = 0;
    for (arma::uword j = 0; j < d; ++j) {
      double P = 1;
      for (arma::uword k = 0; k < d; ++k)
        if (k != j) P *= std::sqrt(t(k));
      double rest = 0;
      for (arma::uword k = 0; k < d; ++k)
        if (k != j) rest += M(j, k) * t(k);
      auto slope = [&](double tj) {
        return 2.0 * (M(j, j) * tj + rest) - V0 / (2.0 * P * tj * std::sqrt(tj));
      };
      double tj;
      if (slope(hi(j)) <= 0) tj = hi(j);
      else if (slope(lo(j)) >= 0) tj = lo(j);
      else {
        double a = std::log(lo(j)), b = std::log(hi(j));
        while (b - a > 1e-13) {
          const double mid = 0.5 * (a + b);
          (slope(std::exp(mid)) > 0 ? b : a) = mid;
        }
        tj = std::exp(0.5 * (a + b));
      }
      moved = std::max(moved, std::abs(tj - t(j)) / t(j));
      t(j) = tj;
    }
    if (moved <= 1e-11) break;
  }
  return arma::sqrt(t);
}

MvBwSelection mse_dpi_multivariate(const arma::mat& X, const arma::vec& y,
                                   const arma::mat& X_eval, const MvBwOptions& opt) {
  const arma::uword n = X.n_rows, d = X.n_cols, m = X_eval.n_rows;
  check::require(opt.bwcheck >= 0, "bwcheck",
                 "must be >= 1 (the minimum number of distinct rows in every window, e.g. 21) "
                 "or 0 for no minimum, got " + std::to_string(opt.bwcheck));
  check::require(d >= 2, "x",
                 "the multivariate plug-in needs at least 2 columns (one column: the "
                 "univariate lpbwselect plug-in)");
  check::require(y.n_elem == n, "y",
                 "has " + std::to_string(y.n_elem) + " values but x has " + std::to_string(n) +
                     " rows");
  check::require(X_eval.n_cols == d, "eval_points",
                 "has " + std::to_string(X_eval.n_cols) + " columns but x has " +
                     std::to_string(d));
  check::require(m >= 1, "eval_points", "needs at least one point");
  check::require(opt.degree == 0 || opt.degree == 1, "degree",
                 "the multivariate plug-in covers local constant (0) and local linear (1) "
                 "fits, got " + std::to_string(opt.degree));
  check::require(std::isfinite(opt.bwregul) && opt.bwregul >= 0, "bwregul",
                 "must be finite and >= 0");
  check::all_finite(X, "x");
  check::all_finite(y, "y");
  check::all_finite(X_eval, "eval_points");
  opt.kernel.require_second_order("the MSE-optimal plug-in bandwidth");
  opt.kernel.require_nonnegative("the MSE-optimal plug-in bandwidth");
  for (arma::uword c = 0; c < d; ++c) {
    const arma::uword u = arma::unique(X.col(c)).eval().n_elem;
    check::require(u >= 3, "x",
                   "column " + std::to_string(c + 1) + " has " + std::to_string(u) +
                       " distinct value(s); the pilot local quadratic needs at least 3 in "
                       "every direction (a column with fewer is categorical, not continuous)");
  }
  MvBwSelection S;
  S.eval = X_eval;
  S.scale = arma::stddev(X, 0, 0).t();
  S.range = (arma::max(X, 0) - arma::min(X, 0)).t();
  if (opt.pilot_bandwidth.is_empty()) {
    S.pilot = rule_of_thumb_pilot(X, opt.kernel);
  } else {
    check::require(opt.pilot_bandwidth.n_elem == d, "pilot_bandwidth",
                   "needs one value per column of x (" + std::to_string(d) + "), got " +
                       std::to_string(opt.pilot_bandwidth.n_elem));
    check::require(opt.pilot_bandwidth.is_finite() && opt.pilot_bandwidth.min() > 0,
                   "pilot_bandwidth", "must be finite and positive");
    S.pilot = opt.pilot_bandwidth;
  }
  S.h.set_size(m, d);
  S.c_common.set_size(m);
  S.bias_coef.set_size(m, d);
  S.bias_cov.set_size(d, d, m);
  S.variance_coef.set_size(m);
  S.sigma2.set_size(m);
  S.density.set_size(m);
  const double Rd = std::pow(opt.kernel.roughness(), static_cast<double>(d));
  const arma::uword nt = 1 + d + d * (d + 1) / 2;
  const arma::uword target =
      opt.bwcheck > 0 ? std::max<arma::uword>(static_cast<arma::uword>(opt.bwcheck), 2 * nt) : 0;
  const arma::mat Xd = target > 0 ? distinct_rows(X).X : arma::mat();
  S.pilot_used.set_size(m, d);
  arma::mat Mbar(d, d, arma::fill::zeros);
  double Vbar = 0;
  for (arma::uword j = 0; j < m; ++j) {
    const arma::vec bj =
        window_factor(Xd, X_eval.row(j), S.pilot, target, opt.kernel) * S.pilot;
    S.pilot_used.row(j) = bj.t();
    const PilotAt P = pilot_at(X, y, X_eval, j, bj, opt);
    S.bias_coef.row(j) = P.a.t();
    S.bias_cov.slice(j) = P.cov_a;
    S.sigma2(j) = P.sigma2;
    S.density(j) = P.f;
    const double V0 = Rd * P.sigma2 / (static_cast<double>(n) * P.f);
    S.variance_coef(j) = V0;
    const arma::vec a = opt.absolute_bias ? arma::vec(arma::abs(P.a)) : P.a;
    const arma::mat M = a * a.t() + opt.bwregul * P.cov_a;
    S.c_common(j) = mv_plugin_common_scale(M, V0, S.scale, S.range);
    S.h.row(j) = mv_plugin_minimise(M, V0, S.range, S.c_common(j) * S.scale).t();
    S.h.row(j) *= window_factor(Xd, X_eval.row(j), S.h.row(j).t(), target, opt.kernel);
    Mbar += M / static_cast<double>(m);
    Vbar += V0 / static_cast<double>(m);
  }
  S.c_imse_common = mv_plugin_common_scale(Mbar, Vbar, S.scale, S.range);
  S.h_imse = mv_plugin_minimise(Mbar, Vbar, S.range, S.c_imse_common * S.scale);
  double s_imse = 1.0;
  for (arma::uword j = 0; j < m; ++j)
    s_imse = std::max(s_imse, window_factor(Xd, X_eval.row(j), S.h_imse, target, opt.kernel));
  S.h_imse *= s_imse;
  return S;
}

}  // namespace attnreg
