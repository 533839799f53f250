// Python bindings for the plug-in bandwidth rules (plugin_bandwidth.hpp). Thin.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

#include "attnreg/bandwidth/bandwidth_select.hpp"
#include "attnreg/bandwidth/plugin_bandwidth.hpp"
#include "convert.hpp"
#include "options.hpp"

namespace py = pybind11;
namespace spec = attnreg::spec::bandwidth;

namespace {

attnreg::BandwidthSelectOptions select_options(int degree, const std::string& method,
                                               const std::string& kernel,
                                               const std::string& var_types,
                                               const std::string& unordered_kernel,
                                               const std::string& ordered_kernel, double ridge,
                                               int n_starts, std::uint64_t seed, int grid_size,
                                               int min_neighbors, int n_threads) {
  attnreg::BandwidthSelectOptions o;
  o.degree = degree;
  o.method = attnreg::bandwidth_method_from_name(method, "method");
  o.kernel =
      attnreg_py::kernel_spec(kernel, var_types, unordered_kernel, ordered_kernel, n_threads);
  o.ridge = ridge;
  o.n_starts = n_starts;
  o.seed = seed;
  o.grid_size = grid_size;
  o.min_neighbors = min_neighbors;
  return o;
}

arma::vec to_vec(const attnreg_py::farray& a, const char* name) {
  const arma::mat m = attnreg_py::as_mat(a, name);
  return arma::vec(m.memptr(), m.n_elem);
}

}  // namespace

void init_bandwidth(py::module_& m) {
  m.def(
      "dpi_local_linear",
      [](const attnreg_py::farray& x, const attnreg_py::farray& y, int blockmax, int divisor,
         double trim, double proptrun, int gridsize, bool binned) {
        const arma::vec xv = arma::vec(attnreg_py::as_mat(x, "x"));
        const arma::vec yv = arma::vec(attnreg_py::as_mat(y, "y"));
        attnreg::DpiOptions o{blockmax, divisor, trim, proptrun, gridsize, binned};
        attnreg::DpiResult r;
        {
          py::gil_scoped_release nogil;
          r = attnreg::dpi_local_linear(xv, yv, o);
        }
        py::dict d;
        d["bandwidth"] = r.bandwidth;
        d["sigma2"] = r.sigma2;
        d["theta22"] = r.theta22;
        d["sigma2_blocks"] = r.sigma2_blocks;
        d["theta24_blocks"] = r.theta24_blocks;
        d["n_blocks"] = r.n_blocks;
        d["gamma"] = r.gamma;
        d["lambda"] = r.lambda;
        d["n_used"] = static_cast<double>(r.n_used);
        return d;
      },
      py::arg("x"), py::arg("y"), py::arg("blockmax") = 5, py::arg("divisor") = 20,
      py::arg("trim") = 0.01, py::arg("proptrun") = 0.05, py::arg("gridsize") = 401,
      py::arg("binned") = true);

  m.def(
      "select_bandwidth",
      [](const attnreg_py::farray& X, const attnreg_py::farray& y, int degree,
         const std::string& method, const std::string& kernel, const std::string& var_types,
         const std::string& unordered_kernel, const std::string& ordered_kernel, double ridge,
         int n_starts, std::uint64_t seed, int grid_size, int min_neighbors, int n_threads,
         py::object progress, py::object weights, const std::string& approx,
         int approx_grid_size, bool exact_curve) {
        const arma::mat Xm = attnreg_py::as_mat(X, "X");
        const arma::vec yv = to_vec(y, "y");
        attnreg::BandwidthSelectOptions o =
            select_options(degree, method, kernel, var_types, unordered_kernel, ordered_kernel,
                           ridge, n_starts, seed, grid_size, min_neighbors, n_threads);
        if (!weights.is_none())
          o.weights = to_vec(weights.cast<attnreg_py::farray>(), "sample_weight");
        o.approx = attnreg::approximation_from_name(approx, "approx");
        o.approx_grid_size = approx_grid_size;
        o.exact_curve = exact_curve;
        if (!progress.is_none()) {
          o.on_eval = [progress](int evals, double best) {
            py::gil_scoped_acquire gil;
            progress(evals, best);
          };
        }
        attnreg::BandwidthSelectResult r;
        {
          py::gil_scoped_release nogil;
          r = attnreg::select_bandwidth(Xm, yv, o);
        }
        py::dict d;
        d["bandwidth"] = attnreg_py::to_numpy(r.bandwidth);
        d["objective"] = r.objective;
        d["n_evals"] = r.n_evals;
        d["converged"] = r.converged;
        d["method"] = r.method;
        d["message"] = r.message;
        d["lower"] = attnreg_py::to_numpy(r.lower);
        d["upper"] = attnreg_py::to_numpy(r.upper);
        py::list at_bound;
        for (int v : r.at_bound) at_bound.append(v);
        d["at_bound"] = at_bound;
        d["curve_grid"] = attnreg_py::to_numpy(r.curve_grid);
        d["curve_values"] = attnreg_py::to_numpy(r.curve_values);
        d["curve_exact"] = r.curve_exact;
        return d;
      },
      py::arg("X"), py::arg("y"), py::arg("degree"), py::arg("method"), py::arg("kernel"),
      py::arg("var_types"), py::arg("unordered_kernel"), py::arg("ordered_kernel"),
      py::arg("ridge"), py::arg("n_starts"), py::arg("seed"), py::arg("grid_size"),
      py::arg("min_neighbors"), py::arg("n_threads"), py::arg("progress") = py::none(),
      py::arg("weights") = py::none(), py::arg("approx") = spec::approx,
      py::arg("approx_grid_size") = spec::approx_grid_size,
      py::arg("exact_curve") = spec::exact_curve);

  m.def(
      "bandwidth_objective",
      [](const attnreg_py::farray& X, const attnreg_py::farray& y,
         const attnreg_py::farray& bandwidth, int degree, const std::string& method,
         const std::string& kernel, const std::string& var_types,
         const std::string& unordered_kernel, const std::string& ordered_kernel, double ridge,
         bool gradient, py::object weights) {
        const arma::mat Xm = attnreg_py::as_mat(X, "X");
        const arma::vec yv = to_vec(y, "y");
        const arma::vec bw = to_vec(bandwidth, "bandwidth");
        attnreg::BandwidthSelectOptions o = select_options(
            degree, method, kernel, var_types, unordered_kernel, ordered_kernel, ridge, 1, 0, 0,
            0, 0);
        if (!weights.is_none())
          o.weights = to_vec(weights.cast<attnreg_py::farray>(), "sample_weight");
        attnreg::BandwidthObjective obj(Xm, yv, o);
        arma::vec g;
        double v;
        {
          py::gil_scoped_release nogil;
          v = obj(bw, gradient ? &g : nullptr);
        }
        return py::make_tuple(v, attnreg_py::to_numpy(g), obj.last_trace(), obj.last_rss());
      },
      py::arg("X"), py::arg("y"), py::arg("bandwidth"), py::arg("degree"), py::arg("method"),
      py::arg("kernel"), py::arg("var_types"), py::arg("unordered_kernel"),
      py::arg("ordered_kernel"), py::arg("ridge"), py::arg("gradient") = true,
      py::arg("weights") = py::none());
}
