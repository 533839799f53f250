// OLS inference: classical, heteroskedasticity-robust (HC0-HC3) and HAC (Newey-West)
// covariances, t statistics, p-values and R^2.
//
// All sandwiches are computed in the coordinates of the pivoted QR factor D P S^{-1} = Q_1 R
// (S the power-of-two column scales): (D'D)^{-1} D' Omega D (D'D)^{-1} = P S^{-1} R^{-1}
// (Q_1' Omega Q_1) R^{-T} S^{-1} P', so the meat is an r x r matrix of orthonormal scores and
// D'D is never formed. Leverages are h_i = ||row i of Q_1||^2.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <sstream>

#include "attnreg/error.hpp"
#include "attnreg/least_squares.hpp"
#include "attnreg/detail/least_squares_internal.hpp"

namespace attnreg {

using ls_detail::kNaN;

CovType parse_cov_type(const std::string& name) {
  std::string s;
  for (char c : name) s.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (s == "nonrobust" || s == "classical" || s == "const") return CovType::Classical;
  if (s == "hc0") return CovType::HC0;
  if (s == "hc1") return CovType::HC1;
  if (s == "hc2") return CovType::HC2;
  if (s == "hc3") return CovType::HC3;
  if (s == "hac" || s == "neweywest" || s == "newey-west") return CovType::HAC;
  throw InvalidArgument("cov_type: unknown covariance type '" + name +
                        "' (use \"nonrobust\", \"HC0\", \"HC1\", \"HC2\", \"HC3\" or \"HAC\")");
}

std::string cov_type_name(CovType type) {
  switch (type) {
    case CovType::Classical: return "nonrobust";
    case CovType::HC0: return "HC0";
    case CovType::HC1: return "HC1";
    case CovType::HC2: return "HC2";
    case CovType::HC3: return "HC3";
    case CovType::HAC: return "HAC";
  }
  return "nonrobust";
}

int hac_lags(int maxlags, arma::uword n) {
  if (maxlags < -1) {
    std::ostringstream msg;
    msg << "maxlags: must be >= 0 (or -1 for the rule floor(4 (n/100)^(2/9))), got " << maxlags;
    throw InvalidArgument(msg.str());
  }
  if (maxlags >= 0) {
    // Lags of n or more have no pairs of rows: the Bartlett weights would silently shrink the
    // long-run variance (standard errors collapse) instead of estimating it.
    if (n >= 1 && static_cast<arma::uword>(maxlags) >= n) {
      std::ostringstream msg;
      msg << "maxlags: must be in [0, n - 1] = [0, " << (n - 1) << "] for " << n
          << " rows, got " << maxlags << " (or -1 for the rule floor(4 (n/100)^(2/9)))";
      throw InvalidArgument(msg.str());
    }
    return maxlags;
  }
  return static_cast<int>(std::floor(4.0 * std::pow(static_cast<double>(n) / 100.0, 2.0 / 9.0)));
}

namespace {

// Continued fraction for the regularised incomplete beta function, evaluated by the modified
// Lentz method (converges fast for x < (a + 1) / (a + b + 2)).
double beta_continued_fraction(double a, double b, double x) {
  const double tiny = 1e-300, eps = 1e-16;
  double c = 1.0, d = 1.0 - (a + b) * x / (a + 1.0);
  if (std::fabs(d) < tiny) d = tiny;
  d = 1.0 / d;
  double h = d;
  for (int m = 1; m <= 10000; ++m) {
    const double m2 = 2.0 * m;
    double num = m * (b - m) * x / ((a - 1.0 + m2) * (a + m2));  // even step
    d = 1.0 + num * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1.0 + num / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1.0 / d;
    h *= d * c;
    num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + 1.0 + m2));  // odd step
    d = 1.0 + num * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1.0 + num / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1.0 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1.0) < eps) break;
  }
  return h;
}

// Stirling remainder omega(x) = ln Gamma(x) - [(x - 1/2) ln x - x + ln(2 pi)/2], x >= 10.
double stirling_remainder(double x) {
  const double x2 = x * x;
  return (1.0 / 12.0 - (1.0 / 360.0 - (1.0 / 1260.0 - 1.0 / (1680.0 * x2)) / x2) / x2) / x;
}

// ln B(a, b) without the cancellation of lgamma(a) + lgamma(b) - lgamma(a + b) when one argument
// is large (Student t with many degrees of freedom): for big >= 10,
// ln Gamma(big) - ln Gamma(big + small) = -(big - 1/2) log1p(small/big) - small ln(big + small)
//                                         + small + omega(big) - omega(big + small).
double log_beta(double a, double b) {
  const double big = std::max(a, b), small = std::min(a, b);
  if (big < 10.0) return std::lgamma(a) + std::lgamma(b) - std::lgamma(a + b);
  const double diff = -(big - 0.5) * std::log1p(small / big) - small * std::log(big + small) +
                      small + stirling_remainder(big) - stirling_remainder(big + small);
  return std::lgamma(small) + diff;
}

