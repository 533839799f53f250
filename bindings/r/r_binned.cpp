// attnreg R face: binned approximations (attnreg::BinnedLocalPolynomial). Converts, calls the
// core, converts back; kreg(approx = "binned") in R/kreg.R uses it.
// [[Rcpp::depends(RcppArmadillo)]]
#include <RcppArmadillo.h>

#include <string>

#include "attnreg/kernels/binned.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/kernels/kernel.hpp"

namespace {

attnreg::BinnedLocalPolynomial binned_fit(const arma::mat& X, const arma::mat& Y,
                                          const arma::vec& bw, const arma::vec& w, int degree,
                                          const std::string& kernel, double ridge, int grid_size,
                                          int n_threads) {
  attnreg::BinnedFitOptions o;
  o.degree = degree;
  o.kernel = attnreg::Kernel::from_name(kernel, "kernel");
  o.ridge = ridge;
  o.grid_size = grid_size;
  o.n_threads = n_threads;
  attnreg::BinnedLocalPolynomial m(o);
  m.fit(X, Y, bw, w);
  return m;
}

}  // namespace

// Validate approx / grid_size for regressors of these types ("c"/"u"/"o" per column).
// [[Rcpp::export(name = ".kreg_check_approx_cpp")]]
std::string kreg_check_approx_cpp(std::string approx, std::string var_types, int grid_size,
                                  std::string grid_size_arg) {
  const attnreg::Approximation a = attnreg::approximation_from_name(approx, "approx");
  if (a == attnreg::Approximation::exact) return "exact";
  attnreg::binned_grid_size(attnreg::parse_var_types(var_types, var_types.size()), grid_size,
                            grid_size_arg);
  return "binned";
}

// Binned fit: fitted values at the training rows and the error estimate (exact vs binned at
// 200 training rows, seed 0).
// [[Rcpp::export(name = ".kreg_binned_fit_cpp")]]
Rcpp::List kreg_binned_fit_cpp(const arma::mat& X, const arma::mat& Y, const arma::vec& bw,
                               const arma::vec& weights, int degree, std::string kernel,
                               double ridge, int grid_size, int n_threads) {
  const attnreg::BinnedLocalPolynomial m =
      binned_fit(X, Y, bw, weights, degree, kernel, ridge, grid_size, n_threads);
  const attnreg::BinnedErrorEstimate e = m.approx_error(200, 0);
  return Rcpp::List::create(
      Rcpp::Named("fitted") = m.fitted(),
      Rcpp::Named("approx_error") = Rcpp::List::create(
          Rcpp::Named("n_points") = static_cast<double>(e.n_points),
          Rcpp::Named("max_abs") = e.max_abs, Rcpp::Named("rms") = e.rms,
          Rcpp::Named("scale") = e.scale, Rcpp::Named("relative") = e.relative));
}

// Predictions ("fit") or gradients ("gradient") of the binned fit saved in a kreg state.
// [[Rcpp::export(name = ".kreg_binned_predict_cpp")]]
SEXP kreg_binned_predict_cpp(const Rcpp::List& state, int grid_size, const arma::mat& X_new,
                             std::string what) {
  const attnreg::BinnedLocalPolynomial m = binned_fit(
      Rcpp::as<arma::mat>(state["X"]), Rcpp::as<arma::mat>(state["Y"]),
      Rcpp::as<arma::vec>(state["bandwidth"]), Rcpp::as<arma::vec>(state["weights"]),
      Rcpp::as<int>(state["degree"]), Rcpp::as<std::string>(state["kernel"]),
      Rcpp::as<double>(state["ridge"]), grid_size, Rcpp::as<int>(state["n_threads"]));
  if (what == "fit") return Rcpp::wrap(m.predict(X_new));
  if (what == "gradient") return Rcpp::wrap(m.gradient(X_new));
  Rcpp::stop("what: must be \"fit\" or \"gradient\"");
}
