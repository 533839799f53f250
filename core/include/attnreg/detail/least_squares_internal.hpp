// attnreg internal: pieces of the least-squares family shared between its translation units.
#pragma once

#include "attnreg/arma.hpp"
#include <limits>

namespace attnreg {
namespace ls_detail {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Result of the extended-precision (double-double) least-squares solve.
struct ExtendedLS {
  arma::uword rank = 0;
  arma::mat coef;   ///< rank x k, in the column order of A
  arma::mat cov;    ///< rank x rank, (A_r' A_r)^{-1}
  arma::mat resid;  ///< n x k, Y - A_r coef, computed in double-double
};

/// Householder QR in double-double of A (n x q, columns already scaled and in pivot order),
/// stopping at the first pivot with |R_kk| <= rank_tol |R_00| (the rank); solves the least-
/// squares problem for each column of Y with the leading `rank` columns. Deterministic for any
/// thread count (columns are updated independently).
ExtendedLS extended_least_squares(const arma::mat& A, const arma::mat& Y, double rank_tol,
                                  int n_threads);

/// Nearest power of two to a column norm: dividing by it is exact in floating point.
double power_of_two_scale(double norm);

}  // namespace ls_detail
}  // namespace attnreg
