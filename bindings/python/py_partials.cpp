// Python bindings for the mergeable partial statistics (attnreg/moments/partials.hpp). Thin: a partial
// travels as a dict of numpy arrays (picklable, so Dask can ship it between workers); every
// formula is in the core. The Python API is attnreg.dask.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "attnreg/base/error.hpp"
#include "attnreg/moments/partials.hpp"
#include "convert.hpp"
#include "options.hpp"

namespace py = pybind11;
using attnreg_py::as_mat;
using attnreg_py::farray;
using attnreg_py::to_numpy;

namespace {

using carray = py::array_t<double, py::array::c_style | py::array::forcecast>;

attnreg::LocalFitOptions local_options(int degree, const std::string& kernel, double ridge,
                                       const std::string& algorithm, double truncation,
                                       int n_threads) {
  attnreg::LocalFitOptions o;
  o.degree = degree;
  o.kernel = attnreg_py::continuous_kernel_spec(kernel, n_threads, algorithm, truncation);
  o.ridge = ridge;
  return o;
}

arma::vec as_vec(const py::object& o, const char* name) {
  if (o.is_none()) return arma::vec();
  const farray a = o.cast<farray>();
  const arma::mat m = as_mat(a, name);
  return arma::vec(m.memptr(), m.n_elem);
}

py::dict local_to_dict(const attnreg::LocalPartial& p) {
  py::dict d;
  d["kind"] = "local";
  d["degree"] = p.degree;
  d["q"] = p.q;
  d["k"] = p.k;
  d["dim"] = p.dim;
  // The dict keeps its layout: log_scale (the running max), row_max (the peak), A ((q*q) x m)
  // and T ((q*k) x m), the two parts of each query's full-storage moments.
  const auto& mo = p.moments;
  const std::size_t m = p.n_query(), ns = static_cast<std::size_t>(mo.layout.n_stats());
  const arma::mat S(const_cast<double*>(mo.stats.data()), ns, m, false, true);
  d["log_scale"] = to_numpy(arma::vec(mo.max));
  d["row_max"] = to_numpy(arma::vec(mo.peak));
  d["A"] = to_numpy(arma::mat(S.rows(0, p.q * p.q - 1)));
  d["T"] = to_numpy(arma::mat(S.rows(p.q * p.q, ns - 1)));
  return d;
}

attnreg::LocalPartial local_from_dict(const py::dict& d, const char* name) {
  if (!d.contains("kind") || d["kind"].cast<std::string>() != "local")
    throw attnreg::InvalidArgument(std::string(name) +
                                   ": not a local-polynomial partial (made by local_partial)");
  attnreg::LocalPartial p;
  p.degree = d["degree"].cast<int>();
  p.q = d["q"].cast<std::size_t>();
  p.k = d["k"].cast<std::size_t>();
  p.dim = d["dim"].cast<std::size_t>();
  const arma::vec log_scale = as_vec(d["log_scale"], name);
  const arma::vec row_max = as_vec(d["row_max"], name);
  // Copies: merge() writes into `p`, and the caller's arrays (a Dask result other tasks may
  // share) must stay untouched.
  const farray A = d["A"].cast<farray>(), T = d["T"].cast<farray>();
  const arma::mat Av = as_mat(A, name), Tv = as_mat(T, name);
  const std::size_t m = row_max.n_elem;
  if (p.q < 1 || log_scale.n_elem != m || Av.n_rows != p.q * p.q || Av.n_cols != m ||
      Tv.n_rows != p.q * p.k || Tv.n_cols != m)
    throw attnreg::InvalidArgument(std::string(name) + ": inconsistent partial (arrays of the "
                                                       "wrong shape)");
  auto& mo = p.moments;
  mo.layout = attnreg::moments::MomentLayout::full_storage(static_cast<int>(p.q) - 1,
                                                           static_cast<int>(p.k));
  mo.max.assign(log_scale.begin(), log_scale.end());
  mo.peak.assign(row_max.begin(), row_max.end());
  const arma::mat S = arma::join_cols(Av, Tv);
  mo.stats.assign(S.begin(), S.end());
  return p;
}

template <class T>
attnreg::attention::View<const T> view4(const py::array_t<T, py::array::c_style>& a,
                                        const char* name) {
  if (a.ndim() != 4)
    throw attnreg::InvalidArgument(std::string(name) +
                                   ": expected a 4-d (batch, heads, seq, dim) array");
  return attnreg::attention::make_view<const T>(a.data(), a.shape(0), a.shape(1), a.shape(2),
                                                a.shape(3));
}

py::dict softmax_to_dict(const attnreg::SoftmaxPartial& p) {
  py::dict d;
  d["kind"] = "softmax";
  d["shape"] = py::make_tuple(p.batch, p.heads, p.n_query, p.dim, p.dim_v, p.n_keys_total);
  const std::vector<double>& max = p.moments.max;
  const std::vector<double>& stats = p.moments.stats;
  py::array_t<double> mx(static_cast<py::ssize_t>(max.size()));
  if (!max.empty()) std::memcpy(mx.mutable_data(), max.data(), max.size() * sizeof(double));
  py::array_t<double> st(static_cast<py::ssize_t>(stats.size()));
  if (!stats.empty()) std::memcpy(st.mutable_data(), stats.data(), stats.size() * sizeof(double));
  d["max"] = mx;
  d["stats"] = st;
  d["key_ranges"] = py::cast(p.key_ranges);
  d["causal"] = p.causal;
  d["window"] = p.window;
  return d;
}

attnreg::SoftmaxPartial softmax_from_dict(const py::dict& d, const char* name) {
  if (!d.contains("kind") || d["kind"].cast<std::string>() != "softmax")
    throw attnreg::InvalidArgument(std::string(name) +
                                   ": not a softmax partial (made by softmax_partial)");
  attnreg::SoftmaxPartial p;
  const auto s = d["shape"].cast<std::vector<std::int64_t>>();
  if (s.size() != 6) throw attnreg::InvalidArgument(std::string(name) + ": bad shape entry");
  p.batch = s[0];
  p.heads = s[1];
  p.n_query = s[2];
  p.dim = s[3];
  p.dim_v = s[4];
  p.n_keys_total = s[5];
  p.moments.layout =
      attnreg::moments::MomentLayout::packed_storage(0, static_cast<int>(p.dim_v));
  const carray mx = d["max"].cast<carray>(), st = d["stats"].cast<carray>();
  p.moments.max.assign(mx.data(), mx.data() + mx.size());
  p.moments.stats.assign(st.data(), st.data() + st.size());
  if (!d.contains("key_ranges"))
    throw attnreg::InvalidArgument(std::string(name) +
                                   ": not a softmax partial (made by softmax_partial)");
  p.key_ranges = d["key_ranges"].cast<std::vector<std::int64_t>>();
  if (!d.contains("causal") || !d.contains("window"))
    throw attnreg::InvalidArgument(std::string(name) +
                                   ": has no mask entries (made by an older softmax_partial: "
                                   "recompute it)");
  p.causal = d["causal"].cast<bool>();
  p.window = d["window"].cast<std::int64_t>();
  if (static_cast<std::int64_t>(p.moments.max.size()) != p.batch * p.heads * p.n_query ||
      static_cast<std::int64_t>(p.moments.stats.size()) !=
          p.batch * p.heads * p.n_query * p.n_stats())
    throw attnreg::InvalidArgument(std::string(name) + ": inconsistent partial");
  return p;
}

}  // namespace

