// attnreg: the pieces of the manipulation test shared by core/src/rd/rddensity.cpp (the
// unrestricted fits, the bandwidth rules, the binomial tests) and core/src/rd/rddensity_fit.cpp
// (the restricted model and the plug-in variances). Private; the public API is
// attnreg/rd/rddensity.hpp.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

#include "attnreg/rd/rdrobust.hpp"

namespace attnreg {
namespace rd {
namespace dens {

inline double kern(RdKernel k, double u) {  // u in [-1, 1]
  switch (k) {
    case RdKernel::epanechnikov: return 0.75 * (1.0 - u * u);
    case RdKernel::uniform: return 0.5;
    default: return 1.0 - std::fabs(u);
  }
}

// int_0^1 K(l) l^m dl for the three kernels.
inline double kmoment(RdKernel k, int m) {
  switch (k) {
    case RdKernel::epanechnikov: return 0.75 * (1.0 / (m + 1) - 1.0 / (m + 3));
    case RdKernel::uniform: return 0.5 / (m + 1);
    default: return 1.0 / (m + 1) - 1.0 / (m + 2);
  }
}

// Solve A z = r for a small symmetric positive definite A (row-major, d x d) by Cholesky.
// Returns false when A is not numerically positive definite.
inline bool chol_solve(std::vector<double> A, std::vector<double>& r, int d) {
  for (int j = 0; j < d; ++j) {
    double s = A[j * d + j];
    for (int k = 0; k < j; ++k) s -= A[j * d + k] * A[j * d + k];
    if (!(s > 0.0)) return false;
    const double l = std::sqrt(s);
    A[j * d + j] = l;
    for (int i = j + 1; i < d; ++i) {
      double t = A[i * d + j];
      for (int k = 0; k < j; ++k) t -= A[i * d + k] * A[j * d + k];
      A[i * d + j] = t / l;
    }
  }
  for (int i = 0; i < d; ++i) {
    double t = r[i];
    for (int k = 0; k < i; ++k) t -= A[i * d + k] * r[k];
    r[i] = t / A[i * d + i];
  }
  for (int i = d - 1; i >= 0; --i) {
    double t = r[i];
    for (int k = i + 1; k < d; ++k) t -= A[k * d + i] * r[k];
    r[i] = t / A[i * d + i];
  }
  return true;
}

/// One density fit on a window: rows left (density from the left of c), right, diff (right -
/// left), sum. hat: the estimates; jk: jackknife variances; pl: plug-in variances (NaN where
/// negative, as rddensity reports them; filled only when asked); s: the s-th derivative of the
/// distribution function / s! (the bias pilot).
struct Fit {
  double hat[4];
  double jk[4];
  double pl[4];
  double s[4];
};

/// The restricted model (rddensity's fitselect = "restricted"): one fit of order p on the window
/// [-h, h] whose distribution function shares its value and its derivatives of order >= 2 on both
/// sides of c and has a slope (the density) of its own on each side. X: the window's rows sorted
/// and centred at c, Y: their empirical distribution; nlh rows left of c; n: the full sample.
Fit restricted_fit(const double* X, const double* Y, std::size_t nh, std::size_t nlh,
                   std::size_t n, double h, int p, int s, RdKernel k, bool mass, bool plugin);

/// Plug-in variances of the unrestricted fit of order p from its estimates f.hat (Cattaneo,
/// Jansson and Ma 2020, Theorem 1: f/(n h) e_1' S^-1 G S^-1 e_1 on each side).
void plugin_unrestricted(Fit& f, RdKernel k, int p, std::size_t n, double hl, double hr);

/// Leading bias constants of the restricted fit of order p (left and right densities), given the
/// densities fl, fr and the (p+1)-th derivative pilot fs of the distribution function / (p+1)!.
void restricted_bias(RdKernel k, int p, double fl, double fr, double fs, double& bl, double& br);

}  // namespace dens
}  // namespace rd
}  // namespace attnreg
