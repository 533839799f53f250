// Python bindings for regression discontinuity (attnreg/rd/rdrobust.hpp). Thin: convert, call,
// convert back. The Python API is attnreg.rd (rdrobust, rdbwselect).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "attnreg/base/error.hpp"
#include "attnreg/rd/rdrobust.hpp"
#include "attnreg/rd/rddensity.hpp"

namespace py = pybind11;
namespace rd = attnreg::rd;

namespace {

using darray = py::array_t<double, py::array::c_style | py::array::forcecast>;
using iarray = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>;

std::vector<double> to_vec(const py::object& o) {
  if (o.is_none()) return {};
  darray a = o.cast<darray>();
  return std::vector<double>(a.data(), a.data() + a.size());
}

// The inputs as views: y, x, fuzzy and weights are read in place when they are contiguous
// float64 arrays (forcecast converts, and copies, only what is not); the covariates are
// transposed to the core's column-major layout and the cluster codes converted to int64.
struct Inputs {
  darray y, x, t, w;
  std::vector<double> z;
  iarray cluster;
  rd::RdDataView view;
};

void view_of(const py::object& o, darray& keep, rd::RdSpan<double>& span) {
  if (o.is_none()) return;
  keep = o.cast<darray>();
  span = rd::RdSpan<double>(keep.data(), static_cast<std::size_t>(keep.size()));
}

void make_data(Inputs& in, const py::object& y, const py::object& x, const py::object& t,
               const py::object& z, const py::object& w, const py::object& cluster) {
  rd::RdDataView& d = in.view;
  view_of(y, in.y, d.y);
  view_of(x, in.x, d.x);
  view_of(t, in.t, d.t);
  view_of(w, in.w, d.weights);
  if (!z.is_none()) {
    darray a = z.cast<darray>();  // n x dz, row-major -> column-major
    if (a.ndim() != 2) throw attnreg::InvalidArgument("covs: must be a 2-d array (n x k)");
    const std::size_t n = a.shape(0), k = a.shape(1);
    d.dz = k;
    in.z.resize(n * k);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < k; ++j) in.z[j * n + i] = a.data()[i * k + j];
    d.z = rd::RdSpan<double>(in.z);
  }
  if (!cluster.is_none()) {
    in.cluster = cluster.cast<iarray>();
    d.cluster = rd::RdSpan<std::int64_t>(in.cluster.data(),
                                         static_cast<std::size_t>(in.cluster.size()));
  }
}

// A vector handed to numpy without a copy (the array owns it through a capsule).
py::array_t<double> to_numpy(std::vector<double>&& v) {
  auto* owned = new std::vector<double>(std::move(v));
  py::capsule free_it(owned, [](void* p) { delete static_cast<std::vector<double>*>(p); });
  return py::array_t<double>(static_cast<py::ssize_t>(owned->size()), owned->data(), free_it);
}

rd::RdOptions make_options(const py::dict& o) {
  rd::RdOptions opt;
  opt.c = o["c"].cast<double>();
  opt.p = o["p"].cast<int>();
  opt.q = o["q"].cast<int>();
  opt.deriv = o["deriv"].cast<int>();
  const std::string k = o["kernel"].cast<std::string>();
  opt.kernel = k == "epanechnikov" ? rd::RdKernel::epanechnikov
               : k == "uniform"    ? rd::RdKernel::uniform
                                   : rd::RdKernel::triangular;
  const std::string v = o["vce"].cast<std::string>();
  opt.vce = v == "hc0" ? rd::RdVce::hc0
            : v == "hc1" ? rd::RdVce::hc1
            : v == "hc2" ? rd::RdVce::hc2
            : v == "hc3" ? rd::RdVce::hc3
            : v == "cr1" ? rd::RdVce::cr1
            : v == "cr2" ? rd::RdVce::cr2
            : v == "cr3" ? rd::RdVce::cr3
                         : rd::RdVce::nn;
  opt.nnmatch = o["nnmatch"].cast<int>();
  const std::string mp = o["masspoints"].cast<std::string>();
  opt.masspoints = mp == "off" ? rd::MassPoints::off
                   : mp == "check" ? rd::MassPoints::check
                                   : rd::MassPoints::adjust;
  opt.bwcheck = o["bwcheck"].cast<int>();
  opt.bwrestrict = o["bwrestrict"].cast<bool>();
  opt.scaleregul = o["scaleregul"].cast<double>();
  opt.stdvars = o["stdvars"].cast<bool>();
  opt.bwselect = o["bwselect"].cast<std::string>();
  opt.h_left = o["h_left"].cast<double>();
  opt.h_right = o["h_right"].cast<double>();
  opt.b_left = o["b_left"].cast<double>();
  opt.b_right = o["b_right"].cast<double>();
  opt.rho = o["rho"].cast<double>();
  opt.level = o["level"].cast<double>();
  opt.sharpbw = o["sharpbw"].cast<bool>();
  return opt;
}

py::dict inference(const rd::RdInference& e) {
  py::dict d;
  d["coef"] = std::vector<double>(e.coef, e.coef + 3);
  d["se"] = std::vector<double>(e.se, e.se + 3);
  d["z"] = std::vector<double>(e.z, e.z + 3);
  d["p_value"] = std::vector<double>(e.p_value, e.p_value + 3);
  d["ci_low"] = std::vector<double>(e.ci_low, e.ci_low + 3);
  d["ci_high"] = std::vector<double>(e.ci_high, e.ci_high + 3);
  return d;
}

}  // namespace

