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
  std::vector<std::size_t> count;  ///< observations per bin
  std::vector<double> curve_x, curve_y;  ///< the fitted polynomial on [c - h, c] or [c, c + h]
};

struct RdPlotResult {
  RdPlotSide left, right;
  std::string binselect;   ///< the rule used (after a mass-point adjustment), or "manual"
  bool mass_points = false;  ///< >= 20% repeated x on a side
  std::size_t n_dropped = 0;  ///< rows with a NaN in y, x or weights
};

/// y, x: n values; weights: empty or n values (>= 0, they enter the polynomial fit only, as in
/// CCT 2015 and rdplot). Throws InvalidArgument on bad input (infinite values, negative weights,
/// a cutoff outside the range of x, fewer than 20 rows, a side with fewer than 2 rows, ...).
RdPlotResult rdplot(const std::vector<double>& y, const std::vector<double>& x,
                    const std::vector<double>& weights, const RdPlotOptions& opt);

}  // namespace rd
}  // namespace attnreg
