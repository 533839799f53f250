// Python bindings for the rest of the least-squares family: Ridge, PCR (one centred SVD),
// AttentionRegression (Goulet Coulombe 2025, arXiv:2504.09663, eq. 28), masked attention (eq. 35)
// and the recursive-versus-masked pseudo-out-of-sample comparison. Thin: convert, call, convert
// back.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "attnreg/least_squares/least_squares.hpp"
#include "attnreg/least_squares/least_squares_masked.hpp"
#include "attnreg/least_squares/least_squares_softmax.hpp"
#include "attnreg/least_squares/least_squares_spectral.hpp"
#include "convert.hpp"

namespace py = pybind11;
using attnreg_py::as_mat;
using attnreg_py::attention_into_numpy;
using attnreg_py::with_x;
using attnreg_py::farray;
using attnreg_py::to_numpy;

py::dict py_inference_dict(const attnreg::Inference& inf);
attnreg::CovOptions py_cov_options(const std::string& cov_type, int maxlags, bool hac_adjust,
                                   const py::object& groups);

namespace {


py::tuple spectral_getstate(const attnreg::SpectralState& s) {
  return py::make_tuple(2, s.fit_intercept, to_numpy(s.x_mean), to_numpy(s.y_mean),
                        to_numpy(s.U), to_numpy(s.s), to_numpy(s.V), to_numpy(s.y),
                        to_numpy(s.weights), to_numpy(s.Z));
}

attnreg::SpectralState spectral_setstate(const py::tuple& t) {
  // Version 1 (before weights): 8 entries; version 2 adds the weights and the scores Z.
  const bool v1 = t.size() == 8 && t[0].cast<int>() == 1;
  const bool v2 = t.size() == 10 && t[0].cast<int>() == 2;
  if (!v1 && !v2) {
    throw py::value_error("state: not an attnreg Ridge/PCR state of this version");
  }
  attnreg::SpectralState s;
  s.fit_intercept = t[1].cast<bool>();
  s.x_mean = arma::rowvec(arma::vectorise(as_mat(t[2].cast<farray>(), "state")).t());
  s.y_mean = arma::rowvec(arma::vectorise(as_mat(t[3].cast<farray>(), "state")).t());
  s.U = as_mat(t[4].cast<farray>(), "state");
  s.s = arma::vectorise(as_mat(t[5].cast<farray>(), "state"));
  s.V = as_mat(t[6].cast<farray>(), "state");
  s.y = as_mat(t[7].cast<farray>(), "state");
  if (v2) {
    s.weights = arma::vectorise(as_mat(t[8].cast<farray>(), "state"));
    if (!s.weights.is_empty()) {
      s.Z = as_mat(t[9].cast<farray>(), "state");
      if (s.Z.n_rows != s.y.n_rows) s.Z.reshape(s.y.n_rows, s.s.n_elem);
    }
  }
  return s;
}

arma::vec weights_arg(const py::object& weights, arma::uword n) {
  arma::vec w;
  if (!weights.is_none()) {
    w = arma::vectorise(as_mat(weights.cast<farray>(), "sample_weight"));
    attnreg::check_weights(w, n, "sample_weight");
  }
  return w;
}

// Methods shared by Ridge and PCR.
template <typename Cls, typename PyCls>
void add_spectral_methods(PyCls& c) {
  c.def(
       "predict",
       [](const Cls& s, const farray& X) {
         return with_x(X, [&](const arma::mat& x) { return s.predict(x); });
       },
       py::arg("X"))
      .def(
          "attention_weights",
          [](const Cls& s, const farray& X) { return attention_into_numpy(s, X); },
          py::arg("X"))
      .def(
          "factors",
          [](const Cls& s, const farray& X) {
            return with_x(X, [&](const arma::mat& x) { return s.factors(x); });
          },
          py::arg("X"))
      .def("training_factors", [](const Cls& s) { return to_numpy(s.training_factors()); })
      .def("embedding", [](const Cls& s) { return to_numpy(s.embedding()); })
      .def("coefficients", [](const Cls& s) { return to_numpy(s.coefficients()); })
      .def("hat_diagonal", [](const Cls& s) { return to_numpy(s.hat_diagonal()); })
      .def("effective_df", &Cls::effective_df)
      .def("fitted", [](const Cls& s) { return to_numpy(s.fitted()); })
      .def("singular_values", [](const Cls& s) { return to_numpy(s.singular_values()); })
      .def("principal_axes", [](const Cls& s) { return to_numpy(s.principal_axes()); })
      .def(
          "std_errors",
          [](const Cls& s, const std::string& cov_type, int maxlags, bool hac_adjust,
             const py::object& groups) {
            return to_numpy(s.std_errors(py_cov_options(cov_type, maxlags, hac_adjust, groups)));
          },
          py::arg("cov_type") = "nonrobust", py::arg("maxlags") = -1, py::arg("hac_adjust") = false,
          py::arg("groups") = py::none())
      .def(
          "covariance",
          [](const Cls& s, const std::string& cov_type, int maxlags, bool hac_adjust,
             arma::uword output, const py::object& groups) {
            return to_numpy(
                s.covariance(py_cov_options(cov_type, maxlags, hac_adjust, groups), output));
          },
          py::arg("cov_type") = "nonrobust", py::arg("maxlags") = -1, py::arg("hac_adjust") = false,
          py::arg("output") = 0, py::arg("groups") = py::none())
      .def(
          "inference",
          [](const Cls& s, const std::string& cov_type, int maxlags, bool hac_adjust,
             const py::object& groups) {
            return py_inference_dict(
                s.inference(py_cov_options(cov_type, maxlags, hac_adjust, groups)));
          },
          py::arg("cov_type") = "nonrobust", py::arg("maxlags") = -1, py::arg("hac_adjust") = false,
          py::arg("groups") = py::none())
      .def("sigma2", [](const Cls& s) { return to_numpy(s.sigma2()); })
      .def("residuals", [](const Cls& s) { return to_numpy(s.residuals()); })
      .def("weights", [](const Cls& s) { return to_numpy(s.weights()); })
      .def_property_readonly("df_residual", &Cls::df_residual)
      .def_property_readonly("n_effective", &Cls::n_effective)
      .def_property_readonly("n_obs", &Cls::n_obs)
      .def_property_readonly("weighted", [](const Cls& s) { return !s.weights().is_empty(); })
      .def(
          "masked_predictions",
          [](const Cls& s, bool strict) { return to_numpy(s.masked_predictions(strict)); },
          py::arg("strict") = false)
      .def(
          "masked_weights",
          [](const Cls& s, bool strict) { return to_numpy(s.masked_weights(strict)); },
          py::arg("strict") = false);
}

}  // namespace

