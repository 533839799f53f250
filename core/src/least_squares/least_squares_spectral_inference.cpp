// Ridge and PCR inference: classical, HC0-HC3, HAC and cluster-robust (CR0-CR2, one- and
// two-way) covariances of the coefficients, exact for the linear map b = M y of the fit (see the
// header comment of least_squares_spectral.hpp). The sandwiches share OLS's meat
// (ls_detail::sandwich_meat) in the orthonormal coordinates F of the centred SVD.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "attnreg/base/error.hpp"
#include "attnreg/least_squares/least_squares_spectral.hpp"
#include "attnreg/detail/least_squares_internal.hpp"

namespace attnreg {


double SpectralLS::n_effective() const {
  require_fitted("n_effective");
  if (w_.is_empty()) return static_cast<double>(n_obs());
  if (weight_type_ == WeightType::Frequency) return total_weight();
  return static_cast<double>(arma::accu(w_ > 0.0));
}

double SpectralLS::df_residual() const { return n_effective() - effective_df(); }

arma::rowvec SpectralLS::sigma2() const {
  require_fitted("sigma2");
  const arma::mat E = residuals();
  const double df = df_residual();
  arma::rowvec out(E.n_cols);
  for (arma::uword c = 0; c < E.n_cols; ++c) {
    long double acc = 0.0L;
    for (arma::uword i = 0; i < E.n_rows; ++i) {
      const long double ei = E(i, c);
      acc += w_.is_empty() ? ei * ei : w_(i) * ei * ei;
    }
    out(c) = df > 0 ? static_cast<double>(acc / df) : kNaN;
  }
  return out;
}

void SpectralLS::inference_basis(arma::mat& F, arma::mat& Fh, arma::mat& L) const {
  const arma::uword n = n_obs(), p = n_features();
  const arma::vec phi = filter();
  const arma::uvec act = arma::find(phi > 0.0);  // PCR's dropped components carry nothing
  const arma::uword r = act.n_elem, c0 = intercept_ ? 1 : 0;
  F.set_size(n, c0 + r);
  Fh.set_size(n, c0 + r);
  L.zeros(p + c0, c0 + r);
  const double tw = total_weight();
  if (intercept_) {
    // The constant column of the whitened design, normalised: w^{1/2} / sqrt(sum w).
    F.col(0) = w_.is_empty() ? arma::vec(n, arma::fill::value(1.0 / std::sqrt(tw)))
                             : arma::vec(arma::sqrt(w_ / tw));
    Fh.col(0) = F.col(0);
    L(0, 0) = 1.0 / std::sqrt(tw);
  }
  if (r == 0) return;
  const arma::vec g = gain();
  F.cols(c0, c0 + r - 1) = U_.cols(act);
  Fh.cols(c0, c0 + r - 1) = U_.cols(act);
  Fh.cols(c0, c0 + r - 1).each_row() %= arma::sqrt(phi(act)).t();
  arma::mat Vg = V_.cols(act);
  Vg.each_row() %= g(act).t();  // p x r: the slopes' map V diag(phi/s)
  if (p) L.submat(c0, c0, c0 + p - 1, c0 + r - 1) = Vg;
  if (intercept_) L.submat(0, c0, 0, c0 + r - 1) = -x_mean_ * Vg;
}

void SpectralLS::check_cov(const CovOptions& cov, arma::uword output) const {
  check::require(output < y_.n_cols, "output",
                 "is out of range (the model has " + std::to_string(y_.n_cols) + " outputs)");
  if (cov.type == CovType::HAC) {
    const arma::uword m =
        w_.is_empty() ? n_obs() : static_cast<arma::uword>(arma::accu(w_ > 0.0));
    hac_lags(cov.maxlags, m);  // validates maxlags
  }
  if (!is_cluster_cov(cov.type) && !cov.clusters.is_empty()) {
    throw InvalidArgument("clusters: given, but cov_type is " + cov_type_name(cov.type) +
                          "; use a cluster-robust cov_type (\"cluster\", \"CR0\", \"CR1\", "
                          "\"CR2\") or drop the clusters");
  }
}

arma::mat SpectralLS::covariance(const CovOptions& cov, arma::uword output) const {
  require_fitted("covariance");
  check_cov(cov, output);
  arma::mat F, Fh, L;
  inference_basis(F, Fh, L);
  if (cov.type == CovType::Classical) return (L * L.t()) * sigma2()(output);
  const arma::mat meat =
      ls_detail::sandwich_meat(F, Fh, residuals().col(output), w_,
                               weight_type_ == WeightType::Frequency, n_effective(),
                               df_residual(), cov);
  arma::mat C = L * meat * L.t();
  C = 0.5 * (C + C.t());
  // Two-way clustered: Cameron, Gelbach and Miller (2011, sec. 2.3) when C is indefinite.
  if (ls_detail::is_two_way(cov)) ls_detail::clip_negative_eigenvalues(C);
  return C;
}

arma::mat SpectralLS::std_errors(const CovOptions& cov, Inference* fix) const {
  require_fitted("std_errors");
  check_cov(cov, 0);
  const arma::uword k = y_.n_cols;
  arma::mat F, Fh, L;
  inference_basis(F, Fh, L);
  arma::mat se(L.n_rows, k);
  if (cov.type == CovType::Classical) {
    const arma::vec root = arma::sqrt(arma::sum(arma::square(L), 1));
    const arma::rowvec s2 = sigma2();
    for (arma::uword c = 0; c < k; ++c) se.col(c) = root * std::sqrt(s2(c));
    return se;
  }
  const arma::mat E = residuals();
  const bool freq = weight_type_ == WeightType::Frequency;
  const double N = n_effective(), df = df_residual();
  for (arma::uword c = 0; c < k; ++c) {
    const arma::mat meat = ls_detail::sandwich_meat(F, Fh, E.col(c), w_, freq, N, df, cov);
    if (ls_detail::is_two_way(cov)) {
      // The covariance itself, eigenvalue-fixed when indefinite (as covariance()).
      arma::mat C = L * meat * L.t();
      C = 0.5 * (C + C.t());
      double ratio = 0.0;
      if (ls_detail::clip_negative_eigenvalues(C, &ratio)) {
        se.col(c) = arma::sqrt(C.diag());
        if (fix) {
          fix->psd_fixed = true;
          fix->psd_min_eigenvalue = std::min(fix->psd_min_eigenvalue, ratio);
        }
        continue;
      }
    }
    se.col(c) = arma::sqrt(arma::sum((L * meat) % L, 1));
  }
  return se;
}

Inference SpectralLS::inference(const CovOptions& cov) const {
  require_fitted("inference");
  check_cov(cov, 0);
  Inference out;
  const arma::uword n = n_obs();
  const bool weighted = !w_.is_empty();
  out.cov_type = cov.type;
  out.maxlags = cov.type == CovType::HAC
                    ? hac_lags(cov.maxlags, weighted ? static_cast<arma::uword>(
                                                           arma::accu(w_ > 0.0))
                                                     : n)
                    : 0;
  out.df_residual = df_residual();
  out.df_inference = out.df_residual;
  out.estimate = coefficients();
  out.std_error = std_errors(cov, &out);
  if (is_cluster_cov(cov.type)) {
    arma::mat F, Fh, L;
    inference_basis(F, Fh, L);
    CovOptions count = cov;
    count.type = CovType::CR0;  // the cheapest cluster meat; only the counts are kept
    ls_detail::sandwich_meat(F, Fh, residuals().col(0), w_, false, 1.0, 1.0, count,
                             &out.n_clusters);
    arma::uword gmin = out.n_clusters.empty() ? 0 : out.n_clusters[0];
    for (arma::uword g : out.n_clusters) gmin = std::min(gmin, g);
    out.df_inference = static_cast<double>(gmin) - 1.0;
  }
  const arma::mat e = residuals();
  out.sigma = arma::sqrt(sigma2());
  ls_detail::finish_inference(out, y_, e, w_, intercept_, n_effective());
  return out;
}

}  // namespace attnreg
