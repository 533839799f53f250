#include "attnreg/semiparametric/semiparametric.hpp"
#include "attnreg/base/constants.hpp"
#include "attnreg/detail/pow2_scale.hpp"

#include <cmath>
#include <limits>
#include <sstream>

#include "attnreg/base/error.hpp"
#include "attnreg/kernels/kernel_pairs.hpp"
#include "attnreg/solve/local_polynomial.hpp"
#include "attnreg/solve/local_solve.hpp"
#include "attnreg/bandwidth/criteria.hpp"
#include "attnreg/base/runtime.hpp"

namespace attnreg {

namespace {


void check_xyz(const arma::mat& X, const arma::vec& y, const arma::mat& Z) {
  check::require(X.n_cols >= 1, "X", "needs at least one column");
  check::require(Z.n_cols >= 1, "Z", "needs at least one column");
  check::require(X.n_rows >= 1, "X", "needs at least one row");
  check::rows_match(arma::mat(y), X.n_rows, "y", "X");
  check::rows_match(Z, X.n_rows, "Z", "X");
  check::all_finite(X, "X");
  check::all_finite(y, "y");
  check::all_finite(Z, "Z");
}

/// Responses of the degree-0 moment fit of the smooth-coefficient model: W_a W_b (a <= b), then
/// W_a y, one row per observation (original order).
arma::mat product_responses(const arma::mat& W, const arma::vec& y) {
  const std::size_t n = W.n_rows, q = W.n_cols;
  arma::mat P(n, q * (q + 1) / 2 + q);
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t c = 0;
    for (std::size_t a = 0; a < q; ++a)
      for (std::size_t b = a; b < q; ++b) P(i, c++) = W(i, a) * W(i, b);
    for (std::size_t a = 0; a < q; ++a) P(i, c++) = W(i, a) * y(i);
  }
  return P;
}

QueryStatus weight_status_of(double row_max) {
  if (!(row_max > 0.0)) return QueryStatus::no_weight;
  if (row_max < KernelSpace::kTinyWeight) return QueryStatus::underflow;
  return QueryStatus::ok;
}

/// The kernel space over the distinct rows of Z (tie grouping, distinct_rows.hpp): group g
/// enters as one row with observation weight c_g (its count) and response S_g / c_g, S_g the sum
/// of its rows' product responses, which gives the same kernel sums at every query.
struct GroupedZ {
  DistinctRows groups;
  KernelSpace space;
  arma::mat sums;           ///< G x r: S_g
  arma::mat resp_internal;  ///< G x r: S_g / c_g in the space's internal order
};

GroupedZ group_z(const arma::mat& Z, const arma::vec& bandwidth, const KernelSpec& ks,
                 const arma::mat& P) {
  GroupedZ gz;
  gz.groups = distinct_rows(Z);
  const std::size_t G = gz.groups.X.n_rows, r = P.n_cols;
  gz.space = KernelSpace(gz.groups.X, bandwidth, ks,
                         gz.groups.has_ties() ? gz.groups.count : arma::vec());
  gz.sums.zeros(G, r);
  for (std::size_t i = 0; i < P.n_rows; ++i) gz.sums.row(gz.groups.group_of[i]) += P.row(i);
  gz.resp_internal.set_size(G, r);
  const auto& order = gz.space.order();
  for (std::size_t k = 0; k < G; ++k)
    gz.resp_internal.row(k) = gz.sums.row(order[k]) / gz.groups.count(order[k]);
  return gz;
}

/// Kernel sums of the product responses at each training row, with (full) and without (loo)
/// the row itself: one pass over the pairs of distinct rows (the raw moments without the own
/// group), then the group's other rows added back as in LocalPolynomial's grouped statistics.
/// Rows: observations in original order. Sums are in the space's weight units (any common
/// factor cancels from beta).
void training_sums(const GroupedZ& gz, const arma::mat& P, bool want_full, int n_threads,
                   arma::mat& full, std::vector<QueryStatus>& st, arma::mat& loo,
                   std::vector<QueryStatus>& lst) {
  const KernelSpace& gs = gz.space;
  const std::size_t G = gs.n(), n = P.n_rows, r = P.n_cols;
  LocalEvalRequest req;
  req.fit = false;
  req.moments = true;
  const LocalEvalResult res = local_polynomial_eval(gs, gz.resp_internal, LocalPolySpec{0, 0.0},
                                                    gs.training_queries(), req, n_threads);
  std::vector<double> unit(G);
  for (std::size_t g = 0; g < G; ++g)
    unit[g] = gs.self_weight(gs.position()[g]) / gz.groups.count(g);
  if (want_full) {
    full.set_size(n, r);
    st.assign(n, QueryStatus::ok);
  }
  loo.set_size(n, r);
  lst.assign(n, QueryStatus::ok);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t g = gz.groups.group_of[i];
    const double c = gz.groups.count(g), u = unit[g];
    const double others = u * (c - 1.0);  // exact 0 when the row is alone in its group
    for (std::size_t o = 0; o < r; ++o) {
      const double base = res.moment_T(o, g);
      loo(i, o) = base + u * (gz.sums(g, o) - P(i, o));
      if (want_full) full(i, o) = base + u * gz.sums(g, o);
    }
    lst[i] = weight_status_of(std::max(res.moment_max(g), others));
    if (want_full) st[i] = weight_status_of(std::max(res.moment_max(g), u * c));
  }
}

