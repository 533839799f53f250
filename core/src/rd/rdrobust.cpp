// Regression discontinuity estimation (see attnreg/rd/rdrobust.hpp for the references): the
// two one-sided fits of the point estimate and the bias correction, the covariate adjustment,
// the variances and the attention weights; rdbwselect's entry point.
#include "attnreg/rd/rdrobust.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "attnreg/base/error.hpp"
#include "attnreg/inference/distributions.hpp"
#include "attnreg/detail/rd_local.hpp"

namespace attnreg {
namespace rd {
namespace detail {

// One side of the main estimate: the windows, the p- and q-fits, the equivalent-kernel weights
// of the conventional and the bias-corrected coefficient, and the residuals.
struct SideFit {
  Window w;
  std::vector<double> wh, wb, ellp, ellbc, resh, resb, Ztil;
  Fit fp, fq;
  std::vector<double> cl_coef, bc_coef;  // per column: coefficient deriv (conventional, bc)
  const std::vector<double>& res_b() const { return resb.empty() ? resh : resb; }
  std::vector<double> ZZ, ZY;
  std::size_t nh = 0, nb = 0;
  std::vector<double> beta_p;           // outcome column, scale of (x - c)
};

SideFit fit_side(const Side& s, const RdOptions& opt, double h, double b, bool right,
                 bool clustered, std::size_t ny, std::size_t dz) {
  const int p = opt.p, q = opt.q, deriv = opt.deriv;
  const double c = opt.c;
  SideFit F;
  F.w = gather(s, c, std::max(h, b), opt.kernel);
  F.wh = window_weights(s, F.w, c, h, opt.kernel);
  F.wb = window_weights(s, F.w, c, b, opt.kernel);
  for (std::size_t j = 0; j < F.w.n(); ++j) {
    F.nh += F.wh[j] > 0;
    F.nb += F.wb[j] > 0;
  }
  if (distinct_positive(F.w, F.wh, p + 1) < static_cast<std::size_t>(p + 1) ||
      distinct_positive(F.w, F.wb, q + 1) < static_cast<std::size_t>(q + 1)) {
    std::ostringstream o;
    o << "h/b: too few distinct x values within the bandwidths on the "
      << (right ? "right" : "left") << " side of the cutoff (need " << (p + 1)
      << " within h and " << (q + 1) << " within b); widen h or b";
    throw InvalidArgument(o.str());
  }
  F.fp = poly_fit(F.w, F.wh, p, h);
  F.fq = poly_fit(F.w, F.wb, q, b);
  if (!F.fp.ok || !F.fq.ok)
    throw NumericalError("h/b: the local polynomial design is singular within the bandwidth");
  F.ellp = coef_weights(F.w, F.wh, F.fp, deriv);
  // Bias correction (CCT 2014, eq. 3.4 and Theorem 1): beta_bc = beta_p - h^(p+1-nu)
  // (Ginv L)_nu beta_q,p+1, linear in the data with weights l_p - k l_q (l_q computed into
  // the vector that then becomes l_bc: one window-sized buffer less).
  const double kfac = std::pow(h, p + 1 - deriv) * bias_constant(F.w, F.wh, F.fp, deriv);
  F.ellbc = coef_weights(F.w, F.wb, F.fq, p + 1);
  for (std::size_t j = 0; j < F.w.n(); ++j) F.ellbc[j] = F.ellp[j] - kfac * F.ellbc[j];
  const std::size_t k = F.w.k;
  F.cl_coef.assign(k, 0.0);
  F.bc_coef.assign(k, 0.0);
  for (std::size_t m = 0; m < k; ++m) {
    double a = 0, bsum = 0;
    for (std::size_t j = 0; j < F.w.n(); ++j) {
      a += F.ellp[j] * F.w.D[j * k + m];
      bsum += F.ellbc[j] * F.w.D[j * k + m];
    }
    F.cl_coef[m] = a;
    F.bc_coef[m] = bsum;
  }
  F.beta_p.resize(p + 1);
  for (int a = 0; a <= p; ++a) F.beta_p[a] = F.fp.beta[a * k] * std::pow(h, -a);
  // Nearest-neighbour residuals do not use the kernel weights: free those not needed later
  // (wh only with covariates) before the residuals take their window-sized buffer.
  if (opt.vce == RdVce::nn) {
    std::vector<double>().swap(F.wb);
    if (dz == 0) std::vector<double>().swap(F.wh);
  }
  F.resh = residuals(F.w, opt.vce, clustered, opt.nnmatch, &F.fp, &F.wh, p + 1);
  if (opt.vce != RdVce::nn)  // nn: the residuals do not depend on the fit (resb() = resh)
    F.resb = residuals(F.w, opt.vce, clustered, opt.nnmatch, &F.fq, &F.wb, q + 1);
  if (dz > 0) {
    F.ZZ.assign(dz * dz, 0.0);
    F.ZY.assign(dz * ny, 0.0);
    partial_sums(F.w, F.wh, F.fp, ny, dz, F.ZZ, F.ZY, &F.Ztil);
  }
  std::vector<double>().swap(F.wb);  // not needed from here on; wh only with covariates
  if (dz == 0) std::vector<double>().swap(F.wh);
  return F;
}

// Fixed bandwidths (b = h or h / rho by default), the widest one-sided range below 20 rows
// (rdrobust's rule), or the selector's.
RdBandwidths choose_bandwidths(Prepared& P, const RdDataView& data, const RdOptions& opt,
                               int bwcheck, std::string& bwselect) {
  const double c = opt.c;
  double hl = opt.h_left, hr = opt.h_right, bl = opt.b_left, br = opt.b_right;
  if (!std::isnan(hl)) {
    bwselect = "Manual";
    if (!std::isnan(opt.rho)) {
      bl = hl / opt.rho;
      br = hr / opt.rho;
    } else if (std::isnan(bl)) {
      bl = hl;
      br = hr;
    }
  } else if (P.n < 20) {
    // Too few observations for the plug-in rule: the widest one-sided range (rdrobust's rule).
    hl = hr = std::max(std::fabs(c - P.x_min), std::fabs(P.x_max - c));
    bl = br = std::isnan(opt.rho) ? hl : hl / opt.rho;
    bwselect = "Manual";
  } else {
    auto bws = select_bandwidths(P, opt, opt.bwselect, bwcheck, &data);
    const RdBandwidths& b = bws.at(opt.bwselect);
    hl = b.h_left;
    hr = b.h_right;
    bl = b.b_left;
    br = b.b_right;
    if (!std::isnan(opt.rho)) {
      bl = hl / opt.rho;
      br = hr / opt.rho;
    }
    bwselect = opt.bwselect;
  }
  return RdBandwidths{hl, hr, bl, br};
}

// Attention weights over the input rows: +-nu! l_p, minus the covariate adjustment
// (a'Z) ZZ^{-1} w_h Ztilde (so that a @ y is the covariate-adjusted estimate).
void fill_weights(RdResult& r, const SideFit S[2], const Side* const sides[2], std::size_t ny,
                  std::size_t dz, double fac, std::size_t n_input) {
  r.weights.assign(n_input, 0.0);
  std::vector<double> adj(dz, 0.0);
  if (dz > 0) {
    std::vector<double> ZZ(dz * dz), dZ(dz);
    for (std::size_t a = 0; a < ZZ.size(); ++a) ZZ[a] = S[0].ZZ[a] + S[1].ZZ[a];
    for (std::size_t a = 0; a < dz; ++a)
      dZ[a] = fac * (S[1].cl_coef[ny + a] - S[0].cl_coef[ny + a]);
    bool ok = false;
    const std::vector<double> inv = spd_inverse(ZZ, static_cast<int>(dz), ok);
    for (std::size_t a = 0; a < dz; ++a)
      for (std::size_t b2 = 0; b2 < dz; ++b2) adj[a] += dZ[b2] * inv[b2 * dz + a];
  }
  for (int i = 0; i < 2; ++i) {
    const double sign = i ? 1.0 : -1.0;
    const SideFit& F = S[i];
    const Side& s = *sides[i];
    for (std::size_t j = 0; j < F.w.n(); ++j) {
      double a = sign * fac * F.ellp[j];
      for (std::size_t m = 0; m < dz; ++m) a -= adj[m] * F.wh[j] * F.Ztil[j * dz + m];
      r.weights[s.row[F.w.idx(j)]] = a;
    }
  }
}

// Only the input rows of the sides are read once the variances are done: their x, columns and
// the fits' residuals go before the n weights are allocated (the memory peak of a large call).
void release_before_weights(Prepared& P, SideFit S[2]) {
  for (Side* s : {&P.left, &P.right}) {
    std::vector<double>().swap(s->x);
    std::vector<double>().swap(s->D);
  }
  for (int i = 0; i < 2; ++i) {
    std::vector<double>().swap(S[i].resh);
    std::vector<double>().swap(S[i].resb);
    std::vector<double>().swap(S[i].ellbc);
  }
}

// The counts of the prepared data, which the estimate's and the bandwidths' results share.
template <class Result>
void copy_counts(const Prepared& P, Result& r) {
  r.n_left = P.left.n();
  r.n_right = P.right.n();
  r.n_dropped = P.n_dropped;
  r.m_left = P.m_left;
  r.m_right = P.m_right;
  r.covs_dropped = P.covs_dropped;
}

// The counts of the prepared data in a fresh result.
RdResult result_header(const Prepared& P) {
  RdResult r;
  r.fuzzy = P.fuzzy;
  copy_counts(P, r);
  r.covs_kept = P.covs_kept;
  return r;
}

// z statistics, p-values and intervals of the three rows from their coefficients and standard
// errors (the faces only lay them out).
void normal_inference(RdInference& e, double level) {
  const double zq = normal_quantile(0.5 + level / 2);
  for (int k = 0; k < 3; ++k) {
    e.z[k] = e.coef[k] / e.se[k];
    e.p_value[k] = 2 * normal_sf(std::fabs(e.z[k]));
    e.ci_low[k] = e.coef[k] - zq * e.se[k];
    e.ci_high[k] = e.coef[k] + zq * e.se[k];
  }
}

// A fuzzy design needs a first stage: variation in the treatment or a jump at the cutoff
// (one-sided compliance is fine; rdrobust then selects the sharp bandwidths).
void check_first_stage(const Prepared& P) {
  if (P.fuzzy) {
    const double vl = column_var(P.left, 1), vr = column_var(P.right, 1);
    if (vl == 0 && vr == 0 &&
        std::fabs(column_mean(P.left, 1) - column_mean(P.right, 1)) < kSqrtEps)
      throw InvalidArgument("fuzzy: the treatment has no variation and no jump at the cutoff; "
                            "the fuzzy estimate is not identified");
  }
}

}  // namespace detail

using namespace detail;

const std::vector<std::string>& selector_names() {
  static const std::vector<std::string> names = {"mserd", "msetwo", "msesum", "msecomb1",
                                                 "msecomb2", "cerrd", "certwo", "cersum",
                                                 "cercomb1", "cercomb2"};
  return names;
}

RdBwResult rdbwselect(const RdDataView& data, const RdOptions& opt_in, bool all) {
  const RdOptions opt = normalised(opt_in, !data.cluster.empty());
  validate(opt);
  Prepared P = prepare(data, opt);
  RdBwResult r;
  copy_counts(P, r);
  r.vce = vce_label(opt.vce, !data.cluster.empty());
  r.bwcheck_used = effective_bwcheck(P, opt, r.mass_points);
  auto bws = select_bandwidths(P, opt, all ? std::string() : opt.bwselect, r.bwcheck_used);
  for (const auto& nm : selector_names()) {
    auto it = bws.find(nm);
    if (it == bws.end()) continue;
    r.selectors.push_back(nm);
    r.bws.push_back(it->second);
  }
  return r;
}

RdResult rdrobust(const RdDataView& data, const RdOptions& opt_in) {
  const RdOptions opt = normalised(opt_in, !data.cluster.empty());
  validate(opt);
  Prepared P = prepare(data, opt);
  const int p = opt.p, q = opt.q, deriv = opt.deriv;
  RdResult r = result_header(P);
  const bool clustered = !data.cluster.empty();
  r.vce = vce_label(opt.vce, clustered);
  check_first_stage(P);
  const int bwcheck = effective_bwcheck(P, opt, r.mass_points);
  r.bw = choose_bandwidths(P, data, opt, bwcheck, r.bwselect);
  const double hl = r.bw.h_left, hr = r.bw.h_right, bl = r.bw.b_left, br = r.bw.b_right;

  const std::size_t ny = P.fuzzy ? 2 : 1, dz = P.dz;
  const double fac = factorial(deriv);
  SideFit S[2] = {fit_side(P.left, opt, hl, bl, false, clustered, ny, dz),
                  fit_side(P.right, opt, hr, br, true, clustered, ny, dz)};
  const Side* sides[2] = {&P.left, &P.right};
  r.nh_left = S[0].nh;
  r.nh_right = S[1].nh;
  r.nb_left = S[0].nb;
  r.nb_right = S[1].nb;
  r.beta_p_left = S[0].beta_p;
  r.beta_p_right = S[1].beta_p;
  // Covariate coefficients (common to both sides).
  std::vector<double> gamma;
  if (dz > 0) {
    std::vector<double> ZZ(dz * dz), ZY(dz * ny);
    for (std::size_t a = 0; a < ZZ.size(); ++a) ZZ[a] = S[0].ZZ[a] + S[1].ZZ[a];
    for (std::size_t a = 0; a < ZY.size(); ++a) ZY[a] = S[0].ZY[a] + S[1].ZY[a];
    gamma = solve_gamma(ZZ, ZY, dz, ny);
    r.gamma.resize(dz);
    for (std::size_t a = 0; a < dz; ++a) r.gamma[a] = gamma[a * ny];
  }
  // Adjusted jump of column m (outcome 0 or treatment 1): s_m' coefficients.
  auto adjusted = [&](const std::vector<double>& coef, std::size_t m) {
    double v = coef[m];
    for (std::size_t a = 0; a < dz; ++a) v -= gamma[a * ny + m] * coef[ny + a];
    return fac * v;
  };
  double tY_cl[2], tY_bc[2], tT_cl[2] = {0, 0}, tT_bc[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    tY_cl[i] = adjusted(S[i].cl_coef, 0);
    tY_bc[i] = adjusted(S[i].bc_coef, 0);
    if (P.fuzzy) {
      tT_cl[i] = adjusted(S[i].cl_coef, 1);
      tT_bc[i] = adjusted(S[i].bc_coef, 1);
    }
  }
  r.tau_cl_left = tY_cl[0];
  r.tau_cl_right = tY_cl[1];
  r.tau_bc_left = tY_bc[0];
  r.tau_bc_right = tY_bc[1];
  const double tauY_cl = tY_cl[1] - tY_cl[0], tauY_bc = tY_bc[1] - tY_bc[0];
  const std::size_t k = ny + dz;
  std::vector<double> sY(k, 0.0), sT(k, 0.0);
  double tau_cl = tauY_cl, tau_bc = tauY_bc;
  if (!P.fuzzy) {
    sY[0] = 1;
    for (std::size_t a = 0; a < dz; ++a) sY[1 + a] = -gamma[a];
    r.bias_left = tY_cl[0] - tY_bc[0];
    r.bias_right = tY_cl[1] - tY_bc[1];
  } else {
    const double tauT_cl = tT_cl[1] - tT_cl[0], tauT_bc = tT_bc[1] - tT_bc[0];
    check::require(tauT_cl != 0, "fuzzy", "the estimated first-stage jump is exactly zero");
    tau_cl = tauY_cl / tauT_cl;
    const double s0 = 1 / tauT_cl, s1 = -tauY_cl / (tauT_cl * tauT_cl);
    tau_bc = tau_cl - (s0 * (tauY_cl - tauY_bc) + s1 * (tauT_cl - tauT_bc));
    r.bias_left = s0 * (tY_cl[0] - tY_bc[0]) + s1 * (tT_cl[0] - tT_bc[0]);
    r.bias_right = s0 * (tY_cl[1] - tY_bc[1]) + s1 * (tT_cl[1] - tT_bc[1]);
    sY[0] = s0;
    sY[1] = s1;
    sT[1] = 1;
    for (std::size_t a = 0; a < dz; ++a) {
      sY[2 + a] = -s0 * gamma[a * ny] - s1 * gamma[a * ny + 1];
      sT[2 + a] = -gamma[a * ny + 1];
    }
    r.first_stage.coef[0] = tauT_cl;
    r.first_stage.coef[1] = r.first_stage.coef[2] = tauT_bc;
  }
  r.est.coef[0] = tau_cl;
  r.est.coef[1] = r.est.coef[2] = tau_bc;
  auto variance = [&](const std::vector<double>& s) {
    double vcl = 0, vrb = 0;
    for (int i = 0; i < 2; ++i) {
      std::size_t g = 0;
      const bool cr1 = !cluster_leverage(opt.vce);
      vcl += variance_sum(S[i].w, S[i].ellp, S[i].resh, s, p + 1, &g, cr1);
      vrb += variance_sum(S[i].w, S[i].ellbc, S[i].res_b(), s, q + 1, nullptr, cr1);
      if (clustered) (i ? r.clusters_right : r.clusters_left) = g;
    }
    return std::make_pair(fac * fac * vcl, fac * fac * vrb);
  };
  auto vY = variance(sY);
  r.est.se[0] = r.est.se[1] = std::sqrt(vY.first);
  r.est.se[2] = std::sqrt(vY.second);
  if (P.fuzzy) {
    auto vT = variance(sT);
    r.first_stage.se[0] = r.first_stage.se[1] = std::sqrt(vT.first);
    r.first_stage.se[2] = std::sqrt(vT.second);
  }
  if (clustered) {
    std::vector<std::int64_t> all;
    for (int i = 0; i < 2; ++i) all.insert(all.end(), S[i].w.cl, S[i].w.cl + S[i].w.n());
    std::sort(all.begin(), all.end());
    r.clusters = static_cast<std::size_t>(std::unique(all.begin(), all.end()) - all.begin());
  }
  normal_inference(r.est, opt.level);
  if (P.fuzzy) normal_inference(r.first_stage, opt.level);
  release_before_weights(P, S);
  fill_weights(r, S, sides, ny, dz, fac, P.n_input);
  return r;
}

}  // namespace rd
}  // namespace attnreg
