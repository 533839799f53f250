#include "attnreg/least_squares.hpp"

#include <cmath>
#include <limits>
#include <sstream>

#include "attnreg/error.hpp"
#include "attnreg/lapack.hpp"
#include "attnreg/runtime.hpp"

namespace attnreg {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Nearest power of two to the column norm: dividing by it is exact in floating point.
double power_of_two_scale(double norm) {
  if (!(norm > 0.0) || !std::isfinite(norm)) return 1.0;
  return std::ldexp(1.0, static_cast<int>(std::lround(std::log2(norm))));
}
}  // namespace

arma::mat OLS::design(const arma::mat& X, const std::string& arg) const {
  if (!st_.fit_intercept) return X;
  arma::mat D(X.n_rows, X.n_cols + 1);
  D.col(0).ones();
  if (X.n_cols > 0) D.cols(1, X.n_cols) = X;
  (void)arg;
  return D;
}

void OLS::require_fitted(const char* what) const {
  if (!fitted_flag_) {
    throw InvalidArgument(std::string(what) + ": the model is not fitted yet (call fit first)");
  }
}

OLS& OLS::fit(const arma::mat& X, const arma::mat& Y) {
  check::require(X.n_rows >= 1, "X", "needs at least one row");
  check::require(Y.n_cols >= 1, "y", "needs at least one column (one output)");
  check::rows_match(Y, X.n_rows, "y", "X");
  check::require(opt_.rank_tol >= 0.0 && opt_.rank_tol < 1.0, "rank_tol",
                 "must be in [0, 1); the default 1e-7 matches R's lm");
  check::all_finite(X, "X");
  check::all_finite(Y, "y");
  st_ = OLSState{};
  st_.fit_intercept = opt_.fit_intercept;
  st_.rank_tol = opt_.rank_tol;
  check::require(X.n_cols + (opt_.fit_intercept ? 1 : 0) >= 1, "X",
                 "has no columns and fit_intercept is false: nothing to fit");

  const arma::mat D = design(X, "X");
  const arma::uword n = D.n_rows, q = D.n_cols;

  st_.scale.set_size(q);
  for (arma::uword j = 0; j < q; ++j) st_.scale(j) = power_of_two_scale(arma::norm(D.col(j), 2));
  st_.qr = D.each_row() / st_.scale.t();

  std::vector<lapack_int> jpvt(q, 0);
  st_.tau.set_size(std::min(n, q));
  lapack::geqp3(st_.qr, jpvt, st_.tau);
  st_.pivot.set_size(q);
  for (arma::uword k = 0; k < q; ++k) st_.pivot(k) = static_cast<double>(jpvt[k] - 1);

  // Numerical rank from the pivoted diagonal (|R_kk| non-increasing under dgeqp3).
  const arma::uword kmax = std::min(n, q);
  const double r00 = kmax > 0 ? std::abs(st_.qr(0, 0)) : 0.0;
  arma::uword r = 0;
  while (r < kmax && r00 > 0.0 && std::abs(st_.qr(r, r)) > opt_.rank_tol * r00) ++r;
  st_.rank = static_cast<double>(r);

  // Coefficients: R11 b = (Q'Y)_{1:r}, then one refinement step with long-double residuals.
  y_ = Y;
  st_.coef.set_size(q, Y.n_cols);
  st_.coef.fill(kNaN);
  if (r > 0) {
    arma::mat qty = Y;
    apply_q(qty, true);
    arma::mat b = solve_r(qty.rows(0, r - 1));
    const arma::mat Dp = pivoted_rows(D);  // n x r, scaled and pivoted
    arma::mat e(n, Y.n_cols);
    for (arma::uword c = 0; c < Y.n_cols; ++c) {
      for (arma::uword i = 0; i < n; ++i) {
        long double acc = Y(i, c);
        for (arma::uword k = 0; k < r; ++k) acc -= static_cast<long double>(Dp(i, k)) * b(k, c);
        e(i, c) = static_cast<double>(acc);
      }
    }
    apply_q(e, true);
    b += solve_r(e.rows(0, r - 1));
    for (arma::uword k = 0; k < r; ++k) {
      const auto j = static_cast<arma::uword>(st_.pivot(k));
      st_.coef.row(j) = b.row(k) / st_.scale(j);
    }
  }
  fitted_flag_ = true;
  fitted_ = predict(X);
  return *this;
}