static void init_ridge(py::module_& m);
static void init_pcr(py::module_& m);
static void init_attention_regression(py::module_& m);
static void init_masked_attention(py::module_& m);

void init_least_squares(py::module_& m) {
  init_ridge(m);
  init_pcr(m);
  init_attention_regression(m);
  init_masked_attention(m);
}

static void init_ridge(py::module_& m) {
  // ---------------------------------------------------------------- Ridge
  py::class_<attnreg::Ridge> ridge(m, "Ridge");
  ridge
      .def(py::init([](double lambda, bool fit_intercept, int n_threads,
                       const std::string& weight_type) {
             return attnreg::Ridge(attnreg::RidgeOptions{
                 fit_intercept, lambda, n_threads, attnreg::parse_weight_type(weight_type)});
           }),
           py::arg("alpha") = 1.0, py::arg("fit_intercept") = true, py::arg("n_threads") = 0,
           py::arg("weight_type") = "analytic")
      .def(
          "fit",
          [](attnreg::Ridge& self, const farray& X, const farray& Y,
             const py::object& weights) -> attnreg::Ridge& {
            const arma::mat x = as_mat(X, "X"), y = as_mat(Y, "y");
            const arma::vec w = weights_arg(weights, x.n_rows);
            py::gil_scoped_release nogil;
            return self.fit(x, y, w);
          },
          py::arg("X"), py::arg("Y"), py::arg("weights") = py::none(),
          py::return_value_policy::reference_internal)
      .def(
          "fit_select",
          [](attnreg::Ridge& self, const farray& X, const farray& Y, const farray& alphas,
             const std::string& criterion, const py::object& weights) {
            const arma::mat x = as_mat(X, "X"), y = as_mat(Y, "y");
            const arma::vec a = arma::vectorise(as_mat(alphas, "alpha"));
            const attnreg::RidgeCriterion crit = attnreg::parse_ridge_criterion(criterion);
            const arma::vec w = weights_arg(weights, x.n_rows);
            attnreg::RidgeSelection sel;
            {
              py::gil_scoped_release nogil;
              sel = self.fit_select(x, y, a, crit, w);
            }
            py::dict d;
            d["alphas"] = to_numpy(sel.lambdas);
            d["loo_mse"] = to_numpy(sel.loo_mse);
            d["gcv"] = to_numpy(sel.gcv);
            d["aicc"] = to_numpy(sel.aicc);
            d["effective_df"] = to_numpy(sel.effective_df);
            d["best"] = sel.best;
            return d;
          },
          py::arg("X"), py::arg("Y"), py::arg("alphas"), py::arg("criterion") = "loo",
          py::arg("weights") = py::none())
      .def("set_alpha", &attnreg::Ridge::set_lambda, py::arg("alpha"))
      .def_property_readonly("alpha", &attnreg::Ridge::lambda)
      .def(
          "path",
          [](const attnreg::Ridge& self, const farray& alphas) {
            const arma::cube c = self.path(arma::vectorise(as_mat(alphas, "alpha")));
            // (q, k, G) column-major -> numpy (G, k, q) C-order has the same bytes.
            py::array_t<double> out({static_cast<py::ssize_t>(c.n_slices),
                                     static_cast<py::ssize_t>(c.n_cols),
                                     static_cast<py::ssize_t>(c.n_rows)});
            if (c.n_elem) std::memcpy(out.mutable_data(), c.memptr(), c.n_elem * sizeof(double));
            return out;
          },
          py::arg("alphas"))
      .def("loo_predictions", [](const attnreg::Ridge& s) { return to_numpy(s.loo_predictions()); })
      .def(py::pickle(
          [](const attnreg::Ridge& s) {
            return py::make_tuple(s.lambda(), s.fit_intercept(), spectral_getstate(s.state()),
                                  s.weight_type() == attnreg::WeightType::Frequency);
          },
          [](const py::tuple& t) {
            // 3 entries before the weight type was kept (analytic then).
            if (t.size() != 3 && t.size() != 4) {
              throw py::value_error("state: not an attnreg Ridge state");
            }
            const attnreg::SpectralState st = spectral_setstate(t[2].cast<py::tuple>());
            const bool freq = t.size() == 4 && t[3].cast<bool>();
            return attnreg::Ridge::from_state(
                attnreg::RidgeOptions{t[1].cast<bool>(), t[0].cast<double>(), 0,
                                      freq ? attnreg::WeightType::Frequency
                                           : attnreg::WeightType::Analytic},
                st);
          }));
  add_spectral_methods<attnreg::Ridge>(ridge);
}

