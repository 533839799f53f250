// attnreg: instrumental-variables regression (2SLS, LIML, Fuller's k-class), optionally with
// absorbed fixed effects, observation weights and one- or two-way clustered covariances.
//
// Model: y = X1 b1 + X2 b2 + D alpha + e with X1 exogenous (n x p1, an intercept is prepended
// when there are no fixed effects and fit_intercept is set), X2 endogenous (n x p2), excluded
// instruments Z2 (n x q, q >= p2), absorbed factors D (n x K codes, K may be 0) and analytic
// weights w >= 0 (rows of weight 0 are left out of the estimation; their attention columns are 0).
// The instrument set is Z = [X1, Z2]; L = p1 + q instruments (plus the absorbed parameters).
//
// Fixed effects: every column (y, X1, X2, Z2) is replaced by M_D v, the W-orthogonal projection
// off the dummies (the within transformation of the OLS path, least_squares_fe.hpp), which by the
// Frisch-Waugh-Lovell theorem leaves the k-class estimator of b unchanged (the dummies are
// exogenous and part of the instrument set); every formula below is then applied to the
// transformed, sqrt(w)-scaled data, and the absorbed parameters enter the degrees of freedom
// (N - p - df_absorbed), as in fixest/pyfixest and Stata's ivreghdfe.
//
// Estimator (k-class; Wooldridge 2010, Econometric Analysis of Cross Section and Panel Data, 2nd
// ed., ch. 5 and sec. 8.3; Davidson and MacKinnon 2004, Econometric Theory and Methods, ch. 8):
//   b(k) = (X'(I - k M_Z) X)^{-1} X'(I - k M_Z) y,  X = [X1, X2]
// with k = 1 for 2SLS (X'P_Z X b = X'P_Z y, solved as the least-squares fit of y on P_Z X by QR),
// k = kappa for LIML, kappa the smallest root of det([y X2]'M_{X1}[y X2] - kappa [y X2]'M_Z[y X2])
// = 0 (Anderson and Rubin 1949), and Fuller's k = kappa - alpha / (N - L - df_absorbed)
// (Fuller 1977, Econometrica 45(4); N - L the residual degrees of freedom of the first stage, as
// linearmodels' IVLIML and Stata's ivreg2 without absorbed effects).
//
// Covariances (the conventions of linearmodels and ivreg2, Baum, Schaffer and Stillman 2003 and
// 2007, Stata Journal 3(1) and 7(4)): bread C^{-1} with C = X'(I - k M_Z) X; scores x^_i e_i with
// x^ = P_Z x and e = y - X b (for k != 1 too, as linearmodels and ivreg2):
//   nonrobust: s^2 C^{-1}, s^2 = e'e / (N - p - df_absorbed)      (linearmodels debiased=True)
//   HC0: C^{-1} (sum x^_i x^_i' e_i^2) C^{-1};  HC1: HC0 N / (N - p - df_absorbed)
//   HC2, HC3: e_i^2 / (1 - h_i), e_i^2 / (1 - h_i)^2 with h_i the leverage of the projected
//     design X^ plus that of the dummies (an attnreg convention: no IV package offers them)
//   CR0, CR1 (one or two dimensions, Cameron, Gelbach and Miller 2011): the meat sums the scores
//     within clusters; CR1 scales by G/(G-1) (N-1)/(N-K), G the fewest clusters, K = p plus the
//     absorbed parameters not nested in a cluster (the OLS path's convention, fixest's
//     ssc(fixef.K = "nested")); two-way covariances are eigenvalue-fixed when indefinite.
// With weights, x^_i and e_i are those of the sqrt(w)-scaled data (the scores w_i x^_i e_i).
//
// Diagnostics:
//   First stage, per endogenous regressor: partial R^2 and the partial F of the excluded
//     instruments (the iid F test, or the Wald test / q under the model's robust covariance).
//   Cragg and Donald (1993, Econometric Theory 9(2)) F: (N - L - df_absorbed) / q times the
//     smallest eigenvalue of (X2' M_Z X2)^{-1} X2' (P_Z - P_X1) X2 (Stock and Yogo 2005).
//   Kleibergen and Paap (2006, J. Econometrics 133(1), sec. 3) rk Wald statistic for rank(Pi) =
//     p2 - 1 in the first stage X2~ = Z2~ Pi + V (X1 partialled out), with Theta = F Pi G^{-1},
//     F'F = Z2~'Z2~, G'G = X2~'X2~ (the normalisation of Kleibergen and Schaffer's ranktest) and
//     the robust (HC or cluster) covariance of vec(Pi); its F form divides by q and by the
//     covariance type's small-sample factor, so that with one endogenous regressor it equals the
//     robust first-stage F.
//   Overidentification (q > p2): Sargan (1958): N e'P_Z e / e'e (iid); Hansen (1982, Econometrica
//     50(4)) J: the two-step efficient GMM criterion with the weight matrix S^{-1} from the
//     model's residuals (S = sum z_i z_i' e_i^2, or the cluster sums), as ivreg2.
//   Wu (1973) - Hausman (1978) endogeneity test: the F test of the first-stage residuals M_Z X2
//     added to the structural equation (the control-function form; Wooldridge 2010, sec. 6.3.1;
//     linearmodels' wu_hausman), F(p2, N - p - p2 - df_absorbed).
//
// Attention form: the fit is linear in y. b = C^{-1} X(k)' W y with X(k) = X - k M_Z X on the
// transformed data (for 2SLS X(k) = P_Z X: the projection onto the instruments is part of
// Omega = C^{-1}), and at a new row (x, g) the prediction is
//   y_hat(x, g) = p(g)'y + (x - X'p(g))' C^{-1} X(k)' W y
// with p(g)' the fixed-effect operator row of the OLS path, so attention_weights(x, g) @ y ==
// predict(x, g).
#pragma once

