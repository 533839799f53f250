// Python bindings for the local polynomial estimator's derivatives and selectors
// (local_polynomial.hpp) and the semiparametric models (semiparametric.hpp). Thin: convert,
// call, convert back; the estimators' Python API lives in attnreg/semiparametric.py.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "attnreg/least_squares/least_squares.hpp"
#include "attnreg/solve/local_polynomial.hpp"
#include "attnreg/semiparametric/semiparametric.hpp"
#include "convert.hpp"
#include "options.hpp"

namespace py = pybind11;
using attnreg_py::as_mat;
using attnreg_py::as_vec;
using attnreg_py::farray;
using attnreg_py::to_numpy;

namespace {


py::dict result_dict(const attnreg::BandwidthSelectResult& r) {
  py::dict d;
  d["bandwidth"] = to_numpy(r.bandwidth);
  d["objective"] = r.objective;
  d["n_evals"] = r.n_evals;
  d["converged"] = r.converged;
  d["method"] = r.method;
  d["message"] = r.message;
  d["lower"] = to_numpy(r.lower);
  d["upper"] = to_numpy(r.upper);
  py::list at_bound;
  for (int v : r.at_bound) at_bound.append(v);
  d["at_bound"] = at_bound;
  d["curve_grid"] = to_numpy(r.curve_grid);
  d["curve_values"] = to_numpy(r.curve_values);
  return d;
}

}  // namespace

static void init_semiparametric_functions(py::module_& m);
static void init_partially_linear(py::module_& m);
static void init_smooth_coefficient(py::module_& m);

void init_semiparametric(py::module_& m) {
  init_semiparametric_functions(m);
  init_partially_linear(m);
  init_smooth_coefficient(m);
}

static void init_semiparametric_functions(py::module_& m) {
  m.def(
      "local_polynomial_derivative",
      [](const attnreg::LocalPolynomial& model, const farray& X, int order) {
        const arma::mat x = as_mat(X, "X");
        arma::cube r;
        {
          py::gil_scoped_release nogil;
          r = attnreg::local_polynomial_derivative(model, x, order);
        }
        return to_numpy(r);
      },
      py::arg("model"), py::arg("X"), py::arg("order"));
  m.def(
      "local_polynomial_hessian",
      [](const attnreg::LocalPolynomial& model, const farray& X, int output) {
        const arma::mat x = as_mat(X, "X");
        arma::cube r;
        {
          py::gil_scoped_release nogil;
          r = attnreg::local_polynomial_hessian(model, x, static_cast<arma::uword>(output));
        }
        return to_numpy(r);
      },
      py::arg("model"), py::arg("X"), py::arg("output") = 0);
  m.def(
      "select_local_polynomial_bandwidth",
      [](const farray& X, const farray& y, int degree, const std::string& method,
         const std::string& kernel, const std::string& var_types,
         const std::string& unordered_kernel, const std::string& ordered_kernel, double ridge,
         int n_starts, std::uint64_t seed, int grid_size, int n_threads) {
        attnreg::BandwidthSelectOptions o;
        o.degree = degree;
        o.method = attnreg::bandwidth_method_from_name(method, "method");
        o.kernel =
            attnreg_py::kernel_spec(kernel, var_types, unordered_kernel, ordered_kernel, n_threads);
        o.ridge = ridge;
        o.n_starts = n_starts;
        o.seed = seed;
        o.grid_size = grid_size;
        const arma::mat x = as_mat(X, "X");
        const arma::vec yv = as_vec(y, "y");
        attnreg::BandwidthSelectResult r;
        {
          py::gil_scoped_release nogil;
          r = attnreg::select_local_polynomial_bandwidth(x, yv, o);
        }
        return result_dict(r);
      },
      py::arg("X"), py::arg("y"), py::arg("degree"), py::arg("method"), py::arg("kernel"),
      py::arg("var_types"), py::arg("unordered_kernel"), py::arg("ordered_kernel"),
      py::arg("ridge"), py::arg("n_starts"), py::arg("seed"), py::arg("grid_size"),
      py::arg("n_threads"));
}

