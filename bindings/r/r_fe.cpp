// attnreg R face: least squares with absorbed fixed effects (attnreg::AbsorbedOLS).
// The fit is deterministic, so the R object stores its data and every call refits (a fitted
// core object would not survive saveRDS).
// [[Rcpp::depends(RcppArmadillo)]]
#include <RcppArmadillo.h>

#include "attnreg/least_squares/least_squares_fe.hpp"

attnreg::CovOptions r_cov_options(const std::string& cov_type, int maxlags, bool hac_adjust,
                                  Rcpp::Nullable<Rcpp::IntegerMatrix> clusters);  // r_ols.cpp

namespace {

arma::umat as_codes(const Rcpp::IntegerMatrix& c) {
  arma::umat out(c.nrow(), c.ncol());
  for (R_xlen_t i = 0; i < c.size(); ++i) {
    if (c[i] < 0 || c[i] == NA_INTEGER) Rcpp::stop("absorb: level codes must be >= 0");
    out(i) = static_cast<arma::uword>(c[i]);
  }
  return out;
}

attnreg::AbsorbedOLS fit_model(const arma::mat& X, const arma::mat& Y,
                               const Rcpp::IntegerMatrix& codes, const arma::vec& weights,
                               const Rcpp::List& opt) {
  attnreg::AbsorbOptions o;
  o.tol = Rcpp::as<double>(opt["tol"]);
  o.max_iter = Rcpp::as<int>(opt["max_iter"]);
  o.rank_tol = Rcpp::as<double>(opt["rank_tol"]);
  o.n_threads = Rcpp::as<int>(opt["n_threads"]);
  if (opt.containsElementNamed("frequency")) o.frequency_weights = Rcpp::as<bool>(opt["frequency"]);
  if (opt.containsElementNamed("drop_singletons")) {
    o.drop_singletons = Rcpp::as<bool>(opt["drop_singletons"]);
  }
  if (opt.containsElementNamed("k_adj")) o.ssc.k_adj = Rcpp::as<bool>(opt["k_adj"]);
  if (opt.containsElementNamed("k_fixef")) {
    o.ssc.k_fixef = attnreg::parse_fixef_k(Rcpp::as<std::string>(opt["k_fixef"]));
  }
  if (opt.containsElementNamed("g_adj")) o.ssc.g_adj = Rcpp::as<bool>(opt["g_adj"]);
  const std::string p = Rcpp::as<std::string>(opt["precision"]);
  o.precision = p == "double"     ? attnreg::Precision::Double
                : p == "extended" ? attnreg::Precision::Extended
                                  : attnreg::Precision::Auto;
  attnreg::AbsorbedOLS m(o);
  m.fit(X, Y, as_codes(codes), weights);
  return m;
}


}  // namespace

// Fit and report everything the R object keeps.
// [[Rcpp::export(name = ".fe_fit_cpp")]]
Rcpp::List fe_fit_cpp(const arma::mat& X, const arma::mat& Y, const Rcpp::IntegerMatrix& codes,
                      const arma::vec& weights, const Rcpp::List& opt) {
  const attnreg::AbsorbedOLS m = fit_model(X, Y, codes, weights, opt);
  const std::vector<bool> al = m.aliased(), ab = m.absorbed();
  const arma::rowvec s2 = m.sigma2(), r2w = m.r_squared_within(), r2 = m.r_squared(),
                     ar2 = m.adj_r_squared();
  Rcpp::List fe;
  for (const arma::mat& a : m.fixed_effects()) fe.push_back(a);
  const attnreg::AbsorbedDF& d = m.df_info();
  return Rcpp::List::create(
      Rcpp::Named("coefficients") = m.coefficients(), Rcpp::Named("std_errors") = m.std_errors(),
      Rcpp::Named("aliased") = Rcpp::LogicalVector(al.begin(), al.end()),
      Rcpp::Named("absorbed") = Rcpp::LogicalVector(ab.begin(), ab.end()),
      Rcpp::Named("rank") = static_cast<double>(m.rank()),
      Rcpp::Named("df_residual") = m.df_residual(),
      Rcpp::Named("df_absorbed") = static_cast<double>(d.df_absorbed()),
      Rcpp::Named("redundant") = static_cast<double>(d.redundant),
      Rcpp::Named("components") = static_cast<double>(d.components),
      Rcpp::Named("df_exact") = d.exact, Rcpp::Named("iterations") = m.iterations(),
      Rcpp::Named("converged") = m.converged(), Rcpp::Named("fitted") = m.fitted(),
      Rcpp::Named("residuals") = m.residuals(),
      Rcpp::Named("sigma2") = Rcpp::NumericVector(s2.begin(), s2.end()),
      Rcpp::Named("r_squared_within") = Rcpp::NumericVector(r2w.begin(), r2w.end()),
      Rcpp::Named("r_squared") = Rcpp::NumericVector(r2.begin(), r2.end()),
      Rcpp::Named("adj_r_squared") = Rcpp::NumericVector(ar2.begin(), ar2.end()),
      Rcpp::Named("fixed_effects") = fe,
      Rcpp::Named("n_singletons") = static_cast<double>(m.n_singletons()));
}

