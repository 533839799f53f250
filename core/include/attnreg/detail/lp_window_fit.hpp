// attnreg: the weighted polynomial fits of the lpbwselect plug-in (lp_bwselect.hpp), on data
// sorted by x. Internal to lp_bwselect.cpp and lp_window_fit.cpp.
//
// A fit of degree `deg` at c with bandwidth h uses the observations with positive kernel weight
// k((x_i - c)/h). The plug-in's kernels (Epanechnikov, uniform, triangular, Gaussian) are
// positive on an interval of u and non-increasing in |u|, so on x sorted these observations are
// one run [lo, hi): for a compact kernel it is found by binary search for |x - c| <= h (widened
// by a relative 1e-12 and then trimmed to the rows with k > 0, so the set is exactly the rows of
// positive weight); the Gaussian shape (kernels/shapes/gaussian.hpp) is positive everywhere, so
// its run is every row. The fit is a Householder QR (Golub and Van Loan 2013, Matrix
// Computations, 4th ed., Algorithm 5.2.1) of the weighted design sqrt(k_i / max k) u_i^j,
// u_i = (x_i - c)/h, in plain loops over the run: O(m (deg+1)^2) for m rows, no BLAS call and
// no OpenMP region (for these tall, thin designs both cost more in thread start-up and spinning
// than in arithmetic). Rows of the coefficient weights C = R^{-1} Q' diag(sqrt w) (the raw
// coefficient j is beta_u(j) / h^j with beta_u = C y) are formed one at a time as
// (Q R^{-T} e_j) sqrt(w).
#pragma once

#include <vector>

#include "attnreg/base/arma.hpp"
#include "attnreg/kernels/kernel.hpp"

namespace attnreg {
namespace detail {

/// Observations of x (sorted, non-decreasing) with positive kernel weight at c, h: [lo, hi).
struct LpWindow {
  arma::uword lo = 0, hi = 0;
};
LpWindow lp_window(const arma::vec& xs, double c, double h, const Kernel& kernel);

class LpWindowFit {
 public:
  /// Fits degree `deg` at c, h over the window of the sorted xs; throws NumericalError (naming
  /// bwcheck, the point and the bandwidth) when the window has fewer rows than coefficients or
  /// the weighted design is singular (|R_jj| <= 1e-10 max(max |R_jj|, 1)).
  LpWindowFit(const arma::vec& xs, double c, double h, int deg, const Kernel& kernel);

  arma::uword lo() const { return lo_; }
  arma::uword size() const { return m_; }
  int degree() const { return k_ - 1; }
  /// Scaled distance u_i of the i-th row of the window.
  double u(arma::uword i) const { return u_[i]; }
  /// Row j of the coefficient weights C (length size()).
  std::vector<double> coef_row(int j) const;

 private:
  arma::uword lo_ = 0, m_ = 0;
  int k_ = 0;
  std::vector<double> u_, sq_;  ///< scaled distances and sqrt(k / max k)
  std::vector<double> A_;       ///< Householder vectors below the diagonal, R on and above
  std::vector<double> tau_;     ///< Householder scalars
};

}  // namespace detail
}  // namespace attnreg
