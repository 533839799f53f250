// Python bindings for the least-squares core (attnreg::OLS). Thin: convert, call, convert back.
// The rest of the least-squares family (ridge, PCR, attention regression, masked attention)
// registers from py_least_squares.cpp through init_least_squares, called at the end of init_ols.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>

#include "attnreg/least_squares/least_squares.hpp"
#include "convert.hpp"
#include "least_squares_face.hpp"

namespace py = pybind11;
using attnreg_py::as_mat;
using attnreg_py::attention_into_numpy;
using attnreg_py::with_x;
using attnreg_py::farray;
using attnreg_py::to_numpy;

void init_least_squares(py::module_& m);
void init_ols_tall(py::module_& m);

namespace {

attnreg::Precision parse_precision(const std::string& s) {
  if (s == "auto") return attnreg::Precision::Auto;
  if (s == "double") return attnreg::Precision::Double;
  if (s == "extended") return attnreg::Precision::Extended;
  throw py::value_error("precision: must be \"auto\", \"double\" or \"extended\", got \"" + s + "\"");
}

using iarray = py::array_t<std::int64_t, py::array::f_style | py::array::forcecast>;

// Cluster codes (n, d) from the face (non-negative integers, one column per dimension).
arma::umat cluster_codes(const py::object& groups) {
  if (groups.is_none()) return arma::umat();
  const iarray a = groups.cast<iarray>();
  if (a.ndim() != 2) throw py::value_error("groups: internal codes must be a 2-D array");
  const auto n = static_cast<arma::uword>(a.shape(0)), d = static_cast<arma::uword>(a.shape(1));
  arma::umat out(n, d);
  const std::int64_t* p = a.data();
  for (arma::uword i = 0; i < n * d; ++i) {
    if (p[i] < 0) throw py::value_error("groups: cluster codes must be >= 0");
    out(i) = static_cast<arma::uword>(p[i]);
  }
  return out;
}

attnreg::CovOptions cov_options(const std::string& cov_type, int maxlags, bool hac_adjust,
                                const py::object& groups = py::none()) {
  attnreg::CovOptions c;
  c.type = attnreg::parse_cov_type(cov_type);
  c.maxlags = maxlags;
  c.hac_adjust = hac_adjust;
  c.clusters = cluster_codes(groups);
  return c;
}

py::tuple ols_getstate(const attnreg::OLS& m) {
  const attnreg::OLSState& s = m.state();
  return py::make_tuple(3, s.fit_intercept, s.rank_tol, to_numpy(s.qr), to_numpy(s.tau),
                        to_numpy(s.pivot), to_numpy(s.scale), to_numpy(s.coef), s.rank,
                        to_numpy(m.training_y()), to_numpy(s.cov_unscaled), s.extended,
                        to_numpy(s.weights), s.frequency_weights, to_numpy(s.fitted));
}

attnreg::OLS ols_setstate(const py::tuple& t) {
  // Version 2 (before weights): 12 entries; version 3 adds weights, their type and fitted values.
  const bool v2 = t.size() == 12 && t[0].cast<int>() == 2;
  const bool v3 = t.size() == 15 && t[0].cast<int>() == 3;
  if (!v2 && !v3) {
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
  if (v3) {
    s.weights = arma::vectorise(as_mat(t[12].cast<farray>(), "state"));
    s.frequency_weights = t[13].cast<bool>();
    s.fitted = as_mat(t[14].cast<farray>(), "state");
    if (s.weights.is_empty()) s.fitted.reset();
  }
  return attnreg::OLS::from_state(s, y);
}


}  // namespace

// The coefficient table as the face reads it (least_squares_face.hpp).
py::dict py_inference_dict(const attnreg::Inference& inf) {
  py::dict d;
  d["estimate"] = to_numpy(inf.estimate);
  d["std_error"] = to_numpy(inf.std_error);
  d["t_value"] = to_numpy(inf.t_value);
  d["p_value"] = to_numpy(inf.p_value);
  d["r_squared"] = to_numpy(inf.r_squared);
  d["adj_r_squared"] = to_numpy(inf.adj_r_squared);
  d["sigma"] = to_numpy(inf.sigma);
  d["df_residual"] = inf.df_residual;
  d["df_inference"] = inf.df_inference;
  d["n_clusters"] = inf.n_clusters;
  d["cov_type"] = attnreg::cov_type_name(inf.cov_type);
  d["maxlags"] = inf.maxlags;
  d["psd_fixed"] = inf.psd_fixed;
  d["psd_min_eigenvalue"] = inf.psd_min_eigenvalue;
  d["n_leverage_one"] = inf.n_leverage_one;
  return d;
}

// The covariance options a face's cov_type / maxlags / hac_adjust / groups name
// (least_squares_face.hpp).
attnreg::CovOptions py_cov_options(const std::string& cov_type, int maxlags, bool hac_adjust,
                                   const py::object& groups) {
  return cov_options(cov_type, maxlags, hac_adjust, groups);
}

void init_ols(py::module_& m) {
  init_ols_tall(m);
  py::class_<attnreg::OLS>(m, "OLS")
      .def(py::init([](bool fit_intercept, double rank_tol, int n_threads,
                       const std::string& precision, double extended_rank_tol,
                       const std::string& weight_type, bool prepare_q1) {
             attnreg::OLSOptions o;
             o.fit_intercept = fit_intercept;
             o.rank_tol = rank_tol;
             o.n_threads = n_threads;
             o.precision = parse_precision(precision);
             o.extended_rank_tol = extended_rank_tol;
             o.weight_type = attnreg::parse_weight_type(weight_type);
             o.prepare_q1 = prepare_q1;
             return attnreg::OLS(o);
           }),
           py::arg("fit_intercept") = true, py::arg("rank_tol") = 1e-7, py::arg("n_threads") = 0,
           py::arg("precision") = "auto", py::arg("extended_rank_tol") = 1e-11,
           py::arg("weight_type") = "analytic", py::arg("prepare_q1") = false)
      .def(
          "fit",
          [](attnreg::OLS& self, const farray& X, const farray& Y,
             const py::object& weights) -> attnreg::OLS& {
            const arma::mat x = as_mat(X, "X"), y = as_mat(Y, "y");
            arma::vec w;
            if (!weights.is_none()) {
              w = arma::vectorise(as_mat(weights.cast<farray>(), "sample_weight"));
              attnreg::check_weights(w, x.n_rows, "sample_weight");
            }
            py::gil_scoped_release nogil;
            return self.fit(x, y, w);
          },
          py::arg("X"), py::arg("Y"), py::arg("weights") = py::none(),
          py::return_value_policy::reference_internal)
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
          [](const attnreg::OLS& s, const std::string& cov_type, int maxlags, bool hac_adjust,
             const py::object& groups) {
            return to_numpy(s.std_errors(cov_options(cov_type, maxlags, hac_adjust, groups)));
          },
          py::arg("cov_type") = "nonrobust", py::arg("maxlags") = -1, py::arg("hac_adjust") = false,
          py::arg("groups") = py::none())
      .def(
          "covariance",
          [](const attnreg::OLS& s, const std::string& cov_type, int maxlags, bool hac_adjust,
             arma::uword output, const py::object& groups) {
            return to_numpy(s.covariance(cov_options(cov_type, maxlags, hac_adjust, groups), output));
          },
          py::arg("cov_type") = "nonrobust", py::arg("maxlags") = -1, py::arg("hac_adjust") = false,
          py::arg("output") = 0, py::arg("groups") = py::none())
      .def(
          "inference",
          [](const attnreg::OLS& s, const std::string& cov_type, int maxlags, bool hac_adjust,
             const py::object& groups) {
            return py_inference_dict(
                s.inference(cov_options(cov_type, maxlags, hac_adjust, groups)));
          },
          py::arg("cov_type") = "nonrobust", py::arg("maxlags") = -1, py::arg("hac_adjust") = false,
          py::arg("groups") = py::none())
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
      .def_property_readonly("n_effective", [](const attnreg::OLS& s) { return s.n_effective(); })
      .def_property_readonly("weighted", [](const attnreg::OLS& s) { return !s.weights().is_empty(); })
      .def_property_readonly("extended_precision",
                             [](const attnreg::OLS& s) { return s.extended_precision(); })
      .def("aliased", &attnreg::OLS::aliased)
      .def(py::pickle(&ols_getstate, &ols_setstate));

  init_least_squares(m);
}
