// Python binding of the TSQR-factor solve (attnreg/least_squares/r_factor_solve.hpp), used by attnreg.dask's
// ols and ridge. Thin: convert, call, convert back.
#include <pybind11/pybind11.h>

#include "attnreg/least_squares/r_factor_solve.hpp"
#include "convert.hpp"

namespace py = pybind11;
using attnreg_py::as_mat;
using attnreg_py::farray;
using attnreg_py::to_numpy;

void init_rfactor(py::module_& m) {
  m.def(
      "r_factor_solve",
      [](const farray& R_D, const farray& R_Dy, double alpha, bool free_first) {
        return to_numpy(attnreg::r_factor_solve(as_mat(R_D, "R_D"), as_mat(R_Dy, "R_Dy"), alpha,
                                                free_first));
      },
      py::arg("R_D"), py::arg("R_Dy"), py::arg("alpha") = 0.0, py::arg("free_first") = true,
      "Least squares / ridge coefficients from the triangular factor of a TSQR of [D, Y].");
}
