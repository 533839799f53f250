// Python binding of the option tables (attnreg/base/option_spec.hpp): attnreg._core.option_spec()
// returns one dict per option, its default as the Python value (None for "not given"), for the
// tests that check every public signature against it (python-package/tests/test_option_spec.py).
#include <pybind11/pybind11.h>

#include <cmath>
#include <string>

#include "attnreg/base/error.hpp"
#include "attnreg/base/option_spec.hpp"
#include "options.hpp"

namespace py = pybind11;

namespace attnreg_py {

/// The default of a row as a Python value: int, float, bool, str, or None.
py::object option_default(const attnreg::OptionSpec& r) {
  if (r.type == "int") return py::int_(static_cast<long long>(r.number));
  if (r.type == "double") return r.is_none ? py::object(py::none()) : py::object(py::float_(r.number));
  if (r.type == "bool") return py::bool_(r.flag);
  return py::str(r.text);
}

attnreg::OptionValues option_values(const py::kwargs& kw) {
  attnreg::OptionValues out;
  const py::object numpy_bool = py::module_::import("numpy").attr("bool_");
  for (const auto& item : kw) {
    const std::string name = py::str(item.first);
    const py::handle v = item.second;
    if (v.is_none()) continue;
    if (py::isinstance<py::bool_>(v) || py::isinstance(v, numpy_bool)) {
      out.set(name, v.cast<bool>());
    } else if (py::isinstance<py::str>(v)) {
      out.set(name, v.cast<std::string>());
    } else if (py::isinstance<py::float_>(v)) {
      const double d = v.cast<double>();
      if (!std::isfinite(d)) {
        throw attnreg::InvalidArgument(name + ": must be a finite number or None (for the "
                                       "default), got " +
                                       (std::isnan(d) ? "nan" : (d > 0 ? "inf" : "-inf")));
      }
      out.set(name, d);
    } else if (py::hasattr(v, "__index__")) {
      out.set(name, v.attr("__index__")().cast<long long>());
    } else {
      throw py::type_error(name + ": expected a number, bool or string, got " +
                           std::string(py::str(py::type::of(v).attr("__name__"))));
    }
  }
  return out;
}

attnreg::KernelSpec kernel_spec(const std::string& kernel, const std::string& var_types,
                                const std::string& unordered_kernel,
                                const std::string& ordered_kernel, int n_threads,
                                const std::string& algorithm, double truncation) {
  attnreg::KernelSpec k;
  k.kernel = attnreg::Kernel::from_name(kernel, "kernel");
  k.var_types = var_types;
  k.unordered_kernel =
      attnreg::CategoricalKernel::from_name(unordered_kernel, false, "unordered_kernel");
  k.ordered_kernel = attnreg::CategoricalKernel::from_name(ordered_kernel, true, "ordered_kernel");
  k.algorithm = attnreg::pair_algorithm_from_name(algorithm, "algorithm");
  k.truncation = truncation;
  k.n_threads = n_threads;
  return k;
}

attnreg::KernelSpec continuous_kernel_spec(const std::string& kernel, int n_threads,
                                           const std::string& algorithm, double truncation) {
  namespace table = attnreg::spec::local_fit;
  return kernel_spec(kernel, table::var_types, table::unordered_kernel, table::ordered_kernel,
                     n_threads, algorithm, truncation);
}

}  // namespace attnreg_py

void init_options(py::module_& m) {
  m.def(
      "option_spec",
      []() {
        py::list out;
        for (const attnreg::OptionSpec& r : attnreg::option_spec()) {
          py::dict d;
          d["family"] = r.family;
          d["name"] = r.name;
          d["type"] = r.type;
          d["default"] = attnreg_py::option_default(r);
          d["none_ok"] = r.none_ok;
          d["allowed"] = r.allowed;
          d["doc"] = r.doc;
          d["python"] = r.python;
          d["r"] = r.r;
          out.append(d);
        }
        return out;
      },
      "The user-facing options (family, name, type, default, none_ok, allowed, doc, and the "
      "faces' spellings python and r), one dict "
      "each, from the C++ option tables.");
}
