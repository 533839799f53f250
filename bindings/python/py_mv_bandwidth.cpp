// Python bindings for the multivariate MSE/IMSE-optimal plug-in bandwidth vectors
// (attnreg/inference/rbc_bandwidth_multivariate.hpp). Thin: convert, call, convert back. The
// Python API is attnreg.bandwidth.mse_dpi / imse_dpi with a 2-D x.
#include <pybind11/pybind11.h>

#include <string>

#include "attnreg/inference/rbc_bandwidth_multivariate.hpp"
#include "convert.hpp"

namespace py = pybind11;
using attnreg_py::as_mat;
using attnreg_py::as_vec;
using attnreg_py::farray;
using attnreg_py::to_numpy;

void init_mv_bandwidth(py::module_& m) {
  m.def(
      "mse_dpi_multivariate",
      [](const farray& X, const farray& y, const farray& X_eval, int degree,
         const std::string& kernel, const farray& pilot_bandwidth, double bwregul,
         int bwcheck, bool absolute_bias) {
        attnreg::MvBwOptions o;
        o.degree = degree;
        o.kernel = attnreg::Kernel::from_name(kernel, "kernel");
        o.pilot_bandwidth = as_vec(pilot_bandwidth, "pilot_bandwidth");
        o.bwregul = bwregul;
        o.bwcheck = bwcheck;
        o.absolute_bias = absolute_bias;
        const attnreg::MvBwSelection r = attnreg::mse_dpi_multivariate(
            as_mat(X, "x"), as_vec(y, "y"), as_mat(X_eval, "eval_points"), o);
        py::dict d;
        d["eval"] = to_numpy(r.eval);
        d["h"] = to_numpy(r.h);
        d["c_common"] = to_numpy(r.c_common);
        d["h_imse"] = to_numpy(r.h_imse);
        d["c_imse_common"] = r.c_imse_common;
        d["pilot"] = to_numpy(r.pilot);
        d["pilot_used"] = to_numpy(r.pilot_used);
        d["scale"] = to_numpy(r.scale);
        d["range"] = to_numpy(r.range);
        d["bias_coef"] = to_numpy(r.bias_coef);
        d["bias_cov"] = to_numpy(r.bias_cov);
        d["variance_coef"] = to_numpy(r.variance_coef);
        d["sigma2"] = to_numpy(r.sigma2);
        d["density"] = to_numpy(r.density);
        return d;
      },
      py::arg("x"), py::arg("y"), py::arg("eval_points"), py::arg("degree") = 1,
      py::arg("kernel") = "gaussian", py::arg("pilot_bandwidth"), py::arg("bwregul") = 1.0,
      py::arg("bwcheck") = 0, py::arg("absolute_bias") = false);
  m.def(
      "mv_plugin_minimise",
      [](const farray& M, double V0, const farray& range, const farray& start) {
        return to_numpy(attnreg::mv_plugin_minimise(as_mat(M, "M"), V0, as_vec(range, "range"),
                                                    as_vec(start, "start")));
      },
      py::arg("M"), py::arg("V0"), py::arg("range"), py::arg("start"));
}