void init_rd(py::module_& m) {
  m.def(
      "rd_robust",
      [](const py::object& y, const py::object& x, const py::object& t, const py::object& z,
         const py::object& w, const py::object& cluster, const py::dict& options) {
        Inputs in;
        make_data(in, y, x, t, z, w, cluster);
        rd::RdOptions opt = make_options(options);
        rd::RdResult r;
        {
          py::gil_scoped_release release;
          r = rd::rdrobust(in.view, opt);
        }
        py::dict out;
        out["estimate"] = inference(r.est);
        out["fuzzy"] = r.fuzzy;
        if (r.fuzzy) out["first_stage"] = inference(r.first_stage);
        out["bandwidths"] = std::vector<double>{r.bw.h_left, r.bw.h_right, r.bw.b_left,
                                                r.bw.b_right};
        out["bwselect"] = r.bwselect;
        out["vce"] = r.vce;
        out["n"] = std::vector<std::size_t>{r.n_left, r.n_right};
        out["n_h"] = std::vector<std::size_t>{r.nh_left, r.nh_right};
        out["n_b"] = std::vector<std::size_t>{r.nb_left, r.nb_right};
        out["n_unique"] = std::vector<std::size_t>{r.m_left, r.m_right};
        out["n_dropped"] = r.n_dropped;
        out["clusters"] = std::vector<std::size_t>{r.clusters_left, r.clusters_right,
                                                   r.clusters};
        out["mass_points"] = r.mass_points;
        out["tau_cl"] = std::vector<double>{r.tau_cl_left, r.tau_cl_right};
        out["tau_bc"] = std::vector<double>{r.tau_bc_left, r.tau_bc_right};
        out["bias"] = std::vector<double>{r.bias_left, r.bias_right};
        out["beta_p_left"] = r.beta_p_left;
        out["beta_p_right"] = r.beta_p_right;
        out["gamma"] = r.gamma;
        out["covs_kept"] = r.covs_kept;
        out["covs_dropped"] = r.covs_dropped;
        out["weights"] = to_numpy(std::move(r.weights));
        return out;
      },
      py::arg("y"), py::arg("x"), py::arg("t"), py::arg("z"), py::arg("w"), py::arg("cluster"),
      py::arg("options"));
  m.def(
      "rd_bwselect",
      [](const py::object& y, const py::object& x, const py::object& t, const py::object& z,
         const py::object& w, const py::object& cluster, const py::dict& options, bool all) {
        Inputs in;
        make_data(in, y, x, t, z, w, cluster);
        rd::RdOptions opt = make_options(options);
        rd::RdBwResult r;
        {
          py::gil_scoped_release release;
          r = rd::rdbwselect(in.view, opt, all);
        }
        py::dict out;
        std::vector<std::vector<double>> rows;
        for (const auto& b : r.bws) rows.push_back({b.h_left, b.h_right, b.b_left, b.b_right});
        out["selectors"] = r.selectors;
        out["bws"] = rows;
        out["n"] = std::vector<std::size_t>{r.n_left, r.n_right};
        out["n_unique"] = std::vector<std::size_t>{r.m_left, r.m_right};
        out["n_dropped"] = r.n_dropped;
        out["mass_points"] = r.mass_points;
        out["covs_dropped"] = r.covs_dropped;
        out["vce"] = r.vce;
        return out;
      },
      py::arg("y"), py::arg("x"), py::arg("t"), py::arg("z"), py::arg("w"), py::arg("cluster"),
      py::arg("options"), py::arg("all") = false);
  m.def(
      "rd_density",
      [](const py::object& x, const py::dict& o) {
        std::vector<double> xv = to_vec(x);
        rd::RdDensityOptions opt;
        opt.c = o["c"].cast<double>();
        opt.p = o["p"].cast<int>();
        opt.q = o["q"].cast<int>();
        const std::string k = o["kernel"].cast<std::string>();
        opt.kernel = k == "epanechnikov" ? rd::RdKernel::epanechnikov
                     : k == "uniform"    ? rd::RdKernel::uniform
                                         : rd::RdKernel::triangular;
        opt.bwselect = o["bwselect"].cast<std::string>();
        opt.h_left = o["h_left"].cast<double>();
        opt.h_right = o["h_right"].cast<double>();
        opt.masspoints = o["masspoints"].cast<bool>();
        opt.regularize = o["regularize"].cast<bool>();
        opt.nlocalmin = o["nlocalmin"].cast<int>();
        opt.nuniquemin = o["nuniquemin"].cast<int>();
        opt.bino_n = o["bino_n"].cast<int>();
        opt.bino_w = o["bino_w"].cast<double>();
        opt.bino_nw = o["bino_nw"].cast<int>();
        opt.bino_p = o["bino_p"].cast<double>();
        opt.fitselect = o["fitselect"].cast<std::string>();
        opt.vce = o["vce"].cast<std::string>();
        rd::RdDensityResult r;
        {
          py::gil_scoped_release release;
          r = rd::rddensity(xv, opt);
        }
        py::dict out;
        out["f"] = std::vector<double>{r.f_left, r.f_right, r.diff};
        out["se"] = std::vector<double>{r.se_left, r.se_right, r.se_diff};
        out["statistic"] = r.statistic;
        out["p_value"] = r.p_value;
        out["h"] = std::vector<double>{r.h_left, r.h_right};
        out["bwselect"] = r.bwselect;
        out["bw_table"] = r.bw_table;
        out["n"] = std::vector<std::size_t>{r.n, r.n_left, r.n_right, r.nh_left, r.nh_right};
        out["mass_points"] = r.mass_points;
        out["bino_w_left"] = r.bino_w_left;
        out["bino_w_right"] = r.bino_w_right;
        out["bino_n_left"] = r.bino_n_left;
        out["bino_n_right"] = r.bino_n_right;
        out["bino_p_value"] = r.bino_p_value;
        out["fitselect"] = r.fitselect;
        out["vce"] = r.vce;
        return out;
      },
      py::arg("x"), py::arg("options"));
}