static void init_pcr(py::module_& m) {
  // ---------------------------------------------------------------- PCR
  py::class_<attnreg::PCR> pcr(m, "PCR");
  pcr.def(py::init([](int rank, bool fit_intercept, int n_threads,
                       const std::string& weight_type) {
            return attnreg::PCR(attnreg::PCROptions{rank, fit_intercept, n_threads,
                                                    attnreg::parse_weight_type(weight_type)});
          }),
          py::arg("rank") = -1, py::arg("fit_intercept") = true, py::arg("n_threads") = 0,
          py::arg("weight_type") = "analytic")
      .def(
          "fit",
          [](attnreg::PCR& self, const farray& X, const farray& Y,
             const py::object& weights) -> attnreg::PCR& {
            const arma::mat x = as_mat(X, "X"), y = as_mat(Y, "y");
            const arma::vec w = weights_arg(weights, x.n_rows);
            py::gil_scoped_release nogil;
            return self.fit(x, y, w);
          },
          py::arg("X"), py::arg("Y"), py::arg("weights") = py::none(),
          py::return_value_policy::reference_internal)
      .def_property_readonly("rank", &attnreg::PCR::rank)
      .def("explained_variance_ratio",
           [](const attnreg::PCR& s) { return to_numpy(s.explained_variance_ratio()); })
      .def(py::pickle(
          [](const attnreg::PCR& s) {
            return py::make_tuple(s.rank(), s.fit_intercept(), spectral_getstate(s.state()),
                                  s.weight_type() == attnreg::WeightType::Frequency);
          },
          [](const py::tuple& t) {
            if (t.size() != 3 && t.size() != 4) {
              throw py::value_error("state: not an attnreg PCR state");
            }
            const attnreg::SpectralState st = spectral_setstate(t[2].cast<py::tuple>());
            const bool freq = t.size() == 4 && t[3].cast<bool>();
            return attnreg::PCR::from_state(
                attnreg::PCROptions{t[0].cast<int>(), t[1].cast<bool>(), 0,
                                    freq ? attnreg::WeightType::Frequency
                                         : attnreg::WeightType::Analytic},
                st);
          }));
  add_spectral_methods<attnreg::PCR>(pcr);
}

