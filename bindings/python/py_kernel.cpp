// Python bindings for kernel regression (attnreg::LocalPolynomial) and the kernel value types.
// Thin: convert, call, convert back. The estimators' Python API lives in attnreg/kernel.py.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <optional>
#include <string>

#include "attnreg/kernels/kernel.hpp"
#include "attnreg/solve/local_fit.hpp"
#include "convert.hpp"
#include "options.hpp"

namespace py = pybind11;
namespace spec = attnreg::spec::local_fit;
using attnreg_py::as_mat;
using attnreg_py::as_vec;
using attnreg_py::farray;
using attnreg_py::to_numpy;

namespace {

constexpr int kStateVersion = 1;

attnreg::LocalFitOptions make_options(int degree, const std::string& kernel,
                                      const std::string& var_types,
                                      const std::string& unordered_kernel,
                                      const std::string& ordered_kernel, double ridge,
                                      const std::string& algorithm, double truncation,
                                      int n_threads, bool compute_fitted) {
  attnreg::LocalFitOptions o;
  o.compute_fitted = compute_fitted;
  o.degree = degree;
  o.kernel = attnreg_py::kernel_spec(kernel, var_types, unordered_kernel, ordered_kernel,
                                     n_threads, algorithm, truncation);
  o.ridge = ridge;
  return o;
}

py::tuple lp_getstate(const attnreg::LocalPolynomial& m) {
  const attnreg::LocalFitState s = m.state();
  return py::make_tuple(kStateVersion, s.degree, s.kernel, s.var_types, s.unordered_kernel,
                        s.ordered_kernel, s.ridge, s.algorithm, s.truncation, to_numpy(s.X),
                        to_numpy(s.Y), to_numpy(s.bandwidth), to_numpy(s.sample_weight),
                        to_numpy(s.fitted), to_numpy(s.leverage), to_numpy(s.loo),
                        to_numpy(s.loo_status), m.options().kernel.n_threads);
}

attnreg::LocalPolynomial lp_setstate(const py::tuple& t) {
  if (t.size() != 18 || t[0].cast<int>() != kStateVersion)
    throw py::value_error("state: not an attnreg local-polynomial state of this version");
  attnreg::LocalFitState s;
  s.degree = t[1].cast<int>();
  s.kernel = t[2].cast<std::string>();
  s.var_types = t[3].cast<std::string>();
  s.unordered_kernel = t[4].cast<std::string>();
  s.ordered_kernel = t[5].cast<std::string>();
  s.ridge = t[6].cast<double>();
  s.algorithm = t[7].cast<std::string>();
  s.truncation = t[8].cast<double>();
  s.X = as_mat(t[9].cast<farray>(), "state");
  s.Y = as_mat(t[10].cast<farray>(), "state");
  s.bandwidth = as_vec(t[11].cast<farray>(), "state");
  const arma::mat sw = as_mat(t[12].cast<farray>(), "state");
  if (sw.n_elem) s.sample_weight = arma::vec(sw.memptr(), sw.n_elem);
  s.fitted = as_mat(t[13].cast<farray>(), "state");
  const arma::mat lev = as_mat(t[14].cast<farray>(), "state");
  if (lev.n_elem) s.leverage = arma::vec(lev.memptr(), lev.n_elem);
  s.loo = as_mat(t[15].cast<farray>(), "state");
  const arma::mat ls = as_mat(t[16].cast<farray>(), "state");
  if (ls.n_elem) s.loo_status = arma::vec(ls.memptr(), ls.n_elem);
  if (s.fitted.n_elem == 0) s.fitted.reset();
  if (s.loo.n_elem == 0) s.loo.reset();
  attnreg::LocalPolynomial m = attnreg::LocalPolynomial::from_state(s);
  return m;
}

}  // namespace

