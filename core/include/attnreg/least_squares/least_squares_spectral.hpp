// attnreg: ridge regression and principal component regression (PCR) as attention (Goulet Coulombe
// 2025, arXiv:2504.09663, sections 3.1 and 3.3), from one thin SVD of the centred design.
//
// With an intercept, X is centred (x_bar) and Y is centred (y_bar); the intercept is never
// penalised or truncated. Xc = U S V' (thin SVD; singular values below max(n,p) eps s_1 are
// treated as zero). Both estimators shrink the spectral components by a filter phi_j in [0, 1]:
//   ridge:  phi_j = s_j^2 / (s_j^2 + lambda)     (eqs. 29-30: Omega = U (Lambda + lambda I)^{-1} U')
//   PCR:    phi_j = 1 for the first L components, 0 after   (eqs. 22-27: Omega_L = U_L Lambda_L^{-1} U_L')
// (the seed's U and Lambda are our V and S^2). Then
//   beta = V diag(phi/s) U' Yc,  intercept = y_bar - x_bar' beta,
//   attention weights a(x) = 1/n + (x - x_bar)' V diag(phi/s) U'   (rows sum to 1),
//   factors F(x) = [1/sqrt(n), (x - x_bar)' V diag(sqrt(phi)/s)],  F_train = [1/sqrt(n), U diag(sqrt(phi))],
//   so F_test F_train' = A (eq. 7 / 25); for PCR F_train' F_train = I_{L+1} (eq. 24); for ridge
//   F_train' F_train = diag(1, phi) (the shrunk embedding of eq. 30).
// The embedding over the design d = [1, x] is the (q x q) Omega with A = d(X) Omega D', i.e.
// (D'D + lambda diag(0, I))^{-1} for ridge (block formula with C = (Xc'Xc + lambda I)^{-1}).
//
// Exact leave-one-out for ridge: the smoother is H = 11'/n + U diag(phi) U' with a penalty that
// does not depend on the data, so y_i - yhat_{-i} = e_i / (1 - h_ii) exactly (Sherman-Morrison),
// intercept re-estimation included. Over a grid of lambdas, every criterion (LOO-CV, GCV, AICc)
// comes from the one SVD in a single pass over the rows (blocked GEMMs), as scikit-learn's RidgeCV
// does for LOO.
//
// Observation weights w_i >= 0 (weighted ridge / PCR, minimising sum_i w_i ||y_i - b0 - x_i'b||^2
// + lambda ||b||^2): x_bar and y_bar become weighted means, the SVD is that of W^{1/2} Xc, and the
// attention weights a(x) = w'/sum(w) + (x - x_bar)' V diag(phi/s) U' W^{1/2} still sum to 1 and
// reproduce the predictions (rows of weight 0 get 0). Exact LOO holds with the weighted leverages
// h_ii = w_i/sum(w) + sum_j phi_j U_ij^2 (see fit_select for the weighted criteria).
//
// Inference. Both estimators are linear in y, b = M y with M = L F' W^{1/2}, where
// F = [w^{1/2}/sqrt(sum w), U] (n x c, orthonormal columns) and L maps the components to the
// coefficients (intercept row [1/sqrt(sum w), -x_bar' V diag(phi/s)], slope rows
// [0, V diag(phi/s)]). The covariances are those of OLS with M in place of (D'WD)^{-1} D'W, so
// they are exact for this M:
//   classical  sigma^2 M W^{-1} M' = sigma^2 L L',  sigma^2 = sum w_i e_i^2 / (N - tr H);
//   HC0-HC3    M diag(omega_i) M' with omega as for OLS and h_ii the smoother's leverages;
//   HAC, CR0-CR2 (one- and two-way) as for OLS, CR2 with the blocks of the symmetric
//   whitened smoother W^{1/2} H W^{-1/2} = Fh Fh', Fh = [w^{1/2}/sqrt(sum w), U diag(phi^{1/2})].
// The residual degrees of freedom are N - tr H (N as in WeightType), which is exact for PCR (a
// projection) and the usual effective-df convention for ridge. Ridge is biased: these are the
// variances of the estimator around its own expectation E[b] = M E[y], not around the true
// coefficients; intervals built from them do not cover the true coefficients at the nominal rate
// unless the bias is negligible (Hoerl and Kennard 1970; Hastie, Tibshirani and Friedman 2009,
// sec. 3.4.1).
#pragma once

#include "attnreg/base/arma.hpp"
#include "attnreg/base/option_spec.hpp"
#include "attnreg/least_squares/least_squares.hpp"
#include <string>

