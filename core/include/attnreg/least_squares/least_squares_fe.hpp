// attnreg: least squares with absorbed fixed effects (one or more categorical factors).
//
// Model: y_i = x_i'b + alpha_1[f_1(i)] + ... + alpha_K[f_K(i)] + e_i, optionally with observation
// weights w_i > 0 (weighted least squares). The intercept is part of the fixed effects.
//
// Method (Gaure 2013, "OLS with multiple high dimensional category variables", Computational
// Statistics & Data Analysis 66, 8-18, doi:10.1016/j.csda.2013.03.024): by the Frisch-Waugh-
// Lovell theorem b is the least-squares fit of M_D y on M_D X, where M_D is the (W-orthogonal)
// projection off the span of the dummy columns D = [D_1 ... D_K]. M_D v is computed without
// forming D by alternating projections: one sweep subtracts, factor after factor, the weighted
// group means of v (the method of alternating projections of von Neumann and Halperin; Gaure's
// "Kaczmarz" sweep). With one factor a sweep is exact. With two or more, sweeps are repeated;
// two sweeps x -> T x -> T^2 x are extrapolated by Irons and Tuck (1969) (as fixest does), which
// stays in x + span(D) so the limit is still M_D x. Stopping rule (after Gaure 2013, sect. 3.3):
// with delta_k the largest absolute change made by the last plain sweep of step k and
// c = delta_k / delta_{k-1} the estimated rate, stop when delta_k <= tol (1 - c) max|T x_0| in
// two consecutive steps
// (T x_0: the column after the first sweep, so a large mean does not loosen the rule), or when
// delta_k is at rounding level (1e-13 max|x_0|). Iterations and convergence are reported.
//
// b is then fitted by the core OLS (column-pivoted QR, no intercept) on sqrt(w) M_D X and
// sqrt(w) M_D y. A regressor whose within-transformed column has W-norm <= rank_tol times its
// own W-norm is absorbed by the fixed effects (constant within the groups of a factor, or a
// combination of such): its coefficient is NaN (aliased), as fixest's "removed because of
// collinearity" and lm's NA.
//
// Degrees of freedom: df_residual = n - rank - (L - R), with L = sum of the levels of all
// factors and R the redundant levels: 0 for one factor; for two, the number of connected
// components of the bipartite graph of the levels of factors 1 and 2 (Abowd, Creecy and Kramarz
// 2002; lfe, fixest); for three or more, the components of factors 1-2 plus the rank deficiency
// of M_{D_1 D_2} [D_3 ... D_K] (computed exactly by pivoted QR when that matrix is small,
// otherwise the lower bound of one per factor beyond the second, as lfe does, with exact = false).
// With cluster-robust covariances, fixest's convention (ssc(K.fixef = "nonnested"), formerly
// fixef.K = "nested") does not count the levels of a factor whose every level lies within one
// cluster but keeps one parameter for each such factor: absorbed_df_clustered(). The choices of
// fixest's ssc() are AbsorbOptions::ssc (least_squares/cluster_inference.hpp).
//
// Singletons (Correia 2015, "Singletons, cluster-robust standard errors and fixed effects: a bad
// mix", reghdfe's documentation): a row whose level of some factor has no other row is fitted
// exactly by its own fixed effect and adds nothing to b, but it inflates n and the absorbed
// levels alike, which changes (N-1)/(N-K), N/(N-K) and, through G, G/(G-1). With
// drop_singletons they are found iteratively (dropping one can leave another level with a
// single row) and every statistic is that of the fit without them (as reghdfe and pyfixest,
// and fixest's fixef.rm = "singleton"): n, the absorbed levels, G, R^2. The rows stay in the
// model (their fixed effects are y - x'b, their residuals 0; M_D X is exactly 0 there), so
// fitted values, predictions and attention weights are defined for every training row.
//
// Fixed-effect values: alpha solves D alpha = (y - X b) - e by the same sweeps, tracking the
// group means removed. The reference normalisation is fixest's fixef(): within each connected
// component of factors 1-2 the first level (smallest code) of factor 2 is 0, and level 0 of each
// factor beyond the second is 0; the constants move into factor 1. With two factors the values of
// levels in different components are identified only up to these references.
//
// Attention form: the absorbed fit is a linear smoother. In-sample,
//   y_hat = A y,  A = P_D + X~ (X~'W X~)^{-1} X~'W,   X~ = M_D X,  P_D = I - M_D,
// and at a new row with regressors x and levels g, y_hat(x, g) = p(g)'y + (x - X'p(g))'b with
// p(g)' the row of the fixed-effect operator (p(g)'t = sum_j alpha_j[g_j] of target t), so
// attention_weights(x, g) @ y == predict(x, g) exactly (up to the sweep tolerance).
#pragma once

#include "attnreg/base/arma.hpp"
#include "attnreg/least_squares/least_squares.hpp"
#include "attnreg/least_squares/cluster_inference.hpp"

#include <string>
#include <vector>

