// attnreg R face: plug-in bandwidth rules (plugin_bandwidth.hpp). Thin.
// [[Rcpp::depends(RcppArmadillo)]]
#include <RcppArmadillo.h>

#include "attnreg/plugin_bandwidth.hpp"

// [[Rcpp::export(name = ".dpi_cpp")]]
Rcpp::List dpi_cpp(const arma::vec& x, const arma::vec& y, int blockmax, int divisor,
                   double trim, double proptrun, int gridsize, bool binned) {
  const attnreg::DpiResult r = attnreg::dpi_local_linear(
      x, y, attnreg::DpiOptions{blockmax, divisor, trim, proptrun, gridsize, binned});
  return Rcpp::List::create(
      Rcpp::Named("bandwidth") = r.bandwidth, Rcpp::Named("sigma2") = r.sigma2,
      Rcpp::Named("theta22") = r.theta22, Rcpp::Named("sigma2_blocks") = r.sigma2_blocks,
      Rcpp::Named("theta24_blocks") = r.theta24_blocks, Rcpp::Named("n_blocks") = r.n_blocks,
      Rcpp::Named("gamma") = r.gamma, Rcpp::Named("lambda") = r.lambda,
      Rcpp::Named("n_used") = static_cast<double>(r.n_used));
}
