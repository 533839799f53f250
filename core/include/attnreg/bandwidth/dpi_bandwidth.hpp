// attnreg: the direct plug-in bandwidths of a local polynomial fit (mse_dpi / imse_dpi in the
// faces), beside the other plug-in rules (plugin_bandwidth.hpp, lp_bwselect.hpp).
//
// Bandwidths (mse_dpi / imse_dpi), after nprobust's lpbwselect "mse-dpi"/"imse-dpi"
// (Calonico, Cattaneo & Farrell 2019, J. Stat. Softw. 91(8), §4.1; Fan & Gijbels 1996 eq. 3.20):
// with Var(m(x); h) ~ V(x) / (n h) and bias ~ B(x) h^r (r = p + 1 for odd p; r = p + 2 for even p,
// the interior order), the MSE h^{2r} B^2 + V / (n h) is minimised by
//     h_mse(x) = [ V(x) / (2 r n B(x)^2) ]^{1/(2r+1)}     (r = 2: [V / (4 n B^2)]^{1/5}),
// and the integrated version over evaluation points x_1..x_J by
//     h_imse   = [ sum_j V(x_j) / (2 r n sum_j B(x_j)^2) ]^{1/(2r+1)}.
// V and B are estimated at a preliminary bandwidth h0 (default: the rule of thumb
// 1.06 sd(x) n^{-1/5} in kernel units, i.e. divided by sqrt(mu2(K))): V = n h0 Var(m(x); h0) with
// the chosen variance kind, B = bias(x; h0) / h0^r with the pilot of degree q and pilot bandwidth
// b (default 2 h0, a larger pilot as the derivative needs a larger bandwidth).
#pragma once

#include "attnreg/base/arma.hpp"
#include "attnreg/inference/diagnostics.hpp"
#include "attnreg/kernels/kernel.hpp"

namespace attnreg {

struct DpiBandwidthOptions {
  int degree = 1;
  Kernel kernel{KernelType::gaussian};
  VarianceKind kind = VarianceKind::homoskedastic;
  double preliminary_bandwidth = 0;  ///< h0; 0 = rule of thumb
  double pilot_bandwidth = 0;        ///< b; 0 = 2 h0
  int pilot_degree = -1;             ///< q; -1 = default as in PointwiseOptions
};

struct DpiBandwidth {
  double bandwidth = 0;            ///< h_mse at the point / h_imse
  arma::vec pointwise;             ///< h_mse(x_j) at each eval point (NaN when B = 0)
  arma::vec variance_constant;     ///< V(x_j)
  arma::vec bias_constant;         ///< B(x_j)
  double h0 = 0, pilot_bandwidth = 0;
  int rate = 0;                    ///< r
};

/// MSE-optimal (pointwise) bandwidths at eval points, and the IMSE-optimal bandwidth over them
/// (see the file comment). x, y of length n (one continuous regressor); x_eval empty = x.
/// `bandwidth` of the result is the IMSE bandwidth; for mse_dpi at one point it equals
/// pointwise(0).
DpiBandwidth dpi_bandwidth(const arma::vec& x, const arma::vec& y, const arma::vec& x_eval,
                           const DpiBandwidthOptions& opt = {});

/// Rule-of-thumb preliminary bandwidth 1.06 min(sd, IQR/1.349) n^{-1/5} / sqrt(mu2(K)).
double rule_of_thumb_bandwidth(const arma::vec& x, const Kernel& kernel);

}  // namespace attnreg