#include "attnreg/base/arma.hpp"
#include "attnreg/least_squares/least_squares.hpp"
#include "attnreg/least_squares/least_squares_fe.hpp"

#include <string>
#include <vector>

namespace attnreg {

enum class IVEstimator { TSLS, LIML };

struct IVOptions {
  IVEstimator estimator = IVEstimator::TSLS;
  /// Fuller's alpha (LIML only; 0 = LIML itself, 1 = Fuller's approximately unbiased choice).
  double fuller = 0.0;
  /// Prepend an intercept to X1 when there are no absorbed factors.
  bool fit_intercept = true;
  /// Relative tolerance for collinear regressors and instruments (lm's 1e-7).
  double rank_tol = 1e-7;
  /// Options of the within transformation (tolerance, iterations, threads).
  AbsorbOptions absorb;
};

/// A test statistic with its reference distribution: chi2(df1) when df2 == 0, else F(df1, df2).
struct IVTest {
  double statistic = 0;
  double df1 = 0, df2 = 0;
  double p_value = 0;
  std::string name;
};

struct IVFirstStage {
  arma::vec partial_r2;    ///< per endogenous regressor
  arma::vec partial_f;     ///< per endogenous regressor (iid, or robust Wald / q)
  double df1 = 0, df2 = 0; ///< of partial_f: q and N - L - df_absorbed (G - 1 when clustered)
  arma::vec partial_f_pvalue;
  arma::mat coef;          ///< L x p2 first-stage coefficients on [X1, Z2]
  double cragg_donald_f = 0;
  double kleibergen_paap_rk = 0;   ///< Wald chi2(q - p2 + 1); NaN under nonrobust
  double kleibergen_paap_f = 0;    ///< NaN under nonrobust
};

class IVRegression {
 public:
  explicit IVRegression(IVOptions options = {}) : opt_(options) {}

  /// Fit. X1: n x p1 (p1 may be 0), X2: n x p2 (>= 1), Z2: n x q (q >= p2), factors: n x K codes
  /// (K may be 0; validated by Factors::from_codes on the rows of positive weight), weights:
  /// empty or n values >= 0. names: empty or p1 + p2 + q column names for the error messages.
  IVRegression& fit(const arma::mat& X1, const arma::mat& X2, const arma::mat& Z2,
                    const arma::vec& y, const arma::umat& factors = arma::umat(),
                    const arma::vec& weights = arma::vec(),
                    const std::vector<std::string>& names = {});

  /// Coefficients (p = [intercept,] X1, X2).
  const arma::vec& coefficients() const { return b_; }
  bool has_intercept() const { return intercept_; }
  /// k of the k-class estimator actually used (1 for 2SLS), and LIML's kappa (NaN for 2SLS).
  double k() const { return k_; }
  double kappa() const { return kappa_; }
  arma::uword n_obs() const { return n_keep_; }
  double df_absorbed() const { return static_cast<double>(df_abs_); }
  /// N - p - df_absorbed.
  double df_residual() const;
  /// Residuals y - X b - D alpha and fitted values of all n training rows (rows of weight 0
  /// included: their fitted value is the prediction there).
  const arma::vec& fitted() const { return fitted_all_; }
  arma::vec residuals() const { return y_all_ - fitted_all_; }
  /// sum w e^2 / df_residual.
  double sigma2() const;
  /// 1 - sum w e^2 / sum w (y - ybar)^2 (overall), and within (of the transformed y) with FE.
  double r_squared() const;
  double r_squared_within() const;

