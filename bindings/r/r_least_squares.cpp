// attnreg R face: ridge, PCR, the attention regression (Goulet Coulombe 2025, arXiv:2504.09663,
// eq. 28) and the recursive-versus-masked pseudo-out-of-sample comparison (eq. 35). Converts,
// calls the core, converts back.
// [[Rcpp::depends(RcppArmadillo)]]
#include <RcppArmadillo.h>

#include "attnreg/least_squares/least_squares_masked.hpp"
#include "attnreg/least_squares/least_squares_softmax.hpp"
#include "attnreg/least_squares/least_squares_spectral.hpp"

namespace {

Rcpp::NumericVector as_r(const arma::rowvec& v) { return Rcpp::NumericVector(v.begin(), v.end()); }
Rcpp::NumericVector as_r(const arma::vec& v) { return Rcpp::NumericVector(v.begin(), v.end()); }

Rcpp::List spectral_to_list(const attnreg::SpectralState& s) {
  return Rcpp::List::create(Rcpp::Named("fit_intercept") = s.fit_intercept,
                            Rcpp::Named("x_mean") = as_r(s.x_mean),
                            Rcpp::Named("y_mean") = as_r(s.y_mean), Rcpp::Named("U") = s.U,
                            Rcpp::Named("s") = as_r(s.s), Rcpp::Named("V") = s.V,
                            Rcpp::Named("weights") = as_r(s.weights), Rcpp::Named("Z") = s.Z);
}

arma::vec weights_arg(const Rcpp::Nullable<Rcpp::NumericVector>& weights) {
  if (weights.isNull()) return arma::vec();
  return Rcpp::as<arma::vec>(Rcpp::NumericVector(weights));
}

attnreg::SpectralState spectral_from_list(const Rcpp::List& L, const arma::mat& Y) {
  attnreg::SpectralState s;
  s.fit_intercept = Rcpp::as<bool>(L["fit_intercept"]);
  s.x_mean = Rcpp::as<arma::rowvec>(L["x_mean"]);
  s.y_mean = Rcpp::as<arma::rowvec>(L["y_mean"]);
  s.U = Rcpp::as<arma::mat>(L["U"]);
  s.s = Rcpp::as<arma::vec>(L["s"]);
  s.V = Rcpp::as<arma::mat>(L["V"]);
  if (s.V.n_rows != s.x_mean.n_elem) s.V.reshape(s.x_mean.n_elem, s.s.n_elem);
  if (s.U.n_rows != Y.n_rows) s.U.reshape(Y.n_rows, s.s.n_elem);
  s.y = Y;
  if (L.containsElementNamed("weights")) {
    s.weights = Rcpp::as<arma::vec>(L["weights"]);
    if (!s.weights.is_empty()) {
      s.Z = Rcpp::as<arma::mat>(L["Z"]);
      if (s.Z.n_rows != Y.n_rows) s.Z.reshape(Y.n_rows, s.s.n_elem);
    }
  }
  return s;
}

template <typename M>
arma::mat spectral_view(const M& m, const std::string& what, const arma::mat& X, bool strict) {
  if (what == "predict") return m.predict(X);
  if (what == "attention") return m.attention_weights(X);
  if (what == "factors") return m.factors(X);
  if (what == "training_factors") return m.training_factors();
  if (what == "embedding") return m.embedding();
  if (what == "hat") return m.hat_diagonal();
  if (what == "masked") return m.masked_predictions(strict);
  if (what == "masked_weights") return m.masked_weights(strict);
  Rcpp::stop("internal: unknown view '" + what + "'");
}

attnreg::AttentionRegressionOptions ar_options(const Rcpp::List& o) {
  attnreg::AttentionRegressionOptions r;
  r.rank = Rcpp::as<int>(o["rank"]);
  r.fit_intercept = Rcpp::as<bool>(o["fit_intercept"]);
  r.standardize = Rcpp::as<bool>(o["standardize"]);
  r.n_starts = Rcpp::as<int>(o["n_starts"]);
  r.seed = static_cast<std::uint64_t>(Rcpp::as<double>(o["seed"]));
  r.max_iter = Rcpp::as<int>(o["max_iter"]);
  r.tol = Rcpp::as<double>(o["tol"]);
  r.init_scale = Rcpp::as<double>(o["init_scale"]);
  r.n_threads = Rcpp::as<int>(o["n_threads"]);
  return r;
}

Rcpp::List inference_to_list(const attnreg::SpectralLS& m, const attnreg::CovOptions& c) {
  const attnreg::Inference inf = m.inference(c);
  return Rcpp::List::create(
      Rcpp::Named("estimate") = inf.estimate, Rcpp::Named("std_error") = inf.std_error,
      Rcpp::Named("t_value") = inf.t_value, Rcpp::Named("p_value") = inf.p_value,
      Rcpp::Named("r_squared") = as_r(inf.r_squared),
      Rcpp::Named("adj_r_squared") = as_r(inf.adj_r_squared),
      Rcpp::Named("sigma") = as_r(inf.sigma), Rcpp::Named("df_residual") = inf.df_residual,
      Rcpp::Named("df_inference") = inf.df_inference,
      Rcpp::Named("n_clusters") =
          Rcpp::NumericVector(inf.n_clusters.begin(), inf.n_clusters.end()),
      Rcpp::Named("cov_type") = attnreg::cov_type_name(inf.cov_type),
      Rcpp::Named("psd_fixed") = inf.psd_fixed,
      Rcpp::Named("psd_min_eigenvalue") = inf.psd_min_eigenvalue,
      Rcpp::Named("maxlags") = inf.maxlags, Rcpp::Named("vcov") = m.covariance(c, 0),
      Rcpp::Named("effective_df") = m.effective_df());
}

}  // namespace

