#include "attnreg/bandwidth/dpi_bandwidth.hpp"
#include "attnreg/base/constants.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "attnreg/base/error.hpp"
#include "attnreg/detail/pow2_scale.hpp"

namespace attnreg {
namespace {
}  // namespace

double rule_of_thumb_bandwidth(const arma::vec& x, const Kernel& kernel) {
  kernel.require_second_order("the rule-of-thumb bandwidth");
  check::require(x.n_elem >= 2, "x", "needs at least two observations");
  const double sd = arma::stddev(x);
  const arma::vec q = arma::quantile(x, arma::vec{0.25, 0.75});
  const double iqr = (q(1) - q(0)) / 1.349;
  double s = (iqr > 0) ? std::min(sd, iqr) : sd;
  check::require(s > 0, "x", "is constant; a bandwidth needs spread in x");
  return 1.06 * s * std::pow(static_cast<double>(x.n_elem), -0.2) / std::sqrt(kernel.mu2());
}

namespace {
DpiBandwidth dpi_bandwidth_unscaled(const arma::vec& x, const arma::vec& y,
                                    const arma::vec& x_eval_in, const DpiBandwidthOptions& opt);
}  // namespace

DpiBandwidth dpi_bandwidth(const arma::vec& x, const arma::vec& y, const arma::vec& x_eval,
                           const DpiBandwidthOptions& opt) {
  // Equivariant in x (h -> c h) and invariant in y, but the bias and variance constants square
  // y and raise h to the rate: at x or y ~ 1e+-300 they under/overflow and the message said
  // "bias is zero". Bring x and y to order one by powers of two (exact), compute, scale back.
  int ex = 0, ey = 0;
  if (x.n_elem == y.n_elem && x.n_elem >= 2 && x.is_finite() && y.is_finite() &&
      x_eval.is_finite()) {
    ex = detail::extreme_scale_exponent(x.max() - x.min(), 64);
    const double mx = std::max(arma::abs(x).max(),
                               x_eval.is_empty() ? 0.0 : double(arma::abs(x_eval).max()));
    if (ex != 0 && !std::isfinite(std::ldexp(mx, -ex))) ex = 0;
    ey = detail::extreme_scale_exponent(arma::abs(y).max(), 64);
  }
  if (ex == 0 && ey == 0) return dpi_bandwidth_unscaled(x, y, x_eval, opt);
  const double cx = std::ldexp(1.0, -ex);
  DpiBandwidthOptions os = opt;
  os.preliminary_bandwidth = std::ldexp(opt.preliminary_bandwidth, -ex);
  os.pilot_bandwidth = std::ldexp(opt.pilot_bandwidth, -ex);
  DpiBandwidth r = dpi_bandwidth_unscaled(x * cx, y * std::ldexp(1.0, -ey),
                                          arma::vec(x_eval * cx), os);
  r.bandwidth = std::ldexp(r.bandwidth, ex);
  r.h0 = std::ldexp(r.h0, ex);
  r.pilot_bandwidth = std::ldexp(r.pilot_bandwidth, ex);
  for (double& v : r.pointwise) v = std::ldexp(v, ex);
  for (double& v : r.variance_constant) v = std::ldexp(v, 2 * ey + ex);     // n h se^2
  for (double& v : r.bias_constant) v = std::ldexp(v, ey - r.rate * ex);   // bias / h^r
  return r;
}

namespace {
DpiBandwidth dpi_bandwidth_unscaled(const arma::vec& x, const arma::vec& y,
                                    const arma::vec& x_eval_in, const DpiBandwidthOptions& opt) {
  check::require(x.n_elem == y.n_elem, "y",
                 "must have the same length as x (" + std::to_string(x.n_elem) + "), got " +
                     std::to_string(y.n_elem));
  check::require(x.is_finite(), "x", "contains NaN or Inf");
  check::require(y.is_finite(), "y", "contains NaN or Inf");
  check::require(x.n_elem >= 10, "x", "needs at least 10 observations for a plug-in bandwidth");
  check::require(opt.degree >= 0 && opt.degree <= 3, "degree", "must be 0, 1, 2 or 3");
  check::require(opt.kind != VarianceKind::cr1, "kind", "cr1 is not supported for dpi bandwidths");
  const arma::vec x_eval = x_eval_in.is_empty() ? x : x_eval_in;
  check::require(x_eval.is_finite(), "eval_points", "contains NaN or Inf");
  // 0 is the documented "default" sentinel; anything else must be a usable bandwidth (a
  // negative or NaN value is an error, never silently replaced by the default).
  check::require(std::isfinite(opt.preliminary_bandwidth) && opt.preliminary_bandwidth >= 0,
                 "preliminary_bandwidth",
                 "must be a positive finite number (or unset for the rule of thumb), got " +
                     std::to_string(opt.preliminary_bandwidth));
  check::require(std::isfinite(opt.pilot_bandwidth) && opt.pilot_bandwidth >= 0,
                 "pilot_bandwidth",
                 "must be a positive finite number (or unset for twice the preliminary "
                 "bandwidth), got " + std::to_string(opt.pilot_bandwidth));
  DpiBandwidth out;
  const int p = opt.degree;
  out.rate = (p % 2 == 1) ? p + 1 : p + 2;
  out.h0 = opt.preliminary_bandwidth > 0 ? opt.preliminary_bandwidth
                                         : rule_of_thumb_bandwidth(x, opt.kernel);
  out.pilot_bandwidth = opt.pilot_bandwidth > 0 ? opt.pilot_bandwidth : 2 * out.h0;
  int q = opt.pilot_degree < 0 ? default_pilot_degree(p) : opt.pilot_degree;
  // Even p: the interior leading bias is of order h^{p+2}, so the pilot must reach p+2.
  if (p % 2 == 0) q = std::max(q, p + 2);
  LocalFitOptions fo;
  fo.degree = p;
  fo.kernel.kernel = opt.kernel;
  LocalPolynomial model(fo);
  model.fit(arma::mat(x), arma::mat(y), arma::vec{out.h0});
  PointwiseOptions po;
  po.kind = opt.kind;
  po.pilot_degree = q;
  po.pilot_bandwidth = out.pilot_bandwidth;
  const PointwiseDiagnostics d = pointwise_diagnostics(model, arma::mat(x_eval), po);
  const double n = static_cast<double>(x.n_elem);
  const double r = out.rate;
  out.variance_constant = n * out.h0 * arma::square(d.se);
  out.bias_constant = d.bias / std::pow(out.h0, r);
  out.pointwise.set_size(x_eval.n_elem);
  for (arma::uword j = 0; j < x_eval.n_elem; ++j) {
    const double B2 = out.bias_constant(j) * out.bias_constant(j);
    out.pointwise(j) = B2 > 0 ? std::pow(out.variance_constant(j) / (2 * r * n * B2), 1 / (2 * r + 1))
                              : kNaN;
  }
  const double sB2 = arma::accu(arma::square(out.bias_constant));
  if (!(sB2 > 0))
    throw NumericalError("y: the estimated bias is zero at every evaluation point (a polynomial "
                         "of degree <= the pilot's?); the plug-in bandwidth is unbounded");
  out.bandwidth = std::pow(arma::accu(out.variance_constant) / (2 * r * n * sB2), 1 / (2 * r + 1));
  return out;
}
}  // namespace

}  // namespace attnreg