/// beta per row of M (the weighted means of product_responses): m x q; status singular where
/// M_WW is not positive definite (statuses that are not ok on entry stay).
arma::mat solve_coefficients(const arma::mat& M, std::size_t q, std::vector<QueryStatus>& status) {
  const std::size_t m = M.n_rows;
  arma::mat B(m, q);
  std::vector<double> A(q * q), R(q), L(q * q), s(q);
  for (std::size_t r = 0; r < m; ++r) {
    if (status[r] != QueryStatus::ok) {
      B.row(r).fill(kNaN);
      continue;
    }
    std::size_t c = 0;
    for (std::size_t a = 0; a < q; ++a)
      for (std::size_t b = a; b < q; ++b) {
        A[a * q + b] = M(r, c);
        A[b * q + a] = M(r, c);
        ++c;
      }
    for (std::size_t a = 0; a < q; ++a) R[a] = M(r, c++);
    if (local_solve::spd_solve(A.data(), q, R.data(), 1, L.data(), s.data()) !=
        local_solve::SolveStatus::ok) {
      status[r] = QueryStatus::singular;
      B.row(r).fill(kNaN);
      continue;
    }
    for (std::size_t a = 0; a < q; ++a) B(r, a) = R[a];
  }
  return B;
}

void throw_scoef_failure(const std::vector<QueryStatus>& status, const KernelSpace& space,
                         const std::string& arg, bool loo) {
  for (std::size_t i = 0; i < status.size(); ++i) {
    if (status[i] == QueryStatus::ok) continue;
    if (status[i] != QueryStatus::singular) {
      throw_on_failed_query(status, space, 0, 0.0, arg, loo);
    }
    std::size_t count = 0;
    for (QueryStatus st : status) count += st != QueryStatus::ok;
    std::ostringstream m;
    if (loo)
      m << "leave-one-out fit at training row " << (i + 1);
    else
      m << arg << " row " << (i + 1);
    m << ": the kernel-weighted design sum_i K(Z_i, z) W_i W_i' is singular (too few distinct "
      << "rows of X carry weight near this z"
      << (loo ? " once the row itself is left out" : "")
      << ", or a column of X is constant among them); increase the bandwidth of Z or drop "
      << "the column";
    if (count > 1) m << " [" << count << " of " << status.size() << " rows fail]";
    throw NumericalError(m.str());
  }
}

}  // namespace

// ---------------------------------------------------------------- PartiallyLinear

void PartiallyLinear::require_fitted(const char* what) const {
  if (!fitted_flag_)
    throw InvalidArgument(std::string(what) + ": the model is not fitted yet (call fit first)");
}

