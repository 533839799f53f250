// Python bindings for the least-squares core (attnreg::OLS). Thin: convert, call, convert back.
// The rest of the least-squares family (ridge, PCR, attention regression, masked attention)
// registers from py_least_squares.cpp through init_least_squares, called at the end of init_ols.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "attnreg/least_squares.hpp"
#include "convert.hpp"

namespace py = pybind11;
using attnreg_py::as_mat;
using attnreg_py::attention_into_numpy;
using attnreg_py::with_x;
using attnreg_py::farray;
using attnreg_py::to_numpy;

void init_least_squares(py::module_& m);

namespace {

attnreg::Precision parse_precision(const std::string& s) {
  if (s == "auto") return attnreg::Precision::Auto;
  if (s == "double") return attnreg::Precision::Double;
  if (s == "extended") return attnreg::Precision::Extended;
  throw py::value_error("precision: must be \"auto\", \"double\" or \"extended\", got \"" + s + "\"");
}

attnreg::CovOptions cov_options(const std::string& cov_type, int maxlags, bool hac_adjust) {
  attnreg::CovOptions c;
  c.type = attnreg::parse_cov_type(cov_type);
  c.maxlags = maxlags;
  c.hac_adjust = hac_adjust;
  return c;
}

py::tuple ols_getstate(const attnreg::OLS& m) {
  const attnreg::OLSState& s = m.state();
  return py::make_tuple(2, s.fit_intercept, s.rank_tol, to_numpy(s.qr), to_numpy(s.tau),
                        to_numpy(s.pivot), to_numpy(s.scale), to_numpy(s.coef), s.rank,
                        to_numpy(m.training_y()), to_numpy(s.cov_unscaled), s.extended);
}

attnreg::OLS ols_setstate(const py::tuple& t) {
  if (t.size() != 12 || t[0].cast<int>() != 2) {
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
  s.cov_unscaled = as_mat(t[10].cast<farray>(), "state");
  s.extended = t[11].cast<bool>();
  return attnreg::OLS::from_state(s, y);
}


}  // namespace

void init_ols(py::module_& m) {
  py::class_<attnreg::OLS>(m, "OLS")
      .def(py::init([](bool fit_intercept, double rank_tol, int n_threads,
                       const std::string& precision, double extended_rank_tol) {
             attnreg::OLSOptions o;
             o.fit_intercept = fit_intercept;
             o.rank_tol = rank_tol;
             o.n_threads = n_threads;
             o.precision = parse_precision(precision);
             o.extended_rank_tol = extended_rank_tol;
             return attnreg::OLS(o);
           }),
           py::arg("fit_intercept") = true, py::arg("rank_tol") = 1e-7, py::arg("n_threads") = 0,
           py::arg("precision") = "auto", py::arg("extended_rank_tol") = 1e-11)
      .def(
          "fit",
          [](attnreg::OLS& self, const farray& X, const farray& Y) -> attnreg::OLS& {
            const arma::mat x = as_mat(X, "X"), y = as_mat(Y, "y");
            py::gil_scoped_release nogil;
            return self.fit(x, y);
          },
          py::arg("X"), py::arg("Y"), py::return_value_policy::reference_internal)
      .def(
          "predict",
          [](const attnreg::OLS& self, const farray& X) {
            return with_x(X, [&](const arma::mat& x) { return self.predict(x); });
          },
          py::arg("X"))
      .def(
          "attention_weights",
          [](const attnreg::OLS& self, const farray& X) { return attention_into_numpy(self, X); },
          py::arg("X"))
      .def(
          "factors",
          [](const attnreg::OLS& self, const farray& X) {
            return with_x(X, [&](const arma::mat& x) { return self.factors(x); });
          },
          py::arg("X"))
      .def("training_factors", [](const attnreg::OLS& s) { return to_numpy(s.training_factors()); })
      .def("encoder", [](const attnreg::OLS& s) { return to_numpy(s.encoder()); })
      .def("eigenvalues", [](const attnreg::OLS& s) { return to_numpy(s.eigenvalues()); })
      .def("embedding", [](const attnreg::OLS& s) { return to_numpy(s.embedding()); })
      .def("coefficients", [](const attnreg::OLS& s) { return to_numpy(s.coefficients()); })
      .def(
          "std_errors",
          [](const attnreg::OLS& s, const std::string& cov_type, int maxlags, bool hac_adjust) {
            return to_numpy(s.std_errors(cov_options(cov_type, maxlags, hac_adjust)));
          },
          py::arg("cov_type") = "nonrobust", py::arg("maxlags") = -1, py::arg("hac_adjust") = false)
      .def(
          "covariance",
          [](const attnreg::OLS& s, const std::string& cov_type, int maxlags, bool hac_adjust,
             arma::uword output) {
            return to_numpy(s.covariance(cov_options(cov_type, maxlags, hac_adjust), output));
          },
          py::arg("cov_type") = "nonrobust", py::arg("maxlags") = -1, py::arg("hac_adjust") = false,
          py::arg("output") = 0)
      .def(
          "inference",
          [](const attnreg::OLS& s, const std::string& cov_type, int maxlags, bool hac_adjust) {
            const attnreg::Inference inf = s.inference(cov_options(cov_type, maxlags, hac_adjust));
            py::dict d;
            d["estimate"] = to_numpy(inf.estimate);
            d["std_error"] = to_numpy(inf.std_error);
            d["t_value"] = to_numpy(inf.t_value);
            d["p_value"] = to_numpy(inf.p_value);
            d["r_squared"] = to_numpy(inf.r_squared);
            d["adj_r_squared"] = to_numpy(inf.adj_r_squared);
            d["sigma"] = to_numpy(inf.sigma);
            d["df_residual"] = inf.df_residual;
            d["cov_type"] = attnreg::cov_type_name(inf.cov_type);
            d["maxlags"] = inf.maxlags;
            return d;
          },
          py::arg("cov_type") = "nonrobust", py::arg("maxlags") = -1, py::arg("hac_adjust") = false)
      .def("sigma2", [](const attnreg::OLS& s) { return to_numpy(s.sigma2()); })
      .def("unscaled_covariance",
           [](const attnreg::OLS& s) { return to_numpy(s.unscaled_covariance()); })
      .def("fitted", [](const attnreg::OLS& s) { return to_numpy(s.fitted()); })
      .def("residuals", [](const attnreg::OLS& s) { return to_numpy(s.residuals()); })
      .def("hat_diagonal", [](const attnreg::OLS& s) { return to_numpy(s.hat_diagonal()); })
      .def("loo_predictions", [](const attnreg::OLS& s) { return to_numpy(s.loo_predictions()); })
      .def(
          "masked_predictions",
          [](const attnreg::OLS& s, bool strict) { return to_numpy(s.masked_predictions(strict)); },
          py::arg("strict") = false)
      .def(
          "masked_weights",
          [](const attnreg::OLS& s, bool strict) { return to_numpy(s.masked_weights(strict)); },
          py::arg("strict") = false)
      .def_property_readonly("rank", [](const attnreg::OLS& s) { return s.rank(); })
      .def_property_readonly("n_obs", [](const attnreg::OLS& s) { return s.n_obs(); })
      .def_property_readonly("extended_precision",
                             [](const attnreg::OLS& s) { return s.extended_precision(); })
      .def("aliased", &attnreg::OLS::aliased)
      .def(py::pickle(&ols_getstate, &ols_setstate));

  init_least_squares(m);
}
