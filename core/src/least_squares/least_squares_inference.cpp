// OLS inference: classical, heteroskedasticity-robust (HC0-HC3) and HAC (Newey-West)
// covariances, t statistics, p-values and R^2.
//
// All sandwiches are computed in the coordinates of the pivoted QR factor D P S^{-1} = Q_1 R
// (S the power-of-two column scales): (D'D)^{-1} D' Omega D (D'D)^{-1} = P S^{-1} R^{-1}
// (Q_1' Omega Q_1) R^{-T} S^{-1} P', so the meat is an r x r matrix of orthonormal scores and
// D'D is never formed. Leverages are h_i = ||row i of Q_1||^2.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <sstream>

#include "attnreg/base/error.hpp"
#include "attnreg/least_squares/least_squares.hpp"
#include "attnreg/least_squares/cluster_inference.hpp"
#include "attnreg/detail/least_squares_internal.hpp"
#include "attnreg/base/names.hpp"

namespace attnreg {


CovType parse_cov_type(const std::string& name) {
  const std::string s = detail::lower_case(name);
  if (s == "nonrobust" || s == "classical" || s == "const") return CovType::Classical;
  if (s == "hc0") return CovType::HC0;
  if (s == "hc1") return CovType::HC1;
  if (s == "hc2") return CovType::HC2;
  if (s == "hc3") return CovType::HC3;
  if (s == "hac" || s == "neweywest" || s == "newey-west") return CovType::HAC;
  if (s == "cluster" || s == "cr1") return CovType::CR1;
  if (s == "cr0") return CovType::CR0;
  if (s == "cr2") return CovType::CR2;
  if (s == "cr3") return CovType::CR3;
  throw InvalidArgument("cov_type: unknown covariance type '" + name +
                        "' (use \"nonrobust\", \"HC0\", \"HC1\", \"HC2\", \"HC3\", \"HAC\", "
                        "\"cluster\", \"CR0\", \"CR1\", \"CR2\" or \"CR3\")");
}

bool is_cluster_cov(CovType type) {
  return type == CovType::CR0 || type == CovType::CR1 || type == CovType::CR2 ||
         type == CovType::CR3;
}

std::string cov_type_name(CovType type) {
  switch (type) {
    case CovType::Classical: return "nonrobust";
    case CovType::HC0: return "HC0";
    case CovType::HC1: return "HC1";
    case CovType::HC2: return "HC2";
    case CovType::HC3: return "HC3";
    case CovType::HAC: return "HAC";
    case CovType::CR0: return "CR0";
    case CovType::CR1: return "CR1";
    case CovType::CR2: return "CR2";
    case CovType::CR3: return "CR3";
  }
  return "nonrobust";
}

int hac_lags(int maxlags, arma::uword n) {
  if (maxlags < -1) {
    std::ostringstream msg;
    msg << "maxlags: must be >= 0 (or -1 for the rule floor(4 (n/100)^(2/9))), got " << maxlags;
    throw InvalidArgument(msg.str());
  }
  if (maxlags >= 0) {
    // Lags of n or more have no pairs of rows: the Bartlett weights would silently shrink the
    // long-run variance (standard errors collapse) instead of estimating it.
    if (n >= 1 && static_cast<arma::uword>(maxlags) >= n) {
      std::ostringstream msg;
      msg << "maxlags: must be in [0, n - 1] = [0, " << (n - 1) << "] for " << n
          << " rows, got " << maxlags << " (or -1 for the rule floor(4 (n/100)^(2/9)))";
      throw InvalidArgument(msg.str());
    }
    return maxlags;
  }
  return static_cast<int>(std::floor(4.0 * std::pow(static_cast<double>(n) / 100.0, 2.0 / 9.0)));
}

// student_t_sf: distributions.cpp (Boost.Math).

namespace {

// Dense codes 0..G-1 of one clustering column over all rows; `counted` marks codes that occur
// on a row of positive weight (only those count as clusters).
struct ClusterCodes {
  arma::uvec code;
  arma::uword n_codes = 0;
  arma::uword n_clusters = 0;
};

ClusterCodes dense_codes(const arma::uvec& raw, const arma::vec& weights) {
  ClusterCodes out;
  const arma::uword n = raw.n_elem;
  out.code.set_size(n);
  // Small ids (the usual 0..G-1 codes): a table over the id range instead of a sort, O(n),
  // with the same result (dense codes in increasing order of the ids).
  const arma::uword top = n > 0 ? raw.max() : 0;
  if (n > 0 && top <= 4 * n + 1024) {
    constexpr arma::uword kAbsent = static_cast<arma::uword>(-1);
    std::vector<arma::uword> map(top + 1, kAbsent);
    std::vector<char> pos(top + 1, 0);
    for (arma::uword i = 0; i < n; ++i) {
      map[raw(i)] = 0;
      if (weights.is_empty() || weights(i) > 0.0) pos[raw(i)] = 1;
    }
    for (arma::uword c = 0; c <= top; ++c) {
      if (map[c] == kAbsent) continue;
      map[c] = out.n_codes++;
      out.n_clusters += pos[c] ? 1 : 0;
    }
    for (arma::uword i = 0; i < n; ++i) out.code(i) = map[raw(i)];
    return out;
  }
  const arma::uvec order = arma::stable_sort_index(raw);
  std::vector<bool> counted;
  for (arma::uword a = 0; a < n; ++a) {
    const arma::uword i = order(a);
    if (a == 0 || raw(i) != raw(order(a - 1))) {
      ++out.n_codes;
      counted.push_back(false);
    }
    out.code(i) = out.n_codes - 1;
    if (weights.is_empty() || weights(i) > 0.0) counted.back() = true;
  }
  for (bool c : counted) out.n_clusters += c ? 1 : 0;
  return out;
}

// sum over clusters of (sum_{i in g} u_i)(sum_{i in g} u_i)' for scores u_i = F_i ew_i (n x r);
// CR2 first replaces the residuals of cluster g by (I - H_gg)^{-1/2} e_g with H_gg = Fh_g Fh_g'
// (Fh = F = Q_1 for OLS; the square-root-filtered factors for ridge and PCR).
arma::mat cluster_meat(const arma::mat& F, const arma::mat& Fh, const arma::vec& ew,
                       const ClusterCodes& cc, bool cr2) {
  const arma::uword n = F.n_rows, r = F.n_cols;
  arma::mat S(cc.n_codes, r, arma::fill::zeros);
  if (!cr2) {
    for (arma::uword i = 0; i < n; ++i) S.row(cc.code(i)) += ew(i) * F.row(i);
    return S.t() * S;
  }
  // Rows of each cluster, in row order.
  std::vector<std::vector<arma::uword>> members(cc.n_codes);
  for (arma::uword i = 0; i < n; ++i) members[cc.code(i)].push_back(i);
  for (arma::uword g = 0; g < cc.n_codes; ++g) {
    const arma::uvec idx = arma::conv_to<arma::uvec>::from(members[g]);
    const arma::mat Hg = Fh.rows(idx);
    const arma::vec eg = ew(idx);
    // Hg = U diag(sv) V' (thin): (I - Hg Hg')^{-1/2} = I + U diag(c - 1) U' with
    // c = (1 - sv^2)^{-1/2}; a leverage of 1 (sv = 1) takes the pseudo-inverse (c = 0).
    arma::mat U, V;
    arma::vec sv;
    if (!arma::svd_econ(U, sv, V, Hg, "left")) {
      throw NumericalError("CR2: singular value decomposition of a cluster's leverage failed");
    }
    arma::vec adj = eg;
    const arma::vec Ute = U.t() * eg;
    arma::vec cm1(sv.n_elem);
    for (arma::uword j = 0; j < sv.n_elem; ++j) {
      const double one_minus = 1.0 - sv(j) * sv(j);
      cm1(j) = (one_minus > 1e-12 ? 1.0 / std::sqrt(one_minus) : 0.0) - 1.0;
    }
    adj += U * (cm1 % Ute);
    S.row(g) = adj.t() * F.rows(idx);
  }
  return S.t() * S;
}

// CR3 in orthonormal coordinates (A = F'F = I): least squares only, one-way.
arma::mat cr3_orthonormal(const arma::mat& F, const arma::mat& Fh, const arma::vec& ew,
                          const ClusterCodes& cc, arma::uword dims) {
  if (dims == 2 || &F != &Fh) {
    throw InvalidArgument(dims == 2 ? "cov_type: CR3 is one-way only; use CR1 (\"cluster\") "
                                      "or CR0 for two-way clustering"
                                    : "cov_type: CR3 (the cluster jackknife) is computed for "
                                      "least squares only; use CR1 or CR2");
  }
  const arma::mat I = arma::eye(F.n_cols, F.n_cols);
  arma::mat V = cluster_jackknife(F, I, ew, cc.code, cc.n_codes);
  // Clusters with only rows of weight 0 add nothing to the sum and do not count in G.
  const double Gc = static_cast<double>(cc.n_codes);
  const double Gp = static_cast<double>(cc.n_clusters);
  if (Gp != Gc) V *= ((Gp - 1.0) / Gp) / ((Gc - 1.0) / Gc);
  return V;
}

}  // namespace

namespace ls_detail {

bool clip_negative_eigenvalues(arma::mat& V, double* min_ratio) {
  const arma::uword m = V.n_rows;
  if (m == 0 || !V.is_finite()) return false;
  const arma::mat S = 0.5 * (V + V.t());
  arma::vec lam;
  arma::mat U;
  if (!arma::eig_sym(lam, U, S, "std")) {
    throw NumericalError("two-way clustered covariance: symmetric eigendecomposition failed");
  }
  const double top = arma::abs(lam).max();
  // Eigenvalues of a singular PSD matrix come out within about m eps |V| of 0: not negative.
  const double tol = 16.0 * static_cast<double>(m) * std::numeric_limits<double>::epsilon() * top;
  const bool negative_diag = arma::any(V.diag() < 0.0);
  if (!(lam.min() < -tol) && !negative_diag) return false;
  const arma::vec kept = arma::clamp(lam, 0.0, arma::datum::inf);
  // U diag(max(lambda, 0)) U': every diagonal term u_jk^2 max(lambda_k, 0) is >= 0.
  const arma::mat F = U.each_row() % kept.t();
  const arma::mat C = F * U.t();
  V = 0.5 * (C + C.t());
  if (min_ratio) *min_ratio = top > 0 ? std::min(lam.min(), 0.0) / top : 0.0;
  return true;
}

arma::mat sandwich_meat(const arma::mat& F, const arma::mat& Fh, const arma::vec& e,
                        const arma::vec& weights, bool freq, double N, double dfres,
                        const CovOptions& cov, std::vector<arma::uword>* n_clusters,
                        double leverage_tol) {
  const arma::uword n = F.n_rows;
  const bool weighted = !weights.is_empty();
  freq = freq && weighted;
  // Scores in orthonormal coordinates: F rows times the residuals of the transformed problem,
  // W^{1/2} e (F spans W^{1/2} D, so F_i w_i^{1/2} e_i = w_i d_i' e_i up to a fixed map).
  arma::vec ew = e;
  if (weighted) ew %= arma::sqrt(weights);
  if (cov.type == CovType::HAC) {
    if (freq) {
      throw InvalidArgument(
          "cov_type: HAC (Newey-West) is not defined for frequency weights (the repeated "
          "observations have no time order); use weight_type=\"analytic\" or another cov_type");
    }
    // Rows of weight 0 are left out of the time series (as lm and Stata drop them).
    arma::mat u;
    if (weighted) {
      const arma::uvec pos = arma::find(weights > 0.0);
      u = F.rows(pos).eval().each_col() % ew(pos);
    } else {
      u = F.each_col() % ew;
    }
    const arma::uword m = u.n_rows;
    const int L = hac_lags(cov.maxlags, m);
    arma::mat S = u.t() * u;
    for (int l = 1; l <= L && static_cast<arma::uword>(l) < m; ++l) {
      const auto lu = static_cast<arma::uword>(l);
      const double w = 1.0 - static_cast<double>(l) / (L + 1.0);  // Bartlett
      const arma::mat G = u.rows(lu, m - 1).t() * u.rows(0, m - 1 - lu);
      S += w * (G + G.t());
    }
    if (cov.hac_adjust) S *= dfres > 0 ? N / dfres : kNaN;
    return S;
  }
  if (is_cluster_cov(cov.type)) {
    const arma::uword dims = cov.clusters.n_cols;
    if (dims == 0 || cov.clusters.n_rows == 0) {
      throw InvalidArgument("clusters: cov_type " + cov_type_name(cov.type) +
                            " needs cluster ids (one or two columns, one row per training row)");
    }
    if (cov.clusters.n_rows != n || dims > 2) {
      std::ostringstream msg;
      msg << "clusters: must have " << n << " rows (one per training row) and 1 or 2 columns, got "
          << cov.clusters.n_rows << " x " << dims;
      throw InvalidArgument(msg.str());
    }
    if (cov.type == CovType::CR2 && dims == 2) {
      throw InvalidArgument("cov_type: CR2 is one-way only; use CR1 (\"cluster\") or CR0 for "
                            "two-way clustering (Cameron, Gelbach and Miller 2011)");
    }
    std::vector<ClusterCodes> codes;
    arma::uword gmin = 0;
    for (arma::uword d = 0; d < dims; ++d) {
      codes.push_back(dense_codes(cov.clusters.col(d), weights));
      const arma::uword G = codes.back().n_clusters;
      if (G < 2) {
        std::ostringstream msg;
        msg << "clusters: column " << (d + 1) << " has " << G
            << " cluster (of rows with positive weight); clustered standard errors need at least "
               "2 (use another clustering variable or a heteroskedasticity-robust cov_type)";
        throw InvalidArgument(msg.str());
      }
      gmin = d == 0 ? G : std::min(gmin, G);
    }
    if (n_clusters) {
      n_clusters->clear();
      for (const auto& c : codes) n_clusters->push_back(c.n_clusters);
    }
    if (cov.type == CovType::CR3) return cr3_orthonormal(F, Fh, ew, codes[0], dims);
    const bool cr2 = cov.type == CovType::CR2;
    arma::mat M = cluster_meat(F, Fh, ew, codes[0], cr2);
    if (dims == 2) {
      M += cluster_meat(F, Fh, ew, codes[1], false);
      // Intersection clusters: pairs of the two dense codes.
      const arma::uvec both = codes[0].code * codes[1].n_codes + codes[1].code;
      M -= cluster_meat(F, Fh, ew, dense_codes(both, weights), false);
    }
    if (cov.type == CovType::CR1) {
      const double G = static_cast<double>(gmin);
      M *= dfres > 0 ? G / (G - 1.0) * (N - 1.0) / dfres : kNaN;
    }
    return M;
  }
  // HC0-HC3. Analytic weights (and none): scores F_i w_i^{1/2} e_i, leverages h_i. Frequency
  // weights: row i is w_i copies, each with score d_i e_i and leverage h_i / w_i, so the meat is
  // sum_i w_i d_i d_i' e_i^2 adj_i: scores F_i e_i (F_i carries w_i^{1/2}).
  arma::vec sc = freq ? e : ew;
  if (cov.type == CovType::HC1) sc *= dfres > 0 ? std::sqrt(N / dfres) : kNaN;
  const bool lev = cov.type == CovType::HC2 || cov.type == CovType::HC3;
  const double lev_tol = leverage_tol < 0 ? leverage_one_tol(F.n_cols, 1.0) : leverage_tol;
  // Row blocks: leverages, scaled scores and their cross-product block by block (no n x r
  // temporaries; the blocks are summed in order, so the result does not depend on threads).
  constexpr arma::uword kRows = 8192;
  arma::mat S(F.n_cols, F.n_cols, arma::fill::zeros);
  for (arma::uword i0 = 0; i0 < n; i0 += kRows) {
    const arma::uword i1 = std::min(n, i0 + kRows) - 1;
    arma::vec sb = sc.subvec(i0, i1);
    if (lev) {
      const arma::vec h = arma::sum(arma::square(Fh.rows(i0, i1)), 1);
      for (arma::uword b = 0; b < sb.n_elem; ++b) {
        double hi = h(b);
        if (freq) hi = weights(i0 + b) > 0.0 ? hi / weights(i0 + b) : 0.0;
        const double om = 1.0 - hi;
        // Leverage one (leverage_one_tol): the 0/0 term is left out.
        sb(b) = om > lev_tol ? sb(b) / (cov.type == CovType::HC2 ? std::sqrt(om) : om) : 0.0;
      }
    }
    const arma::mat Z = F.rows(i0, i1).eval().each_col() % sb;
    S += Z.t() * Z;
  }
  return S;
}

void check_new_x_columns(const arma::mat& X_new, arma::uword p) {
  if (X_new.n_cols != p) {
    std::ostringstream msg;
    msg << "X: has " << X_new.n_cols << " columns but the model was fitted with " << p
        << " (pass the same columns as in fit)";
    throw InvalidArgument(msg.str());
  }
  check::all_finite(X_new, "X");
}

void t_tests(Inference& out) {
  out.t_value = out.estimate / out.std_error;
  out.p_value.set_size(out.t_value.n_rows, out.t_value.n_cols);
  for (arma::uword i = 0; i < out.t_value.n_elem; ++i) {
    const double t = out.t_value(i);
    out.p_value(i) = std::isfinite(t) && out.df_inference > 0 && out.df_residual > 0
                         ? 2.0 * student_t_sf(std::fabs(t), out.df_inference)
                         : kNaN;
  }
}

void finish_inference(Inference& out, const arma::mat& y, const arma::mat& e,
                      const arma::vec& weights, bool intercept, double N) {
  t_tests(out);
  const arma::uword n = y.n_rows, k = y.n_cols;
  const bool weighted = !weights.is_empty();
  const double df_int = intercept ? 1.0 : 0.0;
  out.r_squared.set_size(k);
  out.adj_r_squared.set_size(k);
  auto wt = [&](arma::uword i) -> long double { return weighted ? weights(i) : 1.0L; };
  for (arma::uword c = 0; c < k; ++c) {
    long double rss = 0.0L, tss = 0.0L, mean = 0.0L, wsum = 0.0L;
    if (intercept) {
      for (arma::uword i = 0; i < n; ++i) {
        mean += wt(i) * y(i, c);
        wsum += wt(i);
      }
      mean /= wsum;
    }
    for (arma::uword i = 0; i < n; ++i) {
      rss += wt(i) * static_cast<long double>(e(i, c)) * e(i, c);
      const long double d = y(i, c) - mean;
      tss += wt(i) * d * d;
    }
    const double r2 = tss > 0 ? static_cast<double>(1.0L - rss / tss) : kNaN;
    out.r_squared(c) = r2;
    out.adj_r_squared(c) =
        out.df_residual > 0 ? 1.0 - (1.0 - r2) * ((N - df_int) / out.df_residual) : kNaN;
  }
}


}  // namespace ls_detail

namespace {

// HC2/HC3's leverage-one tolerance (ls_detail::leverage_one_tol) for the factor R_11 of the
// scaled, pivoted design (the leading r x r block of qr) and its inverse.
double ols_leverage_tol(const arma::mat& qr, const arma::mat& Rinv) {
  const arma::uword r = Rinv.n_rows;
  if (r == 0) return ls_detail::leverage_one_tol(0, 1.0);
  const arma::mat R = arma::trimatu(qr.submat(0, 0, r - 1, r - 1));
  return ls_detail::leverage_one_tol(r, ls_detail::triangular_condition(R, Rinv));
}

}  // namespace

arma::mat OLS::robust_meat(const arma::mat& Q1, const arma::vec& e, const CovOptions& cov,
                           std::vector<arma::uword>* n_clusters) const {
  double tol = -1.0;
  if ((cov.type == CovType::HC2 || cov.type == CovType::HC3) && rank() > 0) {
    tol = ols_leverage_tol(st_.qr, solve_r(arma::eye(rank(), rank())));
  }
  return ls_detail::sandwich_meat(Q1, Q1, e, st_.weights, st_.frequency_weights, n_effective(),
                                  n_effective() - st_.rank, cov, n_clusters, tol);
}

arma::mat OLS::covariance(const CovOptions& cov, arma::uword output) const {
  require_fitted("covariance");
  check::require(output < y_.n_cols, "output",
                 "is out of range (the model has " + std::to_string(y_.n_cols) + " outputs)");
  check_cov_options(cov);
  const arma::uword r = rank();
  if (r == 0) return unpivot_cov(arma::mat());
  if (cov.type == CovType::Classical) return st_.cov_unscaled * sigma2()(output);
  const arma::mat Rinv = solve_r(arma::eye(r, r));
  return unpivot_cov(robust_cov_pivoted(Rinv, residuals().col(output), cov, nullptr));
}

arma::mat OLS::robust_cov_pivoted(const arma::mat& Rinv, const arma::vec& e,
                                  const CovOptions& cov, Inference* fix) const {
  arma::mat Vp = Rinv * robust_meat(q1(), e, cov) * Rinv.t();
  if (!ls_detail::is_two_way(cov)) return Vp;
  // Cameron, Gelbach and Miller (2011, sec. 2.3) in the coordinates of the coefficients:
  // V = S^{-1} Vp S^{-1} over the kept pivots (S powers of two: exact both ways).
  const arma::uword r = Vp.n_rows;
  arma::vec s(r);
  for (arma::uword a = 0; a < r; ++a) s(a) = st_.scale(static_cast<arma::uword>(st_.pivot(a)));
  arma::mat V = Vp;
  V.each_col() /= s;
  V.each_row() /= s.t();
  double ratio = 0.0;
  if (ls_detail::clip_negative_eigenvalues(V, &ratio)) {
    Vp = V;
    Vp.each_col() %= s;
    Vp.each_row() %= s.t();
    if (fix) {
      fix->psd_fixed = true;
      fix->psd_min_eigenvalue = std::min(fix->psd_min_eigenvalue, ratio);
    }
  }
  return Vp;
}

void OLS::check_cov_options(const CovOptions& cov) const {
  if (cov.type == CovType::HAC) {
    const arma::uword m = st_.weights.is_empty()
                              ? n_obs()
                              : static_cast<arma::uword>(arma::accu(st_.weights > 0.0));
    hac_lags(cov.maxlags, m);  // validates maxlags
  }
  if (!is_cluster_cov(cov.type) && !cov.clusters.is_empty()) {
    throw InvalidArgument("clusters: given, but cov_type is " + cov_type_name(cov.type) +
                          "; use a cluster-robust cov_type (\"cluster\", \"CR0\", \"CR1\", "
                          "\"CR2\") or drop the clusters");
  }
}

arma::mat OLS::std_errors(const CovOptions& cov, Inference* fix) const {
  require_fitted("std_errors");
  check_cov_options(cov);
  const arma::uword q = n_coef(), k = y_.n_cols, r = rank();
  arma::mat se(q, k);
  if (r == 0) {
    se.fill(kNaN);
    return se;
  }
  const arma::mat E = residuals();
  // Everything in scaled units, so that no intermediate overflows or underflows when the true
  // standard errors are representable: residuals are divided by a power of two c per output,
  // and sqrt(diag((D'D)^{-1})) is taken in the scaled pivoted coordinates of the factor, where
  // (D'D)^{-1}_jj = ||row a of R^{-1}||^2 / scale_j^2 (a the pivot position of column j). With
  // X * 1e-160 or y * 1e160 the unscaled products sigma^2 and (D'D)^{-1} overflow while the
  // standard errors (about 1e158) do not.
  const bool weighted = !st_.weights.is_empty();
  if (cov.type == CovType::Classical) {
    const double df = df_residual();
    arma::vec root_d(q);
    root_d.fill(kNaN);
    arma::mat Rinv;
    for (arma::uword a = 0; a < r; ++a) {
      const auto j = static_cast<arma::uword>(st_.pivot(a));
      const double d = st_.cov_unscaled(j, j);
      if (std::isfinite(d) && d >= std::numeric_limits<double>::min()) {
        root_d(j) = std::sqrt(d);  // the (possibly double-double) covariance itself
      } else {
        if (Rinv.is_empty()) Rinv = solve_r(arma::eye(r, r));
        root_d(j) = arma::norm(Rinv.row(a), 2) / st_.scale(j);
      }
    }
    for (arma::uword c = 0; c < k; ++c) {
      const double sc = ls_detail::power_of_two_scale(arma::abs(E.col(c)).max());
      long double acc = 0.0L;
      for (arma::uword i = 0; i < E.n_rows; ++i) {
        const long double ei = static_cast<long double>(E(i, c)) / sc;
        acc += weighted ? ei * ei * st_.weights(i) : ei * ei;
      }
      const double sigma = df > 0 ? static_cast<double>(std::sqrt(acc / df)) : kNaN;
      se.col(c) = (sigma * root_d) * sc;
    }
    return se;
  }
  const arma::mat Rinv = solve_r(arma::eye(r, r));
  for (arma::uword c = 0; c < k; ++c) {
    const double sc = ls_detail::power_of_two_scale(arma::abs(E.col(c)).max());
    const arma::vec ec = E.col(c) / sc;
    const arma::mat Vp = robust_cov_pivoted(Rinv, ec, cov, fix);
    se.col(c).fill(kNaN);
    for (arma::uword a = 0; a < r; ++a) {
      const auto j = static_cast<arma::uword>(st_.pivot(a));
      se(j, c) = std::sqrt(Vp(a, a)) / st_.scale(j) * sc;
    }
  }
  return se;
}

Inference OLS::inference(const CovOptions& cov) const {
  require_fitted("inference");
  Inference out;
  const arma::uword n = n_obs();
  const bool weighted = !st_.weights.is_empty();
  check_cov_options(cov);
  out.cov_type = cov.type;
  out.maxlags = cov.type == CovType::HAC
                    ? hac_lags(cov.maxlags, weighted ? static_cast<arma::uword>(
                                                           arma::accu(st_.weights > 0.0))
                                                     : n)
                    : 0;
  out.df_residual = df_residual();
  out.df_inference = out.df_residual;
  out.estimate = st_.coef;
  out.std_error = std_errors(cov, &out);
  if (is_cluster_cov(cov.type) && rank() > 0) {
    // Cluster counts (validated by std_errors above); t with G - 1 df as Stata.
    CovOptions count = cov;
    count.type = CovType::CR0;  // the cheapest cluster meat; only the counts are kept
    robust_meat(q1(), residuals().col(0), count, &out.n_clusters);
    arma::uword gmin = out.n_clusters.empty() ? 0 : out.n_clusters[0];
    for (arma::uword g : out.n_clusters) gmin = std::min(gmin, g);
    out.df_inference = static_cast<double>(gmin) - 1.0;
  }
  if ((cov.type == CovType::HC2 || cov.type == CovType::HC3) && rank() > 0) {
    // Rows the sandwich left out as leverage one (the same test as sandwich_meat's).
    const double tol = ols_leverage_tol(st_.qr, solve_r(arma::eye(rank(), rank())));
    const arma::vec h = hat_diagonal();
    for (arma::uword i = 0; i < n; ++i) {
      double hi = h(i);
      if (st_.frequency_weights) hi = st_.weights(i) > 0.0 ? hi / st_.weights(i) : 0.0;
      if (!(1.0 - hi > tol)) ++out.n_leverage_one;
    }
  }
  const arma::mat e = residuals();
  out.sigma = arma::sqrt(sigma2());
  ls_detail::finish_inference(out, y_, e, st_.weights, st_.fit_intercept, n_effective());
  return out;
}

}  // namespace attnreg
