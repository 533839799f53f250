// Python bindings for least squares with absorbed fixed effects (attnreg::AbsorbedOLS).
// Thin: the Python face turns labels into 0-based integer codes; everything else is the core's.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "attnreg/least_squares/least_squares_fe.hpp"
#include "convert.hpp"
#include "least_squares_face.hpp"

namespace py = pybind11;
using attnreg_py::as_codes;
using attnreg_py::as_mat;
using attnreg_py::farray;
using attnreg_py::to_numpy;

namespace {

using attnreg_py::iarray;

py::dict wild_dict(const attnreg::WildBootstrapResult& r) {
  py::dict d;
  d["estimate"] = r.estimate;
  d["std_error"] = r.std_error;
  d["t_stat"] = r.t_stat;
  d["p_value"] = r.p_value;
  d["ci_lower"] = r.ci_lower;
  d["ci_upper"] = r.ci_upper;
  d["replications"] = r.replications;
  d["n_clusters"] = r.n_clusters;
  d["t_boot"] = to_numpy(arma::mat(r.t_boot));
  return d;
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
                       const std::string& precision, int n_threads, bool frequency_weights,
                       bool drop_singletons, bool k_adj, const std::string& k_fixef,
                       bool g_adj) {
             attnreg::AbsorbOptions o;
             o.drop_singletons = drop_singletons;
             o.ssc.k_adj = k_adj;
             o.ssc.k_fixef = attnreg::parse_fixef_k(k_fixef);
             o.ssc.g_adj = g_adj;
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
           py::arg("frequency_weights") = false, py::arg("drop_singletons") = false,
           py::arg("k_adj") = true, py::arg("k_fixef") = "nonnested", py::arg("g_adj") = true)
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
      .def_property_readonly("n_singletons",
                             [](const PyAbsorbed& s) { return s.model.n_singletons(); })
      .def("singletons", [](const PyAbsorbed& s) { return s.model.singletons(); })
      .def(
          "wild_bootstrap",
          [](const PyAbsorbed& s, const farray& R, double r, const iarray& groups,
             const farray& V, double level) {
            const arma::mat Rm = as_mat(R, "param"), Vm = as_mat(V, "weights");
            const arma::umat g = as_codes(groups, "groups");
            if (g.n_cols != 1) throw py::value_error("groups: one column (one-way clustering)");
            attnreg::WildBootstrapResult res;
            {
              py::gil_scoped_release nogil;
              res = s.model.wild_bootstrap(arma::vectorise(Rm), r, g.col(0), Vm, level);
            }
            return wild_dict(res);
          },
          py::arg("R"), py::arg("r"), py::arg("groups"), py::arg("V"), py::arg("level"))
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
            return py::make_tuple(2, o.tol, o.max_iter, o.accelerate, o.rank_tol,
                                  static_cast<int>(o.precision), o.n_threads, o.frequency_weights,
                                  to_numpy(s.X), to_numpy(s.Y), to_numpy(codes),
                                  to_numpy(s.weights), o.drop_singletons, o.ssc.k_adj,
                                  attnreg::fixef_k_name(o.ssc.k_fixef), o.ssc.g_adj);
          },
          [](const py::tuple& t) {
            // Version 1 (before drop_singletons and ssc): restored with singletons kept.
            const int version = t.size() >= 1 ? t[0].cast<int>() : 0;
            if (!((version == 1 && t.size() == 12) || (version == 2 && t.size() == 16))) {
              throw py::value_error("state: not an attnreg AbsorbedOLS state of this version");
            }
            attnreg::AbsorbOptions o;
            if (version == 2) {
              o.drop_singletons = t[12].cast<bool>();
              o.ssc.k_adj = t[13].cast<bool>();
              o.ssc.k_fixef = attnreg::parse_fixef_k(t[14].cast<std::string>());
              o.ssc.g_adj = t[15].cast<bool>();
            }
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

static void init_cluster_inference(py::module_& m) {
  m.def(
      "wild_cluster_bootstrap",
      [](const farray& X, const farray& y, const iarray& groups, const farray& R, double r,
         const farray& V, double level, double factor) {
        const arma::mat Xm = as_mat(X, "X"), ym = as_mat(y, "y"), Rm = as_mat(R, "param"),
                        Vm = as_mat(V, "weights");
        const arma::umat g = as_codes(groups, "groups");
        arma::uword G = 0;
        const arma::uvec codes = attnreg::dense_cluster_codes(g.col(0), G);
        attnreg::WildBootstrapResult res;
        {
          py::gil_scoped_release nogil;
          res = attnreg::wild_cluster_bootstrap(Xm, arma::vectorise(ym), codes, G,
                                                arma::vectorise(Rm), r, Vm, level, factor);
        }
        return wild_dict(res);
      },
      py::arg("X"), py::arg("y"), py::arg("groups"), py::arg("R"), py::arg("r"), py::arg("V"),
      py::arg("level"), py::arg("factor"),
      "Restricted wild cluster bootstrap of R'b = r for the least-squares fit of y on X "
      "(Roodman, MacKinnon, Nielsen and Webb 2019).");
  m.def("rademacher_enumeration",
        [](arma::uword G) { return to_numpy(attnreg::rademacher_enumeration(G)); },
        py::arg("G"));
  m.def(
      "cluster_jackknife",
      [](const farray& X, const farray& e, const iarray& groups) {
        const arma::mat Xm = as_mat(X, "X"), em = as_mat(e, "e");
        const arma::umat g = as_codes(groups, "groups");
        arma::uword G = 0;
        const arma::uvec codes = attnreg::dense_cluster_codes(g.col(0), G);
        return to_numpy(
            attnreg::cluster_jackknife(Xm, Xm.t() * Xm, arma::vectorise(em), codes, G));
      },
      py::arg("X"), py::arg("e"), py::arg("groups"),
      "CR3 jackknife covariance (G-1)/G sum_g (b_(g) - b)(b_(g) - b)' of the least-squares fit "
      "with design X and residuals e, in closed form.");
  m.def("singleton_rows",
        [](const iarray& codes) { return attnreg::singleton_rows(as_codes(codes, "absorb")); },
        py::arg("codes"));
}

static void init_absorbed_df(py::module_& m) {
  init_cluster_inference(m);
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
