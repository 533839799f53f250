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

namespace attnreg {

namespace {


bool one_continuous(const LocalPolynomial& model) {
  return model.space().var_types().size() == 1 && model.space().n_continuous() == 1;
}

arma::vec output_column(const arma::mat& Y, arma::uword output, const char* what) {
  check::require(output < Y.n_cols, "output",
                 std::string("is ") + std::to_string(output) + " but the model has " +
                     std::to_string(Y.n_cols) + " output column(s) (" + what + ")");
  return Y.col(output);
}

void check_level(double level) {
  check::require(std::isfinite(level) && level > 0 && level < 1, "level",
                 "must be in (0, 1), e.g. 0.95");
}

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

VarianceKind variance_kind_from_name(const std::string& name, const std::string& arg) {
  std::string s;
  for (char ch : name) s += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (s == "const" || s == "homoskedastic" || s == "homoscedastic" || s == "iid")
    return VarianceKind::homoskedastic;
  if (s == "hc0") return VarianceKind::hc0;
  if (s == "hc1") return VarianceKind::hc1;
  if (s == "hc2") return VarianceKind::hc2;
  if (s == "hc3") return VarianceKind::hc3;
  if (s == "cr1" || s == "cluster") return VarianceKind::cr1;
  if (s == "nn") return VarianceKind::nn;
  throw InvalidArgument(arg + ": unknown variance kind '" + name +
                        "'; use one of 'const' (homoskedastic), 'hc0', 'hc1', 'hc2', 'hc3', "
                        "'cr1' (cluster-robust, needs cluster ids), 'nn' (nearest-neighbour "
                        "residuals)");
}

const char* variance_kind_name(VarianceKind k) {
  switch (k) {
    case VarianceKind::homoskedastic: return "const";
    case VarianceKind::hc0: return "hc0";
    case VarianceKind::hc1: return "hc1";
    case VarianceKind::hc2: return "hc2";
    case VarianceKind::hc3: return "hc3";
    case VarianceKind::cr1: return "cr1";
    case VarianceKind::nn: return "nn";
  }
  return "?";
}

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
  const arma::vec sw = model.state().sample_weight;
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

arma::mat bias_weights_multivariate(const LocalPolynomial& model, const arma::mat& X_eval,
                                    int pilot_degree, const arma::vec& pilot_bandwidths) {
  check::require(model.is_fitted(), "model", "is not fitted; call fit() first");
  const int p = model.options().degree;
  const std::size_t d = model.space().var_types().size();
  const std::vector<std::size_t>& cc = model.space().continuous_columns();
  const arma::uword dc = cc.size();
  check::require(dc >= 1, "model",
                 "the bias estimate needs at least one continuous regressor");
  check::require(p <= 1, "model",
                 "the bias estimate with several regressors covers local constant and local "
                 "linear fits (degree 0 or 1); this fit has degree " + std::to_string(p));
  check::require(pilot_degree == -1 || pilot_degree == 2, "pilot_degree",
                 "with several regressors the pilot is a local quadratic: use 2 (or the "
                 "default), got " + std::to_string(pilot_degree));
  check::require(pilot_bandwidths.is_empty() || pilot_bandwidths.n_elem == d, "pilot_bandwidth",
                 "needs one value per column of X (" + std::to_string(d) + "), got " +
                     std::to_string(pilot_bandwidths.n_elem));
  const arma::vec b = pilot_bandwidths.is_empty() ? arma::vec(model.bandwidth()) : pilot_bandwidths;
  check::require(b.is_finite() && b.min() >= 0, "pilot_bandwidth",
                 "must be finite and non-negative (positive for continuous columns)");
  for (std::size_t c : cc)
    check::require(b(c) > 0, "pilot_bandwidth",
                   "entry " + std::to_string(c + 1) + " (a continuous column) must be positive");
  check::require(X_eval.n_cols == d, "X",
                 "has " + std::to_string(X_eval.n_cols) + " columns but the model was fitted on " +
                     std::to_string(d));
  const arma::mat& Xt = model.training_x();
  const arma::uword n = Xt.n_rows, m = X_eval.n_rows;
  // A quadratic in direction c needs three distinct values of x_c.
  for (std::size_t c : cc) {
    const arma::vec u = arma::unique(Xt.col(c));
    check::require(u.n_elem >= 3, "X",
                   "column " + std::to_string(c + 1) + " has " + std::to_string(u.n_elem) +
                       " distinct value(s); the pilot local quadratic of the bias estimate "
                       "needs at least 3 in every continuous direction (declare the column "
                       "categorical)");
  }
  // Pilot kernel weights: those of a local-constant fit at b with the model's kernels, column
  // types and sample weights (row j of its attention weights is K_b(x_i - x_j) a_i / sum).
  LocalFitOptions fo = model.options();
  fo.degree = 0;
  fo.ridge = 0;
  fo.compute_fitted = false;
  LocalPolynomial nw(fo);
  arma::mat K;
  try {
    nw.fit(Xt, model.training_y(), b, model.state().sample_weight);
    K = nw.attention_weights(X_eval);
  } catch (const NumericalError& e) {
    throw NumericalError(std::string("pilot_bandwidth: the pilot local quadratic of the bias "
                                     "estimate has no kernel weight at an evaluation point (") +
                         e.what() + "); use a larger pilot_bandwidth");
  }
  const arma::mat L = model.attention_weights(X_eval);
  // Terms: 1, u_c (c in cc), u_c u_e (c <= e); bias terms are those of degree p+1..2.
  std::vector<std::pair<int, int>> terms;  // (-1,-1) = 1, (c,-1) = u_c, (c,e) = u_c u_e
  terms.emplace_back(-1, -1);
  for (arma::uword a = 0; a < dc; ++a) terms.emplace_back(static_cast<int>(a), -1);
  for (arma::uword a = 0; a < dc; ++a)
    for (arma::uword e = a; e < dc; ++e) terms.emplace_back(static_cast<int>(a), static_cast<int>(e));
  const arma::uword nt = terms.size();
  const arma::uword first = p == 0 ? 1 : 1 + dc;  // first bias term
  arma::mat B(m, n, arma::fill::zeros);
  arma::mat U(n, dc);
  for (arma::uword j = 0; j < m; ++j) {
    for (arma::uword a = 0; a < dc; ++a)
      U.col(a) = (Xt.col(cc[a]) - X_eval(j, cc[a])) / b(cc[a]);
    const arma::uvec idx = arma::find(K.row(j).t() > 0);
    auto point = [&]() {
      std::string s = "(";
      for (arma::uword c = 0; c < d; ++c) s += (c ? ", " : "") + std::to_string(X_eval(j, c));
      return s + ")";
    };
    if (idx.n_elem < nt)
      throw NumericalError("pilot_bandwidth: the pilot local quadratic at evaluation row " +
                           std::to_string(j + 1) + " x = " + point() + " has " +
                           std::to_string(idx.n_elem) + " training point(s) with weight, fewer "
                           "than its " + std::to_string(nt) + " coefficients; use a larger "
                           "pilot_bandwidth");
    const arma::vec w = K.row(j).t();
    const arma::vec sq = arma::sqrt(w(idx) / w(idx).max());
    arma::mat Z(idx.n_elem, nt);
    arma::mat Mfull(n, nt);  // every term at every training row, for the fit's moments
    for (arma::uword k = 0; k < nt; ++k) {
      const auto [a, e] = terms[k];
      if (a < 0) Mfull.col(k).ones();
      else if (e < 0) Mfull.col(k) = U.col(a);
      else Mfull.col(k) = U.col(a) % U.col(e);
      Z.col(k) = arma::vec(Mfull.col(k)).elem(idx);
    }
    arma::mat Q, R;
    if (!arma::qr_econ(Q, R, Z.each_col() % sq))
      throw NumericalError("pilot_bandwidth: QR of the pilot design failed at evaluation row " +
                           std::to_string(j + 1));
    const arma::vec rd = arma::abs(R.diag());
    if (!(rd.min() > 1e-10 * std::max(rd.max(), 1.0)))
      throw NumericalError("pilot_bandwidth: the pilot local quadratic at evaluation row " +
                           std::to_string(j + 1) + " x = " + point() + " is singular (its "
                           "weighted training points do not determine a quadratic in every "
                           "continuous direction); use a larger pilot_bandwidth");
    const arma::mat C = arma::solve(arma::trimatu(R), Q.t());  // nt x |idx|
    // moments of the fit's weights: sum_i l_i(x) term_k(u_i)
    const arma::rowvec mom = L.row(j) * Mfull;
    arma::rowvec row(idx.n_elem, arma::fill::zeros);
    for (arma::uword k = first; k < nt; ++k) row += mom(k) * C.row(k);
    row %= sq.t();
    for (arma::uword t = 0; t < idx.n_elem; ++t) B(j, idx(t)) = row(t);
  }
  return B;
}

namespace {

// Standard normals by Box-Muller on mt19937_64 (portable: the same numbers on every platform,
// unlike std::normal_distribution), drawn serially.
void fill_standard_normal(arma::mat& Xi, std::mt19937_64& rng) {
  const double two_pi = 6.283185307179586476925286766559;
  const double scale = 1.0 / 18446744073709551616.0;  // 2^-64
  double* p = Xi.memptr();
  const arma::uword N = Xi.n_elem;
  for (arma::uword i = 0; i < N; i += 2) {
    const double u1 = (static_cast<double>(rng() >> 11) + 0.5) * (scale * 2048.0);
    const double u2 = (static_cast<double>(rng() >> 11) + 0.5) * (scale * 2048.0);
    const double r = std::sqrt(-2.0 * std::log(u1));
    p[i] = r * std::cos(two_pi * u2);
    if (i + 1 < N) p[i + 1] = r * std::sin(two_pi * u2);
  }
}

}  // namespace

double sup_t_critical_value(const arma::mat& Sigma, double level, int replications,
                            std::uint64_t seed) {
  check_level(level);
  check::require(replications >= 100, "replications",
                 "must be at least 100 (e.g. 2000), got " + std::to_string(replications));
  check::require(Sigma.is_square() && Sigma.n_rows >= 1 && Sigma.is_finite(), "Sigma",
                 "must be a finite square covariance matrix");
  const arma::vec sd = arma::sqrt(arma::clamp(Sigma.diag(), 0.0, arma::datum::inf));
  const arma::uvec keep = arma::find(sd > 0);
  check::require(keep.n_elem >= 1, "X", "every evaluation point has zero standard error");
  const arma::vec s = sd(keep);
  arma::mat Rho = Sigma(keep, keep);
  Rho.each_col() /= s;
  Rho.each_row() /= s.t();
  Rho = 0.5 * (Rho + Rho.t());
  arma::vec lam;
  arma::mat V;
  if (!arma::eig_sym(lam, V, Rho)) throw NumericalError("Sigma: eigen decomposition failed");
  lam = arma::sqrt(arma::clamp(lam, 0.0, arma::datum::inf));
  const arma::mat C = V.each_row() % lam.t();  // C C' = Rho
  const arma::uword mk = keep.n_elem, R = static_cast<arma::uword>(replications);
  std::mt19937_64 rng(seed);
  arma::vec tmax(R);
  const arma::uword chunk = 256;
  arma::mat Xi;
  for (arma::uword r0 = 0; r0 < R; r0 += chunk) {
    const arma::uword nc = std::min(chunk, R - r0);
    Xi.set_size(mk, nc);
    fill_standard_normal(Xi, rng);
    const arma::mat Zd = C * Xi;
    tmax.subvec(r0, r0 + nc - 1) = arma::max(arma::abs(Zd), 0).t();
  }
  tmax = arma::sort(tmax);
  const arma::uword k = static_cast<arma::uword>(std::ceil(level * static_cast<double>(R)));
  return tmax(std::min(std::max<arma::uword>(k, 1), R) - 1);
}

arma::vec variance_omega(const LocalPolynomial& model, VarianceKind kind, double sigma2,
                         double trace_L, arma::uword output) {
  const arma::vec e = output_column(model.residuals(), output, "variance");
  const arma::uword n = e.n_elem;
  const arma::vec& lev = model.leverage();
  switch (kind) {
    case VarianceKind::homoskedastic: return arma::vec(n, arma::fill::value(sigma2));
    case VarianceKind::hc0: return arma::square(e);
    case VarianceKind::hc1: {
      const double dn = static_cast<double>(n) - trace_L;
      if (!(dn > 0)) throw NumericalError("kind: hc1 needs n > tr L; use hc0 or a larger bandwidth");
      return arma::square(e) * (static_cast<double>(n) / dn);
    }
    case VarianceKind::hc2:
    case VarianceKind::hc3: {
      arma::vec out(n);
      for (arma::uword i = 0; i < n; ++i) {
        const double one_m = 1 - lev(i);
        if (!(one_m > 1e-12))
          throw NumericalError("kind: leverage L_ii = " + std::to_string(lev(i)) + " at row " +
                               std::to_string(i + 1) + " is >= 1, so " +
                               variance_kind_name(kind) +
                               " is undefined; use a larger bandwidth or kind 'hc0'/'hc1'");
        out(i) = e(i) * e(i) / (kind == VarianceKind::hc2 ? one_m : one_m * one_m);
      }
      return out;
    }
    case VarianceKind::nn: {
      // Nearest-neighbour residuals of y (not of the fit): nprobust's vce = "nn".
      check::require(model.training_x().n_cols == 1 && model.space().n_continuous() == 1,
                     "kind", "'nn' (nearest-neighbour residuals) needs one continuous "
                             "regressor; use 'hc3' or 'hc0' with several");
      return nn_residual_variance(model.training_x().col(0),
                                  output_column(model.training_y(), output, "variance"),
                                  kNnMatch);
    }
    case VarianceKind::cr1: break;
  }
  throw InvalidArgument("kind: cr1 is computed by cluster_variance");
}

arma::vec cluster_variance(const arma::mat& W, const arma::vec& resid,
                           const std::vector<long long>& cluster, double trace_L) {
  const arma::uword n = resid.n_elem;
  check::require(cluster.size() == n, "cluster",
                 "needs one cluster id per training row (" + std::to_string(n) + "), got " +
                     std::to_string(cluster.size()));
  std::map<long long, arma::uword> index;
  for (long long c : cluster) index.emplace(c, index.size());
  const arma::uword G = index.size();
  check::require(G >= 2, "cluster", "needs at least two distinct clusters");
  arma::mat S(W.n_rows, G, arma::fill::zeros);  // S(x, g) = sum_{i in g} l_i(x) e_i
  for (arma::uword i = 0; i < n; ++i) S.col(index[cluster[i]]) += W.col(i) * resid(i);
  const double dn = static_cast<double>(n);
  const double adj = (static_cast<double>(G) / (G - 1)) * ((dn - 1) / (dn - trace_L));
  return adj * arma::sum(arma::square(S), 1);
}

namespace {

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
    if (ev.has_ties()) {
      const PointwiseDiagnostics u = pointwise_cached(model, ev.X, opt, output, cache);
      const arma::uvec idx = arma::conv_to<arma::uvec>::from(ev.group_of);
      PointwiseDiagnostics r = u;
      for (arma::vec* v : {&r.fit, &r.se, &r.bias, &r.mse, &r.ci_low, &r.ci_high, &r.fit_bc,
                           &r.se_bc, &r.rbc_low, &r.rbc_high})
        *v = arma::vec(v->elem(idx));
      for (arma::vec* v : {&r.uniform_low, &r.uniform_high, &r.uniform_rbc_low,
                           &r.uniform_rbc_high})
        if (!v->is_empty()) *v = arma::vec(v->elem(idx));
      return r;
    }
  }
  // Only the homoskedastic kind needs sigma^2 and so tr(L'L), an O(n^2) pass; the robust kinds
  // need the residuals and leverages the fit already holds.
  GlobalDiagnostics g;
  g.trace_L = model.effective_df();
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
  if (opt.kind == VarianceKind::nn)
    check::require(model.training_x().n_cols == 1 && model.space().n_continuous() == 1, "kind",
                   "'nn' (nearest-neighbour residuals) needs one continuous regressor; use "
                   "'hc3' or 'hc0' with several");
  if (uni)
    check::require(opt.pilot_bandwidths.is_empty() || opt.pilot_bandwidths.n_elem == 1,
                   "pilot_bandwidth", "needs one value per column of X (1), got " +
                                          std::to_string(opt.pilot_bandwidths.n_elem));
  if (multi)
    check::require(opt.pilot_bandwidth == 0, "pilot_bandwidth",
                   "with " + std::to_string(X_eval.n_cols) + " columns give one pilot bandwidth "
                   "per column (a vector of length " + std::to_string(X_eval.n_cols) + ")");
  const double pb1 = uni && opt.pilot_bandwidths.n_elem == 1 ? opt.pilot_bandwidths(0)
                                                             : opt.pilot_bandwidth;
  const arma::mat B =
      uni     ? bias_weights_cached(model, X_eval, opt.pilot_degree, pb1, cache)
      : multi ? bias_weights_multivariate(model, X_eval, opt.pilot_degree, opt.pilot_bandwidths)
              : arma::mat();
  // nn: nprobust's lprobust computes the nearest-neighbour residuals of each evaluation point
  // among the observations of its window (those with a non-zero weight in the fit or in the
  // bias correction), so omega depends on the point: Omega (m x n).
  arma::mat Omega;
  if (opt.kind == VarianceKind::nn) {
    check::require(model.training_x().n_cols == 1 && model.space().n_continuous() == 1, "kind",
                   "'nn' (nearest-neighbour residuals) needs one continuous regressor; use "
                   "'hc3' or 'hc0' with several");
    const arma::vec xt = model.training_x().col(0);
    Omega.zeros(m, xt.n_elem);
    for (arma::uword j = 0; j < m; ++j) {
      arma::rowvec inside = arma::abs(L.row(j));
      if (!B.is_empty()) inside += arma::abs(B.row(j));
      arma::uvec idx = arma::find(inside > 0);
      if (idx.n_elem < 2) idx = arma::regspace<arma::uvec>(0, xt.n_elem - 1);
      const arma::vec om = nn_residual_variance(xt(idx), y(idx), kNnMatch);
      for (arma::uword k = 0; k < idx.n_elem; ++k) Omega(j, idx(k)) = om(k);
    }
  }
  auto variance_of = [&](const arma::mat& W) -> arma::vec {
    if (opt.kind == VarianceKind::cr1)
      return cluster_variance(W, output_column(model.residuals(), output, "cr1"), opt.cluster,
                              g.trace_L);
    if (opt.kind == VarianceKind::nn) return arma::sum(arma::square(W) % Omega, 1);
    const arma::vec omega = variance_omega(model, opt.kind, g.sigma2, g.trace_L, output);
    return arma::square(W) * omega;
  };
  r.se = arma::sqrt(variance_of(L));
  r.ci_low = r.fit - r.z * r.se;
  r.ci_high = r.fit + r.z * r.se;
  if (uni || multi) {
    r.bias = B * y;
    const arma::mat Lbc = L - B;
    r.fit_bc = Lbc * y;
    r.se_bc = arma::sqrt(variance_of(Lbc));
    r.rbc_low = r.fit_bc - r.z * r.se_bc;
    r.rbc_high = r.fit_bc + r.z * r.se_bc;
  } else {
    r.bias = r.fit_bc = r.se_bc = r.rbc_low = r.rbc_high = arma::vec(m, arma::fill::value(kNaN));
    const std::size_t d = model.space().var_types().size();
    r.bias_note = "the bias, mse and robust bias-corrected (rbc) columns need at least one "
                  "continuous regressor (the pilot is a local polynomial in the continuous "
                  "columns); this fit has " +
                  std::to_string(d) + " regressor" + (d == 1 ? "" : "s") + ", none continuous";
  }
  r.mse = arma::square(r.bias) + arma::square(r.se);
  r.crit_uniform = r.crit_uniform_bc = kNaN;
  if (opt.uniform_replications > 0) {
    // Sigma = W Omega W' for the variance kind (cr1: from the cluster sums).
    auto covariance_of = [&](const arma::mat& W) -> arma::mat {
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
      if (opt.kind == VarianceKind::nn) {
        F = W % arma::sqrt(Omega);
      } else {
        const arma::vec omega = variance_omega(model, opt.kind, g.sigma2, g.trace_L, output);
        F = W.each_row() % arma::sqrt(omega).t();
      }
      return F * F.t();
    };
    r.crit_uniform = sup_t_critical_value(covariance_of(L), opt.level, opt.uniform_replications,
                                          opt.seed);
    r.uniform_low = r.fit - r.crit_uniform * r.se;
    r.uniform_high = r.fit + r.crit_uniform * r.se;
    if (uni || multi) {
      r.crit_uniform_bc = sup_t_critical_value(covariance_of(L - B), opt.level,
                                               opt.uniform_replications, opt.seed);
      r.uniform_rbc_low = r.fit_bc - r.crit_uniform_bc * r.se_bc;
      r.uniform_rbc_high = r.fit_bc + r.crit_uniform_bc * r.se_bc;
    } else {
      r.uniform_rbc_low = r.uniform_rbc_high = arma::vec(m, arma::fill::value(kNaN));
    }
  }
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

#include <random>

namespace attnreg {

BootstrapType bootstrap_type_from_name(const std::string& name, const std::string& arg) {
  std::string s;
  for (char ch : name) s += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (s == "rademacher" || s == "wild") return BootstrapType::wild_rademacher;
  if (s == "mammen") return BootstrapType::wild_mammen;
  if (s == "pairs") return BootstrapType::pairs;
  throw InvalidArgument(arg + ": unknown bootstrap '" + name +
                        "'; use 'rademacher' (wild), 'mammen' (wild) or 'pairs'");
}

arma::mat wild_multipliers(bool mammen, arma::uword n, arma::uword B, std::mt19937_64& rng) {
  arma::mat V(n, B);
  if (!mammen) {
    std::bernoulli_distribution coin(0.5);
    for (arma::uword b = 0; b < B; ++b)
      for (arma::uword i = 0; i < n; ++i) V(i, b) = coin(rng) ? 1.0 : -1.0;
  } else {
    const double s5 = std::sqrt(5.0);
    std::bernoulli_distribution coin((s5 + 1) / (2 * s5));
    for (arma::uword b = 0; b < B; ++b)
      for (arma::uword i = 0; i < n; ++i) V(i, b) = coin(rng) ? -(s5 - 1) / 2 : (s5 + 1) / 2;
  }
  return V;
}

BootstrapBands bootstrap_bands(const LocalPolynomial& model, const arma::mat& X_eval,
                               const BootstrapOptions& opt, arma::uword output) {
  check::require(opt.replications >= 19, "replications", "must be at least 19 (e.g. 999)");
  check_level(opt.level);
  check::require(!(opt.bias_corrected && opt.type == BootstrapType::pairs), "bias_corrected",
                 "is available for the wild bootstrap only");
  check::require(opt.kind != VarianceKind::cr1, "kind", "cr1 is not supported for bootstrap bands");
  // One task per call: the analytic fit and se (muted inner reports) at 0, then the draws.
  ProgressScope progress(static_cast<std::size_t>(opt.replications),
                         opt.type == BootstrapType::pairs ? "pairs bootstrap" : "wild bootstrap");
  PointwiseOptions po;
  po.kind = opt.kind;
  po.level = opt.level;
  const bool uni = one_continuous(model);
  check::require(!opt.bias_corrected || uni, "bias_corrected",
                 "needs one continuous regressor (the bias estimate is one-dimensional)");
  const PointwiseDiagnostics d = pointwise_diagnostics(model, X_eval, po, output);
  BootstrapBands r;
  r.center = opt.bias_corrected ? d.fit_bc : d.fit;
  r.se = opt.bias_corrected ? d.se_bc : d.se;
  const arma::uword m = X_eval.n_rows, B = static_cast<arma::uword>(opt.replications);
  const arma::mat& X = model.training_x();
  const arma::vec y = output_column(model.training_y(), output, "bootstrap");
  const arma::uword n = X.n_rows;
  std::mt19937_64 rng(opt.seed);
  r.draws.set_size(m, B);
  InterruptGuard guard;
  if (opt.type == BootstrapType::pairs) {
    std::uniform_int_distribution<arma::uword> pick(0, n - 1);
    const arma::vec sw = model.state().sample_weight;
    LocalFitOptions fo = model.options();
    fo.compute_fitted = false;
    arma::uvec idx(n);
    for (arma::uword b = 0; b < B; ++b) {
      if (guard.poll()) throw Interrupted();
      for (arma::uword i = 0; i < n; ++i) idx(i) = pick(rng);
      LocalPolynomial mb(fo);
      try {
        mb.fit(X.rows(idx), arma::mat(y(idx)), model.bandwidth(),
               sw.is_empty() ? arma::vec() : arma::vec(sw(idx)));
        r.draws.col(b) = mb.predict(X_eval).col(0);
      } catch (const std::exception& e) {
        throw NumericalError(std::string("type: a pairs-bootstrap resample could not be fitted (") +
                             e.what() + "); use the wild bootstrap or a larger bandwidth");
      }
      progress.step(b + 1);
    }
  } else {
    arma::mat W = model.attention_weights(X_eval);
    if (opt.bias_corrected) W -= bias_weights(model, X_eval, -1, 0);
    const arma::vec e = output_column(model.residuals(), output, "bootstrap");
    const arma::vec base = W * output_column(model.fitted(), output, "bootstrap");
    arma::mat V = wild_multipliers(opt.type == BootstrapType::wild_mammen, n, B, rng);
    V.each_col() %= e;
    // m*(x) = l(x)'(m_hat + e v): the centre of the resampling world is l(x)' m_hat.
    r.draws = W * V;
    r.draws.each_col() += base;
    // Centre on the resampling world's truth: shift so that m* - base estimates m - E m.
    r.draws.each_col() += r.center - base;
    progress.step(B);
  }
  const double a = 1 - opt.level;
  r.low.set_size(m);
  r.high.set_size(m);
  arma::vec tmax(B, arma::fill::zeros);
  for (arma::uword j = 0; j < m; ++j) {
    const arma::rowvec dj = r.draws.row(j) - r.center(j);
    const arma::vec q = arma::quantile(dj.t(), arma::vec{a / 2, 1 - a / 2});
    r.low(j) = r.center(j) - q(1);
    r.high(j) = r.center(j) - q(0);
    if (r.se(j) > 0)
      for (arma::uword b = 0; b < B; ++b) tmax(b) = std::max(tmax(b), std::abs(dj(b)) / r.se(j));
  }
  r.critical_value = arma::as_scalar(arma::quantile(tmax, arma::vec{opt.level}));
  r.uniform_low = r.center - r.critical_value * r.se;
  r.uniform_high = r.center + r.critical_value * r.se;
  return r;
}

}  // namespace attnreg
