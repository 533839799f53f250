// attnreg R face: bias-variance diagnostics (attnreg/inference/diagnostics.hpp). Converts, calls the core,
// converts back; the R API lives in R/diagnostics.R.
// [[Rcpp::depends(RcppArmadillo)]]
#include <RcppArmadillo.h>

#include <string>
#include <vector>

#include "attnreg/inference/diagnostics.hpp"
#include "attnreg/inference/tradeoff_table.hpp"
#include "attnreg/bandwidth/dpi_bandwidth.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/solve/local_fit.hpp"
#include "attnreg/inference/specification_tests.hpp"
#include "r_options.hpp"

namespace {

// Refit the model of a kreg state list with fitted values, leverages and LOO fits (the
// diagnostics need the residuals and leverages; the saved state keeps only the inputs).
attnreg::LocalPolynomial diag_model(const Rcpp::List& L) {
  attnreg::LocalFitOptions o;
  o.degree = Rcpp::as<int>(L["degree"]);
  o.kernel = attnreg_r::kernel_spec(
      Rcpp::as<std::string>(L["kernel"]), Rcpp::as<std::string>(L["var_types"]),
      Rcpp::as<std::string>(L["ukertype"]), Rcpp::as<std::string>(L["okertype"]),
      Rcpp::as<int>(L["n_threads"]), Rcpp::as<std::string>(L["algorithm"]),
      Rcpp::as<double>(L["truncation"]));
  o.ridge = Rcpp::as<double>(L["ridge"]);
  o.compute_fitted = true;
  attnreg::LocalPolynomial m(o);
  m.fit(Rcpp::as<arma::mat>(L["X"]), Rcpp::as<arma::mat>(L["Y"]),
        Rcpp::as<arma::vec>(L["bandwidth"]), Rcpp::as<arma::vec>(L["weights"]));
  return m;
}

Rcpp::NumericVector rvec(const arma::vec& v) { return Rcpp::NumericVector(v.begin(), v.end()); }

}  // namespace

// [[Rcpp::export(name = ".diag_global_cpp")]]
Rcpp::List diag_global_cpp(const Rcpp::List& state, int output) {
  const attnreg::LocalPolynomial m = diag_model(state);
  const attnreg::GlobalDiagnostics g = attnreg::global_diagnostics(m, static_cast<arma::uword>(output));
  return Rcpp::List::create(
      Rcpp::Named("n") = g.n, Rcpp::Named("trace_L") = g.trace_L,
      Rcpp::Named("trace_LtL") = g.trace_LtL, Rcpp::Named("residual_df") = g.residual_df,
      Rcpp::Named("rss") = g.rss, Rcpp::Named("sigma2") = g.sigma2,
      Rcpp::Named("r_squared") = g.r_squared, Rcpp::Named("cv") = g.cv,
      Rcpp::Named("gcv") = g.gcv, Rcpp::Named("aicc") = g.aicc);
}

// [[Rcpp::export(name = ".diag_pointwise_cpp")]]
Rcpp::List diag_pointwise_cpp(const Rcpp::List& state, const arma::mat& X_eval, std::string kind,
                              double level, int pilot_degree, double pilot_bandwidth,
                              Rcpp::NumericVector cluster, int output,
                              Rcpp::NumericVector pilot_bandwidths, int uniform_replications,
                              double seed, std::string uniform_method = "auto",
                              std::string critical_value = "auto") {
  const attnreg::LocalPolynomial m = diag_model(state);
  attnreg::PointwiseOptions o;
  o.uniform_method = attnreg::uniform_method_from_name(uniform_method, "uniform_method");
  o.critical_value = attnreg::critical_value_from_name(critical_value, "critical_value");
  o.pilot_bandwidths = arma::vec(pilot_bandwidths.begin(), pilot_bandwidths.size());
  o.uniform_replications = uniform_replications;
  o.seed = static_cast<std::uint64_t>(seed);
  o.kind = attnreg::variance_kind_from_name(kind, "kind");
  o.level = level;
  o.pilot_degree = pilot_degree;
  o.pilot_bandwidth = pilot_bandwidth;
  for (double c : cluster) o.cluster.push_back(static_cast<long long>(c));
  const attnreg::PointwiseDiagnostics r =
      attnreg::pointwise_diagnostics(m, X_eval, o, static_cast<arma::uword>(output));
  return Rcpp::List::create(
      Rcpp::Named("fit") = rvec(r.fit), Rcpp::Named("se") = rvec(r.se),
      Rcpp::Named("bias") = rvec(r.bias), Rcpp::Named("mse") = rvec(r.mse),
      Rcpp::Named("ci_low") = rvec(r.ci_low), Rcpp::Named("ci_high") = rvec(r.ci_high),
      Rcpp::Named("rbc_low") = rvec(r.rbc_low), Rcpp::Named("rbc_high") = rvec(r.rbc_high),
      Rcpp::Named("fit_bc") = rvec(r.fit_bc), Rcpp::Named("se_bc") = rvec(r.se_bc),
      Rcpp::Named("crit") = rvec(r.crit), Rcpp::Named("crit_bc") = rvec(r.crit_bc),
      Rcpp::Named("bias_note") = r.bias_note,
      Rcpp::Named("uniform") = Rcpp::List::create(
          Rcpp::Named("crit_uniform") = r.crit_uniform,
          Rcpp::Named("crit_uniform_rbc") = r.crit_uniform_bc,
          Rcpp::Named("uniform_method") = r.uniform_method,
          Rcpp::Named("uniform_note") = r.uniform_note,
          Rcpp::Named("uniform_low") = rvec(r.uniform_low),
          Rcpp::Named("uniform_high") = rvec(r.uniform_high),
          Rcpp::Named("uniform_rbc_low") = rvec(r.uniform_rbc_low),
          Rcpp::Named("uniform_rbc_high") = rvec(r.uniform_rbc_high)));
}

