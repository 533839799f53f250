// Python bindings for instrumental-variables regression (attnreg::IVRegression). Thin: the
// Python face (attnreg.iv) parses formulas, encodes factor labels and names the columns.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "attnreg/least_squares/iv.hpp"
#include "convert.hpp"
#include "least_squares_face.hpp"

namespace py = pybind11;
using attnreg_py::as_mat;
using attnreg_py::farray;
using attnreg_py::to_numpy;

namespace {

using attnreg_py::iarray;

arma::umat iv_codes(const py::object& obj, arma::uword n_default, const char* name) {
  if (obj.is_none()) return arma::umat(n_default, 0);
  return attnreg_py::as_codes(obj.cast<iarray>(), name);
}

arma::mat owned(const farray& a, const char* name) {
  const arma::mat v = as_mat(a, name);
  return arma::mat(v.memptr(), v.n_rows, v.n_cols);
}

struct PyIV {
  attnreg::IVRegression model;
  arma::mat X1, X2, Z2;
  arma::vec y, w;
  arma::umat codes;
  std::vector<std::string> names;
};

attnreg::IVOptions iv_options(const std::string& estimator, double fuller, bool fit_intercept,
                              double rank_tol, double tol, int max_iter) {
  attnreg::IVOptions o;
  if (estimator == "2sls") {
    o.estimator = attnreg::IVEstimator::TSLS;
  } else if (estimator == "liml") {
    o.estimator = attnreg::IVEstimator::LIML;
  } else {
    throw py::value_error("estimator: must be \"2sls\" or \"liml\", got \"" + estimator + "\"");
  }
  o.fuller = fuller;
  o.fit_intercept = fit_intercept;
  o.rank_tol = rank_tol;
  o.absorb.tol = tol;
  o.absorb.max_iter = max_iter;
  o.absorb.rank_tol = rank_tol;
  return o;
}

py::dict test_dict(const attnreg::IVTest& t) {
  py::dict d;
  d["statistic"] = t.statistic;
  d["df1"] = t.df1;
  d["df2"] = t.df2;
  d["p_value"] = t.p_value;
  d["name"] = t.name;
  return d;
}

void do_fit(PyIV& s) {
  py::gil_scoped_release nogil;
  s.model.fit(s.X1, s.X2, s.Z2, s.y, s.codes, s.w, s.names);
}

}  // namespace

static void init_iv_results(py::class_<PyIV>& cls);

void init_iv(py::module_& m) {
  py::class_<PyIV> cls(m, "IVRegression");
  cls.def(py::init([](const std::string& estimator, double fuller, bool fit_intercept,
                      double rank_tol, double tol, int max_iter) {
            return PyIV{attnreg::IVRegression(
                            iv_options(estimator, fuller, fit_intercept, rank_tol, tol, max_iter)),
                        {}, {}, {}, {}, {}, {}, {}};
          }),
          py::arg("estimator") = "2sls", py::arg("fuller") = 0.0, py::arg("fit_intercept") = true,
          py::arg("rank_tol") = 1e-7, py::arg("tol") = 1e-10, py::arg("max_iter") = 10000)
      .def(
          "fit",
          [](PyIV& s, const farray& X1, const farray& X2, const farray& Z2, const farray& y,
             const py::object& codes, const py::object& weights,
             const std::vector<std::string>& names) -> PyIV& {
            s.X1 = owned(X1, "exog");
            s.X2 = owned(X2, "endog");
            s.Z2 = owned(Z2, "instruments");
            s.y = arma::vectorise(owned(y, "y"));
            s.codes = iv_codes(codes, s.y.n_elem, "absorb");
            if (weights.is_none()) {
              s.w.reset();
            } else {
              s.w = arma::vectorise(owned(weights.cast<farray>(), "sample_weight"));
            }
            s.names = names;
            do_fit(s);
            return s;
          },
          py::arg("X1"), py::arg("X2"), py::arg("Z2"), py::arg("y"), py::arg("codes") = py::none(),
          py::arg("weights") = py::none(), py::arg("names") = std::vector<std::string>{},
          py::return_value_policy::reference_internal)
      .def("coefficients", [](const PyIV& s) { return to_numpy(s.model.coefficients()); })
      .def_property_readonly("has_intercept", [](const PyIV& s) { return s.model.has_intercept(); })
      .def_property_readonly("k", [](const PyIV& s) { return s.model.k(); })
      .def_property_readonly("kappa", [](const PyIV& s) { return s.model.kappa(); })
      .def_property_readonly("n_obs", [](const PyIV& s) { return s.model.n_obs(); })
      .def_property_readonly("df_residual", [](const PyIV& s) { return s.model.df_residual(); })
      .def_property_readonly("df_absorbed", [](const PyIV& s) { return s.model.df_absorbed(); })
      .def("fitted", [](const PyIV& s) { return to_numpy(s.model.fitted()); })
      .def("residuals", [](const PyIV& s) { return to_numpy(s.model.residuals()); })
      .def("sigma2", [](const PyIV& s) { return s.model.sigma2(); })
      .def("r_squared", [](const PyIV& s) { return s.model.r_squared(); })
      .def("r_squared_within", [](const PyIV& s) { return s.model.r_squared_within(); });
  init_iv_results(cls);
}

