// Least squares with absorbed fixed effects: see attnreg/least_squares/least_squares_fe.hpp.
#include "attnreg/least_squares/least_squares_fe.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>

#include "attnreg/base/error.hpp"
#include "attnreg/solve/lapack.hpp"
#include "attnreg/base/runtime.hpp"
#include "attnreg/detail/least_squares_fe_internal.hpp"

namespace attnreg {

using namespace fe_detail;

// ---------------------------------------------------------------------------------------------
void AbsorbedOLS::require_fitted(const char* what) const {
  if (!fitted_flag_) {
    throw InvalidArgument(std::string(what) + ": the model is not fitted yet (call fit first)");
  }
}

arma::uvec AbsorbedOLS::kept_columns() const {
  std::vector<arma::uword> k;
  for (arma::uword j = 0; j < absorbed_.size(); ++j) {
    if (!absorbed_[j]) k.push_back(j);
  }
  return arma::uvec(k);
}

AbsorbedOLS& AbsorbedOLS::fit(const arma::mat& X, const arma::mat& Y, const arma::umat& factors,
                              const arma::vec& weights) {
  check_options(opt_);
  check::require(X.n_rows >= 1, "X", "needs at least one row");
  // X may have no columns: the fixed effects alone (within R^2 0), as every column absorbed.
  check::require(Y.n_cols >= 1, "y", "needs at least one column (one output)");
  check::rows_match(Y, X.n_rows, "y", "X");
  check::require(factors.n_rows == X.n_rows, "absorb",
                 "has " + std::to_string(factors.n_rows) + " rows but X has " +
                     std::to_string(X.n_rows) + " (pass one label per row)");
  check::all_finite(X, "X");
  check::all_finite(Y, "y");
  fitted_flag_ = false;
  f_ = Factors::from_codes(factors);
  w_ = positive_weights_or_ones(weights, X.n_rows);
  weighted_ = !weights.is_empty();
  const arma::uword n = X.n_rows, p = X.n_cols, k = Y.n_cols;
  if (weighted_ && opt_.frequency_weights) check_frequency_weights(weights);
  singleton_.assign(n, false);
  n_singletons_ = 0;
  if (opt_.drop_singletons) {
    singleton_ = singleton_rows(f_.codes);
    for (bool b : singleton_) n_singletons_ += b ? 1 : 0;
    check::require(n_singletons_ < n, "absorb",
                   "every row is a singleton (its level of some factor has no other row), so "
                   "nothing is left to estimate from; use fewer or coarser factors, or keep the "
                   "singletons (drop_singletons off)");
  }
  df_ = absorbed_df(n_singletons_ > 0 ? kept_factors() : f_, opt_);
  X_ = X;
  y_ = Y;

  WithinResult wx = within_transform(arma::join_rows(X, Y), f_, w_, opt_);
  iterations_ = wx.iterations;
  converged_ = wx.converged;
  // M_D x is 0 at a singleton row in exact arithmetic (its own dummy spans it): set it so,
  // which makes the fit the one without those rows.
  for (arma::uword i = 0; i < n && n_singletons_ > 0; ++i) {
    if (singleton_[i]) wx.x.row(i).zeros();
  }
  const arma::mat Xt = p > 0 ? arma::mat(wx.x.cols(0, p - 1)) : arma::mat(n, 0);
  ytil_ = wx.x.cols(p, p + k - 1);

  const Sweeper sw(f_, w_, f_.n_factors());
  absorbed_.assign(p, false);
  for (arma::uword j = 0; j < p; ++j) {
    const double before = sw.wnorm(X.col(j)), after = sw.wnorm(Xt.col(j));
    absorbed_[j] = !(after > opt_.rank_tol * before);
  }
  const arma::uvec kept = kept_columns();
  const arma::vec sw_root = arma::sqrt(w_);
  coef_.set_size(p, k);
  coef_.fill(kNaN);
  rank_ = 0;
  inner_fitted_ = false;
  arma::mat resid_t = ytil_;  // M_D y - M_D X b
  if (!kept.is_empty()) {
    OLSOptions io;
    io.fit_intercept = false;
    io.rank_tol = opt_.rank_tol;
    io.precision = opt_.precision;
    io.n_threads = opt_.n_threads;
    inner_ = OLS(io);
    arma::mat Xs = Xt.cols(kept);
    Xs.each_col() %= sw_root;
    arma::mat ys = ytil_;
    ys.each_col() %= sw_root;
    inner_.fit(Xs, ys);
    inner_fitted_ = true;
    rank_ = inner_.rank();
    coef_.rows(kept) = inner_.coefficients();
    resid_t = inner_.residuals();
    resid_t.each_col() /= sw_root;
  }
  fitted_ = Y - resid_t;

  // Fixed effects from the target (y - X b) - e, which lies in span(D).
  arma::mat b0 = coef_;
  b0.replace(kNaN, 0.0);
  alpha_ = fe_values(Y - X * b0);
  (void)n;
  fitted_flag_ = true;
  return *this;
}

std::vector<arma::mat> AbsorbedOLS::fe_values(const arma::mat& T) const {
  const arma::uword K = f_.n_factors(), c = T.n_cols;
  std::vector<arma::mat> out;
  for (arma::uword j = 0; j < K; ++j) out.emplace_back(f_.n_levels[j], c);
  const Sweeper sw(f_, w_, K);
  Components comp;
  if (K >= 2) comp = components12(f_);
  const int threads = resolve_threads(opt_.n_threads);
  const long long cc = static_cast<long long>(c);
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic) num_threads(threads) if (cc > 1)
#endif
  for (long long col = 0; col < cc; ++col) {
    arma::vec v = T.col(static_cast<arma::uword>(col));
    std::vector<arma::vec> a;
    bool conv = true;
    sw.solve(v, &a, opt_, conv);
    if (K >= 2) {
      // Reference: the first level of factor 2 in each component is 0; level 0 of factors
      // 3..K is 0; the constants move into factor 1.
      std::vector<double> shift(comp.count, kNaN);
      for (arma::uword l = 0; l < f_.n_levels[1]; ++l) {
        double& s = shift[comp.comp_of_f2[l]];
        if (std::isnan(s)) s = a[1](l);
      }
      for (arma::uword l = 0; l < f_.n_levels[1]; ++l) a[1](l) -= shift[comp.comp_of_f2[l]];
      for (arma::uword l = 0; l < f_.n_levels[0]; ++l) a[0](l) += shift[comp.comp_of_f1[l]];
      for (arma::uword j = 2; j < K; ++j) {
        const double s = a[j](0);
        a[j] -= s;
        a[0] += s;
      }
    }
    for (arma::uword j = 0; j < K; ++j) out[j].col(static_cast<arma::uword>(col)) = a[j];
  }
  (void)threads;
  return out;
}