static void init_partially_linear(py::module_& m) {
  py::class_<attnreg::PartiallyLinear>(m, "PartiallyLinear")
      .def(py::init([](int degree, const std::string& kernel, const std::string& var_types,
                       const std::string& unordered_kernel, const std::string& ordered_kernel,
                       const std::string& method, int n_starts, int n_threads) {
             attnreg::PartiallyLinearOptions o;
             o.kernel = attnreg_py::kernel_spec(kernel, var_types, unordered_kernel,
                                                ordered_kernel, n_threads);
             o.degree = degree;
             o.method = attnreg::bandwidth_method_from_name(method, "bandwidth");
             o.n_starts = n_starts;
             return attnreg::PartiallyLinear(o);
           }),
           py::arg("degree"), py::arg("kernel"), py::arg("var_types"),
           py::arg("unordered_kernel"), py::arg("ordered_kernel"), py::arg("method"),
           py::arg("n_starts"), py::arg("n_threads"))
      .def(
          "fit",
          [](attnreg::PartiallyLinear& self, const farray& X, const farray& y, const farray& Z,
             const std::optional<farray>& bandwidth) {
            const arma::mat x = as_mat(X, "X"), z = as_mat(Z, "Z");
            const arma::vec yv = as_vec(y, "y");
            const arma::mat bw = bandwidth ? as_mat(*bandwidth, "bandwidth") : arma::mat();
            py::gil_scoped_release nogil;
            self.fit(x, yv, z, bw);
          },
          py::arg("X"), py::arg("y"), py::arg("Z"), py::arg("bandwidth") = py::none())
      .def("coefficients", [](const attnreg::PartiallyLinear& s) { return to_numpy(s.coefficients()); })
      .def(
          "covariance",
          [](const attnreg::PartiallyLinear& s, const std::string& cov_type) {
            return to_numpy(s.covariance(attnreg::parse_cov_type(cov_type)));
          },
          py::arg("cov_type"))
      .def("bandwidth", [](const attnreg::PartiallyLinear& s) { return to_numpy(s.bandwidth()); })
      .def("objective", [](const attnreg::PartiallyLinear& s) { return to_numpy(s.objective()); })
      .def("selection",
           [](const attnreg::PartiallyLinear& s) {
             py::list out;
             for (const auto& r : s.selection()) out.append(result_dict(r));
             return out;
           })
      .def(
          "predict",
          [](const attnreg::PartiallyLinear& s, const farray& X, const farray& Z) {
            const arma::mat x = as_mat(X, "X"), z = as_mat(Z, "Z");
            arma::vec r;
            {
              py::gil_scoped_release nogil;
              r = s.predict(x, z);
            }
            return to_numpy(r);
          },
          py::arg("X"), py::arg("Z"))
      .def(
          "g",
          [](const attnreg::PartiallyLinear& s, const farray& Z) {
            const arma::mat z = as_mat(Z, "Z");
            return to_numpy(s.g(z));
          },
          py::arg("Z"))
      .def("fitted", [](const attnreg::PartiallyLinear& s) { return to_numpy(s.fitted()); })
      .def("residuals", [](const attnreg::PartiallyLinear& s) { return to_numpy(s.residuals()); })
      .def("y_residuals", [](const attnreg::PartiallyLinear& s) { return to_numpy(s.y_residuals()); })
      .def("x_residuals", [](const attnreg::PartiallyLinear& s) { return to_numpy(s.x_residuals()); })
      .def("sigma2", &attnreg::PartiallyLinear::sigma2)
      .def("r_squared", &attnreg::PartiallyLinear::r_squared);
}