attnreg::CovOptions r_cov_options(const std::string& cov_type, int maxlags, bool hac_adjust,
                                  Rcpp::Nullable<Rcpp::IntegerMatrix> clusters);

// Coefficient table and covariance (first response) of a ridge (kind "ridge", param = lambda)
// or PCR (kind "pcr", param = rank) fit under a covariance type; clusters as .ols_inference_cpp.
// [[Rcpp::export(name = ".spectral_inference_cpp")]]
Rcpp::List spectral_inference_cpp(std::string kind, const Rcpp::List& state, const arma::mat& Y,
                                  double param, std::string cov_type, int maxlags,
                                  bool hac_adjust,
                                  Rcpp::Nullable<Rcpp::IntegerMatrix> clusters = R_NilValue,
                                  std::string weight_type = "analytic") {
  const attnreg::CovOptions c = r_cov_options(cov_type, maxlags, hac_adjust, clusters);
  if (kind == "ridge") {
    attnreg::RidgeOptions o;
    o.lambda = param;
    o.weight_type = attnreg::parse_weight_type(weight_type);
    return inference_to_list(attnreg::Ridge::from_state(o, spectral_from_list(state, Y)), c);
  }
  attnreg::PCROptions o;
  o.rank = static_cast<int>(param);
  o.weight_type = attnreg::parse_weight_type(weight_type);
  return inference_to_list(attnreg::PCR::from_state(o, spectral_from_list(state, Y)), c);
}

// [[Rcpp::export(name = ".ridge_fit_cpp")]]
Rcpp::List ridge_fit_cpp(const arma::mat& X, const arma::mat& Y, const arma::vec& lambdas,
                         std::string criterion, bool fit_intercept, int n_threads,
                         Rcpp::Nullable<Rcpp::NumericVector> weights,
                         std::string weight_type = "analytic") {
  attnreg::RidgeOptions o;
  o.fit_intercept = fit_intercept;
  o.lambda = lambdas.n_elem ? lambdas(0) : 1.0;
  o.n_threads = n_threads;
  o.weight_type = attnreg::parse_weight_type(weight_type);
  attnreg::Ridge m(o);
  Rcpp::List sel = R_NilValue;
  if (lambdas.n_elem > 1) {
    const attnreg::RidgeSelection s =
        m.fit_select(X, Y, lambdas, attnreg::parse_ridge_criterion(criterion), weights_arg(weights));
    sel = Rcpp::List::create(Rcpp::Named("lambda") = as_r(s.lambdas),
                             Rcpp::Named("loo_mse") = as_r(s.loo_mse), Rcpp::Named("gcv") = as_r(s.gcv),
                             Rcpp::Named("aicc") = as_r(s.aicc),
                             Rcpp::Named("effective_df") = as_r(s.effective_df),
                             Rcpp::Named("best") = static_cast<double>(s.best) + 1.0,
                             Rcpp::Named("criterion") = criterion);
  } else {
    m.fit(X, Y, weights_arg(weights));
  }
  return Rcpp::List::create(
      Rcpp::Named("lambda") = m.lambda(), Rcpp::Named("coefficients") = m.coefficients(),
      Rcpp::Named("fitted") = m.fitted(), Rcpp::Named("residuals") = m.residuals(),
      Rcpp::Named("effective_df") = m.effective_df(), Rcpp::Named("selection") = sel,
      Rcpp::Named("state") = spectral_to_list(m.state()));
}

// [[Rcpp::export(name = ".ridge_view_cpp")]]
arma::mat ridge_view_cpp(const Rcpp::List& state, const arma::mat& Y, double lambda,
                         std::string what, const arma::mat& X, bool strict = false) {
  attnreg::RidgeOptions o;
  o.lambda = lambda;
  const attnreg::Ridge m = attnreg::Ridge::from_state(o, spectral_from_list(state, Y));
  if (what == "loo") return m.loo_predictions();
  return spectral_view(m, what, X, strict);
}

// [[Rcpp::export(name = ".ridge_path_cpp")]]
arma::cube ridge_path_cpp(const Rcpp::List& state, const arma::mat& Y, const arma::vec& lambdas) {
  attnreg::RidgeOptions o;
  const attnreg::Ridge m = attnreg::Ridge::from_state(o, spectral_from_list(state, Y));
  return m.path(lambdas);
}

