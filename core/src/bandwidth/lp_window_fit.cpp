// attnreg: windowed weighted polynomial fits of the lpbwselect plug-in (lp_window_fit.hpp).
#include "attnreg/detail/lp_window_fit.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "attnreg/base/error.hpp"

namespace attnreg {
namespace detail {

LpWindow lp_window(const arma::vec& xs, double c, double h, const Kernel& kernel) {
  LpWindow w;
  w.hi = xs.n_elem;
  if (!kernel.compact()) return w;  // the Gaussian shape is positive on the whole line
  const double r = h * (1.0 + 1e-12);
  const double* b = xs.memptr();
  const double* e = b + xs.n_elem;
  w.lo = static_cast<arma::uword>(std::lower_bound(b, e, c - r) - b);
  w.hi = static_cast<arma::uword>(std::upper_bound(b, e, c + r) - b);
  // Trim to the rows of positive weight (the widened bounds may hold rows with u just past 1).
  while (w.lo < w.hi && !(kernel.shape((xs(w.lo) - c) / h) > 0)) ++w.lo;
  while (w.hi > w.lo && !(kernel.shape((xs(w.hi - 1) - c) / h) > 0)) --w.hi;
  return w;
}

LpWindowFit::LpWindowFit(const arma::vec& xs, double c, double h, int deg, const Kernel& kernel)
    : k_(deg + 1) {
  const LpWindow win = lp_window(xs, c, h, kernel);
  lo_ = win.lo;
  m_ = win.hi - win.lo;
  const arma::uword m = m_, k = static_cast<arma::uword>(k_);
  if (m < k)
    throw NumericalError("bwcheck: a local polynomial of degree " + std::to_string(deg) +
                         " at x = " + std::to_string(c) + " has " + std::to_string(m) +
                         " observations in its window (bandwidth " + std::to_string(h) +
                         "); use a larger bwcheck, a lower degree or more data");
  u_.resize(m);
  sq_.resize(m);
  double wmax = 0;
  for (arma::uword i = 0; i < m; ++i) {
    u_[i] = (xs(lo_ + i) - c) / h;
    sq_[i] = kernel.shape(u_[i]);
    wmax = std::max(wmax, sq_[i]);
  }
  for (double& s : sq_) s = std::sqrt(s / wmax);
  A_.resize(m * k);  // column-major m x k: A(i, j) = sq_i u_i^j
  for (arma::uword i = 0; i < m; ++i) {
    double p = 1;
    for (arma::uword j = 0; j < k; ++j) {
      A_[j * m + i] = sq_[i] * p;
      p *= u_[i];
    }
  }
  tau_.assign(k, 0.0);
  for (arma::uword j = 0; j < k; ++j) {  // Householder QR, column j
    double* a = A_.data() + j * m;
    double ss = 0;
    for (arma::uword i = j + 1; i < m; ++i) ss += a[i] * a[i];
    const double alpha = a[j];
    if (ss == 0) continue;  // nothing below the diagonal: H_j = I, R_jj = alpha
    const double beta = -std::copysign(std::sqrt(alpha * alpha + ss), alpha);
    tau_[j] = (beta - alpha) / beta;
    const double s = 1.0 / (alpha - beta);
    for (arma::uword i = j + 1; i < m; ++i) a[i] *= s;
    a[j] = beta;
    for (arma::uword l = j + 1; l < k; ++l) {
      double* b = A_.data() + l * m;
      double t = b[j];
      for (arma::uword i = j + 1; i < m; ++i) t += a[i] * b[i];
      t *= tau_[j];
      b[j] -= t;
      for (arma::uword i = j + 1; i < m; ++i) b[i] -= t * a[i];
    }
  }
  double rmin = INFINITY, rmax = 0;
  for (arma::uword j = 0; j < k; ++j) {
    const double r = std::fabs(A_[j * m + j]);
    rmin = std::min(rmin, r);
    rmax = std::max(rmax, r);
  }
  if (!(rmin > 1e-10 * std::max(rmax, 1.0)))
    throw NumericalError("bwcheck: the local polynomial of degree " + std::to_string(deg) +
                         " at x = " + std::to_string(c) + " (bandwidth " + std::to_string(h) +
                         ") is singular: fewer than " + std::to_string(k) +
                         " distinct x values carry weight (with repeated x values bwcheck, "
                         "which counts observations, may not reach them); raise bwcheck, use "
                         "evaluation points away from the edge of the data, or a lower degree");
}

std::vector<double> LpWindowFit::coef_row(int j) const {
  const arma::uword m = m_, k = static_cast<arma::uword>(k_);
  // g = R^{-T} e_j (forward substitution), z = Q [g; 0] (H_0 ... H_{k-1} applied last first).
  std::vector<double> z(m, 0.0);
  for (arma::uword l = 0; l < k; ++l) {
    double t = (l == static_cast<arma::uword>(j)) ? 1.0 : 0.0;
    for (arma::uword s = 0; s < l; ++s) t -= A_[l * m + s] * z[s];
    z[l] = t / A_[l * m + l];
  }
  for (arma::uword jj = k; jj-- > 0;) {
    if (tau_[jj] == 0) continue;
    const double* a = A_.data() + jj * m;
    double t = z[jj];
    for (arma::uword i = jj + 1; i < m; ++i) t += a[i] * z[i];
    t *= tau_[jj];
    z[jj] -= t;
    for (arma::uword i = jj + 1; i < m; ++i) z[i] -= t * a[i];
  }
  for (arma::uword i = 0; i < m; ++i) z[i] *= sq_[i];
  return z;
}

}  // namespace detail
}  // namespace attnreg