std::vector<bool> AbsorbedOLS::aliased() const {
  std::vector<bool> out(coef_.n_rows);
  for (arma::uword j = 0; j < coef_.n_rows; ++j) out[j] = std::isnan(coef_(j, 0));
  return out;
}

double AbsorbedOLS::n_effective() const {
  require_fitted("n_effective");
  if (!opt_.frequency_weights) return static_cast<double>(y_.n_rows - n_singletons_);
  double s = 0.0;
  for (arma::uword i = 0; i < w_.n_elem; ++i) s += singleton_[i] ? 0.0 : w_(i);
  return s;
}

Factors AbsorbedOLS::kept_factors() const {
  const arma::uword n = f_.codes.n_rows, K = f_.n_factors();
  arma::umat codes(n - n_singletons_, K);
  for (arma::uword j = 0; j < K; ++j) {
    std::vector<arma::uword> recode(f_.n_levels[j], static_cast<arma::uword>(-1));
    arma::uword next = 0, r = 0;
    for (arma::uword i = 0; i < n; ++i) {
      if (singleton_[i]) continue;
      arma::uword& c = recode[f_.codes(i, j)];
      if (c == static_cast<arma::uword>(-1)) c = next++;
      codes(r++, j) = c;
    }
  }
  return Factors::from_codes(codes);
}

arma::umat AbsorbedOLS::kept_clusters(const arma::umat& clusters) const {
  if (n_singletons_ == 0 || clusters.n_rows != singleton_.size()) return clusters;
  arma::uword i0 = 0;
  while (singleton_[i0]) ++i0;
  arma::umat out = clusters;
  for (arma::uword i = 0; i < out.n_rows; ++i) {
    if (singleton_[i]) out.row(i) = clusters.row(i0);
  }
  return out;
}

double AbsorbedOLS::df_residual() const {
  require_fitted("df_residual");
  return n_effective() - static_cast<double>(rank_) - static_cast<double>(df_.df_absorbed());
}

arma::rowvec AbsorbedOLS::sigma2() const {
  require_fitted("sigma2");
  const double df = df_residual();
  const arma::mat e = residuals();
  arma::rowvec s(e.n_cols);
  const Sweeper sw(f_, w_, 0);
  for (arma::uword c = 0; c < e.n_cols; ++c) {
    const double nrm = sw.wnorm(e.col(c));
    s(c) = df > 0 ? nrm * nrm / df : kNaN;
  }
  return s;
}

arma::rowvec AbsorbedOLS::r_squared_within() const {
  require_fitted("r_squared_within");
  const arma::mat e = residuals();
  const Sweeper sw(f_, w_, 0);
  arma::rowvec r(e.n_cols);
  for (arma::uword c = 0; c < e.n_cols; ++c) {
    const double rss = sw.wnorm(e.col(c)), tss = sw.wnorm(ytil_.col(c));
    r(c) = tss > 0 ? 1.0 - (rss / tss) * (rss / tss) : kNaN;
  }
  return r;
}

