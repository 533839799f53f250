// attnreg R face: Calonico-Cattaneo-Farrell plug-in bandwidths (attnreg/bandwidth/lp_bwselect.hpp).
// Converts, calls the core, converts back; the R API is mse_dpi() / imse_dpi() in R/diagnostics.R.
// [[Rcpp::depends(RcppArmadillo)]]
#include <RcppArmadillo.h>

#include <string>

#include "attnreg/bandwidth/lp_bwselect.hpp"

// [[Rcpp::export(name = ".lp_bwselect_cpp")]]
Rcpp::List lp_bwselect_cpp(const arma::vec& x, const arma::vec& y, const arma::vec& eval_points,
                           bool imse, int degree, int deriv, std::string kernel, std::string kind,
                           int bwcheck, double bwregul, bool interior) {
  attnreg::LpBwOptions o;
  o.degree = degree;
  o.deriv = deriv;
  o.kernel = attnreg::Kernel::from_name(kernel, "kernel");
  o.kind = attnreg::variance_kind_from_name(kind, "kind");
  o.bwcheck = bwcheck;
  o.bwregul = bwregul;
  o.interior = interior;
  const attnreg::LpBwSelection r =
      imse ? attnreg::lp_imse_dpi(x, y, eval_points, o) : attnreg::lp_mse_dpi(x, y, eval_points, o);
  return Rcpp::List::create(
      Rcpp::Named("eval") = Rcpp::NumericVector(r.eval.begin(), r.eval.end()),
      Rcpp::Named("h") = Rcpp::NumericVector(r.h.begin(), r.h.end()),
      Rcpp::Named("b") = Rcpp::NumericVector(r.b.begin(), r.b.end()),
      Rcpp::Named("h_imse") = r.h_imse, Rcpp::Named("b_imse") = r.b_imse);
}
