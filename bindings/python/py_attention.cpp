// Python bindings for the attention engine (attnreg/attention/attention.hpp). Thin: numpy arrays are
// read in place through their strides (no copy when the dtype is already float32/float64),
// options arrive as keywords, the output is a new numpy array that owns its memory, and the
// diagnostics come back as a dict. The Python API with its docs is attnreg/attention.py.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "attnreg/attention/attention.hpp"
#include "attnreg/attention/attention_device.hpp"
#include "attnreg/attention/attention_options.hpp"
#include "attnreg/base/error.hpp"
#include "options.hpp"

namespace py = pybind11;
namespace at = attnreg::attention;

namespace {

/// A 4-d view of a numpy array of element type T (the caller checked the dtype). Arrays of 2 or
/// 3 dimensions are (seq, dim) and (batch, seq, dim): missing leading axes have extent 1.
template <class T>
at::View<const T> view_of(const py::array& a, const char* name) {
  const int nd = static_cast<int>(a.ndim());
  if (nd < 2 || nd > 4) {
    throw attnreg::InvalidArgument(std::string(name) +
                                   ": expected a 2-d (seq, dim), 3-d (batch, seq, dim) or 4-d "
                                   "(batch, heads, seq, dim) array, got " +
                                   std::to_string(nd) + " dimensions");
  }
  std::int64_t shape[4] = {1, 1, 1, 1}, strides[4] = {0, 0, 0, 0};
  const int off = 4 - nd;
  for (int i = 0; i < nd; ++i) {
    shape[off + i] = static_cast<std::int64_t>(a.shape(i));
    const auto s = static_cast<std::int64_t>(a.strides(i));
    if (s % static_cast<std::int64_t>(sizeof(T)) != 0) {
      throw attnreg::InvalidArgument(std::string(name) +
                                     ": strides are not a multiple of the item size (pass "
                                     "np.ascontiguousarray(" + name + "))");
    }
    strides[off + i] = s / static_cast<std::int64_t>(sizeof(T));
  }
  if (nd == 3) {  // (batch, seq, dim) -> (batch, 1, seq, dim)
    shape[0] = shape[1];
    strides[0] = strides[1];
    shape[1] = 1;
    strides[1] = 0;
  }
  return at::make_view<const T>(static_cast<const T*>(a.data()), shape, strides);
}

/// The options of a call: the keywords through the core's one mapping (attention::options_from,
/// defaults from the option table), then the ridge (None, a scalar, or one value per query).
at::Options make_options(const py::kwargs& kw, const py::object& ridge) {
  at::Options o = at::options_from(attnreg_py::option_values(kw));
  if (!ridge.is_none()) {
    py::array_t<double, py::array::c_style | py::array::forcecast> r(ridge);
    if (r.ndim() == 0) {
      o.ridge = *r.data();
    } else {
      o.ridge_per_query.assign(r.data(), r.data() + r.size());
    }
  }
  return o;
}

py::dict diag_dict(const at::Diagnostics& d) {
  py::dict r;
  r["method"] = d.method;
  r["n_threads"] = d.n_threads;
  r["n_query_blocks"] = d.n_query_blocks;
  r["cg_iterations"] = d.cg_iterations;
  r["cg_max_iterations"] = d.cg_max_iterations;
  r["cg_iteration_limit"] = d.cg_iteration_limit;
  r["cg_tol"] = d.cg_tol;
  r["cg_converged"] = d.cg_converged;
  r["cg_rows_not_converged"] = d.cg_rows_not_converged;
  r["cg_max_relative_residual"] = d.cg_max_relative_residual;
  r["min_relative_denominator"] = d.min_relative_denominator;
  r["warnings"] = d.warnings;
  return r;
}

/// Output array: the leading axes of Q (2-d, 3-d or 4-d), then (n_q, last).
py::array new_output(const py::array& Q, std::int64_t last, bool is_float) {
  std::vector<py::ssize_t> shape;
  for (int i = 0; i + 1 < Q.ndim(); ++i) shape.push_back(Q.shape(i));
  shape.push_back(static_cast<py::ssize_t>(last));
  if (is_float) return py::array_t<float>(shape);
  return py::array_t<double>(shape);
}

template <class T>
at::View<T> out_view(py::array& out) {
  at::View<const T> v = view_of<T>(out, "out");
  at::View<T> w;
  w.data = static_cast<T*>(out.mutable_data());
  for (int i = 0; i < 4; ++i) {
    w.shape[i] = v.shape[i];
    w.strides[i] = v.strides[i];
  }
  return w;
}

bool dtype_is_float(const py::array& a, const char* name) {
  if (a.dtype().is(py::dtype::of<float>())) return true;
  if (a.dtype().is(py::dtype::of<double>())) return false;
  throw attnreg::InvalidArgument(std::string(name) +
                                 ": dtype must be float32 or float64 (the Python wrapper "
                                 "converts other types)");
}

template <class T>
py::tuple forward_impl(const py::array& Q, const py::array& K, const py::array& V,
                       const at::Options& o, at::Device device) {
  const auto q = view_of<T>(Q, "Q"), k = view_of<T>(K, "K"), v = view_of<T>(V, "V");
  py::array out = new_output(Q, v.shape[3], sizeof(T) == 4);
  const at::View<T> ov = out_view<T>(out);
  at::Diagnostics d;
  {
    py::gil_scoped_release nogil;
    d = at::forward<T>(q, k, v, ov, o, device);
  }
  return py::make_tuple(out, diag_dict(d));
}

template <class T>
py::array weights_impl(const py::array& Q, const py::array& K, const at::Options& o) {
  const auto q = view_of<T>(Q, "Q"), k = view_of<T>(K, "K");
  py::array out = new_output(Q, k.shape[2], sizeof(T) == 4);
  const at::View<T> ov = out_view<T>(out);
  {
    py::gil_scoped_release nogil;
    at::attention_weights<T>(q, k, ov, o);
  }
  return out;
}

void same_dtype(const py::array& a, const py::array& b, const char* na, const char* nb) {
  if (!a.dtype().is(b.dtype())) {
    throw attnreg::InvalidArgument(std::string(nb) + ": dtype differs from " + na +
                                   " (pass all arrays as float32 or all as float64)");
  }
}

py::tuple partial_to_tuple(const at::LLAPartial& p) {
  const std::vector<double>& max = p.moments.max;
  py::array_t<double> mx(static_cast<py::ssize_t>(max.size()));
  std::copy(max.begin(), max.end(), mx.mutable_data());
  py::array_t<double> st({static_cast<py::ssize_t>(max.size()),
                          static_cast<py::ssize_t>(p.n_stats())});
  std::copy(p.moments.stats.begin(), p.moments.stats.end(), st.mutable_data());
  py::tuple ranges(p.key_ranges.size());
  for (std::size_t k = 0; k < p.key_ranges.size(); ++k) ranges[k] = p.key_ranges[k];
  return py::make_tuple(py::make_tuple(p.batch, p.heads, p.n_query, p.dim, p.dim_v,
                                       p.n_keys_total),
                        mx, st, ranges, py::make_tuple(p.causal, p.window));
}

at::LLAPartial partial_from_tuple(const py::tuple& t) {
  if (t.size() != 5) {
    throw attnreg::InvalidArgument("partial: not an LLA partial (pass what lla_partial or "
                                   "lla_merge returned; one without its mask entry was made by "
                                   "an older version: recompute it)");
  }
  const py::tuple dims = t[0].cast<py::tuple>();
  at::LLAPartial p;
  p.batch = dims[0].cast<std::int64_t>();
  p.heads = dims[1].cast<std::int64_t>();
  p.n_query = dims[2].cast<std::int64_t>();
  p.dim = dims[3].cast<std::int64_t>();
  p.dim_v = dims[4].cast<std::int64_t>();
  p.n_keys_total = dims[5].cast<std::int64_t>();
  p.moments.layout = attnreg::moments::MomentLayout::packed_storage(static_cast<int>(p.dim),
                                                                    static_cast<int>(p.dim_v));
  const auto mx = t[1].cast<py::array_t<double, py::array::c_style | py::array::forcecast>>();
  const auto st = t[2].cast<py::array_t<double, py::array::c_style | py::array::forcecast>>();
  const auto rows = p.batch * p.heads * p.n_query;
  if (mx.size() != rows || st.size() != rows * p.n_stats()) {
    throw attnreg::InvalidArgument("partial: arrays do not match its dimensions");
  }
  p.moments.max.assign(mx.data(), mx.data() + mx.size());
  p.moments.stats.assign(st.data(), st.data() + st.size());
  p.key_ranges = t[3].cast<std::vector<std::int64_t>>();
  const py::tuple mask = t[4].cast<py::tuple>();
  p.causal = mask[0].cast<bool>();
  p.window = mask[1].cast<std::int64_t>();
  return p;
}

}  // namespace