namespace attnreg {

struct AbsorbOptions {
  double tol = 1e-10;     ///< stopping tolerance of the sweeps: about the accuracy of M_D x
                          ///< relative to its largest value (see the stopping rule above)
  int max_iter = 10000;   ///< cap on accelerated steps (each is two sweeps)
  bool accelerate = true; ///< Irons-Tuck extrapolation (false: plain sweeps)
  double rank_tol = 1e-7; ///< relative tolerance for absorbed and collinear regressors (lm's)
  Precision precision = Precision::Auto;  ///< of the OLS on the transformed data
  int n_threads = 0;      ///< 0 = OpenMP default; results do not depend on it
  /// Frequency weights (Stata fweight): df count sum(w) observations; otherwise (analytic) n.
  bool frequency_weights = false;
  /// Largest sum of the levels of factors 3..K for the exact redundancy count (pivoted QR of an
  /// n x that matrix); above it, or when n times its square exceeds 1e10 or n times it 2e7 (160
  /// MB), the lower bound is used (AbsorbedDF::exact = false).
  arma::uword exact_df_max_columns = 1000;
  /// Leave singleton rows out of every statistic (see the header comment); off by default in
  /// the core, on in the faces (as reghdfe and pyfixest).
  bool drop_singletons = false;
  /// fixest's ssc() choices for the CR1 factor (cluster_inference.hpp).
  SmallSample ssc;
};

/// Rows that are singletons of some factor, found iteratively (see the header comment).
std::vector<bool> singleton_rows(const arma::umat& codes);

/// Factor codes validated: codes is n x K, factor j uses 0..n_levels[j]-1, every level present.
struct Factors {
  arma::umat codes;
  std::vector<arma::uword> n_levels;
  /// Validates (names the factor and the fix) and counts levels.
  static Factors from_codes(const arma::umat& codes);
  arma::uword n_factors() const { return codes.n_cols; }
  arma::uword total_levels() const;
};

/// Result of the within transformation.
struct WithinResult {
  arma::mat x;          ///< M_D X (n x p)
  int iterations = 0;   ///< most accelerated steps over the columns (1 for one factor)
  bool converged = true;
};

/// M_D X by weighted alternating projections (weights empty = unweighted; else n, > 0).
WithinResult within_transform(const arma::mat& X, const Factors& f, const arma::vec& weights,
                              const AbsorbOptions& opt = {});

/// Absorbed parameters: levels - redundant.
struct AbsorbedDF {
  arma::uword levels = 0;      ///< sum of the levels of all factors
  arma::uword redundant = 0;   ///< redundant levels (see the header comment)
  arma::uword components = 0;  ///< connected components of factors 1-2 (0 with one factor)
  bool exact = true;           ///< false when the 3+ factor count is the lower bound
  arma::uword df_absorbed() const { return levels - redundant; }
};

/// The count for factors f (weights do not matter: positive weights do not change a rank).
AbsorbedDF absorbed_df(const Factors& f, const AbsorbOptions& opt = {});

/// Absorbed parameters counted under cluster-robust inference (fixest ssc(K.fixef =
/// "nonnested")): the levels of a factor nested in a cluster variable (every level of the factor
/// within one cluster; clusters is n x G codes, any non-negative integers) are not counted
/// except one per such factor, so the result is df.df_absorbed() minus the levels of the nested
/// factors plus their number, at least 0 (as fixest and pyfixest).
double absorbed_df_clustered(const Factors& f, const AbsorbedDF& df, const arma::umat& clusters);

class AbsorbedOLS {
 public:
  explicit AbsorbedOLS(AbsorbOptions options = {}) : opt_(options) {}

  /// Fit Y (n x k) on X (n x p, p >= 1, no constant needed) absorbing the factors (n x K codes,
  /// validated by Factors::from_codes); weights empty or n positive finite values.
  AbsorbedOLS& fit(const arma::mat& X, const arma::mat& Y, const arma::umat& factors,
                   const arma::vec& weights = arma::vec());

  /// Coefficients of X (p x k), NaN where aliased (absorbed or collinear).
  const arma::mat& coefficients() const { return coef_; }
  /// Per column of X: true when absorbed by the fixed effects (a subset of aliased()).
  const std::vector<bool>& absorbed() const { return absorbed_; }
  /// Per column of X: true when aliased (absorbed, or collinear with other regressors).
  std::vector<bool> aliased() const;
  arma::uword rank() const { return rank_; }
  arma::uword n_obs() const { return y_.n_rows; }
  /// n (or sum(w) with frequency weights) - rank - df_absorbed.
  double df_residual() const;
  const AbsorbedDF& df_info() const { return df_; }
  const Factors& factors() const { return f_; }
  /// Rows left out of the statistics as singletons (all false without drop_singletons).
  const std::vector<bool>& singletons() const { return singleton_; }
  arma::uword n_singletons() const { return n_singletons_; }
  /// N of the statistics: the rows that are not singletons (sum of their weights with
  /// frequency weights).
  double n_effective() const;
  /// The CR1 factor of this fit for `cov` (clusters given), with K counted as options().ssc says.
  double cluster_factor(const CovOptions& cov) const;
  /// Restricted wild cluster bootstrap of R'b = r (R: one weight per column of X, zero on
  /// aliased columns), one-way clusters, V the G x B weights (cluster_inference.hpp).
  WildBootstrapResult wild_bootstrap(const arma::vec& R, double r, const arma::uvec& clusters,
                                     const arma::mat& V, double level) const;
  int iterations() const { return iterations_; }
  bool converged() const { return converged_; }

