// Python bindings for the least-squares core (attnreg::OLS). Thin: convert, call, convert back.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "attnreg/least_squares.hpp"
#include "convert.hpp"

namespace py = pybind11;
using attnreg_py::as_mat;
using attnreg_py::farray;
using attnreg_py::to_numpy;

namespace {

py::tuple ols_getstate(const attnreg::OLS& m) {
  const attnreg::OLSState& s = m.state();
  return py::make_tuple(1, s.fit_intercept, s.rank_tol, to_numpy(s.qr), to_numpy(s.tau),
                        to_numpy(s.pivot), to_numpy(s.scale), to_numpy(s.coef), s.rank,
                        to_numpy(m.training_y()));
}

attnreg::OLS ols_setstate(const py::tuple& t) {
  if (t.size() != 10 || t[0].cast<int>() != 1) {
    throw py::value_error("state: not an attnreg OLS state of this version");
  }
  attnreg::OLSState s;
  s.fit_intercept = t[1].cast<bool>();
  s.rank_tol = t[2].cast<double>();
  s.qr = as_mat(t[3].cast<farray>(), "state");
  s.tau = arma::vec(as_mat(t[4].cast<farray>(), "state"));
  s.pivot = arma::vec(as_mat(t[5].cast<farray>(), "state"));
  s.scale = arma::vec(as_mat(t[6].cast<farray>(), "state"));
  s.coef = as_mat(t[7].cast<farray>(), "state");
  s.rank = t[8].cast<double>();
  const arma::mat y = as_mat(t[9].cast<farray>(), "state");
  return attnreg::OLS::from_state(s, y);
}

}  // namespace

void init_ols(py::module_& m) {
  py::class_<attnreg::OLS>(m, "OLS")
      .def(py::init([](bool fit_intercept, double rank_tol, int n_threads) {
             return attnreg::OLS(attnreg::OLSOptions{fit_intercept, rank_tol, n_threads});
           }),
           py::arg("fit_intercept") = true, py::arg("rank_tol") = 1e-7, py::arg("n_threads") = 0)
      .def(
          "fit",
          [](attnreg::OLS& self, const farray& X, const farray& Y) -> attnreg::OLS& {
            const arma::mat x = as_mat(X, "X"), y = as_mat(Y, "y");
            py::gil_scoped_release nogil;
            return self.fit(x, y);
          },
          py::arg("X"), py::arg("Y"), py::return_value_policy::reference_internal)
      .def(
          "predict", [](const attnreg::OLS& self, const farray& X) {
            return to_numpy(self.predict(as_mat(X, "X")));
          },
          py::arg("X"))
      .def(
          "attention_weights",
          [](const attnreg::OLS& self, const farray& X) {
            const arma::mat x = as_mat(X, "X");
            arma::mat A;
            {
              py::gil_scoped_release nogil;
              A = self.attention_weights(x);
            }
            return to_numpy(A);
          },
          py::arg("X"))
      .def("coefficients", [](const attnreg::OLS& s) { return to_numpy(s.coefficients()); })
      .def("std_errors", [](const attnreg::OLS& s) { return to_numpy(s.std_errors()); })
      .def("sigma2", [](const attnreg::OLS& s) { return to_numpy(s.sigma2()); })
      .def("unscaled_covariance",
           [](const attnreg::OLS& s) { return to_numpy(s.unscaled_covariance()); })
      .def("fitted", [](const attnreg::OLS& s) { return to_numpy(s.fitted()); })
      .def("residuals", [](const attnreg::OLS& s) { return to_numpy(s.residuals()); })
      .def_property_readonly("rank", [](const attnreg::OLS& s) { return s.rank(); })
      .def_property_readonly("n_obs", [](const attnreg::OLS& s) { return s.n_obs(); })
      .def("aliased", &attnreg::OLS::aliased)
      .def(py::pickle(&ols_getstate, &ols_setstate));
}
