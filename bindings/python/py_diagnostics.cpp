// Python bindings for the bias-variance diagnostics (attnreg/inference/diagnostics.hpp). Thin: convert,
// call, convert back. The Python API lives in attnreg/diagnostics.py.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "attnreg/inference/diagnostics.hpp"
#include "attnreg/inference/nn_variance.hpp"
#include "attnreg/inference/tradeoff_table.hpp"
#include "attnreg/bandwidth/dpi_bandwidth.hpp"
#include "attnreg/solve/local_fit.hpp"
#include "attnreg/inference/specification_tests.hpp"
#include "convert.hpp"
#include "options.hpp"

namespace py = pybind11;
using attnreg_py::as_mat;
using attnreg_py::farray;
using attnreg_py::to_numpy;

namespace {

arma::vec as_vec1(const farray& a, const char* name) {
  const arma::mat m = as_mat(a, name);
  if (m.n_cols != 1 && m.n_rows != 1 && m.n_elem != 0)
    throw py::value_error(std::string(name) + ": expected a 1-D array");
  return arma::vec(m.memptr(), m.n_elem);
}

py::dict global_dict(const attnreg::GlobalDiagnostics& g) {
  py::dict d;
  d["n"] = g.n;
  d["trace_L"] = g.trace_L;
  d["trace_LtL"] = g.trace_LtL;
  d["residual_df"] = g.residual_df;
  d["rss"] = g.rss;
  d["sigma2"] = g.sigma2;
  d["r_squared"] = g.r_squared;
  d["cv"] = g.cv;
  d["gcv"] = g.gcv;
  d["aicc"] = g.aicc;
  return d;
}

}  // namespace

static void init_diagnostics_criteria(py::module_& m);
static void init_diagnostics_bias(py::module_& m);
static void init_diagnostics_wild_t(py::module_& m);
static void init_diagnostics_inference(py::module_& m);

void init_diagnostics(py::module_& m) {
  init_diagnostics_criteria(m);
  init_diagnostics_bias(m);
  init_diagnostics_wild_t(m);
  init_diagnostics_inference(m);
}

static void init_diagnostics_criteria(py::module_& m) {
  m.def(
      "global_diagnostics",
      [](const attnreg::LocalPolynomial& model, unsigned output) {
        return global_dict(attnreg::global_diagnostics(model, output));
      },
      py::arg("model"), py::arg("output") = 0);

  m.def(
      "pointwise_diagnostics",
      [](const attnreg::LocalPolynomial& model, const farray& X, const std::string& kind,
         double level, int pilot_degree, double pilot_bandwidth,
         const std::vector<long long>& cluster, unsigned output,
         const std::vector<double>& pilot_bandwidths, int uniform_replications,
         unsigned long long seed, const std::string& uniform_method,
         const std::string& critical_value) {
        attnreg::PointwiseOptions o;
        o.uniform_method = attnreg::uniform_method_from_name(uniform_method, "uniform_method");
        o.critical_value = attnreg::critical_value_from_name(critical_value, "critical_value");
        o.pilot_bandwidths = arma::vec(pilot_bandwidths);
        o.uniform_replications = uniform_replications;
        o.seed = seed;
        o.kind = attnreg::variance_kind_from_name(kind, "kind");
        o.level = level;
        o.pilot_degree = pilot_degree;
        o.pilot_bandwidth = pilot_bandwidth;
        o.cluster = cluster;
        const attnreg::PointwiseDiagnostics r =
            attnreg::pointwise_diagnostics(model, as_mat(X, "X"), o, output);
        py::dict d;
        d["fit"] = to_numpy(r.fit);
        d["se"] = to_numpy(r.se);
        d["bias"] = to_numpy(r.bias);
        d["mse"] = to_numpy(r.mse);
        d["ci_low"] = to_numpy(r.ci_low);
        d["ci_high"] = to_numpy(r.ci_high);
        d["bias_note"] = r.bias_note;
        d["fit_bc"] = to_numpy(r.fit_bc);
        d["se_bc"] = to_numpy(r.se_bc);
        d["rbc_low"] = to_numpy(r.rbc_low);
        d["rbc_high"] = to_numpy(r.rbc_high);
        d["crit"] = to_numpy(r.crit);
        d["crit_bc"] = to_numpy(r.crit_bc);
        d["sigma2"] = r.sigma2;
        d["z"] = r.z;
        d["crit_uniform"] = r.crit_uniform;
        d["crit_uniform_bc"] = r.crit_uniform_bc;
        d["uniform_method"] = r.uniform_method;
        d["uniform_note"] = r.uniform_note;
        d["uniform_low"] = to_numpy(r.uniform_low);
        d["uniform_high"] = to_numpy(r.uniform_high);
        d["uniform_rbc_low"] = to_numpy(r.uniform_rbc_low);
        d["uniform_rbc_high"] = to_numpy(r.uniform_rbc_high);
        return d;
      },
      py::arg("model"), py::arg("X"), py::arg("kind") = "hc3", py::arg("level") = 0.95,
      py::arg("pilot_degree") = -1, py::arg("pilot_bandwidth") = 0.0,
      py::arg("cluster") = std::vector<long long>(), py::arg("output") = 0,
      py::arg("pilot_bandwidths") = std::vector<double>(), py::arg("uniform_replications") = 0,
      py::arg("seed") = 0ULL, py::arg("uniform_method") = "auto",
      py::arg("critical_value") = "auto");

  m.def(
      "bias_weights_multivariate",
      [](const attnreg::LocalPolynomial& model, const farray& X, int pilot_degree,
         const std::vector<double>& pilot_bandwidths, int bwcheck) {
        return to_numpy(attnreg::bias_weights_multivariate(model, as_mat(X, "X"), pilot_degree,
                                                           arma::vec(pilot_bandwidths), bwcheck));
      },
      py::arg("model"), py::arg("X"), py::arg("pilot_degree") = -1,
      py::arg("pilot_bandwidths") = std::vector<double>(), py::arg("bwcheck") = 21);

  m.def(
      "sup_t_critical_value",
      [](const farray& Sigma, double level, int replications, unsigned long long seed) {
        return attnreg::sup_t_critical_value(as_mat(Sigma, "Sigma"), level, replications, seed);
      },
      py::arg("Sigma"), py::arg("level") = 0.95, py::arg("replications") = 2000,
      py::arg("seed") = 0ULL);

  m.def(
      "nn_residual_variance_multi",
      [](const farray& X, const std::vector<double>& h, const std::vector<unsigned long long>& cell,
         const farray& y, int J) {
        arma::uvec c(cell.size());
        for (std::size_t i = 0; i < cell.size(); ++i) c(i) = static_cast<arma::uword>(cell[i]);
        return to_numpy(attnreg::nn_residual_variance(as_mat(X, "X"), arma::vec(h), c,
                                                      as_vec1(y, "y"), J));
      },
      py::arg("X"), py::arg("h"), py::arg("cell"), py::arg("y"), py::arg("J") = 3);

}