// [[Rcpp::export(name = ".pcr_fit_cpp")]]
Rcpp::List pcr_fit_cpp(const arma::mat& X, const arma::mat& Y, int rank, bool fit_intercept,
                       int n_threads, Rcpp::Nullable<Rcpp::NumericVector> weights,
                       std::string weight_type = "analytic") {
  attnreg::PCR m(attnreg::PCROptions{rank, fit_intercept, n_threads,
                                     attnreg::parse_weight_type(weight_type)});
  m.fit(X, Y, weights_arg(weights));
  return Rcpp::List::create(
      Rcpp::Named("rank") = m.rank(), Rcpp::Named("coefficients") = m.coefficients(),
      Rcpp::Named("fitted") = m.fitted(), Rcpp::Named("residuals") = m.residuals(),
      Rcpp::Named("explained_variance_ratio") = as_r(m.explained_variance_ratio()),
      Rcpp::Named("state") = spectral_to_list(m.state()));
}

// [[Rcpp::export(name = ".pcr_view_cpp")]]
arma::mat pcr_view_cpp(const Rcpp::List& state, const arma::mat& Y, int rank, std::string what,
                       const arma::mat& X, bool strict = false) {
  attnreg::PCROptions o;
  o.rank = rank;
  const attnreg::PCR m = attnreg::PCR::from_state(o, spectral_from_list(state, Y));
  return spectral_view(m, what, X, strict);
}

// [[Rcpp::export(name = ".attnreg_fit_cpp")]]
Rcpp::List attnreg_fit_cpp(const arma::mat& X, const arma::mat& Y, const Rcpp::List& options) {
  attnreg::AttentionRegression m(ar_options(options));
  m.fit(X, Y);
  const attnreg::AttentionRegression::State s = m.state();
  return Rcpp::List::create(
      Rcpp::Named("objective") = m.objective(),
      Rcpp::Named("start_objectives") = as_r(m.start_objectives()),
      Rcpp::Named("n_evals") = m.n_evals(), Rcpp::Named("iterations") = m.iterations(),
      Rcpp::Named("converged") = m.converged(), Rcpp::Named("message") = m.message(),
      Rcpp::Named("fitted") = m.predict(X), Rcpp::Named("loo") = m.loo_predictions(),
      Rcpp::Named("state") = Rcpp::List::create(
          Rcpp::Named("mean") = as_r(s.mean), Rcpp::Named("sd") = as_r(s.sd),
          Rcpp::Named("W") = s.W, Rcpp::Named("Dz") = s.Dz, Rcpp::Named("objective") = s.objective));
}

// [[Rcpp::export(name = ".attnreg_view_cpp")]]
arma::mat attnreg_view_cpp(const Rcpp::List& state, const arma::mat& Y, const Rcpp::List& options,
                           std::string what, const arma::mat& X) {
  attnreg::AttentionRegression::State s;
  s.mean = Rcpp::as<arma::rowvec>(state["mean"]);
  s.sd = Rcpp::as<arma::rowvec>(state["sd"]);
  s.W = Rcpp::as<arma::mat>(state["W"]);
  s.Dz = Rcpp::as<arma::mat>(state["Dz"]);
  s.Y = Y;
  s.objective = Rcpp::as<double>(state["objective"]);
  const attnreg::AttentionRegression m = attnreg::AttentionRegression::from_state(ar_options(options), s);
  if (what == "predict") return m.predict(X);
  if (what == "attention") return m.attention_weights(X);
  if (what == "embedding") return m.embedding();
  if (what == "encoder") return m.encoder();
  if (what == "loo") return m.loo_predictions();
  Rcpp::stop("internal: unknown view '" + what + "'");
}

// [[Rcpp::export(name = ".pseudo_oos_cpp")]]
Rcpp::List pseudo_oos_cpp(const arma::mat& X, const arma::mat& Y, bool fit_intercept, double ridge,
                          int start, bool keep_weights) {
  attnreg::PseudoOOSOptions o;
  o.fit_intercept = fit_intercept;
  o.ridge = ridge;
  o.start = start > 0 ? static_cast<arma::uword>(start) : 0;
  o.keep_weights = keep_weights;
  const attnreg::PseudoOOSResult r = attnreg::pseudo_out_of_sample(X, Y, o);
  Rcpp::NumericVector rows(r.rows.n_elem);
  for (arma::uword i = 0; i < r.rows.n_elem; ++i) rows[i] = static_cast<double>(r.rows(i)) + 1.0;
  Rcpp::List out = Rcpp::List::create(
      Rcpp::Named("rows") = rows, Rcpp::Named("y") = r.y, Rcpp::Named("recursive") = r.recursive,
      Rcpp::Named("masked") = r.masked, Rcpp::Named("in_sample") = r.in_sample,
      Rcpp::Named("mse_recursive") = as_r(r.mse_recursive),
      Rcpp::Named("mse_masked") = as_r(r.mse_masked),
      Rcpp::Named("mse_in_sample") = as_r(r.mse_in_sample),
      Rcpp::Named("weight_gap") = as_r(r.weight_gap));
  if (keep_weights) {
    out["weights_recursive"] = r.weights_recursive;
    out["weights_masked"] = r.weights_masked;
  }
  return out;
}