static void init_smooth_coefficient(py::module_& m) {
  py::class_<attnreg::SmoothCoefficient>(m, "SmoothCoefficient")
      .def(py::init([](const std::string& kernel, const std::string& var_types,
                       const std::string& unordered_kernel, const std::string& ordered_kernel,
                       bool fit_intercept, int n_threads) {
             attnreg::SmoothCoefficientOptions o;
             o.kernel = attnreg_py::kernel_spec(kernel, var_types, unordered_kernel,
                                                ordered_kernel, n_threads);
             o.fit_intercept = fit_intercept;
             return attnreg::SmoothCoefficient(o);
           }),
           py::arg("kernel"), py::arg("var_types"), py::arg("unordered_kernel"),
           py::arg("ordered_kernel"), py::arg("fit_intercept"), py::arg("n_threads"))
      .def(
          "fit",
          [](attnreg::SmoothCoefficient& self, const farray& X, const farray& y, const farray& Z,
             const farray& bandwidth) {
            const arma::mat x = as_mat(X, "X"), z = as_mat(Z, "Z");
            const arma::vec yv = as_vec(y, "y"), bw = as_vec(bandwidth, "bandwidth");
            py::gil_scoped_release nogil;
            self.fit(x, yv, z, bw);
          },
          py::arg("X"), py::arg("y"), py::arg("Z"), py::arg("bandwidth"))
      .def(
          "coefficients",
          [](const attnreg::SmoothCoefficient& s, const farray& Z) {
            const arma::mat z = as_mat(Z, "Z");
            arma::mat r;
            {
              py::gil_scoped_release nogil;
              r = s.coefficients(z);
            }
            return to_numpy(r);
          },
          py::arg("Z"))
      .def(
          "coefficient_se",
          [](const attnreg::SmoothCoefficient& s, const farray& Z) {
            const arma::mat z = as_mat(Z, "Z");
            arma::mat r;
            {
              py::gil_scoped_release nogil;
              r = s.coefficient_se(z);
            }
            return to_numpy(r);
          },
          py::arg("Z"))
      .def(
          "predict",
          [](const attnreg::SmoothCoefficient& s, const farray& X, const farray& Z) {
            const arma::mat x = as_mat(X, "X"), z = as_mat(Z, "Z");
            arma::vec r;
            {
              py::gil_scoped_release nogil;
              r = s.predict(x, z);
            }
            return to_numpy(r);
          },
          py::arg("X"), py::arg("Z"))
      .def("fitted", [](const attnreg::SmoothCoefficient& s) { return to_numpy(s.fitted()); })
      .def("loo_fitted", [](const attnreg::SmoothCoefficient& s) { return to_numpy(s.loo_fitted()); })
      .def("cv_score", &attnreg::SmoothCoefficient::cv_score)
      .def("bandwidth", [](const attnreg::SmoothCoefficient& s) { return to_numpy(s.bandwidth()); });

  m.def(
      "select_smooth_coefficient_bandwidth",
      [](const farray& X, const farray& y, const farray& Z, const std::string& kernel,
         const std::string& var_types, const std::string& unordered_kernel,
         const std::string& ordered_kernel, bool fit_intercept, int n_threads, int n_starts,
         int grid_size) {
        attnreg::SmoothCoefficientOptions o;
        o.kernel =
            attnreg_py::kernel_spec(kernel, var_types, unordered_kernel, ordered_kernel, n_threads);
        o.fit_intercept = fit_intercept;
        const arma::mat x = as_mat(X, "X"), z = as_mat(Z, "Z");
        const arma::vec yv = as_vec(y, "y");
        attnreg::BandwidthSelectResult r;
        {
          py::gil_scoped_release nogil;
          r = attnreg::select_smooth_coefficient_bandwidth(x, yv, z, o, n_starts, grid_size);
        }
        return result_dict(r);
      },
      py::arg("X"), py::arg("y"), py::arg("Z"), py::arg("kernel"), py::arg("var_types"),
      py::arg("unordered_kernel"), py::arg("ordered_kernel"), py::arg("fit_intercept"),
      py::arg("n_threads"), py::arg("n_starts"), py::arg("grid_size"));
}
