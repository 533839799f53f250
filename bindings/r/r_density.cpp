// attnreg R face: kernel densities (density.hpp). Thin.
// [[Rcpp::depends(RcppArmadillo)]]
#include <RcppArmadillo.h>

#include <string>

#include "attnreg/density/density.hpp"
#include "attnreg/base/error.hpp"

namespace {

attnreg::DensityKind density_kind(const std::string& s) {
  if (s == "density") return attnreg::DensityKind::density;
  if (s == "conditional_density") return attnreg::DensityKind::conditional_density;
  return attnreg::DensityKind::conditional_distribution;
}

attnreg::DensityOptions density_options(const std::string& kernel, const std::string& uk,
                                        const std::string& ok, int nstart, double seed,
                                        int n_threads, const std::string& oyk) {
  attnreg::DensityOptions o;
  o.kernel = attnreg::Kernel::from_name(kernel, "ckertype");
  o.unordered = attnreg::CategoricalKernel::from_name(uk, false, "ukertype");
  o.ordered = attnreg::CategoricalKernel::from_name(ok, true, "okertype");
  o.ordered_y = attnreg::CategoricalKernel::from_name(oyk, true, "oykertype");
  o.n_starts = nstart;
  o.seed = static_cast<std::uint64_t>(seed);
  o.n_threads = n_threads;
  return o;
}

}  // namespace

// [[Rcpp::export(name = ".kdens_select_cpp")]]
Rcpp::List kdens_select_cpp(std::string kind, const arma::mat& X, std::string x_types,
                            const arma::mat& Y, std::string y_types, std::string method,
                            std::string kernel, std::string ukertype, std::string okertype,
                            int nstart, double seed, int n_threads, std::string oykertype) {
  const attnreg::DensityData data(density_kind(kind), X, x_types, Y, y_types,
                                  density_options(kernel, ukertype, okertype, nstart, seed,
                                                  n_threads, oykertype));
  const attnreg::DensityBandwidthResult r =
      attnreg::select_density_bandwidth(data, attnreg::density_method_from_name(method, "bw"));
  return Rcpp::List::create(
      Rcpp::Named("bw") = Rcpp::NumericVector(r.bandwidth.begin(), r.bandwidth.end()),
      Rcpp::Named("objective") = r.objective, Rcpp::Named("bwmethod") = r.method,
      Rcpp::Named("n_evals") = r.n_evals, Rcpp::Named("converged") = r.converged,
      Rcpp::Named("message") = r.message);
}

// [[Rcpp::export(name = ".kdens_eval_cpp")]]
Rcpp::NumericVector kdens_eval_cpp(std::string kind, const arma::mat& X, std::string x_types,
                                   const arma::mat& Y, std::string y_types, std::string kernel,
                                   std::string ukertype, std::string okertype,
                                   const arma::vec& bw, const arma::mat& Xq, const arma::mat& Yq,
                                   int n_threads, std::string oykertype) {
  const attnreg::DensityData data(density_kind(kind), X, x_types, Y, y_types,
                                  density_options(kernel, ukertype, okertype, 1, 0, n_threads,
                                                  oykertype));
  const arma::vec v = attnreg::density_evaluate(data, bw, Xq, Yq);
  return Rcpp::NumericVector(v.begin(), v.end());
}

// [[Rcpp::export(name = ".kdens_quantile_cpp")]]
Rcpp::NumericVector kdens_quantile_cpp(const arma::mat& X, std::string x_types, const arma::mat& Y,
                                       std::string y_types, std::string kernel,
                                       std::string ukertype, std::string okertype,
                                       const arma::vec& bw, const arma::mat& Xq,
                                       const arma::vec& tau, int n_threads,
                                       std::string oykertype) {
  const attnreg::DensityData data(attnreg::DensityKind::conditional_distribution, X, x_types, Y,
                                  y_types,
                                  density_options(kernel, ukertype, okertype, 1, 0, n_threads,
                                                  oykertype));
  const arma::vec v = attnreg::conditional_quantile(data, bw, Xq, tau);
  return Rcpp::NumericVector(v.begin(), v.end());
}
