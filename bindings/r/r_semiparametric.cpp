// attnreg R face: local polynomial bandwidths of any degree (local_polynomial.hpp) and the
// partially linear and smooth-coefficient models (semiparametric.hpp). Converts, calls the
// core, converts back; formulas and S3 methods live in R/kreg.R, R/kplm.R and R/kscoef.R.
// [[Rcpp::depends(RcppArmadillo)]]
#include <RcppArmadillo.h>

#include <string>

#include "attnreg/least_squares/least_squares.hpp"
#include "attnreg/solve/local_polynomial.hpp"
#include "attnreg/semiparametric/semiparametric.hpp"
#include "r_options.hpp"

namespace {

Rcpp::List select_result(const attnreg::BandwidthSelectResult& r) {
  return Rcpp::List::create(
      Rcpp::Named("bw") = Rcpp::NumericVector(r.bandwidth.begin(), r.bandwidth.end()),
      Rcpp::Named("objective") = r.objective, Rcpp::Named("n_evals") = r.n_evals,
      Rcpp::Named("converged") = r.converged, Rcpp::Named("message") = r.message,
      Rcpp::Named("at_bound") = Rcpp::IntegerVector(r.at_bound.begin(), r.at_bound.end()),
      Rcpp::Named("lower") = Rcpp::NumericVector(r.lower.begin(), r.lower.end()),
      Rcpp::Named("upper") = Rcpp::NumericVector(r.upper.begin(), r.upper.end()));
}

attnreg::PartiallyLinear plm_fit(const arma::mat& X, const arma::vec& y, const arma::mat& Z,
                                 const arma::mat& bw, int degree, const std::string& method,
                                 const std::string& kernel, const std::string& types,
                                 const std::string& ukertype, const std::string& okertype,
                                 int n_threads) {
  attnreg::PartiallyLinearOptions o;
  o.kernel = attnreg_r::kernel_spec(kernel, types, ukertype, okertype, n_threads);
  o.degree = degree;
  o.method = attnreg::bandwidth_method_from_name(method, "bw");
  attnreg::PartiallyLinear m(o);
  m.fit(X, y, Z, bw);
  return m;
}

}  // namespace

// [[Rcpp::export(name = ".klp_select_cpp")]]
Rcpp::List klp_select_cpp(const arma::mat& X, const arma::vec& y, int degree, std::string method,
                          std::string kernel, std::string types, std::string ukertype,
                          std::string okertype, double ridge, int n_threads) {
  attnreg::BandwidthSelectOptions o;
  o.degree = degree;
  o.method = attnreg::bandwidth_method_from_name(method, "bw");
  o.kernel = attnreg_r::kernel_spec(kernel, types, ukertype, okertype, n_threads);
  o.ridge = ridge;
  return select_result(attnreg::select_local_polynomial_bandwidth(X, y, o));
}

// [[Rcpp::export(name = ".kplm_fit_cpp")]]
Rcpp::List kplm_fit_cpp(const arma::mat& X, const arma::vec& y, const arma::mat& Z,
                        const arma::mat& bw, int degree, std::string method, std::string kernel,
                        std::string types, std::string ukertype, std::string okertype,
                        int n_threads) {
  const attnreg::PartiallyLinear m =
      plm_fit(X, y, Z, bw, degree, method, kernel, types, ukertype, okertype, n_threads);
  using attnreg::CovType;
  const Rcpp::List vc = Rcpp::List::create(
      Rcpp::Named("nonrobust") = m.covariance(CovType::Classical),
      Rcpp::Named("HC0") = m.covariance(CovType::HC0), Rcpp::Named("HC1") = m.covariance(CovType::HC1),
      Rcpp::Named("HC2") = m.covariance(CovType::HC2), Rcpp::Named("HC3") = m.covariance(CovType::HC3));
  Rcpp::List sel;
  for (const auto& r : m.selection()) sel.push_back(select_result(r));
  const arma::vec b = m.coefficients();
  return Rcpp::List::create(
      Rcpp::Named("coefficients") = Rcpp::NumericVector(b.begin(), b.end()),
      Rcpp::Named("vcov") = vc, Rcpp::Named("bw") = m.bandwidth(),
      Rcpp::Named("objective") = Rcpp::NumericVector(m.objective().begin(), m.objective().end()),
      Rcpp::Named("selection") = sel,
      Rcpp::Named("fitted") = Rcpp::NumericVector(m.fitted().begin(), m.fitted().end()),
      Rcpp::Named("sigma2") = m.sigma2(), Rcpp::Named("r_squared") = m.r_squared());
}

