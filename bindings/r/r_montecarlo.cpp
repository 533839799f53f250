// attnreg R face: the Monte Carlo lab (attnreg/inference/monte_carlo.hpp). Converts, calls the core,
// converts back; the R API is monte_carlo() in R/diagnostics.R.
// [[Rcpp::depends(RcppArmadillo)]]
#include <RcppArmadillo.h>

#include <cstdint>
#include <string>
#include <vector>

#include "attnreg/base/error.hpp"
#include "attnreg/inference/monte_carlo.hpp"

namespace {

Rcpp::NumericVector rvec_mc(const arma::vec& v) {
  return Rcpp::NumericVector(v.begin(), v.end());
}

// R passes seeds as doubles holding whole numbers in [0, 2^53) (checked in R/rng.R).
std::uint64_t as_seed(double seed) { return static_cast<std::uint64_t>(seed); }

}  // namespace

// [[Rcpp::export(name = ".mc_sample_cpp")]]
Rcpp::List mc_sample_cpp(int n, int d, std::string design, int cone_dims, int n_eval,
                         double seed) {
  if (n < 0 || d < 1 || cone_dims < 0) {
    throw attnreg::InvalidArgument("n, d: need n >= 3 and d >= 1");
  }
  const attnreg::MonteCarloSample s = attnreg::monte_carlo_sample(
      static_cast<arma::uword>(n), static_cast<arma::uword>(d),
      attnreg::monte_carlo_design_from_name(design), static_cast<arma::uword>(cone_dims), n_eval,
      as_seed(seed));
  return Rcpp::List::create(Rcpp::Named("X") = s.X, Rcpp::Named("X_eval") = s.X_eval);
}

// [[Rcpp::export(name = ".mc_responses_cpp")]]
arma::mat mc_responses_cpp(const arma::vec& m_train, double noise, int replications,
                           double seed) {
  if (replications < 0) throw attnreg::InvalidArgument("R: needs at least 2 replications");
  return attnreg::monte_carlo_responses(m_train, noise, static_cast<arma::uword>(replications),
                                        as_seed(seed));
}

// [[Rcpp::export(name = ".mc_default_grid_cpp")]]
Rcpp::NumericVector mc_default_grid_cpp(int n, int d, std::string design) {
  return rvec_mc(attnreg::monte_carlo_default_grid(static_cast<arma::uword>(n),
                                                   static_cast<arma::uword>(d),
                                                   attnreg::monte_carlo_design_from_name(design)));
}

// [[Rcpp::export(name = ".mc_estimates_cpp")]]
Rcpp::List mc_estimates_cpp(const arma::mat& X, const arma::mat& X_eval, const arma::mat& Y_sim,
                            const arma::vec& truth, std::vector<std::string> estimators,
                            double bandwidth, const arma::vec& grid, double ridge_alpha,
                            std::string kernel) {
  attnreg::MonteCarloOptions o;
  o.estimators = estimators;
  o.bandwidth = bandwidth;
  o.bandwidth_grid = grid;
  o.ridge_alpha = ridge_alpha;
  o.kernel = attnreg::Kernel::from_name(kernel, "kernel");
  const std::vector<attnreg::MonteCarloEstimate> r =
      attnreg::monte_carlo_estimates(X, X_eval, Y_sim, truth, o);
  Rcpp::List out(r.size());
  for (std::size_t e = 0; e < r.size(); ++e) {
    const attnreg::MonteCarloSummary& s = r[e].summary;
    out[e] = Rcpp::List::create(
        Rcpp::Named("estimator") = r[e].estimator, Rcpp::Named("bandwidth") = r[e].bandwidth,
        Rcpp::Named("bias") = rvec_mc(s.bias), Rcpp::Named("variance") = rvec_mc(s.variance),
        Rcpp::Named("mse") = rvec_mc(s.mse), Rcpp::Named("integrated_bias2") = s.integrated_bias2,
        Rcpp::Named("integrated_variance") = s.integrated_variance,
        Rcpp::Named("integrated_mse") = s.integrated_mse);
  }
  return out;
}
