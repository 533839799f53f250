// attnreg: the search box of the bandwidth selection (bandwidth_select.hpp, "Floor"): the
// estimator's limit of definition per continuous column, the bwcheck guard, the range of the
// categorical lambdas; and the normal-reference rule.
#include "attnreg/detail/bandwidth_select_internal.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "attnreg/base/error.hpp"

namespace attnreg {
namespace bandwidth_detail {

namespace {

// Distance from each distinct value to its k-th nearest other distinct value; the largest.
double kth_distinct_gap(const arma::vec& x, int k) {
  arma::vec u = arma::unique(x);  // sorted
  const std::size_t m = u.n_elem;
  double worst = 0.0;
  for (std::size_t t = 0; t < m; ++t) {
    // Merge the left and right neighbours in order of distance.
    std::size_t l = t, r = t;
    double d = 0.0;
    for (int j = 0; j < k; ++j) {
      const double dl = l > 0 ? u(t) - u(l - 1) : kInf;
      const double dr = r + 1 < m ? u(r + 1) - u(t) : kInf;
      if (dl <= dr) {
        d = dl;
        --l;
      } else {
        d = dr;
        ++r;
      }
    }
    worst = std::max(worst, d);
  }
  return worst;
}

// The estimator's own limit of definition in one continuous column (the default floor of the
// search box; see "Floor" in bandwidth_select.hpp). For each distinct value v_t of the column
// (c_t rows), the leave-one-out fit at a row with that value sees the other rows: its own value
// again when c_t >= 2 (distance 0) and the other distinct values. d1 <= d2 are the distances to
// the nearest two such design values. The smallest bandwidth h_t at which that fit exists and
// keeps its digits:
//   local constant: one neighbour with weight the engine accepts: d1 < h (compact kernels;
//     the point at distance exactly h has weight 0) or k(d1/h) >= KernelSpace::kTinyWeight
//     (Gaussian: d1/h < r = sqrt(2 ln(1/kTinyWeight)) ~ 36.5);
//   local linear: two distinct design values; compact kernels: d2 < h; the Gaussian: the nearer
//     one accepted as above, and the equilibrated 2 x 2 local design [S0 S1; S1 S2] of the two
//     keeps its smallest Cholesky pivot 1 - S1^2 / (S0 S2) >= kFloorPivot, so the fit loses at
//     most 8 of its 16 digits. With weights w1, w2 = rho w1 at signed distances s1 d1, s2 d2
//     the pivot is rho D / ((1 + rho)(a + rho b)), D = (s1 d1 - s2 d2)^2, a = d1^2, b = d2^2,
//     which rises with rho = exp(-(d2^2 - d1^2) / (2 h^2)); the smallest admissible rho is the
//     smaller root of tau b rho^2 + (tau (a + b) - D) rho + tau a = 0 and gives
//     h = sqrt((d2^2 - d1^2) / (-2 ln rho)); the nearest value is paired with each of the next
//     five and the best pair counts (two values almost on top of each other on one side never
//     make a good design alone). (d1 = 0, a tied own value: the pivot is c / (c + rho) ~ 1, so
//     only d2 / h < r is needed.)
// The floor is max_t h_t. When that is 0 (every value repeated, local constant) the column's
// objective is constant below the smallest gap between distinct values divided by r (compact:
// the gap itself), where the column already acts as exact matching; that is the floor then.
// This is a per-column necessary condition: a multivariate bandwidth whose leave-one-out fits
// fail is scored +inf by the objective (and the search steps back).
constexpr double kFloorPivot = 1e-8;

double definition_floor(const arma::vec& x, int degree, const Kernel& kernel) {
  arma::vec u = arma::sort(x);
  std::vector<double> val;
  std::vector<std::size_t> cnt;
  for (double v : u) {
    if (val.empty() || v != val.back()) {
      val.push_back(v);
      cnt.push_back(1);
    } else {
      ++cnt.back();
    }
  }
  const std::size_t m = val.size();
  const bool compact = kernel.compact();
  const double r = std::sqrt(-2.0 * std::log(KernelSpace::kTinyWeight));
  double floor = 0.0, min_gap = kInf;
  for (std::size_t t = 0; t + 1 < m; ++t) min_gap = std::min(min_gap, val[t + 1] - val[t]);
  for (std::size_t t = 0; t < m; ++t) {
    // The nearest design values (signed distances), own value first when repeated.
    constexpr int kNear = 6;
    double sd[kNear];
    int have = 0;
    if (cnt[t] >= 2) sd[have++] = 0.0;
    std::size_t l = t, rr = t;
    while (have < kNear) {
      const double dl = l > 0 ? val[t] - val[l - 1] : kInf;
      const double dr = rr + 1 < m ? val[rr + 1] - val[t] : kInf;
      if (!std::isfinite(dl) && !std::isfinite(dr)) break;
      if (dl <= dr) {
        sd[have++] = -dl;
        --l;
      } else {
        sd[have++] = dr;
        ++rr;
      }
    }
    const double d1 = std::fabs(sd[0]);
    double ht;
    if (degree == 0) {
      ht = compact ? d1 : d1 / r;
    } else {
      const double d2 = have > 1 ? std::fabs(sd[1]) : kInf;
      if (compact) {
        ht = d2;
      } else if (d1 == 0.0 || d2 == d1) {
        ht = d2 / r;
      } else {
        // The nearest value paired with each of the next ones: the best such 2-point design
        // (two values almost on top of each other on one side never make a good one alone).
        ht = kInf;
        for (int k = 1; k < have; ++k) {
          const double dk = std::fabs(sd[k]);
          const double a = d1 * d1, b = dk * dk, D = (sd[0] - sd[k]) * (sd[0] - sd[k]);
          const double tau = kFloorPivot;
          const double B = tau * (a + b) - D, disc = B * B - 4.0 * tau * b * tau * a;
          if (!(B < 0.0 && disc >= 0.0)) continue;  // pivot < tau at every h
          // Smaller root, computed without cancellation: rho = 2 C / (-B + sqrt(disc)).
          const double rho = std::min(2.0 * tau * a / (-B + std::sqrt(disc)), std::exp(-1.0));
          const double hk = b > a ? std::sqrt((b - a) / (-2.0 * std::log(rho))) : 0.0;
          ht = std::min(ht, std::max(d1 / r, hk));
        }
        if (!std::isfinite(ht)) ht = std::max(d1 / r, std::sqrt((d2 * d2 - d1 * d1) / 2.0));
      }
    }
    floor = std::max(floor, ht);
  }
  if (!(floor > 0.0)) floor = compact ? min_gap : min_gap / r;
  // Step just beyond the limit: compact kernels give a point exactly at distance h weight 0,
  // and the Gaussian's weight at exactly r bandwidths is the threshold itself.
  return floor * (1.0 + 1e-9);
}

}  // namespace

void search_box(const arma::mat& X, const std::vector<VarType>& types,
                const BandwidthSelectOptions& opt, arma::vec& lower, arma::vec& upper,
                std::vector<int>& levels) {
  const int k = opt.min_neighbors > 0 ? opt.min_neighbors : opt.degree + 1;
  lower.set_size(X.n_cols);
  upper.set_size(X.n_cols);
  levels.assign(X.n_cols, 0);
  for (std::size_t j = 0; j < X.n_cols; ++j) {
    const arma::vec col = X.col(j);
    const std::size_t n_distinct = arma::vec(arma::unique(col)).n_elem;
    if (types[j] == VarType::continuous) {
      if (n_distinct < static_cast<std::size_t>(k) + 1) {
        std::ostringstream m;
        m << "X: continuous column " << (j + 1) << " has " << n_distinct
          << " distinct value(s); a data-driven bandwidth for "
          << (opt.degree == 1 ? "local linear" : "local constant") << " needs at least "
          << (k + 1) << " (drop the column, declare it categorical in var_types, or pass a "
          << "bandwidth by hand)";
        throw InvalidArgument(m.str());
      }
      if (opt.min_neighbors > 0) {
        // The bwcheck guard asked for: k distinct neighbours within reach of every point.
        const double gap = kth_distinct_gap(col, k);
        const double factor = opt.kernel.kernel.compact() ? 1.0 : 1.0 / 3.0;
        // Compact kernels: a point exactly at distance h has weight 0, so step just beyond.
        lower(j) = gap * factor * (opt.kernel.kernel.compact() ? 1.0 + 1e-9 : 1.0);
      } else {
        lower(j) = definition_floor(col, opt.degree, opt.kernel.kernel);
      }
      upper(j) = 100.0 * (col.max() - col.min());
    } else {
      for (double v : col)
        check::require(v == std::floor(v), "X",
                       "categorical column " + std::to_string(j + 1) +
                           " must hold integer codes");
      check::require(n_distinct >= 2, "X",
                     "categorical column " + std::to_string(j + 1) +
                         " has a single level: drop it (it cannot change any fit)");
      levels[j] = static_cast<int>(n_distinct);
      const CategoricalKernel& ck =
          types[j] == VarType::ordered ? opt.kernel.ordered_kernel : opt.kernel.unordered_kernel;
      const double mx = ck.max_bandwidth(levels[j]);
      lower(j) = 1e-6 * mx;
      upper(j) = ck.type == CategoricalKernelType::wang_van_ryzin ||
                          ck.type == CategoricalKernelType::aitchison_aitken
                      ? mx * (1.0 - 1e-6)
                      : mx;
    }
  }
}

}  // namespace bandwidth_detail

arma::vec rot_bandwidth(const arma::mat& X, const Kernel& kernel) {
  check::require(X.n_rows >= 2, "X", "needs at least 2 rows for a normal-reference bandwidth");
  check::all_finite(X, "X");
  const double n = static_cast<double>(X.n_rows);
  const double q = static_cast<double>(X.n_cols);
  // Canonical-bandwidth ratio delta(K) / delta(phi) (Marron and Nolan 1988).
  kernel.require_second_order("the rule-of-thumb bandwidth");
  const double delta_k = std::pow(kernel.roughness() / (kernel.mu2() * kernel.mu2()), 0.2);
  const double delta_phi = std::pow(0.28209479177387814347, 0.2);  // 1/(2 sqrt(pi))
  arma::vec h(X.n_cols);
  for (std::size_t j = 0; j < X.n_cols; ++j) {
    arma::vec x = arma::sort(X.col(j));
    const double sd = arma::stddev(x);
    auto quant = [&](double p) {
      const double pos = p * (n - 1.0);
      const std::size_t lo = static_cast<std::size_t>(std::floor(pos));
      const std::size_t hi = std::min<std::size_t>(lo + 1, x.n_elem - 1);
      return x(lo) + (pos - lo) * (x(hi) - x(lo));
    };
    const double iqr = quant(0.75) - quant(0.25);
    const double s = iqr > 0.0 ? std::min(sd, iqr / 1.349) : sd;
    check::require(s > 0.0, "X",
                   "column " + std::to_string(j + 1) +
                       " is constant: no normal-reference bandwidth exists (drop it)");
    h(j) = 1.06 * s * std::pow(n, -1.0 / (4.0 + q)) * delta_k / delta_phi;
  }
  return h;
}

}  // namespace attnreg
