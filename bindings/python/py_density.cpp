// Python bindings for kernel densities (density.hpp). Thin: arrays in, arrays / dicts out.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>

#include "attnreg/density/density.hpp"
#include "attnreg/base/error.hpp"
#include "convert.hpp"

namespace py = pybind11;

namespace {

attnreg::DensityKind kind_from(const std::string& s) {
  if (s == "density") return attnreg::DensityKind::density;
  if (s == "conditional_density") return attnreg::DensityKind::conditional_density;
  if (s == "conditional_distribution") return attnreg::DensityKind::conditional_distribution;
  throw attnreg::InvalidArgument("kind: unknown '" + s +
                                 "' (density, conditional_density or conditional_distribution)");
}

arma::mat opt_mat(const py::object& o, const char* name) {
  if (o.is_none()) return arma::mat();
  // The cast may make a Fortran-order copy that dies with this call: copy its values (a move
  // from as_mat's view would keep pointing at that freed buffer).
  const attnreg_py::farray a = o.cast<attnreg_py::farray>();
  const arma::mat view = attnreg_py::as_mat(a, name);
  return arma::mat(view.memptr(), view.n_rows, view.n_cols);
}

attnreg::DensityOptions options(const std::string& kernel, const std::string& unordered_kernel,
                                const std::string& ordered_kernel, int n_starts,
                                std::uint64_t seed, int n_threads,
                                const std::string& y_ordered_kernel) {
  attnreg::DensityOptions o;
  o.kernel = attnreg::Kernel::from_name(kernel, "kernel");
  o.unordered = attnreg::CategoricalKernel::from_name(unordered_kernel, false, "unordered_kernel");
  o.ordered = attnreg::CategoricalKernel::from_name(ordered_kernel, true, "ordered_kernel");
  o.ordered_y = attnreg::CategoricalKernel::from_name(y_ordered_kernel, true, "y_ordered_kernel");
  o.n_starts = n_starts;
  o.seed = seed;
  o.n_threads = n_threads;
  return o;
}

// Every function takes the training data the same way.
#define ATTNREG_DENSITY_DATA_ARGS                                                             \
  py::arg("kind"), py::arg("X"), py::arg("x_types"), py::arg("Y"), py::arg("y_types"),       \
      py::arg("kernel") = "gaussian", py::arg("unordered_kernel") = "aitchison_aitken",      \
      py::arg("ordered_kernel") = "wang_van_ryzin", py::arg("n_starts") = 3,                 \
      py::arg("seed") = 0, py::arg("n_threads") = 0,                                         \
      py::arg("y_ordered_kernel") = "wang_van_ryzin"

}  // namespace

