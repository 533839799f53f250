// attnreg: finite-sample critical values of the heteroskedasticity-robust t-statistics of
// linear smoothers (PointwiseOptions::critical_value "null" with kinds hc0-hc3; declared in
// core/include/attnreg/inference/diagnostics.hpp, robust_null_critical_values).
//
// For a smoother row W (n) and the HC variance V = sum_i W_i^2 s_i r_i^2, r = (I - H) y the
// residuals of the fit at the training rows (H its hat matrix, s_i = 1, n / (n - tr L),
// 1 / (1 - H_ii) or 1 / (1 - H_ii)^2 for hc0..hc3), the statistic t = W'(y - E y) / sqrt(V)
// is, under y = m + e with e ~ N(0, sigma^2 I) and no smoothing bias in r,
// t = a'e / sqrt(e'Ae) with a = W / |W| and A = F'F, F = diag(|a_i| sqrt(s_i)) (I - H)_S over
// the rows S where W is not 0. With Y = F e and Z = a'e, Y given Z is N(f Z, M - f f'),
// f = F a, M = F F' (|S| x |S|), and t = Z / |Y|: detail::null_spectrum takes it from there
// (core/include/attnreg/detail/null_quantile.hpp). This is the reference
// distribution Bell and McCaffrey (2002, Survey Methodology 28(2)) and Imbens and Kolesar
// (2016, Rev. Econ. Stat. 98(4)) take for robust t-statistics, here with its whole
// distribution (a saddlepoint approximation given a'e) instead of a Satterthwaite degrees of
// freedom.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "attnreg/base/error.hpp"
#include "attnreg/base/names.hpp"
#include "attnreg/detail/diagnostics_checks.hpp"
#include "attnreg/detail/null_quantile.hpp"
#include "attnreg/inference/diagnostics.hpp"
#include "attnreg/inference/distributions.hpp"

namespace attnreg {

namespace {

// The rows that carry W's variance: those with D_i = W_i^2 s_i > 0, less the smallest whose
// D sum to at most 1e-4 of the total. Under a Gaussian kernel all n rows have weight; the
// dropped ones hold at most 1e-4 of E e'Ae, so leaving them out shrinks e'Ae a little and
// raises the critical value (the safe side): by 1e-3 of itself at a d = 3 corner (3.234 to
// 3.237, n = 2,000, Gaussian kernel; the interior unchanged in four digits), below the
// saddlepoint's own error, while |S| falls from about 1,600 to about 700 rows there, and the
// |S|^2 n product and the |S|^3 eigenproblem below with it (4.9 to 0.8 s CPU for 4 points).
void mark_variance_rows(const arma::vec& D, arma::uvec& keep) {
  const double total = arma::accu(D);
  if (!(total > 0)) return;
  const arma::uvec order = arma::sort_index(D);
  double dropped = 0;
  arma::uword k = 0;
  while (k < order.n_elem && dropped + D(order(k)) <= 1e-4 * total) dropped += D(order(k++));
  for (; k < order.n_elem; ++k) keep(order(k)) = 1;
}

}  // namespace

CriticalValue critical_value_from_name(const std::string& name, const std::string& arg) {
  using C = CriticalValue;
  return detail::option_from_name<C>(
      name, {{"auto", C::automatic}, {"automatic", C::automatic}, {"normal", C::normal},
             {"null", C::null}},
      arg, "critical value",
      "'normal' (the normal quantile), 'null' (the quantile of the t-statistic's finite-sample "
      "null; cov_type 'hc0'-'hc3' and 'local') or 'auto' ('null' for 'local', else 'normal')");
}

std::vector<arma::vec> robust_null_critical_values(const LocalPolynomial& model,
                                                   const arma::mat& X_eval, VarianceKind kind,
                                                   double trace_L,
                                                   const std::vector<const arma::mat*>& smoothers,
                                                   double level) {
  check::require(kind == VarianceKind::hc0 || kind == VarianceKind::hc1 ||
                     kind == VarianceKind::hc2 || kind == VarianceKind::hc3,
                 "critical_value", std::string("'null' is computed for cov_type 'hc0'-'hc3' and "
                 "'local'; with '") + variance_kind_name(kind) + "' use 'normal'");
  const arma::uword n = model.n_obs(), m = X_eval.n_rows;
  for (const arma::mat* W : smoothers)
    check::require(W->n_rows == m && W->n_cols == n, "smoothers",
                   "need one row per evaluation point and one column per training row");
  // s_i, the kind's factor on r_i^2
  arma::vec s(n, arma::fill::ones);
  if (kind == VarianceKind::hc1) {
    const double dn = static_cast<double>(n) - trace_L;
    if (!(dn > 0)) throw NumericalError("kind: hc1 needs n > tr L; use hc0 or a larger bandwidth");
    s.fill(static_cast<double>(n) / dn);
  }
  const arma::vec& lev = model.leverage_unchecked();
  if (kind == VarianceKind::hc2) s = 1.0 / (1.0 - lev);
  if (kind == VarianceKind::hc3) s = 1.0 / arma::square(1.0 - lev);
  std::vector<arma::vec> out(smoothers.size(), arma::vec(m));
  const double z = normal_quantile(0.5 + level / 2);
  for (arma::uword j = 0; j < m; ++j) {
    arma::uvec keep(n, arma::fill::zeros);
    std::vector<arma::vec> a(smoothers.size());
    for (std::size_t k = 0; k < smoothers.size(); ++k) {
      a[k] = smoothers[k]->row(j).t();
      const double norm = arma::norm(a[k]);
      if (norm > 0) a[k] /= norm;
      mark_variance_rows(arma::square(a[k]) % s, keep);
    }
    const arma::uvec S = arma::find(keep);
    if (S.is_empty()) {  // every smoother row is 0 at this point: t is not defined; z
      for (auto& c : out) c(j) = z;
      continue;
    }
    // (I - H)_S over the columns its rows touch
    arma::mat R = -model.attention_weights(model.training_x().rows(S));
    for (arma::uword r = 0; r < S.n_elem; ++r) R(r, S(r)) += 1;
    const arma::uvec C = arma::find(arma::any(R != 0, 0).t());
    R = arma::mat(R.cols(C));
    const arma::mat RRt = R * R.t();  // syrk
    for (std::size_t k = 0; k < smoothers.size(); ++k) {
      const arma::vec aS = a[k](S);
      arma::vec sd(S.n_elem);
      for (arma::uword r = 0; r < S.n_elem; ++r) sd(r) = std::abs(aS(r)) * std::sqrt(s(S(r)));
      if (!arma::any(sd > 0)) {
        out[k](j) = z;
        continue;
      }
      const arma::vec f = sd % (R * arma::vec(a[k](C)));
      arma::mat M = RRt.each_col() % sd;
      M.each_row() %= sd.t();
      out[k](j) = detail::null_critical_value(detail::null_spectrum(M, f), level);
      if (!std::isfinite(out[k](j)))
        throw NumericalError("critical_value: 'null' found no critical value at " +
                             detail::evaluation_point(X_eval, j) + " (the t-statistic's null "
                             "distribution is degenerate there: its variance rests on a few "
                             "rows); use a larger bandwidth or critical_value 'normal'");
    }
  }
  return out;
}

}  // namespace attnreg
