// Instrumental-variables regression: see attnreg/least_squares/iv.hpp for the model, the
// formulas and their sources.
#include "attnreg/least_squares/iv.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>

#include <boost/math/special_functions/gamma.hpp>

#include "attnreg/base/constants.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/detail/least_squares_fe_internal.hpp"
#include "attnreg/detail/least_squares_internal.hpp"
#include "attnreg/inference/distributions.hpp"

namespace attnreg {

namespace {

double iv_chi2_sf(double x, double df) {
  if (!(x >= 0) || !(df > 0)) return kNaN;
  return boost::math::gamma_q(df / 2.0, x / 2.0);
}

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

// Smallest eigenvalue of A^{-1} B for symmetric B and positive definite A (Cholesky of A).
double iv_min_generalized_eig(const arma::mat& A, const arma::mat& B) {
  arma::mat R;
  if (!arma::chol(R, arma::symmatu(A))) return kNaN;
  const arma::mat Ri = arma::inv(arma::trimatu(R));
  const arma::vec ev = arma::eig_sym(arma::symmatu(Ri.t() * B * Ri));
  return ev.min();
}

arma::uvec iv_cluster_index(const arma::uvec& c, arma::uword& G) {
  const arma::uvec u = arma::unique(c);
  G = u.n_elem;
  arma::uvec idx(c.n_elem);
  for (arma::uword i = 0; i < c.n_elem; ++i) {
    idx(i) = static_cast<arma::uword>(
        std::lower_bound(u.begin(), u.end(), c(i)) - u.begin());
  }
  return idx;
}

arma::mat iv_cluster_meat(const arma::mat& S, const arma::uvec& c) {
  arma::uword G = 0;
  const arma::uvec idx = iv_cluster_index(c, G);
  arma::mat sums(G, S.n_cols, arma::fill::zeros);
  for (arma::uword i = 0; i < S.n_rows; ++i) sums.row(idx(i)) += S.row(i);
  return sums.t() * sums;
}

void require_iv_cov(CovType type) {
  if (type == CovType::HAC || type == CovType::CR2) {
    throw InvalidArgument("cov_type: " + cov_type_name(type) +
                          " is not available for instrumental variables (use nonrobust, "
                          "HC0-HC3, CR0 or CR1)");
  }
}

}  // namespace

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
  has_fe_ = has_factors;
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
        is_icpt ? std::string("intercept") : "exogenous regressor " + name(0, j - (intercept_ ? 1 : 0));
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
  const arma::vec eu = e_ / s_;

