// Python bindings for least squares with absorbed fixed effects (attnreg::AbsorbedOLS).
// Thin: the Python face turns labels into 0-based integer codes; everything else is the core's.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "attnreg/least_squares/least_squares_fe.hpp"
#include "convert.hpp"

namespace py = pybind11;
using attnreg_py::as_mat;
using attnreg_py::farray;
using attnreg_py::to_numpy;

attnreg::CovOptions py_cov_options(const std::string& cov_type, int maxlags, bool hac_adjust,
                                   const py::object& groups);  // py_ols.cpp
py::dict py_inference_dict(const attnreg::Inference& inf);      // py_ols.cpp

namespace {

using iarray = py::array_t<long long, py::array::f_style | py::array::forcecast>;

arma::umat as_codes(const iarray& a, const char* name) {
  if (a.ndim() != 1 && a.ndim() != 2) {
    throw py::value_error(std::string(name) + ": expected a 1-D or 2-D array of level codes");
  }
  const arma::uword n = static_cast<arma::uword>(a.shape(0));
  const arma::uword k = a.ndim() == 2 ? static_cast<arma::uword>(a.shape(1)) : 1;
  arma::umat out(n, k);
  const long long* p = a.data();
  for (arma::uword i = 0; i < n * k; ++i) {
    if (p[i] < 0) throw py::value_error(std::string(name) + ": level codes must be >= 0");
    out(i) = static_cast<arma::uword>(p[i]);
  }
  return out;
}

attnreg::CovOptions cov_options(const std::string& cov_type, int maxlags, bool hac_adjust,
                                const py::object& groups) {
  return py_cov_options(cov_type, maxlags, hac_adjust, groups);
}

attnreg::Precision parse_precision(const std::string& s) {
  if (s == "auto") return attnreg::Precision::Auto;
  if (s == "double") return attnreg::Precision::Double;
  if (s == "extended") return attnreg::Precision::Extended;
  throw py::value_error("precision: must be \"auto\", \"double\" or \"extended\", got \"" + s + "\"");
}

// The model refits from its inputs on unpickling (deterministic), so the state is the data.
struct PyAbsorbed {
  attnreg::AbsorbedOLS model;
  arma::mat X, Y;
  arma::umat codes;
  arma::vec weights;
};


}  // namespace

static void init_absorbed_ols(py::module_& m);
static void init_absorbed_ols_inference(py::class_<PyAbsorbed>& cls);
static void init_absorbed_df(py::module_& m);

void init_fe(py::module_& m) {
  init_absorbed_ols(m);
  init_absorbed_df(m);
}

