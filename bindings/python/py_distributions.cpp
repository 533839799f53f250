// Python bindings of the core's distribution functions (attnreg/inference/distributions.hpp, Boost.Math),
// so that the Python summaries and intervals use the same quantiles and tails as the core.
#include <pybind11/pybind11.h>

#include "attnreg/inference/distributions.hpp"
#include "attnreg/least_squares/least_squares.hpp"

namespace py = pybind11;

void init_distributions(py::module_& m) {
  m.def("normal_quantile", &attnreg::normal_quantile, py::arg("p"),
        "Standard normal quantile (Boost.Math).");
  m.def("student_t_sf", &attnreg::student_t_sf, py::arg("t"), py::arg("df"),
        "Student t upper tail P(T > t) (Boost.Math; the normal tail for df = inf).");
  m.def("student_t_quantile", &attnreg::student_t_quantile, py::arg("p"), py::arg("df"),
        "Student t quantile (Boost.Math; the normal quantile for df = inf); nan for df <= 0.");
  m.def("fisher_f_sf", &attnreg::fisher_f_sf, py::arg("f"), py::arg("df1"), py::arg("df2"),
        "Fisher F upper tail P(F > f) (Boost.Math).");
}