// The smoother rows W handed over from Python (each m x n) and pointers to them, as WildTBands
// takes them.
static std::vector<arma::mat> as_mats(const std::vector<farray>& W) {
  std::vector<arma::mat> out;
  for (const farray& w : W) out.push_back(as_mat(w, "W"));
  return out;
}

static std::vector<const arma::mat*> pointers(const std::vector<arma::mat>& W) {
  std::vector<const arma::mat*> out;
  for (const arma::mat& w : W) out.push_back(&w);
  return out;
}

static void init_diagnostics_wild_t(py::module_& m) {
  // The wild bootstrap-t of uniform bands (attnreg::WildTBands) for smoother rows W (each m x n,
  // e.g. attention weights minus bias weights): the max |t*| statistics for given multipliers
  // (n or #clusters rows, one column per draw) and the critical values from seeded draws.
  auto wild_of = [](const attnreg::LocalPolynomial& model, const std::string& kind,
                    const std::vector<long long>& cluster, unsigned output) {
    const attnreg::VarianceKind k = attnreg::variance_kind_from_name(kind, "kind");
    const double df = k == attnreg::VarianceKind::homoskedastic
                          ? attnreg::global_diagnostics(model, output).residual_df
                          : 0.0;
    return attnreg::WildTBands(model, k, cluster, output, df);
  };
  m.def(
      "wild_t_max_statistics",
      [wild_of](const attnreg::LocalPolynomial& model, const std::vector<farray>& W,
                const farray& multipliers, const std::string& kind,
                const std::vector<long long>& cluster, unsigned output) {
        const std::vector<arma::mat> Wm = as_mats(W);
        const std::vector<const arma::mat*> Wp = pointers(Wm);
        return to_numpy(wild_of(model, kind, cluster, output)
                            .max_statistics(Wp, as_mat(multipliers, "multipliers")));
      },
      py::arg("model"), py::arg("W"), py::arg("multipliers"), py::arg("kind") = "hc3",
      py::arg("cluster") = std::vector<long long>(), py::arg("output") = 0);
  m.def(
      "wild_t_critical_values",
      [wild_of](const attnreg::LocalPolynomial& model, const std::vector<farray>& W,
                double level, int replications, unsigned long long seed, const std::string& kind,
                const std::vector<long long>& cluster, unsigned output) {
        const std::vector<arma::mat> Wm = as_mats(W);
        const std::vector<const arma::mat*> Wp = pointers(Wm);
        return to_numpy(
            wild_of(model, kind, cluster, output).critical_values(Wp, level, replications, seed));
      },
      py::arg("model"), py::arg("W"), py::arg("level") = 0.95, py::arg("replications") = 2000,
      py::arg("seed") = 0ULL, py::arg("kind") = "hc3",
      py::arg("cluster") = std::vector<long long>(), py::arg("output") = 0);
}