arma::rowvec AbsorbedOLS::r_squared() const {
  require_fitted("r_squared");
  const arma::mat e = residuals();
  const Sweeper sw(f_, w_, 0);
  arma::rowvec r(e.n_cols);
  // Over the rows that are not singletons (all rows without drop_singletons).
  arma::vec wk = w_;
  for (arma::uword i = 0; i < wk.n_elem && n_singletons_ > 0; ++i) {
    if (singleton_[i]) wk(i) = 0.0;
  }
  const Sweeper swk(f_, wk, 0);
  const double wsum = arma::accu(wk);
  for (arma::uword c = 0; c < e.n_cols; ++c) {
    const double mean = arma::dot(wk, y_.col(c)) / wsum;
    const double rss = sw.wnorm(e.col(c)), tss = swk.wnorm(y_.col(c) - mean);
    r(c) = tss > 0 ? 1.0 - (rss / tss) * (rss / tss) : kNaN;
  }
  return r;
}

arma::rowvec AbsorbedOLS::adj_r_squared() const {
  const arma::rowvec r2 = r_squared();
  const double df = df_residual();
  const double n_eff = n_effective();
  arma::rowvec out(r2.n_elem);
  for (arma::uword c = 0; c < r2.n_elem; ++c) {
    out(c) = df > 0 ? 1.0 - (1.0 - r2(c)) * ((n_eff - 1.0) / df) : kNaN;
  }
  return out;
}

void AbsorbedOLS::check_new(const arma::mat& X_new, const arma::umat& codes_new,
                            const char* what) const {
  require_fitted(what);
  if (X_new.n_cols != X_.n_cols) {
    std::ostringstream msg;
    msg << "X: has " << X_new.n_cols << " columns but the model was fitted with " << X_.n_cols
        << " (pass the same columns as in fit)";
    throw InvalidArgument(msg.str());
  }
  check::all_finite(X_new, "X");
  check::require(codes_new.n_rows == X_new.n_rows && codes_new.n_cols == f_.n_factors(), "absorb",
                 "must have one row per row of X and one column per absorbed factor (" +
                     std::to_string(f_.n_factors()) + ")");
  for (arma::uword j = 0; j < f_.n_factors(); ++j) {
    for (arma::uword i = 0; i < codes_new.n_rows; ++i) {
      if (codes_new(i, j) >= f_.n_levels[j]) {
        std::ostringstream msg;
        msg << "absorb: factor " << j + 1 << " row " << i + 1 << " has level code "
            << codes_new(i, j) << ", not seen in fit (levels 0.." << f_.n_levels[j] - 1
            << "); a fixed effect is known only for levels in the training data";
        throw InvalidArgument(msg.str());
      }
    }
  }
}

arma::mat AbsorbedOLS::predict(const arma::mat& X_new, const arma::umat& codes_new) const {
  check_new(X_new, codes_new, "predict");
  arma::mat b0 = coef_;
  b0.replace(kNaN, 0.0);
  arma::mat out = X_new * b0;
  for (arma::uword j = 0; j < f_.n_factors(); ++j) {
    for (arma::uword i = 0; i < out.n_rows; ++i) out.row(i) += alpha_[j].row(codes_new(i, j));
  }
  return out;
}

arma::mat AbsorbedOLS::fe_operator_rows(const arma::umat& codes_new) const {
  const arma::uword n = y_.n_rows, m = codes_new.n_rows, K = f_.n_factors();
  arma::mat P(m, n, arma::fill::zeros);
  if (K == 1) {
    arma::vec wsum(f_.n_levels[0], arma::fill::zeros);
    for (arma::uword i = 0; i < n; ++i) wsum(f_.codes(i, 0)) += w_(i);
    // Group members per level, then each new row copies its group's weights.
    for (arma::uword r = 0; r < m; ++r) {
      const arma::uword g = codes_new(r, 0);
      for (arma::uword i = 0; i < n; ++i) {
        if (f_.codes(i, 0) == g) P(r, i) = w_(i) / wsum(g);
      }
    }
    return P;
  }
  // Columns of the fixed-effect operator: alpha of each unit vector, in blocks.
  constexpr arma::uword kBlock = 256;
  for (arma::uword i0 = 0; i0 < n; i0 += kBlock) {
    const arma::uword i1 = std::min(n, i0 + kBlock);
    arma::mat E(n, i1 - i0, arma::fill::zeros);
    for (arma::uword i = i0; i < i1; ++i) E(i, i - i0) = 1.0;
    const std::vector<arma::mat> a = fe_values(E);
    for (arma::uword r = 0; r < m; ++r) {
      arma::rowvec row(i1 - i0, arma::fill::zeros);
      for (arma::uword j = 0; j < K; ++j) row += a[j].row(codes_new(r, j));
      P.submat(r, i0, r, i1 - 1) = row;
    }
  }
  return P;
}

arma::mat AbsorbedOLS::attention_weights(const arma::mat& X_new,
                                         const arma::umat& codes_new) const {
  check_new(X_new, codes_new, "attention_weights");
  arma::mat A = fe_operator_rows(codes_new);
  if (inner_fitted_) {
    const arma::uvec kept = kept_columns();
    const arma::mat Z = X_new.cols(kept) - A * X_.cols(kept);
    arma::mat B = inner_.attention_weights(Z);
    B.each_row() %= arma::sqrt(w_).t();
    A += B;
  }
  return A;
}

}  // namespace attnreg