static void init_attention_forward(py::module_& m);
static void init_attention_weights_partials(py::module_& m);
static void init_attention_backward(py::module_& m);

void init_attention(py::module_& m) {
  init_attention_forward(m);
  init_attention_weights_partials(m);
  init_attention_backward(m);
}

static void init_attention_forward(py::module_& m) {
  // attention_forward (CPU) and attention_forward_cuda (the CUDA kernels; attention_device.hpp
  // throws a clear InvalidArgument when CUDA is not compiled in or no GPU is visible) take the
  // same arguments.
  const auto def_forward = [&m](const char* name, at::Device device, const char* doc) {
    m.def(
        name,
        [device](const py::array& Q, const py::array& K, const py::array& V,
                 const py::object& ridge, const py::kwargs& kw) {
          const at::Options o = make_options(kw, ridge);
          same_dtype(Q, K, "Q", "K");
          same_dtype(Q, V, "Q", "V");
          return dtype_is_float(Q, "Q") ? forward_impl<float>(Q, K, V, o, device)
                                        : forward_impl<double>(Q, K, V, o, device);
        },
        py::arg("Q"), py::arg("K"), py::arg("V"), py::arg("ridge") = py::none(), doc);
  };
  def_forward("attention_forward", at::Device::cpu,
              "Attention forward on the CPU core; returns (output, diagnostics dict).");
  def_forward("attention_forward_cuda", at::Device::cuda,
              "Attention forward on the CUDA backend (float32 kernels; float64 converted); "
              "returns (output, diagnostics dict).");
}

