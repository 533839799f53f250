// attnreg: the locally homoskedastic residual variance of a local polynomial fit at an
// evaluation point (variance kind "local"; formula in core/include/attnreg/inference/
// diagnostics.hpp, local_residual_variance).
#include <algorithm>
#include <string>
#include <vector>

#include "attnreg/base/error.hpp"
#include "attnreg/detail/diagnostics_checks.hpp"
#include "attnreg/detail/monomials.hpp"
#include "attnreg/inference/diagnostics.hpp"

namespace attnreg {

namespace {

// A local-constant model with the fit's kernels, bandwidths and sample weights: its attention
// weights at x are K_h(x_i - x) a_i scaled to sum to one, so the window is exactly the fit's
// (the Gaussian after the core's truncation rule).
LocalPolynomial fit_kernel_model(const LocalPolynomial& model) {
  LocalFitOptions fo = model.options();
  fo.degree = 0;
  fo.ridge = 0;
  fo.compute_fitted = false;
  LocalPolynomial nw(fo);
  nw.fit(model.training_x(), arma::mat(model.n_obs(), 1, arma::fill::zeros), model.bandwidth(),
         model.state().sample_weight);
  return nw;
}

}  // namespace

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
  const arma::mat& X = model.training_x();
  const arma::vec y = model.training_y().col(output);
  const arma::vec& h = model.bandwidth();
  const arma::uword m = X_eval.n_rows, blk = 256;
  const LocalPolynomial nw = fit_kernel_model(model);
  arma::vec out(m);
  for (arma::uword r0 = 0; r0 < m; r0 += blk) {
    const arma::uword r1 = std::min(m, r0 + blk) - 1;
    const arma::mat K = nw.attention_weights(X_eval.rows(r0, r1));
    for (arma::uword jb = 0; jb < K.n_rows; ++jb) {
      const arma::uword j = r0 + jb;
      const arma::uvec S = arma::find(K.row(jb).t() > 0);
      const arma::vec w = arma::vec(K.row(jb).t())(S);
      // design of the local polynomial in u = (x_i - x) / h over the window
      arma::mat Z(S.n_elem, mon.size());
      for (std::size_t k = 0; k < mon.size(); ++k)
        for (arma::uword t = 0; t < S.n_elem; ++t) {
          double v = 1;
          for (std::size_t c = 0; c < cc.size(); ++c)
            for (int e = 0; e < mon[k][c]; ++e)
              v *= (X(S(t), cc[c]) - X_eval(j, cc[c])) / h(cc[c]);
          Z(t, k) = v;
        }
      const arma::vec sq = arma::sqrt(w);
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