  if (has_fe_) {
    // The fixed effects are those of the target t = y - X b - e, which lies in span(D); an
    // absorbed fit of t on one within-transformed column (orthogonal to the dummies, so its
    // coefficient leaves the fixed effects alone) carries the fixed-effect operator p(g)'
    // (its attention weights at x = 0) and the normalised values alpha.
    fe_fit_ = AbsorbedOLS(opt_.absorb);
    fe_fit_.fit(X2t.col(0), yk - eu - Xraw_ * b_, f_.codes, weighted ? w_ : arma::vec());
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
  return *this;
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

arma::umat IVRegression::kept_clusters(const CovOptions& cov) const {
  const bool cl = is_cluster_cov(cov.type);
  if (!cl) {
    check::require(cov.clusters.is_empty(), "groups",
                   "cluster ids were given but the covariance type is not cluster-robust (use "
                   "cov_type=\"CR1\")");
    return arma::umat();
  }
  check::require(!cov.clusters.is_empty(), "groups",
                 "a cluster-robust covariance needs cluster ids (groups=)");
  check::require(cov.clusters.n_rows == n_all_, "groups",
                 "has " + std::to_string(cov.clusters.n_rows) + " rows but the model was "
                 "fitted on " + std::to_string(n_all_) + " (pass one id per training row)");
  check::require(cov.clusters.n_cols == 1 || cov.clusters.n_cols == 2, "groups",
                 "one or two clustering dimensions are supported");
  return cov.clusters.rows(keep_);
}

double IVRegression::fewest_clusters(const arma::umat& cl) const {
  double G = 0;
  for (arma::uword d = 0; d < cl.n_cols; ++d) {
    const double g = static_cast<double>(arma::uvec(arma::unique(cl.col(d))).n_elem);
    G = d == 0 ? g : std::min(G, g);
  }
  return G;
}

double IVRegression::small_sample_factor(const CovOptions& cov, const arma::umat& cl,
                                         double K) const {
  const double N = static_cast<double>(n_keep_);
  switch (cov.type) {
    case CovType::HC1: {
      const double df = N - K - static_cast<double>(df_abs_);
      return df > 0 ? N / df : kNaN;
    }
    case CovType::CR1: {
      // The OLS path's convention: K counts the absorbed levels not nested in a cluster.
      const double Kc = K + (has_fe_ ? absorbed_df_clustered(f_, dfinfo_, cl) : 0.0);
      const double G = fewest_clusters(cl);
      return N - Kc > 0 && G > 1 ? G / (G - 1.0) * (N - 1.0) / (N - Kc) : kNaN;
    }
    default:
      return 1.0;
  }
}

arma::mat IVRegression::raw_meat(const arma::mat& S, const CovOptions& cov,
                                 const arma::umat& cl) const {
  if (!is_cluster_cov(cov.type)) return S.t() * S;
  if (cl.n_cols == 1) return iv_cluster_meat(S, cl.col(0));
  // Two-way (Cameron, Gelbach and Miller 2011): V_1 + V_2 - V_12, V_12 on the intersection.
  const arma::uword m2 = cl.col(1).max() + 1;
  const arma::uvec both = cl.col(0) * m2 + cl.col(1);
  return iv_cluster_meat(S, cl.col(0)) + iv_cluster_meat(S, cl.col(1)) - iv_cluster_meat(S, both);
}

arma::vec IVRegression::dummy_leverage_kept() const {
  arma::vec h(n_keep_, arma::fill::zeros);
  if (!has_fe_) return h;
  if (f_.n_factors() == 1) {
    arma::vec wsum(f_.n_levels[0], arma::fill::zeros);
    for (arma::uword i = 0; i < n_keep_; ++i) wsum(f_.codes(i, 0)) += w_(i);
    for (arma::uword i = 0; i < n_keep_; ++i) h(i) = w_(i) / wsum(f_.codes(i, 0));
    return h;
  }
  return fe_detail::dummy_leverage(f_, w_);
}

arma::mat IVRegression::sandwich(const arma::mat& Xs, const arma::vec& e, const arma::mat& B,
                                 const arma::vec& leverage, const CovOptions& cov,
                                 const arma::umat& cl, double K_df, Inference* fix) const {
  const double N = static_cast<double>(n_keep_);
  switch (cov.type) {
    case CovType::Classical: {
      const double df = N - K_df - static_cast<double>(df_abs_);
      return df > 0 ? arma::mat(arma::dot(e, e) / df * B) : arma::mat(B.n_rows, B.n_cols, arma::fill::value(kNaN));
    }
    case CovType::HC0:
    case CovType::HC1:
    case CovType::HC2:
    case CovType::HC3:
    case CovType::CR0:
    case CovType::CR1: {
      arma::vec ea = e;
      if (cov.type == CovType::HC2 || cov.type == CovType::HC3) {
        for (arma::uword i = 0; i < e.n_elem; ++i) {
          const double om = 1.0 - leverage(i);
          // A row fitted exactly (leverage one) adds nothing to the meat (0/0 taken as 0).
          ea(i) = om > 1e-10 ? e(i) / (cov.type == CovType::HC2 ? std::sqrt(om) : om) : 0.0;
        }
      }
      const arma::mat S = Xs.each_col() % ea;
      arma::mat V = B * raw_meat(S, cov, cl) * B * small_sample_factor(cov, cl, K_df);
      V = 0.5 * (V + V.t());
      if (is_cluster_cov(cov.type) && cl.n_cols == 2) {
        double ratio = 0;
        if (ls_detail::clip_negative_eigenvalues(V, &ratio) && fix) {
          fix->psd_fixed = true;
          fix->psd_min_eigenvalue = std::min(fix->psd_min_eigenvalue, ratio);
        }
      }
      return V;
    }
    default:
      require_iv_cov(cov.type);
      return arma::mat();
  }
}

arma::mat IVRegression::covariance(const CovOptions& cov, Inference* fix) const {
  require_fitted("covariance");
  const arma::umat cl = kept_clusters(cov);
  require_iv_cov(cov.type);
  if (cov.type == CovType::Classical) {
    // s^2 C^{-1} (for k != 1 as linearmodels' IVLIML: not the sandwich with the x^ scores).
    const double df = df_residual();
    return df > 0 ? arma::mat(sigma2() * Cinv_) : arma::mat(Cinv_.n_rows, Cinv_.n_cols, arma::fill::value(kNaN));
  }
  arma::vec h;
  if (cov.type == CovType::HC2 || cov.type == CovType::HC3) {
    arma::mat Q, R;
    arma::qr_econ(Q, R, Xhat_);
    h = arma::sum(arma::square(Q), 1) + dummy_leverage_kept();
  }
  return sandwich(Xhat_, e_, Cinv_, h, cov, cl, static_cast<double>(b_.n_elem), fix);
}

Inference IVRegression::inference(const CovOptions& cov) const {
  require_fitted("inference");
  Inference out;
  out.cov_type = cov.type;
  out.df_residual = df_residual();
  out.df_inference = out.df_residual;
  const arma::mat V = covariance(cov, &out);
  if (is_cluster_cov(cov.type)) {
    const arma::umat cl = kept_clusters(cov);
    for (arma::uword d = 0; d < cl.n_cols; ++d) {
      out.n_clusters.push_back(arma::uvec(arma::unique(cl.col(d))).n_elem);
    }
    out.df_inference = fewest_clusters(cl) - 1.0;
  }
  out.estimate = b_;
  arma::vec d = V.diag();
  out.std_error.set_size(b_.n_elem, 1);
  for (arma::uword j = 0; j < d.n_elem; ++j) out.std_error(j, 0) = d(j) >= 0 ? std::sqrt(d(j)) : kNaN;
  ls_detail::t_tests(out);
  const double r2 = r_squared();
  out.r_squared = arma::rowvec{r2};
  const double df = out.df_residual;
  out.adj_r_squared = arma::rowvec{df > 0 ? 1.0 - (1.0 - r2) * (static_cast<double>(n_keep_) - 1.0) / df : kNaN};
  out.sigma = arma::rowvec{std::sqrt(sigma2())};
  return out;
}

IVFirstStage IVRegression::first_stage(const CovOptions& cov) const {
  require_fitted("first_stage");
  const arma::umat cl = kept_clusters(cov);
  require_iv_cov(cov.type);
  IVFirstStage fs;
  const double N = static_cast<double>(n_keep_);
  const arma::uword p1i = X1s_.n_cols, L = Qz_.n_cols;
  const double q = static_cast<double>(q_);
  const arma::mat Zf = arma::join_rows(X1s_, Z2s_);
  arma::solve(fs.coef, Zf, X2s_);
  const arma::mat V = X2s_ - Qz_ * (Qz_.t() * X2s_);
  const arma::mat Q1 = p1i > 0 ? arma::mat(Qz_.cols(0, p1i - 1)) : arma::mat(n_keep_, 0);
  const arma::mat Qz2 = Qz_.cols(p1i, L - 1);
  const arma::mat Pi = Qz2.t() * X2s_;          // q x p2: first stage on the partialled basis
  const arma::mat X2p = p1i > 0 ? arma::mat(X2s_ - Q1 * (Q1.t() * X2s_)) : X2s_;
  const double df2 = N - static_cast<double>(L) - static_cast<double>(df_abs_);
  fs.df1 = q;
  fs.df2 = is_cluster_cov(cov.type) ? fewest_clusters(cl) - 1.0 : df2;
  fs.partial_r2.set_size(p2_);
  fs.partial_f.set_size(p2_);
  fs.partial_f_pvalue.set_size(p2_);
  arma::vec hz;
  if (cov.type == CovType::HC2 || cov.type == CovType::HC3) {
    hz = arma::sum(arma::square(Qz_), 1) + dummy_leverage_kept();
  }
  const arma::mat ZfInv = arma::inv_sympd(arma::symmatu(Zf.t() * Zf));
  for (arma::uword j = 0; j < p2_; ++j) {
    const double rss_u = arma::dot(V.col(j), V.col(j));
    const double rss_r = arma::dot(X2p.col(j), X2p.col(j));
    fs.partial_r2(j) = 1.0 - rss_u / rss_r;
    if (cov.type == CovType::Classical) {
      fs.partial_f(j) = ((rss_r - rss_u) / q) / (rss_u / df2);
    } else {
      // Wald test of the excluded instruments' coefficients under the robust covariance.
      const arma::mat Vc = sandwich(Zf, V.col(j), ZfInv, hz, cov, cl, static_cast<double>(L), nullptr);
      const arma::vec g = fs.coef.col(j).rows(p1i, L - 1);
      const arma::mat Vs = Vc.submat(p1i, p1i, L - 1, L - 1);
      fs.partial_f(j) = arma::dot(g, arma::solve(Vs, g)) / q;
    }
    fs.partial_f_pvalue(j) = fisher_f_sf(fs.partial_f(j), fs.df1, fs.df2);
  }
  // Cragg-Donald: (N - L - df_absorbed)/q mineig((X2'M_Z X2)^{-1} X2'(P_Z - P_X1) X2).
  fs.cragg_donald_f = iv_min_generalized_eig(V.t() * V, Pi.t() * Pi) * df2 / q;
  fs.kleibergen_paap_rk = kNaN;
  fs.kleibergen_paap_f = kNaN;
  if (cov.type != CovType::Classical) {
    // Kleibergen and Paap (2006), sec. 3, rank p2 - 1: Theta = F Pi G^{-1} with F = I (the
    // instruments' orthonormal basis Qz2), G'G = X2~'X2~. With Theta = U S V', the statistic
    // needs only the last right singular vector v and the left singular vectors U2 from the
    // p2-th on: lambda = U2' Theta v = (s_p2, 0, ...)' and
    // rk = lambda' [(v' G^{-T} (x) U2') Var(vec Pi) (G^{-1} v (x) U2)]^{-1} lambda
    // (their A_q, B_q differ from U2, v by invertible factors, which the quadratic form ignores).
    arma::mat R;
    arma::chol(R, arma::symmatu(X2p.t() * X2p));
    const arma::mat Ri = arma::inv(arma::trimatu(R));
    const arma::mat Theta = Pi * Ri;
    arma::mat U, Vv;
    arma::vec sv;
    arma::svd(U, sv, Vv, Theta);
    const arma::uword K = p2_;
    const arma::vec v = Vv.col(K - 1);
    const arma::mat U2 = U.cols(K - 1, U.n_cols - 1);
    arma::vec lambda(U2.n_cols, arma::fill::zeros);
    lambda(0) = sv(K - 1);
    // Scores of vec(Pi): row i is kron(v_i, z_i) with v_i the first-stage residuals.
    arma::mat S(n_keep_, q_ * K);
    for (arma::uword j = 0; j < K; ++j) S.cols(j * q_, (j + 1) * q_ - 1) = Qz2.each_col() % V.col(j);
    CovOptions hc = cov;
    if (cov.type == CovType::HC2 || cov.type == CovType::HC3) hc.type = CovType::HC1;
    const arma::mat meat = raw_meat(S, hc, cl);
    const arma::mat T = arma::kron(Ri * v, U2);  // (G^{-1} v) (x) U2: (K q) x (q - K + 1)
    const arma::mat Om = T.t() * meat * T;
    fs.kleibergen_paap_rk = arma::dot(lambda, arma::solve(Om, lambda));
    fs.kleibergen_paap_f =
        fs.kleibergen_paap_rk / q / small_sample_factor(hc, cl, static_cast<double>(L));
  }
  return fs;
}

IVTest IVRegression::overidentification(const CovOptions& cov) const {
  require_fitted("overidentification");
  const arma::umat cl = kept_clusters(cov);
  IVTest t;
  t.df1 = static_cast<double>(q_) - static_cast<double>(p2_);
  const bool robust = cov.type != CovType::Classical;
  t.name = robust ? "Hansen J" : "Sargan";
  if (q_ == p2_) {
    t.statistic = kNaN;
    t.p_value = kNaN;
    t.name += " (exactly identified: no test)";
    return t;
  }
  if (!robust) {
    const arma::vec g = Qz_.t() * e_;
    t.statistic = static_cast<double>(n_keep_) * arma::dot(g, g) / arma::dot(e_, e_);
  } else {
    require_iv_cov(cov.type);
    // Two-step efficient GMM with S from the model's residuals (no small-sample factor: it
    // cancels in J up to the scaling, as in ivreg2).
    CovOptions c = cov;
    if (c.type == CovType::HC2 || c.type == CovType::HC3) c.type = CovType::HC0;
    const arma::mat S = raw_meat(Qz_.each_col() % e_, c, cl);
    const arma::mat Wm = arma::pinv(arma::symmatu(S));
    const arma::mat X = arma::join_rows(X1s_, X2s_);
    const arma::mat A = X.t() * Qz_;
    const arma::vec bg = arma::solve(A * Wm * A.t(), A * Wm * (Qz_.t() * ys_));
    const arma::vec g = Qz_.t() * (ys_ - X * bg);
    t.statistic = arma::dot(g, Wm * g);
  }
  t.p_value = iv_chi2_sf(t.statistic, t.df1);
  return t;
}

IVTest IVRegression::wu_hausman() const {
  require_fitted("wu_hausman");
  // Control function: the F test of M_Z X2 added to the OLS of y on X (Wooldridge 2010, 6.3.1).
  const arma::mat X = arma::join_rows(X1s_, X2s_);
  const arma::mat V = X2s_ - Qz_ * (Qz_.t() * X2s_);
  const arma::mat Xa = arma::join_rows(X, V);
  arma::vec br, bu;
  arma::solve(br, X, ys_);
  arma::solve(bu, Xa, ys_);
  const arma::vec er = ys_ - X * br, eu = ys_ - Xa * bu;
  const double rss_r = arma::dot(er, er), rss_u = arma::dot(eu, eu);
  IVTest t;
  t.name = "Wu-Hausman";
  t.df1 = static_cast<double>(p2_);
  t.df2 = static_cast<double>(n_keep_) - static_cast<double>(Xa.n_cols) -
          static_cast<double>(df_abs_);
  t.statistic = ((rss_r - rss_u) / t.df1) / (rss_u / t.df2);
  t.p_value = fisher_f_sf(t.statistic, t.df1, t.df2);
  return t;
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
