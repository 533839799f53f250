// Nearest-neighbour residual variance (nn_variance.hpp).
#include "attnreg/inference/nn_variance.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "attnreg/base/error.hpp"
#include "attnreg/kernels/distinct_rows.hpp"

namespace attnreg {

arma::vec nn_residual_variance(const arma::vec& x, const arma::vec& y, int J) {
  const std::size_t n = x.n_elem;
  check::require(y.n_elem == n, "y", "needs one value per observation of x");
  check::require(n >= 2, "x", "nearest-neighbour variances need at least 2 observations");
  check::require(J >= 1, "nnmatch", "must be >= 1");
  check::all_finite(x, "x");
  check::all_finite(y, "y");
  std::vector<std::size_t> ord(n);
  std::iota(ord.begin(), ord.end(), 0);
  std::stable_sort(ord.begin(), ord.end(), [&](std::size_t a, std::size_t b) { return x(a) < x(b); });
  // Tie groups over the sorted order: [start, end) per position.
  std::vector<std::size_t> gs(n), ge(n);
  for (std::size_t p = 0; p < n;) {
    std::size_t q = p;
    while (q < n && x(ord[q]) == x(ord[p])) ++q;
    for (std::size_t r = p; r < q; ++r) {
      gs[r] = p;
      ge[r] = q;
    }
    p = q;
  }
  const std::size_t need = std::min<std::size_t>(static_cast<std::size_t>(J), n - 1);
  arma::vec out(n);
  // Every member of a tie group has the same window [lo, hi) and so the same window sum S:
  // computed once per group (the members' sums are S - y_p), so heavily tied data cost O(n)
  // rather than O(n * group size).
  std::size_t lo = 0, hi = 0;
  double S = 0.0;
  for (std::size_t p = 0; p < n; ++p) {
    if (p > 0 && gs[p] == gs[p - 1]) {
      const double Ji = static_cast<double>(hi - lo - 1);
      const double d = y(ord[p]) - (S - y(ord[p])) / Ji;
      out(ord[p]) = Ji / (Ji + 1.0) * d * d;
      continue;
    }
    lo = gs[p];
    hi = ge[p];  // included: [lo, hi), own tie group first
    while (hi - lo - 1 < need) {
      const bool has_l = lo > 0, has_r = hi < n;
      const double xp = x(ord[p]);
      const double dl = has_l ? xp - x(ord[lo - 1]) : 0.0;
      const double dr = has_r ? x(ord[hi]) - xp : 0.0;
      if (!has_l || (has_r && dr < dl)) {
        hi = ge[hi];
      } else if (!has_r || dl < dr) {
        lo = gs[lo - 1];
      } else {  // equally far: both groups
        hi = ge[hi];
        lo = gs[lo - 1];
      }
    }
    S = 0.0;
    for (std::size_t r = lo; r < hi; ++r) S += y(ord[r]);
    const double Ji = static_cast<double>(hi - lo - 1);
    const double d = y(ord[p]) - (S - y(ord[p])) / Ji;
    out(ord[p]) = Ji / (Ji + 1.0) * d * d;
  }
  return out;
}

}  // namespace attnreg