// Restricted wild cluster bootstrap of R'b = r (clusters: one id per row, one-way).
// [[Rcpp::export(name = ".fe_wild_cpp")]]
Rcpp::List fe_wild_cpp(const arma::mat& X, const arma::mat& Y, const Rcpp::IntegerMatrix& codes,
                       const arma::vec& weights, const Rcpp::List& opt, const arma::vec& R,
                       double r, const Rcpp::IntegerVector& clusters, const arma::mat& V,
                       double level) {
  const attnreg::AbsorbedOLS m = fit_model(X, Y, codes, weights, opt);
  arma::uvec cl(clusters.size());
  for (R_xlen_t i = 0; i < clusters.size(); ++i) {
    if (clusters[i] < 0 || clusters[i] == NA_INTEGER) Rcpp::stop("cluster: ids must be >= 0");
    cl(i) = static_cast<arma::uword>(clusters[i]);
  }
  const attnreg::WildBootstrapResult w = m.wild_bootstrap(R, r, cl, V, level);
  return Rcpp::List::create(
      Rcpp::Named("estimate") = w.estimate, Rcpp::Named("std_error") = w.std_error,
      Rcpp::Named("t_stat") = w.t_stat, Rcpp::Named("p_value") = w.p_value,
      Rcpp::Named("ci_lower") = w.ci_lower, Rcpp::Named("ci_upper") = w.ci_upper,
      Rcpp::Named("replications") = static_cast<double>(w.replications),
      Rcpp::Named("n_clusters") = static_cast<double>(w.n_clusters),
      Rcpp::Named("t_boot") = Rcpp::NumericVector(w.t_boot.begin(), w.t_boot.end()));
}

// Coefficient table and covariance of output `output` (1-based).
// [[Rcpp::export(name = ".fe_inference_cpp")]]
Rcpp::List fe_inference_cpp(const arma::mat& X, const arma::mat& Y,
                            const Rcpp::IntegerMatrix& codes, const arma::vec& weights,
                            const Rcpp::List& opt, std::string cov_type, int maxlags,
                            bool hac_adjust, int output,
                            Rcpp::Nullable<Rcpp::IntegerMatrix> clusters = R_NilValue) {
  const attnreg::AbsorbedOLS m = fit_model(X, Y, codes, weights, opt);
  const attnreg::CovOptions c = r_cov_options(cov_type, maxlags, hac_adjust, clusters);
  const attnreg::Inference inf = m.inference(c);
  return Rcpp::List::create(
      Rcpp::Named("estimate") = inf.estimate, Rcpp::Named("std_error") = inf.std_error,
      Rcpp::Named("t_value") = inf.t_value, Rcpp::Named("p_value") = inf.p_value,
      Rcpp::Named("df_residual") = inf.df_residual,
      Rcpp::Named("df_inference") = inf.df_inference,
      Rcpp::Named("n_clusters") =
          Rcpp::NumericVector(inf.n_clusters.begin(), inf.n_clusters.end()),
      Rcpp::Named("cov_type") = attnreg::cov_type_name(inf.cov_type),
      Rcpp::Named("psd_fixed") = inf.psd_fixed,
      Rcpp::Named("psd_min_eigenvalue") = inf.psd_min_eigenvalue,
      Rcpp::Named("n_leverage_one") = static_cast<double>(inf.n_leverage_one),
      Rcpp::Named("maxlags") = inf.maxlags,
      Rcpp::Named("vcov") = m.covariance(c, static_cast<arma::uword>(output - 1)));
}

// Predictions (what = "predict") or attention weights (what = "attention") at new rows.
// [[Rcpp::export(name = ".fe_new_cpp")]]
arma::mat fe_new_cpp(const arma::mat& X, const arma::mat& Y, const Rcpp::IntegerMatrix& codes,
                     const arma::vec& weights, const Rcpp::List& opt, const arma::mat& X_new,
                     const Rcpp::IntegerMatrix& codes_new, std::string what) {
  const attnreg::AbsorbedOLS m = fit_model(X, Y, codes, weights, opt);
  if (what == "predict") return m.predict(X_new, as_codes(codes_new));
  if (what == "attention") return m.attention_weights(X_new, as_codes(codes_new));
  Rcpp::stop("internal: unknown request '" + what + "'");
}
