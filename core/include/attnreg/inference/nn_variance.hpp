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
//
// Several regressors (the second overload): the neighbours of observation i are sought among
// the observations with exactly the same categorical values (its cell; exact matching on the
// discrete covariates as Abadie and Imbens 2006, Econometrica 74(1), recommend), by Euclidean
// distance on the continuous columns divided by their bandwidths,
//     dist(i, k)^2 = sum_c ((x_kc - x_ic) / h_c)^2   (summed over c in column order),
// the matching metric ||x||_V with V = diag(1 / h_c^2) of Abadie and Imbens (2006). J(i) is
// every other observation of the cell with dist(i, k) <= r_i, r_i the smallest radius that
// holds at least min(J, n_cell - 1) of them: ties in distance are not broken but kept whole
// (all observations at the radius enter, as Abadie and Imbens's matches with ties and the
// one-column rule above, which it reproduces up to the rounding of the distances). Then
// sigma_i^2 = J_i / (J_i + 1) (y_i - mean_{J(i)} y)^2 as above: the nearest-neighbour residual
// variance of Abadie and Imbens (2006) and of Calonico, Cattaneo and Titiunik (2014,
// Econometrica 82(6), rdrobust's vce = "nn"), with matches in d dimensions.
#pragma once

#include "attnreg/base/arma.hpp"

namespace attnreg {

/// nprobust's default number of nearest neighbours (nnmatch).
constexpr int kNnMatch = 3;

/// sigma_i^2 of the file comment for every observation (input order). Throws InvalidArgument
/// for n < 2, mismatched lengths, NaN/Inf, or J < 1.
arma::vec nn_residual_variance(const arma::vec& x, const arma::vec& y, int J = kNnMatch);

/// Several regressors: X (n x dc) the continuous columns, h (dc) their bandwidths (> 0), cell
/// (n, or empty for one cell) an id of each row's categorical values. Throws InvalidArgument
/// for mismatched lengths, NaN/Inf or J < 1, and NumericalError naming the row when a cell holds
/// a single row (no neighbour).
arma::vec nn_residual_variance(const arma::mat& X, const arma::vec& h, const arma::uvec& cell,
                               const arma::vec& y, int J = kNnMatch);

}  // namespace attnreg
