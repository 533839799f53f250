// attnreg R face: instrumental-variables regression (attnreg::IVRegression). The fit is
// deterministic, so the R object stores its data and every call refits (saveRDS works).
// [[Rcpp::depends(RcppArmadillo)]]
#include <RcppArmadillo.h>

#include "attnreg/least_squares/iv.hpp"

attnreg::CovOptions r_cov_options(const std::string& cov_type, int maxlags, bool hac_adjust,
                                  Rcpp::Nullable<Rcpp::IntegerMatrix> clusters);  // r_ols.cpp

namespace {

arma::umat iv_r_codes(const Rcpp::IntegerMatrix& c) {
  arma::umat out(c.nrow(), c.ncol());
  for (R_xlen_t i = 0; i < c.size(); ++i) {
    if (c[i] < 0 || c[i] == NA_INTEGER) Rcpp::stop("absorb: level codes must be >= 0");
    out(i) = static_cast<arma::uword>(c[i]);
  }
  return out;
}

attnreg::IVRegression iv_r_fit(const arma::mat& X1, const arma::mat& X2, const arma::mat& Z2,
                               const arma::vec& y, const Rcpp::IntegerMatrix& codes,
                               const arma::vec& weights, const Rcpp::List& opt,
                               const std::vector<std::string>& names) {
  attnreg::IVOptions o;
  const std::string est = Rcpp::as<std::string>(opt["estimator"]);
  if (est == "liml") {
    o.estimator = attnreg::IVEstimator::LIML;
  } else if (est != "2sls") {
    Rcpp::stop("estimator: must be \"2sls\" or \"liml\"");
  }
  o.fuller = Rcpp::as<double>(opt["fuller"]);
  o.fit_intercept = Rcpp::as<bool>(opt["intercept"]);
  o.rank_tol = Rcpp::as<double>(opt["rank_tol"]);
  o.absorb.tol = Rcpp::as<double>(opt["tol"]);
  o.absorb.max_iter = Rcpp::as<int>(opt["max_iter"]);
  o.absorb.rank_tol = o.rank_tol;
  attnreg::IVRegression m(o);
  m.fit(X1, X2, Z2, y, iv_r_codes(codes), weights, names);
  return m;
}

Rcpp::List iv_r_test(const attnreg::IVTest& t) {
  return Rcpp::List::create(Rcpp::Named("statistic") = t.statistic, Rcpp::Named("df1") = t.df1,
                            Rcpp::Named("df2") = t.df2, Rcpp::Named("p_value") = t.p_value,
                            Rcpp::Named("name") = t.name);
}

}  // namespace

// Fit, and the results under one covariance type.
// [[Rcpp::export(name = ".iv_fit_cpp")]]
Rcpp::List iv_fit_cpp(const arma::mat& X1, const arma::mat& X2, const arma::mat& Z2,
                      const arma::vec& y, const Rcpp::IntegerMatrix& codes,
                      const arma::vec& weights, const Rcpp::List& opt,
                      const std::vector<std::string>& names, std::string cov_type,
                      Rcpp::Nullable<Rcpp::IntegerMatrix> clusters = R_NilValue) {
  const attnreg::IVRegression m = iv_r_fit(X1, X2, Z2, y, codes, weights, opt, names);
  const attnreg::CovOptions c = r_cov_options(cov_type, -1, false, clusters);
  const attnreg::Inference inf = m.inference(c);
  const attnreg::IVFirstStage fs = m.first_stage(c);
  Rcpp::List fe;
  for (const arma::vec& a : m.fixed_effects()) fe.push_back(a);
  Rcpp::List out = Rcpp::List::create(
      Rcpp::Named("coefficients") = m.coefficients(), Rcpp::Named("std_error") = inf.std_error,
      Rcpp::Named("t_value") = inf.t_value, Rcpp::Named("p_value") = inf.p_value,
      Rcpp::Named("vcov") = m.covariance(c), Rcpp::Named("df_residual") = inf.df_residual,
      Rcpp::Named("df_inference") = inf.df_inference,
      Rcpp::Named("n_clusters") = Rcpp::NumericVector(inf.n_clusters.begin(), inf.n_clusters.end()),
      Rcpp::Named("cov_type") = attnreg::cov_type_name(inf.cov_type),
      Rcpp::Named("r_squared") = m.r_squared(),
      Rcpp::Named("adj_r_squared") = inf.adj_r_squared(0),
      Rcpp::Named("r_squared_within") = m.r_squared_within(),
      Rcpp::Named("sigma") = std::sqrt(m.sigma2()));
  out["n_obs"] = static_cast<double>(m.n_obs());
  out["df_absorbed"] = m.df_absorbed();
  out["kappa"] = m.kappa();
  out["k"] = m.k();
  out["intercept"] = m.has_intercept();
  out["fitted"] = m.fitted();
  out["fixed_effects"] = fe;
  out["first_stage"] = Rcpp::List::create(
      Rcpp::Named("partial_r2") = fs.partial_r2, Rcpp::Named("partial_f") = fs.partial_f,
      Rcpp::Named("p_value") = fs.partial_f_pvalue, Rcpp::Named("df1") = fs.df1,
      Rcpp::Named("df2") = fs.df2, Rcpp::Named("cragg_donald_f") = fs.cragg_donald_f,
      Rcpp::Named("kleibergen_paap_f") = fs.kleibergen_paap_f,
      Rcpp::Named("kleibergen_paap_rk") = fs.kleibergen_paap_rk);
  out["overid"] = iv_r_test(m.overidentification(c));
  out["wu_hausman"] = iv_r_test(m.wu_hausman());
  return out;
}

// Predictions (what = "predict") or attention weights (what = "attention") at new rows.
// [[Rcpp::export(name = ".iv_new_cpp")]]
arma::mat iv_new_cpp(const arma::mat& X1, const arma::mat& X2, const arma::mat& Z2,
                     const arma::vec& y, const Rcpp::IntegerMatrix& codes,
                     const arma::vec& weights, const Rcpp::List& opt,
                     const std::vector<std::string>& names, const arma::mat& X1_new,
                     const arma::mat& X2_new, const Rcpp::IntegerMatrix& codes_new,
                     std::string what) {
  const attnreg::IVRegression m = iv_r_fit(X1, X2, Z2, y, codes, weights, opt, names);
  const arma::umat cn = iv_r_codes(codes_new);
  if (what == "predict") return arma::mat(m.predict(X1_new, X2_new, cn));
  if (what == "attention") return m.attention_weights(X1_new, X2_new, cn);
  Rcpp::stop("internal: unknown request '" + what + "'");
}
