// Covariates in the RD plot (attnreg/rd/rdplot.hpp): the checks, the global polynomials with a
// coefficient gamma common to both sides (Calonico, Cattaneo, Farrell and Titiunik 2019, REStat
// 101(3)), and the binned means adjusted as in Cattaneo, Crump, Farrell and Feng (2024, "On
// binscatter", AER 114(5)): alpha_b + zeval'gamma_b from y on the bin indicators and z.
//
// Both fits are solved by Frisch-Waugh-Lovell: the covariates and y are residualized on the
// polynomial of each side (or demeaned within each bin), stacked over both sides, and gamma is
// the least-squares fit of the stacked residuals (Householder QR throughout). A covariate is
// taken as collinear when its residual norm is within 1e-7 of the norm it had before (the
// relative threshold of the covariate check of rdrobust, core/src/rd/rd_prepare.cpp).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "attnreg/base/error.hpp"
#include "attnreg/detail/rdplot_detail.hpp"

namespace attnreg {
namespace rd {
namespace rdplot_detail {
namespace {

const double kCollinear = 1e-7;

std::string cov_name(const RdPlotOptions& opt, std::size_t a) {
  return opt.covs_names.empty() ? "column " + std::to_string(a + 1)
                                : "'" + opt.covs_names[a] + "'";
}

double col_norm(const std::vector<double>& M, std::size_t n, std::size_t j) {
  double s = 0;
  for (std::size_t i = 0; i < n; ++i) s += M[j * n + i] * M[j * n + i];
  return std::sqrt(s);
}

// Unweighted: the residual sum of squares of every covariate column after the polynomial of
// order pa in x - c on one side (added to rss); false if that polynomial is not identified.
bool side_poly_rss(const SideData& s, double c, double range, std::size_t dz, int pa,
                   std::vector<double>& rss) {
  const std::size_t ns = s.x.size(), P = pa + 1;
  std::vector<double> A(ns * P), B(ns * dz);
  for (std::size_t i = 0; i < ns; ++i) {
    const double t = (s.x[i] - c) / range;
    double pw = 1;
    for (std::size_t j = 0; j < P; ++j) { A[j * ns + i] = pw; pw *= t; }
    for (std::size_t a = 0; a < dz; ++a) B[a * ns + i] = s.z[i * dz + a];
  }
  std::vector<double> rdiag;
  const std::vector<double> X = qr_ls(A, ns, P, B, dz, rdiag);
  const double rmax = *std::max_element(rdiag.begin(), rdiag.end());
  for (double r : rdiag)
    if (!(r > rmax * ns * std::numeric_limits<double>::epsilon())) return false;
  for (std::size_t a = 0; a < dz; ++a)
    for (std::size_t i = 0; i < ns; ++i) {
      double v = B[a * ns + i];
      for (std::size_t j = 0; j < P; ++j) v -= A[j * ns + i] * X[a * P + j];
      rss[a] += v * v;
    }
  return true;
}

// Stacked least squares of the residual columns M (n x d) -> gamma, with the collinearity
// checks: `own` holds each column's norm before residualizing (0: constant).
std::vector<double> stacked_gamma(const std::vector<double>& M, const std::vector<double>& yr,
                                  std::size_t n, const std::vector<double>& own,
                                  const std::vector<std::size_t>& cols, const RdPlotOptions& opt,
                                  const std::string& where, const std::string& fix) {
  const std::size_t d = cols.size();
  for (std::size_t a = 0; a < d; ++a) {
    if (own[a] == 0)
      throw InvalidArgument("covs: " + cov_name(opt, cols[a]) + " is constant " + where +
                            "; remove it");
    if (!(col_norm(M, n, a) > kCollinear * own[a]))
      throw InvalidArgument("covs: " + cov_name(opt, cols[a]) + " is collinear with the " + fix);
  }
  std::vector<double> rdiag;
  std::vector<double> g = qr_ls(M, n, d, yr, 1, rdiag);
  for (std::size_t a = 0; a < d; ++a)
    if (!(rdiag[a] > kCollinear * col_norm(M, n, a)))
      throw InvalidArgument("covs: " + cov_name(opt, cols[a]) + " is collinear with the " +
                            "other covariates " + where + "; remove it");
  return g;
}

}  // namespace

void covs_prepare(const SideData& L, const SideData& R, std::size_t dz, RdPlotResult& res,
                  const RdPlotOptions& opt, double range_l, double range_r) {
  const std::size_t nl = L.x.size(), nr = R.x.size(), n = nl + nr;
  // A covariate that is a polynomial in x - c of order max(p, 1) on each side (a constant, x,
  // the side indicator, ...) cannot be separated from the fits: an error naming it.
  const int pa = std::max(opt.p, 1);
  std::vector<double> rss(dz, 0.0), mean(dz, 0.0), css(dz, 0.0);
  for (const SideData* s : {&L, &R})
    for (std::size_t i = 0; i < s->x.size(); ++i)
      for (std::size_t a = 0; a < dz; ++a) mean[a] += s->z[i * dz + a];
  for (double& m : mean) m /= n;
  for (const SideData* s : {&L, &R})
    for (std::size_t i = 0; i < s->x.size(); ++i)
      for (std::size_t a = 0; a < dz; ++a) {
        const double d = s->z[i * dz + a] - mean[a];
        css[a] += d * d;
      }
  if (side_poly_rss(L, opt.c, range_l, dz, pa, rss) && side_poly_rss(R, opt.c, range_r, dz, pa, rss))
    for (std::size_t a = 0; a < dz; ++a) {
      if (css[a] == 0)
        throw InvalidArgument("covs: " + cov_name(opt, a) + " is constant; remove it");
      if (!(std::sqrt(rss[a]) > kCollinear * std::sqrt(css[a])))
        throw InvalidArgument("covs: " + cov_name(opt, a) + " is a polynomial of order " +
                              std::to_string(pa) + " in x - c on each side of the cutoff " +
                              "(collinear with the fits); remove it");
    }
  // Collinear with earlier covariates: the check of rdrobust (rd_prepare.cpp), on every row.
  std::vector<double> zk(n * dz), xk(n);
  std::size_t j = 0;
  for (const SideData* s : {&L, &R})
    for (std::size_t i = 0; i < s->x.size(); ++i, ++j) {
      xk[j] = s->x[i];
      for (std::size_t a = 0; a < dz; ++a) zk[a * n + j] = s->z[i * dz + a];
    }
  detail::check_covariates(zk, n, dz, xk, res.covs_kept, res.covs_dropped);
  if (!res.covs_dropped.empty() && !opt.covs_drop) {
    std::string names;
    for (std::size_t a : res.covs_dropped) names += (names.empty() ? "" : ", ") + cov_name(opt, a);
    throw InvalidArgument("covs: " + names + " collinear with earlier covariates; remove " +
                          "them, or pass covs_drop = true to drop them");
  }
  for (std::size_t a : res.covs_kept) res.covs_eval.push_back(opt.covs_eval_mean ? mean[a] : 0.0);
}

void fit_global_covs(const SideData& L, const SideData& R, std::size_t dz, RdPlotResult& res,
                     const RdPlotOptions& opt, double range_l, double range_r) {
  const std::vector<std::size_t>& cols = res.covs_kept;
  const std::size_t d = cols.size(), nl = L.x.size(), nr = R.x.size(), n = nl + nr;
  const std::size_t P = opt.p + 1;
  std::vector<double> rl, rr;
  const std::vector<double> gl = side_ls(L, res.left, false, opt, range_l, dz, cols, &rl, true);
  const std::vector<double> gr = side_ls(R, res.right, true, opt, range_r, dz, cols, &rr, true);
  // Stacked residuals (sqrt(w) scale) and each covariate's weighted centred norm.
  std::vector<double> M(n * d), yr(n), own(d, 0.0);
  for (std::size_t i = 0; i < nl; ++i) yr[i] = rl[i];
  for (std::size_t i = 0; i < nr; ++i) yr[nl + i] = rr[i];
  for (std::size_t a = 0; a < d; ++a) {
    for (std::size_t i = 0; i < nl; ++i) M[a * n + i] = rl[(a + 1) * nl + i];
    for (std::size_t i = 0; i < nr; ++i) M[a * n + nl + i] = rr[(a + 1) * nr + i];
  }
  std::vector<double> sw(n);
  double sww = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const bool left = i < nl;
    const SideData& s = left ? L : R;
    const std::size_t k = left ? i : i - nl;
    const double h = left ? res.left.h : res.right.h;
    sw[i] = std::sqrt(kernel_weight(opt.kernel, (s.x[k] - opt.c) / h) / h * s.w[k]);
    sww += sw[i] * sw[i];
  }
  for (std::size_t a = 0; a < d; ++a) {
    double m = 0, ss = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const SideData& s = i < nl ? L : R;
      m += sw[i] * sw[i] * s.z[(i < nl ? i : i - nl) * dz + cols[a]];
    }
    m /= sww;
    for (std::size_t i = 0; i < n; ++i) {
      const SideData& s = i < nl ? L : R;
      const double v = sw[i] * (s.z[(i < nl ? i : i - nl) * dz + cols[a]] - m);
      ss += v * v;
    }
    own[a] = std::sqrt(ss);
  }
  res.coef_covs = stacked_gamma(M, yr, n, own, cols, opt, "within the bandwidths",
                                "polynomials in x - c within the bandwidths; remove it");
  double shift = 0;
  for (std::size_t a = 0; a < d; ++a) shift += res.covs_eval[a] * res.coef_covs[a];
  for (int side = 0; side < 2; ++side) {
    const std::vector<double>& g = side ? gr : gl;
    std::vector<double> beta(P);
    for (std::size_t j = 0; j < P; ++j) {
      double v = g[j];
      for (std::size_t a = 0; a < d; ++a) v -= g[(a + 1) * P + j] * res.coef_covs[a];
      beta[j] = v;
    }
    set_curve(side ? res.right : res.left, side == 1, opt, beta.data(), shift, true);
  }
}

void adjust_bins(const SideData& L, const SideData& R, std::size_t dz, RdPlotResult& res,
                 const RdPlotOptions& opt) {
  const std::vector<std::size_t>& cols = res.covs_kept;
  const std::size_t d = cols.size(), nl = L.x.size(), n = nl + R.x.size();
  // Within-bin deviations of z and y (bins of both sides), and the centred norms of z.
  std::vector<double> M(n * d), yt(n), own(d, 0.0), zbar(d, 0.0);
  std::vector<std::vector<double>> zb(2);  // per side: J x d bin means of z
  std::vector<std::vector<std::size_t>> bins(2);
  for (int side = 0; side < 2; ++side) {
    const SideData& s = side ? R : L;
    const RdPlotSide& out = side ? res.right : res.left;
    zb[side].assign(out.J * d, 0.0);
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      const std::size_t b = bin_index(out.edges, s.x[i]);
      bins[side].push_back(b);
      for (std::size_t a = 0; a < d; ++a) {
        zb[side][b * d + a] += s.z[i * dz + cols[a]];
        zbar[a] += s.z[i * dz + cols[a]];
      }
    }
    for (int b = 0; b < out.J; ++b)
      for (std::size_t a = 0; a < d; ++a)
        if (out.count[b] > 0) zb[side][b * d + a] /= out.count[b];
  }
  for (double& m : zbar) m /= n;
  for (int side = 0; side < 2; ++side) {
    const SideData& s = side ? R : L;
    const RdPlotSide& out = side ? res.right : res.left;
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      const std::size_t row = side ? nl + i : i, b = bins[side][i];
      yt[row] = s.y[i] - out.mean_y[b];
      for (std::size_t a = 0; a < d; ++a) {
        const double v = s.z[i * dz + cols[a]];
        M[a * n + row] = v - zb[side][b * d + a];
        own[a] += (v - zbar[a]) * (v - zbar[a]);
      }
    }
  }
  for (double& o : own) o = std::sqrt(o);
  res.coef_covs_bins = stacked_gamma(M, yt, n, own, cols, opt, "within the bins",
                                     "bin indicators (it does not vary within the bins, so "
                                     "the binned means cannot be adjusted for it); remove it "
                                     "or use fewer bins (nbins)");
  // alpha_b + zeval'gamma_b = mean_b(y) - (mean_b(z) - zeval)'gamma_b; the interval moves along.
  for (int side = 0; side < 2; ++side) {
    RdPlotSide& out = side ? res.right : res.left;
    out.mean_y_raw = out.mean_y;
    for (int b = 0; b < out.J; ++b) {
      if (out.count[b] == 0) continue;
      double shift = 0;
      for (std::size_t a = 0; a < d; ++a)
        shift -= (zb[side][b * d + a] - res.covs_eval[a]) * res.coef_covs_bins[a];
      out.mean_y[b] += shift;
      out.ci_low[b] += shift;
      out.ci_high[b] += shift;
    }
  }
}

}  // namespace rdplot_detail
}  // namespace rd
}  // namespace attnreg
