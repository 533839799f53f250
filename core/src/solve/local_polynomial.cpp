#include "attnreg/solve/local_polynomial.hpp"
#include "attnreg/base/constants.hpp"
#include "attnreg/detail/pow2_scale.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <utility>

#include "attnreg/base/error.hpp"
#include "attnreg/kernels/kernel_pairs.hpp"
#include "attnreg/solve/optimize.hpp"
#include "attnreg/base/runtime.hpp"
#include "attnreg/bandwidth/criteria.hpp"
#include "attnreg/detail/bandwidth_select_internal.hpp"

namespace attnreg {

namespace {


/// Index of the basis term z_a z_c (a <= c) among the local coefficients (0 = intercept) of a
/// degree-2 fit with dc continuous columns (local_fit.hpp's order), or of u^2 when dc == 1.
std::size_t product_index(std::size_t a, std::size_t c, std::size_t dc) {
  if (dc == 1) return 2;
  std::size_t t = 1 + dc;
  for (std::size_t i = 0; i < a; ++i) t += dc - i;
  return t + (c - a);
}

/// The local coefficients (m x q x k, bandwidth units) of a fitted model at X_new.
arma::cube local_solution(const LocalPolynomial& model, const arma::mat& X_new) {
  const KernelSpace& space = model.space();
  const arma::mat& Y = model.training_y();
  arma::mat Yi(Y.n_rows, Y.n_cols);
  const auto& order = space.order();
  for (std::size_t k = 0; k < order.size(); ++k) Yi.row(k) = Y.row(order[k]);
  const PreparedQueries Q = space.prepare(X_new, "X_new");
  LocalEvalRequest req;
  req.fit = false;
  req.solution = true;
  const LocalPolySpec spec{model.options().degree, model.options().ridge};
  LocalEvalResult r =
      local_polynomial_eval(space, Yi, spec, Q, req, model.options().kernel.n_threads);
  throw_on_failed_query(r.status, space, spec.degree, spec.ridge, "X_new", false);
  return std::move(r.solution);
}

double factorial(int s) {
  double f = 1.0;
  for (int i = 2; i <= s; ++i) f *= i;
  return f;
}

}  // namespace

arma::cube local_polynomial_derivative(const LocalPolynomial& model, const arma::mat& X_new,
                                       int order) {
  check::require(model.is_fitted(), "derivative", "the model is not fitted yet (call fit first)");
  const int p = model.options().degree;
  if (order < 0 || order > p) {
    std::ostringstream m;
    m << "must be between 0 and the degree " << p << " (got " << order << "); a local "
      << "polynomial of degree p estimates derivatives up to order p (raise the degree)";
    throw InvalidArgument("order: " + m.str());
  }
  const KernelSpace& space = model.space();
  const std::size_t d = space.dim(), k = model.n_outputs();
  const auto& cc = space.continuous_columns();
  const std::size_t dc = cc.size();
  if (order == 0) {
    const arma::mat f = model.predict(X_new);
    arma::cube out(f.n_rows, d, k);
    for (std::size_t j = 0; j < d; ++j)
      for (std::size_t o = 0; o < k; ++o) out.slice(o).col(j) = f.col(o);
    return out;
  }
  if (order == 1) return model.gradient(X_new);  // the local fit's own slopes
  const arma::cube S = local_solution(model, X_new);
  arma::cube out(S.n_rows, d, k);
  out.fill(kNaN);
  const arma::vec& h = model.bandwidth();
  for (std::size_t a = 0; a < dc; ++a) {
    const std::size_t col = cc[a];
    const double ha = h.n_elem == 1 ? h(0) : h(col);
    std::size_t idx;
    double scale;
    if (dc == 1) {
      idx = static_cast<std::size_t>(order);
      scale = factorial(order) / std::pow(ha, order);
    } else {  // degree 2, several continuous columns, order 2: the square term
      idx = product_index(a, a, dc);
      scale = 2.0 / (ha * ha);
    }
    for (std::size_t o = 0; o < k; ++o)
      for (std::size_t r = 0; r < S.n_rows; ++r) out(r, col, o) = scale * S(r, idx, o);
  }
  return out;
}

arma::cube local_polynomial_hessian(const LocalPolynomial& model, const arma::mat& X_new,
                                    arma::uword output) {
  check::require(model.is_fitted(), "hessian", "the model is not fitted yet (call fit first)");
  check::require(model.options().degree >= 2, "degree",
                 "second derivatives need a local polynomial of degree >= 2");
  check::require(output < model.n_outputs(), "output", "is out of range");
  const KernelSpace& space = model.space();
  const auto& cc = space.continuous_columns();
  const std::size_t dc = cc.size();
  const arma::cube S = local_solution(model, X_new);
  const arma::vec& h = model.bandwidth();
  arma::cube H(S.n_rows, dc, dc);
  for (std::size_t a = 0; a < dc; ++a)
    for (std::size_t c = a; c < dc; ++c) {
      const double ha = h.n_elem == 1 ? h(0) : h(cc[a]);
      const double hc = h.n_elem == 1 ? h(0) : h(cc[c]);
      const double scale = (a == c ? 2.0 : 1.0) / (ha * hc);
      const std::size_t idx = product_index(a, c, dc);
      for (std::size_t r = 0; r < S.n_rows; ++r) {
        H(r, a, c) = scale * S(r, idx, output);
        H(r, c, a) = H(r, a, c);
      }
    }
  return H;
}

double local_polynomial_criterion(const arma::mat& X, const arma::vec& y,
                                  const arma::vec& bandwidth, const BandwidthSelectOptions& opt) {
  check::require(opt.method == BandwidthMethod::cv_ls || opt.method == BandwidthMethod::aic ||
                     opt.method == BandwidthMethod::gcv,
                 "method", "the criterion exists for cv_ls, aic and gcv only");
  LocalFitOptions fo;
  fo.degree = opt.degree;
  fo.kernel = opt.kernel;
  fo.ridge = opt.ridge;
  fo.compute_fitted = false;
  LocalPolynomial model(fo);
  model.fit(X, arma::mat(y), bandwidth);  // validates; no O(n^2) work yet
  // The model's own training statistics: one pass over the pairs of distinct rows (ties
  // grouped, local_fit.hpp), exact leave-one-out fits and leverages.
  const std::size_t n = X.n_rows;
  const double nn = static_cast<double>(n);
  double ss = 0.0;
  if (opt.method == BandwidthMethod::cv_ls) {
    arma::mat loo;
    try {
      loo = model.loo_fitted();
    } catch (const NumericalError&) {
      return kInf;  // some fit (full or leave-one-out) does not exist
    }
    for (std::size_t i = 0; i < n; ++i) ss += (y(i) - loo(i, 0)) * (y(i) - loo(i, 0));
    return criteria::cv_ls(ss, nn);
  }
  double tr;
  try {
    const arma::mat& f = model.fitted();
    for (std::size_t i = 0; i < n; ++i) ss += (y(i) - f(i, 0)) * (y(i) - f(i, 0));
    tr = model.effective_df();
  } catch (const NumericalError&) {
    return kInf;
  }
  const criteria::FitSums sums{ss, nn, nn, tr};  // criteria.hpp
  return opt.method == BandwidthMethod::gcv ? criteria::gcv(sums) : criteria::aicc(sums);
}

namespace {

// The criterion on theta (log h for continuous columns, lambda for categorical ones) with its
// gradient by central differences (one-sided at the box or where one side is undefined). It
// refers to eval, types, lo and hi, which must outlive it.
Objective central_difference_objective(const std::function<double(const arma::vec&)>& eval,
                                       const std::vector<VarType>& types, const arma::vec& lo,
                                       const arma::vec& hi) {
  const auto* ev = &eval;
  const auto* ty = &types;
  const arma::vec* plo = &lo;
  const arma::vec* phi = &hi;
  return [ev, ty, plo, phi](const arma::vec& t, arma::vec& g) {
    const std::function<double(const arma::vec&)>& eval = *ev;
    const arma::vec& lo = *plo;
    const arma::vec& hi = *phi;
    const std::size_t d = t.n_elem;
    const double v = eval(t);
    g.zeros(d);
    if (!std::isfinite(v)) return v;
    for (std::size_t j = 0; j < d; ++j) {
      const double step = (*ty)[j] == VarType::continuous ? 1e-5 : 1e-5 * (hi(j) - lo(j));
      arma::vec tp = t, tm = t;
      tp(j) = std::min(t(j) + step, hi(j));
      tm(j) = std::max(t(j) - step, lo(j));
      const double fp = tp(j) > t(j) ? eval(tp) : kInf;
      const double fm = tm(j) < t(j) ? eval(tm) : kInf;
      if (std::isfinite(fp) && std::isfinite(fm))
        g(j) = (fp - fm) / (tp(j) - tm(j));
      else if (std::isfinite(fp))
        g(j) = (fp - v) / (tp(j) - t(j));
      else if (std::isfinite(fm))
        g(j) = (v - fm) / (t(j) - tm(j));
    }
    return v;
  };
}

// The search's centre on theta: the rule-of-thumb bandwidths of the continuous columns and the
// middle of the categorical ones' range, or opt.start; inside the box [lo, hi].
arma::vec search_base(const arma::mat& X, const std::vector<VarType>& types, const arma::vec& lo,
                      const arma::vec& hi, const BandwidthSelectOptions& opt) {
  arma::vec base = bandwidth_detail::rule_start(X, types, lo, hi, opt.kernel.kernel);
  bandwidth_detail::apply_start(opt.start, types, lo, hi, base);
  return base;
}

}  // namespace

BandwidthSelectResult search_bandwidth(const BandwidthCriterion& criterion, const arma::mat& X,
                                       const std::vector<VarType>& types, const arma::vec& lower,
                                       const arma::vec& upper, const BandwidthSelectOptions& opt) {
  const std::size_t d = X.n_cols;
  check::require(types.size() == d && lower.n_elem == d && upper.n_elem == d, "bandwidth",
                 "search box of inconsistent size");
  check::require(opt.n_starts >= 1, "n_starts", "must be at least 1");
  check::require(opt.grid_size >= 0 && opt.grid_size <= 1000, "grid_size",
                 "must be between 0 and 1000");
  std::vector<std::size_t> cont, cat;
  for (std::size_t j = 0; j < d; ++j) (types[j] == VarType::continuous ? cont : cat).push_back(j);
  arma::vec lo(d), hi(d);
  for (std::size_t j : cont) {
    lo(j) = std::log(lower(j));
    hi(j) = std::log(upper(j));
  }
  for (std::size_t j : cat) {
    lo(j) = lower(j);
    hi(j) = upper(j);
  }
  auto to_bw = [&](const arma::vec& t) {
    arma::vec b = t;
    for (std::size_t j : cont) b(j) = std::exp(t(j));
    for (std::size_t j = 0; j < d; ++j) b(j) = std::min(std::max(b(j), lower(j)), upper(j));
    return b;
  };
  int evals = 0;
  double best = kInf;
  InterruptGuard guard;
  // Held by the gradient's objective (central_difference_objective): outlives every call.
  const std::function<double(const arma::vec&)> eval = [&](const arma::vec& t) {
    double v;
    try {
      v = criterion(to_bw(t));
    } catch (const NumericalError&) {
      v = kInf;
    }
    if (!std::isfinite(v)) v = kInf;
    ++evals;
    if (v < best) best = v;
    if (guard.poll()) guard.rethrow_if_interrupted();
    if (opt.on_eval) opt.on_eval(evals, best);
    return v;
  };
  const Objective f = central_difference_objective(eval, types, lo, hi);

  BandwidthSelectResult res;
  res.method = bandwidth_method_name(opt.method);
  res.lower = lower;
  res.upper = upper;
  const arma::vec base = search_base(X, types, lo, hi, opt);
  arma::mat starts;
  std::vector<bool> log_scale(d);
  for (std::size_t j = 0; j < d; ++j) log_scale[j] = types[j] == VarType::continuous;
  if (d == 1 && cont.size() == 1 && opt.grid_size >= 2) {
    const std::vector<double> st = search_curve(
        [&](double t) { return eval(arma::vec{t}); }, lo(0), hi(0),
        X.col(0).max() - X.col(0).min(), base(0), static_cast<std::size_t>(opt.grid_size),
        opt.n_starts, res.curve_grid, res.curve_values);
    if (st.empty())
      throw NumericalError(
          "bandwidth: the objective is undefined (+inf) at every bandwidth of the search grid: "
          "some leave-one-out fit has no weight or a singular local design; use the Gaussian "
          "kernel, a lower degree, or pass a bandwidth by hand");
    starts = arma::rowvec(st);
  } else {
    starts = search_starts(base, lo, hi, log_scale, opt.n_starts, opt.seed);
  }
  // Multistart; an undefined start moves its continuous bandwidths up (doubling, <= 12 times).
  // Each finite-difference gradient costs 2 d evaluations: a start that crawls along a flat
  // ridge (h -> infinity: the global polynomial) is cut at 100 iterations / 80 d evaluations.
  MinimizeOptions mopt = opt.minimize;
  mopt.max_iter = std::min(mopt.max_iter, 100);
  mopt.max_evals = std::min(mopt.max_evals, 80 * static_cast<int>(std::max<std::size_t>(d, 2)) + 20);
  MinimizeResult mr;
  mr.f = kInf;
  const bool have = minimize_from_starts(f, starts, lo, hi, log_scale, mopt, mr);
  if (!have || !std::isfinite(mr.f))
    throw NumericalError(
        "bandwidth: the objective is undefined (+inf) at every point the search visited: some "
        "leave-one-out fit has no weight or a singular local design; use the Gaussian kernel, "
        "a lower degree or fewer columns");
  res.bandwidth = to_bw(mr.x);
  res.objective = mr.f;
  res.n_evals = evals;
  res.converged = mr.converged;
  res.message = mr.message;
  if (res.curve_values.n_elem > 0) {
    const arma::uword gb = res.curve_values.index_min();
    if (res.curve_values(gb) < res.objective) {
      res.bandwidth = arma::vec{res.curve_grid(gb)};
      res.objective = res.curve_values(gb);
    }
  }
  bandwidth_detail::mark_box_ends(lower, upper, res);
  return res;
}

BandwidthSelectResult select_local_polynomial_bandwidth(const arma::mat& X, const arma::vec& y,
                                                        const BandwidthSelectOptions& opt) {
  check::require(opt.degree >= 0 && opt.degree <= 3, "degree",
                 "must be 0 (local constant), 1 (local linear), 2 or 3 (got " +
                     std::to_string(opt.degree) + ")");
  if (opt.degree <= 1) return select_bandwidth(X, y, opt);
  if (opt.method == BandwidthMethod::rot || opt.method == BandwidthMethod::dpi)
    throw InvalidArgument(std::string("method: '") + bandwidth_method_name(opt.method) +
                          "' is a rule for local constant and local linear fits; for degree " +
                          std::to_string(opt.degree) + " use cv_ls, aic or gcv");
  // The search box of bandwidth_select.hpp (its guard asks for degree + 1 distinct neighbours,
  // at least the number of local coefficients in one column).
  // An extreme response (|y| beyond 2^+-200) is searched at order one (pow2_scale.hpp).
  return detail::select_on_scaled_response<BandwidthSelectResult>(
      y, opt.method == BandwidthMethod::aic, [&](const arma::vec& ys) {
        BandwidthSelectOptions box_opt = opt;
        box_opt.degree = 1;
        if (box_opt.min_neighbors <= 0) box_opt.min_neighbors = opt.degree + 1;
        const BandwidthObjective box(X, ys, box_opt);
        BandwidthCriterion crit = [&](const arma::vec& bw) {
          return local_polynomial_criterion(X, ys, bw, opt);
        };
        return search_bandwidth(crit, X, box.var_types(), box.lower(), box.upper(), opt);
      });
}

}  // namespace attnreg