  const arma::mat& fitted() const { return fitted_; }
  arma::mat residuals() const { return y_ - fitted_; }
  /// Weighted RSS / df_residual per output.
  arma::rowvec sigma2() const;
  /// 1 - RSS / TSS_within (TSS of M_D y), per output.
  arma::rowvec r_squared_within() const;
  /// Overall R^2 (1 - RSS / weighted centred TSS) and its adjusted version (n-1)/df_residual.
  arma::rowvec r_squared() const;
  arma::rowvec adj_r_squared() const;

  /// Standard errors (p x k) under Classical, HC0, HC1, HAC, CR0, CR1 and HC2/HC3, whose
  /// leverage adds the dummies' part w_i d_i' (D'WD)^- d_i (w_i / W_g for one factor; for more,
  /// a dense pseudo-inverse of the dummy Gram matrix per connected component of the levels, up
  /// to 3000 levels per component, else InvalidArgument). Small-sample factors use df_residual.
  /// Two-way clustered: eigenvalue-fixed when indefinite, as OLS's (`fix` as in OLS).
  arma::mat std_errors(const CovOptions& cov = {}, Inference* fix = nullptr) const;
  /// Covariance (p x p) of the coefficients of one output, NaN where aliased.
  arma::mat covariance(const CovOptions& cov = {}, arma::uword output = 0) const;
  /// Coefficient table; r_squared / adj_r_squared are the overall ones.
  Inference inference(const CovOptions& cov = {}) const;

  /// Fixed-effect values per factor (n_levels[j] x k), normalised as in the header comment.
  const std::vector<arma::mat>& fixed_effects() const { return alpha_; }

  /// Predictions at new rows with known levels (codes m x K within the training levels).
  arma::mat predict(const arma::mat& X_new, const arma::umat& codes_new) const;
  /// Attention weights (m x n) over the training rows: predict(X, g) == A * Y.
  arma::mat attention_weights(const arma::mat& X_new, const arma::umat& codes_new) const;

  bool is_fitted() const { return fitted_flag_; }
  const AbsorbOptions& options() const { return opt_; }

 private:
  void require_fitted(const char* what) const;
  void check_new(const arma::mat& X_new, const arma::umat& codes_new, const char* what) const;
  /// alpha (normalised) of target columns T (n x c): per factor n_levels x c.
  std::vector<arma::mat> fe_values(const arma::mat& T) const;
  /// Rows p(g)' (m x n) of the fixed-effect operator at codes g.
  arma::mat fe_operator_rows(const arma::umat& codes_new) const;
  /// Kept (non-absorbed) column indices of X.
  arma::uvec kept_columns() const;
  /// The factor by which a covariance type scales the inner fit's covariance (options of the
  /// inner fit in `inner`); NaN for HC2, HC3 and CR2, which are not such a scaling.
  double inner_scaling(const CovOptions& cov, CovOptions& inner) const;
  /// Whether `cov` is an HC type under frequency weights (not a scaling of the inner fit).
  bool frequency_hc(const CovOptions& cov) const;
  /// Cluster ids with the singleton rows moved into the first kept row's cluster (they are zero
  /// rows of the inner fit), so that only clusters with kept rows count.
  arma::umat kept_clusters(const arma::umat& clusters) const;
  /// Factors (recoded) and cluster ids of the kept rows.
  Factors kept_factors() const;
  /// CR3 when the absorbed factor (one) is not nested in the clusters.
  arma::mat cr3_one_factor(const CovOptions& cov, arma::uword output) const;

  AbsorbOptions opt_;
  Factors f_;
  AbsorbedDF df_;
  arma::vec w_;      ///< weights (ones when none were given)
  bool weighted_ = false;
  arma::mat X_, y_;  ///< training data (for attention weights and fixed effects)
  arma::mat ytil_;   ///< M_D y
  arma::mat coef_;
  std::vector<bool> absorbed_;
  arma::uword rank_ = 0;
  OLS inner_;        ///< OLS of sqrt(w) M_D y on the kept columns of sqrt(w) M_D X
  bool inner_fitted_ = false;
  arma::mat fitted_;
  std::vector<arma::mat> alpha_;
  int iterations_ = 0;
  bool converged_ = true;
  bool fitted_flag_ = false;
  std::vector<bool> singleton_;
  arma::uword n_singletons_ = 0;
};

}  // namespace attnreg
