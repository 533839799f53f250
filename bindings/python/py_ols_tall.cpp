// Python binding of the tall least-squares path (core/src/least_squares/ols_tall.cpp): X is read
// in place in whatever order numpy holds it (C or Fortran), never copied whole.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "attnreg/least_squares/ols_tall.hpp"
#include "convert.hpp"

namespace py = pybind11;
using attnreg_py::farray;
using attnreg_py::to_numpy;

void init_ols_tall(py::module_& m);
py::dict py_inference_dict(const attnreg::Inference& inf);  // py_ols.cpp

namespace {

using anyarray = py::array_t<double, py::array::forcecast>;  // any strides

attnreg::StridedMatrix strided(const anyarray& X) {
  if (X.ndim() != 2) throw py::value_error("X: must be a 2-D array (n_samples, n_features)");
  attnreg::StridedMatrix v;
  v.data = X.data();
  v.n_rows = static_cast<arma::uword>(X.shape(0));
  v.n_cols = static_cast<arma::uword>(X.shape(1));
  const auto s0 = X.strides(0), s1 = X.strides(1);
  if (s0 < 0 || s1 < 0 || s0 % 8 != 0 || s1 % 8 != 0) {
    throw py::value_error("X: needs non-negative strides of whole doubles (pass np.ascontiguousarray(X))");
  }
  v.row_stride = static_cast<arma::uword>(s0 / 8);
  v.col_stride = static_cast<arma::uword>(s1 / 8);
  return v;
}

}  // namespace

void init_ols_tall(py::module_& m) {
  m.def(
      "_ols_tall",
      [](const anyarray& X, const farray& y, const py::object& weights, bool fit_intercept,
         const std::string& cov_type, double rank_tol, const std::string& weight_type,
         bool double_precision) -> py::object {
        attnreg::OLSOptions o;
        o.fit_intercept = fit_intercept;
        o.rank_tol = rank_tol;
        o.weight_type = attnreg::parse_weight_type(weight_type);
        if (double_precision) o.precision = attnreg::Precision::Double;
        attnreg::CovOptions c;
        c.type = attnreg::parse_cov_type(cov_type);
        const attnreg::StridedMatrix v = strided(X);
        const arma::uword q = v.n_cols + (fit_intercept ? 1 : 0);
        if (!attnreg::ols_tall_applies(v.n_rows, q, o, c)) return py::none();
        const arma::vec w = weights.is_none() ? arma::vec()
                                              : attnreg_py::as_vec(weights.cast<farray>(), "weights");
        const attnreg::TallOLS r =
            attnreg::ols_tall(v, attnreg_py::as_vec(y, "y"), w, o, c);
        if (!r.done) return py::none();
        py::dict d;
        d["coef"] = to_numpy(r.coef);
        d["std_errors"] = to_numpy(r.std_errors);
        d["cov"] = to_numpy(r.cov);
        d["residuals"] = to_numpy(r.residuals);
        d["rank"] = r.rank;
        d["sigma2"] = r.sigma2;
        d["refinement_steps"] = r.refinement_steps;
        d["inference"] = py_inference_dict(r.inf);
        return d;
      },
      py::arg("X"), py::arg("y"), py::arg("weights") = py::none(), py::arg("fit_intercept") = true,
      py::arg("cov_type") = "HC3", py::arg("rank_tol") = 1e-7,
      py::arg("weight_type") = "analytic", py::arg("double_precision") = false,
      "Internal: least squares for tall designs (n >= 20,000, n >= 50 p) in three passes over X "
      "read in place; None where OLS.fit's path is needed (extended precision, HAC or clustered "
      "covariances, refinement not settled).");
}
