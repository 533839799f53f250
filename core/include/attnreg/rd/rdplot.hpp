// attnreg: regression discontinuity plots -- binned means of the outcome on each side of the
// cutoff, with a data-driven number of bins, and a global polynomial fit on each side.
//
// Calonico, Cattaneo and Titiunik (2015), "Optimal data-driven regression discontinuity plots",
// JASA 110(512), 1753-1769 (CCT 2015 below). The number of bins J on each side is either
//   * IMSE-optimal (their section 3): J = ceil((2 B / V * n)^(1/3)), with the bias
//     constant B from the derivative of a global quartic fit of E[y|x] and the variance constant
//     V from spacings (dx * dy^2 over the sorted sample: "es"/"qs") or from the quartic fits of
//     E[y|x] and E[y^2|x] (the conditional variance, "espr"/"qspr"); or
//   * mimicking variance (their section 3): J = ceil(var(y) / V * n / log(n)^2), so
//     that the bins' dispersion mimics the overall variability of the data ("esmv", "qsmv",
//     "esmvpr", "qsmvpr").
// Bins are evenly spaced on [min x, c) and [c, max x] ("es*") or quantile spaced (the empirical
// quantiles of x on each side, "qs*"). The constants follow the rdpackages rdplot 2.1.1
// (docs/rd.md, "rdplot") so that J agrees exactly; the quartic fits are computed in centred and
// scaled x (the fitted values and derivatives are the same functions, without the conditioning
// of raw powers of x).
//
// The global fit is a weighted least-squares polynomial of order p in (x - c) on each side, with
// kernel weights K((x - c) / h) times the unit weights (uniform kernel and h = the support: the
// plain global polynomial).
//
// Covariates z (optional) enter linearly with one coefficient common to both sides, as in the
// covariate-adjusted RD estimator of Calonico, Cattaneo, Farrell and Titiunik (2019, REStat
// 101(3)): the polynomial of each side and gamma solve one weighted least-squares problem,
//   min sum_i w_i (y_i - P_side(x_i)'beta_side - z_i'gamma)^2,
// and the curve drawn is P(x)'beta_side + zeval'gamma, with zeval the means of z over the rows
// used ("mean") or 0. The binned means are adjusted the same way with their own coefficient
// (Cattaneo, Crump, Farrell and Feng 2024, "On binscatter", AER 114(5)): y on the bin indicators
// (every bin of both sides) and z, unweighted, gives alpha_b and gamma_b, and the bin's value is
// alpha_b + zeval'gamma_b = mean_b(y) - (mean_b(z) - zeval)'gamma_b. docs/rd.md, "RD plots",
// says where this differs from rdrobust's rdplot.
#pragma once

#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "attnreg/rd/rdrobust.hpp"

namespace attnreg {
namespace rd {

enum class BinSelect { es, espr, esmv, esmvpr, qs, qspr, qsmv, qsmvpr };

/// "es", "espr", ...: the rule's name; parse_binselect throws InvalidArgument naming binselect.
std::string binselect_name(BinSelect b);
BinSelect parse_binselect(const std::string& s);

struct RdPlotOptions {
  double c = 0.0;
  int p = 4;                          ///< order of the global polynomial, 0..20
  BinSelect binselect = BinSelect::esmv;
  int nbins_left = 0, nbins_right = 0;  ///< > 0: fixed numbers of bins (evenly spaced)
  double scale_left = 1.0, scale_right = 1.0;  ///< J = floor(scale * J_selected)
  RdKernel kernel = RdKernel::uniform;
  double h_left = std::numeric_limits<double>::quiet_NaN();   ///< NaN: c - min x (the support)
  double h_right = std::numeric_limits<double>::quiet_NaN();  ///< NaN: max x - c
  double support_low = std::numeric_limits<double>::quiet_NaN();   ///< extends min x
  double support_high = std::numeric_limits<double>::quiet_NaN();  ///< extends max x
  MassPoints masspoints = MassPoints::adjust;
  double level = 0.95;  ///< of the bins' t intervals (a fraction)
  int nplot = 500;      ///< points of the fitted curve per side
  bool covs_eval_mean = true;  ///< covariates evaluated at their means (false: at 0)
  bool covs_drop = true;       ///< drop covariates collinear with earlier ones (false: an error)
  std::vector<std::string> covs_names;  ///< names of the covariate columns for messages (or empty)
};

/// One side of the plot. Bins are numbered from the outermost (left side) or from the cutoff
/// (right side) in increasing x; bin j is [edges[j], edges[j+1]), the last one closed.
struct RdPlotSide {
  std::size_t n = 0;       ///< observations on this side
  std::size_t n_h = 0;     ///< with positive kernel weight in the polynomial fit
  std::size_t m = 0;       ///< distinct x
  double h = 0;            ///< bandwidth of the polynomial fit
  int J = 0;               ///< bins used
  double J_imse = 0, J_mv = 0;  ///< IMSE-optimal and mimicking-variance numbers (the rule's variant)
  double scale = 1, rscale = 0;  ///< requested scale; implied scale J / J_imse
  double var_y = 0;        ///< sample variance of y on the side (n - 1 divisor)
  std::vector<double> coef;       ///< polynomial coefficients of (x - c)^j, j = 0..p
  std::vector<double> edges;      ///< J + 1 bin edges
  std::vector<double> mid, mean_x, mean_y, sd_y, se_y, ci_low, ci_high;  ///< per bin (NaN if empty)
  /// With covariates: the unadjusted means of y per bin (mean_y and the interval are adjusted;
  /// sd_y and se_y stay those of y in the bin). Empty without covariates.
  std::vector<double> mean_y_raw;
  std::vector<std::size_t> count;  ///< observations per bin
  std::vector<double> curve_x, curve_y;  ///< the fitted polynomial on [c - h, c] or [c, c + h]
};

struct RdPlotResult {
  RdPlotSide left, right;
  std::string binselect;   ///< the rule used (after a mass-point adjustment), or "manual"
  bool mass_points = false;  ///< >= 20% repeated x on a side
  std::size_t n_dropped = 0;  ///< rows with a NaN in y, x, weights or a covariate
  // With covariates (all empty without):
  std::vector<std::size_t> covs_kept, covs_dropped;  ///< column indices (collinear ones dropped)
  std::vector<double> coef_covs;  ///< gamma of the polynomial fit (kept columns)
  std::vector<double> coef_covs_bins;  ///< gamma_b of the binned means (kept columns)
  std::vector<double> covs_eval;  ///< zeval: the means of the kept columns, or zeros
};

/// y, x: n values; weights: empty or n values (>= 0, they enter the polynomial fit only, as in
/// CCT 2015 and rdplot). Throws InvalidArgument on bad input (infinite values, negative weights,
/// a cutoff outside the range of x, fewer than 20 rows, a side with fewer than 2 rows, ...).
RdPlotResult rdplot(const std::vector<double>& y, const std::vector<double>& x,
                    const std::vector<double>& weights, const RdPlotOptions& opt);

/// With covariates: z is n x dz, column-major (column a at z[a * n + i]). Rows with a NaN in a
/// covariate are dropped and counted; an infinite value is an error. A covariate that is a
/// polynomial of order max(p, 1) in x - c on each side (a constant, x, the side indicator, ...)
/// is an error naming it; one collinear with earlier ones is dropped (covs_drop) or an error.
RdPlotResult rdplot(const std::vector<double>& y, const std::vector<double>& x,
                    const std::vector<double>& z, std::size_t dz,
                    const std::vector<double>& weights, const RdPlotOptions& opt);

}  // namespace rd
}  // namespace attnreg
