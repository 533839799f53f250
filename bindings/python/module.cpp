// attnreg Python extension module `attnreg._core`. Each capability registers itself from its
// own binding file; this file only wires them together and installs the interrupt checker.
#include <atomic>

#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "attnreg/base/error.hpp"
#include "attnreg/base/runtime.hpp"
#include "attnreg/base/build_info.hpp"
#include "attnreg/detail/simd_dispatch.hpp"

namespace py = pybind11;

void init_ols(py::module_& m);
void init_attention(py::module_& m);
void init_kernel(py::module_& m);
void init_bandwidth(py::module_& m);
void init_partials(py::module_& m);
void init_diagnostics(py::module_& m);
void init_semiparametric(py::module_& m);
void init_density(py::module_& m);
void init_effects(py::module_& m);
void init_binned(py::module_& m);
void init_fe(py::module_& m);
void init_iv(py::module_& m);
void init_ls_summary(py::module_& m);
void init_lp_bwselect(py::module_& m);
void init_montecarlo(py::module_& m);
void init_rfactor(py::module_& m);
void init_distributions(py::module_& m);
void init_options(py::module_& m);
void init_rd(py::module_& m);
void init_rdplot(py::module_& m);
void init_mv_bandwidth(py::module_& m);

PYBIND11_MODULE(_core, m) {
  m.doc() = "attnreg C++ core (thin bindings; see the attnreg package for the API)";
  // A bad ATTNREG_SIMD fails the import with its message (ImportError) instead of being ignored.
  attnreg::simd_dispatch::check_simd_policy();

  // Core errors -> Python exceptions. InvalidArgument derives from std::invalid_argument, which
  // pybind11 already maps to ValueError; NumericalError gets its own ArithmeticError subclass.
  static py::exception<attnreg::NumericalError> numerical_error(m, "NumericalError",
                                                               PyExc_ArithmeticError);
  numerical_error.attr("__doc__") =
      "A computation failed numerically (a singular or non-finite system, an overflow); the "
      "message names the input to change. Subclass of ArithmeticError.";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const attnreg::Interrupted& e) {
      PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
    } catch (const attnreg::NumericalError& e) {
      py::set_error(numerical_error, e.what());
    }
  });

  // Ctrl-C: the core polls this from its main thread only (see runtime.hpp). PyErr_CheckSignals
  // needs the GIL, which the calling thread holds unless a binding released it; bindings that
  // release the GIL re-acquire it in this callback.
  m.def("_cancel_all", &attnreg::cancel_all, py::arg("on"),
        "Make every running core computation (any thread) stop with Interrupted, until "
        "_cancel_all(False).");
  attnreg::set_interrupt_checker([]() {
    py::gil_scoped_acquire gil;
    return PyErr_CheckSignals() != 0;
  });

  // Progress: the core reports (done, total, label) from its main thread; attnreg._progress
  // decides whether and how to show it (tqdm, stderr, a callback). The callable is held in a
  // Python-owned slot (module attribute), never in the core's global, so nothing Python-side
  // outlives the interpreter. A failing progress display must never break a computation: its
  // exceptions are dropped, except Ctrl-C, which is re-armed for the core's next poll.
  // progress_on: checked before taking the GIL, so a computation nobody watches never waits
  // for it (threads of dask or of the user may hold the GIL meanwhile).
  static std::atomic<bool> progress_on{false};
  m.attr("_progress_callback") = py::none();
  attnreg::set_progress_reporter(
      [](std::size_t done, std::size_t total, const std::string& label) {
        if (!progress_on.load(std::memory_order_relaxed) || !Py_IsInitialized()) return;
        py::gil_scoped_acquire gil;
        try {
          py::object mod = py::module_::import("attnreg._core");
          py::object fn = mod.attr("_progress_callback");
          if (!fn.is_none()) fn(done, total, label);
        } catch (py::error_already_set& e) {
          if (e.matches(PyExc_KeyboardInterrupt)) PyErr_SetInterrupt();
        } catch (const std::exception&) {
        }
      });
  m.def(
      "_set_progress_reporter",
      [](py::object fn) {
        py::module_::import("attnreg._core").attr("_progress_callback") = fn;
        progress_on.store(!fn.is_none(), std::memory_order_relaxed);
      },
      py::arg("fn"),
      "Install fn(done, total, label) as the receiver of the core's progress reports (None: off).");

  m.def(
      "build_info",
      []() {
        const attnreg::BuildInfo b = attnreg::build_info();
        py::dict d;
        d["version"] = b.version;
        d["openmp"] = b.openmp;
        d["max_threads"] = b.max_threads;
        d["blas"] = b.blas;
        d["cuda_compiled"] = b.cuda_compiled;
        d["cuda_archs"] = b.cuda_archs;
        d["gpu_count"] = b.gpu_count;
        d["gpu_name"] = b.gpu_name;
        d["cuda_error"] = b.cuda_error;
        d["cuda"] = b.cuda;
        d["simd"] = b.simd;
        return d;
      },
      "Version, OpenMP threads, BLAS, whether CUDA is compiled in and a GPU is visible, SIMD target.");

  init_ols(m);
  init_attention(m);
  init_kernel(m);
  init_bandwidth(m);
  init_partials(m);
  init_diagnostics(m);
  init_semiparametric(m);
  init_density(m);
  init_effects(m);
  init_binned(m);
  init_fe(m);
  init_iv(m);
  init_ls_summary(m);
  init_lp_bwselect(m);
  init_montecarlo(m);
  init_rfactor(m);
  init_distributions(m);
  init_options(m);
  init_rd(m);
  init_rdplot(m);
  init_mv_bandwidth(m);
}
