// attnreg: the objective curve of a one-column bandwidth search (bandwidth_select.hpp): the
// exact curve (search_curve) and the search economy's binned curve and its candidates.
#include "attnreg/detail/bandwidth_select_internal.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include "attnreg/base/error.hpp"

namespace attnreg {

using namespace bandwidth_detail;  // bandwidth_select_internal.hpp

namespace {
// The log-bandwidths of search_curve's grid.
std::vector<double> curve_points(double lo, double hi, double range, double base, std::size_t G) {
  const double gh = std::max(lo + 1e-3, std::min({hi, std::log(2.0 * range), base + std::log(4.0)}));
  std::vector<double> t(G);
  for (std::size_t g = 0; g < G; ++g)
    t[g] = lo + (gh - lo) * static_cast<double>(g) / static_cast<double>(G - 1);
  return t;
}

// Grid indices of the curve's local minima (finite values not above a finite neighbour; NaN,
// a point not evaluated, constrains nothing), best first, at most n_starts of them.
std::vector<std::size_t> curve_minima(const arma::vec& values, int n_starts) {
  const std::size_t G = values.n_elem;
  std::vector<std::pair<double, std::size_t>> minima;
  for (std::size_t g = 0; g < G; ++g) {
    const double v = values(g);
    if (!std::isfinite(v)) continue;
    const bool left = g == 0 || !(values(g - 1) < v);
    const bool right = g + 1 == G || !(values(g + 1) < v);
    if (left && right) minima.emplace_back(v, g);
  }
  std::sort(minima.begin(), minima.end());
  const std::size_t ns = std::min<std::size_t>(minima.size(), static_cast<std::size_t>(std::max(n_starts, 0)));
  std::vector<std::size_t> out(ns);
  for (std::size_t s = 0; s < ns; ++s) out[s] = minima[s].second;
  return out;
}

// The searches' stopping tests measure against the objective curve's spread where there is a
// curve: the runs start at the curve's minima, next to the answer, where the decrease a run
// achieves is no measure of the objective's scale (MinimizeOptions::f_scale).
// The spread is the curve's median minus its minimum: robust to the blow-up of the
// objective at the smallest bandwidths, which the range would let set a loose tolerance.
double curve_spread(const arma::vec& v) {
  const arma::vec f = v.elem(arma::find_finite(v));
  if (f.n_elem < 2) return 0.0;
  const double s = arma::median(f) - f.min();
  return std::isfinite(s) && s > 0 ? s : 0.0;
}

// The curve's second difference at grid point g (uniform steps in log h): the curvature of
// the parabola through g and its neighbours, 0 where they are not all finite.
double curve_curvature(const arma::vec& values, const std::vector<double>& ts, std::size_t g) {
  if (g == 0 || g + 1 >= values.n_elem) return 0.0;
  const double a = values(g - 1), b = values(g), c = values(g + 1), dt = ts[g + 1] - ts[g];
  const double k = (a - 2.0 * b + c) / (dt * dt);
  return std::isfinite(k) && k > 0.0 ? k : 0.0;
}

// Search economy (one continuous column; see BandwidthSelectOptions::exact_curve). The
// objective curve's only job is to locate the basins of the exact objective, and the binned
// objective (binned.hpp; 4001 points, or one per distinct row below kEconomyFullGridRows,
// economy_guide_grid; O(G log G) an evaluation against a full cross-validation pass) draws
// the same curve to about 1e-4 relative on 4001 points. Its local minima are
// refined on it (with its exact gradient), and those whose binned value is within the
// binned/exact discrepancy of the best are searched by the exact objective from there: the
// answer is a local minimum of the exact objective, to the minimiser's tolerance, as with
// the exact curve, after a few exact evaluations instead of grid_size. Below five grid
// spacings the binned data cannot resolve the kernel: there the curve is evaluated exactly
// when the binned curve still falls at its smallest resolved bandwidth (discrete or tightly
// clustered data), and left unevaluated (NaN) otherwise.
std::unique_ptr<BinnedCVObjective> make_guide(const Search& s) {
  const BandwidthSelectOptions& opt = s.opt;
  std::unique_ptr<BinnedCVObjective> guide;
  if (s.d == 1 && s.cont.size() == 1 && opt.grid_size >= 2 && !opt.exact_curve && !s.binned &&
      opt.method == BandwidthMethod::cv_ls && opt.weights.is_empty() &&
      opt.kernel.kernel.type != KernelType::uniform && opt.kernel.kernel.nonnegative() &&
      s.obj.n_unique() >= economy_min_rows(s.obj)) {
    try {
      guide.reset(new BinnedCVObjective(s.X, s.y, opt.degree, opt.kernel.kernel, opt.ridge,
                                        economy_guide_grid(s.obj),
                                        opt.kernel.n_threads));
    } catch (const InvalidArgument&) {
      guide.reset();
    } catch (const NumericalError&) {
      guide.reset();
    }
  }
  return guide;
}

// The binned curve at the grid points ts from its resolution t_res up (NaN below); true when
// it is finite somewhere. Where it still falls at its first resolved point, the points below
// get the exact objective.
bool guide_curve(Search& s, const std::function<double(double)>& guide_value,
                 const std::vector<double>& ts, double t_res) {
  BandwidthSelectResult& res = s.res;
  const std::size_t G = ts.size();
  res.curve_grid.set_size(G);
  res.curve_values.set_size(G);
  s.curve_is_exact.zeros(G);
  std::size_t g0 = G;  // first resolved point
  for (std::size_t g = 0; g < G; ++g) {
    res.curve_grid(g) = std::exp(ts[g]);
    res.curve_values(g) = std::numeric_limits<double>::quiet_NaN();
    if (ts[g] < t_res) continue;
    if (g0 == G) g0 = g;
    res.curve_values(g) = guide_value(ts[g]);
  }
  bool any = false;
  for (std::size_t g = g0; g < G; ++g) any = any || std::isfinite(res.curve_values(g));
  if (!any) return false;
  const bool falls = g0 > 0 && (!std::isfinite(res.curve_values(g0)) || g0 + 1 == G ||
                                !(res.curve_values(g0 + 1) < res.curve_values(g0)));
  if (falls)
    for (std::size_t g = 0; g < g0; ++g) {
      const double v = s.eval_noted(arma::vec{std::exp(ts[g])});
      res.curve_values(g) = std::isfinite(v) ? v : kInf;
      s.curve_is_exact(g) = 1;
    }
  return true;
}

// The curvature of the binned objective at the end t of a refinement: the secant of the two
// gradients evaluated nearest to t (at distinct log h at least 1e-8 apart, below which the
// difference of the gradients is mostly their rounding), 0 where that is not positive.
double trail_curvature(const std::vector<std::pair<double, double>>& trail, double t) {
  std::vector<std::pair<double, double>> near(trail);
  std::sort(near.begin(), near.end(), [t](const auto& a, const auto& b) {
    return std::fabs(a.first - t) < std::fabs(b.first - t);
  });
  for (std::size_t i = 1; i < near.size(); ++i) {
    const double dt = near[i].first - near[0].first;
    if (!(std::fabs(dt) > 1e-8)) continue;
    const double k = (near[i].second - near[0].second) / dt;
    return std::isfinite(k) && k > 0.0 ? k : 0.0;
  }
  return 0.0;
}

// The curvature that sizes the exact search's first step from a refined candidate, or 0 (the
// unit first step): only where the refinement converged inside the binned objective's range
// (not on its lower end, where it stops on binning artefacts in cluster tails) and the
// curvature at its end agrees with the curve's parabola around the grid minimum it started
// from to within a factor of 8; a wrong curvature would make the first step far too short,
// and the quasi-Newton steps that follow, sized by differences of nearly equal gradients,
// would crawl.
double trusted_curvature(const MinimizeResult& gr, double k_curve,
                         const std::vector<std::pair<double, double>>& trail, double glo) {
  if (!gr.converged || !(gr.x(0) > glo) || !(k_curve > 0.0)) return 0.0;
  const double k = trail_curvature(trail, gr.x(0));
  return k >= k_curve / 8.0 && k <= 8.0 * k_curve ? k : 0.0;
}

}  // namespace

std::size_t economy_min_rows(const BandwidthObjective& obj) {
  return obj.fast_sums() ? kEconomyMinRowsFastSums : kEconomyMinRows;
}

int economy_guide_grid(const BandwidthObjective& obj) {
  if (obj.fast_sums() || obj.n_unique() >= kEconomyFullGridRows) return kBinnedSelectGrid1D;
  return static_cast<int>(obj.n_unique());
}

std::vector<double> search_curve(const std::function<double(double)>& value, double lo,
                                 double hi, double range, double base, std::size_t G,
                                 int n_starts, arma::vec& grid, arma::vec& values) {
  const std::vector<double> ts = curve_points(lo, hi, range, base, G);
  grid.set_size(G);
  values.set_size(G);
  for (std::size_t g = 0; g < G; ++g) {
    grid(g) = std::exp(ts[g]);
    const double v = value(ts[g]);
    values(g) = std::isfinite(v) ? v : kInf;
  }
  std::vector<double> starts;
  for (std::size_t g : curve_minima(values, n_starts)) starts.push_back(std::log(grid(g)));
  return starts;
}

namespace bandwidth_detail {

bool economy_curve(Search& s, std::vector<EconomyCandidate>& econ_cand) {
  const std::unique_ptr<BinnedCVObjective> guide = make_guide(s);
  if (!guide) return false;
  const BandwidthSelectOptions& opt = s.opt;
  BandwidthSelectResult& res = s.res;
  bool economy = false;
  const std::size_t G = static_cast<std::size_t>(opt.grid_size);
  const std::vector<double> ts = curve_points(s.lo(0), s.hi(0), s.X.col(0).max() - s.X.col(0).min(),
                                              s.base(0), G);
  const double t_res = std::log(5.0 * guide->spacing(0));  // the binned objective's floor
  // One binned evaluation at log h = t, with its gradient when g is non-null (the curve needs
  // values only: the gradient's planes cost a third more). The last point is remembered: the
  // minimiser evaluates its final point again where the step rounds to nothing.
  struct {
    double t = std::numeric_limits<double>::quiet_NaN();
    bool grad = false;
    double v = 0.0;
    arma::vec g;
  } last;
  // The gradients of the current refinement, (log h, dCV/dlog h), for the curvature at its end.
  std::vector<std::pair<double, double>> trail;
  const auto guide_eval = [&](double t, arma::vec* g) {
    if (t == last.t && (g == nullptr || last.grad)) {
      if (g != nullptr) *g = last.g;
      return last.v;
    }
    arma::vec gb;
    double v;
    try {
      v = (*guide)(arma::vec{std::exp(t)}, g != nullptr ? &gb : nullptr);
    } catch (const NumericalError&) {
      v = kInf;
    }
    if (!std::isfinite(v)) {
      v = kInf;
      gb.zeros(1);
    } else if (s.guard.poll()) {
      s.guard.rethrow_if_interrupted();
    }
    if (g != nullptr && std::isfinite(v)) trail.emplace_back(t, gb(0));
    last.t = t;
    last.grad = g != nullptr;
    last.v = v;
    last.g = gb;
    if (g != nullptr) *g = gb;
    return v;
  };
  const Objective guide_f = [&](const arma::vec& t, arma::vec& g) { return guide_eval(t(0), &g); };
  const std::function<double(double)> guide_value = [&](double t) {
    return guide_eval(t, nullptr);
  };
  if (guide_curve(s, guide_value, ts, t_res)) {
    // The spread of the values a cv_ls criterion can take (>= 0): in sparse tails at the
    // guide's smallest resolved bandwidths, binning artefacts can give large negative values
    // (clustered data, n = 700: -93.5 against a minimum of 0.0946), which made the spread,
    // and so the searches' tolerances, 1e5 times too large (their runs stopped at the start).
    const arma::vec v = res.curve_values;
    s.mopt.f_scale = curve_spread(v.elem(arma::find(v >= 0.0)));
    // Candidates: refined on the binned objective (inside its resolved range), or the exact
    // curve's grid point below it.
    // Each refinement's first step is the Newton step on the curve's parabola through the
    // minimum and its neighbours; the curvature at the refined point (the secant of the two
    // gradients nearest to it) sizes the exact search's first step in turn. Smooth kernels
    // only: a compact kernel's exact objective has kinks where points enter or leave windows,
    // with shallow local minima a Newton step lands in where the unit step and its
    // backtracking pass over them (bimodal data, n = 1,000, Epanechnikov: a local minimum 4e-5
    // relative above the one the unit step finds), so its searches keep the unit first step.
    const bool newton = !opt.kernel.kernel.compact();
    std::vector<EconomyCandidate> cand;
    for (std::size_t g : curve_minima(res.curve_values, opt.n_starts)) {
      if (s.curve_is_exact(g)) {
        cand.push_back({res.curve_values(g), ts[g], 0.0});
        continue;
      }
      MinimizeResult gr;
      gr.f = kInf;
      trail.clear();
      const double k = newton ? curve_curvature(res.curve_values, ts, g) : 0.0;
      const double glo = std::max(s.lo(0), t_res);
      minimize_newton_start(guide_f, ts[g], k, glo, s.hi(0), s.mopt, gr);
      if (std::isfinite(gr.f))
        cand.push_back({gr.f, gr.x(0), newton ? trusted_curvature(gr, k, trail, glo) : 0.0});
      else
        cand.push_back({res.curve_values(g), ts[g], 0.0});
    }
    std::sort(cand.begin(), cand.end(), [](const EconomyCandidate& a, const EconomyCandidate& b) {
      return a.value < b.value || (a.value == b.value && a.t < b.t);
    });
    economy = !cand.empty();
    econ_cand = std::move(cand);
  }
  if (!economy) {
    res.curve_grid.reset();
    res.curve_values.reset();
    s.curve_is_exact.reset();
  }
  return economy;
}

// Newton first step. Started at the binned objective's minimum, the exact search takes its
// first step without curvature information: a unit step in log h (a factor e in h), which
// overshoots a minimum that is typically 1e-4 away and costs one full cross-validation pass
// to come back from. The binned objective's curvature there is the exact one's to within the
// binning error, so the search runs over u = (t - t0) / step, step = |g(t0)| / curvature: its
// unit first step is then the Newton step. Everything after the first step is the same
// search: the quasi-Newton steps do not depend on the scale of the variable, and the tests
// are kept in units of log h (gtol times step, xtol over step).
bool minimize_newton_start(const Objective& f, double t0, double curvature, double lo,
                           double hi, const MinimizeOptions& opt, MinimizeResult& best) {
  const arma::mat start{t0};
  if (!(std::isfinite(curvature) && curvature > 0.0) || !(t0 >= lo && t0 <= hi))
    return minimize_from_starts(f, start, arma::vec{lo}, arma::vec{hi}, {true}, opt, best);
  arma::vec g0(1);
  const double f0 = f(arma::vec{t0}, g0);  // the search's own first evaluation (recalled)
  const double step = std::min(1.0, std::fabs(g0(0)) / curvature);
  if (!std::isfinite(f0) || !(step > 0.0))
    return minimize_from_starts(f, start, arma::vec{lo}, arma::vec{hi}, {true}, opt, best);
  // The box in u; its ends map to the box's ends exactly (a bandwidth at the floor is the
  // floor itself, as in the search over t, not one rounding of it away).
  const double ulo = (lo - t0) / step, uhi = (hi - t0) / step;
  const auto to_t = [&](double u) {
    return u <= ulo ? lo : u >= uhi ? hi : std::min(std::max(t0 + step * u, lo), hi);
  };
  const Objective fu = [&](const arma::vec& u, arma::vec& g) {
    const double v = f(arma::vec{to_t(u(0))}, g);
    g *= step;
    return v;
  };
  MinimizeOptions uopt = opt;
  uopt.gtol *= step;
  uopt.xtol /= step;
  MinimizeResult r;
  try {
    r = minimize_box(fu, arma::vec{0.0}, arma::vec{ulo}, arma::vec{uhi}, uopt);
  } catch (const NumericalError&) {
    return minimize_from_starts(f, start, arma::vec{lo}, arma::vec{hi}, {true}, opt, best);
  }
  r.x = arma::vec{to_t(r.x(0))};
  r.grad /= step;
  best = std::move(r);
  return true;
}

bool exact_curve(Search& s, arma::mat& starts) {
  const BandwidthSelectOptions& opt = s.opt;
  BandwidthSelectResult& res = s.res;
  // The objective curve over a log-spaced grid from the guard to four times the
  // normal-reference bandwidth (at most twice the data range; pairs, and so the cost of a
  // compact kernel's evaluation, grow with h); its best local minima start the gradient
  // search, which may leave the grid up to the box's upper end.
  const std::vector<double> st = search_curve(
      [&](double t) { return s.eval_noted(arma::vec{std::exp(t)}); }, s.lo(0), s.hi(0),
      s.X.col(0).max() - s.X.col(0).min(), s.base(0), static_cast<std::size_t>(opt.grid_size),
      opt.n_starts, res.curve_grid, res.curve_values);
  res.curve_exact = true;
  s.curve_is_exact.ones(res.curve_values.n_elem);
  s.mopt.f_scale = curve_spread(res.curve_values);
  if (st.empty()) {
    throw NumericalError(
        "bandwidth: the objective is undefined (+inf) at every bandwidth of the search grid: "
        "some leave-one-out fit has no weight or a singular design; check X for isolated "
        "points or use the Gaussian kernel");
  }
  starts = arma::rowvec(st);
  if (opt.kernel.kernel.type == KernelType::uniform) {
    // Piecewise constant: the grid minimum is the answer.
    const arma::uword gb = res.curve_values.index_min();  // the best local minimum
    res.bandwidth = arma::vec{res.curve_grid(gb)};
    res.objective = res.curve_values(gb);
    res.n_evals = s.evals;
    res.converged = false;
    res.message = "uniform kernel: grid minimum (the objective is piecewise constant)";
    return true;
  }
  return false;
}

}  // namespace bandwidth_detail
}  // namespace attnreg
