// attnreg: masked (causal) least-squares attention and the pseudo-out-of-sample comparison of
// Goulet Coulombe 2025, arXiv:2504.09663, section 4.3.
//
// Every estimator of the least-squares family has in-sample attention A = F F' for some n x r
// training factor matrix F (OLS: F = Q_1 or D U Lambda^{-1/2}; ridge and PCR: the shrunk or
// truncated factors). Seed 004 eq. 35 masks A for time-ordered rows and renormalises:
//
//   yhat_t = sum_{tau <= t} a_{t tau} y_tau / sum_{tau <= t} a_{t tau},   a_{t tau} = f_t' f_tau,
//
// which needs only prefix sums of f_tau y_tau' and f_tau: O(n r k) time, nothing n x n (the
// explicit n x n weights are available separately). `strict` masks tau < t instead of tau <= t,
// the form a forecast of y_t made before y_t is seen must take.
//
// The paper's point, which pseudo_out_of_sample() makes measurable: masking removes the future
// *responses* from each weighted average, but the similarity a_{t tau} = d_t' Omega d_tau is still
// measured with Omega = (D'D)^{-1} estimated on the whole sample, future included. A genuine
// pseudo-out-of-sample (recursive) forecast re-estimates Omega on rows < t. The two forecasts,
// their weights and their errors differ; the gap is the leakage.
#pragma once

#include "attnreg/base/arma.hpp"

namespace attnreg {

/// Masked predictions of eq. 35 from training factors F (n x r, rows in time order) and
/// responses Y (n x k). A row whose masked weights sum to (numerically) zero, i.e.
/// |sum_tau a_{t tau}| <= tol * ||f_t|| sum_tau ||f_tau||, has no meaningful renormalisation
/// and gets NaN (so does row 0 when strict: it has no past).
arma::mat masked_attention_predict(const arma::mat& F, const arma::mat& Y, bool strict,
                                   double tol = 1e-8);

/// The masked, renormalised weights as an explicit n x n lower-triangular matrix (NaN rows as
/// in masked_attention_predict).
arma::mat masked_attention_weights(const arma::mat& F, bool strict, double tol = 1e-8);

struct PseudoOOSOptions {
  bool fit_intercept = true;
  double ridge = 0.0;        ///< 0: OLS; > 0: ridge with this penalty (intercept unpenalised)
  arma::uword start = 0;     ///< first forecast row (0-based); 0 = the first row with more
                             ///< training rows than design columns (q + 1 for OLS)
  bool keep_weights = false; ///< also return the m x n weight matrices
};

struct PseudoOOSResult {
  arma::uvec rows;        ///< forecast rows t (0-based), start .. n-1
  arma::mat y;            ///< realised Y at those rows (m x k)
  arma::mat recursive;    ///< fit on rows < t, predict row t (honest pseudo-out-of-sample)
  arma::mat masked;       ///< eq. 35 with the strict mask and full-sample Omega (leaks)
  arma::mat in_sample;    ///< full-sample fitted values (sees everything)
  arma::rowvec mse_recursive, mse_masked, mse_in_sample;  ///< per output
  arma::vec weight_gap;   ///< per forecast row: sum_tau |w_masked - w_recursive| (L1 distance)
  arma::mat weights_recursive, weights_masked;  ///< m x n, only with keep_weights
};

/// Recursive (expanding-window) re-estimation versus masking, Goulet Coulombe 2025, section 4.3. X
/// (n x p) and Y (n x k) are in time order; row t's regressors must be known before y_t (e.g.
/// lags).
PseudoOOSResult pseudo_out_of_sample(const arma::mat& X, const arma::mat& Y,
                                     const PseudoOOSOptions& options = {});

}  // namespace attnreg