PartiallyLinear& PartiallyLinear::fit(const arma::mat& X, const arma::vec& y, const arma::mat& Z,
                                      const arma::mat& bandwidth) {
  fitted_flag_ = false;
  check::require(opt_.degree == 0 || opt_.degree == 1, "degree",
                 "the conditional means are local constant (0) or local linear (1)");
  check_xyz(X, y, Z);
  const std::size_t n = X.n_rows, k = X.n_cols, dz = Z.n_cols;
  const std::vector<VarType> types = parse_var_types(opt_.kernel.var_types, dz, "var_types");
  for (std::size_t j = 0; j < k; ++j) {
    if (arma::all(X.col(j) == X(0, j)))
      throw InvalidArgument("X: column " + std::to_string(j + 1) +
                            " is constant; the intercept of a partially linear model is part of "
                            "g(Z) and is not identified (drop the column)");
    for (std::size_t l = 0; l < dz; ++l)
      if (arma::all(X.col(j) == Z.col(l)))
        throw InvalidArgument("Z: column " + std::to_string(l + 1) + " of Z equals column " +
                              std::to_string(j + 1) +
                              " of X; a regressor is either linear (X) or nonparametric (Z), "
                              "not both (drop it from one of them)");
  }
  check::require(n > k + dz, "X",
                 "needs more rows than columns of X and Z together (got n = " +
                     std::to_string(n) + ")");
  if (bandwidth.is_empty()) {
    bw_.set_size(1 + k, dz);
    objective_.set_size(1 + k);
    selection_.clear();
    BandwidthSelectOptions so;
    so.degree = opt_.degree;
    so.method = opt_.method;
    so.kernel = opt_.kernel;
    so.n_starts = opt_.n_starts;
    for (std::size_t r = 0; r <= k; ++r) {
      const arma::vec col = r == 0 ? y : arma::vec(X.col(r - 1));
      BandwidthSelectResult res = select_bandwidth(Z, col, so);
      bw_.row(r) = res.bandwidth.t();
      objective_(r) = res.objective;
      selection_.push_back(std::move(res));
    }
  } else {
    check::require(bandwidth.n_rows == 1 + k && bandwidth.n_cols == dz, "bandwidth",
                   "needs one row per conditional mean (E[y|Z], then E[X_j|Z] for each column "
                   "of X: " + std::to_string(1 + k) + " rows) and one column per column of Z (" +
                       std::to_string(dz) + ")");
    bw_ = bandwidth;
    objective_.set_size(1 + k);
    objective_.fill(kNaN);
    selection_.clear();
  }
  LocalFitOptions fo;
  fo.degree = opt_.degree;
  fo.kernel = opt_.kernel;
  fo.compute_fitted = true;
  means_.clear();
  ex_.set_size(n, k);
  for (std::size_t r = 0; r <= k; ++r) {
    LocalPolynomial m(fo);
    const arma::vec col = r == 0 ? y : arma::vec(X.col(r - 1));
    m.fit(Z, arma::mat(col), bw_.row(r).t());
    if (r == 0) {
      ey_ = y - m.fitted().col(0);
    } else {
      ex_.col(r - 1) = col - m.fitted().col(0);
      const double scale = arma::norm(col - arma::mean(col));
      if (!(arma::norm(ex_.col(r - 1)) > 1e-8 * scale))
        throw InvalidArgument("X: column " + std::to_string(r) +
                              " is (numerically) a function of Z: its residual X_j - E[X_j|Z] "
                              "vanishes, so beta_j is not identified (drop the column)");
    }
    means_.push_back(std::move(m));
  }
  ols_ = OLS(OLSOptions{false});
  ols_.fit(ex_, arma::mat(ey_));
  if (ols_.rank() < k)
    throw InvalidArgument("X: the residuals X - E[X|Z] of the columns of X are collinear (rank " +
                          std::to_string(ols_.rank()) + " < " + std::to_string(k) +
                          "), so beta is not identified; drop redundant columns");
  beta_ = ols_.coefficients().col(0);
  fitted_ = y - (ey_ - ex_ * beta_);
  X_ = X;
  Z_ = Z;
  y_ = y;
  fitted_flag_ = true;
  return *this;
}

double PartiallyLinear::sigma2() const {
  require_fitted("sigma2");
  const double rss = arma::accu(arma::square(y_ - fitted_));
  const double df = static_cast<double>(y_.n_elem) - static_cast<double>(X_.n_cols + Z_.n_cols);
  return rss / df;
}

double PartiallyLinear::r_squared() const {
  require_fitted("r_squared");
  // R np's R^2 (its RSQfunc, reported by npplreg): the squared correlation of y and the fit,
  // both centred at the mean of y. Not 1 - RSS/TSS: the fit is not a projection of y.
  const double ybar = arma::mean(y_);
  const arma::vec dy = y_ - ybar, df = fitted_ - ybar;
  const double syy = arma::dot(dy, dy), sff = arma::dot(df, df), syf = arma::dot(dy, df);
  return syy > 0 && sff > 0 ? (syf / syy) * (syf / sff) : kNaN;
}

arma::mat PartiallyLinear::covariance(CovType type) const {
  require_fitted("covariance");
  if (type == CovType::Classical) return sigma2() * ols_.unscaled_covariance();
  check::require(type != CovType::HAC, "cov_type",
                 "HAC is for time series; use nonrobust or HC0..HC3");
  CovOptions co;
  co.type = type;
  return ols_.covariance(co);
}

