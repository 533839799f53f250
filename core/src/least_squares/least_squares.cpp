#include "attnreg/least_squares/least_squares.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "attnreg/base/error.hpp"
#include "attnreg/solve/lapack.hpp"
#include "attnreg/base/runtime.hpp"
#include "attnreg/detail/least_squares_internal.hpp"

extern "C" {
void dtrsm_(const char* side, const char* uplo, const char* transa, const char* diag,
            const int* m, const int* n, const double* alpha, const double* a, const int* lda,
            double* b, const int* ldb);
}

namespace attnreg {


namespace {
// Row-block size for the long-double refinement loops: fixed, so sums never depend on threads.
constexpr arma::uword kBlock = 4096;
using ls_detail::kExtendedAlways;
using ls_detail::kExtendedIllCond;
using ls_detail::kIllCondPivot;
// OLSOptions::prepare_q1: Q_1 by a triangular solve only when the smallest pivot is at least
// this fraction of the largest (a cheap pre-filter), and kept only when orthonormal to
// kQ1Orthogonality (the real test; see OLS::prepare_q1).
constexpr double kQ1SolvePivot = 1e-3;
constexpr double kQ1Orthogonality = 1e-10;
}  // namespace

namespace ls_detail {
arma::uword factor_design(const arma::mat& D, const OLSOptions& opt, OLSState& st,
                          double& min_ratio, double& r00) {
  // Column scaling by powers of two, pivoted QR (dgeqp3), numerical rank; rank-deficient
  // designs re-pivot as R's lm. Sets st.qr, tau, pivot, scale; min_ratio = min |R_cc| / r00.
  const arma::uword n = D.n_rows, q = D.n_cols;
  st.scale.set_size(q);
  for (arma::uword j = 0; j < q; ++j) {
    st.scale(j) = ls_detail::power_of_two_scale(arma::norm(D.col(j), 2));
  }
  st.qr = D.each_row() / st.scale.t();

  std::vector<lapack_int> jpvt(q, 0);
  lapack::geqp3(st.qr, jpvt, st.tau);
  st.pivot.set_size(q);
  for (arma::uword c = 0; c < q; ++c) st.pivot(c) = static_cast<double>(jpvt[c] - 1);

  // Numerical rank from the pivoted diagonal (|R_kk| non-increasing under dgeqp3).
  const arma::uword kmax = std::min(n, q);
  r00 = kmax > 0 ? std::abs(st.qr(0, 0)) : 0.0;
  arma::uword r = 0;
  while (r < kmax && r00 > 0.0 && std::abs(st.qr(r, r)) > opt.rank_tol * r00) ++r;
  bool lm_order = false;
  if (r < q && r00 > 0.0) {
    lm_order = true;
    // Rank-deficient: choose the aliased columns as R's lm does (LINPACK dqrdc2's limited
    // pivoting): columns in their order, and a column whose norm after removing the earlier
    // kept columns is below rank_tol times its own norm moves to the end. The intercept and
    // earlier columns are kept; full pivoting could alias the intercept (one row: a slope kept,
    // predictions varying with x, where lm predicts the mean).
    std::vector<arma::uword> order(q);
    for (arma::uword j = 0; j < q; ++j) order[j] = j;
    arma::uword limit = q;  // order[limit..q-1] are aliased
    const arma::mat Ds = D.each_row() / st.scale.t();
    for (;;) {
      arma::mat A(n, q);
      for (arma::uword c = 0; c < q; ++c) A.col(c) = Ds.col(order[c]);
      const arma::vec norms = arma::sqrt(arma::sum(arma::square(A), 0)).t();  // ~1: scaled
      lapack::geqp3(A, jpvt, st.tau, true);
      arma::uword bad = limit;
      for (arma::uword c = 0; c < limit; ++c) {
        if (c >= n || !(std::abs(A(c, c)) >= opt.rank_tol * norms(c)) || norms(c) == 0.0) {
          bad = c;
          break;
        }
      }
      if (bad == limit) {
        st.qr = std::move(A);
        break;
      }
      const arma::uword moved = order[bad];
      order.erase(order.begin() + static_cast<std::ptrdiff_t>(bad));
      order.push_back(moved);
      --limit;
    }
    for (arma::uword c = 0; c < q; ++c) {
      jpvt[c] = static_cast<lapack_int>(order[c] + 1);
      st.pivot(c) = static_cast<double>(order[c]);
    }
    r = limit;
    r00 = 0.0;
    for (arma::uword c = 0; c < r; ++c) r00 = std::max(r00, std::abs(st.qr(c, c)));
  }
  min_ratio = 1.0;
  for (arma::uword c = 0; c < kmax; ++c) {
    min_ratio = std::min(min_ratio, r00 > 0.0 ? std::abs(st.qr(c, c)) / r00 : 0.0);
  }
  if (lm_order) min_ratio = 0.0;  // the pivoted factor was rank-deficient: ill-conditioned
  return r;
}
}  // namespace ls_detail

namespace {
using ls_detail::factor_design;

void refinement_residuals(const arma::mat& D, const arma::mat& Y, const OLSState& st,
                          arma::uword r, const arma::mat& x, const arma::mat& e, int threads,
                          arma::mat& f, arma::mat& g) {
  // One step of iterative refinement of the augmented system [I A; A' 0][e; x] = [y; 0]
  // (Bjorck 1967): f = y - e - A x and g = -A'e in long double; OLS::fit then takes
  // u = R^{-T} g, dx = R^{-1}((Q'f)_1 - u), de = Q [u; (Q'f)_2].
  const arma::uword n = D.n_rows, k = Y.n_cols;
  const long long nblocks = static_cast<long long>((n + kBlock - 1) / kBlock);
  f.set_size(n, k);
  arma::mat gpart(r * k, static_cast<arma::uword>(nblocks), arma::fill::zeros);
  std::vector<double> col_scale(r);
  std::vector<arma::uword> col_index(r);
  for (arma::uword c = 0; c < r; ++c) {
    col_index[c] = static_cast<arma::uword>(st.pivot(c));
    col_scale[c] = st.scale(col_index[c]);
  }
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(threads) if (nblocks > 1)
#endif
  for (long long b = 0; b < nblocks; ++b) {
    const arma::uword i0 = static_cast<arma::uword>(b) * kBlock;
    const arma::uword i1 = std::min(n, i0 + kBlock);
    std::vector<long double> acc(i1 - i0);
    for (arma::uword out = 0; out < k; ++out) {
      for (arma::uword i = i0; i < i1; ++i) {
        acc[i - i0] = static_cast<long double>(Y(i, out)) - e(i, out);
      }
      for (arma::uword c = 0; c < r; ++c) {
        const double* dc = D.colptr(col_index[c]);
        const long double xc = static_cast<long double>(x(c, out)) / col_scale[c];
        long double g = 0.0L;
        for (arma::uword i = i0; i < i1; ++i) {
          acc[i - i0] -= static_cast<long double>(dc[i]) * xc;
          g -= static_cast<long double>(dc[i]) * e(i, out);
        }
        gpart(out * r + c, static_cast<arma::uword>(b)) =
            static_cast<double>(g / col_scale[c]);
      }
      for (arma::uword i = i0; i < i1; ++i) f(i, out) = static_cast<double>(acc[i - i0]);
    }
  }
  (void)threads;
  g.set_size(r, k);
  for (arma::uword out = 0; out < k; ++out) {
    for (arma::uword c = 0; c < r; ++c) {
      long double s = 0.0L;
      for (arma::uword b = 0; b < gpart.n_cols; ++b) s += gpart(out * r + c, b);
      g(c, out) = static_cast<double>(s);
    }
  }
}

}  // namespace

arma::mat OLS::design(const arma::mat& X) const {
  if (!st_.fit_intercept) return X;
  arma::mat D(X.n_rows, X.n_cols + 1);
  D.col(0).ones();
  if (X.n_cols > 0) D.cols(1, X.n_cols) = X;
  return D;
}

void OLS::require_fitted(const char* what) const {
  if (!fitted_flag_) {
    throw InvalidArgument(std::string(what) + ": the model is not fitted yet (call fit first)");
  }
}

void OLS::check_new_x(const arma::mat& X_new, const char* what) const {
  require_fitted(what);
  const arma::uword p = n_coef() - (st_.fit_intercept ? 1 : 0);
  ls_detail::check_new_x_columns(X_new, p);
}

OLS& OLS::fit(const arma::mat& X, const arma::mat& Y) { return fit(X, Y, arma::vec()); }

OLS& OLS::fit(const arma::mat& X, const arma::mat& Yin, const arma::vec& weights) {
  check::require(X.n_rows >= 1, "X", "needs at least one row");
  check::require(Yin.n_cols >= 1, "y", "needs at least one column (one output)");
  check::rows_match(Yin, X.n_rows, "y", "X");
  check::require(opt_.rank_tol >= 0.0 && opt_.rank_tol < 1.0, "rank_tol",
                 "must be in [0, 1); the default 1e-7 matches R's lm");
  check::require(opt_.extended_rank_tol >= 0.0 && opt_.extended_rank_tol < 1.0,
                 "extended_rank_tol", "must be in [0, 1); the default is 1e-11");
  check::all_finite(X, "X");
  check::all_finite(Yin, "y");
  const bool weighted = !weights.is_empty();
  if (weighted) check_weights(weights, X.n_rows, "weights");
  if (weighted && opt_.weight_type == WeightType::Frequency) check_frequency_weights(weights);
  const int threads = resolve_threads(opt_.n_threads);
  check::require(X.n_cols + (opt_.fit_intercept ? 1 : 0) >= 1, "X",
                 "has no columns and fit_intercept is false: nothing to fit");
  fitted_flag_ = false;
  q1_cache_ = std::make_shared<Q1Cache>();
  st_ = OLSState{};
  st_.fit_intercept = opt_.fit_intercept;
  st_.rank_tol = opt_.rank_tol;
  if (weighted) {
    st_.weights = weights;
    st_.frequency_weights = opt_.weight_type == WeightType::Frequency;
  }

  // Weighted least squares is least squares on W^{1/2} D and W^{1/2} Y: everything below
  // factors and refines the transformed problem; finish_fit maps residuals back.
  const arma::mat D0 = design(X);
  arma::vec sw;
  arma::mat Dw, Yw;
  if (weighted) {
    sw = arma::sqrt(weights);
    Dw = D0.each_col() % sw;
    Yw = Yin.each_col() % sw;
  }
  const arma::mat& D = weighted ? Dw : D0;
  const arma::mat& Y = weighted ? Yw : Yin;
  const arma::uword n = D.n_rows, q = D.n_cols, k = Y.n_cols;

  double min_ratio = 1.0, r00 = 0.0;
  const arma::uword r = factor_design(D, opt_, st_, min_ratio, r00);

  const double work = static_cast<double>(n) * q * q;
  bool extended = false;
  switch (opt_.precision) {
    case Precision::Extended: extended = true; break;
    case Precision::Double: extended = false; break;
    case Precision::Auto:
      extended = work <= kExtendedAlways || (min_ratio < kIllCondPivot && work <= kExtendedIllCond);
      break;
  }
  if (r00 == 0.0) extended = false;  // all-zero design: nothing to refine

  y_ = Yin;
  st_.coef.set_size(q, k);
  st_.coef.fill(kNaN);
  if (extended) {
    // Same pivot order, refactored in double-double (least_squares_extended.cpp).
    arma::mat A(n, q);
    for (arma::uword c = 0; c < q; ++c) {
      const auto j = static_cast<arma::uword>(st_.pivot(c));
      A.col(c) = D.col(j) / st_.scale(j);
    }
    const ls_detail::ExtendedLS ext =
        ls_detail::extended_least_squares(A, Y, opt_.extended_rank_tol, opt_.n_threads);
    st_.rank = static_cast<double>(ext.rank);
    st_.extended = true;
    for (arma::uword c = 0; c < ext.rank; ++c) {
      const auto j = static_cast<arma::uword>(st_.pivot(c));
      st_.coef.row(j) = ext.coef.row(c) / st_.scale(j);
    }
    st_.cov_unscaled = unpivot_cov(ext.cov);
    finish_fit(D0, Y, ext.resid);
    return *this;
  }

  st_.rank = static_cast<double>(r);
  if (r == 0) {
    st_.cov_unscaled = unpivot_cov(arma::mat());
    finish_fit(D0, Y, Y);
    return *this;
  }
  // x = R^{-1} (Q'y)_{1:r}; residual e = Q [0; (Q'y)_{r+1:n}].
  arma::mat h = Y;
  apply_q(h, true);
  arma::mat x = solve_r(h.rows(0, r - 1));
  h.rows(0, r - 1).zeros();
  arma::mat e = h;
  apply_q(e, false);
  // One step of iterative refinement (Bjorck 1967; see refinement_residuals).
  {
    arma::mat f, g;
    refinement_residuals(D, Y, st_, r, x, e, threads, f, g);
    apply_q(f, true);
    const arma::mat u = solve_rt(g);
    x += solve_r(f.rows(0, r - 1) - u);
    f.rows(0, r - 1) = u;
    apply_q(f, false);
    e += f;
  }
  for (arma::uword c = 0; c < r; ++c) {
    const auto j = static_cast<arma::uword>(st_.pivot(c));
    st_.coef.row(j) = x.row(c) / st_.scale(j);
  }
  st_.cov_unscaled = cov_from_r();
  if (opt_.prepare_q1 && min_ratio >= kQ1SolvePivot) prepare_q1(D);
  finish_fit(D0, Y, e);
  return *this;
}

void OLS::prepare_q1(const arma::mat& D) {
  // Q_1 = (D P S^{-1})_{1:r} R_11^{-1} by one BLAS-3 triangular solve, about 5x cheaper than
  // dorgqr at n >> r. Its error is about eps cond(R_11) (dorgqr's is eps), so it is kept only
  // when Q_1'Q_1 = I to kQ1Orthogonality, which bounds cond(R_11) by about
  // sqrt(kQ1Orthogonality / eps) (~700) and the error of Q_1 by about 1e-13; otherwise q1()
  // forms it by dorgqr when first needed.
  const arma::uword n = D.n_rows, r = rank();
  arma::mat A(n, r);
  for (arma::uword c = 0; c < r; ++c) {
    const auto j = static_cast<arma::uword>(st_.pivot(c));
    A.col(c) = D.col(j) / st_.scale(j);
  }
  const int m = static_cast<int>(n), nr = static_cast<int>(r), lda = static_cast<int>(st_.qr.n_rows);
  const double one = 1.0;
  const char side = 'R', uplo = 'U', trans = 'N', diag = 'N';
  dtrsm_(&side, &uplo, &trans, &diag, &m, &nr, &one, st_.qr.memptr(), &lda, A.memptr(), &m);
  arma::mat G = A.t() * A;
  G.diag() -= 1.0;
  if (!G.is_finite() || arma::abs(G).max() > kQ1Orthogonality) return;
  std::lock_guard<std::mutex> lock(q1_cache_->mutex);
  q1_cache_->q = std::move(A);
  q1_cache_->ready = true;
}

void OLS::finish_fit(const arma::mat& D0, const arma::mat& Yf, const arma::mat& e) {
  if (st_.weights.is_empty()) {
    fitted_ = Yf - e;
    fitted_flag_ = true;
    return;
  }
  // e is the residual of the transformed problem, W^{1/2} (y - D b): rows of positive weight
  // divide it back (keeping the refined residual); rows of weight 0 carry no information in
  // the factor and get d_i' b, accumulated in long double.
  const arma::uword n = y_.n_rows, k = y_.n_cols, q = D0.n_cols;
  fitted_.set_size(n, k);
  for (arma::uword c = 0; c < k; ++c) {
    for (arma::uword i = 0; i < n; ++i) {
      const double w = st_.weights(i);
      if (w > 0.0) {
        fitted_(i, c) = y_(i, c) - e(i, c) / std::sqrt(w);
      } else {
        long double acc = 0.0L;
        for (arma::uword j = 0; j < q; ++j) {
          if (std::isfinite(st_.coef(j, c))) acc += static_cast<long double>(D0(i, j)) * st_.coef(j, c);
        }
        fitted_(i, c) = static_cast<double>(acc);
      }
    }
  }
  st_.fitted = fitted_;
  fitted_flag_ = true;
}

OLS OLS::from_state(const OLSState& state, const arma::mat& Y) {
  const arma::uword q = state.qr.n_cols;
  check::require(state.tau.n_elem == std::min<arma::uword>(state.qr.n_rows, q) &&
                     state.pivot.n_elem == q && state.scale.n_elem == q &&
                     state.coef.n_rows == q && state.rank <= q &&
                     (state.cov_unscaled.is_empty() ||
                      (state.cov_unscaled.n_rows == q && state.cov_unscaled.n_cols == q)),
                 "state", "inconsistent OLS state (was it produced by this version of attnreg?)");
  check::rows_match(Y, state.qr.n_rows, "y", "the saved model");
  check::require(state.weights.is_empty() ||
                     (state.weights.n_elem == state.qr.n_rows &&
                      state.fitted.n_rows == state.qr.n_rows && state.fitted.n_cols == Y.n_cols),
                 "state", "inconsistent weighted OLS state (weights or fitted values missing)");
  check::require(Y.n_cols == state.coef.n_cols, "y", "has a different number of outputs than the saved model");
  OLSOptions o;
  o.fit_intercept = state.fit_intercept;
  o.rank_tol = state.rank_tol;
  o.weight_type = state.frequency_weights ? WeightType::Frequency : WeightType::Analytic;
  OLS m(o);
  m.q1_cache_ = std::make_shared<Q1Cache>();
  m.st_ = state;
  m.y_ = Y;
  if (m.st_.cov_unscaled.is_empty()) m.st_.cov_unscaled = m.cov_from_r();
  if (!state.weights.is_empty()) {
    m.fitted_ = state.fitted;
    m.fitted_flag_ = true;
    return m;
  }
  // Fitted values are the projection Q_1 Q_1' Y: no training X needed.
  const arma::uword r = m.rank();
  arma::mat f = Y;
  m.apply_q(f, true);
  if (r < f.n_rows) f.rows(r, f.n_rows - 1).zeros();
  m.apply_q(f, false);
  m.fitted_ = f;
  m.fitted_flag_ = true;
  return m;
}

void OLS::apply_q(arma::mat& B, bool transpose) const {
  lapack::ormqr(st_.qr, st_.tau, rank(), B, transpose);
}

const arma::mat& OLS::q1() const {
  std::lock_guard<std::mutex> lock(q1_cache_->mutex);
  if (!q1_cache_->ready) {
    q1_cache_->q = lapack::orgqr(st_.qr, st_.tau, rank());
    q1_cache_->ready = true;
  }
  return q1_cache_->q;
}

arma::mat OLS::solve_r(const arma::mat& rhs) const {
  const arma::uword r = rank();
  const arma::mat R11 = arma::trimatu(st_.qr.submat(0, 0, r - 1, r - 1));
  arma::mat z;
  if (!arma::solve(z, arma::trimatu(R11), rhs, arma::solve_opts::no_approx)) {
    throw NumericalError("OLS: triangular solve failed (design numerically singular)");
  }
  return z;
}

arma::mat OLS::solve_rt(const arma::mat& rhs) const {
  const arma::uword r = rank();
  const arma::mat R11t = arma::trimatu(st_.qr.submat(0, 0, r - 1, r - 1)).t();
  arma::mat z;
  if (!arma::solve(z, arma::trimatl(R11t), rhs, arma::solve_opts::no_approx)) {
    throw NumericalError("OLS: triangular solve failed (design numerically singular)");
  }
  return z;
}

arma::mat OLS::pivoted_rows(const arma::mat& D_new) const {
  const arma::uword r = rank();
  arma::mat M(D_new.n_rows, r);
  for (arma::uword c = 0; c < r; ++c) {
    const auto j = static_cast<arma::uword>(st_.pivot(c));
    M.col(c) = D_new.col(j) / st_.scale(j);
  }
  return M;
}

arma::mat OLS::unpivot_cov(const arma::mat& Cp) const {
  const arma::uword q = st_.qr.n_cols;
  arma::mat C(q, q);
  C.fill(kNaN);
  for (arma::uword a = 0; a < Cp.n_rows; ++a) {
    const auto ja = static_cast<arma::uword>(st_.pivot(a));
    for (arma::uword b = 0; b < Cp.n_cols; ++b) {
      const auto jb = static_cast<arma::uword>(st_.pivot(b));
      C(ja, jb) = Cp(a, b) / (st_.scale(ja) * st_.scale(jb));
    }
  }
  return C;
}

arma::mat OLS::cov_from_r() const {
  const arma::uword r = rank();
  if (r == 0) return unpivot_cov(arma::mat());
  const arma::mat Rinv = solve_r(arma::eye(r, r));
  return unpivot_cov(Rinv * Rinv.t());
}

arma::mat OLS::predict(const arma::mat& X_new) const {
  check_new_x(X_new, "predict");
  const arma::mat D = design(X_new);
  arma::mat b = st_.coef;
  b.replace(kNaN, 0.0);  // aliased columns contribute nothing
  return D * b;
}

const arma::mat& OLS::unscaled_covariance() const {
  require_fitted("unscaled_covariance");
  return st_.cov_unscaled;
}

double OLS::n_effective() const {
  require_fitted("n_effective");
  if (st_.weights.is_empty()) return static_cast<double>(n_obs());
  if (st_.frequency_weights) {
    long double s = 0.0L;
    for (arma::uword i = 0; i < st_.weights.n_elem; ++i) s += st_.weights(i);
    return static_cast<double>(s);
  }
  return static_cast<double>(arma::accu(st_.weights > 0.0));
}

double OLS::df_residual() const { return n_effective() - st_.rank; }

arma::rowvec OLS::sigma2() const {
  require_fitted("sigma2");
  const double df = df_residual();
  arma::rowvec s(y_.n_cols);
  const arma::mat e = residuals();
  const bool weighted = !st_.weights.is_empty();
  for (arma::uword c = 0; c < y_.n_cols; ++c) {
    long double acc = 0.0L;
    for (arma::uword i = 0; i < e.n_rows; ++i) {
      const long double sq = static_cast<long double>(e(i, c)) * e(i, c);
      acc += weighted ? sq * st_.weights(i) : sq;
    }
    s(c) = df > 0 ? static_cast<double>(acc / df) : kNaN;
  }
  return s;
}

arma::mat OLS::std_errors() const { return std_errors(CovOptions{}); }

arma::vec OLS::hat_diagonal() const {
  require_fitted("hat_diagonal");
  if (rank() == 0) return arma::zeros(n_obs());
  const arma::mat& Q1 = q1();
  return arma::sum(arma::square(Q1), 1);
}

arma::mat OLS::loo_predictions() const {
  require_fitted("loo_predictions");
  const arma::vec h = hat_diagonal();
  return ls_detail::loo_from_leverages(y_, residuals(), h);
}

std::vector<bool> OLS::aliased() const {
  std::vector<bool> a(n_coef(), true);
  for (arma::uword c = 0; c < rank(); ++c) a[static_cast<arma::uword>(st_.pivot(c))] = false;
  return a;
}

}  // namespace attnreg