namespace attnreg {

namespace {

// The nearest distinct rows of distinct row r (position p of `ord`, its cell occupying
// positions [cs, ce)) until at least `want` observations are found, whole distance levels
// (every row at the final radius); returns their total count and response sum.
std::pair<double, double> nn_neighbours(const arma::mat& Xd, const arma::vec& h,
                                        const std::vector<std::size_t>& ord, std::size_t p,
                                        std::size_t cs, std::size_t ce, const arma::vec& cnt,
                                        const arma::vec& sum, double want) {
  const std::size_t r = ord[p], dc = Xd.n_cols;
  auto dist = [&](std::size_t s) {
    double d2 = 0.0;
    for (std::size_t c = 0; c < dc; ++c) {
      const double u = (Xd(s, c) - Xd(r, c)) / h(c);
      d2 += u * u;
    }
    return d2;
  };
  std::vector<std::pair<double, std::size_t>> best;  // (distance, row), ascending, within kth
  double kth = std::numeric_limits<double>::infinity();
  auto consider = [&](std::size_t s) {
    const double d2 = dist(s);
    if (d2 > kth) return;
    best.insert(std::upper_bound(best.begin(), best.end(), std::make_pair(d2, s)), {d2, s});
    double c = 0.0;
    for (std::size_t k = 0; k < best.size(); ++k) {
      c += cnt(best[k].second);
      if (c >= want) {
        kth = best[k].first;
        std::size_t e = k + 1;
        while (e < best.size() && best[e].first <= kth) ++e;
        best.resize(e);
        break;
      }
    }
  };
  // Sorted by the first continuous column: a row whose gap there alone exceeds kth is farther.
  auto gap = [&](std::size_t s) {
    const double u = dc ? (Xd(s, 0) - Xd(r, 0)) / h(0) : 0.0;
    return u * u;
  };
  for (std::size_t q = p + 1; q < ce && gap(ord[q]) <= kth; ++q) consider(ord[q]);
  for (std::size_t q = p; q > cs && gap(ord[q - 1]) <= kth; --q) consider(ord[q - 1]);
  double c = 0.0, s = 0.0;
  for (const auto& [d2, k] : best) {
    c += cnt(k);
    s += sum(k);
  }
  return {c, s};
}

}  // namespace

arma::vec nn_residual_variance(const arma::mat& X, const arma::vec& h,
                               const arma::uvec& cell, const arma::vec& y, int J) {
  const std::size_t n = X.n_rows, dc = X.n_cols;
  check::require(y.n_elem == n, "y", "needs one value per row of X");
  check::require(h.n_elem == dc && (dc == 0 || (h.is_finite() && h.min() > 0)), "h",
                 "needs one positive bandwidth per continuous column");
  check::require(cell.is_empty() || cell.n_elem == n, "cell", "needs one cell id per row of X");
  check::require(J >= 1, "nnmatch", "must be >= 1");
  check::all_finite(X, "X");
  check::all_finite(y, "y");
  // Distinct rows of (cell, x): tied rows are at distance 0 and always neighbours of each other.
  arma::mat key(n, dc + 1);
  key.col(0) = cell.is_empty() ? arma::vec(n, arma::fill::zeros)
                               : arma::conv_to<arma::vec>::from(cell);
  if (dc) key.cols(1, dc) = X;
  const DistinctRows grp = distinct_rows(key);
  const std::size_t G = grp.X.n_rows;
  const arma::mat Xd = dc ? arma::mat(grp.X.cols(1, dc)) : arma::mat(G, 0);
  arma::vec cnt(G, arma::fill::zeros), sum(G, arma::fill::zeros);
  for (std::size_t i = 0; i < n; ++i) {
    cnt(grp.group_of[i]) += 1.0;
    sum(grp.group_of[i]) += y(i);
  }
  std::vector<std::size_t> ord(G);
  std::iota(ord.begin(), ord.end(), 0);
  std::stable_sort(ord.begin(), ord.end(), [&](std::size_t a, std::size_t b) {
    if (grp.X(a, 0) != grp.X(b, 0)) return grp.X(a, 0) < grp.X(b, 0);
    return dc && Xd(a, 0) < Xd(b, 0);
  });
  arma::vec ro(G);  // per distinct row: J_i and the sum over its neighbours (own group included)
  arma::vec rsum(G);
  for (std::size_t cs = 0; cs < G;) {
    std::size_t ce = cs;
    double ncell = 0.0;
    while (ce < G && grp.X(ord[ce], 0) == grp.X(ord[cs], 0)) ncell += cnt(ord[ce++]);
    if (ncell < 2)
      throw NumericalError("kind: 'nn' (nearest-neighbour residuals): row " +
                           std::to_string(std::find(grp.group_of.begin(), grp.group_of.end(),
                                                    ord[cs]) - grp.group_of.begin() + 1) +
                           " has no other row with the same categorical values; use 'hc3'");
    const double need = std::min<double>(J, ncell - 1);
    for (std::size_t p = cs; p < ce; ++p) {
      const std::size_t r = ord[p];
      const double want = need - (cnt(r) - 1);
      const auto [c, s] = want > 0
                              ? nn_neighbours(Xd, h, ord, p, cs, ce, cnt, sum, want)
                              : std::pair<double, double>{0.0, 0.0};
      ro(r) = cnt(r) - 1 + c;
      rsum(r) = sum(r) + s;
    }
    cs = ce;
  }
  arma::vec out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t r = grp.group_of[i];
    const double Ji = ro(r), d = y(i) - (rsum(r) - y(i)) / Ji;
    out(i) = Ji / (Ji + 1.0) * d * d;
  }
  return out;
}

}  // namespace attnreg
