// Instrumental-variables regression: see attnreg/least_squares/iv.hpp for the model, the
// formulas and their sources.
#include "attnreg/least_squares/iv.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "attnreg/base/constants.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/detail/least_squares_fe_internal.hpp"

namespace attnreg {

namespace {

// Append v to the orthonormal basis Q (n x c) by Gram-Schmidt with one reorthogonalisation
// ("twice is enough", Giraud, Langou and Rozloznik 2005); returns the norm of the part of v
// orthogonal to Q (before normalisation), leaving Q unchanged when it is 0.
double iv_append_orthonormal(arma::mat& Q, const arma::vec& v) {
  arma::vec u = v;
  if (Q.n_cols > 0) {
    u -= Q * (Q.t() * u);
    u -= Q * (Q.t() * u);
  }
  const double r = arma::norm(u);
  if (r > 0) Q = arma::join_rows(Q, u / r);
  return r;
}

}  // namespace

namespace iv_detail {

// Smallest eigenvalue of A^{-1} B for symmetric B and positive definite A (Cholesky of A).
double iv_min_generalized_eig(const arma::mat& A, const arma::mat& B) {
  arma::mat R;
  if (!arma::chol(R, arma::symmatu(A))) return kNaN;
  const arma::mat Ri = arma::inv(arma::trimatu(R));
  const arma::vec ev = arma::eig_sym(arma::symmatu(Ri.t() * B * Ri));
  return ev.min();
}

}  // namespace iv_detail

using iv_detail::iv_min_generalized_eig;

void IVRegression::require_fitted(const char* what) const {
  if (!fitted_flag_) {
    throw InvalidArgument(std::string(what) + ": the model is not fitted yet (call fit first)");
  }
}

IVRegression& IVRegression::fit(const arma::mat& X1, const arma::mat& X2, const arma::mat& Z2,
                                const arma::vec& y, const arma::umat& factors,
                                const arma::vec& weights,
                                const std::vector<std::string>& names) {
  fitted_flag_ = false;
  const arma::uword n = y.n_elem;
  check::require(n >= 1, "y", "needs at least one row");
  check::require(X1.n_rows == n || X1.n_cols == 0, "exog",
                 "has " + std::to_string(X1.n_rows) + " rows but y has " + std::to_string(n));
  check::rows_match(X2, n, "endog", "y");
  check::rows_match(Z2, n, "instruments", "y");
  p1_ = X1.n_cols;
  p2_ = X2.n_cols;
  q_ = Z2.n_cols;
  check::require(p2_ >= 1, "endog",
                 "needs at least one endogenous regressor (without one, fit OLS instead)");
  if (q_ < p2_) {
    std::ostringstream msg;
    msg << "instruments: " << q_ << " excluded instrument" << (q_ == 1 ? "" : "s") << " for "
        << p2_ << " endogenous regressors: the model is not identified; pass at least as many "
        << "instruments (exogenous variables excluded from the equation) as endogenous "
        << "regressors";
    throw InvalidArgument(msg.str());
  }
  check::require(opt_.fuller >= 0 && std::isfinite(opt_.fuller), "fuller",
                 "must be a finite number >= 0 (1 is Fuller's usual choice)");
  check::require(opt_.estimator == IVEstimator::LIML || opt_.fuller == 0, "fuller",
                 "applies to LIML only (pass estimator=\"liml\")");
  check::require(names.empty() || names.size() == p1_ + p2_ + q_, "names",
                 "needs one name per column of exog, endog and instruments");
  check::all_finite(y, "y");
  if (p1_ > 0) check::all_finite(X1, "exog");
  check::all_finite(X2, "endog");
  check::all_finite(Z2, "instruments");
  const bool weighted = !weights.is_empty();
  if (weighted) check_weights(weights, n, "weights");
  const bool has_factors = factors.n_cols > 0;
  if (has_factors) {
    check::require(factors.n_rows == n, "absorb",
                   "has " + std::to_string(factors.n_rows) + " rows but y has " +
                       std::to_string(n) + " (pass one label per row)");
  }
  prepare(X1, X2, Z2, y, factors, weights, names);
  estimate();
  finish(X1, X2, factors);
  return *this;
}

// Rows of positive weight, compacted factor levels, the within transformation, the scaled
// blocks and the collinearity checks (which build the instruments' orthonormal basis Qz_).
void IVRegression::prepare(const arma::mat& X1, const arma::mat& X2, const arma::mat& Z2,
                           const arma::vec& y, const arma::umat& factors,
                           const arma::vec& weights, const std::vector<std::string>& names) {
  const arma::uword n = y.n_elem;
  const bool weighted = !weights.is_empty();
  auto name = [&](arma::uword block, arma::uword j) {
    const arma::uword off = block == 0 ? 0 : block == 1 ? p1_ : p1_ + p2_;
    if (!names.empty()) return names[off + j];
    const char* what = block == 0 ? "exog" : block == 1 ? "endog" : "instruments";
    return std::string(what) + " column " + std::to_string(j + 1);
  };

  n_all_ = n;
  keep_ = weighted ? arma::uvec(arma::find(weights > 0)) : arma::regspace<arma::uvec>(0, n - 1);
  n_keep_ = keep_.n_elem;
  w_ = weighted ? arma::vec(weights.elem(keep_)) : arma::vec(n_keep_, arma::fill::ones);
  s_ = arma::sqrt(w_);
  y_all_ = y;
  const arma::vec yk = y.elem(keep_);
  const arma::mat X1k = p1_ > 0 ? arma::mat(X1.rows(keep_)) : arma::mat(n_keep_, 0);
  const arma::mat X2k = X2.rows(keep_), Z2k = Z2.rows(keep_);

  // Factors on the kept rows, levels compacted (a level seen only in rows of weight 0 has no
  // fixed effect).
  has_fe_ = factors.n_cols > 0;
  code_map_.clear();
  df_abs_ = 0;
  if (has_fe_) {
    arma::umat codes(n_keep_, factors.n_cols);
    for (arma::uword j = 0; j < factors.n_cols; ++j) {
      const arma::uvec col = factors.col(j);
      const arma::uvec kc = col.elem(keep_);
      const arma::uvec lev = arma::unique(kc);
      std::vector<long long> map(static_cast<std::size_t>(col.max()) + 1, -1);
      for (arma::uword l = 0; l < lev.n_elem; ++l) map[lev(l)] = static_cast<long long>(l);
      for (arma::uword i = 0; i < n_keep_; ++i) codes(i, j) = static_cast<arma::uword>(map[kc(i)]);
      code_map_.push_back(std::move(map));
    }
    f_ = Factors::from_codes(codes);
    dfinfo_ = absorbed_df(f_, opt_.absorb);
    df_abs_ = dfinfo_.df_absorbed();
  }
  intercept_ = !has_fe_ && opt_.fit_intercept;

  const arma::mat M = arma::join_rows(arma::join_rows(yk, X1k), arma::join_rows(X2k, Z2k));
  arma::mat Mt = M;
  if (has_fe_) Mt = within_transform(M, f_, w_, opt_.absorb).x;
  arma::mat X1t = p1_ > 0 ? arma::mat(Mt.cols(1, p1_)) : arma::mat(n_keep_, 0);
  arma::mat X1r = X1k;
  if (intercept_) {
    X1t = arma::join_rows(arma::vec(n_keep_, arma::fill::ones), X1t);
    X1r = arma::join_rows(arma::vec(n_keep_, arma::fill::ones), X1r);
  }
  const arma::mat X2t = Mt.cols(1 + p1_, p1_ + p2_);
  const arma::mat Z2t = Mt.cols(1 + p1_ + p2_, p1_ + p2_ + q_);
  Xraw_ = arma::join_rows(X1r, X2k);
  yraw_ = yk;
  ys_ = Mt.col(0) % s_;
  X1s_ = X1t.each_col() % s_;
  X2s_ = X2t.each_col() % s_;
  Z2s_ = Z2t.each_col() % s_;
  const arma::uword p1i = X1s_.n_cols;

  // Collinearity: each column against the fixed effects and the columns before it, relative to
  // its own (weighted) norm before the within transformation (the OLS path's rule).
  const double tol = opt_.rank_tol;
  auto fail = [&](const std::string& who, bool absorbed, const std::string& others) {
    std::ostringstream msg;
    msg << who << ": ";
    if (absorbed) {
      msg << "is collinear with the fixed effects (constant within the levels of an absorbed "
          << "factor, or a combination of such); drop it or absorb fewer factors";
    } else {
      msg << "is collinear with " << others << "; drop it";
    }
    throw InvalidArgument(msg.str());
  };
  arma::mat Q1(n_keep_, 0);
  for (arma::uword j = 0; j < p1i; ++j) {
    const bool is_icpt = intercept_ && j == 0;
    const std::string who =
        is_icpt ? std::string("intercept")
                : "exogenous regressor " + name(0, j - (intercept_ ? 1 : 0));
    const double ref = arma::norm(X1r.col(j) % s_);
    if (has_fe_ && !(arma::norm(X1s_.col(j)) > tol * ref)) fail(who, true, "");
    if (!(iv_append_orthonormal(Q1, X1s_.col(j)) > tol * ref)) {
      fail(who, false, "the exogenous regressors before it (or the intercept)");
    }
  }
  {
    arma::mat Qx = Q1;
    for (arma::uword j = 0; j < p2_; ++j) {
      const std::string who = "endogenous regressor " + name(1, j);
      const double ref = arma::norm(X2k.col(j) % s_);
      if (has_fe_ && !(arma::norm(X2s_.col(j)) > tol * ref)) fail(who, true, "");
      if (!(iv_append_orthonormal(Qx, X2s_.col(j)) > tol * ref)) {
        fail(who, false, "the exogenous regressors and the endogenous regressors before it");
      }
    }
  }
  Qz_ = Q1;
  for (arma::uword j = 0; j < q_; ++j) {
    const std::string who = "instrument " + name(2, j);
    const double ref = arma::norm(Z2k.col(j) % s_);
    if (has_fe_ && !(arma::norm(Z2s_.col(j)) > tol * ref)) fail(who, true, "");
    if (!(iv_append_orthonormal(Qz_, Z2s_.col(j)) > tol * ref)) {
      fail(who, false,
           "the exogenous regressors and the instruments before it (it adds no identifying "
           "variation)");
    }
  }
}

// The k-class estimate on the prepared blocks.
void IVRegression::estimate() {
  const arma::uword p1i = X1s_.n_cols;
  const arma::mat Q1 = p1i > 0 ? arma::mat(Qz_.cols(0, p1i - 1)) : arma::mat(n_keep_, 0);
  const double N = static_cast<double>(n_keep_);
  const double L = static_cast<double>(Qz_.n_cols);
  const arma::uword p = p1i + p2_;
  check::require(N > static_cast<double>(p) + static_cast<double>(df_abs_), "y",
                 "has " + std::to_string(n_keep_) + " rows (of positive weight), not more than "
                 "the " + std::to_string(p + df_abs_) + " parameters (coefficients and absorbed "
                 "levels)");

  const arma::mat X = arma::join_rows(X1s_, X2s_);
  const arma::mat PX2 = Qz_ * (Qz_.t() * X2s_);
  const arma::mat MX2 = X2s_ - PX2;
  Xhat_ = arma::join_rows(X1s_, PX2);

  kappa_ = kNaN;
  k_ = 1.0;
  if (opt_.estimator == IVEstimator::LIML) {
    const arma::mat Y = arma::join_rows(ys_, X2s_);
    const arma::mat MZY = Y - Qz_ * (Qz_.t() * Y);
    const arma::mat M1Y = p1i > 0 ? arma::mat(Y - Q1 * (Q1.t() * Y)) : Y;
    kappa_ = iv_min_generalized_eig(MZY.t() * MZY, M1Y.t() * M1Y);
    if (!std::isfinite(kappa_)) {
      throw InvalidArgument(
          "y: LIML's kappa is undefined ([y, endog] is collinear with the instruments after "
          "projection); use 2SLS");
    }
    k_ = kappa_;
    if (opt_.fuller > 0) {
      const double dfz = N - L - static_cast<double>(df_abs_);
      check::require(dfz > 0, "fuller", "needs N - L > 0 (more rows than instruments)");
      k_ = kappa_ - opt_.fuller / dfz;
    }
  }
  Xk_ = arma::join_rows(X1s_, X2s_ - k_ * MX2);
  arma::mat C = Xk_.t() * X;
  C = 0.5 * (C + C.t());
  if (!arma::inv(Cinv_, C) || !Cinv_.is_finite()) {
    throw InvalidArgument("instruments: X'(I - k M_Z)X is singular (the instruments do not "
                          "identify the endogenous regressors)");
  }
  Cinv_ = 0.5 * (Cinv_ + Cinv_.t());
  if (opt_.estimator == IVEstimator::TSLS) {
    if (!arma::solve(b_, Xhat_, ys_)) {
      throw InvalidArgument("instruments: the projected design P_Z X is rank deficient (the "
                            "instruments do not identify the endogenous regressors)");
    }
  } else {
    b_ = arma::solve(C, Xk_.t() * ys_);
  }
  e_ = ys_ - X * b_;

}

// The fixed-effect operator and the fitted values of every training row.
void IVRegression::finish(const arma::mat& X1, const arma::mat& X2, const arma::umat& factors) {
  const arma::uword n = n_all_;
  const arma::vec yk = yraw_;
  const arma::vec eu = e_ / s_;
  if (has_fe_) {
    // The fixed effects are those of the target t = y - X b - e, which lies in span(D); an
    // absorbed fit of t on one within-transformed column (orthogonal to the dummies, so its
    // coefficient leaves the fixed effects alone) carries the fixed-effect operator p(g)'
    // (its attention weights at x = 0) and the normalised values alpha.
    fe_fit_ = AbsorbedOLS(opt_.absorb);
    fe_fit_.fit(arma::vec(X2s_.col(0) / s_), yk - eu - Xraw_ * b_, f_.codes, w_);
  }
  fitted_flag_ = true;

  fitted_all_.set_size(n);
  fitted_all_.fill(kNaN);
  fitted_all_.elem(keep_) = yk - eu;
  if (n_keep_ < n) {
    // Rows of weight 0: the prediction there (NaN where a level has no fixed effect).
    arma::uvec drop(n - n_keep_);
    {
      std::vector<bool> kept(n, false);
      for (arma::uword i : keep_) kept[i] = true;
      arma::uword c = 0;
      for (arma::uword i = 0; i < n; ++i) {
        if (!kept[i]) drop(c++) = i;
      }
    }
    for (arma::uword i : drop) {
      bool known = true;
      for (arma::uword j = 0; j < code_map_.size(); ++j) {
        const arma::uword c = factors(i, j);
        if (c >= code_map_[j].size() || code_map_[j][c] < 0) known = false;
      }
      if (!known) continue;
      const arma::mat x1 = p1_ > 0 ? arma::mat(X1.row(i)) : arma::mat(1, 0);
      const arma::umat g = has_fe_ ? arma::umat(factors.row(i)) : arma::umat();
      fitted_all_(i) = predict(x1, X2.row(i), g)(0);
    }
  }
}

double IVRegression::df_residual() const {
  require_fitted("df_residual");
  return static_cast<double>(n_keep_) - static_cast<double>(b_.n_elem) -
         static_cast<double>(df_abs_);
}

double IVRegression::sigma2() const {
  const double df = df_residual();
  return df > 0 ? arma::dot(e_, e_) / df : kNaN;
}

double IVRegression::r_squared() const {
  require_fitted("r_squared");
  const double ybar = arma::dot(w_, yraw_) / arma::accu(w_);
  const double tss = arma::dot(w_, arma::square(yraw_ - ybar));
  return tss > 0 ? 1.0 - arma::dot(e_, e_) / tss : kNaN;
}

double IVRegression::r_squared_within() const {
  require_fitted("r_squared_within");
  if (!has_fe_) return kNaN;
  const double tss = arma::dot(ys_, ys_);
  return tss > 0 ? 1.0 - arma::dot(e_, e_) / tss : kNaN;
}

arma::mat IVRegression::design_rows(const arma::mat& X1_new, const arma::mat& X2_new,
                                    const char* what) const {
  require_fitted(what);
  const arma::uword m = X2_new.n_rows;
  check::require(X2_new.n_cols == p2_, "endog",
                 "has " + std::to_string(X2_new.n_cols) + " columns but the model was fitted "
                 "with " + std::to_string(p2_));
  check::require(X1_new.n_cols == p1_ && (p1_ == 0 || X1_new.n_rows == m), "exog",
                 "must have one row per row of endog and the " + std::to_string(p1_) +
                     " columns of fit");
  if (p1_ > 0) check::all_finite(X1_new, "exog");
  check::all_finite(X2_new, "endog");
  arma::mat D = p1_ > 0 ? arma::mat(X1_new) : arma::mat(m, 0);
  if (intercept_) D = arma::join_rows(arma::vec(m, arma::fill::ones), D);
  return arma::join_rows(D, X2_new);
}

arma::umat IVRegression::map_codes(const arma::umat& codes_new, arma::uword m,
                                   const char* what) const {
  if (!has_fe_) {
    check::require(codes_new.n_cols == 0, "absorb",
                   "the model has no absorbed fixed effects; pass no levels");
    return arma::umat();
  }
  check::require(codes_new.n_rows == m && codes_new.n_cols == code_map_.size(), "absorb",
                 std::string(what) + " needs one row of levels per new row and one column per "
                 "absorbed factor (" + std::to_string(code_map_.size()) + ")");
  arma::umat out(m, codes_new.n_cols);
  for (arma::uword j = 0; j < codes_new.n_cols; ++j) {
    for (arma::uword i = 0; i < m; ++i) {
      const arma::uword c = codes_new(i, j);
      if (c >= code_map_[j].size() || code_map_[j][c] < 0) {
        std::ostringstream msg;
        msg << "absorb: factor " << j + 1 << " row " << i + 1 << " has a level with no fixed "
            << "effect (not seen in fit, or only in rows of weight 0)";
        throw InvalidArgument(msg.str());
      }
      out(i, j) = static_cast<arma::uword>(code_map_[j][c]);
    }
  }
  return out;
}

arma::vec IVRegression::predict(const arma::mat& X1_new, const arma::mat& X2_new,
                                const arma::umat& codes_new) const {
  const arma::mat D = design_rows(X1_new, X2_new, "predict");
  const arma::umat g = map_codes(codes_new, D.n_rows, "predict");
  arma::vec out = D * b_;
  if (has_fe_) out += fe_fit_.predict(arma::mat(D.n_rows, 1, arma::fill::zeros), g).col(0);
  return out;
}

arma::mat IVRegression::attention_weights(const arma::mat& X1_new, const arma::mat& X2_new,
                                          const arma::umat& codes_new) const {
  const arma::mat D = design_rows(X1_new, X2_new, "attention_weights");
  const arma::uword m = D.n_rows;
  const arma::umat g = map_codes(codes_new, m, "attention_weights");
  // b = C^{-1} X(k)' diag(s) y on the kept rows (see the header comment).
  arma::mat Lk = Xk_.each_col() % s_;
  Lk = Lk * Cinv_;  // n x p: columns of L'
  arma::mat A;
  if (has_fe_) {
    const arma::mat P = fe_fit_.attention_weights(arma::mat(m, 1, arma::fill::zeros), g);
    A = P + (D - P * Xraw_) * Lk.t();
  } else {
    A = D * Lk.t();
  }
  if (n_keep_ == n_all_) return A;
  arma::mat out(m, n_all_, arma::fill::zeros);
  out.cols(keep_) = A;
  return out;
}

std::vector<arma::vec> IVRegression::fixed_effects() const {
  require_fitted("fixed_effects");
  std::vector<arma::vec> out;
  if (!has_fe_) return out;
  const std::vector<arma::mat>& a = fe_fit_.fixed_effects();
  for (arma::uword j = 0; j < code_map_.size(); ++j) {
    arma::vec v(code_map_[j].size());
    v.fill(kNaN);
    for (arma::uword c = 0; c < code_map_[j].size(); ++c) {
      if (code_map_[j][c] >= 0) v(c) = a[j](static_cast<arma::uword>(code_map_[j][c]), 0);
    }
    out.push_back(v);
  }
  return out;
}

}  // namespace attnreg
