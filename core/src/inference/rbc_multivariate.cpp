// attnreg: robust bias correction with several continuous regressors (the pilot local quadratic
// with all squares and cross products) and the Gaussian sup-t critical values of uniform bands
// (the wild bootstrap-t is in wild_t_bands.cpp); the formulas and their sources are in
// core/include/attnreg/inference/diagnostics.hpp.
//
// The pilot runs over the distinct training rows (training_groups): tied rows share their
// design row and kernel weight, so the weighted normal equations over all n rows equal those
// over the G distinct rows with the group's total observation weight A_g, and row i of group g
// gets the group's coefficient weight times a_i / A_g (as pilot_coefficient_weights does for
// one column). Each point's least squares uses only the rows inside its pilot kernel window
// (a positive weight: compact kernels exactly, the Gaussian after the core's truncation rule,
// kernel_pairs.hpp), and the fit's attention weights are passed in, not recomputed.
#include "attnreg/inference/diagnostics.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "attnreg/base/constants.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/base/runtime.hpp"
#include "attnreg/detail/diagnostics_checks.hpp"
#include "attnreg/kernels/distinct_rows.hpp"

namespace attnreg {

namespace {

// The argument checks of the multivariate bias; returns the pilot bandwidth vector b.
arma::vec check_multivariate_pilot(const LocalPolynomial& model, const arma::mat& X_eval,
                                   int pilot_degree, const arma::vec& pilot_bandwidths) {
  check::require(model.is_fitted(), "model", "is not fitted; call fit() first");
  const int p = model.options().degree;
  const std::size_t d = model.space().var_types().size();
  const std::vector<std::size_t>& cc = model.space().continuous_columns();
  check::require(!cc.empty(), "model", "the bias estimate needs at least one continuous regressor");
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
  // A quadratic in direction c needs three distinct values of x_c.
  for (std::size_t c : cc) {
    const arma::vec u = arma::unique(model.training_x().col(c));
    check::require(u.n_elem >= 3, "X",
                   "column " + std::to_string(c + 1) + " has " + std::to_string(u.n_elem) +
                       " distinct value(s); the pilot local quadratic of the bias estimate "
                       "needs at least 3 in every continuous direction (declare the column "
                       "categorical)");
  }
  return b;
}

// Terms of the quadratic: (-1,-1) = 1, (a,-1) = u_a, (a,e) = u_a u_e (a <= e), in that order.
std::vector<std::pair<int, int>> quadratic_terms(arma::uword dc) {
  std::vector<std::pair<int, int>> terms;
  terms.emplace_back(-1, -1);
  for (arma::uword a = 0; a < dc; ++a) terms.emplace_back(static_cast<int>(a), -1);
  for (arma::uword a = 0; a < dc; ++a)
    for (arma::uword e = a; e < dc; ++e)
      terms.emplace_back(static_cast<int>(a), static_cast<int>(e));
  return terms;
}

// Z(r, k) = term k at distinct training row rows(r), u = (x - x0) / b on the continuous columns.
arma::mat term_matrix(const arma::mat& Xd, const arma::uvec& rows,
                      const std::vector<std::size_t>& cc, const arma::rowvec& x0,
                      const arma::vec& b, const std::vector<std::pair<int, int>>& terms) {
  arma::mat U(rows.n_elem, cc.size());
  for (arma::uword a = 0; a < cc.size(); ++a)
    for (arma::uword r = 0; r < rows.n_elem; ++r)
      U(r, a) = (Xd(rows(r), cc[a]) - x0(cc[a])) / b(cc[a]);
  arma::mat Z(rows.n_elem, terms.size());
  for (arma::uword k = 0; k < terms.size(); ++k) {
    const auto [a, e] = terms[k];
    if (a < 0) Z.col(k).ones();
    else if (e < 0) Z.col(k) = U.col(a);
    else Z.col(k) = U.col(a) % U.col(e);
  }
  return Z;
}

// Pilot kernel weights at the distinct rows (m x G): those of a local-constant fit at b on the
// distinct rows with the groups' total observation weights A_g, with the model's kernels and
// column types (row j is proportional to K_b(x_g - x_j) A_g, the sum over the group's rows).
arma::mat pilot_kernel_weights(const LocalPolynomial& model, const TrainingGroups& g,
                               const arma::mat& X_eval, const arma::vec& b) {
  try {
    return kernel_weight_model(model, g.X, b, g.weight, true).attention_weights(X_eval);
  } catch (const NumericalError& e) {
    throw NumericalError(std::string("pilot_bandwidth: the pilot local quadratic of the bias "
                                     "estimate has no kernel weight at an evaluation point (") +
                         e.what() + "); use a larger pilot_bandwidth");
  }
}

}  // namespace

TrainingGroups training_groups(const LocalPolynomial& model) {
  const DistinctRows grp = distinct_rows(model.training_x());
  const arma::vec& sw = model.sample_weight();
  const arma::uword n = grp.group_of.size();
  TrainingGroups g;
  g.X = grp.X;
  g.group_of = arma::conv_to<arma::uvec>::from(grp.group_of);
  g.weight.zeros(grp.X.n_rows);
  for (arma::uword i = 0; i < n; ++i) g.weight(g.group_of(i)) += sw.is_empty() ? 1.0 : sw(i);
  g.share.set_size(n);
  for (arma::uword i = 0; i < n; ++i) {
    const double a = sw.is_empty() ? 1.0 : sw(i), s = g.weight(g.group_of(i));
    g.share(i) = s > 0 ? a / s : 0.0;
  }
  return g;
}

arma::mat group_sums(const arma::mat& W, const TrainingGroups& g) {
  arma::mat Wg(W.n_rows, g.X.n_rows, arma::fill::zeros);
  for (arma::uword i = 0; i < W.n_cols; ++i) Wg.col(g.group_of(i)) += W.col(i);
  return Wg;
}

arma::mat expand_groups(const arma::mat& Wg, const TrainingGroups& g) {
  arma::mat W(Wg.n_rows, g.group_of.n_elem);
  for (arma::uword i = 0; i < W.n_cols; ++i) W.col(i) = Wg.col(g.group_of(i)) * g.share(i);
  return W;
}

arma::mat bias_weights_multivariate_grouped(const LocalPolynomial& model,
                                            const arma::mat& X_eval, int pilot_degree,
                                            const arma::vec& pilot_bandwidths, const arma::mat& L,
                                            const TrainingGroups& g, int bwcheck) {
  const arma::vec b = check_multivariate_pilot(model, X_eval, pilot_degree, pilot_bandwidths);
  const std::vector<std::size_t>& cc = model.space().continuous_columns();
  const arma::uword m = X_eval.n_rows, G = g.X.n_rows;
  check::require(L.n_rows == m && L.n_cols == g.group_of.n_elem, "L",
                 "must be the model's attention weights at X (one row per evaluation point)");
  const arma::mat Lg = group_sums(L, g);                            // m x G
  const std::vector<std::pair<int, int>> terms = quadratic_terms(cc.size());
  const arma::uword nt = terms.size();
  const arma::uword first = model.options().degree == 0 ? 1 : 1 + cc.size();  // first bias term
  arma::mat Bg(m, G, arma::fill::zeros);
  check::require(bwcheck >= 0, "bwcheck",
                 "must be >= 1 (the minimum number of distinct rows in the pilot's window, "
                 "e.g. 21) or 0 for no minimum, got " + std::to_string(bwcheck));
  // The minimum-points rule (rbc_bandwidth_multivariate.hpp): the pilot's window at each point
  // holds at least T = max(bwcheck, 2 nt) distinct rows (all those with weight when fewer),
  // b multiplied by the smallest order statistic of r_g = max_c |x_gc - x0_c| / b_c that does.
  const arma::uword target =
      bwcheck > 0 ? std::min<arma::uword>(std::max<arma::uword>(bwcheck, 2 * nt), G) : 0;
  // a point without any pilot weight at b: refused without the rule, enlarged with it
  auto weights_or_zero = [&](const arma::rowvec& x0, const arma::vec& bb) -> arma::rowvec {
    try {
      return pilot_kernel_weights(model, g, x0, bb);
    } catch (const NumericalError&) {
      return arma::rowvec(G, arma::fill::zeros);
    }
  };
  arma::mat K;  // m x G
  try {
    K = pilot_kernel_weights(model, g, X_eval, b);
  } catch (const NumericalError&) {
    if (target == 0) throw;
    K.set_size(m, G);
    for (arma::uword j = 0; j < m; ++j) K.row(j) = weights_or_zero(X_eval.row(j), b);
  }
  for (arma::uword j = 0; j < m; ++j) {
    const arma::rowvec x0 = X_eval.row(j);
    arma::vec bj = b;
    arma::rowvec Kj = K.row(j);
    arma::uvec idx = arma::find(Kj.t() > 0);  // the pilot's kernel window
    if (idx.n_elem < target) {
      arma::vec r(G);
      for (arma::uword i = 0; i < G; ++i) {
        double v = 0;
        for (std::size_t c : cc) v = std::max(v, std::abs(g.X(i, c) - x0(c)) / b(c));
        r(i) = v;
      }
      const arma::vec rs = arma::sort(r);
      arma::uword k = target;
      for (;;) {
        const double s = std::max(1.0, rs(k - 1) * (1.0 + 1e-9));
        bj = b;
        for (std::size_t c : cc) bj(c) = s * b(c);  // the continuous columns' bandwidths only
        Kj = weights_or_zero(x0, bj);
        idx = arma::find(Kj.t() > 0);
        if (idx.n_elem >= target || k == G) break;
        k = std::min(G, k + (target - idx.n_elem));  // rows left out by categorical weights
      }
    }
    if (idx.n_elem < nt)
      throw NumericalError("pilot_bandwidth: the pilot local quadratic at " +
                           detail::evaluation_point(X_eval, j) + " has " +
                           std::to_string(idx.n_elem) + " distinct training point(s) with "
                           "weight, fewer than its " + std::to_string(nt) + " coefficients; use "
                           "a larger pilot_bandwidth");
    const arma::vec w = Kj.t();
    const arma::vec sq = arma::sqrt(w(idx) / w(idx).max());
    const arma::mat Z = term_matrix(g.X, idx, cc, x0, bj, terms);
    arma::mat Q, R;
    if (!arma::qr_econ(Q, R, Z.each_col() % sq))
      throw NumericalError("pilot_bandwidth: QR of the pilot design failed at evaluation row " +
                           std::to_string(j + 1));
    const arma::vec rd = arma::abs(R.diag());
    if (!(rd.min() > 1e-10 * std::max(rd.max(), 1.0)))
      throw NumericalError("pilot_bandwidth: the pilot local quadratic at " +
                           detail::evaluation_point(X_eval, j) + " is "
                           "singular (its weighted training points do not determine a "
                           "quadratic in every continuous direction); use a larger "
                           "pilot_bandwidth");
    const arma::mat C = arma::solve(arma::trimatu(R), Q.t());  // nt x |idx|
    // moments of the fit's weights, sum_i l_i(x) term_k(u_i), over the fit's window
    const arma::uvec lw = arma::find(Lg.row(j).t() != 0);
    const arma::rowvec lj = Lg.row(j);
    const arma::rowvec mom = lj.cols(lw) * term_matrix(g.X, lw, cc, x0, bj, terms);
    arma::rowvec row(idx.n_elem, arma::fill::zeros);
    for (arma::uword k = first; k < nt; ++k) row += mom(k) * C.row(k);
    row %= sq.t();
    for (arma::uword t = 0; t < idx.n_elem; ++t) Bg(j, idx(t)) = row(t);
  }
  return Bg;
}

arma::mat bias_weights_multivariate(const LocalPolynomial& model, const arma::mat& X_eval,
                                    int pilot_degree, const arma::vec& pilot_bandwidths,
                                    int bwcheck) {
  check::require(model.is_fitted(), "model", "is not fitted; call fit() first");
  check::require(X_eval.n_cols == model.training_x().n_cols, "X",
                 "has " + std::to_string(X_eval.n_cols) + " columns but the model was fitted on " +
                     std::to_string(model.training_x().n_cols));
  const TrainingGroups g = training_groups(model);
  const arma::mat L = model.attention_weights(X_eval);
  return expand_groups(
      bias_weights_multivariate_grouped(model, X_eval, pilot_degree, pilot_bandwidths, L, g,
                                        bwcheck),
      g);
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
  check::require(std::isfinite(level) && level > 0 && level < 1, "level",
                 "must be in (0, 1), e.g. 0.95");
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

}  // namespace attnreg