void init_density(py::module_& m) {
  m.def(
      "density_select",
      [](const std::string& kind, const attnreg_py::farray& X, const std::string& x_types,
         const py::object& Y, const std::string& y_types, const std::string& kernel,
         const std::string& uk, const std::string& ok, int n_starts, std::uint64_t seed,
         int n_threads, const std::string& yok, const std::string& method) {
        const attnreg::DensityData data(kind_from(kind), attnreg_py::as_mat(X, "X"), x_types,
                                        opt_mat(Y, "y"), y_types,
                                        options(kernel, uk, ok, n_starts, seed, n_threads, yok));
        const attnreg::DensityMethod mth = attnreg::density_method_from_name(method, "bandwidth");
        attnreg::DensityBandwidthResult r;
        {
          py::gil_scoped_release nogil;
          r = attnreg::select_density_bandwidth(data, mth);
        }
        py::dict d;
        d["bandwidth"] = attnreg_py::to_numpy(r.bandwidth);
        d["objective"] = r.objective;
        d["method"] = r.method;
        d["n_evals"] = r.n_evals;
        d["converged"] = r.converged;
        d["message"] = r.message;
        d["lower"] = attnreg_py::to_numpy(r.lower);
        d["upper"] = attnreg_py::to_numpy(r.upper);
        d["at_bound"] = py::cast(r.at_bound);
        return d;
      },
      ATTNREG_DENSITY_DATA_ARGS, py::arg("method"));

  m.def(
      "density_objective",
      [](const std::string& kind, const attnreg_py::farray& X, const std::string& x_types,
         const py::object& Y, const std::string& y_types, const std::string& kernel,
         const std::string& uk, const std::string& ok, int n_starts, std::uint64_t seed,
         int n_threads, const std::string& yok, const std::string& method,
         const attnreg_py::farray& bandwidth) {
        const attnreg::DensityData data(kind_from(kind), attnreg_py::as_mat(X, "X"), x_types,
                                        opt_mat(Y, "y"), y_types,
                                        options(kernel, uk, ok, n_starts, seed, n_threads, yok));
        const arma::mat b = attnreg_py::as_mat(bandwidth, "bandwidth");
        const arma::vec bw(b.memptr(), b.n_elem);
        const attnreg::DensityObjective obj(data,
                                            attnreg::density_method_from_name(method, "method"));
        arma::vec g;
        double v;
        {
          py::gil_scoped_release nogil;
          v = obj(bw, &g);
        }
        return py::make_tuple(v, attnreg_py::to_numpy(g));
      },
      ATTNREG_DENSITY_DATA_ARGS, py::arg("method"), py::arg("bandwidth"));

  m.def(
      "density_evaluate",
      [](const std::string& kind, const attnreg_py::farray& X, const std::string& x_types,
         const py::object& Y, const std::string& y_types, const std::string& kernel,
         const std::string& uk, const std::string& ok, int n_starts, std::uint64_t seed,
         int n_threads, const std::string& yok, const attnreg_py::farray& bandwidth,
         const attnreg_py::farray& Xq,
         const py::object& Yq) {
        const attnreg::DensityData data(kind_from(kind), attnreg_py::as_mat(X, "X"), x_types,
                                        opt_mat(Y, "y"), y_types,
                                        options(kernel, uk, ok, n_starts, seed, n_threads, yok));
        const arma::mat b = attnreg_py::as_mat(bandwidth, "bandwidth");
        const arma::vec bw(b.memptr(), b.n_elem);
        const arma::mat xq = attnreg_py::as_mat(Xq, "X_new");
        const arma::mat yq = opt_mat(Yq, "y_new");
        arma::vec out;
        {
          py::gil_scoped_release nogil;
          out = attnreg::density_evaluate(data, bw, xq, yq);
        }
        return attnreg_py::to_numpy(out);
      },
      ATTNREG_DENSITY_DATA_ARGS, py::arg("bandwidth"), py::arg("X_new"), py::arg("y_new"));

  m.def(
      "density_quantile",
      [](const std::string& kind, const attnreg_py::farray& X, const std::string& x_types,
         const py::object& Y, const std::string& y_types, const std::string& kernel,
         const std::string& uk, const std::string& ok, int n_starts, std::uint64_t seed,
         int n_threads, const std::string& yok, const attnreg_py::farray& bandwidth,
         const attnreg_py::farray& Xq,
         const attnreg_py::farray& tau) {
        const attnreg::DensityData data(kind_from(kind), attnreg_py::as_mat(X, "X"), x_types,
                                        opt_mat(Y, "y"), y_types,
                                        options(kernel, uk, ok, n_starts, seed, n_threads, yok));
        const arma::mat b = attnreg_py::as_mat(bandwidth, "bandwidth");
        const arma::vec bw(b.memptr(), b.n_elem);
        const arma::mat xq = attnreg_py::as_mat(Xq, "X_new");
        const arma::mat t = attnreg_py::as_mat(tau, "tau");
        const arma::vec tv(t.memptr(), t.n_elem);
        arma::vec out;
        {
          py::gil_scoped_release nogil;
          out = attnreg::conditional_quantile(data, bw, xq, tv);
        }
        return attnreg_py::to_numpy(out);
      },
      ATTNREG_DENSITY_DATA_ARGS, py::arg("bandwidth"), py::arg("X_new"), py::arg("tau"));

  m.def(
      "density_normal_reference",
      [](const std::string& kind, const attnreg_py::farray& X, const std::string& x_types,
         const py::object& Y, const std::string& y_types, const std::string& kernel,
         const std::string& uk, const std::string& ok, int n_starts, std::uint64_t seed,
         int n_threads, const std::string& yok) {
        const attnreg::DensityData data(kind_from(kind), attnreg_py::as_mat(X, "X"), x_types,
                                        opt_mat(Y, "y"), y_types,
                                        options(kernel, uk, ok, n_starts, seed, n_threads, yok));
        return attnreg_py::to_numpy(attnreg::density_normal_reference(data));
      },
      ATTNREG_DENSITY_DATA_ARGS);
}