// Predictions refit with the stored bandwidths (no selection) and evaluate at new rows.
// [[Rcpp::export(name = ".kplm_predict_cpp")]]
Rcpp::NumericVector kplm_predict_cpp(const arma::mat& X, const arma::vec& y, const arma::mat& Z,
                                     const arma::mat& bw, int degree, std::string kernel,
                                     std::string types, std::string ukertype,
                                     std::string okertype, int n_threads, const arma::mat& X_new,
                                     const arma::mat& Z_new) {
  const attnreg::PartiallyLinear m =
      plm_fit(X, y, Z, bw, degree, "cv_ls", kernel, types, ukertype, okertype, n_threads);
  const arma::vec p = m.predict(X_new, Z_new);
  return Rcpp::NumericVector(p.begin(), p.end());
}

// [[Rcpp::export(name = ".kscoef_fit_cpp")]]
Rcpp::List kscoef_fit_cpp(const arma::mat& X, const arma::vec& y, const arma::mat& Z,
                          const arma::vec& bw, std::string kernel, std::string types,
                          std::string ukertype, std::string okertype, bool intercept,
                          int n_threads) {
  attnreg::SmoothCoefficientOptions o;
  o.kernel = attnreg_r::kernel_spec(kernel, types, ukertype, okertype, n_threads);
  o.fit_intercept = intercept;
  Rcpp::List sel;
  arma::vec h = bw;
  if (h.is_empty()) {
    const attnreg::BandwidthSelectResult r = attnreg::select_smooth_coefficient_bandwidth(X, y, Z, o);
    sel = select_result(r);
    h = r.bandwidth;
  }
  attnreg::SmoothCoefficient m(o);
  m.fit(X, y, Z, h);
  const double cv = m.cv_score();
  return Rcpp::List::create(
      Rcpp::Named("bw") = Rcpp::NumericVector(h.begin(), h.end()), Rcpp::Named("selection") = sel,
      Rcpp::Named("fitted") = Rcpp::NumericVector(m.fitted().begin(), m.fitted().end()),
      Rcpp::Named("cv") = cv, Rcpp::Named("coefficients") = m.coefficients(Z));
}

// [[Rcpp::export(name = ".kscoef_coef_cpp")]]
arma::mat kscoef_coef_cpp(const arma::mat& X, const arma::vec& y, const arma::mat& Z,
                          const arma::vec& bw, std::string kernel, std::string types,
                          std::string ukertype, std::string okertype, bool intercept,
                          int n_threads, const arma::mat& Z_new) {
  attnreg::SmoothCoefficientOptions o;
  o.kernel = attnreg_r::kernel_spec(kernel, types, ukertype, okertype, n_threads);
  o.fit_intercept = intercept;
  attnreg::SmoothCoefficient m(o);
  m.fit(X, y, Z, bw);
  return m.coefficients(Z_new);
}

// [[Rcpp::export(name = ".kscoef_se_cpp")]]
arma::mat kscoef_se_cpp(const arma::mat& X, const arma::vec& y, const arma::mat& Z,
                        const arma::vec& bw, std::string kernel, std::string types,
                        std::string ukertype, std::string okertype, bool intercept,
                        int n_threads, const arma::mat& Z_new) {
  attnreg::SmoothCoefficientOptions o;
  o.kernel = attnreg_r::kernel_spec(kernel, types, ukertype, okertype, n_threads);
  o.fit_intercept = intercept;
  attnreg::SmoothCoefficient m(o);
  m.fit(X, y, Z, bw);
  return m.coefficient_se(Z_new);
}
