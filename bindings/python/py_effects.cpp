// Python bindings for marginal effects (marginal_effects.hpp). Thin.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <utility>
#include <vector>
#include <string>

#include "attnreg/inference/marginal_effects.hpp"
#include "attnreg/inference/rbc_marginal_effects.hpp"
#include "convert.hpp"

namespace py = pybind11;

namespace {

py::dict rbc_dict(const attnreg::RbcGradientResult& r) {
  py::dict d;
  using Named = std::pair<const char*, const arma::mat*>;
  for (const auto& [name, M] : {Named{"estimate", &r.estimate}, Named{"se", &r.se},
                                Named{"bias", &r.bias}, Named{"estimate_bc", &r.estimate_bc},
                                Named{"se_bc", &r.se_bc}})
    d[name] = attnreg_py::to_numpy(*M);
  d["columns"] = r.columns;
  d["z"] = r.z;
  d["pilot_degree"] = r.pilot_degree;
  return d;
}

// The options of the RBC marginal effects from the binding's arguments (order 1 for level
// differences, which take no derivative).
attnreg::RbcGradientOptions rbc_options(const std::string& kind, double level, int order,
                                        int pilot_degree,
                                        const std::vector<double>& pilot_bandwidths) {
  attnreg::RbcGradientOptions o;
  o.kind = attnreg::variance_kind_from_name(kind, "cov_type");
  o.level = level;
  o.order = order;
  o.pilot_degree = pilot_degree;
  o.pilot_bandwidths = arma::vec(pilot_bandwidths);
  return o;
}

}  // namespace

void init_effects(py::module_& m) {
  m.def(
      "local_gradient",
      [](const attnreg::LocalPolynomial& model, const attnreg_py::farray& X, const std::string& se,
         int n_boot, std::uint64_t seed, bool average, int n_threads) {
        const arma::mat Xm = attnreg_py::as_mat(X, "X");
        attnreg::GradientOptions o;
        o.se = attnreg::gradient_se_from_name(se, "se");
        o.n_boot = n_boot;
        o.seed = seed;
        o.average = average;
        o.n_threads = n_threads;
        attnreg::GradientResult r;
        {
          py::gil_scoped_release nogil;
          r = attnreg::local_gradient(model, Xm, o);
        }
        py::dict d;
        d["gradient"] = attnreg_py::to_numpy(r.gradient);
        d["se"] = attnreg_py::to_numpy(r.se);
        d["average"] = attnreg_py::to_numpy(r.average);
        d["average_se"] = attnreg_py::to_numpy(r.average_se);
        return d;
      },
      py::arg("model"), py::arg("X"), py::arg("se") = "none", py::arg("n_boot") = 399,
      py::arg("seed") = 0, py::arg("average") = false, py::arg("n_threads") = 0);
  m.def(
      "rbc_gradient",
      [](const attnreg::LocalPolynomial& model, const attnreg_py::farray& X,
         const std::string& kind, double level, int order, int pilot_degree,
         const std::vector<double>& pilot_bandwidths,
         unsigned output) {
        const arma::mat Xm = attnreg_py::as_mat(X, "X");
        const attnreg::RbcGradientOptions o =
            rbc_options(kind, level, order, pilot_degree, pilot_bandwidths);
        attnreg::RbcGradientResult r;
        {
          py::gil_scoped_release nogil;
          r = attnreg::rbc_gradient(model, Xm, o, output);
        }
        return rbc_dict(r);
      },
      py::arg("model"), py::arg("X"), py::arg("kind") = "hc3", py::arg("level") = 0.95,
      py::arg("order") = 1, py::arg("pilot_degree") = -1,
      py::arg("pilot_bandwidths") = std::vector<double>(), py::arg("output") = 0);
  m.def(
      "rbc_average_gradient",
      [](const attnreg::LocalPolynomial& model, const attnreg_py::farray& X,
         const std::string& kind, double level, int order, int pilot_degree,
         const std::vector<double>& pilot_bandwidths, unsigned output) {
        const arma::mat Xm = attnreg_py::as_mat(X, "X");
        const attnreg::RbcGradientOptions o =
            rbc_options(kind, level, order, pilot_degree, pilot_bandwidths);
        attnreg::RbcGradientResult r;
        {
          py::gil_scoped_release nogil;
          r = attnreg::rbc_average_gradient(model, Xm, o, output);
        }
        return rbc_dict(r);
      },
      py::arg("model"), py::arg("X"), py::arg("kind") = "hc3", py::arg("level") = 0.95,
      py::arg("order") = 1, py::arg("pilot_degree") = -1,
      py::arg("pilot_bandwidths") = std::vector<double>(), py::arg("output") = 0);
  m.def(
      "rbc_level_difference",
      [](const attnreg::LocalPolynomial& model, const attnreg_py::farray& X, std::size_t column,
         double level_from, double level_to, bool average, const std::string& kind,
         double level, int pilot_degree, const std::vector<double>& pilot_bandwidths,
         unsigned output) {
        const arma::mat Xm = attnreg_py::as_mat(X, "X");
        const attnreg::RbcGradientOptions o =
            rbc_options(kind, level, attnreg::RbcGradientOptions().order, pilot_degree,
                        pilot_bandwidths);
        attnreg::RbcGradientResult r;
        {
          py::gil_scoped_release nogil;
          r = attnreg::rbc_level_difference(model, Xm, column, level_from, level_to, average, o,
                                            output);
        }
        return rbc_dict(r);
      },
      py::arg("model"), py::arg("X"), py::arg("column"), py::arg("level_from"),
      py::arg("level_to"), py::arg("average") = false, py::arg("kind") = "hc3",
      py::arg("level") = 0.95, py::arg("pilot_degree") = -1,
      py::arg("pilot_bandwidths") = std::vector<double>(), py::arg("output") = 0);
  m.def(
      "local_training_x",
      [](const attnreg::LocalPolynomial& model) { return attnreg_py::to_numpy(model.training_x()); },
      py::arg("model"));
}
