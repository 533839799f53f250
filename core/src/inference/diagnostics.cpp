// attnreg: bias-variance diagnostics and inference for linear smoothers (see diagnostics.hpp).
#include "attnreg/inference/diagnostics.hpp"
#include "attnreg/base/constants.hpp"
#include "attnreg/inference/distributions.hpp"
#include "attnreg/inference/nn_variance.hpp"
#include "attnreg/kernels/distinct_rows.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "attnreg/base/error.hpp"
#include "attnreg/base/runtime.hpp"
#include "attnreg/bandwidth/criteria.hpp"
#include "attnreg/bandwidth/dpi_bandwidth.hpp"
#include "attnreg/detail/diagnostics_checks.hpp"

namespace attnreg {

using detail::check_level;
using detail::one_continuous;
using detail::output_column;

namespace {



// The pilot fit's coefficient weights (pilot_coefficient_weights) depend on the training x,
// the sample weights, the kernel, the eval rows and the pilot's degree and bandwidth, but not on
// the model's bandwidth: tradeoff_curve computes them once per call and every bandwidth of its
// grid reuses them (the same matrices, so the same numbers as computing them each time).
struct PilotCache {
  int degree = -1;
  double bandwidth = 0;
  arma::vec x_eval;
  std::vector<arma::mat> G;
};

}  // namespace

int default_pilot_degree(int p) { return std::max(p + 1, 2); }

GlobalDiagnostics global_diagnostics(const LocalPolynomial& model, arma::uword output) {
  check::require(model.is_fitted(), "model", "is not fitted; call fit() first");
  const arma::vec y = output_column(model.training_y(), output, "global_diagnostics");
  const arma::vec fit = output_column(model.fitted(), output, "global_diagnostics");
  const arma::mat& X = model.training_x();
  const arma::uword n = X.n_rows;
  GlobalDiagnostics g;
  g.n = static_cast<double>(n);
  g.trace_L = model.effective_df();
  g.trace_LtL = model.trace_LtL();  // over the distinct rows (local_fit.hpp, "Ties")
  g.residual_df = criteria::residual_df(g.n, g.trace_L, g.trace_LtL);
  const arma::vec e = y - fit;
  g.rss = arma::dot(e, e);
  g.sigma2 = g.residual_df > 0 ? g.rss / g.residual_df : kNaN;
  const double tss = arma::accu(arma::square(y - arma::mean(y)));
  g.r_squared = tss > 0 ? 1 - g.rss / tss : kNaN;
  try {
    const arma::vec loo = output_column(model.loo_fitted(), output, "global_diagnostics");
    g.cv = criteria::loo_mean_square(y, loo, arma::vec());
  } catch (const NumericalError&) {
    g.cv = std::numeric_limits<double>::infinity();
  }
  const criteria::FitSums sums{g.rss, g.n, g.n, g.trace_L};  // criteria.hpp
  g.gcv = criteria::gcv(sums);
  g.aicc = criteria::aicc(sums);
  return g;
}

std::vector<arma::mat> pilot_coefficient_weights(const arma::vec& x_train, const arma::vec& x_eval,
                                                 const Kernel& kernel, int degree, double b,
                                                 const arma::vec& sample_weight) {
  check::require(degree >= 1 && degree <= 6, "pilot_degree", "must be between 1 and 6");
  kernel.require_nonnegative("the plug-in pilot fit");
  check::require(std::isfinite(b) && b > 0, "pilot_bandwidth", "must be a positive number");
  const arma::uword n = x_train.n_elem, m = x_eval.n_elem;
  const arma::uword q1 = static_cast<arma::uword>(degree) + 1;
  check::require(sample_weight.is_empty() || sample_weight.n_elem == n, "sample_weight",
                 "must have one weight per training row");
  std::vector<arma::mat> G(q1, arma::mat(m, n, arma::fill::zeros));
  // Tied training values share their design row and kernel weight: the least squares runs
  // over the distinct values with the group's total weight A_h, and row i of group h gets the
  // group's coefficient weight times a_i / A_h (distinct_rows.hpp).
  const DistinctRows grp = distinct_rows(arma::mat(x_train));
  const arma::uword nd = grp.X.n_rows;
  const arma::vec xu = grp.X.col(0);
  arma::vec A(nd, arma::fill::zeros), share(n);
  for (arma::uword i = 0; i < n; ++i)
    A(grp.group_of[i]) += sample_weight.is_empty() ? 1.0 : sample_weight(i);
  for (arma::uword i = 0; i < n; ++i) {
    const double a = sample_weight.is_empty() ? 1.0 : sample_weight(i), s = A(grp.group_of[i]);
    share(i) = s > 0 ? a / s : 0.0;
  }
  arma::mat Z(nd, q1);
  arma::vec sw(nd);
  for (arma::uword j = 0; j < m; ++j) {
    const double x0 = x_eval(j);
    double wmax = 0;
    for (arma::uword i = 0; i < nd; ++i) {
      const double u = (xu(i) - x0) / b;
      const double w = kernel.shape(u) * A(i);
      sw(i) = w;
      wmax = std::max(wmax, w);
      double p = 1;
      for (arma::uword k = 0; k < q1; ++k) {
        Z(i, k) = p;
        p *= u;
      }
    }
    if (!(wmax > KernelSpace::kTinyWeight))
      throw NumericalError("pilot_bandwidth: the pilot fit of degree " + std::to_string(degree) +
                           " at x = " + std::to_string(x0) +
                           " has no training point with a positive kernel weight; use a larger "
                           "pilot_bandwidth");
    // Weighted least squares by thin QR of sqrt(w) Z: beta = R^{-1} Q' sqrt(w) y, so the
    // coefficient weights are R^{-1} Q' diag(sqrt(w)).
    const arma::vec sq = arma::sqrt(sw / wmax);
    const arma::mat Zw = Z.each_col() % sq;
    arma::mat Q, R;
    if (!arma::qr_econ(Q, R, Zw))
      throw NumericalError("pilot_bandwidth: QR of the pilot design failed");
    const double rmax = arma::abs(R.diag()).max();
    if (!(arma::abs(R.diag()).min() > 1e-10 * std::max(rmax, 1.0)))
      throw NumericalError("pilot_bandwidth: the pilot local polynomial of degree " +
                           std::to_string(degree) + " at x = " + std::to_string(x0) +
                           " is singular (fewer than " + std::to_string(q1) +
                           " distinct training points carry weight); use a larger "
                           "pilot_bandwidth or a lower pilot_degree");
    const arma::mat C = arma::solve(arma::trimatu(R), Q.t());  // q1 x nd
    const arma::mat Cw = C.each_row() % sq.t();
    for (arma::uword k = 0; k < q1; ++k)
      for (arma::uword i = 0; i < n; ++i) G[k](j, i) = Cw(k, grp.group_of[i]) * share(i);
  }
  return G;
}

namespace {

arma::mat bias_weights_cached(const LocalPolynomial& model, const arma::mat& X_eval,
                              int pilot_degree, double pilot_bandwidth, PilotCache* cache) {
  check::require(one_continuous(model), "model",
                 "the bias estimate needs exactly one continuous regressor");
  const int p = model.options().degree;
  const int q = pilot_degree < 0 ? default_pilot_degree(p) : pilot_degree;
  check::require(q > p, "pilot_degree",
                 "must exceed the model's degree " + std::to_string(p) + " (got " +
                     std::to_string(q) + ")");
  const double b = pilot_bandwidth > 0 ? pilot_bandwidth : model.bandwidth()(0);
  check::require(std::isfinite(b) && pilot_bandwidth >= 0, "pilot_bandwidth",
                 "must be a positive number (or 0 for the model's bandwidth)");
  const arma::vec xt = model.training_x().col(0);
  const arma::vec xe = X_eval.col(0);
  const arma::vec& sw = model.sample_weight();
  std::vector<arma::mat> own;
  const bool hit = cache != nullptr && cache->degree == q && cache->bandwidth == b &&
                   cache->x_eval.n_elem == xe.n_elem && arma::all(cache->x_eval == xe);
  if (!hit) own = pilot_coefficient_weights(xt, xe, model.options().kernel.kernel, q, b, sw);
  if (cache != nullptr && !hit) {
    cache->degree = q;
    cache->bandwidth = b;
    cache->x_eval = xe;
    cache->G = std::move(own);
  }
  const std::vector<arma::mat>& G = cache != nullptr ? cache->G : own;
  const arma::mat L = model.attention_weights(X_eval);  // m x n
  arma::mat B(X_eval.n_rows, xt.n_elem, arma::fill::zeros);
  for (arma::uword j = 0; j < X_eval.n_rows; ++j) {
    const arma::rowvec u = (xt.t() - xe(j)) / b;
    arma::rowvec uk = arma::pow(u, p + 1);
    for (int k = p + 1; k <= q; ++k) {
      // moment sum_i l_i(x) u_i^k times beta_k (in u units: beta_k = b^k m^{(k)}/k!).
      const double moment = arma::dot(L.row(j), uk);
      B.row(j) += moment * G[static_cast<std::size_t>(k)].row(j);
      uk %= u;
    }
  }
  return B;
}

}  // namespace

arma::mat bias_weights(const LocalPolynomial& model, const arma::mat& X_eval, int pilot_degree,
                       double pilot_bandwidth) {
  return bias_weights_cached(model, X_eval, pilot_degree, pilot_bandwidth, nullptr);
}


namespace {

// nn: nprobust's lprobust computes the nearest-neighbour residuals of each evaluation point
// among the observations of its window (those with a non-zero weight in the fit or in the
// bias correction), so omega depends on the point: Omega (m x n). Several regressors: the
// neighbours in d dimensions (nn_variance.hpp), cells of equal categorical values.
arma::mat nn_omega(const LocalPolynomial& model, const arma::vec& y, const arma::mat& L,
                   const arma::mat& B) {
  const arma::mat& X = model.training_x();
  const bool one = one_continuous(model);
  const std::vector<std::size_t>& cc = model.space().continuous_columns();
  const std::vector<std::size_t>& ca = model.space().categorical_columns();
  const arma::uvec ucc = arma::conv_to<arma::uvec>::from(cc);
  const arma::mat Xc = X.cols(ucc);
  const arma::vec h = arma::vec(model.bandwidth())(ucc);
  arma::uvec cell(X.n_rows, arma::fill::zeros);
  if (!ca.empty())
    cell = arma::conv_to<arma::uvec>::from(
        distinct_rows(arma::mat(X.cols(arma::conv_to<arma::uvec>::from(ca)))).group_of);
  arma::mat Omega(L.n_rows, X.n_rows, arma::fill::zeros);
  for (arma::uword j = 0; j < L.n_rows; ++j) {
    arma::rowvec inside = arma::abs(L.row(j));
    if (!B.is_empty()) inside += arma::abs(B.row(j));
    arma::uvec idx = arma::find(inside > 0);
    if (idx.n_elem < 2) idx = arma::regspace<arma::uvec>(0, X.n_rows - 1);
    arma::vec om;
    if (one) {
      om = nn_residual_variance(arma::vec(X.col(0))(idx), y(idx), kNnMatch);
    } else {
      const arma::uvec cj = cell(idx);
      std::vector<arma::uword> per(cell.max() + 1, 0);
      for (arma::uword c : cj) ++per[c];
      for (arma::uword k = 0; k < idx.n_elem; ++k)
        if (per[cj(k)] < 2)
          throw NumericalError("kind: 'nn' (nearest-neighbour residuals) matches exactly on the "
                               "categorical columns, but training row " +
                               std::to_string(idx(k) + 1) + " is the only one with its "
                               "categorical values in the window of evaluation row " +
                               std::to_string(j + 1) + "; use 'hc3'");
      om = nn_residual_variance(arma::mat(Xc.rows(idx)), h, cj, y(idx), kNnMatch);
    }
    for (arma::uword k = 0; k < idx.n_elem; ++k) Omega(j, idx(k)) = om(k);
  }
  return Omega;
}

// Sigma = W Omega W' of the smoother rows W for the variance kind (cr1: from the cluster sums).
// With training groups (several regressors) and a per-row omega, over the distinct rows:
// W(x, i) = share_i Wg(x, g) gives W Omega W' = Wg diag(sum_{i in g} share_i^2 omega_i) Wg'.
arma::mat smoother_covariance(const LocalPolynomial& model, const PointwiseOptions& opt,
                              arma::uword output, const GlobalDiagnostics& g,
                              const arma::mat& Omega, const arma::mat& W,
                              const TrainingGroups* groups, const arma::uvec* need) {
  if (opt.kind == VarianceKind::cr1) {
    const arma::vec e = output_column(model.residuals(), output, "cr1");
    std::map<long long, arma::uword> index;
    for (long long c : opt.cluster) index.emplace(c, index.size());
    arma::mat S(W.n_rows, index.size(), arma::fill::zeros);
    for (arma::uword i = 0; i < e.n_elem; ++i) S.col(index[opt.cluster[i]]) += W.col(i) * e(i);
    const double dn = static_cast<double>(e.n_elem), G = static_cast<double>(index.size());
    return (G / (G - 1)) * ((dn - 1) / (dn - g.trace_L)) * (S * S.t());
  }
  arma::mat F;
  if (opt.kind == VarianceKind::nn || opt.kind == VarianceKind::local) {
    F = W % arma::sqrt(Omega);
  } else if (groups != nullptr) {
    const arma::vec omega = variance_omega(model, opt.kind, g.sigma2, g.trace_L, output, need);
    arma::vec og(groups->X.n_rows, arma::fill::zeros);
    for (arma::uword i = 0; i < omega.n_elem; ++i)
      og(groups->group_of(i)) += groups->share(i) * groups->share(i) * omega(i);
    F = group_sums(W, *groups).each_row() % arma::sqrt(og).t();
  } else {
    const arma::vec omega = variance_omega(model, opt.kind, g.sigma2, g.trace_L, output, need);
    F = W.each_row() % arma::sqrt(omega).t();
  }
  return F * F.t();
}

// Uniform bands over the evaluation rows: critical values of the smoother L and, when a bias
// row B exists, of the bias-corrected smoother L - B, by the wild bootstrap-t (WildTBands; one
// set of draws for both) or the Gaussian sup-t of the estimated covariance
// (sup_t_critical_value); UniformMethod says which.
void add_uniform_bands(PointwiseDiagnostics& r, const LocalPolynomial& model,
                       const PointwiseOptions& opt, arma::uword output,
                       const GlobalDiagnostics& g, const arma::mat& Omega, const arma::mat& L,
                       const arma::mat* B, const TrainingGroups* groups,
                       const arma::uvec* need) {
  UniformMethod method = opt.uniform_method;
  if (method == UniformMethod::automatic)
    method = opt.kind == VarianceKind::nn || opt.kind == VarianceKind::homoskedastic ||
                     opt.kind == VarianceKind::local
                 ? UniformMethod::gaussian
                 : UniformMethod::wild_t;
  if (method == UniformMethod::wild_t) {
    try {
      const WildTBands wild(model, opt.kind, opt.cluster, output, g.residual_df);
      arma::mat Lbc;
      std::vector<const arma::mat*> Ws{&L};
      if (B != nullptr) {
        Lbc = L - *B;
        Ws.push_back(&Lbc);
      }
      const arma::vec c = wild.critical_values(Ws, opt.level, opt.uniform_replications, opt.seed);
      r.crit_uniform = c(0);
      r.crit_uniform_bc = B != nullptr ? c(1) : kNaN;
    } catch (const WildTTooLarge& e) {
      if (opt.uniform_method != UniformMethod::automatic) throw;
      method = UniformMethod::gaussian;
      r.uniform_note = std::string("uniform_method 'auto' used the Gaussian sup-t: ") + e.what();
    }
  }
  r.uniform_method = uniform_method_name(method);
  if (method == UniformMethod::gaussian) {
    r.crit_uniform =
        sup_t_critical_value(smoother_covariance(model, opt, output, g, Omega, L, groups, need),
                             opt.level, opt.uniform_replications, opt.seed);
    if (B != nullptr)
      r.crit_uniform_bc =
          sup_t_critical_value(
              smoother_covariance(model, opt, output, g, Omega, L - *B, groups, need),
                               opt.level, opt.uniform_replications, opt.seed);
  }
  r.uniform_low = r.fit - r.crit_uniform * r.se;
  r.uniform_high = r.fit + r.crit_uniform * r.se;
  if (B != nullptr) {
    r.uniform_rbc_low = r.fit_bc - r.crit_uniform_bc * r.se_bc;
    r.uniform_rbc_high = r.fit_bc + r.crit_uniform_bc * r.se_bc;
  } else {
    r.uniform_rbc_low = r.uniform_rbc_high = arma::vec(r.fit.n_elem, arma::fill::value(kNaN));
  }
}

// local: sigma^2(x) from the residuals of a local polynomial of the pilot's degree in the fit's
// window, and (crit) the finite-sample critical values of L and (when there is one) L - B
// (local_residual_variance).
LocalVariance local_variance_of(const LocalPolynomial& model, const arma::mat& X_eval,
                                const PointwiseOptions& opt, arma::uword output,
                                const arma::mat& L, const arma::mat* Lbc, bool crit) {
  std::vector<const arma::mat*> Ws;
  if (crit) Ws.push_back(&L);
  if (crit && Lbc != nullptr) Ws.push_back(Lbc);
  const int q =
      opt.pilot_degree < 0 ? default_pilot_degree(model.options().degree) : opt.pilot_degree;
  return local_residual_variance(model, X_eval, output, q, Ws, opt.level);
}

// The diagnostics of the distinct rows copied to every row (group_of: each row's distinct row).
PointwiseDiagnostics spread_to_rows(PointwiseDiagnostics r,
                                    const std::vector<std::size_t>& group_of) {
  const arma::uvec idx = arma::conv_to<arma::uvec>::from(group_of);
  for (arma::vec* v : {&r.fit, &r.se, &r.bias, &r.mse, &r.ci_low, &r.ci_high, &r.fit_bc,
                       &r.se_bc, &r.rbc_low, &r.rbc_high, &r.crit, &r.crit_bc})
    *v = arma::vec(v->elem(idx));
  for (arma::vec* v : {&r.uniform_low, &r.uniform_high, &r.uniform_rbc_low, &r.uniform_rbc_high})
    if (!v->is_empty()) *v = arma::vec(v->elem(idx));
  return r;
}

PointwiseDiagnostics pointwise_cached(const LocalPolynomial& model, const arma::mat& X_eval,
                                      const PointwiseOptions& opt, arma::uword output,
                                      PilotCache* cache) {
  check::require(model.is_fitted(), "model", "is not fitted; call fit() first");
  check_level(opt.level);
  check::require(opt.pilot_bandwidth >= 0 && std::isfinite(opt.pilot_bandwidth),
                 "pilot_bandwidth", "must be a positive number (or 0 for the model's bandwidth)");
  check::require(X_eval.n_cols == model.training_x().n_cols, "X",
                 "has " + std::to_string(X_eval.n_cols) + " columns but the model was fitted on " +
                     std::to_string(model.training_x().n_cols));
  check::require(X_eval.is_finite(), "X", "contains NaN or Inf; remove or impute those rows");
  if (opt.kind == VarianceKind::cr1)
    check::require(!opt.cluster.empty(), "cluster", "kind 'cr1' needs cluster ids");
  // Repeated evaluation rows (e.g. the training rows of integer-valued regressors) have the
  // same diagnostics: compute them once per distinct row and copy (distinct_rows.hpp).
  {
    const DistinctRows ev = distinct_rows(X_eval);
    if (ev.has_ties())
      return spread_to_rows(pointwise_cached(model, ev.X, opt, output, cache), ev.group_of);
  }
  // Only the homoskedastic kind needs sigma^2 and so tr(L'L), an O(n^2) pass; tr(L) (hc1's and
  // cr1's n - tr L) needs every training row's own fit; hc0, hc2 and hc3 need the residuals and
  // leverages at the rows inside the evaluation points' windows only (variance_omega).
  GlobalDiagnostics g;
  g.trace_L = opt.kind == VarianceKind::hc1 || opt.kind == VarianceKind::cr1
                  ? model.effective_df()
                  : kNaN;
  g.sigma2 = kNaN;
  if (opt.kind == VarianceKind::homoskedastic) g = global_diagnostics(model, output);
  const arma::vec y = output_column(model.training_y(), output, "diagnostics");
  const arma::mat L = model.attention_weights(X_eval);
  PointwiseDiagnostics r;
  r.sigma2 = g.sigma2;
  r.z = normal_quantile(0.5 + opt.level / 2);
  r.fit = L * y;
  const arma::uword m = X_eval.n_rows;
  const bool uni = one_continuous(model);
  const bool multi = !uni && model.space().n_continuous() >= 1;
  check::require(opt.pilot_bandwidths.is_empty() || opt.pilot_bandwidths.n_elem == X_eval.n_cols,
                 "pilot_bandwidth",
                 "needs one value per column of X (" + std::to_string(X_eval.n_cols) + "), got " +
                     std::to_string(opt.pilot_bandwidths.n_elem));
  if (multi)
    check::require(opt.pilot_bandwidth == 0, "pilot_bandwidth",
                   "with " + std::to_string(X_eval.n_cols) + " columns give one pilot bandwidth "
                   "per column (a vector of length " + std::to_string(X_eval.n_cols) + ")");
  const double pb1 = uni && opt.pilot_bandwidths.n_elem == 1 ? opt.pilot_bandwidths(0)
                                                             : opt.pilot_bandwidth;
  // Several regressors: the pilot over the distinct training rows, with the fit's weights L.
  const TrainingGroups groups = multi ? training_groups(model) : TrainingGroups();
  const arma::mat B =
      uni     ? bias_weights_cached(model, X_eval, opt.pilot_degree, pb1, cache)
      : multi ? expand_groups(bias_weights_multivariate_grouped(model, X_eval, opt.pilot_degree,
                                                                opt.pilot_bandwidths, L, groups),
                              groups)
              : arma::mat();
  const arma::mat Lbc = (uni || multi) ? arma::mat(L - B) : arma::mat();
  const bool local = opt.kind == VarianceKind::local;
  const bool own_crit = opt.critical_value == CriticalValue::null ||
                        (opt.critical_value == CriticalValue::automatic && local);
  const LocalVariance lv =
      local ? local_variance_of(model, X_eval, opt, output, L, (uni || multi) ? &Lbc : nullptr,
                                own_crit)
            : LocalVariance();
  // Per-point omega (m x n): nn's neighbour residuals; local's sigma^2(x_j) in every column
  // of row j, so that both take the same paths below.
  const arma::mat Omega =
      opt.kind == VarianceKind::nn ? nn_omega(model, y, L, B)
      : local                      ? arma::repmat(lv.sigma2, 1, L.n_cols)
                                   : arma::mat();
  // the training rows with a weight at some evaluation point, in the fit or its bias
  arma::uvec need(L.n_cols, arma::fill::zeros);
  for (const arma::mat* M : {&L, &B})
    for (arma::uword i = 0; i < M->n_cols; ++i)
      if (arma::any(M->col(i) != 0)) need(i) = 1;
  auto variance_of = [&](const arma::mat& W) -> arma::vec {
    if (opt.kind == VarianceKind::cr1)
      return cluster_variance(W, output_column(model.residuals(), output, "cr1"), opt.cluster,
                              g.trace_L);
    if (opt.kind == VarianceKind::nn || local) return arma::sum(arma::square(W) % Omega, 1);
    const arma::vec omega = variance_omega(model, opt.kind, g.sigma2, g.trace_L, output, &need);
    return arma::square(W) * omega;
  };
  r.se = arma::sqrt(variance_of(L));
  std::vector<const arma::mat*> Ws{&L};
  if (uni || multi) {
    r.se_bc = arma::sqrt(variance_of(Lbc));
    Ws.push_back(&Lbc);
  }
  // the robust kinds' null quantiles after their variances (whose checks come first)
  const std::vector<arma::vec> crits = !own_crit || local ? lv.crit : robust_null_critical_values(
      model, X_eval, opt.kind, g.trace_L, Ws, opt.level);
  r.crit = own_crit ? crits[0] : arma::vec(m, arma::fill::value(r.z));
  r.ci_low = r.fit - r.crit % r.se;
  r.ci_high = r.fit + r.crit % r.se;
  if (uni || multi) {
    r.bias = B * y;
    r.fit_bc = Lbc * y;
    r.crit_bc = own_crit ? crits[1] : arma::vec(m, arma::fill::value(r.z));
    r.rbc_low = r.fit_bc - r.crit_bc % r.se_bc;
    r.rbc_high = r.fit_bc + r.crit_bc % r.se_bc;
  } else {
    r.bias = r.fit_bc = r.se_bc = r.rbc_low = r.rbc_high = r.crit_bc =
        arma::vec(m, arma::fill::value(kNaN));
    const std::size_t d = model.space().var_types().size();
    r.bias_note = "the bias, mse and robust bias-corrected (rbc) columns need at least one "
                  "continuous regressor (the pilot is a local polynomial in the continuous "
                  "columns); this fit has " +
                  std::to_string(d) + " regressor" + (d == 1 ? "" : "s") + ", none continuous";
  }
  r.mse = arma::square(r.bias) + arma::square(r.se);
  r.crit_uniform = r.crit_uniform_bc = kNaN;
  if (opt.uniform_replications > 0)
    add_uniform_bands(r, model, opt, output, g, Omega, L, (uni || multi) ? &B : nullptr,
                      multi ? &groups : nullptr, &need);
  return r;
}

}  // namespace

PointwiseDiagnostics pointwise_diagnostics(const LocalPolynomial& model, const arma::mat& X_eval,
                                           const PointwiseOptions& opt, arma::uword output) {
  return pointwise_cached(model, X_eval, opt, output, nullptr);
}

arma::mat tradeoff_curve(const arma::mat& X, const arma::vec& y, const arma::vec& bandwidths,
                         const LocalFitOptions& fit_options, const arma::mat& X_eval,
                         VarianceKind kind, int pilot_degree, double pilot_bandwidth) {
  check::require(!bandwidths.is_empty() && bandwidths.is_finite() && bandwidths.min() > 0,
                 "bandwidths", "must be a non-empty vector of positive numbers");
  check::require(kind != VarianceKind::cr1, "kind", "cr1 is not supported in trade-off curves");
  check::require(X.is_finite(), "X", "contains NaN or Inf");
  check::require(y.is_finite(), "y", "contains NaN or Inf");
  check::require(X_eval.is_finite(), "eval_points", "contains NaN or Inf");
  check::require(std::isfinite(pilot_bandwidth) && pilot_bandwidth >= 0, "pilot_bandwidth",
                 "must be a positive finite number (or unset for twice the rule of thumb), got " +
                     std::to_string(pilot_bandwidth));
  const std::string& types = fit_options.kernel.var_types;
  const bool uni = X.n_cols == 1 && (types.empty() || types == "c");
  const double b = pilot_bandwidth > 0 ? pilot_bandwidth
                   : uni ? 2 * rule_of_thumb_bandwidth(X.col(0), fit_options.kernel.kernel)
                         : 0;
  arma::mat out(bandwidths.n_elem, 7);
  InterruptGuard guard;
  PilotCache pilot;  // the pilot is fixed across the grid: computed at the first bandwidth
  for (arma::uword k = 0; k < bandwidths.n_elem; ++k) {
    if (guard.poll()) throw Interrupted();
    LocalFitOptions fo = fit_options;
    fo.compute_fitted = true;
    LocalPolynomial model(fo);
    model.fit(X, arma::mat(y), arma::vec(X.n_cols, arma::fill::value(bandwidths(k))));
    PointwiseOptions po;
    po.kind = kind;
    po.pilot_degree = pilot_degree;
    po.pilot_bandwidth = b;
    const PointwiseDiagnostics d = pointwise_cached(model, X_eval, po, 0, &pilot);
    const GlobalDiagnostics g = global_diagnostics(model);
    out(k, 0) = bandwidths(k);
    out(k, 1) = arma::mean(arma::square(d.bias));
    out(k, 2) = arma::mean(arma::square(d.se));
    out(k, 3) = out(k, 1) + out(k, 2);
    out(k, 4) = g.cv;
    out(k, 5) = g.gcv;
    out(k, 6) = g.trace_L;
  }
  return out;
}

MonteCarloSummary monte_carlo_from_predictions(const arma::mat& P, const arma::vec& truth) {
  check::require(P.n_rows == truth.n_elem, "truth",
                 "needs one value per evaluation point (" + std::to_string(P.n_rows) + "), got " +
                     std::to_string(truth.n_elem));
  check::require(P.n_cols >= 2, "Y_sim", "needs at least two replications (columns)");
  MonteCarloSummary s;
  const arma::vec mean = arma::mean(P, 1);
  s.bias = mean - truth;
  s.variance = arma::mean(arma::square(P.each_col() - mean), 1);
  s.mse = arma::square(s.bias) + s.variance;
  s.integrated_bias2 = arma::mean(arma::square(s.bias));
  s.integrated_variance = arma::mean(s.variance);
  s.integrated_mse = arma::mean(s.mse);
  return s;
}

MonteCarloSummary monte_carlo_summary(const arma::mat& W, const arma::mat& Y_sim,
                                      const arma::vec& truth) {
  check::require(W.n_cols == Y_sim.n_rows, "Y_sim",
                 "must have one row per training observation (" + std::to_string(W.n_cols) +
                     "), got " + std::to_string(Y_sim.n_rows));
  check::require(Y_sim.is_finite(), "Y_sim", "contains NaN or Inf");
  return monte_carlo_from_predictions(W * Y_sim, truth);
}

arma::vec loglog_slope(const arma::vec& n, const arma::vec& mse) {
  check::require(n.n_elem == mse.n_elem && n.n_elem >= 3, "mse",
                 "needs one value per sample size and at least three sample sizes");
  check::require(n.min() > 0 && mse.min() > 0, "mse", "sample sizes and MSEs must be positive");
  const arma::vec lx = arma::log(n), ly = arma::log(mse);
  const double mx = arma::mean(lx), my = arma::mean(ly);
  const double sxx = arma::accu(arma::square(lx - mx));
  check::require(sxx > 0, "n", "needs at least two distinct sample sizes");
  const double slope = arma::accu((lx - mx) % (ly - my)) / sxx;
  const double intercept = my - slope * mx;
  const arma::vec res = ly - intercept - slope * lx;
  const double s2 = arma::dot(res, res) / (static_cast<double>(n.n_elem) - 2);
  return arma::vec{slope, std::sqrt(s2 / sxx), intercept};
}

}  // namespace attnreg
