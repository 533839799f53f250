#include "attnreg/solve/local_fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "attnreg/base/error.hpp"
#include "attnreg/base/runtime.hpp"
#include "attnreg/bandwidth/criteria.hpp"
#include "attnreg/detail/local_fit_internal.hpp"

namespace attnreg {

using local_fit_detail::degree_name;
using local_fit_detail::make_squared_weight_sink;
using local_fit_detail::make_weight_sink;
using local_fit_detail::penalty_scales;

// ---------------------------------------------------------------- LocalPolynomial

void LocalPolynomial::require_fitted(const char* what) const {
  if (!fitted_flag_)
    throw InvalidArgument(std::string(what) + ": the model is not fitted yet (call fit first)");
}

LocalPolynomial& LocalPolynomial::fit(const arma::mat& X, const arma::mat& Y,
                                      const arma::vec& bandwidth,
                                      const arma::vec& sample_weight) {
  fitted_flag_ = false;
  have_fitted_ = false;
  check::require(opt_.degree >= 0 && opt_.degree <= 3, "degree",
                 "must be 0 (local constant), 1 (local linear), 2 or 3");
  check::require(std::isfinite(opt_.ridge) && opt_.ridge >= 0.0, "ridge",
                 "must be >= 0 and finite (0 = classical local linear)");
  // A bad n_threads is named at fit, not on first use.
  (void)resolve_threads(opt_.kernel.n_threads);
  check::require(X.n_rows >= 1, "X", "needs at least one row");
  check::require(Y.n_cols >= 1, "y", "needs at least one column (one output)");
  check::rows_match(Y, X.n_rows, "y", "X");
  check::all_finite(Y, "y");
  KernelSpace space(X, bandwidth, opt_.kernel, sample_weight);

  const std::size_t dc = space.n_continuous();
  if ((opt_.degree == 3 && dc != 1) || (opt_.degree == 2 && dc == 0)) {
    std::ostringstream msg;
    msg << "degree " << opt_.degree << " needs "
        << (opt_.degree == 3 ? "exactly one continuous column" : "a continuous column")
        << ", X has " << dc
        << (opt_.degree == 3 ? " (use degree 1 or 2 for several continuous columns)"
                             : " (use degree 0 for categorical regressors only)");
    throw InvalidArgument("degree: " + msg.str());
  }
  const std::size_t q = 1 + LocalPolySpec::n_terms(opt_.degree, dc);
  if (X.n_rows < q && opt_.ridge == 0.0) {  // with a ridge the local fit is always defined
    std::ostringstream msg;
    msg << "a " << degree_name(opt_.degree) << " fit with " << dc << " continuous column"
        << (dc == 1 ? "" : "s") << " estimates " << q << " coefficients per point and needs at "
        << "least " << q << " rows, got " << X.n_rows << (X.n_rows == 1 ? " sample" : " samples")
        << " (use more data or a lower degree)";
    throw InvalidArgument("X: " + msg.str());
  }
  if (opt_.degree >= 1 && opt_.ridge == 0.0) {
    for (std::size_t j : space.continuous_columns()) {
      if (arma::all(X.col(j) == X(0, j))) {
        std::ostringstream msg;
        msg << "continuous column " << (j + 1) << " is constant, so its local slope is not "
            << "identified (drop the column, declare it categorical, or set ridge > 0)";
        throw InvalidArgument("X: " + msg.str());
      }
    }
  }

  space_ = std::move(space);
  x_ = X;
  y_ = Y;
  sample_weight_ = sample_weight;
  y_internal_.set_size(Y.n_rows, Y.n_cols);
  const auto& order = space_.order();
  for (std::size_t k = 0; k < order.size(); ++k) y_internal_.row(k) = Y.row(order[k]);
  // Distinct rows (see "Ties" in local_fit.hpp): the grouped space is only built with ties.
  groups_ = distinct_rows(X);
  const std::size_t G = groups_.X.n_rows, n = X.n_rows, kout = Y.n_cols;
  gweight_.zeros(G);
  gsum_.zeros(G, kout);
  for (std::size_t i = 0; i < n; ++i) {
    const double a = sample_weight.is_empty() ? 1.0 : sample_weight(i);
    const std::size_t g = groups_.group_of[i];
    gweight_(g) += a;
    gsum_.row(g) += a * Y.row(i);
  }
  gspace_ = KernelSpace();
  gy_internal_.reset();
  if (groups_.has_ties()) {
    const bool weighted = !sample_weight.is_empty() || arma::any(groups_.count != 1.0);
    gspace_ = KernelSpace(groups_.X, bandwidth, opt_.kernel, weighted ? gweight_ : arma::vec());
    gy_internal_.zeros(G, kout);
    const auto& gorder = gspace_.order();
    for (std::size_t k = 0; k < G; ++k) {
      const std::size_t g = gorder[k];
      if (gweight_(g) > 0.0) gy_internal_.row(k) = gsum_.row(g) / gweight_(g);
    }
  }
  fitted_flag_ = true;
  fitted_.reset();
  leverage_.reset();
  loo_.reset();
  loo_status_.clear();
  fit_status_.clear();
  have_fitted_ = false;
  have_trace_ltl_ = false;
  stats_evaluations_ = 0;

  if (opt_.compute_fitted) {
    try {
      compute_statistics();
      check_training_fits();
    } catch (...) {
      fitted_flag_ = false;
      throw;
    }
  }
  return *this;
}

void LocalPolynomial::ensure_statistics() const {
  std::lock_guard<std::mutex> lock(*stats_mutex_);
  if (!have_fitted_) compute_statistics();
}

void LocalPolynomial::compute_statistics() const {
  const std::size_t n = x_.n_rows, k = y_.n_cols;
  const LocalPolySpec spec{opt_.degree, opt_.ridge};
  ++stats_evaluations_;
  if (!groups_.has_ties()) {
    const PreparedQueries Q = space_.training_queries();
    LocalEvalRequest req;
    req.fit = true;
    req.loo = true;
    LocalEvalResult r =
        local_polynomial_eval(space_, y_internal_, spec, Q, req, opt_.kernel.n_threads);
    fitted_ = std::move(r.fit);
    leverage_ = std::move(r.leverage);
    loo_ = std::move(r.loo);
    loo_status_ = std::move(r.loo_status);
    fit_status_ = std::move(r.status);
    mark_failed_training_fits();
    have_fitted_ = true;
    return;
  }
  // Grouped path: one pass over the distinct rows gives the full fit, the group's leverage
  // sum and the moments without the group; then one small solve per row for its LOO fit.
  const KernelSpace& gs = gspace_;
  const std::size_t G = gs.n();
  const PreparedQueries Q = gs.training_queries();
  LocalEvalRequest req;
  req.fit = true;
  req.loo = true;
  req.moments = true;
  LocalEvalResult r = local_polynomial_eval(gs, gy_internal_, spec, Q, req, opt_.kernel.n_threads);
  fit_status_.resize(n);
  for (std::size_t i = 0; i < n; ++i) fit_status_[i] = r.status[groups_.group_of[i]];
  const std::size_t q = 1 + LocalPolySpec::n_terms(opt_.degree, gs.n_continuous());
  std::vector<double> unit(G);  // u_g: kernel weight of one unit of observation weight at 0
  for (std::size_t g = 0; g < G; ++g) {
    const double sw = gs.self_weight(gs.position()[g]);
    unit[g] = gweight_(g) > 0.0 ? sw / gweight_(g) : 0.0;
  }
  arma::mat A(q * q, n), T(q * k, n);
  arma::vec rmax(n);
  fitted_.set_size(n, k);
  leverage_.set_size(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t g = groups_.group_of[i];
    const double a = sample_weight_.is_empty() ? 1.0 : sample_weight_(i);
    fitted_.row(i) = r.fit.row(g);
    leverage_(i) = gweight_(g) > 0.0 ? r.leverage(g) * (a / gweight_(g)) : 0.0;
    std::copy(r.moment_A.colptr(g), r.moment_A.colptr(g) + q * q, A.colptr(i));
    std::copy(r.moment_T.colptr(g), r.moment_T.colptr(g) + q * k, T.colptr(i));
    const double others = unit[g] * (gweight_(g) - a);  // exact 0 when no other row weighs
    A(0, i) += others;
    for (std::size_t o = 0; o < k; ++o) T(o, i) += unit[g] * (gsum_(g, o) - a * y_(i, o));
    rmax(i) = std::max(r.moment_max(g), others);
  }
  local_polynomial_solve(A, T, rmax, k, opt_.ridge, penalty_scales(gs, opt_.degree), loo_,
                         loo_status_);
  mark_failed_training_fits();
  have_fitted_ = true;
}

// Rows whose own fit does not exist hold NaN fitted values and leverages (fitted_unchecked).
void LocalPolynomial::mark_failed_training_fits() const {
  for (std::size_t i = 0; i < fit_status_.size(); ++i)
    if (fit_status_[i] != QueryStatus::ok) {
      fitted_.row(i).fill(arma::datum::nan);
      leverage_(i) = arma::datum::nan;
    }
}

void LocalPolynomial::check_training_fits() const {
  throw_on_failed_query(fit_status_, space_, opt_.degree, opt_.ridge,
                        "X (fitted values at the training rows)", false);
}

double LocalPolynomial::trace_LtL() const {
  require_fitted("trace_LtL");
  std::lock_guard<std::mutex> lock(*stats_mutex_);
  if (have_trace_ltl_) return trace_ltl_;
  // Equivalent-kernel weights over the distinct rows, in blocks of queries (distinct rows).
  const KernelSpace& gs = grouped_space();
  const std::size_t G = gs.n(), n = x_.n_rows;
  arma::vec f(G, arma::fill::zeros);  // sum_{j in h} a_j^2 / W_h^2
  for (std::size_t j = 0; j < n; ++j) {
    const double a = sample_weight_.is_empty() ? 1.0 : sample_weight_(j);
    f(groups_.group_of[j]) += a * a;
  }
  for (std::size_t h = 0; h < G; ++h) f(h) = gweight_(h) > 0.0 ? f(h) / (gweight_(h) * gweight_(h)) : 0.0;
  const arma::mat& gy = groups_.has_ties() ? gy_internal_ : y_internal_;
  const std::size_t block = std::min<std::size_t>(G, 8192);  // queries per pass (no m x G block)
  double total = 0.0;
  for (std::size_t r0 = 0; r0 < G; r0 += block) {
    const std::size_t r1 = std::min(G, r0 + block);
    const PreparedQueries Q = gs.prepare(groups_.X.rows(r0, r1 - 1), "X");
    LocalEvalRequest req;
    req.fit = false;
    req.coefficients = true;
    LocalEvalResult r = local_polynomial_eval(gs, gy, LocalPolySpec{opt_.degree, opt_.ridge}, Q,
                                              req, opt_.kernel.n_threads);
    throw_on_failed_query(r.status, gs, opt_.degree, opt_.ridge, "X", false);
    arma::vec s(Q.m, arma::fill::zeros);  // sum_h f_h l_h(x_b)^2 per query
    RunOptions ro;
    ro.n_threads = opt_.kernel.n_threads;
    ro.label = "tr(L'L)";
    const int degree = opt_.degree;
    gs.run(
        Q,
        [&]() { return make_squared_weight_sink(gs, Q, degree, r.coefficients, f, s); },
        ro);
    for (std::size_t b = 0; b < Q.m; ++b) total += groups_.count(r0 + b) * s(b);
  }
  trace_ltl_ = total;
  have_trace_ltl_ = true;
  return total;
}

LocalEvalResult LocalPolynomial::evaluate(const arma::mat& X_new, const LocalEvalRequest& req,
                                          const std::string& arg) const {
  const PreparedQueries Q = space_.prepare(X_new, arg);
  LocalEvalResult r = local_polynomial_eval(space_, y_internal_, LocalPolySpec{opt_.degree, opt_.ridge},
                                            Q, req, opt_.kernel.n_threads);
  throw_on_failed_query(r.status, space_, opt_.degree, opt_.ridge, arg, false);
  return r;
}

arma::mat LocalPolynomial::predict(const arma::mat& X_new) const {
  require_fitted("predict");
  LocalEvalRequest req;
  return evaluate(X_new, req, "X_new").fit;
}

arma::cube LocalPolynomial::gradient(const arma::mat& X_new) const {
  require_fitted("gradient");
  check::require(opt_.degree >= 1, "gradient",
                 "needs degree >= 1 (a local constant fit has no slope; use local linear)");
  LocalEvalRequest req;
  req.fit = false;
  req.gradient = true;
  return evaluate(X_new, req, "X_new").gradient;
}

// The attention weights of queries X_new over the rows of a kernel space (the training rows, or
// the distinct rows with their group responses).
static arma::mat attention_weights_over(const KernelSpace& space, const arma::mat& y_internal,
                                        const LocalFitOptions& opt, const arma::mat& X_new) {
  const PreparedQueries Q = space.prepare(X_new, "X_new");
  LocalEvalRequest req;
  req.fit = false;
  req.coefficients = true;
  LocalEvalResult r = local_polynomial_eval(space, y_internal, LocalPolySpec{opt.degree, opt.ridge},
                                            Q, req, opt.kernel.n_threads);
  throw_on_failed_query(r.status, space, opt.degree, opt.ridge, "X_new", false);
  arma::mat W(Q.m, space.n(), arma::fill::zeros);
  RunOptions ro;
  ro.n_threads = opt.kernel.n_threads;
  ro.label = "attention weights";
  const int degree = opt.degree;
  space.run(
      Q,
      [&]() { return make_weight_sink(space, Q, degree, r.coefficients, W); },
      ro);
  return W;
}

arma::mat LocalPolynomial::attention_weights(const arma::mat& X_new) const {
  require_fitted("attention_weights");
  return attention_weights_over(space_, y_internal_, opt_, X_new);
}

arma::mat LocalPolynomial::distinct_attention_weights(const arma::mat& X_new) const {
  require_fitted("distinct_attention_weights");
  if (!groups_.has_ties()) return attention_weights(X_new);
  return attention_weights_over(gspace_, gy_internal_, opt_, X_new);
}

const arma::mat& LocalPolynomial::fitted() const {
  require_fitted("fitted");
  ensure_statistics();
  check_training_fits();
  return fitted_;
}

const arma::vec& LocalPolynomial::leverage() const {
  require_fitted("leverage");
  ensure_statistics();
  check_training_fits();
  return leverage_;
}

const std::vector<QueryStatus>& LocalPolynomial::training_fit_status() const {
  require_fitted("training_fit_status");
  ensure_statistics();
  return fit_status_;
}

const arma::mat& LocalPolynomial::fitted_unchecked() const {
  require_fitted("fitted");
  ensure_statistics();
  return fitted_;
}

const arma::vec& LocalPolynomial::leverage_unchecked() const {
  require_fitted("leverage");
  ensure_statistics();
  return leverage_;
}

arma::mat LocalPolynomial::loo_fitted() const {
  require_fitted("loo_fitted");
  ensure_statistics();
  throw_on_failed_query(loo_status_, space_, opt_.degree, opt_.ridge, "X", true);
  return loo_;
}

double LocalPolynomial::cv_score() const {
  require_fitted("cv_score");
  ensure_statistics();
  // A row of positive weight without a leave-one-out fit: the criterion does not exist.
  for (std::size_t i = 0; i < x_.n_rows; ++i) {
    const double w = sample_weight_.is_empty() ? 1.0 : sample_weight_(i);
    if (w > 0.0 && loo_status_[i] != QueryStatus::ok)
      return std::numeric_limits<double>::infinity();
  }
  return criteria::loo_mean_square(y_, loo_, sample_weight_);  // criteria.hpp
}

LocalPolynomial kernel_weight_model(const LocalPolynomial& model, const arma::mat& X,
                                    const arma::vec& bandwidth, const arma::vec& weights,
                                    bool keep_truncation) {
  LocalFitOptions fo = model.options();
  fo.degree = 0;
  fo.ridge = 0;
  fo.compute_fitted = false;
  if (!keep_truncation) fo.kernel.truncation = 0;
  LocalPolynomial nw(fo);
  nw.fit(X, arma::mat(X.n_rows, 1, arma::fill::zeros), bandwidth, weights);
  return nw;
}

LocalFitState LocalPolynomial::state() const {
  require_fitted("state");
  LocalFitState s;
  s.degree = opt_.degree;
  s.kernel = opt_.kernel.kernel.name();
  s.var_types = format_var_types(space_.var_types());
  s.unordered_kernel = opt_.kernel.unordered_kernel.name();
  s.ordered_kernel = opt_.kernel.ordered_kernel.name();
  s.ridge = opt_.ridge;
  s.algorithm = pair_algorithm_name(opt_.kernel.algorithm);
  s.truncation = opt_.kernel.truncation;
  s.X = x_;
  s.Y = y_;
  s.bandwidth = space_.bandwidth();
  s.sample_weight = sample_weight_;
  const bool all_ok = std::all_of(fit_status_.begin(), fit_status_.end(),
                                  [](QueryStatus q) { return q == QueryStatus::ok; });
  if (have_fitted_ && all_ok) {  // otherwise recomputed (and reported) on first use
    s.fitted = fitted_;
    s.leverage = leverage_;
    s.loo = loo_;
    s.loo_status.set_size(loo_status_.size());
    for (std::size_t i = 0; i < loo_status_.size(); ++i)
      s.loo_status(i) = static_cast<double>(loo_status_[i]);
  }
  return s;
}

LocalPolynomial LocalPolynomial::from_state(const LocalFitState& s) {
  LocalFitOptions o;
  o.degree = s.degree;
  o.kernel.kernel = Kernel::from_name(s.kernel, "state.kernel");
  o.kernel.var_types = s.var_types;
  o.kernel.unordered_kernel =
      CategoricalKernel::from_name(s.unordered_kernel, false, "state.unordered_kernel");
  o.kernel.ordered_kernel =
      CategoricalKernel::from_name(s.ordered_kernel, true, "state.ordered_kernel");
  o.ridge = s.ridge;
  o.kernel.algorithm = pair_algorithm_from_name(s.algorithm, "state.algorithm");
  o.kernel.truncation = s.truncation;
  const bool have = !s.fitted.is_empty();
  if (have) {
    check::require(s.fitted.n_rows == s.X.n_rows && s.fitted.n_cols == s.Y.n_cols &&
                       s.leverage.n_elem == s.X.n_rows && s.loo.n_rows == s.X.n_rows &&
                       s.loo_status.n_elem == s.X.n_rows,
                   "state", "inconsistent local fit state (was it saved by this version of attnreg?)");
  }
  o.compute_fitted = false;
  LocalPolynomial m(o);
  m.fit(s.X, s.Y, s.bandwidth, s.sample_weight);
  m.opt_.compute_fitted = true;
  if (have) {
    m.fitted_ = s.fitted;
    m.leverage_ = s.leverage;
    m.loo_ = s.loo;
    m.loo_status_.resize(s.loo_status.n_elem);
    for (std::size_t i = 0; i < s.loo_status.n_elem; ++i)
      m.loo_status_[i] = static_cast<QueryStatus>(static_cast<int>(s.loo_status(i)));
    m.fit_status_.assign(s.X.n_rows, QueryStatus::ok);
    m.have_fitted_ = true;
  } else {
    m.opt_.compute_fitted = false;
  }
  return m;
}

}  // namespace attnreg
