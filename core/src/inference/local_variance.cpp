// attnreg: the locally homoskedastic residual variance of a local polynomial fit at an
// evaluation point (variance kind "local") and the critical values of its t-statistics under
// their own finite-sample null (formulas in core/include/attnreg/inference/diagnostics.hpp,
// local_residual_variance).
#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "attnreg/base/constants.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/detail/diagnostics_checks.hpp"
#include "attnreg/detail/monomials.hpp"
#include "attnreg/detail/null_quantile.hpp"
#include "attnreg/inference/diagnostics.hpp"
#include "attnreg/inference/distributions.hpp"

namespace attnreg {

namespace {

// NullMoments of the smoother row a (over the window's rows) for the pooled variance
// e'Ae = |(I - QQ') sqrt(w) e|^2 / den: A = D^(1/2) (I - QQ') D^(1/2) / den, D = diag(w),
// Q an orthonormal basis of D^(1/2) Z; its traces from G_k = Q' D^k Q (p x p):
// tr A^2 = (sum w^2 - 2 tr G2 + tr G1^2) / den^2,
// tr A^3 = (sum w^3 - 3 tr G3 + 3 tr(G2 G1) - tr G1^3) / den^3.
detail::NullMoments null_moments(arma::vec a, const arma::vec& sw, const arma::mat& Q,
                                 double den, double trA2, double trA3) {
  a /= arma::norm(a);
  auto apply = [&](const arma::vec& v) {
    arma::vec u = sw % v;
    u -= Q * (Q.t() * u);
    return arma::vec(sw % u / den);
  };
  const arma::vec Aa = apply(a), A2a = apply(Aa);
  // tr A = sum w (1 - H_ii) / den = 1
  return detail::null_moments_from(arma::dot(a, Aa), arma::dot(Aa, Aa), arma::dot(Aa, A2a), 1.0,
                                   trA2, trA3);
}

std::string brief(double v) {
  std::ostringstream o;
  o.precision(3);
  o << v;
  return o.str();
}

}  // namespace

LocalVariance local_residual_variance(const LocalPolynomial& model, const arma::mat& X_eval,
                                      arma::uword output, int degree,
                                      const std::vector<const arma::mat*>& smoothers,
                                      double level) {
  check::require(model.is_fitted(), "model", "is not fitted; call fit() first");
  check::require(X_eval.n_cols == model.training_x().n_cols, "X",
                 "has " + std::to_string(X_eval.n_cols) + " columns but the model was fitted on " +
                     std::to_string(model.training_x().n_cols));
  check::require(output < model.n_outputs(), "output",
                 "is " + std::to_string(output) + " but the model has " +
                     std::to_string(model.n_outputs()) + " output column(s)");
  check::require(degree >= 0, "pilot_degree", "must be >= 0, got " + std::to_string(degree));
  const std::vector<std::size_t>& cc = model.space().continuous_columns();
  const std::vector<std::vector<int>> mon = detail::monomials(cc.size(), cc.empty() ? 0 : degree);
  const arma::uvec ucc = arma::conv_to<arma::uvec>::from(cc);
  const arma::mat Xc = model.training_x().cols(ucc);  // the continuous columns
  const arma::vec hc = arma::vec(model.bandwidth())(ucc);
  const arma::vec y = model.training_y().col(output);
  const arma::uword m = X_eval.n_rows, blk = 256;
  for (const arma::mat* W : smoothers)
    check::require(W->n_rows == m && W->n_cols == y.n_elem, "smoothers",
                   "need one row per evaluation point and one column per training row");
  // the fit's kernel weights, its windows exactly (the Gaussian after its truncation rule)
  const LocalPolynomial nw = kernel_weight_model(model, model.training_x(), model.bandwidth(),
                                                 model.sample_weight(), true);
  LocalVariance out;
  out.sigma2.set_size(m);
  out.crit.assign(smoothers.size(), arma::vec(m));
  for (arma::uword r0 = 0; r0 < m; r0 += blk) {
    const arma::uword r1 = std::min(m, r0 + blk) - 1;
    const arma::mat K = nw.attention_weights(X_eval.rows(r0, r1));
    for (arma::uword jb = 0; jb < K.n_rows; ++jb) {
      const arma::uword j = r0 + jb;
      // the window's rows, and those outside it that a smoother weighs (they enter a't only)
      arma::uvec keep = K.row(jb).t() > 0;
      const arma::uword n_pos = arma::accu(keep);
      for (const arma::mat* W : smoothers) keep = keep || (W->row(j).t() != 0);
      const arma::uvec S = arma::find(keep);
      const arma::vec w = arma::vec(K.row(jb).t())(S);
      // design of the local polynomial in u = (x_i - x) / h over those rows
      const arma::rowvec x0 = arma::rowvec(X_eval.row(j)).cols(ucc);
      const arma::mat Z = detail::monomial_design(Xc, S, x0, hc, mon, mon.size());
      // a plain loop: Armadillo's element-wise sqrt opens an OpenMP region on long vectors,
      // whose idle threads spin between the points (rbc_marginal_effects.cpp, wls_weights)
      arma::vec sw(w.n_elem);
      for (arma::uword i = 0; i < w.n_elem; ++i) sw(i) = std::sqrt(w(i));
      arma::mat Q, R;
      bool ok = n_pos > mon.size() && arma::qr_econ(Q, R, Z.each_col() % sw);
      if (ok) {
        const arma::vec rd = arma::abs(R.diag());
        ok = rd.min() > 1e-10 * std::max(rd.max(), 1.0);
      }
      if (!ok)
        throw NumericalError("cov_type: 'local' estimates sigma^2 at " +
                             detail::evaluation_point(X_eval, j) + " from the residuals of a "
                             "local polynomial of degree " + std::to_string(degree) + " in the "
                             "fit's window, which needs more distinct training points with "
                             "weight than its " + std::to_string(mon.size()) + " coefficients (" +
                             std::to_string(n_pos) + " rows with weight); use a larger "
                             "bandwidth or cov_type 'hc3'");
      // weighted residuals sw % (y - Z beta) = (I - Q Q') sw % y; leverages h_ii = |Q_i|^2
      const arma::vec ys = sw % y(S);
      const arma::vec res = ys - Q * (Q.t() * ys);
      const arma::vec lev = arma::sum(arma::square(Q), 1);
      const double den = arma::dot(w, 1.0 - lev);
      // a window whose weight sits on rows the polynomial interpolates (the rest weighing
      // < 1e-6 of it) has no residual degrees of freedom worth the name, and the traces
      // below would cancel catastrophically
      if (!(den > 1e-6 * arma::accu(w)))
        throw NumericalError("cov_type: 'local' has no residual degrees of freedom at " +
                             detail::evaluation_point(X_eval, j) + ": the local polynomial of "
                             "degree " + std::to_string(degree) + " interpolates the rows that "
                             "carry the window's weight (sum w (1 - H_ii) = " + brief(den) +
                             " of sum w = " + brief(arma::accu(w)) + "); use a larger "
                             "bandwidth or cov_type 'hc3'");
      out.sigma2(j) = arma::dot(res, res) / den;
      if (smoothers.empty()) continue;
      const arma::mat G1 = Q.t() * (Q.each_col() % w);
      const arma::mat G2 = Q.t() * (Q.each_col() % arma::square(w));
      const arma::mat G3 = Q.t() * (Q.each_col() % (w % w % w));
      const double trA2 =
          (arma::accu(arma::square(w)) - 2 * arma::trace(G2) + arma::accu(G1 % G1)) / (den * den);
      const double trA3 = (arma::accu(w % w % w) - 3 * arma::trace(G3) +
                           3 * arma::trace(G2 * G1) - arma::trace(G1 * G1 * G1)) /
                          (den * den * den);
      for (std::size_t k = 0; k < smoothers.size(); ++k) {
        const arma::vec a = arma::vec(smoothers[k]->row(j).t())(S);
        out.crit[k](j) = arma::any(a != 0)
                             ? detail::null_critical_value(null_moments(a, sw, Q, den, trA2, trA3),
                                                   level)
                             : normal_quantile(0.5 + level / 2);
        if (!std::isfinite(out.crit[k](j)))
          throw NumericalError("cov_type: 'local' found no critical value at " +
                               detail::evaluation_point(X_eval, j) + " (the t-statistic's "
                               "null distribution is degenerate there: its window rests on a "
                               "few rows); use a larger bandwidth or cov_type 'hc3'");
      }
    }
  }
  return out;
}

}  // namespace attnreg
