// attnreg: select_bandwidth (bandwidth_select.hpp): the scaling of extreme data, the closed-form
// rules, and the search: its box and starts, the floors raised where the objective is
// undefined, the curve (bandwidth_curve.cpp), the multistart search, and the polish of its
// answer (the curve's best point, the floors, the box ends).
#include "attnreg/detail/bandwidth_select_internal.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "attnreg/bandwidth/plugin_bandwidth.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/detail/pow2_scale.hpp"

namespace attnreg {

using namespace bandwidth_detail;  // bandwidth_select_internal.hpp

namespace bandwidth_detail {

namespace {
BandwidthSelectOptions objective_options(const BandwidthSelectOptions& opt) {
  BandwidthSelectOptions cvopt = opt;
  if (opt.method == BandwidthMethod::rot || opt.method == BandwidthMethod::dpi)
    cvopt.method = BandwidthMethod::cv_ls;
  return cvopt;
}
}  // namespace

Search::Search(const arma::mat& X_, const arma::vec& y_, const BandwidthSelectOptions& opt_)
    : X(X_), y(y_), opt(opt_), obj(X_, y_, objective_options(opt_)), d(X_.n_cols),
      types(obj.var_types()), mopt(opt_.minimize) {
  res.method = bandwidth_method_name(opt.method);
  res.lower = obj.lower();
  res.upper = obj.upper();
  for (std::size_t j = 0; j < d; ++j)
    (types[j] == VarType::continuous ? cont : cat).push_back(j);
  // The searched objective: exact, or binned (binned.hpp), whose box starts at five grid
  // spacings (below, the binned data cannot resolve the kernel).
  if (opt.approx == Approximation::binned && opt.method != BandwidthMethod::rot &&
      opt.method != BandwidthMethod::dpi) {
    check::require(opt.method == BandwidthMethod::cv_ls, "approx",
                   "\"binned\" selection is for method cv_ls; use approx=\"exact\" for aic or gcv");
    check::require(opt.weights.is_empty(), "approx",
                   "\"binned\" selection has no observation weights; use approx=\"exact\" "
                   "with weights");
    binned_grid_size(types, opt.approx_grid_size, "approx_grid_size");
    binned.reset(new BinnedCVObjective(X, y, opt.degree, opt.kernel.kernel, opt.ridge,
                                       opt.approx_grid_size, opt.kernel.n_threads));
    for (std::size_t j = 0; j < d; ++j) res.lower(j) = std::max(res.lower(j), 5.0 * binned->spacing(j));
  }
}

void Search::note(double f) {
  ++evals;
  if (f < best) best = f;
  if (guard.poll()) guard.rethrow_if_interrupted();
  if (opt.on_eval) opt.on_eval(evals, best);
}

bool Search::recall(const arma::vec& b, double& v, arma::vec* g) const {
  for (const Recalled& m : memo)
    if (m.b.n_elem == b.n_elem && std::equal(b.begin(), b.end(), m.b.begin()) &&
        (g == nullptr || m.has_grad)) {
      v = m.v;
      if (g != nullptr) *g = m.g;
      return true;
    }
  return false;
}

double Search::eval_noted(const arma::vec& b) {
  double v;
  if (recall(b, v, nullptr)) return v;
  try {
    v = eval(b, nullptr);
  } catch (const NumericalError&) {
    v = kInf;
  }
  memo.push_back({b, v, false, arma::vec()});
  note(v);
  return v;
}

arma::vec Search::to_bw(const arma::vec& t) const {
  arma::vec b = t;
  for (std::size_t j : cont) b(j) = std::exp(t(j));
  for (std::size_t j = 0; j < d; ++j) b(j) = std::min(std::max(b(j), box_lower(j)), obj.upper()(j));
  return b;
}

double Search::objective(const arma::vec& t, arma::vec& g) {
  const arma::vec b = to_bw(t);
  double v;
  if (recall(b, v, &g)) return v;
  arma::vec gb;
  try {
    v = eval(b, &gb);
  } catch (const NumericalError&) {
    v = kInf;
    gb.zeros(d);
  }
  g = gb;
  if (!std::isfinite(v)) g.zeros(d);
  memo.push_back({b, v, true, g});
  note(v);
  return v;
}

arma::vec rule_start(const arma::mat& X, const std::vector<VarType>& types, const arma::vec& lo,
                     const arma::vec& hi, const Kernel& kernel) {
  const std::size_t d = X.n_cols;
  std::vector<std::size_t> cont, cat;
  for (std::size_t j = 0; j < d; ++j) (types[j] == VarType::continuous ? cont : cat).push_back(j);
  arma::vec base(d);
  if (!cont.empty()) {
    arma::mat Xc(X.n_rows, cont.size());
    for (std::size_t a = 0; a < cont.size(); ++a) Xc.col(a) = X.col(cont[a]);
    const arma::vec r = rot_bandwidth(Xc, kernel);
    for (std::size_t a = 0; a < cont.size(); ++a)
      base(cont[a]) = std::min(std::max(std::log(r(a)), lo(cont[a])), hi(cont[a]));
  }
  for (std::size_t j : cat) base(j) = 0.5 * (lo(j) + hi(j));
  return base;
}

void apply_start(const arma::vec& start, const std::vector<VarType>& types, const arma::vec& lo,
                 const arma::vec& hi, arma::vec& base) {
  if (start.is_empty()) return;
  const std::size_t d = types.size();
  check::require(start.n_elem == d && start.is_finite() && arma::all(start >= 0), "start",
                 "needs one finite, non-negative bandwidth per column");
  for (std::size_t j = 0; j < d; ++j) {
    const double t = types[j] == VarType::continuous ? std::log(std::max(start(j), 1e-300))
                                                    : start(j);
    base(j) = std::min(std::max(t, lo(j)), hi(j));
  }
}

void mark_box_ends(const arma::vec& lower, const arma::vec& upper, BandwidthSelectResult& res,
                   const std::function<std::string(std::size_t, bool)>& note) {
  const std::size_t d = res.bandwidth.n_elem;
  res.at_bound.assign(d, 0);
  for (std::size_t j = 0; j < d; ++j) {
    const bool at_lo = res.bandwidth(j) <= lower(j) * (1.0 + 1e-9);
    const bool at_hi = res.bandwidth(j) >= upper(j) * (1.0 - 1e-9);
    if (!at_lo && !at_hi) continue;
    res.at_bound[j] = at_lo ? -1 : 1;
    std::ostringstream m;
    m << "; column " << (j + 1) << " is at the " << (at_lo ? "lower" : "upper")
      << " end of the search box";
    if (note) m << note(j, at_lo);
    res.message += m.str();
  }
}

}  // namespace bandwidth_detail

namespace {

void check_search_options(const BandwidthSelectOptions& opt) {
  check::require(opt.n_starts >= 1, "n_starts", "must be at least 1");
  // Each grid point is a full cross-validation pass over the data, and the curve only seeds
  // the gradient search, so a huge grid is a mistake that would run for minutes or hours.
  constexpr int kMaxGridSize = 10000;
  check::require(opt.grid_size >= 0 && opt.grid_size <= kMaxGridSize, "grid_size",
                 "must be between 0 and " + std::to_string(kMaxGridSize) +
                     " (each grid point is one full cross-validation pass and the curve only "
                     "seeds the search; 30 is the default), got " +
                     std::to_string(opt.grid_size));
}

// rot and dpi: the closed-form rule, scored by the cv_ls objective.
BandwidthSelectResult rule_bandwidth(Search& s) {
  const BandwidthSelectOptions& opt = s.opt;
  BandwidthSelectResult& res = s.res;
  const std::size_t d = s.d;
  const arma::mat& X = s.X;
  check::require(s.cat.empty(), "method",
                 std::string(res.method) +
                     " is a rule for continuous columns only; with categorical columns use "
                     "cv_ls, aic or gcv");
  if (opt.method == BandwidthMethod::rot) {
    res.bandwidth = rot_bandwidth(X, opt.kernel.kernel);
  } else {
    check::require(d == 1 && opt.degree == 1 && opt.kernel.kernel.type == KernelType::gaussian,
                   "method", "dpi is the plug-in rule for 1-D local linear with the Gaussian "
                             "kernel; use cv_ls, aic or gcv otherwise");
    res.bandwidth = arma::vec{dpi_local_linear(X.col(0), s.y).bandwidth};
  }
  for (std::size_t j = 0; j < d; ++j)
    if (!(res.bandwidth(j) > 0.0) || !std::isfinite(res.bandwidth(j)))
      throw NumericalError("method: the " + res.method + " rule gave no usable bandwidth "
                           "for column " + std::to_string(j + 1) + "; use cv_ls");
  try {
    res.objective = s.obj(res.bandwidth);
  } catch (const NumericalError&) {
    res.objective = kInf;
  }
  res.n_evals = 1;
  res.converged = true;
  res.message = "closed-form rule; objective is the cv_ls score at the bandwidth";
  res.at_bound.assign(d, 0);
  return res;
}

// The box in theta (log h continuous, lambda categorical) and the first start: the
// normal-reference bandwidths (continuous), the middle of the range (categorical).
void box_and_base(Search& s) {
  const std::size_t d = s.d;
  arma::vec& lo = s.lo;
  arma::vec& hi = s.hi;
  lo.set_size(d);
  hi.set_size(d);
  for (std::size_t j : s.cont) {
    lo(j) = std::log(s.res.lower(j));
    hi(j) = std::log(s.obj.upper()(j));
  }
  for (std::size_t j : s.cat) {
    lo(j) = s.obj.lower()(j);
    hi(j) = s.obj.upper()(j);
  }
  // The box's lower end: the estimator's floor (raised to five grid spacings when binned),
  // raised again below where the objective is undefined.
  s.box_lower = s.res.lower;
  // Starting points.
  s.base = rule_start(s.X, s.types, lo, hi, s.opt.kernel.kernel);
}

// Check the objective at each continuous column's floor (the other columns at their start):
// the floor is a per-column necessary condition for the leave-one-out fits; where the
// objective is still undefined there (+inf: a compact kernel's joint support, a local-linear
// design singular in the joint space) the floor is raised, by bisection on log h, to within
// 1e-3 of the smallest bandwidth where it is defined, so the box's lower end is a bandwidth
// the estimator accepts.
void raise_floors(Search& s) {
  // At the floor itself the bandwidth is the box's lower end as such (not exp(log)), the
  // candidate take_best evaluates again (then recalled).
  auto finite_at = [&](std::size_t j, double t) {
    arma::vec b = s.base;
    for (std::size_t c : s.cont) b(c) = std::exp(b(c));
    b(j) = t == s.lo(j) && s.lo(j) == std::log(s.box_lower(j)) ? s.box_lower(j) : std::exp(t);
    return std::isfinite(s.eval_noted(b));
  };
  for (std::size_t j : s.cont) {
    if (finite_at(j, s.lo(j))) continue;
    double a = s.lo(j), b = std::max(s.base(j), s.lo(j));
    if (!finite_at(j, b)) continue;  // undefined at the start too: leave it to the search
    while (b - a > 1e-3) {
      const double mid = 0.5 * (a + b);
      (finite_at(j, mid) ? b : a) = mid;
    }
    s.lo(j) = b;
    s.box_lower(j) = std::exp(b);
  }
  s.res.lower = s.box_lower;
}

// Multistart search. A start where the objective is undefined (+inf: some leave-one-out fit
// has no weight or a singular local design, common at the normal-reference bandwidth with
// several columns and few rows) is moved up -- continuous bandwidths doubled, at most 12
// times and never past the box -- instead of aborting the search; a start that stays
// undefined is skipped (the error below reports when every start was).
MinimizeResult multistart(Search& s, bool economy, const std::vector<EconomyCandidate>& econ_cand,
                          const arma::mat& starts, const std::vector<bool>& log_scale) {
  const BandwidthSelectOptions& opt = s.opt;
  const arma::vec& lo = s.lo;
  const arma::vec& hi = s.hi;
  const Objective f = [&s](const arma::vec& t, arma::vec& g) { return s.objective(t, g); };
  MinimizeResult mr;
  mr.f = kInf;
  if (economy) {
    // The best binned candidate first; its first exact value says how far the binned
    // objective is from the exact one here, and every other candidate within three times that
    // (and 1e-3 relative) of the best binned value is searched too.
    double first = std::numeric_limits<double>::quiet_NaN();
    Objective f1 = [&](const arma::vec& t, arma::vec& g) {
      const double v = f(t, g);
      if (std::isnan(first)) first = v;
      return v;
    };
    const double vb = econ_cand[0].value;
    // A compact kernel's exact objective is piecewise smooth, kinked where points enter or
    // leave windows; at large n its gradient is noisy at the minimum (n = 10^6: jumps of 1e-7
    // in df/dlog h over 1e-4 in log h), and the polish crawls down decreases of 1e-10 ... 1e-15
    // relative. A step gaining less than 1e-10 of the cv_ls value (whose scale is |f|) ends it
    // (bench/results/nw_threads.md: 7 exact evaluations instead of 17, CV 2e-9 relative higher).
    MinimizeOptions popt = s.mopt;
    if (opt.kernel.kernel.compact() && popt.f_scale > 0.0 && std::isfinite(vb))
      popt.ftol = std::max(popt.ftol, 1e-10 * std::fabs(vb) / popt.f_scale);
    minimize_newton_start(f1, econ_cand[0].t, econ_cand[0].curvature, lo(0), hi(0), popt, mr);
    const double margin =
        3.0 * (std::isfinite(first) ? std::fabs(first - vb) : 0.0) + 1e-3 * std::fabs(vb);
    // Each candidate's run has its own result: minimize_from_starts keeps the best of its own
    // runs only (its first run replaces whatever `best` held), so passing mr again let a
    // worse basin searched later replace the better one found first.
    for (std::size_t c = 1; c < econ_cand.size(); ++c) {
      if (!(econ_cand[c].value <= vb + margin)) continue;
      MinimizeResult mc;
      if (minimize_newton_start(f, econ_cand[c].t, econ_cand[c].curvature, lo(0), hi(0), popt,
                                mc) &&
          (mc.f < mr.f || !std::isfinite(mr.f)))
        mr = std::move(mc);
    }
  } else {
    minimize_from_starts(f, starts, lo, hi, log_scale, s.mopt, mr);
  }
  if (!std::isfinite(mr.f))
    throw NumericalError(
        "bandwidth: the objective is undefined (+inf) at every point the search visited: some "
        "leave-one-out fit has no weight or a singular design; use the Gaussian kernel or "
        "fewer columns");
  return mr;
}

// The search's answer, then the candidates it may have missed: the curve's best (exact) point
// can beat a search that stopped on a plateau, and the floor itself (see below).
void take_best(Search& s, const MinimizeResult& mr) {
  BandwidthSelectResult& res = s.res;
  res.bandwidth = s.to_bw(mr.x);
  res.objective = mr.f;
  res.n_evals = s.evals;
  res.converged = mr.converged;
  res.message = mr.message;
  if (res.curve_values.n_elem > 0) {
    double vb = kInf;
    arma::uword gb = 0;
    for (arma::uword g = 0; g < res.curve_values.n_elem; ++g)
      if (s.curve_is_exact(g) && res.curve_values(g) < vb) {
        vb = res.curve_values(g);
        gb = g;
      }
    if (vb < res.objective) {
      res.bandwidth = arma::vec{res.curve_grid(gb)};
      res.objective = vb;
    }
  }
  // The floor itself is a candidate: on discrete data the objective falls, ever more slowly,
  // towards its value at the floor (the column then acts as exact matching, cell means), and
  // the search stops on that plateau when the gradient vanishes. Where the floor is at least
  // as good, it is the answer (and is reported as the box's end below). An answer a rounding
  // above the floor (exp of its log) is compared with it too (one column: its value is
  // recalled from raise_floors).
  for (std::size_t j : s.cont) {
    if (res.bandwidth(j) == s.box_lower(j)) continue;
    arma::vec b = res.bandwidth;
    b(j) = s.box_lower(j);
    const double v = s.eval_noted(b);
    if (v <= res.objective) {
      res.bandwidth = b;
      res.objective = v;
    }
  }
  res.n_evals = s.evals;
}

BandwidthSelectResult select_bandwidth_unscaled(const arma::mat& X, const arma::vec& y,
                                                const BandwidthSelectOptions& opt) {
  check_search_options(opt);
  Search s(X, y, opt);  // validates X, y
  if (opt.method == BandwidthMethod::rot || opt.method == BandwidthMethod::dpi)
    return rule_bandwidth(s);
  if (opt.kernel.kernel.type == KernelType::uniform && !s.cont.empty() &&
      (s.d > 1 || opt.grid_size < 2))
    throw InvalidArgument(
        "kernel: the uniform kernel's objective is piecewise constant in the bandwidth (zero "
        "gradient), so it cannot be searched; use epanechnikov or another smooth kernel, or a "
        "single continuous column (searched on the grid)");
  box_and_base(s);
  if (opt.min_neighbors <= 0 && opt.grid_size >= 0) raise_floors(s);
  apply_start(opt.start, s.types, s.lo, s.hi, s.base);
  arma::mat starts;
  std::vector<bool> log_scale(s.d);
  for (std::size_t j = 0; j < s.d; ++j) log_scale[j] = s.types[j] == VarType::continuous;
  std::vector<EconomyCandidate> econ_cand;  // economy: best binned value first
  const bool economy = economy_curve(s, econ_cand);
  if (economy) {
    // Starts: econ_cand (searched below).
  } else if (s.d == 1 && s.cont.size() == 1 && opt.grid_size >= 2) {
    if (exact_curve(s, starts)) return s.res;
  } else {
    starts = search_starts(s.base, s.lo, s.hi, log_scale, opt.n_starts, opt.seed);
  }
  const MinimizeResult mr = multistart(s, economy, econ_cand, starts, log_scale);
  take_best(s, mr);
  // Say when the answer sits on the edge of the box: the objective still falls beyond it (for
  // continuous columns at the lower edge: typically discrete data, where the cell means win).
  mark_box_ends(s.box_lower, s.obj.upper(), s.res, [&](std::size_t j, bool at_lo) -> std::string {
    if (s.types[j] != VarType::continuous) return "";
    if (at_lo)
      return opt.min_neighbors > 0
                 ? " (the guard: min_neighbors distinct neighbours within reach of every point)"
                 : " (the smallest bandwidth at which every leave-one-out fit exists)";
    return " (100 x the range: the column acts linearly / is smoothed out)";
  });
  return s.res;
}

}  // namespace

BandwidthSelectResult select_bandwidth(const arma::mat& X, const arma::vec& y,
                                       const BandwidthSelectOptions& opt) {
  // Rows of weight 0 take no part in anything (starts, grid, box): drop them first, so the
  // result is exactly that of the data without them. (BandwidthObjective validates weights.)
  if (!opt.weights.is_empty() && opt.weights.n_elem == X.n_rows && y.n_elem == X.n_rows &&
      opt.weights.is_finite() && arma::all(opt.weights >= 0.0) &&
      arma::any(opt.weights > 0.0) && arma::any(opt.weights == 0.0)) {
    const arma::uvec keep = arma::find(opt.weights > 0.0);
    BandwidthSelectOptions o = opt;
    o.weights = opt.weights.elem(keep);
    return select_bandwidth(X.rows(keep), y.elem(keep), o);
  }
  // Every criterion's minimiser is invariant under y -> c y (cv_ls and gcv scale by c^2, aic
  // shifts by log c^2), but at extreme scales (|y| ~ 1e+-150) the squared residuals lose
  // precision or overflow and the search went wrong without a word. Bring y to order one by
  // a power of two (exact in floating point), select, and undo the scale on the objective.
  // Likewise x -> c x with h -> c h for a continuous column: a column spread over 1e-300 is
  // not constant (the message said so) and one over 1e307 overflows the search box; both are
  // brought to order one by a power of two and the bandwidths scaled back.
  const int e = detail::extreme_scale_exponent(y.is_empty() ? 0.0 : arma::abs(y).max(), 200);
  std::vector<int> ex(X.n_cols, 0);
  bool scale_x = false;
  if (X.is_finite() && X.n_rows >= 2) {
    std::vector<VarType> t;
    try {
      t = parse_var_types(opt.kernel.var_types, X.n_cols, "var_types");
    } catch (const InvalidArgument&) {
      t.clear();  // the unscaled call reports it
    }
    for (std::size_t j = 0; j < t.size(); ++j) {
      if (t[j] != VarType::continuous) continue;
      const double range = X.col(j).max() - X.col(j).min();
      const double mag = arma::abs(X.col(j)).max();
      const int ej = detail::extreme_scale_exponent(range, 200);
      if (ej == 0) continue;
      if (!std::isfinite(std::ldexp(mag, -ej))) continue;
      ex[j] = ej;
      scale_x = true;
    }
  }
  if (e == 0 && !scale_x) return select_bandwidth_unscaled(X, y, opt);
  const arma::vec ys = e == 0 ? y : arma::vec(y * std::ldexp(1.0, -e));
  arma::mat Xs = X;
  BandwidthSelectOptions os = opt;
  for (std::size_t j = 0; j < ex.size(); ++j) {
    if (ex[j] == 0) continue;
    Xs.col(j) *= std::ldexp(1.0, -ex[j]);
    if (os.start.n_elem == X.n_cols) os.start(j) = std::ldexp(os.start(j), -ex[j]);
  }
  BandwidthSelectResult res = select_bandwidth_unscaled(Xs, ys, os);
  for (std::size_t j = 0; j < ex.size(); ++j) {
    if (ex[j] == 0) continue;
    if (j < res.bandwidth.n_elem) res.bandwidth(j) = std::ldexp(res.bandwidth(j), ex[j]);
    if (j < res.lower.n_elem) res.lower(j) = std::ldexp(res.lower(j), ex[j]);
    if (j < res.upper.n_elem) res.upper(j) = std::ldexp(res.upper(j), ex[j]);
    if (j == 0 && X.n_cols == 1)
      for (double& g : res.curve_grid) g = std::ldexp(g, ex[j]);
  }
  auto unscale = [&](double v) {
    if (!std::isfinite(v)) return v;
    return opt.method == BandwidthMethod::aic ? v + 2.0 * e * std::log(2.0) : std::ldexp(v, 2 * e);
  };
  res.objective = unscale(res.objective);
  for (double& v : res.curve_values) v = unscale(v);
  return res;
}

}  // namespace attnreg