static void init_attention_regression(py::module_& m) {
  // ---------------------------------------------------------------- AttentionRegression
  using AR = attnreg::AttentionRegression;
  auto ar_options = [](int rank, bool fit_intercept, bool standardize, int n_starts,
                       std::uint64_t seed, int max_iter, double tol, double init_scale,
                       int n_threads) {
    attnreg::AttentionRegressionOptions o;
    o.rank = rank;
    o.fit_intercept = fit_intercept;
    o.standardize = standardize;
    o.n_starts = n_starts;
    o.seed = seed;
    o.max_iter = max_iter;
    o.tol = tol;
    o.init_scale = init_scale;
    o.n_threads = n_threads;
    return o;
  };
  py::class_<AR>(m, "AttentionRegression")
      .def(py::init([ar_options](int rank, bool fit_intercept, bool standardize, int n_starts,
                                 std::uint64_t seed, int max_iter, double tol, double init_scale,
                                 int n_threads) {
             return AR(ar_options(rank, fit_intercept, standardize, n_starts, seed, max_iter, tol,
                                  init_scale, n_threads));
           }),
           py::arg("rank") = 2, py::arg("fit_intercept") = true, py::arg("standardize") = true,
           py::arg("n_starts") = 4, py::arg("seed") = 0, py::arg("max_iter") = 300,
           py::arg("tol") = 1e-6, py::arg("init_scale") = 1.0, py::arg("n_threads") = 0)
      .def(
          "fit",
          [](AR& self, const farray& X, const farray& Y) -> AR& {
            const arma::mat x = as_mat(X, "X"), y = as_mat(Y, "y");
            py::gil_scoped_release nogil;
            return self.fit(x, y);
          },
          py::arg("X"), py::arg("Y"), py::return_value_policy::reference_internal)
      .def(
          "predict",
          [](const AR& s, const farray& X) {
            return with_x(X, [&](const arma::mat& x) { return s.predict(x); });
          },
          py::arg("X"))
      .def(
          "attention_weights",
          [](const AR& s, const farray& X) {
            return with_x(X, [&](const arma::mat& x) { return s.attention_weights(x); });
          },
          py::arg("X"))
      .def("loo_predictions", [](const AR& s) { return to_numpy(s.loo_predictions()); })
      .def("embedding", [](const AR& s) { return to_numpy(s.embedding()); })
      .def("encoder", [](const AR& s) { return to_numpy(s.encoder()); })
      .def_property_readonly("objective", &AR::objective)
      .def("start_objectives", [](const AR& s) { return to_numpy(s.start_objectives()); })
      .def_property_readonly("n_evals", &AR::n_evals)
      .def_property_readonly("iterations", &AR::iterations)
      .def_property_readonly("converged", &AR::converged)
      .def_property_readonly("message", &AR::message)
      .def(py::pickle(
          [](const AR& s) {
            const attnreg::AttentionRegressionOptions& o = s.options();
            const AR::State st = s.state();
            return py::make_tuple(1, o.rank, o.fit_intercept, o.standardize, o.n_starts, o.seed,
                                  o.max_iter, o.tol, o.init_scale, to_numpy(st.mean),
                                  to_numpy(st.sd), to_numpy(st.W), to_numpy(st.Dz), to_numpy(st.Y),
                                  st.objective);
          },
          [ar_options](const py::tuple& t) {
            if (t.size() != 15 || t[0].cast<int>() != 1) {
              throw py::value_error("state: not an attnreg AttentionRegression state");
            }
            const attnreg::AttentionRegressionOptions o = ar_options(
                t[1].cast<int>(), t[2].cast<bool>(), t[3].cast<bool>(), t[4].cast<int>(),
                t[5].cast<std::uint64_t>(), t[6].cast<int>(), t[7].cast<double>(),
                t[8].cast<double>(), 0);
            AR::State st;
            st.mean = arma::rowvec(arma::vectorise(as_mat(t[9].cast<farray>(), "state")).t());
            st.sd = arma::rowvec(arma::vectorise(as_mat(t[10].cast<farray>(), "state")).t());
            st.W = as_mat(t[11].cast<farray>(), "state");
            st.Dz = as_mat(t[12].cast<farray>(), "state");
            st.Y = as_mat(t[13].cast<farray>(), "state");
            st.objective = t[14].cast<double>();
            return AR::from_state(o, st);
          }));

  m.def(
      "attention_regression_objective",
      [](const farray& D, const farray& Y, const farray& W) {
        arma::mat G;
        const double f = attnreg::attention_regression_objective(as_mat(D, "D"), as_mat(Y, "y"),
                                                                 as_mat(W, "W"), &G);
        return py::make_tuple(f, to_numpy(G));
      },
      py::arg("D"), py::arg("Y"), py::arg("W"));
}

