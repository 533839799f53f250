// Python bindings for the Calonico-Cattaneo-Farrell plug-in bandwidths (attnreg/bandwidth/lp_bwselect.hpp).
// Thin: convert, call, convert back. The Python API is attnreg.diagnostics.mse_dpi / imse_dpi.
#include <pybind11/pybind11.h>

#include <string>

#include "attnreg/bandwidth/lp_bwselect.hpp"
#include "convert.hpp"

namespace py = pybind11;
using attnreg_py::as_vec;
using attnreg_py::farray;
using attnreg_py::to_numpy;

void init_lp_bwselect(py::module_& m) {
  m.def(
      "lp_bwselect",
      [](const farray& x, const farray& y, const farray& eval_points, bool imse, int degree,
         int deriv, const std::string& kernel, const std::string& kind, int nnmatch, int bwcheck,
         double bwregul, bool interior) {
        attnreg::LpBwOptions o;
        o.degree = degree;
        o.deriv = deriv;
        o.kernel = attnreg::Kernel::from_name(kernel, "kernel");
        o.kind = attnreg::variance_kind_from_name(kind, "kind");
        o.nnmatch = nnmatch;
        o.bwcheck = bwcheck;
        o.bwregul = bwregul;
        o.interior = interior;
        const arma::vec xv = as_vec(x, "x"), yv = as_vec(y, "y"),
                        ev = as_vec(eval_points, "eval_points");
        const attnreg::LpBwSelection r =
            imse ? attnreg::lp_imse_dpi(xv, yv, ev, o) : attnreg::lp_mse_dpi(xv, yv, ev, o);
        py::dict d;
        d["eval"] = to_numpy(r.eval);
        d["h"] = to_numpy(r.h);
        d["b"] = to_numpy(r.b);
        d["h_imse"] = r.h_imse;
        d["b_imse"] = r.b_imse;
        return d;
      },
      py::arg("x"), py::arg("y"), py::arg("eval_points"), py::arg("imse") = false,
      py::arg("degree") = 1, py::arg("deriv") = 0, py::arg("kernel") = "epanechnikov",
      py::arg("kind") = "nn", py::arg("nnmatch") = 3, py::arg("bwcheck") = 21,
      py::arg("bwregul") = 1.0, py::arg("interior") = false);

  m.def(
      "lp_bw_piece",
      [](const farray& x, const farray& y, double c, int o, int nu, int o_B, double h_V,
         double h_B1, double h_B2, double scale, const std::string& kernel,
         const std::string& kind) {
        attnreg::LpBwOptions opt;
        opt.kernel = attnreg::Kernel::from_name(kernel, "kernel");
        opt.kind = attnreg::variance_kind_from_name(kind, "kind");
        const attnreg::LpBwPiece P = attnreg::lp_bw_piece(as_vec(x, "x"), as_vec(y, "y"), c, o,
                                                          nu, o_B, h_V, h_B1, h_B2, scale, opt);
        py::dict d;
        d["V"] = P.V;
        d["B1"] = P.B1;
        d["B2"] = P.B2;
        d["R"] = P.R;
        d["bw"] = P.bw;
        return d;
      },
      py::arg("x"), py::arg("y"), py::arg("c"), py::arg("o"), py::arg("nu"), py::arg("o_B"),
      py::arg("h_V"), py::arg("h_B1"), py::arg("h_B2"), py::arg("scale"),
      py::arg("kernel") = "epanechnikov", py::arg("kind") = "nn");
}