static void init_absorbed_ols(py::module_& m) {
  py::class_<PyAbsorbed> cls(m, "AbsorbedOLS");
  cls
      .def(py::init([](double tol, int max_iter, bool accelerate, double rank_tol,
                       const std::string& precision, int n_threads, bool frequency_weights) {
             attnreg::AbsorbOptions o;
             o.tol = tol;
             o.max_iter = max_iter;
             o.accelerate = accelerate;
             o.rank_tol = rank_tol;
             o.precision = parse_precision(precision);
             o.n_threads = n_threads;
             o.frequency_weights = frequency_weights;
             PyAbsorbed p{attnreg::AbsorbedOLS(o), {}, {}, {}, {}};
             return p;
           }),
           py::arg("tol") = 1e-10, py::arg("max_iter") = 10000, py::arg("accelerate") = true,
           py::arg("rank_tol") = 1e-7, py::arg("precision") = "auto", py::arg("n_threads") = 0,
           py::arg("frequency_weights") = false)
      .def(
          "fit",
          [](PyAbsorbed& self, const farray& X, const farray& Y, const iarray& codes,
             const py::object& weights) -> PyAbsorbed& {
            // Owned copies (as_mat views numpy memory): kept for pickling the fitted model.
            const arma::mat xv = as_mat(X, "X"), yv = as_mat(Y, "y");
            self.X = arma::mat(xv.memptr(), xv.n_rows, xv.n_cols);
            self.Y = arma::mat(yv.memptr(), yv.n_rows, yv.n_cols);
            self.codes = as_codes(codes, "absorb");
            if (weights.is_none()) {
              self.weights.reset();
            } else {
              const farray wa = weights.cast<farray>();
              const arma::mat wv = as_mat(wa, "sample_weight");
              self.weights = arma::vec(wv.memptr(), wv.n_elem);
            }
            py::gil_scoped_release nogil;
            self.model.fit(self.X, self.Y, self.codes, self.weights);
            return self;
          },
          py::arg("X"), py::arg("Y"), py::arg("codes"), py::arg("weights") = py::none(),
          py::return_value_policy::reference_internal)
      .def("coefficients", [](const PyAbsorbed& s) { return to_numpy(s.model.coefficients()); })
      .def("absorbed", [](const PyAbsorbed& s) { return s.model.absorbed(); })
      .def("aliased", [](const PyAbsorbed& s) { return s.model.aliased(); })
      .def_property_readonly("rank", [](const PyAbsorbed& s) { return s.model.rank(); })
      .def_property_readonly("n_obs", [](const PyAbsorbed& s) { return s.model.n_obs(); })
      .def_property_readonly("df_residual", [](const PyAbsorbed& s) { return s.model.df_residual(); })
      .def_property_readonly("iterations", [](const PyAbsorbed& s) { return s.model.iterations(); })
      .def_property_readonly("converged", [](const PyAbsorbed& s) { return s.model.converged(); })
      .def_property_readonly("n_levels", [](const PyAbsorbed& s) { return s.model.factors().n_levels; })
      .def("df_info",
           [](const PyAbsorbed& s) {
             const attnreg::AbsorbedDF& d = s.model.df_info();
             py::dict out;
             out["levels"] = d.levels;
             out["redundant"] = d.redundant;
             out["components"] = d.components;
             out["exact"] = d.exact;
             out["df_absorbed"] = d.df_absorbed();
             return out;
           })
      .def("fitted", [](const PyAbsorbed& s) { return to_numpy(s.model.fitted()); })
      .def("residuals", [](const PyAbsorbed& s) { return to_numpy(s.model.residuals()); })
      .def("sigma2", [](const PyAbsorbed& s) { return to_numpy(s.model.sigma2()); })
      .def("r_squared_within", [](const PyAbsorbed& s) { return to_numpy(s.model.r_squared_within()); });
  init_absorbed_ols_inference(cls);
}

