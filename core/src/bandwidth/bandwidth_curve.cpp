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

bool economy_curve(Search& s, std::vector<std::pair<double, double>>& econ_cand) {
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
    s.mopt.f_scale = curve_spread(res.curve_values);
    // Candidates: refined on the binned objective (inside its resolved range), or the exact
    // curve's grid point below it.
    std::vector<std::pair<double, double>> cand;  // (value, log h)
    for (std::size_t g : curve_minima(res.curve_values, opt.n_starts)) {
      if (s.curve_is_exact(g)) {
        cand.emplace_back(res.curve_values(g), ts[g]);
        continue;
      }
      MinimizeResult gr;
      gr.f = kInf;
      const arma::vec glo{std::max(s.lo(0), t_res)};
      minimize_from_starts(guide_f, arma::mat{ts[g]}, glo, arma::vec{s.hi(0)}, {true},
                           s.mopt, gr);
      if (std::isfinite(gr.f)) cand.emplace_back(gr.f, gr.x(0));
      else cand.emplace_back(res.curve_values(g), ts[g]);
    }
    std::sort(cand.begin(), cand.end());
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
