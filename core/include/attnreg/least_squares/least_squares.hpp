// attnreg: ordinary least squares, its inference and its attention form (Goulet Coulombe 2025,
// arXiv:2504.09663).
//
// Layout convention for the whole core: one observation per ROW. X is n x p (arma::mat is
// column-major, so an R matrix is passed as is and a C-contiguous numpy (n, p) array is copied
// once into column-major order by the Python face). Y is n x k (k >= 1 outputs).
//
// Solution method: the design D = [1, X] (or X) is scaled column-wise by powers of two (exact)
// and factored by Householder QR with column pivoting (LAPACK dgeqp3). X'X is never formed or
// inverted. Two precisions:
//   * double: R b = Q'y, then one step of iterative refinement of the augmented system
//     [I D; D' 0][r; b] = [y; 0] (Bjorck) with residuals accumulated in long double.
//   * extended: the same pivot order, refactored by Householder QR in double-double arithmetic
//     (about 32 digits); coefficients, residuals and (D'D)^{-1} are computed in double-double and
//     rounded once. This is what makes the NIST StRD Filip and Wampler designs (condition numbers
//     1e10 and beyond after scaling) come out to 14-15 digits, where lm() aliases Filip's x^10.
//   Precision::Auto uses extended precision when it is cheap (n q^2 <= 2e6) or when the double
//   factor is ill-conditioned (a pivot below 1e-4 |R_11|) and n q^2 <= 1e8; otherwise double.
//
// Rank deficiency is handled like R's lm: with the pivoted factor D P = Q R, columns whose
// |R_kk| <= tol * |R_11| are *aliased*: their coefficients are NaN, they are left out of
// predictions, and rank() < n_coef(). tol is rank_tol (1e-7, lm's default) for double
// factorisations and extended_rank_tol (1e-11) for extended ones: a pivot of 1e-10 |R_11| is far
// above the 1e-16 rounding of the data, so its coefficient is determined, and an extended fit
// estimates it instead of dropping it. Which of several collinear columns is aliased follows the
// pivot order (the column that adds least), which can differ from lm's "later column" choice.
//
// Attention form (Goulet Coulombe 2025, eqs. 4-8): the prediction at x is sum_i a_i(x) y_i with
//   a(x)' = d(x)' (D'D)^{-1} D'  = d(x)' P R^{-1} Q_1'          (eq. 7: F_test F_train')
// where d(x) is the design row of x. With D'D = U Lambda U' the factors are
// F = D U Lambda^{-1/2} (eq. 5), F_train'F_train = I (eq. 6), and the embedding is
// Omega = W W' = (D'D)^{-1} with W = U Lambda^{-1/2} (eqs. 12-13, 20-21). With an intercept the
// rows of A sum to 1 (eqs. 17-19).
#pragma once

