// attnreg R face: least squares (attnreg::OLS). Converts, calls the core, converts back.
// [[Rcpp::depends(RcppArmadillo)]]
#include <RcppArmadillo.h>

#include "attnreg/least_squares/least_squares.hpp"

namespace {

Rcpp::List state_to_list(const attnreg::OLSState& s) {
  return Rcpp::List::create(
      Rcpp::Named("fit_intercept") = s.fit_intercept, Rcpp::Named("rank_tol") = s.rank_tol,
      Rcpp::Named("qr") = s.qr, Rcpp::Named("tau") = Rcpp::NumericVector(s.tau.begin(), s.tau.end()),
      Rcpp::Named("pivot") = Rcpp::NumericVector(s.pivot.begin(), s.pivot.end()),
      Rcpp::Named("scale") = Rcpp::NumericVector(s.scale.begin(), s.scale.end()),
      Rcpp::Named("coef") = s.coef, Rcpp::Named("rank") = s.rank,
      Rcpp::Named("cov_unscaled") = s.cov_unscaled, Rcpp::Named("extended") = s.extended,
      Rcpp::Named("weights") = Rcpp::NumericVector(s.weights.begin(), s.weights.end()),
      Rcpp::Named("frequency_weights") = s.frequency_weights, Rcpp::Named("fitted") = s.fitted);
}

attnreg::OLS from_list(const Rcpp::List& L, const arma::mat& Y) {
  attnreg::OLSState s;
  s.fit_intercept = Rcpp::as<bool>(L["fit_intercept"]);
  s.rank_tol = Rcpp::as<double>(L["rank_tol"]);
  s.qr = Rcpp::as<arma::mat>(L["qr"]);
  s.tau = Rcpp::as<arma::vec>(L["tau"]);
  s.pivot = Rcpp::as<arma::vec>(L["pivot"]);
  s.scale = Rcpp::as<arma::vec>(L["scale"]);
  s.coef = Rcpp::as<arma::mat>(L["coef"]);
  s.rank = Rcpp::as<double>(L["rank"]);
  if (L.containsElementNamed("cov_unscaled")) s.cov_unscaled = Rcpp::as<arma::mat>(L["cov_unscaled"]);
  if (L.containsElementNamed("extended")) s.extended = Rcpp::as<bool>(L["extended"]);
  if (L.containsElementNamed("weights")) {
    s.weights = Rcpp::as<arma::vec>(L["weights"]);
    s.frequency_weights = Rcpp::as<bool>(L["frequency_weights"]);
    if (!s.weights.is_empty()) {
      s.fitted = Rcpp::as<arma::mat>(L["fitted"]);
      if (s.fitted.n_rows != Y.n_rows) s.fitted.reshape(Y.n_rows, Y.n_cols);
    }
  }
  return attnreg::OLS::from_state(s, Y);
}

attnreg::Precision parse_precision(const std::string& p) {
  if (p == "auto") return attnreg::Precision::Auto;
  if (p == "double") return attnreg::Precision::Double;
  if (p == "extended") return attnreg::Precision::Extended;
  Rcpp::stop("precision: must be \"auto\", \"double\" or \"extended\"");
}

}  // namespace

// [[Rcpp::export(name = ".ols_fit_cpp")]]
Rcpp::List ols_fit_cpp(const arma::mat& X, const arma::mat& Y, bool fit_intercept,
                       double rank_tol, int n_threads, std::string precision = "auto",
                       Rcpp::Nullable<Rcpp::NumericVector> weights = R_NilValue,
                       std::string weight_type = "analytic") {
  attnreg::OLSOptions o;
  o.fit_intercept = fit_intercept;
  o.rank_tol = rank_tol;
  o.n_threads = n_threads;
  o.precision = parse_precision(precision);
  o.weight_type = attnreg::parse_weight_type(weight_type);
  attnreg::OLS m(o);
  arma::vec w;
  if (weights.isNotNull()) w = Rcpp::as<arma::vec>(Rcpp::NumericVector(weights));
  m.fit(X, Y, w);
  const std::vector<bool> al = m.aliased();
  const arma::rowvec s2 = m.sigma2();
  return Rcpp::List::create(
      Rcpp::Named("coefficients") = m.coefficients(), Rcpp::Named("std_errors") = m.std_errors(),
      Rcpp::Named("sigma2") = Rcpp::NumericVector(s2.begin(), s2.end()),
      Rcpp::Named("fitted") = m.fitted(), Rcpp::Named("residuals") = m.residuals(),
      Rcpp::Named("rank") = static_cast<double>(m.rank()),
      Rcpp::Named("df_residual") = m.df_residual(),
      Rcpp::Named("aliased") = Rcpp::LogicalVector(al.begin(), al.end()),
      Rcpp::Named("unscaled_cov") = m.unscaled_covariance(),
      Rcpp::Named("extended") = m.extended_precision(),
      Rcpp::Named("state") = state_to_list(m.state()));
}

