// Python bindings for the binned approximations (binned.hpp). Thin: convert, call, convert.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "attnreg/kernels/binned.hpp"
#include "convert.hpp"

namespace py = pybind11;
namespace spec = attnreg::spec::binned;
using attnreg_py::as_mat;
using attnreg_py::as_vec;
using attnreg_py::farray;
using attnreg_py::to_numpy;

namespace {

attnreg::BinnedFitOptions binned_options(int degree, const std::string& kernel, double ridge,
                                         int grid_size, int n_threads) {
  attnreg::BinnedFitOptions o;
  o.degree = degree;
  o.kernel = attnreg::Kernel::from_name(kernel, "kernel");
  o.ridge = ridge;
  o.grid_size = grid_size;
  o.n_threads = n_threads;
  return o;
}

py::dict error_dict(const attnreg::BinnedErrorEstimate& e) {
  py::dict d;
  d["n_points"] = e.n_points;
  d["max_abs"] = e.max_abs;
  d["rms"] = e.rms;
  d["scale"] = e.scale;
  d["relative"] = e.relative;
  d["seed"] = e.seed;
  return d;
}

}  // namespace

static void init_binned_check(py::module_& m);
static void init_binned_class(py::module_& m);
static void init_binned_cv(py::module_& m);

void init_binned(py::module_& m) {
  init_binned_check(m);
  init_binned_class(m);
  init_binned_cv(m);
}

static void init_binned_check(py::module_& m) {
  m.def(
      "check_approx",
      [](const std::string& approx, const std::string& var_types, std::size_t n_cols,
         int grid_size, const std::string& grid_size_arg) {
        const attnreg::Approximation a = attnreg::approximation_from_name(approx, "approx");
        if (a == attnreg::Approximation::exact) return std::string("exact");
        attnreg::binned_grid_size(attnreg::parse_var_types(var_types, n_cols), grid_size,
                                  grid_size_arg);
        return std::string("binned");
      },
      py::arg("approx"), py::arg("var_types"), py::arg("n_cols"), py::arg("grid_size"),
      py::arg("grid_size_arg") = "grid_size",
      "Validate approx / grid_size for data with these column types; returns the approx name.");
}