namespace attnreg {

/// The fitted state of Ridge or PCR as plain arrays (for pickling and R lists).
struct SpectralState {
  bool fit_intercept = true;
  arma::rowvec x_mean, y_mean;
  arma::mat U;    ///< n x r
  arma::vec s;    ///< r
  arma::mat V;    ///< p x r
  arma::mat y;    ///< n x k training responses
  arma::vec weights;  ///< observation weights (n); empty for an unweighted fit
  arma::mat Z;        ///< weighted fits: (X - x_mean) V (n x r), the unweighted scores
};

/// Shared machinery of Ridge and PCR: the centred thin SVD and everything derived from a filter.
class SpectralLS {
 public:
  virtual ~SpectralLS() = default;

  /// Predictions at new rows (m x p) -> m x k.
  arma::mat predict(const arma::mat& X_new) const;
  /// Attention weights A (m x n): predict(X_new) == A * Y; rows sum to 1 with an intercept.
  arma::mat attention_weights(const arma::mat& X_new) const;
  /// The same, written into `out` (m x n; see OLS::attention_weights).
  void attention_weights(const arma::mat& X_new, arma::mat& out) const;
  /// Factors of new rows (m x c) with F_test F_train' = A; c = (intercept) + active components.
  arma::mat factors(const arma::mat& X_new) const;
  /// Factors of the training rows (n x c).
  arma::mat training_factors() const;
  /// Embedding Omega over the design [1, x] (q x q): attention_weights(X) = d(X) Omega D'.
  arma::mat embedding() const;
  /// Coefficients in design order (intercept first when fitted), q x k.
  arma::mat coefficients() const;
  /// Diagonal of the hat matrix (n).
  arma::vec hat_diagonal() const;
  /// tr(H): the effective degrees of freedom (intercept included).
  double effective_df() const;
  /// Masked (causal) predictions of Goulet Coulombe 2025, eq. 35 (see least_squares_masked.hpp).
  arma::mat masked_predictions(bool strict = false) const;
  arma::mat masked_weights(bool strict = false) const;

  const arma::mat& fitted() const { return fitted_; }
  arma::mat residuals() const { return y_ - fitted_; }
  /// Singular values of the centred design kept by the SVD (decreasing).
  const arma::vec& singular_values() const { return s_; }
  /// Right singular vectors V (p x r): the principal axes.
  const arma::mat& principal_axes() const { return V_; }
  arma::uword n_obs() const { return U_.n_rows; }
  arma::uword n_features() const { return x_mean_.n_elem; }
  bool fit_intercept() const { return intercept_; }
  /// Observation weights of the fit (empty when unweighted).
  const arma::vec& weights() const { return w_; }
  bool is_fitted() const { return fitted_flag_; }
  const arma::mat& training_y() const { return y_; }
  SpectralState state() const;

  /// N of WeightType: n unweighted, the rows of positive weight (analytic) or sum(w) (frequency).
  double n_effective() const;
  /// Residual degrees of freedom N - tr H (tr H = effective_df()).
  double df_residual() const;
  /// Residual variance per output: sum w_i e_i^2 / (N - tr H); NaN when N <= tr H.
  arma::rowvec sigma2() const;
  /// Covariance of the coefficients (design order, q x q) of output `output`, under any
  /// covariance type of OLS (see the header comment: around E[b], not the true coefficients).
  arma::mat covariance(const CovOptions& cov = {}, arma::uword output = 0) const;
  /// Standard errors (q x k) under any covariance type. Two-way clustered covariances are
  /// eigenvalue-fixed when indefinite, as OLS's (`fix` receives psd_fixed, as in Inference).
  arma::mat std_errors(const CovOptions& cov = {}, Inference* fix = nullptr) const;
  /// Coefficient table (estimate, se, t, p on N - tr H df, or G - 1 when clustered), R^2,
  /// adjusted R^2 (on N - tr H) and sigma.
  Inference inference(const CovOptions& cov = {}) const;
  /// How the weights count in degrees of freedom (Analytic when unweighted).
  WeightType weight_type() const { return weight_type_; }

 protected:
  /// The basis of the covariances: orthonormal scores F (n x c), the hat factor Fh (n x c) and
  /// the map L (q x c) with M W^{-1/2} = L F' (over the active components only).
  void inference_basis(arma::mat& F, arma::mat& Fh, arma::mat& L) const;
  void check_cov(const CovOptions& cov, arma::uword output) const;
  /// Restore from a saved state (validates shapes), then refresh_fit().
  void restore(const SpectralState& st);
  /// Centre, take the thin SVD, store it. Returns nothing; filters are applied by subclasses.
  /// `weights` (n, or empty): weighted means and the SVD of W^{1/2} Xc.
  void decompose(const arma::mat& X, const arma::mat& Y, bool fit_intercept, int n_threads,
                 const arma::vec& weights = arma::vec());
  /// The spectral filter phi (length r) of the current estimator.
  virtual arma::vec filter() const = 0;
  /// phi / s (length r): the coefficient gain of each component.
  virtual arma::vec gain() const { return filter() / s_; }
  /// Ridge's 1/lambda on the null space of Xc in the embedding (0 for PCR and lambda = 0).
  virtual double null_space_weight() const { return 0.0; }
  void refresh_fit();  ///< recompute coefficients and fitted values after the filter changed
  void require_fitted(const char* what) const;
  void check_new_x(const arma::mat& X_new, const char* what) const;

