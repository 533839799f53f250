// attnreg R face: kernel regression (attnreg::LocalPolynomial). Converts, calls the core,
// converts back; formula handling, factors and S3 methods live in R/kreg.R.
// [[Rcpp::depends(RcppArmadillo)]]
#include <RcppArmadillo.h>

#include <string>

#include "attnreg/base/error.hpp"
#include "attnreg/kernels/kernel.hpp"
#include "attnreg/solve/local_fit.hpp"
#include "r_options.hpp"

namespace {

attnreg::LocalFitOptions kreg_options(int degree, const std::string& kernel,
                                      const std::string& var_types, const std::string& ukertype,
                                      const std::string& okertype, double ridge,
                                      const std::string& algorithm, int n_threads) {
  attnreg::LocalFitOptions o;
  o.degree = degree;
  o.kernel = attnreg_r::kernel_spec(kernel, var_types, ukertype, okertype, n_threads, algorithm);
  o.ridge = ridge;
  return o;
}

Rcpp::List state_to_list(const attnreg::LocalFitState& s, int n_threads) {
  return Rcpp::List::create(
      Rcpp::Named("degree") = s.degree, Rcpp::Named("kernel") = s.kernel,
      Rcpp::Named("var_types") = s.var_types, Rcpp::Named("ukertype") = s.unordered_kernel,
      Rcpp::Named("okertype") = s.ordered_kernel, Rcpp::Named("ridge") = s.ridge,
      Rcpp::Named("algorithm") = s.algorithm, Rcpp::Named("truncation") = s.truncation,
      Rcpp::Named("X") = s.X, Rcpp::Named("Y") = s.Y,
      Rcpp::Named("bandwidth") = Rcpp::NumericVector(s.bandwidth.begin(), s.bandwidth.end()),
      Rcpp::Named("weights") =
          Rcpp::NumericVector(s.sample_weight.begin(), s.sample_weight.end()),
      Rcpp::Named("n_threads") = n_threads);
}

}  // namespace

// A model rebuilt from its saved state (r_effects.cpp uses it too; the neighbour index is rebuilt; fitted values are not
// needed for predictions and are not recomputed).
attnreg::LocalPolynomial kreg_model_from_list(const Rcpp::List& L) {
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
  attnreg::LocalPolynomial m = attnreg::LocalPolynomial::from_state(s);
  return m;
}


// [[Rcpp::export(name = ".kreg_fit_cpp")]]
Rcpp::List kreg_fit_cpp(const arma::mat& X, const arma::mat& Y, const arma::vec& bandwidth,
                        const arma::vec& weights, int degree, std::string kernel,
                        std::string var_types, std::string ukertype, std::string okertype,
                        double ridge, std::string algorithm, int n_threads) {
  attnreg::LocalPolynomial m(
      kreg_options(degree, kernel, var_types, ukertype, okertype, ridge, algorithm, n_threads));
  m.fit(X, Y, bandwidth, weights);
  const arma::vec lev = m.leverage();
  Rcpp::NumericMatrix loo;
  bool loo_ok = true;
  std::string loo_error;
  try {
    loo = Rcpp::wrap(m.loo_fitted());
  } catch (const attnreg::NumericalError& e) {
    loo_ok = false;
    loo_error = e.what();
  }
  return Rcpp::List::create(
      Rcpp::Named("fitted") = m.fitted(),
      Rcpp::Named("leverage") = Rcpp::NumericVector(lev.begin(), lev.end()),
      Rcpp::Named("loo") = loo, Rcpp::Named("loo_ok") = loo_ok,
      Rcpp::Named("loo_error") = loo_error, Rcpp::Named("effective_df") = m.effective_df(),
      Rcpp::Named("cv") = m.cv_score(),
      Rcpp::Named("uses_neighbors") = m.space().uses_neighbors(),
      Rcpp::Named("state") = state_to_list(m.state(), n_threads));
}

// [[Rcpp::export(name = ".kreg_predict_cpp")]]
SEXP kreg_predict_cpp(const Rcpp::List& state, const arma::mat& X_new, std::string what) {
  const attnreg::LocalPolynomial m = kreg_model_from_list(state);
  if (what == "fit") return Rcpp::wrap(m.predict(X_new));
  if (what == "gradient") return Rcpp::wrap(m.gradient(X_new));  // m x d x k array
  if (what == "weights") return Rcpp::wrap(m.attention_weights(X_new));
  Rcpp::stop("what: must be \"fit\", \"gradient\" or \"weights\"");
}

// [[Rcpp::export(name = ".kreg_kernel_constants_cpp")]]
Rcpp::List kreg_kernel_constants_cpp(std::string kernel) {
  const attnreg::Kernel k = attnreg::Kernel::from_name(kernel, "kernel");
  return Rcpp::List::create(Rcpp::Named("name") = std::string(k.name()),
                            Rcpp::Named("mu2") = k.mu2(),
                            Rcpp::Named("roughness") = k.roughness(),
                            Rcpp::Named("support") = k.support(),
                            Rcpp::Named("constant") = k.constant());
}

// Largest valid lambda of a categorical kernel for a column with n_levels levels (summary
// notes a lambda there: the variable is smoothed out).
// [[Rcpp::export(name = ".kreg_categorical_max_bw_cpp")]]
double kreg_categorical_max_bw_cpp(std::string name, bool ordered, int n_levels) {
  return attnreg::CategoricalKernel::from_name(name, ordered,
                                               ordered ? "ordered_kernel" : "unordered_kernel")
      .max_bandwidth(n_levels);
}