void init_kernel(py::module_& m) {
  m.def(
      "kernel_constants",
      [](const std::string& name) {
        const attnreg::Kernel k = attnreg::Kernel::from_name(name, "kernel");
        py::dict d;
        d["name"] = std::string(k.name());
        d["mu2"] = k.mu2();
        d["roughness"] = k.roughness();
        d["support"] = k.support();
        d["constant"] = k.constant();
        return d;
      },
      py::arg("kernel"), "mu2(K), R(K), support radius and normalising constant of a kernel.");
  m.def(
      "kernel_values",
      [](const std::string& name, const farray& u) {
        const attnreg::Kernel k = attnreg::Kernel::from_name(name, "kernel");
        arma::vec x = as_vec(u, "u");
        for (arma::uword i = 0; i < x.n_elem; ++i) x(i) = k(x(i));
        return to_numpy(x);
      },
      py::arg("kernel"), py::arg("u"), "The kernel density K(u) at each u.");
  m.def("kernel_names", &attnreg::Kernel::names);
  // Largest valid lambda of a categorical kernel for a column with n_levels levels (summary
  // notes a lambda there: the variable is smoothed out).
  m.def(
      "categorical_max_bandwidth",
      [](const std::string& name, bool ordered, int n_levels) {
        return attnreg::CategoricalKernel::from_name(
                   name, ordered, ordered ? "ordered_kernel" : "unordered_kernel")
            .max_bandwidth(n_levels);
      },
      py::arg("name"), py::arg("ordered"), py::arg("n_levels"));

  py::class_<attnreg::LocalPolynomial>(m, "LocalPolynomial")
      .def(py::init([](int degree, const std::string& kernel, const std::string& var_types,
                       const std::string& unordered_kernel, const std::string& ordered_kernel,
                       double ridge, const std::string& algorithm, double truncation,
                       int n_threads, bool compute_fitted) {
             return attnreg::LocalPolynomial(make_options(degree, kernel, var_types,
                                                          unordered_kernel, ordered_kernel, ridge,
                                                          algorithm, truncation, n_threads,
                                                          compute_fitted));
           }),
           py::arg("degree") = spec::degree, py::arg("kernel") = spec::kernel,
           py::arg("var_types") = spec::var_types, py::arg("unordered_kernel") = spec::unordered_kernel,
           py::arg("ordered_kernel") = spec::ordered_kernel, py::arg("ridge") = spec::ridge,
           py::arg("algorithm") = spec::algorithm, py::arg("truncation") = spec::truncation,
           py::arg("n_threads") = spec::n_threads, py::arg("compute_fitted") = spec::compute_fitted)
      .def(
          "fit",
          [](attnreg::LocalPolynomial& self, const farray& X, const farray& Y,
             const farray& bandwidth,
             const std::optional<farray>& sample_weight) -> attnreg::LocalPolynomial& {
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
          [](const attnreg::LocalPolynomial& self, const farray& X) {
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
          "attention_weights",
          [](const attnreg::LocalPolynomial& self, const farray& X) {
            const arma::mat x = as_mat(X, "X");
            arma::mat r;
            {
              py::gil_scoped_release nogil;
              r = self.attention_weights(x);
            }
            return to_numpy(r);
          },
          py::arg("X"))
      .def(
          "gradient",
          [](const attnreg::LocalPolynomial& self, const farray& X) {
            const arma::mat x = as_mat(X, "X");
            arma::cube r;
            {
              py::gil_scoped_release nogil;
              r = self.gradient(x);
            }
            return to_numpy(r);
          },
          py::arg("X"))
      .def("fitted", [](const attnreg::LocalPolynomial& s) { return to_numpy(s.fitted()); })
      .def("residuals", [](const attnreg::LocalPolynomial& s) { return to_numpy(s.residuals()); })
      .def("leverage", [](const attnreg::LocalPolynomial& s) { return to_numpy(s.leverage()); })
      .def("loo_fitted", [](const attnreg::LocalPolynomial& s) { return to_numpy(s.loo_fitted()); })
      .def("cv_score", &attnreg::LocalPolynomial::cv_score)
      .def("effective_df", &attnreg::LocalPolynomial::effective_df)
      .def("trace_LtL", &attnreg::LocalPolynomial::trace_LtL)
      .def("training_y", [](const attnreg::LocalPolynomial& s) { return to_numpy(s.training_y()); })
      .def_property_readonly("n_distinct", &attnreg::LocalPolynomial::n_distinct)
      .def_property_readonly("statistics_evaluations",
                             &attnreg::LocalPolynomial::statistics_evaluations)
      .def("bandwidth", [](const attnreg::LocalPolynomial& s) { return to_numpy(s.bandwidth()); })
      .def_property_readonly("var_types", [](const attnreg::LocalPolynomial& s) {
        return attnreg::format_var_types(s.space().var_types());
      })
      .def_property_readonly("uses_neighbors", [](const attnreg::LocalPolynomial& s) {
        return s.space().uses_neighbors();
      })
      .def_property_readonly("n_obs", &attnreg::LocalPolynomial::n_obs)
      .def(py::pickle(&lp_getstate, &lp_setstate));
}
