// attnreg: the manipulation test of a regression discontinuity design -- continuity of the
// density of the running variable at the cutoff (Cattaneo, Jansson and Ma 2020, JASA 115(531),
// "Simple local polynomial density estimators"), with the bandwidth rules of the rdpackages
// software (Cattaneo, Jansson and Ma 2018, Stata Journal 18(1), section 2) and the binomial tests
// in windows around the cutoff (Cattaneo, Titiunik and Vazquez-Bare 2017, J. Policy Anal. Manage.
// 36(3); the window rule of R rddensity, see docs/rd.md).
//
// The estimator: sort x, let F_i = (i - 1)/(n - 1) be the empirical distribution at the i-th
// order statistic (at a tie group, its last member's value), and on each side of c regress F on a
// polynomial of order q in (x - c)/h with kernel weights K((x - c)/h)/h; the slope is the density
// at c from that side (the restricted model: one fit over both sides with a common level and
// common higher derivatives, a slope per side). The variance is the jackknife of the paper (its section 3.2): the
// leave-one-out influence of each row on the fit is a tail sum of the weighted design over the
// rows above it, so both sides cost one pass over the sorted window; or the plug-in asymptotic
// variance (their Theorem 1), kernel constants in closed form times the estimated densities.
#pragma once

#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "attnreg/rd/rdrobust.hpp"

namespace attnreg {
namespace rd {

struct RdDensityOptions {
  double c = 0.0;
  int p = 2;         ///< order of the bandwidth-selection fit (1..7)
  int q = -1;        ///< order of the test fit; -1: p + 1
  RdKernel kernel = RdKernel::triangular;
  std::string bwselect = "comb";  ///< each, diff, sum, comb (restricted: diff, sum, comb)
  /// "unrestricted": each side its own distribution function; "restricted": one distribution
  /// function, continuous with common derivatives of order >= 2, a density (slope) per side
  /// (Cattaneo, Jansson and Ma 2018, Stata Journal 18(1), section 2); one bandwidth.
  std::string fitselect = "unrestricted";
  /// "jackknife" (Cattaneo, Jansson and Ma 2020, section 3.2) or "plugin": the asymptotic
  /// variance of their Theorem 1 evaluated at the estimated densities.
  std::string vce = "jackknife";
  double h_left = std::numeric_limits<double>::quiet_NaN();   ///< NaN: selected
  double h_right = std::numeric_limits<double>::quiet_NaN();
  bool masspoints = true;
  bool regularize = true;
  int nlocalmin = -1;   ///< -1: 20 + p + 1
  int nuniquemin = -1;  ///< -1: 20 + p + 1
  int bino_n = 20;      ///< rows on each side in the first window (when bino_w is NaN)
  double bino_w = std::numeric_limits<double>::quiet_NaN();  ///< half-length of the first window
  int bino_nw = 10;     ///< number of windows (0: no binomial tests)
  double bino_p = 0.5;
};

struct RdDensityResult {
  double f_left = 0, f_right = 0, diff = 0;       ///< density estimates at c (order q)
  double se_left = 0, se_right = 0, se_diff = 0;  ///< standard errors (of vce)
  double statistic = 0, p_value = 0;
  double h_left = 0, h_right = 0;
  std::string bwselect;  ///< "manual" when both bandwidths were given
  std::string fitselect, vce;  ///< the model and the variance behind se_* and statistic
  /// rdbwdensity's table: rows left, right, diff, sum; columns bandwidth, variance, bias^2
  /// (empty when both bandwidths were given).
  std::vector<double> bw_table;
  std::size_t n = 0, n_left = 0, n_right = 0, nh_left = 0, nh_right = 0;
  bool mass_points = false;
  // Binomial tests: half-lengths left/right, counts left/right, two-sided p-values.
  std::vector<double> bino_w_left, bino_w_right, bino_p_value;
  std::vector<std::size_t> bino_n_left, bino_n_right;
};

/// x: the running variable, finite (the caller drops missing values). Throws InvalidArgument.
RdDensityResult rddensity(const std::vector<double>& x, const RdDensityOptions& opt);

/// Two-sided exact binomial test of P(success) = prob (the rule of R binom.test: the sum of the
/// probabilities of outcomes no more likely than k, with relative tolerance 1e-7).
double binomial_test(std::size_t k, std::size_t n, double prob);

}  // namespace rd
}  // namespace attnreg