static void init_masked_attention(py::module_& m) {
  // ---------------------------------------------------------------- masked attention (eq. 35)
  m.def(
      "masked_attention_predict",
      [](const farray& F, const farray& Y, bool strict) {
        return to_numpy(attnreg::masked_attention_predict(as_mat(F, "F"), as_mat(Y, "y"), strict));
      },
      py::arg("F"), py::arg("Y"), py::arg("strict") = false);
  m.def(
      "pseudo_out_of_sample",
      [](const farray& X, const farray& Y, bool fit_intercept, double ridge, arma::uword start,
         bool keep_weights) {
        const arma::mat x = as_mat(X, "X"), y = as_mat(Y, "y");
        attnreg::PseudoOOSResult r;
        {
          py::gil_scoped_release nogil;
          r = attnreg::pseudo_out_of_sample(
              x, y, attnreg::PseudoOOSOptions{fit_intercept, ridge, start, keep_weights});
        }
        py::dict d;
        d["rows"] = to_numpy(arma::conv_to<arma::vec>::from(r.rows));
        d["y"] = to_numpy(r.y);
        d["recursive"] = to_numpy(r.recursive);
        d["masked"] = to_numpy(r.masked);
        d["in_sample"] = to_numpy(r.in_sample);
        d["mse_recursive"] = to_numpy(r.mse_recursive);
        d["mse_masked"] = to_numpy(r.mse_masked);
        d["mse_in_sample"] = to_numpy(r.mse_in_sample);
        d["weight_gap"] = to_numpy(r.weight_gap);
        if (keep_weights) {
          d["weights_recursive"] = to_numpy(r.weights_recursive);
          d["weights_masked"] = to_numpy(r.weights_masked);
        }
        return d;
      },
      py::arg("X"), py::arg("Y"), py::arg("fit_intercept") = true, py::arg("ridge") = 0.0,
      py::arg("start") = 0, py::arg("keep_weights") = false);
}
