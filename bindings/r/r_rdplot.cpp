// attnreg R face: regression discontinuity plots (attnreg/rd/rdplot.hpp). Converts, calls the
// core, converts back; the R API is rd_plot() in R/rd_plot.R.
#include <Rcpp.h>

#include <string>
#include <vector>

#include "attnreg/rd/rdplot.hpp"

namespace {

Rcpp::List rd_plot_side(const attnreg::rd::RdPlotSide& s) {
  const std::vector<double> cnt(s.count.begin(), s.count.end());
  return Rcpp::List::create(
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
}

}  // namespace

// [[Rcpp::export(name = ".rd_plot_cpp")]]
Rcpp::List rd_plot_cpp(const Rcpp::NumericVector& y, const Rcpp::NumericVector& x,
                       const Rcpp::Nullable<Rcpp::NumericVector>& w, const Rcpp::List& o) {
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
  std::vector<double> wv;
  if (w.isNotNull()) {
    Rcpp::NumericVector wn(w);
    wv.assign(wn.begin(), wn.end());
  }
  const rd::RdPlotResult r = rd::rdplot(std::vector<double>(y.begin(), y.end()),
                                        std::vector<double>(x.begin(), x.end()), wv, opt);
  return Rcpp::List::create(Rcpp::Named("left") = rd_plot_side(r.left),
                            Rcpp::Named("right") = rd_plot_side(r.right),
                            Rcpp::Named("binselect") = r.binselect,
                            Rcpp::Named("mass_points") = r.mass_points,
                            Rcpp::Named("n_dropped") = static_cast<double>(r.n_dropped));
}
