// attnreg R face: MSE/IMSE-optimal bandwidth vectors with several regressors
// (attnreg/inference/rbc_bandwidth_multivariate.hpp). Converts, calls the core, converts back;
// the R API is mse_dpi() / imse_dpi() with a matrix x (R/mv_bandwidth.R).
// [[Rcpp::depends(RcppArmadillo)]]
#include <RcppArmadillo.h>

#include <string>

#include "attnreg/inference/rbc_bandwidth_multivariate.hpp"

// [[Rcpp::export(name = ".mse_dpi_mv_cpp")]]
Rcpp::List mse_dpi_mv_cpp(const arma::mat& X, const arma::vec& y, const arma::mat& X_eval,
                          int degree, std::string kernel, const arma::vec& pilot_bandwidth,
                          double bwregul, int bwcheck, bool absolute_bias) {
  attnreg::MvBwOptions o;
  o.degree = degree;
  o.kernel = attnreg::Kernel::from_name(kernel, "kernel");
  o.pilot_bandwidth = pilot_bandwidth;
  o.bwregul = bwregul;
  o.bwcheck = bwcheck;
  o.absolute_bias = absolute_bias;
  const attnreg::MvBwSelection r = attnreg::mse_dpi_multivariate(X, y, X_eval, o);
  return Rcpp::List::create(
      Rcpp::Named("h") = Rcpp::wrap(r.h), Rcpp::Named("c_common") = Rcpp::wrap(r.c_common),
      Rcpp::Named("h_imse") = Rcpp::wrap(r.h_imse),
      Rcpp::Named("c_imse_common") = r.c_imse_common, Rcpp::Named("pilot") = Rcpp::wrap(r.pilot),
      Rcpp::Named("scale") = Rcpp::wrap(r.scale));
}