static void init_binned_class(py::module_& m) {
  py::class_<attnreg::BinnedLocalPolynomial>(m, "BinnedLocalPolynomial")
      .def(py::init([](int degree, const std::string& kernel, double ridge, int grid_size,
                       int n_threads) {
             return attnreg::BinnedLocalPolynomial(
                 binned_options(degree, kernel, ridge, grid_size, n_threads));
           }),
           py::arg("degree") = spec::degree, py::arg("kernel") = spec::kernel,
           py::arg("ridge") = spec::ridge, py::arg("grid_size") = spec::grid_size,
           py::arg("n_threads") = spec::n_threads)
      .def(
          "fit",
          [](attnreg::BinnedLocalPolynomial& self, const farray& X, const farray& Y,
             const farray& bandwidth,
             const std::optional<farray>& sample_weight) -> attnreg::BinnedLocalPolynomial& {
            const arma::mat x = as_mat(X, "X"), y = as_mat(Y, "y");
            const arma::vec bw = as_vec(bandwidth, "bandwidth");
            const arma::vec sw = sample_weight ? as_vec(*sample_weight, "sample_weight") : arma::vec();
            py::gil_scoped_release nogil;
            return self.fit(x, y, bw, sw);
          },
          py::arg("X"), py::arg("Y"), py::arg("bandwidth"), py::arg("sample_weight") = py::none(),
          py::return_value_policy::reference_internal)
      .def(
          "predict",
          [](const attnreg::BinnedLocalPolynomial& self, const farray& X) {
            const arma::mat x = as_mat(X, "X");
            arma::mat r;
            {
              py::gil_scoped_release nogil;
              r = self.predict(x);
            }
            return to_numpy(r);
          },
          py::arg("X"))
      .def(
          "gradient",
          [](const attnreg::BinnedLocalPolynomial& self, const farray& X) {
            const arma::mat x = as_mat(X, "X");
            arma::cube r;
            {
              py::gil_scoped_release nogil;
              r = self.gradient(x);
            }
            return to_numpy(r);
          },
          py::arg("X"))
      .def(
          "derivative",
          [](const attnreg::BinnedLocalPolynomial& self, const farray& X, int order) {
            const arma::mat x = as_mat(X, "X");
            arma::mat r;
            {
              py::gil_scoped_release nogil;
              r = self.derivative(x, order);
            }
            return to_numpy(r);
          },
          py::arg("X"), py::arg("order"))
      .def("fitted",
           [](const attnreg::BinnedLocalPolynomial& s) {
             arma::mat r;
             {
               py::gil_scoped_release nogil;
               r = s.fitted();
             }
             return to_numpy(r);
           })
      .def("approx_error",
           [](const attnreg::BinnedLocalPolynomial& s, std::size_t n_points, std::uint64_t seed) {
             attnreg::BinnedErrorEstimate e;
             {
               py::gil_scoped_release nogil;
               e = s.approx_error(n_points, seed);
             }
             return error_dict(e);
           },
           py::arg("n_points") = 200, py::arg("seed") = 0)
      .def("grid_shape", &attnreg::BinnedLocalPolynomial::grid_shape)
      .def("grid_nodes",
           [](const attnreg::BinnedLocalPolynomial& s, std::size_t c) {
             return to_numpy(s.grid_nodes(c));
           },
           py::arg("column"))
      .def("grid_fit", [](const attnreg::BinnedLocalPolynomial& s) { return to_numpy(s.grid_fit()); })
      .def("bandwidth", [](const attnreg::BinnedLocalPolynomial& s) { return to_numpy(s.bandwidth()); })
      .def("training_y", [](const attnreg::BinnedLocalPolynomial& s) { return to_numpy(s.training_y()); })
      .def_property_readonly("n_obs", &attnreg::BinnedLocalPolynomial::n_obs)
      .def(py::pickle(
          [](const attnreg::BinnedLocalPolynomial& s) {
            const auto& o = s.options();
            return py::make_tuple(1, o.degree, std::string(o.kernel.name()), o.ridge, o.grid_size,
                                  o.n_threads, to_numpy(s.training_x()), to_numpy(s.training_y()),
                                  to_numpy(s.bandwidth()), to_numpy(s.sample_weight()));
          },
          [](const py::tuple& t) {
            if (t.size() != 10 || t[0].cast<int>() != 1)
              throw py::value_error("state: not a saved attnreg BinnedLocalPolynomial");
            attnreg::BinnedLocalPolynomial m(binned_options(
                t[1].cast<int>(), t[2].cast<std::string>(), t[3].cast<double>(),
                t[4].cast<int>(), t[5].cast<int>()));
            m.fit(as_mat(t[6].cast<farray>(), "state"), as_mat(t[7].cast<farray>(), "state"),
                  as_vec(t[8].cast<farray>(), "state"), as_vec(t[9].cast<farray>(), "state"));
            return m;
          }));
}

static void init_binned_cv(py::module_& m) {
  m.def(
      "binned_cv_objective",
      [](const farray& X, const farray& y, const farray& bandwidth, int degree,
         const std::string& kernel, double ridge, int grid_size) {
        const arma::mat x = as_mat(X, "X");
        const arma::vec yv = as_vec(y, "y");
        const arma::vec bw = as_vec(bandwidth, "bandwidth");
        arma::vec g;
        double v;
        {
          py::gil_scoped_release nogil;
          attnreg::BinnedCVObjective obj(x, yv, degree, attnreg::Kernel::from_name(kernel, "kernel"),
                                         ridge, grid_size);
          v = obj(bw, &g);
        }
        return py::make_tuple(v, to_numpy(g));
      },
      py::arg("X"), py::arg("y"), py::arg("bandwidth"), py::arg("degree"), py::arg("kernel"),
      py::arg("ridge"), py::arg("grid_size"));
}
