// Python bindings for the Monte Carlo lab (attnreg/inference/monte_carlo.hpp). Thin: convert, call, convert
// back. The Python API is attnreg.diagnostics.monte_carlo / rate_study.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "attnreg/inference/monte_carlo.hpp"
#include "convert.hpp"

namespace py = pybind11;
using attnreg_py::as_mat;
using attnreg_py::as_vec;
using attnreg_py::farray;
using attnreg_py::to_numpy;

void init_montecarlo(py::module_& m) {
  m.def(
      "monte_carlo_sample",
      [](long n, long d, const std::string& design, long cone_dims, long n_eval,
         unsigned long long seed, unsigned study) {
        if (n < 0 || d < 1 || cone_dims < 0)
          throw py::value_error("n, d, cone_dims: need n >= 3, d >= 1, cone_dims >= 0");
        const attnreg::MonteCarloSample s = attnreg::monte_carlo_sample(
            static_cast<arma::uword>(n), static_cast<arma::uword>(d),
            attnreg::monte_carlo_design_from_name(design), static_cast<arma::uword>(cone_dims),
            n_eval, seed, study);
        return py::make_tuple(to_numpy(s.X), to_numpy(s.X_eval));
      },
      py::arg("n"), py::arg("d"), py::arg("design") = "uniform", py::arg("cone_dims") = 0,
      py::arg("n_eval") = -1, py::arg("seed") = 0, py::arg("study") = 0);

  m.def(
      "monte_carlo_responses",
      [](const farray& m_train, double noise, long replications, unsigned long long seed,
         unsigned study) {
        if (replications < 0) throw py::value_error("replications: must be at least 2");
        return to_numpy(attnreg::monte_carlo_responses(as_vec(m_train, "func(X)"), noise,
                                                       static_cast<arma::uword>(replications),
                                                       seed, study));
      },
      py::arg("m_train"), py::arg("noise"), py::arg("replications"), py::arg("seed") = 0,
      py::arg("study") = 0);

  m.def(
      "monte_carlo_default_grid",
      [](long n, long d, const std::string& design) {
        return to_numpy(attnreg::monte_carlo_default_grid(
            static_cast<arma::uword>(n), static_cast<arma::uword>(d),
            attnreg::monte_carlo_design_from_name(design)));
      },
      py::arg("n"), py::arg("d"), py::arg("design") = "uniform");

  m.def(
      "monte_carlo_estimates",
      [](const farray& X, const farray& X_eval, const farray& Y_sim, const farray& truth,
         const std::vector<std::string>& estimators, double bandwidth, const farray& grid,
         double ridge_alpha, const std::string& kernel, long criterion_points, int n_threads) {
        attnreg::MonteCarloOptions o;
        o.estimators = estimators;
        o.bandwidth = bandwidth;
        o.bandwidth_grid = as_vec(grid, "bandwidth_grid");
        o.ridge_alpha = ridge_alpha;
        o.kernel = attnreg::Kernel::from_name(kernel, "kernel");
        o.criterion_points = criterion_points < 0 ? 0 : static_cast<arma::uword>(criterion_points);
        o.n_threads = n_threads;
        const std::vector<attnreg::MonteCarloEstimate> r = attnreg::monte_carlo_estimates(
            as_mat(X, "X"), as_mat(X_eval, "eval_points"), as_mat(Y_sim, "Y_sim"),
            as_vec(truth, "func(eval_points)"), o);
        py::list out;
        for (const attnreg::MonteCarloEstimate& e : r) {
          py::dict d;
          d["estimator"] = e.estimator;
          d["bandwidth"] = e.bandwidth;
          d["bias"] = to_numpy(e.summary.bias);
          d["variance"] = to_numpy(e.summary.variance);
          d["mse"] = to_numpy(e.summary.mse);
          d["integrated_bias2"] = e.summary.integrated_bias2;
          d["integrated_variance"] = e.summary.integrated_variance;
          d["integrated_mse"] = e.summary.integrated_mse;
          out.append(d);
        }
        return out;
      },
      py::arg("X"), py::arg("X_eval"), py::arg("Y_sim"), py::arg("truth"),
      py::arg("estimators"), py::arg("bandwidth") = 0.0, py::arg("bandwidth_grid"),
      py::arg("ridge_alpha") = 1.0, py::arg("kernel") = "gaussian",
      py::arg("criterion_points") = 0, py::arg("n_threads") = 0);
}