// The inference, prediction and pickling methods (split from init_iv for length).
static void init_iv_results(py::class_<PyIV>& cls) {
  cls
      .def(
          "covariance",
          [](const PyIV& s, const std::string& cov_type, const py::object& groups) {
            return to_numpy(s.model.covariance(py_cov_options(cov_type, -1, false, groups)));
          },
          py::arg("cov_type") = "nonrobust", py::arg("groups") = py::none())
      .def(
          "inference",
          [](const PyIV& s, const std::string& cov_type, const py::object& groups) {
            return py_inference_dict(
                s.model.inference(py_cov_options(cov_type, -1, false, groups)));
          },
          py::arg("cov_type") = "nonrobust", py::arg("groups") = py::none())
      .def(
          "first_stage",
          [](const PyIV& s, const std::string& cov_type, const py::object& groups) {
            const attnreg::IVFirstStage f =
                s.model.first_stage(py_cov_options(cov_type, -1, false, groups));
            py::dict d;
            d["partial_r2"] = to_numpy(f.partial_r2);
            d["partial_f"] = to_numpy(f.partial_f);
            d["partial_f_pvalue"] = to_numpy(f.partial_f_pvalue);
            d["df1"] = f.df1;
            d["df2"] = f.df2;
            d["coef"] = to_numpy(f.coef);
            d["cragg_donald_f"] = f.cragg_donald_f;
            d["kleibergen_paap_rk"] = f.kleibergen_paap_rk;
            d["kleibergen_paap_f"] = f.kleibergen_paap_f;
            return d;
          },
          py::arg("cov_type") = "nonrobust", py::arg("groups") = py::none())
      .def(
          "overidentification",
          [](const PyIV& s, const std::string& cov_type, const py::object& groups) {
            return test_dict(
                s.model.overidentification(py_cov_options(cov_type, -1, false, groups)));
          },
          py::arg("cov_type") = "nonrobust", py::arg("groups") = py::none())
      .def("wu_hausman", [](const PyIV& s) { return test_dict(s.model.wu_hausman()); })
      .def("fixed_effects",
           [](const PyIV& s) {
             py::list out;
             for (const arma::vec& a : s.model.fixed_effects()) out.append(to_numpy(a));
             return out;
           })
      .def(
          "predict",
          [](const PyIV& s, const farray& X1, const farray& X2, const py::object& codes) {
            const arma::mat x1 = as_mat(X1, "exog"), x2 = as_mat(X2, "endog");
            const arma::umat c = iv_codes(codes, x2.n_rows, "absorb");
            arma::vec out;
            {
              py::gil_scoped_release nogil;
              out = s.model.predict(x1, x2, c);
            }
            return to_numpy(out);
          },
          py::arg("X1"), py::arg("X2"), py::arg("codes") = py::none())
      .def(
          "attention_weights",
          [](const PyIV& s, const farray& X1, const farray& X2, const py::object& codes) {
            const arma::mat x1 = as_mat(X1, "exog"), x2 = as_mat(X2, "endog");
            const arma::umat c = iv_codes(codes, x2.n_rows, "absorb");
            arma::mat out;
            {
              py::gil_scoped_release nogil;
              out = s.model.attention_weights(x1, x2, c);
            }
            return to_numpy(out);
          },
          py::arg("X1"), py::arg("X2"), py::arg("codes") = py::none())
      .def(py::pickle(
          [](const PyIV& s) {
            const attnreg::IVOptions& o = s.model.options();
            return py::make_tuple(
                1, o.estimator == attnreg::IVEstimator::LIML ? "liml" : "2sls", o.fuller,
                o.fit_intercept, o.rank_tol, o.absorb.tol, o.absorb.max_iter, to_numpy(s.X1),
                to_numpy(s.X2), to_numpy(s.Z2), to_numpy(s.y),
                to_numpy(arma::conv_to<arma::mat>::from(s.codes)), to_numpy(s.w), s.names);
          },
          [](const py::tuple& t) {
            if (t.size() != 14 || t[0].cast<int>() != 1) {
              throw py::value_error("state: not an attnreg IVRegression state of this version");
            }
            PyIV p{attnreg::IVRegression(iv_options(t[1].cast<std::string>(), t[2].cast<double>(),
                                                    t[3].cast<bool>(), t[4].cast<double>(),
                                                    t[5].cast<double>(), t[6].cast<int>())),
                   {}, {}, {}, {}, {}, {}, {}};
            p.X1 = owned(t[7].cast<farray>(), "state");
            p.X2 = owned(t[8].cast<farray>(), "state");
            p.Z2 = owned(t[9].cast<farray>(), "state");
            p.y = arma::vectorise(owned(t[10].cast<farray>(), "state"));
            p.codes = arma::conv_to<arma::umat>::from(owned(t[11].cast<farray>(), "state"));
            const arma::mat w = owned(t[12].cast<farray>(), "state");
            if (w.n_elem > 0) p.w = arma::vectorise(w);
            p.names = t[13].cast<std::vector<std::string>>();
            do_fit(p);
            return p;
          }));
}