arma::vec PartiallyLinear::predict(const arma::mat& X_new, const arma::mat& Z_new) const {
  require_fitted("predict");
  check::require(X_new.n_cols == X_.n_cols, "X", "has " + std::to_string(X_new.n_cols) +
                     " columns, the model was fitted with " + std::to_string(X_.n_cols));
  check::rows_match(Z_new, X_new.n_rows, "Z", "X");
  check::all_finite(X_new, "X");
  arma::vec out = means_[0].predict(Z_new).col(0);
  for (std::size_t j = 0; j < X_.n_cols; ++j)
    out += (X_new.col(j) - means_[1 + j].predict(Z_new).col(0)) * beta_(j);
  return out;
}

arma::vec PartiallyLinear::g(const arma::mat& Z_new) const {
  require_fitted("g");
  arma::vec out = means_[0].predict(Z_new).col(0);
  for (std::size_t j = 0; j < X_.n_cols; ++j) out -= means_[1 + j].predict(Z_new).col(0) * beta_(j);
  return out;
}

// ---------------------------------------------------------------- SmoothCoefficient

void SmoothCoefficient::require_fitted(const char* what) const {
  if (!fitted_flag_)
    throw InvalidArgument(std::string(what) + ": the model is not fitted yet (call fit first)");
}

arma::mat SmoothCoefficient::design(const arma::mat& X, const char* arg) const {
  check::require(X.n_cols == p_, arg, "has " + std::to_string(X.n_cols) +
                     " columns, the model was fitted with " + std::to_string(p_));
  check::all_finite(X, arg);
  if (!opt_.fit_intercept) return X;
  return arma::join_rows(arma::ones(X.n_rows), X);
}

SmoothCoefficient& SmoothCoefficient::fit(const arma::mat& X, const arma::vec& y,
                                          const arma::mat& Z, const arma::vec& bandwidth) {
  fitted_flag_ = false;
  check_xyz(X, y, Z);
  p_ = X.n_cols;
  W_ = design(X, "X");
  q_ = W_.n_cols;
  check::require(X.n_rows > q_, "X",
                 "needs more rows than coefficients (" + std::to_string(q_) + "), got " +
                     std::to_string(X.n_rows));
  space_ = KernelSpace(Z, bandwidth, opt_.kernel);  // validates Z and the bandwidths, names them
  y_ = y;
  const arma::mat P = product_responses(W_, y);
  GroupedZ gz = group_z(Z, bandwidth, opt_.kernel, P);
  arma::mat full, loo;
  std::vector<QueryStatus> st_rows, lst;
  training_sums(gz, P, true, opt_.kernel.n_threads, full, st_rows, loo, lst);
  const arma::mat B = solve_coefficients(full, q_, st_rows);
  const arma::mat Bl = solve_coefficients(loo, q_, lst);
  fitted_ = arma::sum(W_ % B, 1);
  loo_ = arma::sum(W_ % Bl, 1);
  loo_status_ = lst;
  gspace_ = std::move(gz.space);
  gresp_internal_ = std::move(gz.resp_internal);
  throw_scoef_failure(st_rows, space_, "Z (fitted values at the training rows)", false);
  fitted_flag_ = true;
  return *this;
}

arma::mat SmoothCoefficient::coefficients(const arma::mat& Z_new) const {
  require_fitted("coefficients");
  const PreparedQueries Q = gspace_.prepare(Z_new, "Z");
  LocalEvalRequest req;
  const LocalEvalResult r = local_polynomial_eval(gspace_, gresp_internal_, LocalPolySpec{0, 0.0},
                                                  Q, req, opt_.kernel.n_threads);
  std::vector<QueryStatus> st = r.status;
  const arma::mat B = solve_coefficients(r.fit, q_, st);
  throw_scoef_failure(st, space_, "Z", false);
  return B;
}

