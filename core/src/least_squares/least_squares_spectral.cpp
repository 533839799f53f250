#include "attnreg/least_squares/least_squares_spectral.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <sstream>

#include "attnreg/base/error.hpp"
#include "attnreg/solve/lapack.hpp"
#include "attnreg/least_squares/least_squares.hpp"
#include "attnreg/least_squares/least_squares_masked.hpp"
#include "attnreg/base/runtime.hpp"
#include "attnreg/detail/least_squares_internal.hpp"
#include "attnreg/base/names.hpp"

namespace attnreg {


namespace {
constexpr arma::uword kRowBlock = 8192;

void check_lambda(double lambda) {
  if (!(lambda >= 0.0) || !std::isfinite(lambda)) {
    std::ostringstream msg;
    msg << "alpha: the ridge penalty must be finite and >= 0, got " << lambda;
    throw InvalidArgument(msg.str());
  }
}

// Ridge's filter s^2 / (s^2 + lambda) and s / (s^2 + lambda) without forming s^2, which
// overflows for s > 1e154 and underflows for s < 1e-154 (X scaled by 1e155 gave inf / inf).
// With t = sqrt(lambda) / s <= 1: phi = 1 / (1 + t^2); with t = s / sqrt(lambda) < 1:
// phi = t^2 / (1 + t^2). Both ratios lie in [0, 1], so nothing overflows.
double ridge_phi(double s, double lambda) {
  const double root = std::sqrt(lambda);
  if (s >= root) {
    const double t = root / s;
    return 1.0 / (1.0 + t * t);
  }
  const double t = s / root;
  return t * t / (1.0 + t * t);
}

arma::vec ridge_phi(const arma::vec& s, double lambda) {
  arma::vec phi(s.n_elem);
  for (arma::uword j = 0; j < s.n_elem; ++j) phi(j) = ridge_phi(s(j), lambda);
  return phi;
}

// phi / s = s / (s^2 + lambda) (s > 0 for kept components), again without s^2: 1 / (s (1 + t^2))
// with t = sqrt(lambda) / s <= 1, else (t / sqrt(lambda)) / (1 + t^2) with t = s / sqrt(lambda).
arma::vec ridge_gain(const arma::vec& s, double lambda) {
  const double root = std::sqrt(lambda);
  arma::vec g(s.n_elem);
  for (arma::uword j = 0; j < s.n_elem; ++j) {
    if (s(j) >= root) {
      const double t = root / s(j);
      g(j) = 1.0 / (s(j) * (1.0 + t * t));
    } else {
      const double t = s(j) / root;
      g(j) = (t / root) / (1.0 + t * t);
    }
  }
  return g;
}
}  // namespace

// ------------------------------------------------------------------------------ SpectralLS

void SpectralLS::require_fitted(const char* what) const {
  if (!fitted_flag_) {
    throw InvalidArgument(std::string(what) + ": the model is not fitted yet (call fit first)");
  }
}

void SpectralLS::check_new_x(const arma::mat& X_new, const char* what) const {
  require_fitted(what);
  ls_detail::check_new_x_columns(X_new, n_features());
}

double SpectralLS::total_weight() const {
  if (w_.is_empty()) return static_cast<double>(n_obs());
  long double s = 0.0L;
  for (arma::uword i = 0; i < w_.n_elem; ++i) s += w_(i);
  return static_cast<double>(s);
}

void SpectralLS::decompose(const arma::mat& X, const arma::mat& Y, bool fit_intercept,
                           int n_threads, const arma::vec& weights) {
  check::require(X.n_rows >= 1, "X", "needs at least one row");
  check::require(Y.n_cols >= 1, "y", "needs at least one column (one output)");
  check::rows_match(Y, X.n_rows, "y", "X");
  check::all_finite(X, "X");
  check::all_finite(Y, "y");
  const bool weighted = !weights.is_empty();
  if (weighted) check_weights(weights, X.n_rows, "weights");
  resolve_threads(n_threads);
  fitted_flag_ = false;
  intercept_ = fit_intercept;
  n_threads_ = n_threads;
  const arma::uword n = X.n_rows, p = X.n_cols, k = Y.n_cols;
  y_ = Y;
  w_ = weights;
  Z_.reset();
  arma::vec sw;
  if (weighted) sw = arma::sqrt(weights);
  if (fit_intercept) {
    if (weighted) {
      const double tw = total_weight();
      x_mean_ = (weights.t() * X) / tw;
      y_mean_ = (weights.t() * Y) / tw;
    } else {
      x_mean_ = arma::mean(X, 0);
      y_mean_ = arma::mean(Y, 0);
    }
  } else {
    x_mean_.zeros(p);
    y_mean_.zeros(k);
  }
  arma::mat Xc = fit_intercept ? arma::mat(X.each_row() - x_mean_) : X;
  arma::mat Xraw;  // weighted: the unweighted centred design, for the scores Z = Xc V
  if (weighted) {
    Xraw = Xc;
    Xc.each_col() %= sw;
  }
  arma::mat U, V;
  arma::vec s;
  if (p == 0) {
    U.set_size(n, 0);
    V.set_size(0, 0);
    s.set_size(0);
  } else if (!arma::svd_econ(U, s, V, Xc, "both", "dc") &&
             !arma::svd_econ(U, s, V, Xc, "both", "std")) {
    throw NumericalError("X: the singular value decomposition did not converge");
  }
  Xc.reset();
  // Numerical rank: singular values above max(n, p) eps s_1 (numpy's lstsq default).
  arma::uword r = 0;
  const double cut = s.n_elem ? s(0) * std::max(n, p) * std::numeric_limits<double>::epsilon() : 0;
  while (r < s.n_elem && s(r) > cut && s(r) > 0.0) ++r;
  U_ = r ? arma::mat(U.cols(0, r - 1)) : arma::mat(n, 0);
  V_ = r ? arma::mat(V.cols(0, r - 1)) : arma::mat(p, 0);
  s_ = r ? arma::vec(s.head(r)) : arma::vec();
  // Deterministic signs: the largest entry of each principal axis is positive.
  for (arma::uword j = 0; j < r; ++j) {
    if (V_(arma::index_max(arma::abs(V_.col(j))), j) < 0.0) {
      V_.col(j) *= -1.0;
      U_.col(j) *= -1.0;
    }
  }
  arma::mat Yc = fit_intercept ? arma::mat(Y.each_row() - y_mean_) : Y;
  if (weighted) {
    Yc.each_col() %= sw;
    Z_ = Xraw * V_;
  }
  Uty_ = U_.t() * Yc;
}

void SpectralLS::refresh_fit() {
  const arma::vec phi = filter();
  // No kept component (X without variation): the products below would have an empty inner
  // dimension, and Armadillo's diagmat of an empty vector binds a reference to its null memory.
  if (s_.n_elem == 0) {
    beta_.zeros(n_features(), y_.n_cols);
    fitted_.zeros(n_obs(), y_.n_cols);
  } else {
    beta_ = V_ * (Uty_.each_col() % gain());
    // Weighted: U carries W^{1/2}; the scores Z = (X - x_bar) V give every row (weight 0 too).
    fitted_ = w_.is_empty() ? arma::mat(U_ * (Uty_.each_col() % phi))
                            : arma::mat(Z_ * (Uty_.each_col() % gain()));
  }
  fitted_.each_row() += y_mean_;
  fitted_flag_ = true;
}

arma::mat SpectralLS::coefficients() const {
  require_fitted("coefficients");
  const arma::uword p = n_features(), k = y_.n_cols;
  if (!intercept_) return beta_;
  arma::mat c(p + 1, k);
  c.row(0) = y_mean_ - x_mean_ * beta_;
  if (p) c.rows(1, p) = beta_;
  return c;
}

arma::mat SpectralLS::predict(const arma::mat& X_new) const {
  check_new_x(X_new, "predict");
  arma::mat out = (X_new.each_row() - x_mean_) * beta_;
  out.each_row() += y_mean_;
  return out;
}

arma::mat SpectralLS::attention_weights(const arma::mat& X_new) const {
  arma::mat out;
  attention_weights(X_new, out);
  return out;
}

void SpectralLS::attention_weights(const arma::mat& X_new, arma::mat& out) const {
  check_new_x(X_new, "attention_weights");
  arma::mat G = (X_new.each_row() - x_mean_) * V_;  // m x r
  G.each_row() %= gain().t();
  out.set_size(X_new.n_rows, n_obs());
  if (w_.is_empty()) {
    lapack::gemm_nt_streamed(G, U_, out, intercept_ ? 1.0 / static_cast<double>(n_obs()) : 0.0,
                             n_threads_);
    return;
  }
  // a(x) = w'/sum(w) + (x - x_bar)' V diag(phi/s) U' W^{1/2}.
  lapack::gemm_nt_streamed(G, U_, out, 0.0, n_threads_);
  out.each_row() %= arma::sqrt(w_).t();
  if (intercept_) out.each_row() += (w_ / total_weight()).t();
}

arma::mat SpectralLS::factors(const arma::mat& X_new) const {
  check_new_x(X_new, "factors");
  const arma::vec phi = filter();
  const arma::uvec act = arma::find(phi > 0.0);
  arma::mat F = (X_new.each_row() - x_mean_) * V_.cols(act);
  F.each_row() %= (arma::sqrt(phi(act)) / s_(act)).t();
  if (intercept_) {
    F = arma::join_horiz(arma::mat(X_new.n_rows, 1,
                                   arma::fill::value(1.0 / std::sqrt(total_weight()))),
                         F);
  }
  return F;
}

arma::mat SpectralLS::training_factors() const {
  require_fitted("training_factors");
  const arma::vec phi = filter();
  const arma::uvec act = arma::find(phi > 0.0);
  arma::mat F = U_.cols(act);
  F.each_row() %= arma::sqrt(phi(act)).t();
  if (w_.is_empty()) {
    if (intercept_) {
      F = arma::join_horiz(
          arma::mat(n_obs(), 1, arma::fill::value(1.0 / std::sqrt(static_cast<double>(n_obs())))), F);
    }
    return F;
  }
  // Weighted: the keys carry W^{1/2} (so that F_test F_train' = A), the constant w / sqrt(sum w).
  F.each_col() %= arma::sqrt(w_);
  if (intercept_) F = arma::join_horiz(w_ / std::sqrt(total_weight()), F);
  return F;
}

arma::mat SpectralLS::embedding() const {
  require_fitted("embedding");
  const arma::uword p = n_features();
  const arma::vec phi = filter();
  arma::mat C(p, p, arma::fill::zeros);
  if (V_.n_cols) {
    arma::mat Vw = V_;
    Vw.each_row() %= (gain() / s_).t();  // phi / s^2 without forming s^2
    C = Vw * V_.t();
  }
  const double w0 = null_space_weight();
  if (w0 > 0.0) C += w0 * (arma::eye(p, p) - V_ * V_.t());
  if (!intercept_) return C;
  // Block inverse of [[n, n x_bar'], [n x_bar, X'X + lambda I]] (intercept unpenalised); with
  // weights n is sum(w) and the cross-products are weighted.
  const double n = total_weight();
  arma::mat O(p + 1, p + 1);
  const arma::vec Cx = C * x_mean_.t();
  O(0, 0) = 1.0 / n + arma::dot(x_mean_, Cx);
  if (p) {
    O.submat(1, 0, p, 0) = -Cx;
    O.submat(0, 1, 0, p) = -Cx.t();
    O.submat(1, 1, p, p) = C;
  }
  return O;
}

arma::vec SpectralLS::hat_diagonal() const {
  require_fitted("hat_diagonal");
  const arma::vec phi = filter();
  arma::vec h = arma::square(U_) * phi;
  if (U_.n_cols == 0) h.zeros(n_obs());
  if (intercept_) {
    if (w_.is_empty()) {
      h += 1.0 / static_cast<double>(n_obs());
    } else {
      h += w_ / total_weight();
    }
  }
  return h;
}

double SpectralLS::effective_df() const {
  require_fitted("effective_df");
  return arma::accu(filter()) + (intercept_ ? 1.0 : 0.0);
}

SpectralState SpectralLS::state() const {
  require_fitted("state");
  SpectralState st;
  st.fit_intercept = intercept_;
  st.x_mean = x_mean_;
  st.y_mean = y_mean_;
  st.U = U_;
  st.s = s_;
  st.V = V_;
  st.y = y_;
  st.weights = w_;
  st.Z = Z_;
  return st;
}

void SpectralLS::restore(const SpectralState& st) {
  const arma::uword r = st.s.n_elem;
  check::require(st.U.n_cols == r && st.V.n_cols == r && st.V.n_rows == st.x_mean.n_elem &&
                     st.U.n_rows == st.y.n_rows && st.y.n_cols == st.y_mean.n_elem &&
                     st.y.n_cols >= 1,
                 "state", "inconsistent Ridge/PCR state (was it produced by this version?)");
  intercept_ = st.fit_intercept;
  x_mean_ = st.x_mean;
  y_mean_ = st.y_mean;
  U_ = st.U;
  s_ = st.s;
  V_ = st.V;
  y_ = st.y;
  check::require(st.weights.is_empty() ||
                     (st.weights.n_elem == st.y.n_rows && st.Z.n_rows == st.y.n_rows &&
                      st.Z.n_cols == r),
                 "state", "inconsistent weighted Ridge/PCR state (weights or scores missing)");
  w_ = st.weights;
  Z_ = st.Z;
  arma::mat Yc = intercept_ ? arma::mat(y_.each_row() - y_mean_) : y_;
  if (!w_.is_empty()) Yc.each_col() %= arma::sqrt(w_);
  Uty_ = U_.t() * Yc;
}

namespace {
void refuse_weighted(const arma::vec& w, const char* what) {
  if (!w.is_empty()) {
    throw InvalidArgument(std::string(what) +
                          ": masked (causal) attention is defined for unweighted fits only; "
                          "refit without weights");
  }
}
}  // namespace

arma::mat SpectralLS::masked_predictions(bool strict) const {
  require_fitted("masked_predictions");
  refuse_weighted(w_, "masked_predictions");
  return masked_attention_predict(training_factors(), y_, strict);
}

arma::mat SpectralLS::masked_weights(bool strict) const {
  require_fitted("masked_weights");
  refuse_weighted(w_, "masked_weights");
  return masked_attention_weights(training_factors(), strict);
}

// ------------------------------------------------------------------------------ Ridge

RidgeCriterion parse_ridge_criterion(const std::string& name) {
  const std::string s = detail::lower_case(name);
  if (s == "loo" || s == "cv" || s == "loocv") return RidgeCriterion::LOO;
  if (s == "gcv") return RidgeCriterion::GCV;
  if (s == "aicc" || s == "aic") return RidgeCriterion::AICc;
  throw InvalidArgument("cv: unknown criterion '" + name + "' (use \"loo\", \"gcv\" or \"aicc\")");
}

arma::vec Ridge::filter() const { return ridge_phi(s_, opt_.lambda); }

arma::vec Ridge::gain() const { return ridge_gain(s_, opt_.lambda); }

double Ridge::null_space_weight() const { return opt_.lambda > 0.0 ? 1.0 / opt_.lambda : 0.0; }

Ridge& Ridge::fit(const arma::mat& X, const arma::mat& Y, const arma::vec& weights) {
  check_lambda(opt_.lambda);
  if (!weights.is_empty() && opt_.weight_type == WeightType::Frequency) {
    check_frequency_weights(weights);
  }
  decompose(X, Y, opt_.fit_intercept, opt_.n_threads, weights);
  weight_type_ = opt_.weight_type;
  refresh_fit();
  return *this;
}

void Ridge::set_lambda(double lambda) {
  require_fitted("set_lambda");
  check_lambda(lambda);
  opt_.lambda = lambda;
  refresh_fit();
}

arma::cube Ridge::path(const arma::vec& lambdas) const {
  require_fitted("path");
  const arma::uword p = n_features(), k = y_.n_cols, q = p + (intercept_ ? 1 : 0);
  arma::cube out(q, k, lambdas.n_elem);
  for (arma::uword g = 0; g < lambdas.n_elem; ++g) {
    check_lambda(lambdas(g));
    arma::mat b(p, k, arma::fill::zeros);
    if (s_.n_elem) b = V_ * (Uty_.each_col() % ridge_gain(s_, lambdas(g)));
    if (intercept_) {
      out.slice(g).row(0) = y_mean_ - x_mean_ * b;
      if (p) out.slice(g).rows(1, p) = b;
    } else {
      out.slice(g) = b;
    }
  }
  return out;
}

arma::mat Ridge::loo_predictions() const {
  require_fitted("loo_predictions");
  const arma::vec h = hat_diagonal();
  return ls_detail::loo_from_leverages(y_, residuals(), h);
}

Ridge Ridge::from_state(const RidgeOptions& options, const SpectralState& state) {
  check_lambda(options.lambda);
  Ridge r(options);
  r.restore(state);
  r.opt_.fit_intercept = state.fit_intercept;
  r.weight_type_ = options.weight_type;
  r.refresh_fit();
  return r;
}

RidgeSelection Ridge::fit_select(const arma::mat& X, const arma::mat& Y, const arma::vec& lambdas,
                                 RidgeCriterion criterion, const arma::vec& weights) {
  check::require(lambdas.n_elem >= 1, "alpha", "the grid of penalties is empty");
  for (arma::uword g = 0; g < lambdas.n_elem; ++g) check_lambda(lambdas(g));
  if (!weights.is_empty() && opt_.weight_type == WeightType::Frequency) {
    check_frequency_weights(weights);
  }
  decompose(X, Y, opt_.fit_intercept, opt_.n_threads, weights);
  weight_type_ = opt_.weight_type;
  const arma::uword n = n_obs(), k = y_.n_cols, G = lambdas.n_elem, r = s_.n_elem;
  const bool weighted = !w_.is_empty();
  // n of the criteria: the number of rows, or sum(w) with weights (rows counted w_i times).
  const double dn = total_weight();
  arma::mat Phi(r, G);  // phi_jg
  for (arma::uword g = 0; g < G; ++g) Phi.col(g) = ridge_phi(s_, lambdas(g));
  arma::mat Gain;  // weighted: gain_jg = phi_jg / s_j, applied to the unweighted scores Z
  if (weighted) {
    Gain.set_size(r, G);
    for (arma::uword g = 0; g < G; ++g) Gain.col(g) = ridge_gain(s_, lambdas(g));
  }
  RidgeSelection sel;
  sel.lambdas = lambdas;
  sel.criterion = criterion;
  sel.effective_df = arma::sum(Phi, 0).t() + (intercept_ ? 1.0 : 0.0);
  if (r == 0) sel.effective_df.fill(intercept_ ? 1.0 : 0.0);

  // One blocked pass: residuals and leverages for every lambda via GEMMs on row blocks.
  arma::mat rss(G, k, arma::fill::zeros), loo(G, k, arma::fill::zeros);
  InterruptGuard guard;
  const arma::mat Yc = Y.each_row() - y_mean_;
  for (arma::uword i0 = 0; i0 < n; i0 += kRowBlock) {
    if (guard.poll()) break;
    const arma::uword i1 = std::min(n, i0 + kRowBlock);
    const arma::mat Ub = U_.rows(i0, i1 - 1);
    arma::mat Hb = r ? arma::mat(arma::square(Ub) * Phi) : arma::mat(i1 - i0, G, arma::fill::zeros);
    arma::vec wb;
    if (weighted) wb = w_.rows(i0, i1 - 1);
    if (intercept_) {
      if (weighted) {
        Hb.each_col() += wb / dn;
      } else {
        Hb += 1.0 / dn;
      }
    }
    for (arma::uword c = 0; c < k; ++c) {
      arma::mat Eb(i1 - i0, G, arma::fill::zeros);
      if (r && weighted) {
        Eb = -(Z_.rows(i0, i1 - 1) * (Gain.each_col() % Uty_.col(c)));
      } else if (r) {
        Eb = -(Ub * (Phi.each_col() % Uty_.col(c)));
      }
      Eb.each_col() += Yc.col(c).rows(i0, i1 - 1);
      arma::mat Lb = arma::square(Eb / (1.0 - Hb));
      Eb = arma::square(Eb);
      if (weighted) {
        Eb.each_col() %= wb;
        Lb.each_col() %= wb;
        // A row of weight 0 has leverage 0 and contributes nothing (0 * finite).
      }
      rss.col(c) += arma::sum(Eb, 0).t();
      loo.col(c) += arma::sum(Lb, 0).t();
    }
  }
  guard.rethrow_if_interrupted();
  sel.loo_mse = arma::sum(loo, 1) / (dn * k);
  sel.gcv.set_size(G);
  sel.aicc.set_size(G);
  for (arma::uword g = 0; g < G; ++g) {
    const double tr = sel.effective_df(g);
    double gcv = 0.0, aicc = 0.0;
    for (arma::uword c = 0; c < k; ++c) {
      gcv += tr < dn ? dn * rss(g, c) / ((dn - tr) * (dn - tr)) : arma::datum::inf;
      aicc += (tr + 2.0) < dn
                  ? std::log(rss(g, c) / dn) + (1.0 + tr / dn) / (1.0 - (tr + 2.0) / dn)
                  : arma::datum::inf;
    }
    sel.gcv(g) = gcv;
    sel.aicc(g) = aicc;
  }
  const arma::vec& crit = criterion == RidgeCriterion::LOO   ? sel.loo_mse
                          : criterion == RidgeCriterion::GCV ? sel.gcv
                                                              : sel.aicc;
  arma::uword best = 0;
  bool found = false;
  for (arma::uword g = 0; g < G; ++g) {
    if (std::isnan(crit(g))) continue;
    if (!found || crit(g) < crit(best)) {
      best = g;
      found = true;
    }
  }
  if (!found) {
    throw NumericalError("alpha: the selection criterion is undefined for every penalty of the "
                         "grid (too few rows for the effective degrees of freedom?)");
  }
  sel.best = best;
  opt_.lambda = lambdas(best);
  refresh_fit();
  return sel;
}

// ------------------------------------------------------------------------------ PCR

arma::vec PCR::filter() const {
  arma::vec phi(s_.n_elem, arma::fill::zeros);
  const auto L = static_cast<arma::uword>(std::max(0, used_));
  if (L > 0) phi.head(std::min(L, phi.n_elem)).ones();
  return phi;
}

PCR& PCR::fit(const arma::mat& X, const arma::mat& Y, const arma::vec& weights) {
  if (opt_.rank < -1) {
    throw InvalidArgument("rank: the number of principal components must be >= 0 (or -1 for "
                          "all), got " + std::to_string(opt_.rank));
  }
  if (!weights.is_empty() && opt_.weight_type == WeightType::Frequency) {
    check_frequency_weights(weights);
  }
  decompose(X, Y, opt_.fit_intercept, opt_.n_threads, weights);
  weight_type_ = opt_.weight_type;
  used_ = opt_.rank < 0 ? static_cast<int>(s_.n_elem) : opt_.rank;
  if (static_cast<arma::uword>(used_) > s_.n_elem) {
    fitted_flag_ = false;
    std::ostringstream msg;
    msg << "rank: " << opt_.rank << " components requested but the "
        << (intercept_ ? "centred " : "") << "design has numerical rank " << s_.n_elem
        << (n_obs() == 1 ? " (1 sample)" : "") << "; choose rank <= " << s_.n_elem;
    throw InvalidArgument(msg.str());
  }
  refresh_fit();
  return *this;
}

PCR PCR::from_state(const PCROptions& options, const SpectralState& state) {
  PCR m(options);
  m.restore(state);
  m.opt_.fit_intercept = state.fit_intercept;
  m.weight_type_ = options.weight_type;
  m.used_ = options.rank < 0 ? static_cast<int>(state.s.n_elem) : options.rank;
  check::require(options.rank >= -1 && static_cast<arma::uword>(m.used_) <= state.s.n_elem, "rank",
                 "exceeds the components stored in the saved state");
  m.refresh_fit();
  return m;
}

arma::vec PCR::explained_variance_ratio() const {
  require_fitted("explained_variance_ratio");
  const auto L = static_cast<arma::uword>(used_);
  if (L == 0 || s_.n_elem == 0) return arma::vec();
  const arma::vec s2 = arma::square(s_ / s_(0));  // relative to s_1: no overflow at any scale
  const double tot = arma::accu(s2);
  if (tot == 0.0) return arma::vec();
  return s2.head(L) / tot;
}

}  // namespace attnreg
