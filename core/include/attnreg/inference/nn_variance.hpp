// attnreg: nearest-neighbour residual variance (Calonico, Cattaneo and Farrell 2018, 2019;
// nprobust's vce = "nn", rdrobust's nearest-neighbour residuals; Abadie and Imbens 2006).
//
// One continuous regressor x (n observations). Sort x; for observation i take its tie group
// (all other observations with the same x) and add whole tie groups of the nearest distinct
// values, on the nearer side first (both sides when they are equally far), until at least
// min(J, n - 1) other observations are included: the set J(i), of size J_i. Then
//     sigma_i^2 = J_i / (J_i + 1) * (y_i - mean_{k in J(i)} y_k)^2,
// an (approximately) unbiased estimate of Var(y_i | x_i) that does not use the fit. nprobust's
// default is J = 3 (nnmatch = 3).
#pragma once

#include "attnreg/base/arma.hpp"

namespace attnreg {

/// nprobust's default number of nearest neighbours (nnmatch).
constexpr int kNnMatch = 3;

/// sigma_i^2 of the file comment for every observation (input order). Throws InvalidArgument
/// for n < 2, mismatched lengths, NaN/Inf, or J < 1.
arma::vec nn_residual_variance(const arma::vec& x, const arma::vec& y, int J = kNnMatch);

}  // namespace attnreg
