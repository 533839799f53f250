// attnreg R face: regression-summary statistics (attnreg/least_squares/least_squares_summary.hpp).
// [[Rcpp::depends(RcppArmadillo)]]
#include <RcppArmadillo.h>

#include "attnreg/least_squares/least_squares_summary.hpp"

// Gaussian log-likelihood of residuals e with observation weights w (empty: all ones).
// [[Rcpp::export(name = ".gaussian_loglik_cpp")]]
double gaussian_loglik_cpp(const arma::vec& e, const arma::vec& w, bool frequency = false) {
  return attnreg::gaussian_loglik(e, w, frequency);
}

// d_i' V d_i for each row of D: variances of the linear combinations D b.
// [[Rcpp::export(name = ".row_quadratic_forms_cpp")]]
Rcpp::NumericVector row_quadratic_forms_cpp(const arma::mat& D, const arma::mat& V) {
  const arma::vec q = attnreg::row_quadratic_forms(D, V);
  return Rcpp::NumericVector(q.begin(), q.end());
}
