// attnreg R face: regression discontinuity (attnreg/rd/rdrobust.hpp). Converts, calls the core,
// converts back; the R API is rd_robust() / rd_bwselect() in R/rd.R.
#include <Rcpp.h>

#include <cstdint>
#include <string>
#include <vector>

#include "attnreg/rd/rdrobust.hpp"
#include "attnreg/rd/rddensity.hpp"

namespace {

// The inputs as views of R's numeric vectors (no copies of y, x, the treatment, the weights or
// the covariate matrix, which R stores column-major as the core wants); the cluster codes are
// converted (R factor codes 1..G, NA -> missing). The vectors must outlive the call.
struct RdInputs {
  Rcpp::NumericVector t, w;  // hold (and protect) what Nullable converted
  Rcpp::NumericMatrix z;
  std::vector<std::int64_t> cluster;
  attnreg::rd::RdDataView view;
};

void rd_data(RdInputs& in, const Rcpp::NumericVector& y, const Rcpp::NumericVector& x,
             const Rcpp::Nullable<Rcpp::NumericVector>& t,
             const Rcpp::Nullable<Rcpp::NumericMatrix>& z,
             const Rcpp::Nullable<Rcpp::NumericVector>& w,
             const Rcpp::Nullable<Rcpp::IntegerVector>& cluster) {
  using attnreg::rd::RdSpan;
  attnreg::rd::RdDataView& d = in.view;
  d.y = RdSpan<double>(y.begin(), static_cast<std::size_t>(y.size()));
  d.x = RdSpan<double>(x.begin(), static_cast<std::size_t>(x.size()));
  if (t.isNotNull()) {
    in.t = Rcpp::NumericVector(t);
    d.t = RdSpan<double>(in.t.begin(), static_cast<std::size_t>(in.t.size()));
  }
  if (z.isNotNull()) {
    in.z = Rcpp::NumericMatrix(z);
    d.dz = in.z.ncol();
    d.z = RdSpan<double>(in.z.begin(), static_cast<std::size_t>(in.z.size()));
  }
  if (w.isNotNull()) {
    in.w = Rcpp::NumericVector(w);
    d.weights = RdSpan<double>(in.w.begin(), static_cast<std::size_t>(in.w.size()));
  }
  if (cluster.isNotNull()) {
    Rcpp::IntegerVector cv(cluster);
    in.cluster.resize(cv.size());
    for (R_xlen_t i = 0; i < cv.size(); ++i)
      in.cluster[i] = cv[i] == NA_INTEGER ? -1 : static_cast<std::int64_t>(cv[i]) - 1;
    d.cluster = RdSpan<std::int64_t>(in.cluster);
  }
}

attnreg::rd::RdOptions rd_options(const Rcpp::List& o) {
  namespace rd = attnreg::rd;
  rd::RdOptions opt;
  opt.c = Rcpp::as<double>(o["c"]);
  opt.p = Rcpp::as<int>(o["p"]);
  opt.q = Rcpp::as<int>(o["q"]);
  opt.deriv = Rcpp::as<int>(o["deriv"]);
  const std::string k = Rcpp::as<std::string>(o["kernel"]);
  opt.kernel = k == "epanechnikov" ? rd::RdKernel::epanechnikov
               : k == "uniform"    ? rd::RdKernel::uniform
                                   : rd::RdKernel::triangular;
  const std::string v = Rcpp::as<std::string>(o["vce"]);
  opt.vce = v == "hc0" ? rd::RdVce::hc0
            : v == "hc1" ? rd::RdVce::hc1
            : v == "hc2" ? rd::RdVce::hc2
            : v == "hc3" ? rd::RdVce::hc3
            : v == "cr1" ? rd::RdVce::cr1
            : v == "cr2" ? rd::RdVce::cr2
            : v == "cr3" ? rd::RdVce::cr3
                         : rd::RdVce::nn;
  opt.nnmatch = Rcpp::as<int>(o["nnmatch"]);
  const std::string mp = Rcpp::as<std::string>(o["masspoints"]);
  opt.masspoints = mp == "off" ? rd::MassPoints::off
                   : mp == "check" ? rd::MassPoints::check
                                   : rd::MassPoints::adjust;
  opt.bwcheck = Rcpp::as<int>(o["bwcheck"]);
  opt.bwrestrict = Rcpp::as<bool>(o["bwrestrict"]);
  opt.scaleregul = Rcpp::as<double>(o["scaleregul"]);
  opt.stdvars = Rcpp::as<bool>(o["stdvars"]);
  opt.bwselect = Rcpp::as<std::string>(o["bwselect"]);
  opt.h_left = Rcpp::as<double>(o["h_left"]);
  opt.h_right = Rcpp::as<double>(o["h_right"]);
  opt.b_left = Rcpp::as<double>(o["b_left"]);
  opt.b_right = Rcpp::as<double>(o["b_right"]);
  opt.rho = Rcpp::as<double>(o["rho"]);
  opt.level = Rcpp::as<double>(o["level"]);
  opt.sharpbw = Rcpp::as<bool>(o["sharpbw"]);
  return opt;
}

}  // namespace

