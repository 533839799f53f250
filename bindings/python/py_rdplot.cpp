// Python bindings for regression discontinuity plots (attnreg/rd/rdplot.hpp). Thin: convert,
// call, convert back. The Python API is attnreg.rd.rdplot.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "attnreg/base/error.hpp"
#include "attnreg/rd/rdplot.hpp"

namespace py = pybind11;
namespace rd = attnreg::rd;

namespace {

using darray = py::array_t<double, py::array::c_style | py::array::forcecast>;

std::vector<double> rdplot_vec(const py::object& o) {
  if (o.is_none()) return {};
  darray a = o.cast<darray>();
  return std::vector<double>(a.data(), a.data() + a.size());
}

py::dict side_dict(const rd::RdPlotSide& s) {
  py::dict d;
  d["n"] = s.n;
  d["n_h"] = s.n_h;
  d["n_unique"] = s.m;
  d["h"] = s.h;
  d["J"] = s.J;
  d["J_imse"] = s.J_imse;
  d["J_mv"] = s.J_mv;
  d["scale"] = s.scale;
  d["rscale"] = s.rscale;
  d["var_y"] = s.var_y;
  d["coef"] = s.coef;
  d["edges"] = s.edges;
  d["mid"] = s.mid;
  d["mean_x"] = s.mean_x;
  d["mean_y"] = s.mean_y;
  d["sd_y"] = s.sd_y;
  d["se_y"] = s.se_y;
  d["ci_low"] = s.ci_low;
  d["ci_high"] = s.ci_high;
  d["mean_y_raw"] = s.mean_y_raw;
  d["count"] = s.count;
  d["curve_x"] = s.curve_x;
  d["curve_y"] = s.curve_y;
  return d;
}

}  // namespace

void init_rdplot(py::module_& m) {
  m.def(
      "rd_plot",
      [](const py::object& y, const py::object& x, const py::object& w, const py::dict& o,
         const py::object& covs) {
        std::vector<double> yv = rdplot_vec(y), xv = rdplot_vec(x), wv = rdplot_vec(w);
        // covs: None or an n x dz array (row-major here), passed to the core column-major.
        std::vector<double> zv;
        std::size_t dz = 0;
        if (!covs.is_none()) {
          darray za = covs.cast<darray>();
          if (za.ndim() != 2 || static_cast<std::size_t>(za.shape(0)) != xv.size())
            throw attnreg::InvalidArgument("covs: must have one row per observation of x");
          const std::size_t nz = za.shape(0);
          dz = za.shape(1);
          zv.resize(nz * dz);
          for (std::size_t i = 0; i < nz; ++i)
            for (std::size_t a = 0; a < dz; ++a) zv[a * nz + i] = za.data()[i * dz + a];
        }
        rd::RdPlotOptions opt;
        opt.c = o["c"].cast<double>();
        opt.p = o["p"].cast<int>();
        opt.binselect = rd::parse_binselect(o["binselect"].cast<std::string>());
        opt.nbins_left = o["nbins_left"].cast<int>();
        opt.nbins_right = o["nbins_right"].cast<int>();
        opt.scale_left = o["scale_left"].cast<double>();
        opt.scale_right = o["scale_right"].cast<double>();
        const std::string k = o["kernel"].cast<std::string>();
        opt.kernel = k == "epanechnikov" ? rd::RdKernel::epanechnikov
                     : k == "triangular" ? rd::RdKernel::triangular
                                         : rd::RdKernel::uniform;
        opt.h_left = o["h_left"].cast<double>();
        opt.h_right = o["h_right"].cast<double>();
        opt.support_low = o["support_low"].cast<double>();
        opt.support_high = o["support_high"].cast<double>();
        const std::string mp = o["masspoints"].cast<std::string>();
        opt.masspoints = mp == "off" ? rd::MassPoints::off
                         : mp == "check" ? rd::MassPoints::check
                                         : rd::MassPoints::adjust;
        opt.level = o["level"].cast<double>();
        opt.nplot = o["nplot"].cast<int>();
        if (o.contains("covs_eval_mean")) opt.covs_eval_mean = o["covs_eval_mean"].cast<bool>();
        if (o.contains("covs_drop")) opt.covs_drop = o["covs_drop"].cast<bool>();
        if (o.contains("covs_names"))
          opt.covs_names = o["covs_names"].cast<std::vector<std::string>>();
        rd::RdPlotResult r;
        {
          py::gil_scoped_release release;
          r = rd::rdplot(yv, xv, zv, dz, wv, opt);
        }
        py::dict out;
        out["left"] = side_dict(r.left);
        out["right"] = side_dict(r.right);
        out["binselect"] = r.binselect;
        out["mass_points"] = r.mass_points;
        out["n_dropped"] = r.n_dropped;
        out["covs_kept"] = r.covs_kept;
        out["covs_dropped"] = r.covs_dropped;
        out["coef_covs"] = r.coef_covs;
        out["coef_covs_bins"] = r.coef_covs_bins;
        out["covs_eval"] = r.covs_eval;
        return out;
      },
      py::arg("y"), py::arg("x"), py::arg("w"), py::arg("options"), py::arg("covs") = py::none());
}