// The inference methods and pickling of AbsorbedOLS (split from init_absorbed_ols for length).
static void init_absorbed_ols_inference(py::class_<PyAbsorbed>& cls) {
  cls
      .def(
          "std_errors",
          [](const PyAbsorbed& s, const std::string& cov_type, int maxlags, bool hac_adjust,
             const py::object& groups) {
            return to_numpy(s.model.std_errors(cov_options(cov_type, maxlags, hac_adjust, groups)));
          },
          py::arg("cov_type") = "nonrobust", py::arg("maxlags") = -1, py::arg("hac_adjust") = false,
          py::arg("groups") = py::none())
      .def(
          "covariance",
          [](const PyAbsorbed& s, const std::string& cov_type, int maxlags, bool hac_adjust,
             arma::uword output, const py::object& groups) {
            return to_numpy(
                s.model.covariance(cov_options(cov_type, maxlags, hac_adjust, groups), output));
          },
          py::arg("cov_type") = "nonrobust", py::arg("maxlags") = -1, py::arg("hac_adjust") = false,
          py::arg("output") = 0, py::arg("groups") = py::none())
      .def(
          "inference",
          [](const PyAbsorbed& s, const std::string& cov_type, int maxlags, bool hac_adjust,
             const py::object& groups) {
            return py_inference_dict(
                s.model.inference(cov_options(cov_type, maxlags, hac_adjust, groups)));
          },
          py::arg("cov_type") = "nonrobust", py::arg("maxlags") = -1, py::arg("hac_adjust") = false,
          py::arg("groups") = py::none())
      .def("fixed_effects",
           [](const PyAbsorbed& s) {
             py::list out;
             for (const arma::mat& a : s.model.fixed_effects()) out.append(to_numpy(a));
             return out;
           })
      .def(
          "predict",
          [](const PyAbsorbed& s, const farray& X, const iarray& codes) {
            const arma::mat x = as_mat(X, "X");
            const arma::umat c = as_codes(codes, "absorb");
            arma::mat out;
            {
              py::gil_scoped_release nogil;
              out = s.model.predict(x, c);
            }
            return to_numpy(out);
          },
          py::arg("X"), py::arg("codes"))
      .def(
          "attention_weights",
          [](const PyAbsorbed& s, const farray& X, const iarray& codes) {
            const arma::mat x = as_mat(X, "X");
            const arma::umat c = as_codes(codes, "absorb");
            arma::mat out;
            {
              py::gil_scoped_release nogil;
              out = s.model.attention_weights(x, c);
            }
            return to_numpy(out);
          },
          py::arg("X"), py::arg("codes"))
      .def(py::pickle(
          [](const PyAbsorbed& s) {
            const attnreg::AbsorbOptions& o = s.model.options();
            arma::mat codes = arma::conv_to<arma::mat>::from(s.codes);
            return py::make_tuple(1, o.tol, o.max_iter, o.accelerate, o.rank_tol,
                                  static_cast<int>(o.precision), o.n_threads, o.frequency_weights,
                                  to_numpy(s.X), to_numpy(s.Y), to_numpy(codes),
                                  to_numpy(s.weights));
          },
          [](const py::tuple& t) {
            if (t.size() != 12 || t[0].cast<int>() != 1) {
              throw py::value_error("state: not an attnreg AbsorbedOLS state of this version");
            }
            attnreg::AbsorbOptions o;
            o.tol = t[1].cast<double>();
            o.max_iter = t[2].cast<int>();
            o.accelerate = t[3].cast<bool>();
            o.rank_tol = t[4].cast<double>();
            o.precision = static_cast<attnreg::Precision>(t[5].cast<int>());
            o.n_threads = t[6].cast<int>();
            o.frequency_weights = t[7].cast<bool>();
            PyAbsorbed p{attnreg::AbsorbedOLS(o), {}, {}, {}, {}};
            const farray xa = t[8].cast<farray>(), ya = t[9].cast<farray>(),
                         ca = t[10].cast<farray>(), wa = t[11].cast<farray>();
            const arma::mat xv = as_mat(xa, "state"), yv = as_mat(ya, "state"),
                            cv = as_mat(ca, "state"), wv = as_mat(wa, "state");
            p.X = arma::mat(xv.memptr(), xv.n_rows, xv.n_cols);
            p.Y = arma::mat(yv.memptr(), yv.n_rows, yv.n_cols);
            p.codes = arma::conv_to<arma::umat>::from(cv);
            if (wv.n_elem > 0) p.weights = arma::vec(wv.memptr(), wv.n_elem);
            p.model.fit(p.X, p.Y, p.codes, p.weights);
            return p;
          }));
}

static void init_absorbed_df(py::module_& m) {
  m.def(
      "absorbed_df_clustered",
      [](const iarray& codes, const iarray& clusters) {
        const attnreg::Factors f = attnreg::Factors::from_codes(as_codes(codes, "absorb"));
        const attnreg::AbsorbedDF df = attnreg::absorbed_df(f);
        return attnreg::absorbed_df_clustered(f, df, as_codes(clusters, "groups"));
      },
      py::arg("codes"), py::arg("clusters"),
      "Absorbed parameters counted under cluster-robust inference (fixest's fixef.K = "
      "\"nested\": factors nested in a cluster variable are not counted).");
}