static void init_local_partials(py::module_& m);
static void init_softmax_partials(py::module_& m);

void init_partials(py::module_& m) {
  init_local_partials(m);
  init_softmax_partials(m);
}

static void init_local_partials(py::module_& m) {
  m.def(
      "local_partial",
      [](const farray& X_block, const farray& Y_block, const farray& X_query,
         const farray& bandwidth, int degree, const std::string& kernel,
         const std::string& algorithm, double truncation, const py::object& sample_weight,
         const py::object& self_rows, int n_threads, const std::string& query_arg) {
        const arma::mat X = as_mat(X_block, "X"), Y = as_mat(Y_block, "y"),
                        Xq = as_mat(X_query, query_arg.c_str());
        const arma::mat bwm = as_mat(bandwidth, "bandwidth");
        const arma::vec bw(bwm.memptr(), bwm.n_elem);
        const arma::vec sw = as_vec(sample_weight, "sample_weight");
        std::vector<std::int64_t> self;
        if (!self_rows.is_none()) self = self_rows.cast<std::vector<std::int64_t>>();
        const attnreg::LocalFitOptions o =
            local_options(degree, kernel, 0.0, algorithm, truncation, n_threads);
        attnreg::LocalPartial p;
        {
          py::gil_scoped_release nogil;
          p = attnreg::local_partial(X, Y, Xq, bw, o, sw, self, query_arg);
        }
        return local_to_dict(p);
      },
      py::arg("X_block"), py::arg("Y_block"), py::arg("X_query"), py::arg("bandwidth"),
      py::arg("degree") = 1, py::arg("kernel") = "gaussian", py::arg("algorithm") = "auto",
      py::arg("truncation") = 1e-16, py::arg("sample_weight") = py::none(),
      py::arg("self_rows") = py::none(), py::arg("n_threads") = 0,
      py::arg("query_arg") = "X_new",
      "Local polynomial moments of the queries over one block of training rows (a dict).");

  m.def(
      "local_partial_empty",
      [](std::size_t m, std::size_t q, std::size_t k, std::size_t dim, int degree) {
        return local_to_dict(attnreg::local_partial_empty(m, q, k, dim, degree));
      },
      py::arg("m"), py::arg("q"), py::arg("k"), py::arg("dim"), py::arg("degree"),
      "The partial of no training rows (identity of local_merge).");

  m.def(
      "local_merge",
      [](const py::dict& a, const py::dict& b) {
        attnreg::LocalPartial pa = local_from_dict(a, "a");
        attnreg::merge(pa, local_from_dict(b, "b"));
        return local_to_dict(pa);
      },
      py::arg("a"), py::arg("b"), "Merge two local-polynomial partials (associative, commutative).");

  m.def(
      "local_finalize",
      [](const py::dict& partial, const farray& bandwidth, int degree, const std::string& kernel,
         double ridge, bool leave_one_out, bool throw_on_failure, const std::string& query_arg) {
        const attnreg::LocalPartial p = local_from_dict(partial, "partial");
        const arma::mat bwm = as_mat(bandwidth, "bandwidth");
        const arma::vec bw(bwm.memptr(), bwm.n_elem);
        const attnreg::LocalFitOptions o = local_options(degree, kernel, ridge, "auto", 1e-16, 0);
        std::vector<attnreg::QueryStatus> st;
        const arma::mat fit =
            attnreg::local_finalize(p, bw, o, &st, throw_on_failure, leave_one_out, query_arg);
        py::array_t<std::uint8_t> status(static_cast<py::ssize_t>(st.size()));
        for (std::size_t i = 0; i < st.size(); ++i)
          status.mutable_data()[i] = static_cast<std::uint8_t>(st[i]);
        return py::make_tuple(to_numpy(fit), status);
      },
      py::arg("partial"), py::arg("bandwidth"), py::arg("degree") = 1,
      py::arg("kernel") = "gaussian", py::arg("ridge") = 0.0, py::arg("leave_one_out") = false,
      py::arg("throw_on_failure") = true, py::arg("query_arg") = "X_new",
      "Solve the local fits from merged moments: (fit (m, k), status uint8 (m,)).");
}