static void init_diagnostics_bias(py::module_& m) {
  m.def(
      "dpi_bandwidth",
      [](const farray& x, const farray& y, const farray& eval_points, int degree,
         const std::string& kernel, const std::string& kind, double preliminary_bandwidth,
         double pilot_bandwidth, int pilot_degree) {
        attnreg::DpiBandwidthOptions o;
        o.degree = degree;
        o.kernel = attnreg::Kernel::from_name(kernel, "kernel");
        o.kind = attnreg::variance_kind_from_name(kind, "kind");
        o.preliminary_bandwidth = preliminary_bandwidth;
        o.pilot_bandwidth = pilot_bandwidth;
        o.pilot_degree = pilot_degree;
        const attnreg::DpiBandwidth r = attnreg::dpi_bandwidth(
            as_vec1(x, "x"), as_vec1(y, "y"), as_vec1(eval_points, "eval_points"), o);
        py::dict d;
        d["bandwidth"] = r.bandwidth;
        d["pointwise"] = to_numpy(r.pointwise);
        d["variance_constant"] = to_numpy(r.variance_constant);
        d["bias_constant"] = to_numpy(r.bias_constant);
        d["h0"] = r.h0;
        d["pilot_bandwidth"] = r.pilot_bandwidth;
        d["rate"] = r.rate;
        return d;
      },
      py::arg("x"), py::arg("y"), py::arg("eval_points"), py::arg("degree") = 1,
      py::arg("kernel") = "gaussian", py::arg("kind") = "const",
      py::arg("preliminary_bandwidth") = 0.0, py::arg("pilot_bandwidth") = 0.0,
      py::arg("pilot_degree") = -1);

  m.def(
      "tradeoff_curve",
      [](const farray& X, const farray& y, const farray& bandwidths, int degree,
         const std::string& kernel, double ridge, const farray& X_eval, const std::string& kind,
         int pilot_degree, double pilot_bandwidth, int n_threads) {
        attnreg::LocalFitOptions fo;
        fo.degree = degree;
        fo.kernel = attnreg_py::continuous_kernel_spec(kernel, n_threads);
        fo.ridge = ridge;
        const attnreg::TradeoffTable t = attnreg::tradeoff_table(
            as_mat(X, "X"), as_vec1(y, "y"), as_vec1(bandwidths, "bandwidths"), fo,
            as_mat(X_eval, "eval_points"), attnreg::variance_kind_from_name(kind, "kind"),
            pilot_degree, pilot_bandwidth);
        py::dict d;  // column name -> array, in the table's order
        for (const auto& f : t.fields()) d[py::str(f.first)] = to_numpy(*f.second);
        return d;
      },
      py::arg("X"), py::arg("y"), py::arg("bandwidths"), py::arg("degree"),
      py::arg("kernel") = "gaussian", py::arg("ridge") = 0.0, py::arg("X_eval"),
      py::arg("kind") = "const", py::arg("pilot_degree") = -1, py::arg("pilot_bandwidth") = 0.0,
      py::arg("n_threads") = 0);

  m.def(
      "monte_carlo_summary",
      [](const farray& W, const farray& Y_sim, const farray& truth) {
        const attnreg::MonteCarloSummary s = attnreg::monte_carlo_summary(
            as_mat(W, "weights"), as_mat(Y_sim, "Y_sim"), as_vec1(truth, "truth"));
        py::dict d;
        d["bias"] = to_numpy(s.bias);
        d["variance"] = to_numpy(s.variance);
        d["mse"] = to_numpy(s.mse);
        d["integrated_bias2"] = s.integrated_bias2;
        d["integrated_variance"] = s.integrated_variance;
        d["integrated_mse"] = s.integrated_mse;
        return d;
      },
      py::arg("weights"), py::arg("Y_sim"), py::arg("truth"));

  m.def(
      "loglog_slope",
      [](const farray& n, const farray& mse) {
        return to_numpy(attnreg::loglog_slope(as_vec1(n, "n"), as_vec1(mse, "mse")));
      },
      py::arg("n"), py::arg("mse"));
}

