// attnreg R face: marginal effects with standard errors (marginal_effects.hpp). Thin.
// [[Rcpp::depends(RcppArmadillo)]]
#include <RcppArmadillo.h>

#include <cstdint>
#include <string>

#include "attnreg/solve/local_fit.hpp"
#include "attnreg/inference/diagnostics.hpp"
#include "attnreg/inference/marginal_effects.hpp"
#include "attnreg/inference/rbc_marginal_effects.hpp"

attnreg::LocalPolynomial kreg_model_from_list(const Rcpp::List& L);  // r_kernel.cpp

// [[Rcpp::export(name = ".kreg_gradient_cpp")]]
Rcpp::List kreg_gradient_cpp(const Rcpp::List& state, const arma::mat& X_new, std::string se,
                             int n_boot, double seed, bool average, int n_threads) {
  const attnreg::LocalPolynomial m = kreg_model_from_list(state);
  attnreg::GradientOptions o;
  o.se = attnreg::gradient_se_from_name(se, "se_method");
  o.n_boot = n_boot;
  o.seed = static_cast<std::uint64_t>(seed);
  o.average = average;
  o.n_threads = n_threads;
  const attnreg::GradientResult r = attnreg::local_gradient(m, X_new, o);
  return Rcpp::List::create(
      Rcpp::Named("gradient") = r.gradient, Rcpp::Named("se") = r.se,
      Rcpp::Named("average") = Rcpp::NumericVector(r.average.begin(), r.average.end()),
      Rcpp::Named("average_se") =
          Rcpp::NumericVector(r.average_se.begin(), r.average_se.end()));
}


// [[Rcpp::export(name = ".kreg_rbc_gradient_cpp")]]
Rcpp::List kreg_rbc_gradient_cpp(const Rcpp::List& state, const arma::mat& X_new,
                                 std::string kind, double level, int order, int pilot_degree,
                                 const arma::vec& pilot_bw, bool average) {
  const attnreg::LocalPolynomial m = kreg_model_from_list(state);
  attnreg::RbcGradientOptions o;
  o.kind = attnreg::variance_kind_from_name(kind, "vcov");
  o.level = level;
  o.order = order;
  o.pilot_degree = pilot_degree;
  o.pilot_bandwidths = pilot_bw;
  const attnreg::RbcGradientResult r = average ? attnreg::rbc_average_gradient(m, X_new, o)
                                               : attnreg::rbc_gradient(m, X_new, o);
  Rcpp::IntegerVector cols(r.columns.size());
  for (std::size_t c = 0; c < r.columns.size(); ++c) cols[c] = static_cast<int>(r.columns[c]) + 1;
  return Rcpp::List::create(
      Rcpp::Named("estimate") = r.estimate, Rcpp::Named("se") = r.se,
      Rcpp::Named("bias") = r.bias, Rcpp::Named("estimate_bc") = r.estimate_bc,
      Rcpp::Named("se_bc") = r.se_bc, Rcpp::Named("columns") = cols,
      Rcpp::Named("z") = r.z, Rcpp::Named("pilot_degree") = r.pilot_degree);
}

// [[Rcpp::export(name = ".kreg_rbc_level_difference_cpp")]]
Rcpp::List kreg_rbc_level_difference_cpp(const Rcpp::List& state, const arma::mat& X_new,
                                         int column, double level_from, double level_to,
                                         bool average, std::string kind, double level,
                                         int pilot_degree, const arma::vec& pilot_bw) {
  const attnreg::LocalPolynomial m = kreg_model_from_list(state);
  attnreg::RbcGradientOptions o;
  o.kind = attnreg::variance_kind_from_name(kind, "vcov");
  o.level = level;
  o.pilot_degree = pilot_degree;
  o.pilot_bandwidths = pilot_bw;
  const attnreg::RbcGradientResult r = attnreg::rbc_level_difference(
      m, X_new, static_cast<std::size_t>(column), level_from, level_to, average, o);
  return Rcpp::List::create(
      Rcpp::Named("estimate") = r.estimate, Rcpp::Named("se") = r.se,
      Rcpp::Named("bias") = r.bias, Rcpp::Named("estimate_bc") = r.estimate_bc,
      Rcpp::Named("se_bc") = r.se_bc, Rcpp::Named("z") = r.z,
      Rcpp::Named("pilot_degree") = r.pilot_degree);
}