static void init_softmax_partials(py::module_& m) {
  m.def(
      "softmax_partial",
      [](const py::array_t<double, py::array::c_style>& Q,
         const py::array_t<double, py::array::c_style>& K,
         const py::array_t<double, py::array::c_style>& V, std::int64_t key_offset,
         std::int64_t n_keys_total, const std::string& method, const py::object& scale,
         const py::object& bandwidth, bool causal, std::int64_t window, int n_threads) {
        attnreg::attention::Options o;
        o.method = attnreg::attention::parse_method(method, "method");
        o.causal = causal;
        o.window = window;
        // None = the default; a number given must be finite (NaN is not "the default").
        for (const auto& [arg, name, dst] :
             {std::tuple<const py::object*, const char*, double*>{&scale, "scale", &o.scale},
              {&bandwidth, "bandwidth", &o.bandwidth}}) {
          if (arg->is_none()) continue;
          *dst = arg->cast<double>();
          if (!std::isfinite(*dst)) {
            throw attnreg::InvalidArgument(std::string(name) +
                                           ": must be a finite number or None (for the "
                                           "default), got " + std::to_string(*dst));
          }
        }
        o.n_threads = n_threads;
        const auto q = view4<double>(Q, "Q"), k = view4<double>(K, "K"), v = view4<double>(V, "V");
        attnreg::SoftmaxPartial p;
        {
          py::gil_scoped_release nogil;
          p = attnreg::softmax_partial<double>(q, k, v, key_offset, n_keys_total, o);
        }
        return softmax_to_dict(p);
      },
      py::arg("Q"), py::arg("K"), py::arg("V"), py::arg("key_offset"), py::arg("n_keys_total"),
      py::arg("method") = "softmax", py::arg("scale") = py::none(),
      py::arg("bandwidth") = py::none(), py::arg("causal") = false, py::arg("window") = 0,
      py::arg("n_threads") = 0,
      "Softmax / nw_rbf running statistics over a slice of the keys (float64, 4-d arrays).");

  m.def(
      "softmax_merge",
      [](const py::dict& a, const py::dict& b) {
        attnreg::SoftmaxPartial pa = softmax_from_dict(a, "a");
        attnreg::attention::merge(pa, softmax_from_dict(b, "b"));
        return softmax_to_dict(pa);
      },
      py::arg("a"), py::arg("b"), "Merge two softmax partials (associative, commutative).");

  m.def(
      "softmax_finalize",
      [](const py::dict& partial) {
        const attnreg::SoftmaxPartial p = softmax_from_dict(partial, "partial");
        py::array_t<double> out({p.batch, p.heads, p.n_query, p.dim_v});
        const auto v = attnreg::attention::make_view<double>(out.mutable_data(), p.batch, p.heads,
                                                             p.n_query, p.dim_v);
        attnreg::softmax_finalize<double>(p, v);
        return out;
      },
      py::arg("partial"), "Softmax output (batch, heads, n_q, dim_v) from merged statistics.");
}