// [[Rcpp::export(name = ".rd_robust_cpp")]]
Rcpp::List rd_robust_cpp(const Rcpp::NumericVector& y, const Rcpp::NumericVector& x,
                         Rcpp::Nullable<Rcpp::NumericVector> t,
                         Rcpp::Nullable<Rcpp::NumericMatrix> z,
                         Rcpp::Nullable<Rcpp::NumericVector> w,
                         Rcpp::Nullable<Rcpp::IntegerVector> cluster, const Rcpp::List& options) {
  RdInputs in;
  rd_data(in, y, x, t, z, w, cluster);
  const attnreg::rd::RdResult r = attnreg::rd::rdrobust(in.view, rd_options(options));
  auto inf = [](const attnreg::rd::RdInference& e) {
    auto v3 = [](const double* a) { return Rcpp::NumericVector(a, a + 3); };
    return Rcpp::List::create(Rcpp::Named("coef") = v3(e.coef), Rcpp::Named("se") = v3(e.se),
                              Rcpp::Named("z") = v3(e.z), Rcpp::Named("p_value") = v3(e.p_value),
                              Rcpp::Named("ci_low") = v3(e.ci_low),
                              Rcpp::Named("ci_high") = v3(e.ci_high));
  };
  std::vector<int> kept(r.covs_kept.begin(), r.covs_kept.end()),
      dropped(r.covs_dropped.begin(), r.covs_dropped.end());
  for (int& k : kept) ++k;
  for (int& k : dropped) ++k;
  return Rcpp::List::create(
      Rcpp::Named("estimate") = inf(r.est), Rcpp::Named("first_stage") = inf(r.first_stage),
      Rcpp::Named("fuzzy") = r.fuzzy,
      Rcpp::Named("bandwidths") =
          Rcpp::NumericVector::create(r.bw.h_left, r.bw.h_right, r.bw.b_left, r.bw.b_right),
      Rcpp::Named("bwselect") = r.bwselect, Rcpp::Named("vce") = r.vce,
      Rcpp::Named("n") = Rcpp::NumericVector::create(r.n_left, r.n_right),
      Rcpp::Named("n_h") = Rcpp::NumericVector::create(r.nh_left, r.nh_right),
      Rcpp::Named("n_unique") = Rcpp::NumericVector::create(r.m_left, r.m_right),
      Rcpp::Named("n_dropped") = static_cast<double>(r.n_dropped),
      Rcpp::Named("clusters") = static_cast<double>(r.clusters),
      Rcpp::Named("gamma") = Rcpp::NumericVector(r.gamma.begin(), r.gamma.end()),
      Rcpp::Named("covs_kept") = kept, Rcpp::Named("covs_dropped") = dropped,
      Rcpp::Named("weights") = Rcpp::NumericVector(r.weights.begin(), r.weights.end()));
}

