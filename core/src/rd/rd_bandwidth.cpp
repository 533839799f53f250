// Regression discontinuity: the MSE- and CER-optimal bandwidth selectors of rdbwselect
// (attnreg/detail/rd_local.hpp; references in attnreg/rd/rdrobust.hpp).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <sstream>
#include <utility>

#include "attnreg/base/error.hpp"
#include "attnreg/detail/rd_local.hpp"

namespace attnreg {
namespace rd {
namespace detail {

// ---------------------------------------------------------------- bandwidth selection
struct BwSide {
  const Side* s = nullptr;  // bandwidth units (x / sd, y / sd), D = y, [t], covariates:
  Side own;                 // the prepared side itself, or this copy when the columns differ
  std::size_t ny = 1;   // outcome (+ treatment) columns
  std::size_t dz = 0;
};

struct PilotV {
  double V = kNaN, BConst = kNaN;
  std::vector<double> s;
};

struct BwTerms {
  double V = kNaN, B = kNaN, R = kNaN, rate = 0;
};

// The window of a side at the pilot bandwidth c_bw, shared by the V-fits of every order.
struct PilotWindow {
  bool ready = false;
  Window w;
  std::vector<double> wt, res_nn;
};

struct BwContext {
  const RdOptions* opt = nullptr;
  double c = 0, c_bw = 0;
  std::map<std::pair<int, int>, PilotV> cache[2];
  PilotWindow pilot[2];
  NnSide nn[2];  // nearest-neighbour residuals of each whole side (vce = nn), computed once
};

// The nearest-neighbour residuals of the side over the rows of window w (vce = nn without
// unit weights: every window is then a contiguous block of the side), or null.
const NnSide* side_nn(BwContext& ctx, int side, const Side& s, const Window& w) {
  if (ctx.opt->vce != RdVce::nn || !s.fw.empty() || s.n() == 0 || !w.block || w.n() == 0)
    return nullptr;
  NnSide& c = ctx.nn[side];
  c.side = &s;
  c.cover(w.first, w.first + w.n(), ctx.opt->nnmatch);
  return &c;
}

// The combination vector s of the columns (outcome, treatment, covariates) whose variance and
// bias enter the bandwidth (CCFT 2019; fuzzy: the delta method of the ratio), from the fit f.
std::vector<double> combination(const Window& w, const std::vector<double>& wt, const Fit& f,
                                int nu, std::size_t ny, std::size_t dz) {
  const std::size_t k = w.k;
  std::vector<double> s(k, 0.0);
  const double hn = std::pow(f.hs, -nu) * factorial(nu);
  auto coef = [&](std::size_t m) { return hn * f.beta[nu * k + m]; };
  if (dz == 0) {
    if (ny == 1) {
      s[0] = 1;
    } else {
      const double tY = coef(0), tT = coef(1);
      s[0] = 1 / tT;
      s[1] = -tY / (tT * tT);
    }
    return s;
  }
  std::vector<double> ZZ(dz * dz, 0.0), ZY(dz * ny, 0.0);
  partial_sums(w, wt, f, ny, dz, ZZ, ZY);
  const std::vector<double> g = solve_gamma(ZZ, ZY, dz, ny);
  if (ny == 1) {
    s[0] = 1;
    for (std::size_t a = 0; a < dz; ++a) s[1 + a] = -g[a];
    return s;
  }
  double tY = coef(0), tT = coef(1);
  for (std::size_t a = 0; a < dz; ++a) {
    tY -= g[a * ny + 0] * coef(ny + a);
    tT -= g[a * ny + 1] * coef(ny + a);
  }
  s[0] = 1 / tT;
  s[1] = -tY / (tT * tT);
  for (std::size_t a = 0; a < dz; ++a)
    s[2 + a] = -(1 / tT) * g[a * ny + 0] + (tY / (tT * tT)) * g[a * ny + 1];
  return s;
}

[[noreturn]] void pilot_error(int o, double h) {
  std::ostringstream o_;
  o_ << "bwselect: a pilot fit of order " << o << " at bandwidth " << h
     << " has too few distinct x values on a side of the cutoff; pass h (and b) by hand, "
        "lower p, or set bwcheck";
  throw NumericalError(o_.str());
}

// One side's variance, bias and regularisation terms of the plug-in rule (CCT 2014 supplement
// S.2): the V-fit of order o at the pilot c_bw, the B-fit of order o_B at h_B.
BwTerms bw_terms(BwContext& ctx, int side, const BwSide& bs, int o, int nu, int o_B, double h_B,
                 double scale) {
  const RdOptions& opt = *ctx.opt;
  const Side& s = *bs.s;
  const bool clustered = !s.cl.empty();
  const auto key = std::make_pair(o, nu);
  auto it = ctx.cache[side].find(key);
  if (it == ctx.cache[side].end()) {
    PilotV pv;
    const double hV = ctx.c_bw;
    PilotWindow& pw = ctx.pilot[side];
    if (!pw.ready) {
      pw.w = gather(s, ctx.c, hV, opt.kernel);
      pw.wt = window_weights(s, pw.w, ctx.c, hV, opt.kernel);
      if (opt.vce == RdVce::nn)  // the same for every order: computed once
        pw.res_nn = residuals(pw.w, opt.vce, clustered, opt.nnmatch, nullptr, nullptr, 0,
                              side_nn(ctx, side, s, pw.w));
      pw.ready = true;
    }
    const Window& w = pw.w;
    const std::vector<double>& wt = pw.wt;
    if (distinct_positive(w, wt, o + 1) < static_cast<std::size_t>(o + 1)) pilot_error(o, hV);
    Fit f = poly_fit(w, wt, o, hV);
    if (!f.ok) pilot_error(o, hV);
    pv.s = combination(w, wt, f, nu, bs.ny, bs.dz);
    const std::vector<double> res =
        opt.vce == RdVce::nn ? pw.res_nn
                             : residuals(w, opt.vce, clustered, opt.nnmatch, &f, &wt, o + 1);
    std::vector<double> ell = coef_weights(w, wt, f, nu);
    pv.V = variance_sum(w, ell, res, pv.s, o + 1, nullptr, !cluster_leverage(opt.vce));
    pv.BConst = bias_constant(w, wt, f, nu);
    it = ctx.cache[side].emplace(key, std::move(pv)).first;
  }
  const PilotV& pv = it->second;
  BwTerms out;
  out.rate = 1.0 / (2 * o + 3);
  if (!(std::isfinite(h_B) && h_B > 0)) return out;
  Window w = gather(s, ctx.c, h_B, opt.kernel);
  std::vector<double> wt = window_weights(s, w, ctx.c, h_B, opt.kernel);
  if (distinct_positive(w, wt, o_B + 1) < static_cast<std::size_t>(o_B + 1))
    pilot_error(o_B, h_B);
  Fit f = poly_fit(w, wt, o_B, h_B);
  if (!f.ok) pilot_error(o_B, h_B);
  double BWreg = 0;
  if (scale > 0) {
    std::vector<double> res = residuals(w, opt.vce, clustered, opt.nnmatch, &f, &wt, o_B + 1,
                                        side_nn(ctx, side, s, w));
    coef_weights_into(w, wt, f, o + 1);  // wt becomes the equivalent-kernel weights
    const double VB = variance_sum(w, wt, res, pv.s, o_B + 1, nullptr,
                                    !cluster_leverage(opt.vce));
    BWreg = 3 * pv.BConst * pv.BConst * VB;
  }
  // The bias of the order-o fit involves the (o+1)-th derivative: coefficient o + 1 of the
  // B-fit (CCT 2014, eq. S.2 of the supplement; rdrobust's R code). rdrobust 2.1.1's Python
  // takes the last coefficient (o_B), which differs when q > p + 1 (docs/rd.md).
  const double hb = std::pow(h_B, -(o + 1));
  double sb = 0;
  for (std::size_t m = 0; m < s.k; ++m) sb += pv.s[m] * f.beta[(o + 1) * s.k + m] * hb;
  out.B = std::sqrt(2.0 * (o + 1 - nu)) * pv.BConst * sb;
  out.V = (2 * nu + 1) * std::pow(ctx.c_bw, 2 * nu + 1) * pv.V;
  out.R = scale * (2 * (o + 1 - nu)) * BWreg;
  return out;
}

struct SelectorSet {
  std::map<std::string, RdBandwidths> bws;
};

double median3(double a, double b, double c) {
  if (std::isnan(a) || std::isnan(b) || std::isnan(c)) return kNaN;
  return std::max(std::min(a, b), std::min(std::max(a, b), c));
}

// The sides in the units of the bandwidth rule. stdvars: x and the outcome divided by their
// standard deviations (the rule is scale-equivariant, so this changes only rounding).
// Returns the scale of x; BWp is the pilot's min(sd, IQR / 1.349) in those units. The rule
// reads the prepared sides themselves when they hold its columns (the treatment column is
// dropped when the bandwidths are the sharp design's): rescaled in place with stdvars (`scaled`
// is then set; restore_sides undoes it), as they are without; otherwise rescaled copies.
double bandwidth_sides(Prepared& P, const RdOptions& opt, BwSide bs[2], double& BWp,
                       bool& scaled) {
  const std::size_t N = P.n;
  auto sd = [&](auto get) {
    double m = 0;
    for (std::size_t i = 0; i < N; ++i) m += get(i);
    m /= N;
    double v = 0;
    for (std::size_t i = 0; i < N; ++i) {
      const double e = get(i) - m;
      v += e * e;
    }
    return std::sqrt(v / (N - 1));
  };
  Side* sides[2] = {&P.left, &P.right};
  auto xget = [&](std::size_t i) { return P.x_sorted(i); };
  auto yget = [&](std::size_t i) {
    return i < P.left.n() ? P.left.D[i * P.left.k] : P.right.D[(i - P.left.n()) * P.right.k];
  };
  const double x_sd_raw = sd(xget);
  // Hyndman-Fan type 2 quantiles (R's quantile(type = 2)).
  auto q2 = [&](double prob) {
    const double h = N * prob;
    const std::size_t j = static_cast<std::size_t>(std::floor(h));
    if (h == j) return 0.5 * (P.x_sorted(j - 1) + P.x_sorted(j));
    return P.x_sorted(j);
  };
  const double iqr = q2(0.75) - q2(0.25);
  double x_sd = 1, y_sd = 1;
  BWp = std::min(x_sd_raw, iqr / 1.349);
  if (opt.stdvars) {
    x_sd = x_sd_raw;
    y_sd = sd(yget);
    BWp = std::min(1.0, (iqr / x_sd) / 1.349);
  }
  const bool fuzzy_bw = P.fuzzy && !opt.sharpbw && column_var(P.left, 1) > 0 &&
                        column_var(P.right, 1) > 0;
  const std::size_t ny = fuzzy_bw ? 2 : 1;
  scaled = false;
  if (!P.fuzzy || fuzzy_bw) {  // the same columns: no copy
    for (int sd_i = 0; sd_i < 2; ++sd_i) {
      Side& s = *sides[sd_i];
      bs[sd_i].s = &s;
      bs[sd_i].ny = ny;
      bs[sd_i].dz = P.dz;
      if (!opt.stdvars) continue;
      for (std::size_t i = 0; i < s.n(); ++i) {
        s.x[i] = s.x[i] / x_sd;
        s.D[i * s.k] = s.D[i * s.k] / y_sd;
      }
    }
    scaled = opt.stdvars;
    return x_sd;
  }
  for (int sd_i = 0; sd_i < 2; ++sd_i) {
    const Side& src = *sides[sd_i];
    Side& s = bs[sd_i].own;
    bs[sd_i].s = &s;
    bs[sd_i].ny = ny;
    bs[sd_i].dz = P.dz;
    s.k = ny + P.dz;
    s.fw = src.fw;
    s.cl = src.cl;
    s.x.resize(src.n());
    s.D.resize(src.n() * s.k);
    for (std::size_t i = 0; i < src.n(); ++i) {
      s.x[i] = opt.stdvars ? src.x[i] / x_sd : src.x[i];
      s.D[i * s.k] = opt.stdvars ? src.D[i * src.k] / y_sd : src.D[i * src.k];
      if (fuzzy_bw) s.D[i * s.k + 1] = src.D[i * src.k + 1];
      const std::size_t off = P.fuzzy ? 2 : 1;
      for (std::size_t a = 0; a < P.dz; ++a) s.D[i * s.k + ny + a] = src.D[i * src.k + off + a];
    }
  }
  return x_sd;
}

// Undoes bandwidth_sides' rescaling in place: x and the outcome read again from the input rows
// (x + 0.0 as the sort stores it), so the sides hold exactly what prepare put there.
void restore_sides(Prepared& P, const RdDataView& d) {
  for (Side* s : {&P.left, &P.right})
    for (std::size_t i = 0; i < s->n(); ++i) {
      s->x[i] = d.x[s->row[i]] + 0.0;
      s->D[i * s->k] = d.y[s->row[i]];
    }
}

// The pilot bandwidth c_bw = C_K min(sd, IQR / 1.349) N^(-1/5) (the number of distinct x with
// masspoints = adjust), restricted to the range of x and widened to keep bwcheck distinct
// values per side (CCT 2014 supplement S.2.2; rdbwselect).
struct Pilot {
  double c = 0, c_bw = 0, bw_max_l = 0, bw_max_r = 0, bw_max = 0, bw_min_l = 0, bw_min_r = 0;
  double range_l = 0, range_r = 0;
};

Pilot pilot_bandwidth(const Prepared& P, const RdOptions& opt, const BwSide bs[2], double x_sd,
                      double BWp, int bwcheck) {
  const std::size_t N = P.n;
  const double c = opt.stdvars ? opt.c / x_sd : opt.c;
  const double x_min = opt.stdvars ? P.x_min / x_sd : P.x_min;
  const double x_max = opt.stdvars ? P.x_max / x_sd : P.x_max;
  const double range_l = std::fabs(c - bs[0].s->x.front());
  const double range_r = std::fabs(c - bs[1].s->x.back());
  double c_bw = pilot_constant(opt.kernel) * BWp *
                std::pow(static_cast<double>(opt.masspoints == MassPoints::adjust
                                                 ? P.m_left + P.m_right
                                                 : N),
                         -0.2);
  const double bw_max_l = std::fabs(c - x_min), bw_max_r = std::fabs(c - x_max);
  const double bw_max = std::max(bw_max_l, bw_max_r);
  if (opt.bwrestrict) c_bw = std::min(c_bw, bw_max);
  double bw_min_l = 0, bw_min_r = 0;
  if (bwcheck > 0) {
    // The bwcheck-th distinct x from the cutoff on each side, padded so that it keeps a
    // positive weight.
    auto kth = [&](const Side& s, bool left) {
      std::vector<double> u;
      for (std::size_t i = 0; i < s.n(); ++i)
        if (i == 0 || s.x[i] != s.x[i - 1]) u.push_back(s.x[i]);
      if (left) std::reverse(u.begin(), u.end());
      const std::size_t kk = std::min<std::size_t>(bwcheck, u.size());
      return std::fabs(u[kk - 1] - c) * (1 + kSqrtEps);
    };
    bw_min_l = kth(*bs[0].s, true);
    bw_min_r = kth(*bs[1].s, false);
    c_bw = std::max({c_bw, bw_min_l, bw_min_r});
  }
  return Pilot{c, c_bw, bw_max_l, bw_max_r, bw_max, bw_min_l, bw_min_r, range_l, range_r};
}

// The ten selectors (rdbwselect's definitions); `which` empty: all.
std::map<std::string, RdBandwidths> select_bandwidths(Prepared& P, const RdOptions& opt,
                                                      const std::string& which, int bwcheck,
                                                      const RdDataView* restore) {
  const int p = opt.p, q = opt.q, deriv = opt.deriv;
  const bool all = which.empty();
  auto want = [&](std::initializer_list<const char*> names) {
    if (all) return true;
    for (const char* nm : names)
      if (which == nm) return true;
    return false;
  };
  BwSide bs[2];
  double BWp = 0;
  bool scaled = false;
  const double x_sd = bandwidth_sides(P, opt, bs, BWp, scaled);
  struct Restore {  // the prepared sides back in raw units on every exit (with `restore`)
    Prepared& P;
    const RdDataView* d;
    bool on;
    ~Restore() {
      if (on && d) restore_sides(P, *d);
    }
  } restore_guard{P, restore, scaled};
  const std::size_t N = P.n;
  const Pilot pl = pilot_bandwidth(P, opt, bs, x_sd, BWp, bwcheck);
  const double c = pl.c, c_bw = pl.c_bw, bw_max_l = pl.bw_max_l, bw_max_r = pl.bw_max_r;
  const double bw_max = pl.bw_max, bw_min_l = pl.bw_min_l, bw_min_r = pl.bw_min_r;
  const double range_l = pl.range_l, range_r = pl.range_r;
  BwContext ctx;
  ctx.opt = &opt;
  ctx.c = c;
  ctx.c_bw = c_bw;
  const double sr = opt.scaleregul;
  BwTerms Cd[2];
  for (int i = 0; i < 2; ++i)
    Cd[i] = bw_terms(ctx, i, bs[i], q + 1, q + 1, q + 2, (i ? range_r : range_l) * (1 + kSqrtEps),
                     0);
  std::map<std::string, RdBandwidths> out;
  double h_two[2] = {kNaN, kNaN}, b_two[2] = {kNaN, kNaN};
  double h_sum = kNaN, b_sum = kNaN, h_rd = kNaN, b_rd = kNaN;
  const bool need_two = want({"msetwo", "certwo", "msecomb2", "cercomb2"});
  const bool need_sum = want({"msesum", "cersum", "msecomb1", "msecomb2", "cercomb1", "cercomb2"});
  const bool need_rd = want({"mserd", "cerrd", "msecomb1", "msecomb2", "cercomb1", "cercomb2"});
  if (need_two) {
    for (int i = 0; i < 2; ++i) {
      const double bmax = i ? bw_max_r : bw_max_l, bmin = i ? bw_min_r : bw_min_l;
      double d = std::pow(Cd[i].V / (Cd[i].B * Cd[i].B), Cd[i].rate);
      if (opt.bwrestrict) d = std::min(d, bmax);
      if (bwcheck > 0) d = std::max(d, bmin);
      BwTerms Cb = bw_terms(ctx, i, bs[i], q, p + 1, q + 1, d, sr);
      double b = std::pow(Cb.V / (Cb.B * Cb.B + sr * Cb.R), Cb.rate);
      if (opt.bwrestrict) b = std::min(b, bmax);
      BwTerms Ch = bw_terms(ctx, i, bs[i], p, deriv, q, b, sr);
      double h = std::pow(Ch.V / (Ch.B * Ch.B + sr * Ch.R), Ch.rate);
      if (opt.bwrestrict) h = std::min(h, bmax);
      h_two[i] = x_sd * h;
      b_two[i] = x_sd * b;
    }
  }
  // The common bandwidths: sign -1 for the difference (RD), +1 for the sum.
  auto common = [&](double sign, double& h_out, double& b_out) {
    double d = std::pow((Cd[0].V + Cd[1].V) / std::pow(Cd[1].B + sign * Cd[0].B, 2), Cd[0].rate);
    if (opt.bwrestrict) d = std::min(d, bw_max);
    if (bwcheck > 0) d = std::max({d, bw_min_l, bw_min_r});
    BwTerms Cb[2], Ch[2];
    for (int i = 0; i < 2; ++i) Cb[i] = bw_terms(ctx, i, bs[i], q, p + 1, q + 1, d, sr);
    double b = std::pow((Cb[0].V + Cb[1].V) /
                            (std::pow(Cb[1].B + sign * Cb[0].B, 2) + sr * (Cb[1].R + Cb[0].R)),
                        Cb[0].rate);
    if (opt.bwrestrict) b = std::min(b, bw_max);
    for (int i = 0; i < 2; ++i) Ch[i] = bw_terms(ctx, i, bs[i], p, deriv, q, b, sr);
    double h = std::pow((Ch[0].V + Ch[1].V) /
                            (std::pow(Ch[1].B + sign * Ch[0].B, 2) + sr * (Ch[1].R + Ch[0].R)),
                        Ch[0].rate);
    if (opt.bwrestrict) h = std::min(h, bw_max);
    h_out = x_sd * h;
    b_out = x_sd * b;
  };
  if (need_sum) common(+1.0, h_sum, b_sum);
  if (need_rd) common(-1.0, h_rd, b_rd);
  // CER-optimal: the MSE-optimal h times n^(-p / ((3 + p)(3 + 2p))) (CCF 2020, section 4.1;
  // with clusters the number of clusters).
  const double expo = -static_cast<double>(p) / ((3.0 + p) * (3.0 + 2.0 * p));
  const double nn = P.left.cl.empty() ? static_cast<double>(N)
                                      : static_cast<double>(P.g_left + P.g_right);
  const double cer = std::pow(nn, expo);
  auto put = [&](const char* name, double hl, double hr, double bl, double br) {
    if (want({name})) out[name] = RdBandwidths{hl, hr, bl, br};
  };
  const double h_c1 = std::isnan(h_rd) || std::isnan(h_sum) ? kNaN : std::min(h_rd, h_sum);
  const double b_c1 = std::isnan(b_rd) || std::isnan(b_sum) ? kNaN : std::min(b_rd, b_sum);
  const double h_c2l = median3(h_rd, h_sum, h_two[0]), h_c2r = median3(h_rd, h_sum, h_two[1]);
  const double b_c2l = median3(b_rd, b_sum, b_two[0]), b_c2r = median3(b_rd, b_sum, b_two[1]);
  put("mserd", h_rd, h_rd, b_rd, b_rd);
  put("msetwo", h_two[0], h_two[1], b_two[0], b_two[1]);
  put("msesum", h_sum, h_sum, b_sum, b_sum);
  put("msecomb1", h_c1, h_c1, b_c1, b_c1);
  put("msecomb2", h_c2l, h_c2r, b_c2l, b_c2r);
  put("cerrd", h_rd * cer, h_rd * cer, b_rd, b_rd);
  put("certwo", h_two[0] * cer, h_two[1] * cer, b_two[0], b_two[1]);
  put("cersum", h_sum * cer, h_sum * cer, b_sum, b_sum);
  put("cercomb1", h_c1 * cer, h_c1 * cer, b_c1, b_c1);
  put("cercomb2", h_c2l * cer, h_c2r * cer, b_c2l, b_c2r);
  for (const auto& kv : out) {
    const RdBandwidths& b = kv.second;
    for (double v : {b.h_left, b.h_right, b.b_left, b.b_right})
      if (!(std::isfinite(v) && v > 0))
        throw NumericalError("bwselect: the " + kv.first +
                             " bandwidth is not a positive finite number (the estimated bias "
                             "is zero or the pilot fits are degenerate); pass h by hand");
  }
  return out;
}

}  // namespace detail
}  // namespace rd
}  // namespace attnreg
