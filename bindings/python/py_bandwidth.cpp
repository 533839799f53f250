// Python bindings for the plug-in bandwidth rules (plugin_bandwidth.hpp). Thin.
#include <pybind11/pybind11.h>

#include "attnreg/plugin_bandwidth.hpp"
#include "convert.hpp"

namespace py = pybind11;

void init_bandwidth(py::module_& m) {
  m.def(
      "dpi_local_linear",
      [](const attnreg_py::farray& x, const attnreg_py::farray& y, int blockmax, int divisor,
         double trim, double proptrun, int gridsize, bool binned) {
        const arma::vec xv = arma::vec(attnreg_py::as_mat(x, "x"));
        const arma::vec yv = arma::vec(attnreg_py::as_mat(y, "y"));
        attnreg::DpiOptions o{blockmax, divisor, trim, proptrun, gridsize, binned};
        attnreg::DpiResult r;
        {
          py::gil_scoped_release nogil;
          r = attnreg::dpi_local_linear(xv, yv, o);
        }
        py::dict d;
        d["bandwidth"] = r.bandwidth;
        d["sigma2"] = r.sigma2;
        d["theta22"] = r.theta22;
        d["sigma2_blocks"] = r.sigma2_blocks;
        d["theta24_blocks"] = r.theta24_blocks;
        d["n_blocks"] = r.n_blocks;
        d["gamma"] = r.gamma;
        d["lambda"] = r.lambda;
        d["n_used"] = static_cast<double>(r.n_used);
        return d;
      },
      py::arg("x"), py::arg("y"), py::arg("blockmax") = 5, py::arg("divisor") = 20,
      py::arg("trim") = 0.01, py::arg("proptrun") = 0.05, py::arg("gridsize") = 401,
      py::arg("binned") = true);
}
