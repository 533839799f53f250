// attnreg R face: regression discontinuity plots (attnreg/rd/rdplot.hpp). Converts, calls the
// core, converts back; the R API is rd_plot() in R/rd_plot.R.
#include <Rcpp.h>

#include <string>
#include <vector>

#include "attnreg/rd/rdplot.hpp"

namespace {

Rcpp::List rd_plot_side(const attnreg::rd::RdPlotSide& s) {
  const std::vector<double> cnt(s.count.begin(), s.count.end());
  Rcpp::List l = Rcpp::List::create(
      Rcpp::Named("n") = Rcpp::NumericVector::create(s.n, s.n_h, s.m),
      Rcpp::Named("h") = s.h, Rcpp::Named("J") = s.J,
      Rcpp::Named("J_imse") = s.J_imse, Rcpp::Named("J_mv") = s.J_mv,
      Rcpp::Named("scale") = s.scale, Rcpp::Named("rscale") = s.rscale,
      Rcpp::Named("var_y") = s.var_y, Rcpp::Named("coef") = Rcpp::wrap(s.coef),
      Rcpp::Named("edges") = Rcpp::wrap(s.edges), Rcpp::Named("mid") = Rcpp::wrap(s.mid),
      Rcpp::Named("mean_x") = Rcpp::wrap(s.mean_x), Rcpp::Named("mean_y") = Rcpp::wrap(s.mean_y),
      Rcpp::Named("sd_y") = Rcpp::wrap(s.sd_y), Rcpp::Named("se_y") = Rcpp::wrap(s.se_y),
      Rcpp::Named("ci_low") = Rcpp::wrap(s.ci_low), Rcpp::Named("ci_high") = Rcpp::wrap(s.ci_high),
      Rcpp::Named("count") = Rcpp::wrap(cnt), Rcpp::Named("curve_x") = Rcpp::wrap(s.curve_x),
      Rcpp::Named("curve_y") = Rcpp::wrap(s.curve_y));
  l["mean_y_raw"] = Rcpp::wrap(s.mean_y_raw);
  return l;
}

}  // namespace

// [[Rcpp::export(name = ".rd_plot_cpp")]]
Rcpp::List rd_plot_cpp(const Rcpp::NumericVector& y, const Rcpp::NumericVector& x,
                       const Rcpp::Nullable<Rcpp::NumericVector>& w, const Rcpp::List& o,
                       const Rcpp::Nullable<Rcpp::NumericMatrix>& covs = R_NilValue) {
  namespace rd = attnreg::rd;
  rd::RdPlotOptions opt;
  opt.c = Rcpp::as<double>(o["c"]);
  opt.p = Rcpp::as<int>(o["p"]);
  opt.binselect = rd::parse_binselect(Rcpp::as<std::string>(o["binselect"]));
  opt.nbins_left = Rcpp::as<int>(o["nbins_left"]);
  opt.nbins_right = Rcpp::as<int>(o["nbins_right"]);
  opt.scale_left = Rcpp::as<double>(o["scale_left"]);
  opt.scale_right = Rcpp::as<double>(o["scale_right"]);
  const std::string k = Rcpp::as<std::string>(o["kernel"]);
  opt.kernel = k == "epanechnikov" ? rd::RdKernel::epanechnikov
               : k == "triangular" ? rd::RdKernel::triangular
                                   : rd::RdKernel::uniform;
  opt.h_left = Rcpp::as<double>(o["h_left"]);
  opt.h_right = Rcpp::as<double>(o["h_right"]);
  opt.support_low = Rcpp::as<double>(o["support_low"]);
  opt.support_high = Rcpp::as<double>(o["support_high"]);
  const std::string mp = Rcpp::as<std::string>(o["masspoints"]);
  opt.masspoints = mp == "off" ? rd::MassPoints::off
                   : mp == "check" ? rd::MassPoints::check
                                   : rd::MassPoints::adjust;
  opt.level = Rcpp::as<double>(o["level"]);
  opt.nplot = Rcpp::as<int>(o["nplot"]);
  if (o.containsElementNamed("covs_eval_mean"))
    opt.covs_eval_mean = Rcpp::as<bool>(o["covs_eval_mean"]);
  if (o.containsElementNamed("covs_drop")) opt.covs_drop = Rcpp::as<bool>(o["covs_drop"]);
  if (o.containsElementNamed("covs_names"))
    opt.covs_names = Rcpp::as<std::vector<std::string>>(o["covs_names"]);
  // covs: an n x dz matrix, column-major as the core takes it.
  std::vector<double> zv;
  std::size_t dz = 0;
  if (covs.isNotNull()) {
    Rcpp::NumericMatrix zm(covs);
    dz = zm.ncol();
    zv.assign(zm.begin(), zm.end());
  }
  std::vector<double> wv;
  if (w.isNotNull()) {
    Rcpp::NumericVector wn(w);
    wv.assign(wn.begin(), wn.end());
  }
  const rd::RdPlotResult r = rd::rdplot(std::vector<double>(y.begin(), y.end()),
                                        std::vector<double>(x.begin(), x.end()), zv, dz, wv, opt);
  auto idx1 = [](const std::vector<std::size_t>& v) {  // 1-based column numbers
    std::vector<double> o(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) o[i] = static_cast<double>(v[i] + 1);
    return o;
  };
  return Rcpp::List::create(Rcpp::Named("left") = rd_plot_side(r.left),
                            Rcpp::Named("right") = rd_plot_side(r.right),
                            Rcpp::Named("binselect") = r.binselect,
                            Rcpp::Named("mass_points") = r.mass_points,
                            Rcpp::Named("n_dropped") = static_cast<double>(r.n_dropped),
                            Rcpp::Named("covs_kept") = Rcpp::wrap(idx1(r.covs_kept)),
                            Rcpp::Named("covs_dropped") = Rcpp::wrap(idx1(r.covs_dropped)),
                            Rcpp::Named("coef_covs") = Rcpp::wrap(r.coef_covs),
                            Rcpp::Named("coef_covs_bins") = Rcpp::wrap(r.coef_covs_bins),
                            Rcpp::Named("covs_eval") = Rcpp::wrap(r.covs_eval));
}