static void init_attention_weights_partials(py::module_& m) {
  m.def(
      "attention_weights",
      [](const py::array& Q, const py::array& K, const py::object& ridge, const py::kwargs& kw) {
        at::Options o = make_options(kw, ridge);
        o.lla_algorithm = at::LLAAlgorithm::naive;
        same_dtype(Q, K, "Q", "K");
        return dtype_is_float(Q, "Q") ? weights_impl<float>(Q, K, o)
                                      : weights_impl<double>(Q, K, o);
      },
      py::arg("Q"), py::arg("K"), py::arg("ridge") = py::none(),
      "Dense attention weights (batch, heads, n_q, n_k) in the input dtype.");

  m.def(
      "lla_partial",
      [](const py::array& Q, const py::array& K, const py::array& V, std::int64_t key_offset,
         std::int64_t n_keys_total, const py::kwargs& kw) {
        at::Options o = make_options(kw, py::none());
        o.method = at::Method::lla;
        o.lla_algorithm = at::LLAAlgorithm::direct;
        same_dtype(Q, K, "Q", "K");
        same_dtype(Q, V, "Q", "V");
        at::LLAPartial p;
        if (dtype_is_float(Q, "Q")) {
          const auto q = view_of<float>(Q, "Q"), k = view_of<float>(K, "K"),
                     v = view_of<float>(V, "V");
          py::gil_scoped_release nogil;
          p = at::lla_partial<float>(q, k, v, key_offset, n_keys_total, o);
        } else {
          const auto q = view_of<double>(Q, "Q"), k = view_of<double>(K, "K"),
                     v = view_of<double>(V, "V");
          py::gil_scoped_release nogil;
          p = at::lla_partial<double>(q, k, v, key_offset, n_keys_total, o);
        }
        return partial_to_tuple(p);
      },
      py::arg("Q"), py::arg("K"), py::arg("V"), py::arg("key_offset"), py::arg("n_keys_total"),
      "LLA sufficient statistics over a slice of the keys: (dims, max, stats).");

  m.def(
      "lla_merge",
      [](const py::tuple& a, const py::tuple& b) {
        at::LLAPartial pa = partial_from_tuple(a);
        at::merge(pa, partial_from_tuple(b));
        return partial_to_tuple(pa);
      },
      py::arg("a"), py::arg("b"), "Merge two LLA partials (associative, commutative).");

  m.def(
      "lla_finalize",
      [](const py::array& Q, const py::tuple& partial, const py::object& ridge,
         const py::kwargs& kw) {
        const at::LLAPartial p = partial_from_tuple(partial);
        at::Options o = make_options(kw, ridge);
        // A mask not given is the statistics' own; one given must match it (lla_finalize).
        if (!kw.contains("causal") || kw["causal"].is_none()) o.causal = p.causal;
        if (!kw.contains("window") || kw["window"].is_none()) o.window = p.window;
        o.method = at::Method::lla;
        o.lla_algorithm = at::LLAAlgorithm::direct;
        const bool f = dtype_is_float(Q, "Q");
        py::array out = new_output(Q, p.dim_v, f);
        at::Diagnostics d;
        if (f) {
          const auto q = view_of<float>(Q, "Q");
          const auto ov = out_view<float>(out);
          py::gil_scoped_release nogil;
          d = at::lla_finalize<float>(q, p, ov, o);
        } else {
          const auto q = view_of<double>(Q, "Q");
          const auto ov = out_view<double>(out);
          py::gil_scoped_release nogil;
          d = at::lla_finalize<double>(q, p, ov, o);
        }
        return py::make_tuple(out, diag_dict(d));
      },
      py::arg("Q"), py::arg("partial"), py::arg("ridge") = py::none(),
      "Solve LLA from merged statistics: (output, diagnostics dict).");
}