static void init_diagnostics_inference(py::module_& m) {
  m.def(
      "bootstrap_bands",
      [](const attnreg::LocalPolynomial& model, const farray& X, const std::string& type,
         int replications, double level, unsigned long long seed, bool bias_corrected,
         const std::string& kind, unsigned output) {
        attnreg::BootstrapOptions o;
        o.type = attnreg::bootstrap_type_from_name(type, "type");
        o.replications = replications;
        o.level = level;
        o.seed = seed;
        o.bias_corrected = bias_corrected;
        o.kind = attnreg::variance_kind_from_name(kind, "kind");
        const attnreg::BootstrapBands r =
            attnreg::bootstrap_bands(model, as_mat(X, "X"), o, output);
        py::dict d;
        d["center"] = to_numpy(r.center);
        d["se"] = to_numpy(r.se);
        d["low"] = to_numpy(r.low);
        d["high"] = to_numpy(r.high);
        d["uniform_low"] = to_numpy(r.uniform_low);
        d["uniform_high"] = to_numpy(r.uniform_high);
        d["critical_value"] = r.critical_value;
        d["draws"] = to_numpy(r.draws);
        return d;
      },
      py::arg("model"), py::arg("X"), py::arg("type") = "rademacher",
      py::arg("replications") = 999, py::arg("level") = 0.95, py::arg("seed") = 1,
      py::arg("bias_corrected") = false, py::arg("kind") = "hc3", py::arg("output") = 0);

  m.def(
      "significance_test",
      [](const attnreg::LocalPolynomial& model, int replications, const std::string& bootstrap,
         unsigned long long seed, const std::vector<std::size_t>& columns, unsigned output) {
        attnreg::SignificanceOptions o;
        o.bootstrap = attnreg::null_bootstrap_from_name(bootstrap, "bootstrap");
        o.replications = replications;
        o.seed = seed;
        o.columns = columns;
        const attnreg::SignificanceTest r = attnreg::significance_test(model, o, output);
        py::dict d;
        d["columns"] = r.columns;
        d["statistic"] = to_numpy(r.statistic);
        d["p_value"] = to_numpy(r.p_value);
        d["draws"] = to_numpy(r.draws);
        d["null_scale"] = to_numpy(r.null_scale);
        d["replications"] = r.replications;
        d["bootstrap"] = r.bootstrap;
        return d;
      },
      py::arg("model"), py::arg("replications") = 399, py::arg("bootstrap") = "mammen",
      py::arg("seed") = 1, py::arg("columns") = std::vector<std::size_t>{},
      py::arg("output") = 0);

  m.def(
      "specification_test",
      [](const farray& Z, const farray& y, const farray& X, const std::string& var_types,
         const std::string& kernel, const std::string& unordered_kernel,
         const std::string& ordered_kernel, const farray& bandwidth, int degree,
         int replications, const std::string& bootstrap, unsigned long long seed,
         int n_threads, int reselect) {
        attnreg::SpecificationOptions o;
        o.reselect = reselect;
        o.bootstrap = attnreg::null_bootstrap_from_name(bootstrap, "bootstrap");
        o.replications = replications;
        o.seed = seed;
        o.kernel =
            attnreg_py::kernel_spec(kernel, var_types, unordered_kernel, ordered_kernel, n_threads);
        o.bandwidth = as_vec1(bandwidth, "bandwidth");
        o.degree = degree;
        const attnreg::SpecificationTest r = attnreg::specification_test(
            as_mat(Z, "design"), as_vec1(y, "y"), as_mat(X, "X"), o);
        py::dict d;
        d["statistic"] = r.statistic;
        d["p_value"] = r.p_value;
        d["asymptotic_p_value"] = r.asymptotic_p_value;
        d["I_n"] = r.I_n;
        d["bandwidth"] = to_numpy(r.bandwidth);
        d["bandwidth_method"] = r.bandwidth_method;
        d["coefficients"] = to_numpy(r.coefficients);
        d["residuals"] = to_numpy(r.residuals);
        d["rank"] = r.rank;
        d["draws"] = to_numpy(r.draws);
        d["reselected"] = r.reselected;
        d["replications"] = r.replications;
        d["bootstrap"] = r.bootstrap;
        return d;
      },
      py::arg("Z"), py::arg("y"), py::arg("X"), py::arg("var_types") = "",
      py::arg("kernel") = "gaussian", py::arg("unordered_kernel") = "aitchison_aitken",
      py::arg("ordered_kernel") = "li_racine", py::arg("bandwidth"), py::arg("degree") = 0,
      py::arg("replications") = 399, py::arg("bootstrap") = "mammen", py::arg("seed") = 1,
      py::arg("n_threads") = 0, py::arg("reselect") = -1);

  m.def(
      "default_design",
      [](const farray& X, const std::string& var_types) {
        return to_numpy(attnreg::default_design(as_mat(X, "X"), var_types));
      },
      py::arg("X"), py::arg("var_types") = "");

  m.def("rule_of_thumb_bandwidth", [](const farray& x, const std::string& kernel) {
    return attnreg::rule_of_thumb_bandwidth(as_vec1(x, "x"), attnreg::Kernel::from_name(kernel));
  }, py::arg("x"), py::arg("kernel") = "gaussian");
}
