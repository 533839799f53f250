// attnreg: least squares and ridge from the triangular factor of a tall-and-skinny QR.
//
// A distributed QR (Dask's TSQR of [D, Y], D = [1, X]) leaves a small upper-triangular factor
// [[R_D, R_Dy], [0, *]]: R_D' R_D = D'D and R_D' R_Dy = D'Y, so everything OLS and ridge need is
// in R_D (q x q) and R_Dy (q x k), and the solve never forms the normal equations.
#pragma once

#include "attnreg/base/arma.hpp"

namespace attnreg {

/// Coefficients b (q x k) minimising ||R_D b - R_Dy||^2 + alpha ||P b||^2, P = I without its
/// first row when `free_first` (an unpenalised intercept), i.e. ||Y - D b||^2 + alpha ||P b||^2.
/// alpha > 0: the stacked problem [R_D; sqrt(alpha) P] b ~ [R_Dy; 0] by a second Householder QR;
/// then a triangular solve (never an inverse). Throws InvalidArgument naming X when the
/// (stacked) triangular factor is numerically singular (|r_jj| <= 1e-12 max |r_jj|: a constant
/// column or a linear combination of others), and naming the argument for bad shapes, NaN or
/// alpha < 0.
arma::mat r_factor_solve(const arma::mat& R_D, const arma::mat& R_Dy, double alpha,
                         bool free_first);

}  // namespace attnreg