// [[Rcpp::export(name = ".rd_bwselect_cpp")]]
Rcpp::List rd_bwselect_cpp(const Rcpp::NumericVector& y, const Rcpp::NumericVector& x,
                           Rcpp::Nullable<Rcpp::NumericVector> t,
                           Rcpp::Nullable<Rcpp::NumericMatrix> z,
                           Rcpp::Nullable<Rcpp::NumericVector> w,
                           Rcpp::Nullable<Rcpp::IntegerVector> cluster,
                           const Rcpp::List& options, bool all) {
  RdInputs in;
  rd_data(in, y, x, t, z, w, cluster);
  const attnreg::rd::RdBwResult r = attnreg::rd::rdbwselect(in.view, rd_options(options), all);
  Rcpp::NumericMatrix bws(r.bws.size(), 4);
  for (std::size_t i = 0; i < r.bws.size(); ++i) {
    bws(i, 0) = r.bws[i].h_left;
    bws(i, 1) = r.bws[i].h_right;
    bws(i, 2) = r.bws[i].b_left;
    bws(i, 3) = r.bws[i].b_right;
  }
  return Rcpp::List::create(Rcpp::Named("bws") = bws,
                            Rcpp::Named("selectors") = Rcpp::wrap(r.selectors),
                            Rcpp::Named("n") = Rcpp::NumericVector::create(r.n_left, r.n_right),
                            Rcpp::Named("n_dropped") = static_cast<double>(r.n_dropped),
                            Rcpp::Named("vce") = r.vce);
}

// [[Rcpp::export(name = ".rd_density_cpp")]]
Rcpp::List rd_density_cpp(const Rcpp::NumericVector& x, const Rcpp::List& o) {
  attnreg::rd::RdDensityOptions opt;
  opt.c = Rcpp::as<double>(o["c"]);
  opt.p = Rcpp::as<int>(o["p"]);
  opt.q = Rcpp::as<int>(o["q"]);
  const std::string k = Rcpp::as<std::string>(o["kernel"]);
  opt.kernel = k == "epanechnikov" ? attnreg::rd::RdKernel::epanechnikov
               : k == "uniform"    ? attnreg::rd::RdKernel::uniform
                                   : attnreg::rd::RdKernel::triangular;
  opt.bwselect = Rcpp::as<std::string>(o["bwselect"]);
  opt.h_left = Rcpp::as<double>(o["h_left"]);
  opt.h_right = Rcpp::as<double>(o["h_right"]);
  opt.masspoints = Rcpp::as<bool>(o["masspoints"]);
  opt.regularize = Rcpp::as<bool>(o["regularize"]);
  opt.nlocalmin = Rcpp::as<int>(o["nlocalmin"]);
  opt.nuniquemin = Rcpp::as<int>(o["nuniquemin"]);
  opt.bino_n = Rcpp::as<int>(o["bino_n"]);
  opt.bino_w = Rcpp::as<double>(o["bino_w"]);
  opt.bino_nw = Rcpp::as<int>(o["bino_nw"]);
  opt.bino_p = Rcpp::as<double>(o["bino_p"]);
  opt.fitselect = Rcpp::as<std::string>(o["fitselect"]);
  opt.vce = Rcpp::as<std::string>(o["vce"]);
  const attnreg::rd::RdDensityResult r =
      attnreg::rd::rddensity(std::vector<double>(x.begin(), x.end()), opt);
  const Rcpp::NumericVector nl(r.bino_n_left.begin(), r.bino_n_left.end()),
      nr(r.bino_n_right.begin(), r.bino_n_right.end());
  return Rcpp::List::create(
      Rcpp::Named("f") = Rcpp::NumericVector::create(r.f_left, r.f_right, r.diff),
      Rcpp::Named("se") = Rcpp::NumericVector::create(r.se_left, r.se_right, r.se_diff),
      Rcpp::Named("statistic") = r.statistic, Rcpp::Named("p_value") = r.p_value,
      Rcpp::Named("h") = Rcpp::NumericVector::create(r.h_left, r.h_right),
      Rcpp::Named("bwselect") = r.bwselect, Rcpp::Named("bw_table") = Rcpp::wrap(r.bw_table),
      Rcpp::Named("n") = Rcpp::NumericVector::create(r.n, r.n_left, r.n_right, r.nh_left,
                                                     r.nh_right),
      Rcpp::Named("mass_points") = r.mass_points, Rcpp::Named("fitselect") = r.fitselect,
      Rcpp::Named("vce") = r.vce,
      Rcpp::Named("bino") = Rcpp::DataFrame::create(
          Rcpp::Named("w_left") = Rcpp::wrap(r.bino_w_left),
          Rcpp::Named("w_right") = Rcpp::wrap(r.bino_w_right), Rcpp::Named("n_left") = nl,
          Rcpp::Named("n_right") = nr, Rcpp::Named("p_value") = Rcpp::wrap(r.bino_p_value)));
}