// [[Rcpp::export(name = ".ols_predict_cpp")]]
arma::mat ols_predict_cpp(const Rcpp::List& state, const arma::mat& Y, const arma::mat& X) {
  return from_list(state, Y).predict(X);
}

// [[Rcpp::export(name = ".ols_attention_cpp")]]
arma::mat ols_attention_cpp(const Rcpp::List& state, const arma::mat& Y, const arma::mat& X) {
  return from_list(state, Y).attention_weights(X);
}

// The covariance options an R call names (r_fe.cpp uses it too); clusters: NULL or an integer
// matrix of cluster codes (>= 1, one column per dimension).
attnreg::CovOptions r_cov_options(const std::string& cov_type, int maxlags, bool hac_adjust,
                                  Rcpp::Nullable<Rcpp::IntegerMatrix> clusters) {
  attnreg::CovOptions c;
  c.type = attnreg::parse_cov_type(cov_type);
  c.maxlags = maxlags;
  c.hac_adjust = hac_adjust;
  if (clusters.isNotNull()) {
    const Rcpp::IntegerMatrix cl(clusters);
    c.clusters.set_size(cl.nrow(), cl.ncol());
    for (R_xlen_t i = 0; i < cl.size(); ++i) {
      if (cl[i] == NA_INTEGER || cl[i] < 1) Rcpp::stop("vcov: cluster ids must not be missing");
      c.clusters(static_cast<arma::uword>(i)) = static_cast<arma::uword>(cl[i]);
    }
  }
  return c;
}

// Coefficient table and covariance of output `output` (1-based) under a covariance type;
// clusters: NULL or an integer matrix of cluster codes (>= 1, one column per dimension).
// [[Rcpp::export(name = ".ols_inference_cpp")]]
Rcpp::List ols_inference_cpp(const Rcpp::List& state, const arma::mat& Y, std::string cov_type,
                             int maxlags, bool hac_adjust, int output,
                             Rcpp::Nullable<Rcpp::IntegerMatrix> clusters = R_NilValue) {
  const attnreg::OLS m = from_list(state, Y);
  const attnreg::CovOptions c = r_cov_options(cov_type, maxlags, hac_adjust, clusters);
  const attnreg::Inference inf = m.inference(c);
  const auto j = static_cast<arma::uword>(output - 1);
  return Rcpp::List::create(
      Rcpp::Named("estimate") = inf.estimate, Rcpp::Named("std_error") = inf.std_error,
      Rcpp::Named("t_value") = inf.t_value, Rcpp::Named("p_value") = inf.p_value,
      Rcpp::Named("r_squared") = Rcpp::NumericVector(inf.r_squared.begin(), inf.r_squared.end()),
      Rcpp::Named("adj_r_squared") =
          Rcpp::NumericVector(inf.adj_r_squared.begin(), inf.adj_r_squared.end()),
      Rcpp::Named("sigma") = Rcpp::NumericVector(inf.sigma.begin(), inf.sigma.end()),
      Rcpp::Named("df_residual") = inf.df_residual,
      Rcpp::Named("df_inference") = inf.df_inference,
      Rcpp::Named("n_clusters") =
          Rcpp::NumericVector(inf.n_clusters.begin(), inf.n_clusters.end()),
      Rcpp::Named("cov_type") = attnreg::cov_type_name(inf.cov_type),
      Rcpp::Named("psd_fixed") = inf.psd_fixed,
      Rcpp::Named("psd_min_eigenvalue") = inf.psd_min_eigenvalue,
      Rcpp::Named("n_leverage_one") = static_cast<double>(inf.n_leverage_one),
      Rcpp::Named("maxlags") = inf.maxlags, Rcpp::Named("vcov") = m.covariance(c, j));
}

// The attention view: what = "factors" (X: new rows, or training factors when X has no rows and
// train = TRUE), "encoder", "embedding", "eigenvalues", "hat", "loo", "masked", "masked_weights".
// [[Rcpp::export(name = ".ols_view_cpp")]]
arma::mat ols_view_cpp(const Rcpp::List& state, const arma::mat& Y, std::string what,
                       const arma::mat& X, bool strict = false) {
  const attnreg::OLS m = from_list(state, Y);
  if (what == "factors") return m.factors(X);
  if (what == "training_factors") return m.training_factors();
  if (what == "encoder") return m.encoder();
  if (what == "embedding") return m.embedding();
  if (what == "eigenvalues") return m.eigenvalues();
  if (what == "hat") return m.hat_diagonal();
  if (what == "loo") return m.loo_predictions();
  if (what == "masked") return m.masked_predictions(strict);
  if (what == "masked_weights") return m.masked_weights(strict);
  Rcpp::stop("internal: unknown view '" + what + "'");
}