static void init_attention_backward(py::module_& m) {
  // Backward (vector-Jacobian products, float64 reference; attention.hpp "backward"):
  // (dQ, dK, dV, d_ridge or None, diagnostics dict), gradients in the dtype of Q.
  m.def(
      "attention_backward",
      [](const py::array& Q, const py::array& K, const py::array& V, const py::array& dO,
         const py::object& ridge, const py::kwargs& kw) {
        at::Options o = make_options(kw, ridge);
        o.lla_algorithm = at::LLAAlgorithm::naive;
        same_dtype(Q, K, "Q", "K");
        same_dtype(Q, V, "Q", "V");
        same_dtype(Q, dO, "Q", "dO");
        const bool f = dtype_is_float(Q, "Q");
        auto like = [f](const py::array& a) {
          std::vector<py::ssize_t> shape(a.shape(), a.shape() + a.ndim());
          return f ? py::array(py::array_t<float>(shape)) : py::array(py::array_t<double>(shape));
        };
        py::array dQ = like(Q), dK = like(K), dV = like(V);
        std::vector<double> dr;
        at::Diagnostics d;
        const auto run = [&](auto tag) {
          using T = decltype(tag);
          const auto q = view_of<T>(Q, "Q"), k = view_of<T>(K, "K"), v = view_of<T>(V, "V"),
                     g = view_of<T>(dO, "dO");
          const auto gq = out_view<T>(dQ), gk = out_view<T>(dK), gv = out_view<T>(dV);
          py::gil_scoped_release nogil;
          d = at::backward<T>(q, k, v, g, gq, gk, gv, o, &dr);
        };
        if (f) {
          run(float{});
        } else {
          run(double{});
        }
        py::object d_ridge = py::none();
        if (o.method == at::Method::lla) {
          py::array_t<double> r(static_cast<py::ssize_t>(dr.size()));
          std::copy(dr.begin(), dr.end(), r.mutable_data());
          d_ridge = r;
        }
        return py::make_tuple(dQ, dK, dV, d_ridge, diag_dict(d));
      },
      py::arg("Q"), py::arg("K"), py::arg("V"), py::arg("dO"), py::arg("ridge") = py::none(),
      "Attention backward (float64 reference): (dQ, dK, dV, d_ridge or None, diagnostics).");
}
