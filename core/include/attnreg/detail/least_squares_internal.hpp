// attnreg internal: pieces of the least-squares family shared between its translation units.
#pragma once

#include "attnreg/base/constants.hpp"
#include "attnreg/base/arma.hpp"
#include "attnreg/least_squares/least_squares.hpp"
#include <limits>
#include <vector>

namespace attnreg {
namespace ls_detail {


/// OLS's automatic precision: extended when n q^2 is at most kExtendedAlways (a few
/// milliseconds of work), or when the smallest pivot of the double factor is below
/// kIllCondPivot times the largest and n q^2 is at most kExtendedIllCond (about a second).
constexpr double kExtendedAlways = 2e6;
constexpr double kExtendedIllCond = 1e8;
constexpr double kIllCondPivot = 1e-4;

/// OLS's factorisation of a design D (n x q; or of any matrix with the same R factor):
/// column scaling by powers of two, pivoted QR (dgeqp3), numerical rank by opt.rank_tol;
/// rank-deficient designs re-pivot as R's lm. Sets st.qr, tau, pivot, scale; returns the rank;
/// min_ratio = min |R_cc| / r00 (0 when re-pivoted), r00 = the largest kept |R_cc|.
arma::uword factor_design(const arma::mat& D, const OLSOptions& opt, OLSState& st,
                          double& min_ratio, double& r00);

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

/// The r x r meat of a sandwich covariance C = L (meat) L' of a linear estimator whose weighted
/// coefficient map is M W^{-1/2} = L F' with F (n x r) orthonormal scores (OLS: Q_1; ridge and
/// PCR: [w^{1/2}/sqrt(sum w), U]). Fh (n x r') factors the whitened hat matrix W^{1/2} H W^{-1/2}
/// = Fh Fh' (its row norms are the leverages of HC2/HC3, its cluster blocks CR2's adjustment).
/// e: raw residuals (n); weights: empty or n; freq: frequency weights; N and dfres: the
/// observation count and residual df of the small-sample factors (HC1, CR1, HAC adjust). All
/// covariance types but Classical. n_clusters receives the clusters per dimension.
/// HC2/HC3: rows with 1 - h_i <= leverage_tol are leverage one and add nothing (see
/// leverage_one_tol); a negative leverage_tol means leverage_one_tol(F.n_cols, 1) (orthonormal
/// SVD factors, whose leverages are accurate to about r u).
arma::mat sandwich_meat(const arma::mat& F, const arma::mat& Fh, const arma::vec& e,
                        const arma::vec& weights, bool freq, double N, double dfres,
                        const CovOptions& cov, std::vector<arma::uword>* n_clusters = nullptr,
                        double leverage_tol = -1.0);

/// Leverage-one rows in HC2/HC3. A row with leverage h_i = 1 is fitted exactly (a column of the
/// design is nonzero on that row alone, e.g. an event dummy): its residual is 0 and its term
/// e_i^2 / (1 - h_i)^{1 or 2} is 0/0, taken as 0 (the row tells nothing about its own error
/// variance), as for a singleton level of an absorbed factor (least_squares_fe_covariance.cpp).
/// In floating point, h_i = ||row i of Q_1||^2 with Q_1 = D R^{-1} carries an absolute error of
/// about r u cond(R) (Householder QR is backward stable, Higham 2002, "Accuracy and Stability of
/// Numerical Algorithms", Thm 19.4; a triangular solve with R loses cond(R)), and e_i one of
/// about u cond(R) |y|: when 1 - h_i is below a small multiple of r u cond(R), e_i / (1 - h_i)
/// has no correct digit and the row is taken as leverage one. r: the rank; cond: an estimate of
/// cond(R) of the scaled design (1 for orthonormal SVD factors).
inline double leverage_one_tol(arma::uword r, double cond) {
  const double rr = static_cast<double>(r > 0 ? r : 1);
  return 16.0 * rr * std::numeric_limits<double>::epsilon() * (cond > 1.0 ? cond : 1.0);
}

/// The 1-norm condition number ||R||_1 ||R^{-1}||_1 of an upper-triangular R (r x r; its
/// inverse given), an estimate of cond_2(R) within a factor r.
inline double triangular_condition(const arma::mat& R, const arma::mat& Rinv) {
  if (R.is_empty()) return 1.0;
  return arma::norm(arma::trimatu(R), 1) * arma::norm(arma::trimatu(Rinv), 1);
}

/// The eigenvalue fix of Cameron, Gelbach and Miller (2011, JBES 29(2), sec. 2.3) for a
/// two-way clustered covariance V = V_1 + V_2 - V_12, which can be indefinite: when V (symmetric,
/// finite, in the coordinates of the reported coefficients) has an eigenvalue below
/// -16 m eps lambda_max (m = its order; above that it is rounding of a singular PSD matrix) or a
/// negative diagonal, V is replaced by U max(Lambda, 0) U' (reghdfe, fixest). Returns whether it
/// was; `min_ratio` (if given) receives lambda_min / lambda_max of the raw V when it was.
bool clip_negative_eigenvalues(arma::mat& V, double* min_ratio = nullptr);

/// Whether a covariance type is the two-way clustered one the fix above applies to.
inline bool is_two_way(const CovOptions& cov) {
  return is_cluster_cov(cov.type) && cov.clusters.n_cols == 2;
}

/// New rows for predict / attention_weights: `p` columns as in fit, all finite (the error
/// names X and says what to pass).
void check_new_x_columns(const arma::mat& X_new, arma::uword p);

/// t_value = estimate / std_error and two-sided p_value from t with df_inference degrees of
/// freedom (NaN without residual or inference df, or where t is not finite).
void t_tests(Inference& out);

/// The t tests and fit statistics every least-squares inference ends with: from out.estimate,
/// out.std_error, out.df_inference and out.df_residual, fills t_value, p_value (two-sided t,
/// NaN without residual df) and per output r_squared (1 - sum w e^2 / sum w (y - ybar_w)^2, as
/// lm, statsmodels' WLS and Stata; about 0 without an intercept) and adj_r_squared with N - 1
/// (N without an intercept). y, e: n x k responses and residuals; weights: empty or n.
void finish_inference(Inference& out, const arma::mat& y, const arma::mat& e,
                      const arma::vec& weights, bool intercept, double N);

/// Leave-one-out predictions of a linear smoother from its fit: y_i - e_i / (1 - h_i), NaN
/// where h_i = 1 to 1e-10 (the row is fitted exactly and cannot be predicted without itself).
inline arma::mat loo_from_leverages(const arma::mat& y, const arma::mat& e, const arma::vec& h) {
  arma::mat out(e.n_rows, e.n_cols);
  for (arma::uword i = 0; i < e.n_rows; ++i) {
    const double d = 1.0 - h(i);
    for (arma::uword c = 0; c < e.n_cols; ++c) out(i, c) = d > 1e-10 ? y(i, c) - e(i, c) / d : kNaN;
  }
  return out;
}

/// Nearest power of two to a column norm: dividing by it is exact in floating point.
double power_of_two_scale(double norm);

}  // namespace ls_detail
}  // namespace attnreg
