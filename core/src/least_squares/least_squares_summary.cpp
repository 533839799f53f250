// Fit statistics of a regression summary: prediction variances, the regression Wald F and the
// Gaussian log-likelihood (see least_squares_summary.hpp for the conventions).
#include "attnreg/least_squares/least_squares_summary.hpp"
#include "attnreg/base/constants.hpp"

#include <cmath>
#include <limits>
#include <sstream>
#include <vector>

#include "attnreg/base/error.hpp"
#include "attnreg/detail/least_squares_internal.hpp"

namespace attnreg {

namespace {


void check_covariance(const OLS& model, const arma::mat& V, const char* what) {
  if (!model.is_fitted()) {
    throw InvalidArgument(std::string(what) + ": the model is not fitted yet (call fit first)");
  }
  const arma::uword q = model.n_coef();
  if (V.n_rows != q || V.n_cols != q) {
    std::ostringstream msg;
    msg << "V: must be the " << q << " x " << q << " coefficient covariance of the model (design "
        << "order, intercept first), got " << V.n_rows << " x " << V.n_cols;
    throw InvalidArgument(msg.str());
  }
}

// Design positions of the kept (non-aliased) coefficients.
arma::uvec kept_columns(const OLS& model) {
  const std::vector<bool> al = model.aliased();
  std::vector<arma::uword> keep;
  for (arma::uword j = 0; j < al.size(); ++j) {
    if (!al[j]) keep.push_back(j);
  }
  return arma::uvec(keep);
}

}  // namespace

arma::vec row_quadratic_forms(const arma::mat& D, const arma::mat& V) {
  if (V.n_rows != V.n_cols || V.n_rows != D.n_cols) {
    std::ostringstream msg;
    msg << "V: must be square with one row per column of D (" << D.n_cols << "), got "
        << V.n_rows << " x " << V.n_cols;
    throw InvalidArgument(msg.str());
  }
  check::all_finite(D, "D");
  check::all_finite(V, "V");
  // Symmetrise V so that the quadratic form does not depend on which triangle rounding favoured.
  const arma::mat Vs = 0.5 * (V + V.t());
  arma::vec out = arma::sum((D * Vs) % D, 1);
  // A positive semi-definite V gives d'Vd >= 0; rounding can leave -1e-17 where it is 0.
  out.transform([](double v) { return v < 0.0 ? 0.0 : v; });
  return out;
}

arma::vec ols_prediction_variance(const OLS& model, const arma::mat& X_new, const arma::mat& V) {
  check_covariance(model, V, "ols_prediction_variance");
  const bool intercept = model.state().fit_intercept;
  const arma::uword p = model.n_coef() - (intercept ? 1 : 0);
  ls_detail::check_new_x_columns(X_new, p);
  const arma::uvec keep = kept_columns(model);
  const arma::mat Vk = V.submat(keep, keep);
  arma::mat D(X_new.n_rows, model.n_coef());
  if (intercept) {
    D.col(0).ones();
    if (p > 0) D.cols(1, p) = X_new;
  } else {
    D = X_new;
  }
  return row_quadratic_forms(D.cols(keep), Vk);
}

SlopesWaldTest ols_slopes_wald(const OLS& model, const arma::mat& V, arma::uword output) {
  check_covariance(model, V, "ols_slopes_wald");
  const arma::mat& coef = model.coefficients();
  check::require(output < coef.n_cols, "output",
                 "is out of range (the model has " + std::to_string(coef.n_cols) + " outputs)");
  const bool intercept = model.state().fit_intercept;
  const std::vector<bool> al = model.aliased();
  std::vector<arma::uword> slopes;
  for (arma::uword j = intercept ? 1 : 0; j < al.size(); ++j) {
    if (!al[j]) slopes.push_back(j);
  }
  SlopesWaldTest out;
  out.df_num = static_cast<double>(slopes.size());
  if (slopes.empty()) {
    out.statistic = kNaN;  // nothing to test (intercept-only model)
    return out;
  }
  const arma::uvec s(slopes);
  out.statistic = wald_f_statistic(coef.col(output).eval().elem(s), V.submat(s, s));
  return out;
}

double wald_f_statistic(const arma::vec& b, const arma::mat& V) {
  const arma::uword m = b.n_elem;
  if (V.n_rows != m || V.n_cols != m) {
    std::ostringstream msg;
    msg << "V: must be " << m << " x " << m << " (one row per coefficient tested), got "
        << V.n_rows << " x " << V.n_cols;
    throw InvalidArgument(msg.str());
  }
  if (m == 0 || !b.is_finite() || !V.is_finite()) return kNaN;
  // Standardise to the correlation matrix C and z = b / se: scale-free, and a Cholesky factor
  // of C decides definiteness with a tolerance that does not depend on the units of X.
  const arma::vec sd = arma::sqrt(V.diag());
  if (!(sd.min() > 0.0)) return kNaN;
  const arma::vec z = b / sd;
  arma::mat C = V.each_col() / sd;
  C.each_row() /= sd.t();
  C = 0.5 * (C + C.t());
  arma::mat L;
  if (!arma::chol(L, C, "lower")) return kNaN;
  // Pivots of a unit-diagonal matrix: d_j^2 = 1 - R_j^2 is the part of coefficient j not
  // explained by the earlier ones; at the rounding level (100 m eps) V is singular.
  const double eps = std::numeric_limits<double>::epsilon();
  if (arma::min(arma::square(L.diag())) <= 100.0 * static_cast<double>(m) * eps) return kNaN;
  const arma::vec u = arma::solve(arma::trimatl(L), z);
  return arma::dot(u, u) / static_cast<double>(m);
}

double gaussian_loglik(const arma::vec& e, const arma::vec& w, bool frequency) {
  const arma::uword n = e.n_elem;
  check::require(n >= 1, "residuals", "need at least one value");
  check::all_finite(e, "residuals");
  const bool weighted = !w.is_empty();
  if (weighted) {
    check::rows_match(w, n, "weights", "residuals");
    check::all_finite(w, "weights");
    check::require(w.min() > 0.0, "weights", "must all be > 0 for a log-likelihood");
  }
  // RSS with a power-of-two scale so that tiny or huge residuals neither underflow nor overflow.
  const double emax = arma::abs(e).max();
  const double sc = emax > 0.0 ? std::exp2(std::floor(std::log2(emax))) : 1.0;
  long double rss = 0.0L, sum_log_w = 0.0L, sum_w = 0.0L;
  for (arma::uword i = 0; i < n; ++i) {
    const long double ei = static_cast<long double>(e(i)) / sc;
    const long double wi = weighted ? static_cast<long double>(w(i)) : 1.0L;
    rss += wi * ei * ei;
    sum_w += wi;
    if (weighted && !frequency) sum_log_w += std::log(wi);
  }
  if (rss == 0.0L) return std::numeric_limits<double>::infinity();
  const long double nn = frequency ? sum_w : static_cast<long double>(n);
  const long double pi2 = 6.283185307179586476925286766559L;
  const long double log_rss = std::log(rss) + 2.0L * std::log(static_cast<long double>(sc));
  const long double ll = -0.5L * nn * (std::log(pi2) + log_rss - std::log(nn) + 1.0L) + 0.5L * sum_log_w;
  return static_cast<double>(ll);
}

}  // namespace attnreg