// [[Rcpp::export(name = ".diag_dpi_cpp")]]
Rcpp::List diag_dpi_cpp(const arma::vec& x, const arma::vec& y, const arma::vec& eval_points,
                        int degree, std::string kernel, std::string kind,
                        double preliminary_bandwidth, double pilot_bandwidth, int pilot_degree) {
  attnreg::DpiBandwidthOptions o;
  o.degree = degree;
  o.kernel = attnreg::Kernel::from_name(kernel, "kernel");
  o.kind = attnreg::variance_kind_from_name(kind, "kind");
  o.preliminary_bandwidth = preliminary_bandwidth;
  o.pilot_bandwidth = pilot_bandwidth;
  o.pilot_degree = pilot_degree;
  const attnreg::DpiBandwidth r = attnreg::dpi_bandwidth(x, y, eval_points, o);
  return Rcpp::List::create(
      Rcpp::Named("bandwidth") = r.bandwidth, Rcpp::Named("pointwise") = rvec(r.pointwise),
      Rcpp::Named("variance_constant") = rvec(r.variance_constant),
      Rcpp::Named("bias_constant") = rvec(r.bias_constant), Rcpp::Named("h0") = r.h0,
      Rcpp::Named("pilot_bandwidth") = r.pilot_bandwidth, Rcpp::Named("rate") = r.rate);
}

// [[Rcpp::export(name = ".diag_tradeoff_cpp")]]
Rcpp::List diag_tradeoff_cpp(const arma::mat& X, const arma::vec& y, const arma::vec& bandwidths,
                             int degree, std::string kernel, const arma::mat& X_eval,
                             std::string kind, int pilot_degree, double pilot_bandwidth) {
  attnreg::LocalFitOptions fo;
  fo.degree = degree;
  fo.kernel.kernel = attnreg::Kernel::from_name(kernel, "kernel");
  const attnreg::TradeoffTable t = attnreg::tradeoff_table(
      X, y, bandwidths, fo, X_eval, attnreg::variance_kind_from_name(kind, "kind"), pilot_degree,
      pilot_bandwidth);
  Rcpp::List out;  // column name -> vector, in the table's order
  for (const auto& f : t.fields()) out[f.first] = rvec(*f.second);
  return out;
}

// [[Rcpp::export(name = ".diag_mc_cpp")]]
Rcpp::List diag_mc_cpp(const arma::mat& W, const arma::mat& Y_sim, const arma::vec& truth) {
  const attnreg::MonteCarloSummary s = attnreg::monte_carlo_summary(W, Y_sim, truth);
  return Rcpp::List::create(
      Rcpp::Named("bias") = rvec(s.bias), Rcpp::Named("variance") = rvec(s.variance),
      Rcpp::Named("mse") = rvec(s.mse), Rcpp::Named("integrated_bias2") = s.integrated_bias2,
      Rcpp::Named("integrated_variance") = s.integrated_variance,
      Rcpp::Named("integrated_mse") = s.integrated_mse);
}

