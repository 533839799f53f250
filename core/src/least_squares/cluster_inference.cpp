// Cluster-robust building blocks: see attnreg/least_squares/cluster_inference.hpp.
#include "attnreg/least_squares/cluster_inference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <vector>

#include "attnreg/base/error.hpp"
#include "attnreg/base/names.hpp"

namespace attnreg {

namespace cluster_detail {
constexpr double kNaNc = std::numeric_limits<double>::quiet_NaN();

// Rows of each cluster, in row order.
std::vector<arma::uvec> members_of(const arma::uvec& codes, arma::uword G) {
  std::vector<std::vector<arma::uword>> m(G);
  for (arma::uword i = 0; i < codes.n_elem; ++i) m[codes(i)].push_back(i);
  std::vector<arma::uvec> out;
  out.reserve(G);
  for (auto& v : m) out.emplace_back(arma::conv_to<arma::uvec>::from(v));
  return out;
}

// Per-cluster sums of x (n) -> G.
arma::vec cluster_sums(const arma::vec& x, const arma::uvec& codes, arma::uword G) {
  arma::vec s(G, arma::fill::zeros);
  for (arma::uword i = 0; i < x.n_elem; ++i) s(codes(i)) += x(i);
  return s;
}

// Per-cluster X_g' u_g -> k x G.
arma::mat cluster_scores(const arma::mat& X, const arma::vec& u, const arma::uvec& codes,
                         arma::uword G) {
  arma::mat S(G, X.n_cols, arma::fill::zeros);
  for (arma::uword j = 0; j < X.n_cols; ++j) {
    const double* x = X.colptr(j);
    double* s = S.colptr(j);
    for (arma::uword i = 0; i < X.n_rows; ++i) s[codes(i)] += x[i] * u(i);
  }
  return S.t();
}

// J_gh = sum_{i in g} z_i [M_D (u 1_h)]_i for u = u0 and u = m (fixed effects not nested in the
// clusters), in blocks of clusters h, both in one call of the annihilator.
void not_nested_blocks(const Annihilator& annihilate, const std::vector<arma::uvec>& members,
                       const arma::vec& z, const arma::vec& u0, const arma::vec& m,
                       const arma::uvec& codes, arma::uword G, arma::mat& J0, arma::mat& J1) {
  const arma::uword n = z.n_elem;
  J0.zeros(G, G);
  J1.zeros(G, G);
  constexpr arma::uword kBlock = 32;
  for (arma::uword h0 = 0; h0 < G; h0 += kBlock) {
    const arma::uword h1 = std::min(G, h0 + kBlock), w = h1 - h0;
    arma::mat Uh(n, 2 * w, arma::fill::zeros);
    for (arma::uword h = h0; h < h1; ++h) {
      for (arma::uword i : members[h]) {
        Uh(i, h - h0) = u0(i);
        Uh(i, w + h - h0) = m(i);
      }
    }
    const arma::mat W = annihilate(Uh);
    for (arma::uword h = h0; h < h1; ++h) {
      J0.col(h) = cluster_sums(z % W.col(h - h0), codes, G);
      J1.col(h) = cluster_sums(z % W.col(w + h - h0), codes, G);
    }
  }
}

// Test inversion from the estimate (p = 1) outward in direction dir: double the step until
// p(r) <= alpha, then bisect to 1e-10 of the scale. NaN when no such r is found.
double inversion_bound(const std::function<double(double)>& pval, double estimate, double se,
                       double alpha, double dir) {
  if (!(se > 0) || !std::isfinite(se)) se = 1.0;
  double inside = estimate, step = se, outside = kNaNc;
  for (int it = 0; it < 60; ++it) {
    const double cand = estimate + dir * step;
    if (pval(cand) <= alpha) {
      outside = cand;
      break;
    }
    inside = cand;
    step *= 2.0;
  }
  if (std::isnan(outside)) return kNaNc;
  const double tol = 1e-10 * (std::fabs(estimate) + se);
  for (int it = 0; it < 200 && std::fabs(outside - inside) > tol; ++it) {
    const double mid = 0.5 * (inside + outside);
    (pval(mid) <= alpha ? outside : inside) = mid;
  }
  return 0.5 * (inside + outside);
}
}  // namespace cluster_detail

namespace cd = cluster_detail;

FixefK parse_fixef_k(const std::string& name) {
  const std::string s = detail::lower_case(name);
  if (s == "none") return FixefK::None;
  if (s == "nonnested" || s == "nested") return FixefK::Nonnested;
  if (s == "full") return FixefK::Full;
  throw InvalidArgument("k_fixef: must be \"nonnested\" (fixest's default), \"full\" or \"none\", got \"" +
                        name + "\"");
}

std::string fixef_k_name(FixefK k) {
  switch (k) {
    case FixefK::None: return "none";
    case FixefK::Full: return "full";
    default: return "nonnested";
  }
}

double cr1_factor(double N, double K, double G, const SmallSample& s) {
  double c = 1.0;
  if (s.g_adj) c *= G > 1 ? G / (G - 1.0) : cd::kNaNc;
  if (s.k_adj) c *= N - K > 0 ? (N - 1.0) / (N - K) : cd::kNaNc;
  return c;
}

arma::uvec dense_cluster_codes(const arma::uvec& ids, arma::uword& G) {
  const arma::uword n = ids.n_elem;
  arma::uvec code(n);
  G = 0;
  // Small ids: a table over their range instead of a sort (same codes, O(n)).
  const arma::uword top = n > 0 ? ids.max() : 0;
  if (n > 0 && top <= 4 * n + 1024) {
    constexpr arma::uword kAbsent = static_cast<arma::uword>(-1);
    std::vector<arma::uword> map(top + 1, kAbsent);
    for (arma::uword i = 0; i < n; ++i) map[ids(i)] = 0;
    for (arma::uword c = 0; c <= top; ++c) {
      if (map[c] != kAbsent) map[c] = G++;
    }
    for (arma::uword i = 0; i < n; ++i) code(i) = map[ids(i)];
    return code;
  }
  const arma::uvec order = arma::stable_sort_index(ids);
  G = 0;
  for (arma::uword a = 0; a < n; ++a) {
    const arma::uword i = order(a);
    if (a == 0 || ids(i) != ids(order(a - 1))) ++G;
    code(i) = G - 1;
  }
  return code;
}

arma::mat cluster_jackknife(const arma::mat& X, const arma::mat& A, const arma::vec& e,
                            const arma::uvec& codes, arma::uword G,
                            const JackknifeCorrection& correct) {
  const arma::uword k = X.n_cols;
  check::require(X.n_rows == e.n_elem && codes.n_elem == e.n_elem, "clusters",
                 "must have one id per training row");
  if (G < 2) {
    throw InvalidArgument("clusters: CR3 needs at least 2 clusters (use another clustering "
                          "variable or a heteroskedasticity-robust cov_type)");
  }
  const std::vector<arma::uvec> members = cd::members_of(codes, G);
  bool all_single = true;
  for (const auto& m : members) all_single = all_single && m.n_elem <= 1;
  if (all_single) {
    throw InvalidArgument(
        "cov_type: CR3 with one observation in every cluster is the leave-one-out jackknife "
        "of the rows, not a cluster jackknife; use cov_type=\"HC3\" (or cluster on a coarser "
        "variable)");
  }
  arma::mat S(k, k, arma::fill::zeros);
  if (k == 0) return S;
  // Coordinates scaled by diag(A)^{-1/2}, so the rank test below does not depend on units.
  arma::vec s = A.diag();
  for (arma::uword j = 0; j < k; ++j) s(j) = s(j) > 0 ? 1.0 / std::sqrt(s(j)) : 1.0;
  const arma::mat An = A % (s * s.t());
  for (arma::uword g = 0; g < G; ++g) {
    const arma::uvec& idx = members[g];
    if (idx.is_empty()) continue;
    arma::mat Xg = X.rows(idx);
    arma::mat CXg = Xg;
    arma::vec Ceg = e(idx);
    if (correct) correct(idx, CXg, Ceg);
    Xg.each_row() %= s.t();
    CXg.each_row() %= s.t();
    arma::mat Ag = An - Xg.t() * CXg;
    Ag = 0.5 * (Ag + Ag.t());
    const arma::vec rhs = Xg.t() * Ceg;
    arma::vec lam;
    arma::mat U;
    if (!arma::eig_sym(lam, U, Ag)) {
      throw NumericalError("CR3: eigendecomposition of a leave-one-cluster-out cross-product failed");
    }
    // An has unit diagonal; a leave-one-out Gram whose smallest eigenvalue is at rounding level
    // relative to it has lost a direction: the jackknife estimate is undefined.
    if (!(lam.min() > 1e-10 * std::max(1.0, lam.max()))) {
      std::ostringstream msg;
      msg << "cov_type: CR3: without cluster " << g + 1 << " of " << G
          << " (in increasing order of the cluster ids) the remaining rows do not identify "
             "every coefficient, so the jackknife (MacKinnon, Nielsen and Webb 2023) is "
             "undefined; use CR1 or CR2, or drop the regressor only that cluster identifies";
      throw InvalidArgument(msg.str());
    }
    const arma::vec d = s % (U * ((U.t() * rhs) / lam));
    S += d * d.t();
  }
  return S * ((static_cast<double>(G) - 1.0) / static_cast<double>(G));
}

arma::mat rademacher_enumeration(arma::uword G) {
  check::require(G >= 1 && G <= 20, "clusters",
                 "full enumeration of Rademacher draws is for 1..20 clusters");
  const arma::uword B = arma::uword(1) << G;
  arma::mat V(G, B);
  for (arma::uword b = 0; b < B; ++b) {
    for (arma::uword g = 0; g < G; ++g) V(g, b) = ((b >> g) & 1u) ? -1.0 : 1.0;
  }
  return V;
}

WildBootstrapResult wild_cluster_bootstrap(const arma::mat& X, const arma::vec& y,
                                           const arma::uvec& codes, arma::uword G,
                                           const arma::vec& R, double r, const arma::mat& V,
                                           double level, double factor,
                                           const Annihilator& annihilate) {
  const arma::uword n = X.n_rows, k = X.n_cols;
  check::require(y.n_elem == n && codes.n_elem == n, "clusters", "must have one id per row");
  check::require(R.n_elem == k, "param", "must give one weight per coefficient");
  check::require(V.n_rows == G && V.n_cols >= 1, "replications",
                 "the bootstrap weights must have one row per cluster");
  check::require(level > 0 && level < 1, "level",
                 "is a fraction: 0.95 for a 95% interval");
  check::require(G >= 2, "clusters", "the wild cluster bootstrap needs at least 2 clusters");
  const arma::mat A = X.t() * X;
  const arma::vec c = arma::solve(A, R, arma::solve_opts::likely_sympd);
  const arma::vec b = arma::solve(A, X.t() * y, arma::solve_opts::likely_sympd);
  const arma::vec e = y - X * b;
  const double q = arma::dot(R, c);
  check::require(q > 0, "param", "is a zero restriction (all weights 0)");
  const arma::vec z = X * c;
  WildBootstrapResult out;
  out.n_clusters = G;
  out.replications = V.n_cols;
  out.estimate = arma::dot(R, b);
  const arma::vec sg = cd::cluster_sums(z % e, codes, G);
  out.std_error = std::sqrt(factor * arma::dot(sg, sg));
  // u(r) = u0 - r m: the restricted residuals as an affine function of r.
  const arma::vec m = z / q;
  const arma::vec u0 = e + z * (out.estimate / q);
  const arma::mat P = cd::cluster_scores(X, z, codes, G);  // k x G: X_g' z
  auto pieces = [&](const arma::vec& u, arma::vec& a, arma::mat& M) {
    a = cd::cluster_sums(z % u, codes, G);
    M = arma::solve(A, cd::cluster_scores(X, u, codes, G), arma::solve_opts::likely_sympd);
  };
  if (annihilate && static_cast<double>(G) * G > 1e8) {
    throw InvalidArgument("clusters: the wild bootstrap with fixed effects that are not nested "
                          "in the clusters forms a G x G matrix; at most 10,000 clusters (or "
                          "cluster on a variable the fixed effects are nested in)");
  }
  arma::vec a0, a1;
  arma::mat M0, M1, J0, J1;
  pieces(u0, a0, M0);
  pieces(m, a1, M1);
  if (annihilate) {
    cd::not_nested_blocks(annihilate, cd::members_of(codes, G), z, u0, m, codes, G, J0, J1);
  }
  const arma::uword B = V.n_cols;
  arma::vec n0(B), n1(B), s00(B), s01(B), s11(B);
  constexpr arma::uword kCols = 512;
  for (arma::uword b0 = 0; b0 < B; b0 += kCols) {
    const arma::uword b1 = std::min(B, b0 + kCols);
    const arma::mat Vb = V.cols(b0, b1 - 1);
    arma::mat S0 = annihilate ? arma::mat(J0 * Vb) : arma::mat(Vb.each_col() % a0);
    arma::mat S1 = annihilate ? arma::mat(J1 * Vb) : arma::mat(Vb.each_col() % a1);
    S0 -= P.t() * (M0 * Vb);
    S1 -= P.t() * (M1 * Vb);
    n0.subvec(b0, b1 - 1) = Vb.t() * a0;
    n1.subvec(b0, b1 - 1) = Vb.t() * a1;
    s00.subvec(b0, b1 - 1) = arma::sum(arma::square(S0), 0).t();
    s01.subvec(b0, b1 - 1) = arma::sum(S0 % S1, 0).t();
    s11.subvec(b0, b1 - 1) = arma::sum(arma::square(S1), 0).t();
  }
  auto tstar = [&](double rr, arma::uword bb) {
    const double den = factor * (s00(bb) - 2.0 * rr * s01(bb) + rr * rr * s11(bb));
    return (n0(bb) - rr * n1(bb)) / std::sqrt(std::max(den, 0.0));
  };
  // Share of |t*| >= |t|; a draw that reproduces the sample (v = 1: t* = t in exact
  // arithmetic) counts, so ties within rounding (1e-12 relative) count as >=.
  auto pval = [&](double rr) {
    const double t = std::fabs((out.estimate - rr) / out.std_error);
    arma::uword cnt = 0;
    for (arma::uword bb = 0; bb < B; ++bb) {
      if (std::fabs(tstar(rr, bb)) >= t * (1.0 - 1e-12)) ++cnt;
    }
    return static_cast<double>(cnt) / static_cast<double>(B);
  };
  out.t_stat = (out.estimate - r) / out.std_error;
  out.p_value = pval(r);
  out.t_boot.set_size(B);
  for (arma::uword bb = 0; bb < B; ++bb) out.t_boot(bb) = tstar(r, bb);
  // Test inversion: the interval holds the r with p(r) > 1 - level.
  const std::function<double(double)> pfun = pval;
  auto bound = [&](double dir) {
    return cd::inversion_bound(pfun, out.estimate, out.std_error, 1.0 - level, dir);
  };
  out.ci_lower = bound(-1.0);
  out.ci_upper = bound(1.0);
  return out;
}

}  // namespace attnreg