// I_x(a, b), the regularised incomplete beta function; y = 1 - x passed separately so that
// neither logarithm loses digits when x is close to 0 or 1.
double incomplete_beta(double a, double b, double x, double y) {
  if (x <= 0.0) return 0.0;
  if (y <= 0.0) return 1.0;
  const double log_x = x < 0.5 ? std::log(x) : std::log1p(-y);
  const double log_y = y < 0.5 ? std::log(y) : std::log1p(-x);
  const double log_front = a * log_x + b * log_y - log_beta(a, b);
  if (x < (a + 1.0) / (a + b + 2.0)) {
    return std::exp(log_front) * beta_continued_fraction(a, b, x) / a;
  }
  return 1.0 - std::exp(log_front) * beta_continued_fraction(b, a, y) / b;
}

}  // namespace

double student_t_sf(double t, double df) {
  if (std::isnan(t) || std::isnan(df) || !(df > 0.0)) return kNaN;
  if (std::isinf(df)) return 0.5 * std::erfc(t / std::sqrt(2.0));
  if (std::isinf(t)) return t > 0 ? 0.0 : 1.0;
  // P(|T| > |t|) = I_{df/(df+t^2)}(df/2, 1/2); for large |t| use the complementary form
  // to keep relative accuracy in the tail.
  const double x = df / (df + t * t), y = (t * t) / (df + t * t);
  const double tail = 0.5 * incomplete_beta(0.5 * df, 0.5, x, y);
  return t >= 0.0 ? tail : 1.0 - tail;
}

namespace {

// The r x r meat Q_1' Omega Q_1 of a robust covariance for one output with residuals e.
arma::mat robust_meat(const arma::mat& Q1, const arma::vec& e, const CovOptions& cov,
                      double rank) {
  const arma::uword n = Q1.n_rows;
  const double dfres = static_cast<double>(n) - rank;
  if (cov.type == CovType::HAC) {
    const int L = hac_lags(cov.maxlags, n);
    const arma::mat u = Q1.each_col() % e;  // scores in orthonormal coordinates
    arma::mat S = u.t() * u;
    for (int l = 1; l <= L && static_cast<arma::uword>(l) < n; ++l) {
      const auto lu = static_cast<arma::uword>(l);
      const double w = 1.0 - static_cast<double>(l) / (L + 1.0);  // Bartlett
      const arma::mat G = u.rows(lu, n - 1).t() * u.rows(0, n - 1 - lu);
      S += w * (G + G.t());
    }
    if (cov.hac_adjust) S *= dfres > 0 ? static_cast<double>(n) / dfres : kNaN;
    return S;
  }
  arma::vec w = arma::square(e);
  if (cov.type == CovType::HC1) {
    w *= dfres > 0 ? static_cast<double>(n) / dfres : kNaN;
  } else if (cov.type == CovType::HC2 || cov.type == CovType::HC3) {
    const arma::vec h = arma::sum(arma::square(Q1), 1);
    const arma::vec one_minus_h = 1.0 - h;
    w /= cov.type == CovType::HC2 ? one_minus_h : arma::square(one_minus_h);
  }
  const arma::mat Z = Q1.each_col() % arma::sqrt(w);
  return Z.t() * Z;
}

}  // namespace

arma::mat OLS::covariance(const CovOptions& cov, arma::uword output) const {
  require_fitted("covariance");
  check::require(output < y_.n_cols, "output",
                 "is out of range (the model has " + std::to_string(y_.n_cols) + " outputs)");
  const arma::uword r = rank();
  if (r == 0) return unpivot_cov(arma::mat());
  if (cov.type == CovType::Classical) return st_.cov_unscaled * sigma2()(output);
  hac_lags(cov.maxlags, n_obs());  // validates maxlags
  const arma::mat& Q1 = q1();
  const arma::mat Rinv = solve_r(arma::eye(r, r));
  const arma::mat meat = robust_meat(Q1, residuals().col(output), cov, st_.rank);
  return unpivot_cov(Rinv * meat * Rinv.t());
}

