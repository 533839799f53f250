// attnreg: the bandwidth-selection criteria, written once, from the sums of a fit (residuals,
// tr L, tr L'L, the sample size n and the weight sum W):
//   cv_ls  CV = sum_i w_i (y_i - m_{-i}(x_i))^2 / W       leave-one-out least squares
//   gcv    GCV = (n / W) n RSS / (n - tr L)^2              (Craven and Wahba 1979)
//   aicc   AICc = ln(RSS / W) + (1 + tr L / n) / (1 - (tr L + 2) / n)
//                                                          (Hurvich, Simonoff and Tsai 1998, eq. 4)
// with RSS = sum_i w_i e_i^2 the weighted residual sum of squares of the full fit; without
// weights W = n and these are the textbook forms (GCV = n RSS / (n - tr L)^2). The h-derivative
// forms take d RSS / d theta and d tr L / d theta (one entry per search parameter) and return
// the criterion's gradient, as the bandwidth objective's analytic gradient needs them.
//
// Used by the bandwidth objective (exact and binned), LocalPolynomial::cv_score, the
// semiparametric fits' CV, global_diagnostics and the Python and R summaries through them.
#pragma once

#include "attnreg/base/arma.hpp"

namespace attnreg {
namespace criteria {

/// The sums of one fit every criterion reads.
struct FitSums {
  double rss = 0.0;         ///< sum_i w_i e_i^2 (full-fit residuals)
  double weight_sum = 0.0;  ///< W = sum_i w_i (= n without weights)
  double n = 0.0;           ///< rows: the sample size of the penalties
  double trace_L = 0.0;     ///< tr L
};

/// CV = rss_loo / W: rss_loo = sum_i w_i (y_i - m_{-i}(x_i))^2 over the leave-one-out fits.
double cv_ls(double rss_loo, double weight_sum);

/// GCV; +inf where tr L >= n (the criterion does not exist).
double gcv(const FitSums& s);

/// AICc; +inf where 1 - (tr L + 2) / n <= 0 or RSS = 0 (an interpolating fit has no
/// log-likelihood: it is never a minimum).
double aicc(const FitSums& s);

/// Residual degrees of freedom n - 2 tr L + tr L'L (Hastie and Tibshirani 1990, §3.5).
double residual_df(double n, double trace_L, double trace_LtL);

/// The weighted mean square of the leave-one-out residuals y - loo over rows and outputs:
/// sum_i w_i sum_c (y_ic - loo_ic)^2 / (k sum_i w_i), rows of weight 0 left out, summed in row
/// order (identical for any thread count). w empty: unit weights.
double loo_mean_square(const arma::mat& y, const arma::mat& loo, const arma::vec& w);

/// With h-derivatives: the criterion's value, and its gradient in `grad` from
/// drss = d RSS / d theta and dtr = d tr L / d theta. Where the criterion does not exist the
/// value is +inf and grad is left empty.
double cv_ls(double rss_loo, double weight_sum, const arma::vec& drss, arma::vec& grad);
double gcv(const FitSums& s, const arma::vec& drss, const arma::vec& dtr, arma::vec& grad);
double aicc(const FitSums& s, const arma::vec& drss, const arma::vec& dtr, arma::vec& grad);

}  // namespace criteria
}  // namespace attnreg