  bool intercept_ = true;
  int n_threads_ = 0;
  arma::rowvec x_mean_;  ///< p (zeros without intercept)
  arma::rowvec y_mean_;  ///< k (zeros without intercept)
  arma::mat U_;          ///< n x r
  arma::vec s_;          ///< r
  arma::mat V_;          ///< p x r
  arma::mat Uty_;        ///< r x k: U' Yc
  arma::mat y_;          ///< n x k
  arma::mat beta_;       ///< p x k (centred coefficients)
  arma::mat fitted_;     ///< n x k
  arma::vec w_;          ///< observation weights (empty = unweighted)
  arma::mat Z_;          ///< weighted: (X - x_bar) V, n x r
  bool fitted_flag_ = false;
  WeightType weight_type_ = WeightType::Analytic;
  /// sum(w) (weighted) or n: the weight of the intercept's constant column.
  double total_weight() const;
};

struct RidgeOptions {
  bool fit_intercept = true;
  double lambda = 1.0;  ///< >= 0; lambda = 0 is least squares (minimum-norm when rank-deficient)
  int n_threads = 0;
  WeightType weight_type = WeightType::Analytic;  ///< how weights count in inference's df
};

enum class RidgeCriterion { LOO, GCV, AICc };
/// "loo" (or "cv"), "gcv", "aicc" (case-insensitive).
RidgeCriterion parse_ridge_criterion(const std::string& name);

/// Every selection criterion for every lambda of a grid, from one SVD.
struct RidgeSelection {
  arma::vec lambdas;
  arma::vec loo_mse;       ///< mean over rows and outputs of (y_i - yhat_{-i})^2
  arma::vec gcv;           ///< sum over outputs of n RSS / (n - tr H)^2
  arma::vec aicc;          ///< sum over outputs of ln(RSS/n) + (1 + tr H/n) / (1 - (tr H + 2)/n)
  arma::vec effective_df;  ///< tr H
  arma::uword best = 0;    ///< index of the chosen lambda (first minimum of the criterion)
  RidgeCriterion criterion = RidgeCriterion::LOO;
};

class Ridge : public SpectralLS {
 public:
  explicit Ridge(RidgeOptions options = {}) : opt_(options) {}

  /// Fit with options().lambda; `weights` (n, >= 0, not all zero; empty = unweighted).
  Ridge& fit(const arma::mat& X, const arma::mat& Y, const arma::vec& weights = arma::vec());
  /// One SVD, every criterion over `lambdas`, then the fit at the chosen lambda. With weights
  /// the criteria count row i w_i times: loo_mse = sum_i w_i loo_i^2 / sum(w) (leaving row i
  /// out entirely), and GCV / AICc use RSS = sum w_i e_i^2 and n = sum(w), so that for integer
  /// weights they equal the unweighted criteria of the data with rows repeated.
  RidgeSelection fit_select(const arma::mat& X, const arma::mat& Y, const arma::vec& lambdas,
                            RidgeCriterion criterion, const arma::vec& weights = arma::vec());
  /// Switch to another lambda without refactoring (the SVD is reused).
  void set_lambda(double lambda);
  double lambda() const { return opt_.lambda; }
  /// Coefficients for each lambda (q x k x G) from the stored SVD.
  arma::cube path(const arma::vec& lambdas) const;
  /// Exact leave-one-out predictions y_i - e_i / (1 - h_ii) (n x k).
  arma::mat loo_predictions() const;
  static Ridge from_state(const RidgeOptions& options, const SpectralState& state);

 protected:
  arma::vec filter() const override;
  arma::vec gain() const override;  ///< s / (s^2 + lambda) without forming s^2
  double null_space_weight() const override;

 private:
  RidgeOptions opt_;
};

struct PCROptions {
  int rank = static_cast<int>(spec::pcr::rank);  ///< components L, 0 <= L <= numerical rank of Xc; -1 = all
  bool fit_intercept = true;
  int n_threads = 0;
  WeightType weight_type = WeightType::Analytic;  ///< how weights count in inference's df
};

class PCR : public SpectralLS {
 public:
  explicit PCR(PCROptions options = {}) : opt_(options) {}
  PCR& fit(const arma::mat& X, const arma::mat& Y, const arma::vec& weights = arma::vec());
  /// Components in use (the numerical rank when constructed with rank = -1).
  int rank() const { return used_; }
  static PCR from_state(const PCROptions& options, const SpectralState& state);
  /// Share of the centred design's sum of squares carried by each kept component.
  arma::vec explained_variance_ratio() const;

 protected:
  arma::vec filter() const override;

 private:
  PCROptions opt_;
  int used_ = 0;
};

}  // namespace attnreg