arma::mat OLS::std_errors(const CovOptions& cov) const {
  require_fitted("std_errors");
  const arma::uword q = n_coef(), k = y_.n_cols, r = rank();
  arma::mat se(q, k);
  if (r == 0) {
    se.fill(kNaN);
    return se;
  }
  const arma::mat E = residuals();
  // Everything in scaled units, so that no intermediate overflows or underflows when the true
  // standard errors are representable: residuals are divided by a power of two c per output,
  // and sqrt(diag((D'D)^{-1})) is taken in the scaled pivoted coordinates of the factor, where
  // (D'D)^{-1}_jj = ||row a of R^{-1}||^2 / scale_j^2 (a the pivot position of column j). With
  // X * 1e-160 or y * 1e160 the unscaled products sigma^2 and (D'D)^{-1} overflow while the
  // standard errors (about 1e158) do not.
  if (cov.type == CovType::Classical) {
    const double df = static_cast<double>(n_obs()) - st_.rank;
    arma::vec root_d(q);
    root_d.fill(kNaN);
    arma::mat Rinv;
    for (arma::uword a = 0; a < r; ++a) {
      const auto j = static_cast<arma::uword>(st_.pivot(a));
      const double d = st_.cov_unscaled(j, j);
      if (std::isfinite(d) && d >= std::numeric_limits<double>::min()) {
        root_d(j) = std::sqrt(d);  // the (possibly double-double) covariance itself
      } else {
        if (Rinv.is_empty()) Rinv = solve_r(arma::eye(r, r));
        root_d(j) = arma::norm(Rinv.row(a), 2) / st_.scale(j);
      }
    }
    for (arma::uword c = 0; c < k; ++c) {
      const double sc = ls_detail::power_of_two_scale(arma::abs(E.col(c)).max());
      long double acc = 0.0L;
      for (arma::uword i = 0; i < E.n_rows; ++i) {
        const long double ei = static_cast<long double>(E(i, c)) / sc;
        acc += ei * ei;
      }
      const double sigma = df > 0 ? static_cast<double>(std::sqrt(acc / df)) : kNaN;
      se.col(c) = (sigma * root_d) * sc;
    }
    return se;
  }
  hac_lags(cov.maxlags, n_obs());
  const arma::mat& Q1 = q1();
  const arma::mat Rinv = solve_r(arma::eye(r, r));
  for (arma::uword c = 0; c < k; ++c) {
    const double sc = ls_detail::power_of_two_scale(arma::abs(E.col(c)).max());
    const arma::vec ec = E.col(c) / sc;
    const arma::mat Vp = Rinv * robust_meat(Q1, ec, cov, st_.rank) * Rinv.t();
    se.col(c).fill(kNaN);
    for (arma::uword a = 0; a < r; ++a) {
      const auto j = static_cast<arma::uword>(st_.pivot(a));
      se(j, c) = std::sqrt(Vp(a, a)) / st_.scale(j) * sc;
    }
  }
  return se;
}

Inference OLS::inference(const CovOptions& cov) const {
  require_fitted("inference");
  Inference out;
  const arma::uword n = n_obs(), k = y_.n_cols;
  out.cov_type = cov.type;
  out.maxlags = cov.type == CovType::HAC ? hac_lags(cov.maxlags, n) : 0;
  out.df_residual = static_cast<double>(n) - st_.rank;
  out.estimate = st_.coef;
  out.std_error = std_errors(cov);
  out.t_value = out.estimate / out.std_error;
  out.p_value.set_size(out.t_value.n_rows, k);
  for (arma::uword i = 0; i < out.t_value.n_elem; ++i) {
    const double t = out.t_value(i);
    out.p_value(i) = std::isfinite(t) && out.df_residual > 0
                         ? 2.0 * student_t_sf(std::fabs(t), out.df_residual)
                         : kNaN;
  }
  const arma::mat e = residuals();
  const arma::rowvec s2 = sigma2();
  out.r_squared.set_size(k);
  out.adj_r_squared.set_size(k);
  out.sigma = arma::sqrt(s2);
  const double df_int = st_.fit_intercept ? 1.0 : 0.0;
  for (arma::uword c = 0; c < k; ++c) {
    long double rss = 0.0L, tss = 0.0L, mean = 0.0L;
    if (st_.fit_intercept) {
      for (arma::uword i = 0; i < n; ++i) mean += y_(i, c);
      mean /= static_cast<long double>(n);
    }
    for (arma::uword i = 0; i < n; ++i) {
      rss += static_cast<long double>(e(i, c)) * e(i, c);
      const long double d = y_(i, c) - mean;
      tss += d * d;
    }
    const double r2 = tss > 0 ? static_cast<double>(1.0L - rss / tss) : kNaN;
    out.r_squared(c) = r2;
    out.adj_r_squared(c) =
        out.df_residual > 0 ? 1.0 - (1.0 - r2) * ((n - df_int) / out.df_residual) : kNaN;
  }
  return out;
}

}  // namespace attnreg
