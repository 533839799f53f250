// attnreg R face: least squares (attnreg::OLS). Converts, calls the core, converts back.
// [[Rcpp::depends(RcppArmadillo)]]
#include <RcppArmadillo.h>

#include "attnreg/least_squares.hpp"

namespace {

Rcpp::List state_to_list(const attnreg::OLSState& s) {
  return Rcpp::List::create(
      Rcpp::Named("fit_intercept") = s.fit_intercept, Rcpp::Named("rank_tol") = s.rank_tol,
      Rcpp::Named("qr") = s.qr, Rcpp::Named("tau") = Rcpp::NumericVector(s.tau.begin(), s.tau.end()),
      Rcpp::Named("pivot") = Rcpp::NumericVector(s.pivot.begin(), s.pivot.end()),
      Rcpp::Named("scale") = Rcpp::NumericVector(s.scale.begin(), s.scale.end()),
      Rcpp::Named("coef") = s.coef, Rcpp::Named("rank") = s.rank);
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
  return attnreg::OLS::from_state(s, Y);
}

}  // namespace

// [[Rcpp::export(name = ".ols_fit_cpp")]]
Rcpp::List ols_fit_cpp(const arma::mat& X, const arma::mat& Y, bool fit_intercept,
                       double rank_tol, int n_threads) {
  attnreg::OLS m(attnreg::OLSOptions{fit_intercept, rank_tol, n_threads});
  m.fit(X, Y);
  const std::vector<bool> al = m.aliased();
  const arma::rowvec s2 = m.sigma2();
  return Rcpp::List::create(
      Rcpp::Named("coefficients") = m.coefficients(), Rcpp::Named("std_errors") = m.std_errors(),
      Rcpp::Named("sigma2") = Rcpp::NumericVector(s2.begin(), s2.end()),
      Rcpp::Named("fitted") = m.fitted(), Rcpp::Named("residuals") = m.residuals(),
      Rcpp::Named("rank") = static_cast<double>(m.rank()),
      Rcpp::Named("aliased") = Rcpp::LogicalVector(al.begin(), al.end()),
      Rcpp::Named("unscaled_cov") = m.unscaled_covariance(),
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
