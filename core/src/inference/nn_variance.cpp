// Nearest-neighbour residual variance (nn_variance.hpp).
#include "attnreg/inference/nn_variance.hpp"

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "attnreg/base/error.hpp"

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