// [[Rcpp::export(name = ".diag_loglog_cpp")]]
Rcpp::NumericVector diag_loglog_cpp(const arma::vec& n, const arma::vec& mse) {
  return rvec(attnreg::loglog_slope(n, mse));
}

// [[Rcpp::export(name = ".diag_bootstrap_cpp")]]
Rcpp::List diag_bootstrap_cpp(const Rcpp::List& state, const arma::mat& X_eval, std::string type,
                              int replications, double level, double seed, bool bias_corrected,
                              std::string kind) {
  const attnreg::LocalPolynomial m = diag_model(state);
  attnreg::BootstrapOptions o;
  o.type = attnreg::bootstrap_type_from_name(type, "type");
  o.replications = replications;
  o.level = level;
  o.seed = static_cast<unsigned long long>(seed);
  o.bias_corrected = bias_corrected;
  o.kind = attnreg::variance_kind_from_name(kind, "kind");
  const attnreg::BootstrapBands r = attnreg::bootstrap_bands(m, X_eval, o, 0);
  return Rcpp::List::create(
      Rcpp::Named("center") = rvec(r.center), Rcpp::Named("se") = rvec(r.se),
      Rcpp::Named("low") = rvec(r.low), Rcpp::Named("high") = rvec(r.high),
      Rcpp::Named("uniform_low") = rvec(r.uniform_low),
      Rcpp::Named("uniform_high") = rvec(r.uniform_high),
      Rcpp::Named("critical_value") = r.critical_value, Rcpp::Named("draws") = r.draws);
}

// [[Rcpp::export(name = ".sig_test_cpp")]]
Rcpp::List sig_test_cpp(const Rcpp::List& state, int replications, std::string bootstrap,
                        double seed, Rcpp::IntegerVector columns) {
  const attnreg::LocalPolynomial m = diag_model(state);
  attnreg::SignificanceOptions o;
  o.bootstrap = attnreg::null_bootstrap_from_name(bootstrap, "bootstrap");
  o.replications = replications;
  o.seed = static_cast<unsigned long long>(seed);
  for (int c : columns) o.columns.push_back(static_cast<std::size_t>(c - 1));
  const attnreg::SignificanceTest r = attnreg::significance_test(m, o, 0);
  Rcpp::IntegerVector cols(r.columns.size());
  for (std::size_t j = 0; j < r.columns.size(); ++j) cols[j] = static_cast<int>(r.columns[j]) + 1;
  return Rcpp::List::create(
      Rcpp::Named("columns") = cols, Rcpp::Named("statistic") = rvec(r.statistic),
      Rcpp::Named("p_value") = rvec(r.p_value), Rcpp::Named("draws") = r.draws,
      Rcpp::Named("null_scale") = rvec(r.null_scale),
      Rcpp::Named("replications") = r.replications, Rcpp::Named("bootstrap") = r.bootstrap);
}

// [[Rcpp::export(name = ".cms_test_cpp")]]
Rcpp::List cms_test_cpp(const arma::mat& Z, const arma::vec& y, const arma::mat& X,
                        std::string var_types, std::string kernel, std::string ukertype,
                        std::string okertype, const arma::vec& bw, int degree, int replications,
                        std::string bootstrap, double seed, int n_threads, int reselect) {
  attnreg::SpecificationOptions o;
  o.reselect = reselect;
  o.bootstrap = attnreg::null_bootstrap_from_name(bootstrap, "bootstrap");
  o.replications = replications;
  o.seed = static_cast<unsigned long long>(seed);
  o.kernel = attnreg_r::kernel_spec(kernel, var_types, ukertype, okertype, n_threads);
  o.bandwidth = bw;
  o.degree = degree;
  const attnreg::SpecificationTest r = attnreg::specification_test(Z, y, X, o);
  return Rcpp::List::create(
      Rcpp::Named("statistic") = r.statistic, Rcpp::Named("p_value") = r.p_value,
      Rcpp::Named("asymptotic_p_value") = r.asymptotic_p_value, Rcpp::Named("I_n") = r.I_n,
      Rcpp::Named("bandwidth") = rvec(r.bandwidth),
      Rcpp::Named("bandwidth_method") = r.bandwidth_method,
      Rcpp::Named("coefficients") = rvec(r.coefficients), Rcpp::Named("rank") = r.rank,
      Rcpp::Named("draws") = rvec(r.draws), Rcpp::Named("reselected") = r.reselected,
      Rcpp::Named("replications") = r.replications, Rcpp::Named("bootstrap") = r.bootstrap);
}