  /// Covariance (p x p) under Classical, HC0-HC3, CR0, CR1 (clusters: n rows, 1 or 2 columns).
  arma::mat covariance(const CovOptions& cov = {}, Inference* fix = nullptr) const;
  Inference inference(const CovOptions& cov = {}) const;

  IVFirstStage first_stage(const CovOptions& cov = {}) const;
  /// Sargan (Classical) or Hansen J (robust types); statistic NaN when exactly identified.
  IVTest overidentification(const CovOptions& cov = {}) const;
  IVTest wu_hausman() const;

  /// Fixed-effect values per factor (normalised as the OLS path's fixed_effects()).
  std::vector<arma::vec> fixed_effects() const;
  /// Predictions at new rows: X1_new (m x p1, without the intercept), X2_new (m x p2), codes
  /// (m x K, within the training levels; empty without factors).
  arma::vec predict(const arma::mat& X1_new, const arma::mat& X2_new,
                    const arma::umat& codes_new = arma::umat()) const;
  /// Attention weights (m x n) over all training rows: predict == A * y.
  arma::mat attention_weights(const arma::mat& X1_new, const arma::mat& X2_new,
                              const arma::umat& codes_new = arma::umat()) const;

  bool is_fitted() const { return fitted_flag_; }
  const IVOptions& options() const { return opt_; }

 private:
  void require_fitted(const char* what) const;
  /// fit, in steps: rows, factors, within transformation, scaling and collinearity checks;
  /// the k-class estimate; the fixed-effect operator and the fitted values.
  void prepare(const arma::mat& X1, const arma::mat& X2, const arma::mat& Z2, const arma::vec& y,
               const arma::umat& factors, const arma::vec& weights,
               const std::vector<std::string>& names);
  void estimate();
  void finish(const arma::mat& X1, const arma::mat& X2, const arma::umat& factors);
  /// [1,] X1, X2 of new rows with validated shapes.
  arma::mat design_rows(const arma::mat& X1_new, const arma::mat& X2_new, const char* what) const;
  /// Codes of new rows mapped to the compacted training levels.
  arma::umat map_codes(const arma::umat& codes_new, arma::uword m, const char* what) const;
  /// Clusters restricted to the kept rows (validated).
  arma::umat kept_clusters(const CovOptions& cov) const;
  /// The sandwich for design rows S (scaled), residuals e (scaled), bread B (p x p), the
  /// covariance type and the number of parameters K_df counted in the small-sample factors.
  arma::mat sandwich(const arma::mat& Xs, const arma::vec& e, const arma::mat& B,
                     const arma::vec& leverage, const CovOptions& cov, const arma::umat& cl,
                     double K_df, Inference* fix) const;
  /// The raw meat (no factor) of scores S (n x c) under cov's type (HC: S'S; clusters).
  arma::mat raw_meat(const arma::mat& S, const CovOptions& cov, const arma::umat& cl) const;
  /// The covariance type's small-sample factor for K parameters.
  double small_sample_factor(const CovOptions& cov, const arma::umat& cl, double K) const;
  double fewest_clusters(const arma::umat& cl) const;
  /// Leverage of the dummies (0 without factors).
  arma::vec dummy_leverage_kept() const;

  IVOptions opt_;
  bool fitted_flag_ = false;
  bool intercept_ = false;
  arma::uword n_all_ = 0, n_keep_ = 0, p1_ = 0, p2_ = 0, q_ = 0;
  arma::uvec keep_;            ///< kept rows (w > 0)
  arma::vec w_;                ///< weights of the kept rows (ones when none)
  arma::vec s_;                ///< sqrt(w_)
  Factors f_;
  bool has_fe_ = false;
  std::vector<std::vector<long long>> code_map_;  ///< per factor: training code -> kept code
  arma::uword df_abs_ = 0;
  AbsorbedDF dfinfo_;
  arma::mat Xraw_;             ///< [1,] X1, X2 of the kept rows (unscaled, not transformed)
  arma::vec yraw_;
  arma::mat X1s_, X2s_, Z2s_;  ///< transformed, scaled (X1s_ with the intercept column)
  arma::vec ys_;
  arma::mat Qz_;               ///< orthonormal basis of [X1s, Z2s]
  arma::mat Xhat_;             ///< P_Z X (scaled)
  arma::mat Xk_;               ///< X - k M_Z X (scaled)
  arma::mat Cinv_;             ///< (X'(I - k M_Z) X)^{-1}
  arma::vec b_, e_;            ///< coefficients, scaled residuals of the kept rows
  double k_ = 1, kappa_ = 0;
  arma::vec y_all_, fitted_all_;
  AbsorbedOLS fe_fit_;         ///< carries the fixed-effect operator (see iv.cpp)
};

}  // namespace attnreg
