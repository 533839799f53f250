// attnreg R face: plug-in bandwidth rules (plugin_bandwidth.hpp). Thin.
// [[Rcpp::depends(RcppArmadillo)]]
#include <RcppArmadillo.h>

#include "attnreg/bandwidth/plugin_bandwidth.hpp"

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

#include "attnreg/bandwidth/bandwidth_select.hpp"
#include "r_options.hpp"

// [[Rcpp::export(name = ".kbw_cpp")]]
Rcpp::List kbw_cpp(const arma::mat& X, const arma::vec& y, int degree, std::string method,
                   std::string kernel, std::string var_types, std::string ukertype,
                   std::string okertype, double ridge, int nstart, double seed, int grid_size,
                   int min_neighbors, int n_threads, bool progress,
                   const arma::vec& weights, std::string approx, int approx_grid_size,
                   bool exact_curve) {
  attnreg::BandwidthSelectOptions o;
  o.exact_curve = exact_curve;
  o.weights = weights;  // empty = unweighted
  o.approx = attnreg::approximation_from_name(approx, "approx");
  o.approx_grid_size = approx_grid_size;
  o.degree = degree;
  o.method = attnreg::bandwidth_method_from_name(method, "bwmethod");
  o.kernel = attnreg_r::kernel_spec(kernel, var_types, ukertype, okertype, n_threads);
  o.ridge = ridge;
  o.n_starts = nstart;
  o.seed = static_cast<std::uint64_t>(seed);
  o.grid_size = grid_size;
  o.min_neighbors = min_neighbors;
  // progress: one status line on stderr, redrawn in place after each criterion evaluation
  // (the number of evaluations of the quasi-Newton search is not known in advance).
  if (progress)
    o.on_eval = [](int evals, double best) {
      REprintf("\rbandwidth search: %d evaluations, best criterion %.6g", evals, best);
    };
  const attnreg::BandwidthSelectResult r = attnreg::select_bandwidth(X, y, o);
  if (progress) REprintf("\n");
  return Rcpp::List::create(
      Rcpp::Named("bw") = Rcpp::NumericVector(r.bandwidth.begin(), r.bandwidth.end()),
      Rcpp::Named("objective") = r.objective, Rcpp::Named("n_evals") = r.n_evals,
      Rcpp::Named("converged") = r.converged, Rcpp::Named("bwmethod") = r.method,
      Rcpp::Named("message") = r.message,
      Rcpp::Named("lower") = Rcpp::NumericVector(r.lower.begin(), r.lower.end()),
      Rcpp::Named("upper") = Rcpp::NumericVector(r.upper.begin(), r.upper.end()),
      Rcpp::Named("at_bound") = Rcpp::IntegerVector(r.at_bound.begin(), r.at_bound.end()),
      Rcpp::Named("curve_grid") = Rcpp::NumericVector(r.curve_grid.begin(), r.curve_grid.end()),
      Rcpp::Named("curve_values") =
          Rcpp::NumericVector(r.curve_values.begin(), r.curve_values.end()),
      Rcpp::Named("curve_exact") = r.curve_exact);
}

// [[Rcpp::export(name = ".kbw_objective_cpp")]]
Rcpp::List kbw_objective_cpp(const arma::mat& X, const arma::vec& y, const arma::vec& bw,
                             int degree, std::string method, std::string kernel,
                             std::string var_types, std::string ukertype, std::string okertype,
                             double ridge) {
  attnreg::BandwidthSelectOptions o;
  o.degree = degree;
  o.method = attnreg::bandwidth_method_from_name(method, "bwmethod");
  o.kernel = attnreg_r::kernel_spec(kernel, var_types, ukertype, okertype, 0);
  o.ridge = ridge;
  attnreg::BandwidthObjective obj(X, y, o);
  arma::vec g;
  const double v = obj(bw, &g);
  return Rcpp::List::create(Rcpp::Named("value") = v,
                            Rcpp::Named("gradient") = Rcpp::NumericVector(g.begin(), g.end()));
}