arma::mat SmoothCoefficient::coefficient_se(const arma::mat& Z_new) const {
  require_fitted("coefficient_se");
  coefficients(Z_new);  // validates Z_new and throws where beta(z) does not exist
  const PreparedQueries Q = space_.prepare(Z_new, "Z");
  const std::size_t n = y_.n_elem, m = Z_new.n_rows;
  const std::vector<std::size_t>& order = space_.order();
  // W and the squared residuals in the space's internal order.
  arma::mat Wi(n, q_);
  arma::vec e2(n);
  for (std::size_t k = 0; k < n; ++k) {
    Wi.row(k) = W_.row(order[k]);
    const double e = y_(order[k]) - fitted_(order[k]);
    e2(k) = e * e;
  }
  arma::mat out(m, q_);
  std::vector<double> w(n);
  InterruptGuard guard;
  for (std::size_t j = 0; j < m; ++j) {
    if (guard.poll()) throw Interrupted();
    const double wmax = space_.weights(Q, j, 0, n, w.data());
    arma::mat M(q_, q_, arma::fill::zeros), S(q_, q_, arma::fill::zeros);
    for (std::size_t k = 0; k < n; ++k) {
      const double a = w[k] / wmax;  // the common scale cancels in the sandwich
      if (a == 0) continue;
      const arma::rowvec r = Wi.row(k);
      M += a * (r.t() * r);
      S += (a * a * e2(k)) * (r.t() * r);
    }
    // Equilibrate, then two solves with the SPD M (no explicit inverse).
    const arma::vec d = 1.0 / arma::sqrt(M.diag());
    const arma::mat Ms = M % (d * d.t()), Ss = S % (d * d.t());
    arma::mat A, C;
    if (!arma::solve(A, Ms, Ss, arma::solve_opts::no_approx) ||
        !arma::solve(C, Ms, arma::mat(A.t()), arma::solve_opts::no_approx))
      throw NumericalError("Z: the local design M_WW(z) is singular at row " +
                           std::to_string(j + 1) + "; use a larger bandwidth");
    out.row(j) = arma::sqrt(arma::clamp(C.diag(), 0.0, arma::datum::inf)).t() % d.t();
  }
  return out;
}

arma::vec SmoothCoefficient::predict(const arma::mat& X_new, const arma::mat& Z_new) const {
  require_fitted("predict");
  const arma::mat W = design(X_new, "X");
  check::rows_match(Z_new, X_new.n_rows, "Z", "X");
  const arma::mat B = coefficients(Z_new);
  return arma::sum(W % B, 1);
}

arma::vec SmoothCoefficient::loo_fitted() const {
  require_fitted("loo_fitted");
  throw_scoef_failure(loo_status_, space_, "Z", true);
  return loo_;
}

double SmoothCoefficient::cv_score() const {
  require_fitted("cv_score");
  for (QueryStatus s : loo_status_)
    if (s != QueryStatus::ok) return kInf;
  return criteria::loo_mean_square(y_, loo_, arma::vec());  // criteria.hpp
}

double smooth_coefficient_cv(const arma::mat& X, const arma::vec& y, const arma::mat& Z,
                             const arma::vec& bandwidth, const SmoothCoefficientOptions& opt) {
  check_xyz(X, y, Z);
  const arma::mat W = opt.fit_intercept ? arma::mat(arma::join_rows(arma::ones(X.n_rows), X)) : X;
  const std::size_t q = W.n_cols, n = X.n_rows;
  const arma::mat P = product_responses(W, y);
  const GroupedZ gz = group_z(Z, bandwidth, opt.kernel, P);
  arma::mat full, loo;
  std::vector<QueryStatus> st, lst;
  training_sums(gz, P, false, opt.kernel.n_threads, full, st, loo, lst);
  const arma::mat Bl = solve_coefficients(loo, q, lst);
  double ss = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    if (lst[i] != QueryStatus::ok) return kInf;
    const double e = y(i) - arma::dot(W.row(i), Bl.row(i));
    ss += e * e;
  }
  return criteria::cv_ls(ss, static_cast<double>(n));
}

BandwidthSelectResult select_smooth_coefficient_bandwidth(const arma::mat& X, const arma::vec& y,
                                                          const arma::mat& Z,
                                                          const SmoothCoefficientOptions& opt,
                                                          int n_starts, int grid_size) {
  check_xyz(X, y, Z);
  BandwidthSelectOptions so;
  so.degree = 0;
  so.method = BandwidthMethod::cv_ls;
  so.kernel = opt.kernel;
  so.n_starts = n_starts;
  so.grid_size = grid_size;
  // The box of bandwidth_select.hpp over Z; its guard asks for as many distinct neighbours as
  // the model has coefficients.
  so.min_neighbors = static_cast<int>(X.n_cols + (opt.fit_intercept ? 1 : 0));
  // An extreme response (|y| beyond 2^+-200) is searched at order one (pow2_scale.hpp): the
  // coefficients scale with y, the cross-validated residuals with them.
  return detail::select_on_scaled_response<BandwidthSelectResult>(
      y, false, [&](const arma::vec& ys) {
        const BandwidthObjective box(Z, ys, so);
        BandwidthCriterion crit = [&](const arma::vec& bw) {
          return smooth_coefficient_cv(X, ys, Z, bw, opt);
        };
        return search_bandwidth(crit, Z, box.var_types(), box.lower(), box.upper(), so);
      });
}

}  // namespace attnreg