#include "attnreg/base/arma.hpp"
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace attnreg {

/// Arithmetic used by OLS::fit (see the header comment).
enum class Precision { Auto, Double, Extended };

/// Covariance estimators. Classical: sigma^2 (D'D)^{-1}. HC0-HC3: White's sandwich
/// (D'D)^{-1} D' diag(w) D (D'D)^{-1} with w_i = e_i^2, e_i^2 n/(n-r), e_i^2/(1-h_i),
/// e_i^2/(1-h_i)^2 (as sandwich::vcovHC and statsmodels). HAC: Newey-West with Bartlett
/// weights 1 - l/(L+1), l = 1..L, on the scores d_i e_i (as sandwich::NeweyWest with
/// prewhite = FALSE and statsmodels cov_type="HAC").
/// Cluster-robust (Liang and Zeger 1986; Cameron and Miller 2015): the meat sums the scores
/// within clusters, sum_g (D_g' e_g)(D_g' e_g)'. CR0: no factor; CR1: Stata's factor
/// G/(G-1) (N-1)/(N-r); CR2: Bell and McCaffrey (2002), residuals of cluster g premultiplied by
/// (I - H_gg)^{-1/2} (pseudo-inverse square root), no factor. Two clustering dimensions:
/// Cameron, Gelbach and Miller (2011), V = V_1 + V_2 - V_12 (V_12 clustered on the
/// intersection), CR1 scaled once by G/(G-1) (N-1)/(N-r) with G = min(G_1, G_2) (Stata's
/// ivreg2 and reghdfe); CR2 is one-way only. V_1 + V_2 - V_12 can be indefinite (a negative
/// variance): then V is replaced by U max(Lambda, 0) U' with V = U Lambda U' in the coordinates
/// of the coefficients (Cameron, Gelbach and Miller 2011, sec. 2.3; reghdfe and fixest do the
/// same) and Inference::psd_fixed says so. One-way and HC covariances are PSD: never touched.
/// CR3: the cluster jackknife (G-1)/G sum_g (b_(g) - b)(b_(g) - b)' in closed form (MacKinnon,
/// Nielsen and Webb 2023, J. Econometrics 232(2); see least_squares/cluster_inference.hpp),
/// one-way only, no further factor.
enum class CovType { Classical, HC0, HC1, HC2, HC3, HAC, CR0, CR1, CR2, CR3 };

/// "nonrobust" (or "classical", "const"), "HC0".."HC3", "HAC", "cluster" (= "CR1"), "CR0",
/// "CR1", "CR2", "CR3" (case-insensitive) -> CovType.
CovType parse_cov_type(const std::string& name);
/// The canonical name: "nonrobust", "HC0", ..., "HAC", "CR0", "CR1", "CR2".
std::string cov_type_name(CovType type);
/// Whether the type is cluster-robust (CR0, CR1, CR2, CR3).
bool is_cluster_cov(CovType type);

/// Observation weights of a weighted least-squares fit (Stata's conventions). Both give the
/// same coefficients, (D'WD)^{-1} D'W y; they differ in what counts as an observation:
///   Analytic (aweight): each row is one observation whose variance is proportional to 1/w_i;
///     N = the number of rows with w_i > 0 (rows with w_i = 0 are left out, as lm and Stata).
///   Frequency (fweight): row i stands for w_i identical observations; N = sum(w), and every
///     statistic equals the unweighted one on the data with row i repeated w_i times.
/// N enters the residual degrees of freedom N - r, sigma^2 = sum w_i e_i^2 / (N - r), HC1's and
/// CR1's small-sample factors and adjusted R^2.
enum class WeightType { Analytic, Frequency };
/// "analytic" (or "aweight") / "frequency" (or "fweight") -> WeightType.
WeightType parse_weight_type(const std::string& name);

/// Validate observation weights for n rows: finite, >= 0, not all zero. `arg` names the
/// argument in the message (faces call it sample_weight or weights).
void check_weights(const arma::vec& w, arma::uword n, const std::string& arg = "weights");

/// Frequency weights count copies of a row: each must be a whole number (as Stata's fweight);
/// 0.5 would make N = sum(w) and the residual df fractional. The error names `arg` and points
/// to analytic weights (weight_type "analytic") for non-integer weights.
void check_frequency_weights(const arma::vec& w, const std::string& arg = "weights");

struct CovOptions {
  CovType type = CovType::Classical;
  /// HAC only: number of lags L (0 <= L <= n - 1); -1 = the Newey-West (1994) rule floor(4
  /// (n/100)^(2/9)).
  int maxlags = -1;
  /// HAC only: multiply by n/(n-r) (sandwich's adjust = TRUE, statsmodels use_correction).
  bool hac_adjust = false;
  /// CR0-CR2 only: cluster ids, one column per clustering dimension (1 or 2), one row per
  /// training row; any non-negative integer codes (they need not be consecutive).
  arma::umat clusters;
};

/// The lags a HAC covariance uses for n observations (maxlags < 0 -> the rule above).
int hac_lags(int maxlags, arma::uword n);

/// Upper tail of Student's t: P(T > t) with df > 0 degrees of freedom (df = inf: normal).
double student_t_sf(double t, double df);

/// Coefficient table and fit statistics of a fitted OLS (one column per output).
struct Inference {
  arma::mat estimate;   ///< q x k (NaN where aliased)
  arma::mat std_error;  ///< q x k
  arma::mat t_value;    ///< estimate / std_error
  arma::mat p_value;    ///< two-sided, Student t with df_residual degrees of freedom
  arma::rowvec r_squared, adj_r_squared, sigma;  ///< per output (centred R^2 with an intercept)
  double df_residual = 0;
  /// Degrees of freedom of the t distribution behind the p-values: df_residual, or for
  /// cluster-robust covariances G - 1 (G = min over clustering dimensions, as Stata).
  double df_inference = 0;
  /// Number of clusters per dimension (empty unless cluster-robust).
  std::vector<arma::uword> n_clusters;
  CovType cov_type = CovType::Classical;
  int maxlags = 0;  ///< lags actually used (HAC), else 0
  /// Two-way clustered only: whether the covariance V = V_1 + V_2 - V_12 of some output had a
  /// negative eigenvalue and was replaced by U max(Lambda, 0) U' (Cameron, Gelbach and Miller
  /// 2011, sec. 2.3), so that every variance is >= 0; the standard errors are those of the
  /// fixed V.
  bool psd_fixed = false;
  /// When psd_fixed: the most negative lambda_min / lambda_max of the raw V over the outputs.
  double psd_min_eigenvalue = 0;
  /// HC2/HC3 only: rows of leverage one (an event dummy fits its row exactly), whose 0/0 terms
  /// e_i^2 / (1 - h_i)^{1 or 2} the sandwich leaves out (ls_detail::leverage_one_tol).
  arma::uword n_leverage_one = 0;
};

struct OLSOptions {
  bool fit_intercept = true;  ///< prepend a column of ones (never needs to be in X)
  double rank_tol = 1e-7;     ///< relative pivot tolerance (R's lm); rank-deficient designs alias
                              ///< columns as lm (dqrdc2) does: later columns, never the intercept
  int n_threads = 0;          ///< 0 = OpenMP default
  Precision precision = Precision::Auto;
  double extended_rank_tol = 1e-11;  ///< relative pivot tolerance of extended factorisations
  WeightType weight_type = WeightType::Analytic;  ///< meaning of the weights given to fit
  /// Form Q_1 (scores and leverages of every robust covariance) during fit, by a triangular
  /// solve with the design (BLAS-3) instead of dorgqr later; kept only when it is orthonormal
  /// to 1e-10 (well-conditioned designs), so the results are the same to about 1e-13. Faces set
  /// it when a robust covariance will be computed right after fit; it costs an n x r matrix.
  bool prepare_q1 = false;
};

/// Everything a fitted OLS needs, as plain arrays, so the faces can save and restore a model
/// (pickle in Python, an R list) without refactoring.
struct OLSState {
  bool fit_intercept = true;
  double rank_tol = 1e-7;
  arma::mat qr;       ///< dgeqp3 output: R above the diagonal, Householder vectors below (n x q)
  arma::vec tau;      ///< Householder scalars (q)
  arma::vec pivot;    ///< 0-based pivot order as doubles (q): column pivot[k] of D is column k of DP
  arma::vec scale;    ///< column scale factors s (q): D_scaled = D diag(1/s)
  arma::mat coef;     ///< q x k coefficients in design order (intercept first), NaN if aliased
  double rank = 0;    ///< numerical rank r
  arma::mat cov_unscaled;  ///< (D'D)^{-1}, q x q, NaN rows/columns where aliased
  bool extended = false;   ///< whether the coefficients came from the extended-precision path
  arma::vec weights;       ///< observation weights (n); empty for an unweighted fit
  bool frequency_weights = false;  ///< WeightType::Frequency
  /// Fitted values (n x k) of a weighted fit (rows of weight 0 cannot be recovered from the
  /// factor of W^{1/2} D); empty for an unweighted fit.
  arma::mat fitted;
};

class OLS {
 public:
  explicit OLS(OLSOptions options = {}) : opt_(options) {}

  /// Fit on X (n x p) and Y (n x k). Throws InvalidArgument on NaN/Inf, shape mismatch, n < 1.
  OLS& fit(const arma::mat& X, const arma::mat& Y);
  /// Weighted least squares: minimise sum_i w_i ||y_i - d_i' b||^2 (weights: n, >= 0, not all
  /// zero; empty = unweighted). The factor is that of W^{1/2} D; options().weight_type says how
  /// the weights count in degrees of freedom (see WeightType). Still a linear smoother:
  /// attention_weights(x) = d(x)' (D'WD)^{-1} D'W.
  OLS& fit(const arma::mat& X, const arma::mat& Y, const arma::vec& weights);

  /// Predictions at new rows (m x p) -> m x k.
  arma::mat predict(const arma::mat& X_new) const;

  /// Attention weights A (m x n): predict(X_new) == A * Y. Rows sum to 1 with an intercept.
  /// Computed as G Q_1' with G = d(x)' P R^{-1}: nothing n x n is formed beyond A itself.
  /// Weighted fits: A = d(x)' (D'WD)^{-1} D'W (columns of rows with w_i = 0 are 0).
  arma::mat attention_weights(const arma::mat& X_new) const;
  /// The same, written into `out` (resized unless it is a fixed view of caller memory of the
  /// right shape, m x n): lets a face hand over its own array and avoid a copy of the result.
  void attention_weights(const arma::mat& X_new, arma::mat& out) const;

  /// Factors of new rows, F = d(x)' W (m x r, eq. 5/13); F_test F_train' = attention weights.
  arma::mat factors(const arma::mat& X_new) const;
  /// Factors of the training rows, F_train = D W (n x r) with F_train' F_train = I (eq. 6).
  /// Weighted fits: F_train = W_obs D W (the keys, so that F_test F_train' = A still holds)
  /// with F_train' W_obs^{-1} F_train = I over the rows of positive weight.
  arma::mat training_factors() const;
  /// The encoder W = U Lambda^{-1/2} (q x r, design order, zero rows where aliased), with the
  /// eigenvalues Lambda of D'D in decreasing order (eq. 12).
  arma::mat encoder() const;
  /// Eigenvalues of D'D (D'WD when weighted) over the non-aliased columns, decreasing (r).
  arma::vec eigenvalues() const;
  /// The embedding Omega = W W' = (D'D)^{-1} (q x q, eq. 21), zero where aliased, so that
  /// attention_weights(X) == d(X) Omega D' (d(X) Omega D'W when weighted, Omega = (D'WD)^{-1}).
  arma::mat embedding() const;

  /// Coefficients in design order (intercept first when fitted), q x k; NaN where aliased.
  const arma::mat& coefficients() const { return st_.coef; }
  /// Classical standard errors sqrt(sigma^2 diag((D'D)^{-1})), q x k; NaN where aliased or when
  /// n <= rank (no residual degrees of freedom).
  arma::mat std_errors() const;
  /// Standard errors under any covariance estimator (q x k). Two-way clustered: those of the
  /// eigenvalue-fixed covariance when it was indefinite; `fix` (if given) receives psd_fixed
  /// and psd_min_eigenvalue as in Inference.
  arma::mat std_errors(const CovOptions& cov, Inference* fix = nullptr) const;
  /// Covariance matrix of the coefficients of output `output` (q x q, NaN where aliased).
  arma::mat covariance(const CovOptions& cov, arma::uword output = 0) const;
  /// Coefficient table (estimate, se, t, p) and R^2, adjusted R^2, sigma.
  Inference inference(const CovOptions& cov = {}) const;
  /// Residual variance per output: RSS / (n - rank); NaN when n == rank. Weighted fits:
  /// sum w_i e_i^2 / (N - rank) with N as in WeightType (as lm and statsmodels' WLS).
  arma::rowvec sigma2() const;
  /// Residual degrees of freedom N - rank (N: rows, rows of positive weight, or sum(w)).
  double df_residual() const;
  /// N of WeightType: n unweighted, the rows of positive weight (analytic) or sum(w) (frequency).
  double n_effective() const;
  /// Observation weights of the fit (empty when unweighted).
  const arma::vec& weights() const { return st_.weights; }
  /// (D'D)^{-1} over the non-aliased columns (q x q, NaN rows/cols where aliased), from
  /// R^{-1} (triangular solve, in double-double for extended fits), never by inverting D'D.
  const arma::mat& unscaled_covariance() const;

  /// Leverages h_i = diag of the hat matrix (n); weighted: of D (D'WD)^{-1} D'W.
  arma::vec hat_diagonal() const;
  /// Exact leave-one-out predictions y_i - e_i / (1 - h_i) (n x k; NaN where h_i = 1).
  arma::mat loo_predictions() const;
  /// Masked (causal) in-sample predictions of Goulet Coulombe 2025, eq. 35 for time-ordered rows:
  /// the weights of row t on rows tau <= t (tau < t when strict), renormalised to sum to 1.
  /// Unweighted fits only (InvalidArgument otherwise).
  arma::mat masked_predictions(bool strict = false) const;
  /// The n x n matrix of those masked weights (lower triangular).
  arma::mat masked_weights(bool strict = false) const;

  const arma::mat& fitted() const { return fitted_; }
  arma::mat residuals() const { return y_ - fitted_; }
  arma::uword rank() const { return static_cast<arma::uword>(st_.rank); }
  arma::uword n_obs() const { return st_.qr.n_rows; }
  arma::uword n_coef() const { return st_.qr.n_cols; }
  /// Whether the extended-precision path produced the coefficients.
  bool extended_precision() const { return st_.extended; }
  /// Indicator per design column: true when aliased (dropped).
  std::vector<bool> aliased() const;

  /// Export / import the fitted state (plus training Y and fitted values for residuals).
  const OLSState& state() const { return st_; }
  const arma::mat& training_y() const { return y_; }
  static OLS from_state(const OLSState& state, const arma::mat& Y);

  bool is_fitted() const { return fitted_flag_; }
  const OLSOptions& options() const { return opt_; }

 private:
  arma::mat design(const arma::mat& X) const;
  /// Fitted values from the residuals e of the (possibly W^{1/2}-transformed) problem Yf.
  void finish_fit(const arma::mat& D0, const arma::mat& Yf, const arma::mat& e);
  /// Q_1 of the factored design D (W^{1/2} D when weighted) by a triangular solve, cached when
  /// orthonormal (see OLSOptions::prepare_q1).
  void prepare_q1(const arma::mat& D);
  /// The r x r meat of a robust covariance in orthonormal coordinates for residuals e (n,
  /// original scale, possibly divided by a power of two), all small-sample factors included.
  arma::mat robust_meat(const arma::mat& Q1, const arma::vec& e, const CovOptions& cov,
                        std::vector<arma::uword>* n_clusters = nullptr) const;
  /// The robust covariance R^{-1} meat R^{-T} in scaled pivoted coordinates (r x r) for
  /// residuals e, eigenvalue-fixed in the coefficients' coordinates when two-way clustered.
  arma::mat robust_cov_pivoted(const arma::mat& Rinv, const arma::vec& e, const CovOptions& cov,
                               Inference* fix) const;
  /// Validate maxlags (HAC) and that clusters come only with a cluster-robust type.
  void check_cov_options(const CovOptions& cov) const;
  void check_new_x(const arma::mat& X_new, const char* what) const;
  /// Apply Q' (transpose=true) or Q to the n x c matrix B in place (first `rank` reflectors).
  void apply_q(arma::mat& B, bool transpose) const;
  /// Q_1: the first `rank` columns of Q (n x r), formed once (LAPACK dorgqr) and cached, so
  /// repeated attention_weights calls on row blocks cost one GEMM each.
  const arma::mat& q1() const;
  /// Solve R11 z = rhs (r x c) with R11 the leading r x r block of R.
  arma::mat solve_r(const arma::mat& rhs) const;
  /// Solve R11' z = rhs.
  arma::mat solve_rt(const arma::mat& rhs) const;
  /// Scaled, pivoted design rows of D_new restricted to the first r pivots: m x r.
  arma::mat pivoted_rows(const arma::mat& D_new) const;
  /// Map an r x r matrix in scaled pivoted coordinates to design order (q x q, NaN elsewhere).
  arma::mat unpivot_cov(const arma::mat& Cp) const;
  /// (D'D)^{-1} from the double R factor.
  arma::mat cov_from_r() const;
  /// Eigen-decomposition of D_p'D_p from R: R_u = Ur S Vr' (unscaled R of the kept columns).
  void spectral(arma::mat& Ur, arma::vec& s, arma::mat& Vr) const;
  void require_fitted(const char* what) const;

  OLSOptions opt_;
  OLSState st_;
  arma::mat y_;
  arma::mat fitted_;
  bool fitted_flag_ = false;
  struct Q1Cache {
    std::mutex mutex;
    arma::mat q;
    bool ready = false;
  };
  /// Shared by copies (they hold the same factor); replaced by every fit.
  mutable std::shared_ptr<Q1Cache> q1_cache_ = std::make_shared<Q1Cache>();
};

}  // namespace attnreg