OLS OLS::from_state(const OLSState& state, const arma::mat& Y) {
  const arma::uword q = state.qr.n_cols;
  check::require(state.tau.n_elem == std::min<arma::uword>(state.qr.n_rows, q) &&
                     state.pivot.n_elem == q && state.scale.n_elem == q &&
                     state.coef.n_rows == q && state.rank <= q,
                 "state", "inconsistent OLS state (was it produced by this version of attnreg?)");
  check::rows_match(Y, state.qr.n_rows, "y", "the saved model");
  OLS m(OLSOptions{state.fit_intercept, state.rank_tol, 0});
  m.st_ = state;
  m.y_ = Y;
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
  const arma::uword n = st_.qr.n_rows, r = rank();
  const int threads = resolve_threads(opt_.n_threads);
  const long long ncols = static_cast<long long>(B.n_cols);
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(threads) if (ncols > 8 && n * r > 20000)
#endif
  for (long long c = 0; c < ncols; ++c) {
    double* b = B.colptr(static_cast<arma::uword>(c));
    for (arma::uword t = 0; t < r; ++t) {
      const arma::uword k = transpose ? t : r - 1 - t;
      const double* v = st_.qr.colptr(k);  // v(k) = 1 implicit, v(k+1:n) stored
      double dot = b[k];
      for (arma::uword i = k + 1; i < n; ++i) dot += v[i] * b[i];
      const double f = st_.tau(k) * dot;
      b[k] -= f;
      for (arma::uword i = k + 1; i < n; ++i) b[i] -= f * v[i];
    }
  }
  (void)threads;
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

arma::mat OLS::pivoted_rows(const arma::mat& D_new) const {
  const arma::uword r = rank();
  arma::mat M(D_new.n_rows, r);
  for (arma::uword k = 0; k < r; ++k) {
    const auto j = static_cast<arma::uword>(st_.pivot(k));
    M.col(k) = D_new.col(j) / st_.scale(j);
  }
  return M;
}

arma::mat OLS::predict(const arma::mat& X_new) const {
  require_fitted("predict");
  const arma::uword p = n_coef() - (st_.fit_intercept ? 1 : 0);
  if (X_new.n_cols != p) {
    std::ostringstream msg;
    msg << "X: has " << X_new.n_cols << " columns but the model was fitted with " << p
        << " (pass the same columns as in fit)";
    throw InvalidArgument(msg.str());
  }
  check::all_finite(X_new, "X");
  const arma::mat D = design(X_new, "X");
  arma::mat b = st_.coef;
  b.replace(kNaN, 0.0);  // aliased columns contribute nothing
  return D * b;
}

arma::mat OLS::attention_weights(const arma::mat& X_new) const {
  require_fitted("attention_weights");
  const arma::uword p = n_coef() - (st_.fit_intercept ? 1 : 0);
  check::require(X_new.n_cols == p, "X",
                 "has " + std::to_string(X_new.n_cols) + " columns but the model was fitted with " +
                     std::to_string(p));
  check::all_finite(X_new, "X");
  const arma::uword n = n_obs(), r = rank(), m = X_new.n_rows;
  arma::mat B(n, m, arma::fill::zeros);
  if (r > 0) {
    // G = M R11^{-1}  <=>  R11' G' = M'
    const arma::mat M = pivoted_rows(design(X_new, "X"));
    const arma::mat R11 = arma::trimatu(st_.qr.submat(0, 0, r - 1, r - 1));
    arma::mat Gt;
    if (!arma::solve(Gt, arma::trimatl(R11.t()), M.t(), arma::solve_opts::no_approx)) {
      throw NumericalError("attention_weights: triangular solve failed");
    }
    B.rows(0, r - 1) = Gt;
    apply_q(B, false);  // Q_1 G'
  }
  return B.t();
}

arma::mat OLS::unscaled_covariance() const {
  require_fitted("unscaled_covariance");
  const arma::uword q = n_coef(), r = rank();
  arma::mat C(q, q);
  C.fill(kNaN);
  if (r == 0) return C;
  arma::mat Rinv;
  const arma::mat R11 = arma::trimatu(st_.qr.submat(0, 0, r - 1, r - 1));
  if (!arma::solve(Rinv, arma::trimatu(R11), arma::eye(r, r), arma::solve_opts::no_approx)) {
    throw NumericalError("unscaled_covariance: triangular solve failed");
  }
  const arma::mat Cp = Rinv * Rinv.t();
  for (arma::uword a = 0; a < r; ++a) {
    const auto ja = static_cast<arma::uword>(st_.pivot(a));
    for (arma::uword b = 0; b < r; ++b) {
      const auto jb = static_cast<arma::uword>(st_.pivot(b));
      C(ja, jb) = Cp(a, b) / (st_.scale(ja) * st_.scale(jb));
    }
  }
  return C;
}

arma::rowvec OLS::sigma2() const {
  require_fitted("sigma2");
  const double df = static_cast<double>(n_obs()) - st_.rank;
  arma::rowvec s(y_.n_cols);
  const arma::mat e = residuals();
  for (arma::uword c = 0; c < y_.n_cols; ++c) {
    s(c) = df > 0 ? arma::dot(e.col(c), e.col(c)) / df : kNaN;
  }
  return s;
}

arma::mat OLS::std_errors() const {
  const arma::vec d = unscaled_covariance().diag();
  const arma::rowvec s2 = sigma2();
  arma::mat se(d.n_elem, s2.n_elem);
  for (arma::uword c = 0; c < s2.n_elem; ++c) se.col(c) = arma::sqrt(d * s2(c));
  return se;
}

std::vector<bool> OLS::aliased() const {
  std::vector<bool> a(n_coef(), true);
  for (arma::uword k = 0; k < rank(); ++k) a[static_cast<arma::uword>(st_.pivot(k))] = false;
  return a;
}

}  // namespace attnreg
