// attnreg: the locally homoskedastic residual variance of a local polynomial fit at an
// evaluation point (variance kind "local"; formula in core/include/attnreg/inference/
// diagnostics.hpp, local_residual_variance).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "attnreg/base/error.hpp"
#include "attnreg/detail/diagnostics_checks.hpp"
#include "attnreg/detail/monomials.hpp"
#include "attnreg/inference/diagnostics.hpp"

namespace attnreg {

arma::vec local_residual_variance(const LocalPolynomial& model, const arma::mat& X_eval,
                                  arma::uword output) {
  check::require(model.is_fitted(), "model", "is not fitted; call fit() first");
  check::require(X_eval.n_cols == model.training_x().n_cols, "X",
                 "has " + std::to_string(X_eval.n_cols) + " columns but the model was fitted on " +
                     std::to_string(model.training_x().n_cols));
  check::require(output < model.n_outputs(), "output",
                 "is " + std::to_string(output) + " but the model has " +
                     std::to_string(model.n_outputs()) + " output column(s)");
  const std::vector<std::size_t>& cc = model.space().continuous_columns();
  const int p = model.options().degree;
  const std::vector<std::vector<int>> mon = detail::monomials(cc.size(), cc.empty() ? 0 : p);
  const arma::uvec ucc = arma::conv_to<arma::uvec>::from(cc);
  const arma::mat Xc = model.training_x().cols(ucc);  // the continuous columns
  const arma::vec hc = arma::vec(model.bandwidth())(ucc);
  const arma::vec y = model.training_y().col(output);
  const arma::uword m = X_eval.n_rows, blk = 256;
  // the fit's kernel weights, its windows exactly (the Gaussian after its truncation rule)
  const LocalPolynomial nw = kernel_weight_model(model, model.training_x(), model.bandwidth(),
                                                 model.sample_weight(), true);
  arma::vec out(m);
  for (arma::uword r0 = 0; r0 < m; r0 += blk) {
    const arma::uword r1 = std::min(m, r0 + blk) - 1;
    const arma::mat K = nw.attention_weights(X_eval.rows(r0, r1));
    for (arma::uword jb = 0; jb < K.n_rows; ++jb) {
      const arma::uword j = r0 + jb;
      const arma::uvec S = arma::find(K.row(jb).t() > 0);
      const arma::vec w = arma::vec(K.row(jb).t())(S);
      // design of the local polynomial in u = (x_i - x) / h over the window
      const arma::rowvec x0 = arma::rowvec(X_eval.row(j)).cols(ucc);
      const arma::mat Z = detail::monomial_design(Xc, S, x0, hc, mon, mon.size());
      // a plain loop: Armadillo's element-wise sqrt opens an OpenMP region on long vectors,
      // whose idle threads spin between the points (rbc_marginal_effects.cpp, wls_weights)
      arma::vec sq(w.n_elem);
      for (arma::uword i = 0; i < w.n_elem; ++i) sq(i) = std::sqrt(w(i));
      arma::mat Q, R;
      bool ok = S.n_elem > mon.size() && arma::qr_econ(Q, R, Z.each_col() % sq);
      if (ok) {
        const arma::vec rd = arma::abs(R.diag());
        ok = rd.min() > 1e-10 * std::max(rd.max(), 1.0);
      }
      if (!ok)
        throw NumericalError("cov_type: 'local' estimates sigma^2 at " +
                             detail::evaluation_point(X_eval, j) + " from the residuals of the "
                             "local fit, which needs more distinct training points with weight "
                             "than its " + std::to_string(mon.size()) + " coefficients (" +
                             std::to_string(S.n_elem) + " rows with weight); use a larger "
                             "bandwidth or cov_type 'hc3'");
      // weighted residuals sq % (y - Z beta) = (I - Q Q') sq % y; leverages h_ii = |Q_i|^2
      const arma::vec ys = sq % y(S);
      const arma::vec res = ys - Q * (Q.t() * ys);
      const arma::vec lev = arma::sum(arma::square(Q), 1);
      const double den = arma::dot(w, 1.0 - lev);
      if (!(den > 0))
        throw NumericalError("cov_type: 'local' has no residual degrees of freedom at " +
                             detail::evaluation_point(X_eval, j) + "; use a larger bandwidth "
                             "or cov_type 'hc3'");
      out(j) = arma::dot(res, res) / den;
    }
  }
  return out;
}

}  // namespace attnreg
