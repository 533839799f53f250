// attnreg R face: marginal effects with standard errors (marginal_effects.hpp). Thin.
// [[Rcpp::depends(RcppArmadillo)]]
#include <RcppArmadillo.h>

#include <cstdint>
#include <string>

#include "attnreg/local_fit.hpp"
#include "attnreg/marginal_effects.hpp"

namespace {

// The model from kreg's saved state (the list r_kernel.cpp's state_to_list writes).
attnreg::LocalPolynomial model_from_state(const Rcpp::List& L) {
  attnreg::LocalFitState s;
  s.degree = Rcpp::as<int>(L["degree"]);
  s.kernel = Rcpp::as<std::string>(L["kernel"]);
  s.var_types = Rcpp::as<std::string>(L["var_types"]);
  s.unordered_kernel = Rcpp::as<std::string>(L["ukertype"]);
  s.ordered_kernel = Rcpp::as<std::string>(L["okertype"]);
  s.ridge = Rcpp::as<double>(L["ridge"]);
  s.algorithm = Rcpp::as<std::string>(L["algorithm"]);
  s.truncation = Rcpp::as<double>(L["truncation"]);
  s.X = Rcpp::as<arma::mat>(L["X"]);
  s.Y = Rcpp::as<arma::mat>(L["Y"]);
  s.bandwidth = Rcpp::as<arma::vec>(L["bandwidth"]);
  s.sample_weight = Rcpp::as<arma::vec>(L["weights"]);
  return attnreg::LocalPolynomial::from_state(s);
}

}  // namespace

// [[Rcpp::export(name = ".kreg_gradient_cpp")]]
Rcpp::List kreg_gradient_cpp(const Rcpp::List& state, const arma::mat& X_new, std::string se,
                             int n_boot, double seed, bool average, int n_threads) {
  const attnreg::LocalPolynomial m = model_from_state(state);
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
