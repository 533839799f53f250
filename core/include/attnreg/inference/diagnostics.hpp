// attnreg: bias-variance diagnostics and inference for the linear smoothers of local_fit.hpp.
//
// Every kernel estimator is a linear smoother, m(x) = sum_i l_i(x) y_i, with l(x) the
// equivalent-kernel (attention) weights of LocalPolynomial::attention_weights. Everything here
// is computed from those weights and the residuals e_i = y_i - m(x_i) of the fit:
//
//  * Global (Hastie & Tibshirani 1990, §3.4-3.5; Hurvich, Simonoff & Tsai 1998, eq. 4):
//      tr L = sum_i L_ii,  tr L'L = sum_ij L_ij^2,  residual df = n - 2 tr L + tr L'L,
//      sigma^2 = RSS / (n - 2 tr L + tr L'L),  R^2 = 1 - RSS / TSS,
//      CV = mean (y_i - m_{-i}(x_i))^2 (exact leave-one-out), GCV = n RSS / (n - tr L)^2,
//      AICc = log(RSS / n) + (1 + tr L / n) / (1 - (tr L + 2) / n)   (the AICc of np's npreg).
//    L'L needs every row of L at the training points: it is accumulated in row blocks of
//    kDiagBlockRows x n, so memory is O(block * n) and time O(n^2).
//  * Pointwise variance of m(x) = l(x)'y given X:  Var = sum_i l_i(x)^2 omega_i with
//      homoskedastic  omega_i = sigma^2
//      HC0            omega_i = e_i^2
//      HC1            omega_i = e_i^2 n / (n - tr L)
//      HC2            omega_i = e_i^2 / (1 - L_ii)
//      HC3            omega_i = e_i^2 / (1 - L_ii)^2
//    (MacKinnon & White 1985 with the smoother's leverages L_ii in place of the hat matrix's;
//    tr L plays the role of the number of parameters). Cluster-robust CR1 (Cameron & Miller
//    2015, eq. 12 with k = tr L): Var = G/(G-1) (n-1)/(n-tr L) sum_g (sum_{i in g} l_i(x) e_i)^2.
//  * Bias (one continuous column). For a local polynomial of degree p the weights reproduce
//    polynomials of degree <= p, so by Taylor's theorem
//      E[m(x)] - m(x) = sum_{k > p} m^{(k)}(x)/k! * sum_i l_i(x) (x_i - x)^k,
//    the equivalent-kernel moments times the derivatives (Fan & Gijbels 1996, Thm 3.1;
//    Calonico, Cattaneo & Farrell 2018 (CCF), eq. 2.2 / nprobust's lprobust). The derivatives
//    are estimated by a pilot local polynomial of degree q > p with bandwidth b (default b = h,
//    CCF's rho = h/b = 1, nprobust's default), and the terms k = p+1..q are kept. Default
//    q = p + 1 as nprobust, except q = 2 for local constant: NW's interior bias has both the
//    m' f'/f and the m''/2 terms at order h^2, so local constant needs m' and m''. The pilot's
//    coefficient beta_k(x) = m^{(k)}(x)/k! is itself linear in y, so the estimated bias
//    B(x) = sum_j b_j(x) y_j is linear in y.
//  * Robust bias correction (CCF 2018, §2-3): m_bc(x) = sum_j (l_j(x) - b_j(x)) y_j, with its
//    variance from the same formula applied to the weights l - b (so it includes the pilot's
//    variability). RBC interval: m_bc +- z_{1-a/2} se_bc. Conventional: m +- z se.
//  * Estimated MSE = B(x)^2 + Var.
//  * Bias with several continuous regressors (local constant or local linear fits; categorical
//    columns enter through their kernels exactly as in the fit). With u_i = (x_i - x) / b
//    componentwise over the continuous columns, the multivariate Taylor expansion gives
//      E[m(x)] - m(x) = sum_{|a| = p+1..2} D^a m(x) b^a / a! * sum_i l_i(x) u_i^a + o(h^2),
//    a over multi-indices: for local linear only the squares and cross products remain,
//    sum_i l_i(x) (x_i - x)' H(x) (x_i - x) / 2 (Ruppert & Wand 1994, Ann. Statist. 22(3),
//    Thm 2.1, in its finite-sample form before the moments are replaced by their limits); for
//    local constant the gradient terms stay as well. The derivatives D^a m(x) b^a / a! are the
//    coefficients of a pilot local quadratic with all squares and cross products (pilot degree
//    2, bandwidth vector b, default the fit's, i.e. rho = 1; the pilot's categorical kernels use
//    b's categorical entries), each a linear combination of y, so the bias is linear in y and
//    the RBC construction above (CCF 2018, §2-3) applies unchanged: m_bc = (l - b_w)'y with its
//    exact variance from the same omega. The kernel weights of the pilot are those of a
//    local-constant LocalPolynomial at b (the product kernel of the fit); its normal equations
//    are solved by thin QR per evaluation point. For one continuous column the univariate code
//    above is used (bit-for-bit nprobust's lprobust).
//  * Uniform (sup-t) bands over the evaluation points (Chernozhukov, Chetverikov & Kato 2014,
//    Ann. Statist. 42(5); Cattaneo, Jansson & Ma 2020, JASA 115(531), lpdensity's bands; Cattaneo,
//    Crump, Farrell & Feng 2024, AER 114(5), binsreg's): with W the smoother's weight rows (l for
//    the conventional band, l - b_w for the RBC band) and Sigma = W Omega W' the estimated
//    covariance of the m fits (Omega from the variance kind), the critical value is the `level`
//    quantile of max_j |Z_j| with Z ~ N(0, D^{-1/2} Sigma D^{-1/2}), D = diag(Sigma), simulated
//    by a Gaussian multiplier bootstrap: Z = C xi with C C' the correlation matrix (symmetric
//    square root) and xi standard normal (Box-Muller on a 64-bit Mersenne Twister, drawn
//    serially, so identical for any thread count). Quantile: the ceil(level R)-th order
//    statistic of the R draws.
//
// Bandwidths (mse_dpi / imse_dpi): bandwidth/dpi_bandwidth.hpp, beside the other plug-in rules.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "attnreg/base/arma.hpp"
#include "attnreg/solve/local_fit.hpp"

namespace attnreg {

/// Rows of L (at the training points) materialised at once when accumulating tr L'L.
constexpr arma::uword kDiagBlockRows = 256;

/// nn: nearest-neighbour residuals (nn_variance.hpp; nprobust's vce = "nn", 3 neighbours; with
/// several regressors the d-dimensional neighbours of nn_variance.hpp, pointwise_diagnostics
/// only). In pointwise_diagnostics, as nprobust's lprobust, the neighbours
/// of each evaluation point's residuals are sought among the observations of its window (a
/// non-zero weight in the fit or in its bias correction), so omega_i depends on the point.
enum class VarianceKind { homoskedastic = 0, hc0, hc1, hc2, hc3, cr1, nn, local };

/// "const"/"homoskedastic", "hc0".."hc3", "cr1", "nn", "local" (case-insensitive). Throws
/// InvalidArgument naming `arg`. "local" (local_residual_variance) is a pointwise kind:
/// pointwise_diagnostics and tradeoff_curve take it, the per-observation paths refuse it.
VarianceKind variance_kind_from_name(const std::string& name, const std::string& arg = "kind");
const char* variance_kind_name(VarianceKind k);

struct GlobalDiagnostics {
  double n = 0;
  double trace_L = 0;
  double trace_LtL = 0;
  double residual_df = 0;  ///< n - 2 tr L + tr L'L
  double rss = 0;
  double sigma2 = 0;       ///< rss / residual_df
  double r_squared = 0;
  double cv = 0;           ///< mean squared exact LOO error (+inf when some LOO fit fails)
  double gcv = 0;
  double aicc = 0;
};

/// Global diagnostics of output column `output` of a fitted model (compute_fitted = true).
GlobalDiagnostics global_diagnostics(const LocalPolynomial& model, arma::uword output = 0);

/// How uniform bands draw their critical values (see WildTBands and sup_t_critical_value below).
enum class UniformMethod { automatic = 0, wild_t = 1, gaussian = 2 };

/// The critical values of the pointwise intervals (PointwiseDiagnostics::crit, crit_bc):
/// - normal: the normal quantile z at `level` (nprobust's and np's convention);
/// - null: the `level` quantile of |t| under the statistic's own finite-sample null (normal
///   errors with a constant variance; robust_null_critical_values for kinds hc0-hc3,
///   local_residual_variance for kind local); refused for the other kinds;
/// - automatic: null for kind local, normal for every other kind.
enum class CriticalValue { automatic = 0, normal = 1, null = 2 };
CriticalValue critical_value_from_name(const std::string& name, const std::string& arg);

struct PointwiseOptions {
  VarianceKind kind = VarianceKind::hc3;
  double level = 0.95;          ///< confidence level in (0, 1)
  int pilot_degree = -1;        ///< q; -1 = default (max(p + 1, 2)); must be > p
  double pilot_bandwidth = 0;   ///< b; 0 = the model's bandwidth (rho = 1)
  /// Pilot bandwidth vector (length d, one per column, categorical entries the pilot's
  /// smoothing parameters); empty = pilot_bandwidth. Needed when a fit has several columns and
  /// the pilot bandwidth is not the model's.
  arma::vec pilot_bandwidths;
  std::vector<long long> cluster;  ///< cluster ids (length n) for kind = cr1
  /// Uniform (sup-t) bands: number of multiplier draws (0 = none; else >= 100).
  int uniform_replications = 0;
  std::uint64_t seed = 0;  ///< seed of the multiplier draws
  /// How the bands' critical values are drawn (UniformMethod; automatic = wild_t for the robust
  /// kinds HC0-HC3 and cr1, gaussian for the homoskedastic and the nearest-neighbour variance).
  UniformMethod uniform_method = UniformMethod::automatic;
  CriticalValue critical_value = CriticalValue::automatic;  ///< of the pointwise intervals
};

struct PointwiseDiagnostics {
  arma::vec fit, se, bias, mse, ci_low, ci_high;
  arma::vec fit_bc, se_bc, rbc_low, rbc_high;
  /// The homoskedastic sigma^2 = RSS / (n - 2 tr L + tr L'L), computed for kind const only
  /// (tr L'L is a pass over all pairs of distinct training rows that the robust kinds do not
  /// need); NaN otherwise.
  double sigma2 = 0;
  double z = 0;       ///< the normal quantile at `level`
  /// The critical values of the conventional and the RBC interval at each point (m): z, or
  /// the finite-sample null quantiles (PointwiseOptions::critical_value); ci = fit -+ crit se,
  /// rbc = fit_bc -+ crit_bc se_bc.
  arma::vec crit, crit_bc;
  /// Sup-t critical values of the uniform bands (conventional, RBC; NaN when not requested) and
  /// the bands fit -+ c se, fit_bc -+ c_bc se_bc (empty when not requested).
  double crit_uniform = 0, crit_uniform_bc = 0;
  std::string uniform_method;  ///< the method the bands used ("wild_t", "gaussian"; "" = none)
  /// Empty unless uniform_method "auto" could not use the wild bootstrap-t (its hat-matrix rows
  /// would not fit in memory) and used the Gaussian sup-t: then why (for the faces' warning).
  std::string uniform_note;
  arma::vec uniform_low, uniform_high, uniform_rbc_low, uniform_rbc_high;
  /// Empty when the bias and RBC columns were computed; otherwise why they are NaN (for the
  /// faces' warning or error).
  std::string bias_note;
};

/// Fit, standard error, estimated bias and MSE, conventional and RBC intervals at the rows of
/// X_eval (m x d). The bias and the RBC columns need at least one continuous column and a
/// fit of degree <= 1 when there are several columns (see the header comment); they are NaN
/// with a note for a fit without continuous columns. Throws InvalidArgument for bad options (naming
/// them) and NumericalError when a pilot fit is singular or a leverage is >= 1 under HC2/HC3.
PointwiseDiagnostics pointwise_diagnostics(const LocalPolynomial& model, const arma::mat& X_eval,
                                           const PointwiseOptions& opt = {},
                                           arma::uword output = 0);

/// The default pilot degree of a degree-p fit, max(p + 1, 2) (PointwiseOptions::pilot_degree).
int default_pilot_degree(int p);

/// Weights of the pilot coefficient estimates: for each eval point x (row of the result block)
/// the m x n matrix G_k with beta_k(x) = G_k.row(x) * y estimating m^{(k)}(x)/k!, for
/// k = 0..q. A weighted least-squares fit of degree q in u = (x_i - x)/b with kernel weights
/// s_i K(u_i) (s the sample weights), solved by QR per point. One continuous column only.
std::vector<arma::mat> pilot_coefficient_weights(const arma::vec& x_train, const arma::vec& x_eval,
                                                 const Kernel& kernel, int degree, double b,
                                                 const arma::vec& sample_weight);

/// The bias weight matrix (m x n): bias(x) = B.row(x) * y (see the file comment).
arma::mat bias_weights(const LocalPolynomial& model, const arma::mat& X_eval, int pilot_degree,
                       double pilot_bandwidth);

/// Bias weights (m x n) of a degree-0 or degree-1 fit with any number of columns, at least one
/// continuous: B(x) = sum_j b_j(x) y_j from a pilot local quadratic with all squares and cross
/// products (header comment). pilot_bandwidths: length d (empty = the model's bandwidths);
/// pilot_degree -1 or 2. Throws InvalidArgument (naming the argument) for a wrong length, a
/// model of degree >= 2 or a continuous column with fewer than 3 distinct values, and
/// NumericalError naming the evaluation row when the pilot's design there is singular.
/// bwcheck: the minimum-points rule of rbc_bandwidth_multivariate.hpp on the pilot's window at
/// each point (at least max(bwcheck, 2 n_pilot) distinct rows with weight, b enlarged by a
/// common factor until it holds; 0 = no rule, a window with fewer than n_pilot rows refused).
arma::mat bias_weights_multivariate(const LocalPolynomial& model, const arma::mat& X_eval,
                                    int pilot_degree, const arma::vec& pilot_bandwidths,
                                    int bwcheck = 21);

/// The training rows grouped by ties (distinct_rows.hpp) for the multivariate pilot: row i
/// belongs to distinct row group_of(i) and carries the share a_i / A_g of its group's total
/// observation weight A_g (0 when A_g = 0). Every linear smoother of the fit has
/// W(x, i) = share_i * sum_{k in g} W(x, k) (its weights are a_i times a function of x_i).
struct TrainingGroups {
  arma::mat X;          ///< G x d distinct training rows
  arma::uvec group_of;  ///< n
  arma::vec weight;     ///< G: A_g
  arma::vec share;      ///< n: a_i / A_g
};
TrainingGroups training_groups(const LocalPolynomial& model);
/// Column sums per group (m x n -> m x G) and their inverse for a grouped smoother
/// (m x G -> m x n, W(x, i) = Wg(x, g(i)) share_i).
arma::mat group_sums(const arma::mat& W, const TrainingGroups& groups);
arma::mat expand_groups(const arma::mat& Wg, const TrainingGroups& groups);
/// bias_weights_multivariate over the distinct training rows: Bg (m x G) with
/// B = expand_groups(Bg, groups). L is the model's attention weights at X_eval (m x n), reused
/// for the moments of the fit.
arma::mat bias_weights_multivariate_grouped(const LocalPolynomial& model,
                                            const arma::mat& X_eval, int pilot_degree,
                                            const arma::vec& pilot_bandwidths, const arma::mat& L,
                                            const TrainingGroups& groups, int bwcheck = 21);

/// Sup-t critical value at `level` for m estimates with covariance Sigma (m x m): the
/// ceil(level R)-th order statistic of max_j |Z_j| over R Gaussian multiplier draws Z ~
/// N(0, correlation of Sigma) (header comment). Rows with zero variance are left out.
double sup_t_critical_value(const arma::mat& Sigma, double level, int replications,
                            std::uint64_t seed);

/// Critical values of uniform bands (PointwiseOptions::uniform_method):
/// - gaussian: sup_t_critical_value of the smoother's estimated covariance (the standard errors
///   are treated as known; as binsreg and lpdensity build their bands);
/// - wild_t: the wild bootstrap-t (Mammen 1993, Ann. Statist. 21(1); the sup-t form of
///   Chernozhukov, Chetverikov and Kato 2014, Ann. Statist. 42(5)): y*_i = yhat_i + e_i v_i
///   with Rademacher v (one per cluster under cr1), the fit's residuals re-projected,
///   e* = y* - H y* (H the fit's hat matrix), the standard error recomputed from e* with the
///   same variance kind, and the ceil(level R)-th order statistic of
///   max_k |w_k' (y* - yhat)| / se*_k. It reproduces the noise of the estimated standard
///   errors (HC0-HC3, cr1, the homoskedastic sigma^2), which the Gaussian ignores; see
///   core/README.md ("Uniform bands") for the Monte Carlo evidence.
/// - automatic: wild_t for HC0-HC3 and cr1 (gaussian, with PointwiseDiagnostics::uniform_note,
///   where WildTBands would not fit in memory: WildTTooLarge); gaussian for the homoskedastic
///   variance (not noisy: the Gaussian band covers there, and the wild bootstrap-t, whose
///   multipliers carry the raw residuals while se* pools sigma^2, undercovers: 0.785 against
///   0.93 at d = 3, n = 500), for the local variance and for the nearest-neighbour variance
///   (whose bootstraps would redo the window fits or the neighbour search of every window in
///   every draw).
UniformMethod uniform_method_from_name(const std::string& name, const std::string& arg);
const char* uniform_method_name(UniformMethod m);

/// WildTBands' refusal of a fit whose hat-matrix rows would not fit in memory: an
/// InvalidArgument naming uniform_method, on which uniform_method "auto" uses the Gaussian.
class WildTTooLarge : public InvalidArgument {
 public:
  using InvalidArgument::InvalidArgument;
};

/// The wild bootstrap-t of uniform bands for one fitted model (see UniformMethod::wild_t).
/// The refits run over the distinct training rows (TrainingGroups), and only the rows of the
/// hat matrix H (G columns) for the groups that the smoothers weigh are made, per call: as
/// compressed rows when sparse (compact kernels), dense otherwise (every row for the
/// homoskedastic kind). More than 2e8 nonzero weights, or a dense block above 4e8 entries
/// (3.2 GB), is refused with WildTTooLarge.
namespace detail {
/// Rademacher signs (+1, -1) from the top bit of each output of a 64-bit Mersenne Twister:
/// the same stream as `(std::mt19937_64(seed)() >> 63) ? 1.0 : -1.0` drawn one at a time
/// (Matsumoto and Nishimura 1998, ACM TOMACS 8(1); the 64-bit parameters of Nishimura 2000,
/// ACM TOMACS 10(4), as the C++ standard's mt19937_64), generated a state block at a time.
class RademacherStream {
 public:
  explicit RademacherStream(std::uint64_t seed);
  /// Writes the next n signs to p.
  void fill(double* p, std::size_t n);

 private:
  void twist();
  std::uint64_t mt_[312];
  std::size_t next_ = 312;
};
}  // namespace detail

class WildTBands {
 public:
  /// sigma2_df: the homoskedastic kind's residual degrees of freedom (GlobalDiagnostics), unused
  /// otherwise; cluster: one id per training row for cr1. The model must outlive the object
  /// (each call reads the rows of its hat matrix that the smoothers need).
  WildTBands(const LocalPolynomial& model, VarianceKind kind,
             const std::vector<long long>& cluster, arma::uword output, double sigma2_df);
  /// Rows of the multiplier matrix: n, or the number of clusters under cr1 (in the order of
  /// their first appearance).
  arma::uword n_multipliers() const;
  /// max_k |t*_k| of each smoother W (m x n; rows with a zero standard error left out) for
  /// each column of the multipliers V (n_multipliers() x r): an r x |Ws| matrix.
  arma::mat max_statistics(const std::vector<const arma::mat*>& Ws, const arma::mat& V) const;
  /// The critical values at `level` of each smoother from `replications` Rademacher draws
  /// seeded with `seed` (serially drawn: the same for every thread count).
  arma::vec critical_values(const std::vector<const arma::mat*>& Ws, double level,
                            int replications, std::uint64_t seed) const;

 private:
  // Rows of a matrix with few nonzeros: row k is val/col[ptr[k] .. ptr[k + 1]), in column
  // order (so a row's dot product adds in the same order as the dense one's definition).
  struct SparseRows {
    std::vector<std::size_t> ptr{0};
    std::vector<arma::uword> col;
    std::vector<double> val;
    void append(const arma::mat& M);                  // M's rows after the last one
    double dot(std::size_t k, const double* u) const;  // row k times u
  };
  // What a smoother contributes that does not depend on the draw (built once per call).
  struct Smoother {
    const arma::mat* W = nullptr;
    arma::mat Wg, Wg2;  // group sums (m x G) and their squares
    arma::uvec keep;    // the rows with a positive standard error in the sample
    bool sparse = false;  // Wg at most a quarter nonzero: its rows as `rows`, no dense products
    SparseRows rows;
  };
  std::vector<Smoother> prepare(const std::vector<const arma::mat*>& Ws) const;
  // The rows of the distinct rows' hat matrix H for the groups A that some smoother weighs
  // (every group for the homoskedastic kind): H(A, :), dense (H) or, when H is empty, as
  // compressed rows while sparse; and H(A, :) times the fitted group sums.
  struct Refit {
    arma::uvec groups;
    arma::mat H;
    SparseRows rows;
    arma::vec HF;
  };
  Refit refit_rows(const std::vector<Smoother>& S) const;
  // max statistics of the draws V (n_multipliers() x r) into out.rows(r0, r0 + r - 1).
  void draw_statistics(const std::vector<Smoother>& S, const Refit& R, const arma::mat& V,
                       arma::mat& out, arma::uword r0) const;
  VarianceKind kind_;
  TrainingGroups groups_;
  const LocalPolynomial* model_ = nullptr;  // for the rows of H (refit_rows)
  arma::vec fs_;                            // fitted values summed over each group (shares)
  arma::vec fit_, e_, c_, og0_;
  std::vector<arma::uword> cl_;
  std::vector<arma::uword> order_, gstart_;  // rows sorted by group; group g: [gstart_[g], gstart_[g+1])
  // per row in the sorted order: residual, share, share^2 c_i, fitted value, multiplier row
  std::vector<double> e_s_, sh_s_, s2c_s_, fit_s_;
  std::vector<arma::uword> vrow_s_;
  arma::uword n_clusters_ = 0;
  double sigma2_df_ = 0, cr_adj_ = 0;
};


/// The locally homoskedastic residual variance at each row of X_eval (m), variance kind
/// "local": with w_i = K_h(x_i - x) a_i the fit's kernel weights at x (its kernels, bandwidths
/// and sample weights a_i), Z the design of a local polynomial of degree q in the continuous
/// columns (all monomials of degree <= q; pointwise_diagnostics passes the RBC pilot's degree,
/// max(p + 1, 2) by default, so that the window's quadratic curvature leaves the residuals of a
/// local linear fit) and r_i = y_i - Z_i beta(x) the residuals of the local weighted
/// least-squares fit at x,
///   sigma^2(x) = sum_i w_i r_i^2 / sum_i w_i (1 - H_ii),  H_ii = w_i Z_i (Z'WZ)^{-1} Z_i',
/// which is unbiased for sigma^2 when the variance is constant over the window and the local
/// polynomial is exact there, since E sum_i w_i r_i^2 = sigma^2 tr((I - H)' W (I - H))
/// = sigma^2 (sum_i w_i - tr((Z'WZ)^{-1} Z'W^2 Z)) (Fan & Gijbels 1996, Local Polynomial
/// Modelling and Its Applications, ch. 4, the normalised local residual sum of squares). The
/// variance of any smoother row W(x) is then sigma^2(x) sum_i W_i(x)^2 (conventional and
/// bias-corrected alike), and the covariance of two points sigma(x) sigma(x')
/// sum_i W_i(x) W_i(x'). It pools the whole window's residuals, so it is far less noisy than
/// the per-observation kinds in small windows, at the price of assuming sigma^2(x) roughly
/// constant over one bandwidth.
///
/// Critical values (one vector per smoother in `smoothers`, m x n each, e.g. L and L - B):
/// t = W(x)'(y - m) / sqrt(sigma^2(x) sum_i W_i^2) is not normal in a window of a few dozen
/// rows: sigma^2(x) has few degrees of freedom, and it shares rows with the numerator (W is
/// not in the span of the window's design), so a large |W'e| also inflates sigma^2(x) and the
/// statistic is self-normalising (lighter-tailed than a Student t of the same degrees of
/// freedom, sometimes lighter than the normal). crit(x) is the `level` quantile of |t| under
/// the statistic's own null, e ~ N(0, sigma^2 I) in the window, as Bell and McCaffrey (2002,
/// Survey Methodology 28(2)) and Imbens and Kolesar (2016, REStat 98(4)) take the small-sample
/// reference distribution of a robust t-statistic under homoskedastic normal errors: with
/// a = W / |W| and Z = a'e / sigma, the pooled variance given Z is a quadratic form plus a
/// linear term in the rest of e, matched by Pearson's three-moment chi-square (its first three
/// cumulants exact), and P(|t| > c) = E_Z P(sigma^2(x) < ...) an adaptive quadrature over Z
/// (local_variance.cpp). Against 40,000-draw simulations of the null on the windows of the
/// bench/rbc_montecarlo.py design it is within 0.03 of the simulated quantile (0.15 in a
/// d = 3 corner window with about five residual degrees of freedom);
/// bench/results/rbc_pointwise_variance.md. Where a smoother row is all zero crit is the
/// normal quantile. Throws NumericalError naming the point when the window has no more
/// distinct rows than the polynomial's coefficients.
struct LocalVariance {
  arma::vec sigma2;             ///< m
  std::vector<arma::vec> crit;  ///< one m-vector per smoother
};
LocalVariance local_residual_variance(const LocalPolynomial& model, const arma::mat& X_eval,
                                      arma::uword output, int degree,
                                      const std::vector<const arma::mat*>& smoothers = {},
                                      double level = 0.95);

/// Finite-sample critical values of the heteroskedasticity-robust t-statistics of smoother
/// rows (kinds hc0-hc3; trace_L = tr L, used by hc1): for each smoother W (m x n) and point j,
/// the `level` quantile of |t|, t = W_j'e / sqrt(sum_i W_ji^2 s_i ((I - H) e)_i^2) under
/// e ~ N(0, sigma^2 I), H the fit's hat matrix at the training rows (whose rows are computed
/// at the rows W_j weighs) and s_i the kind's factor (1, n / (n - tr L), 1 / (1 - H_ii),
/// 1 / (1 - H_ii)^2). The distribution given W_j'e is Pearson's three-moment chi-square, as in
/// local_residual_variance; derivation in core/src/inference/robust_null.cpp. Costs |S|^2 n
/// per point (|S| the rows W_j weighs): meant for pointwise inference at a few points.
/// Throws InvalidArgument for another kind and NumericalError naming a point where the null
/// is degenerate.
std::vector<arma::vec> robust_null_critical_values(const LocalPolynomial& model,
                                                   const arma::mat& X_eval, VarianceKind kind,
                                                   double trace_L,
                                                   const std::vector<const arma::mat*>& smoothers,
                                                   double level = 0.95);

/// Per-observation variance weights omega_i for the given kind (n), from the model's residuals
/// and leverages; for cr1 use cluster_variance instead. With `needed` (a 0/1 flag per training
/// row), hc0, hc2 and hc3 use only the flagged rows' own fits (the rows with a non-zero weight
/// in the smoother whose variance is wanted) and give omega_i = 0 elsewhere, so a training row
/// outside every window whose own fit does not exist (too few neighbours under a compact
/// kernel) or has leverage 1 does not make the variance undefined; a flagged such row is
/// still an error naming it.
arma::vec variance_omega(const LocalPolynomial& model, VarianceKind kind, double sigma2,
                         double trace_L, arma::uword output, const arma::uvec* needed = nullptr);

/// Var of W * y for each row of W (m x n) with the cluster-robust CR1 formula.
arma::vec cluster_variance(const arma::mat& W, const arma::vec& resid,
                           const std::vector<long long>& cluster, double trace_L);

/// Trade-off curves over a bandwidth grid for one local polynomial degree: columns
/// (bandwidth, integrated bias^2, integrated variance, integrated MSE, CV, GCV, tr L), where the
/// integrals are means over the eval points, the bias uses one pilot (degree q, bandwidth
/// `pilot_bandwidth`, 0 = rule of thumb x 2) fixed across the grid and the variance uses `kind`
/// (homoskedastic sigma^2 / HC residuals of each fit).
arma::mat tradeoff_curve(const arma::mat& X, const arma::vec& y, const arma::vec& bandwidths,
                         const LocalFitOptions& fit_options, const arma::mat& X_eval,
                         VarianceKind kind, int pilot_degree, double pilot_bandwidth);

struct MonteCarloSummary {
  arma::vec bias, variance, mse;  ///< pointwise over the eval points (m)
  double integrated_bias2 = 0, integrated_variance = 0, integrated_mse = 0;  ///< means over points
};

/// Empirical bias/variance/MSE of a linear smoother W (m x n) over R replications Y_sim (n x R)
/// against the truth at the eval points (m). Variance with divisor R (the Monte Carlo MSE
/// decomposes exactly: mse = bias^2 + variance).
MonteCarloSummary monte_carlo_summary(const arma::mat& W, const arma::mat& Y_sim,
                                      const arma::vec& truth);

/// Same from predictions P (m x R) directly.
MonteCarloSummary monte_carlo_from_predictions(const arma::mat& P, const arma::vec& truth);

/// OLS fit of log(mse) on log(n): returns (slope, se of slope, intercept).
arma::vec loglog_slope(const arma::vec& n, const arma::vec& mse);

}  // namespace attnreg

namespace attnreg {

enum class BootstrapType { wild_rademacher = 0, wild_mammen, pairs };

/// "rademacher"/"wild", "mammen", "pairs". Throws InvalidArgument naming `arg`.
BootstrapType bootstrap_type_from_name(const std::string& name, const std::string& arg = "type");

/// n x B wild-bootstrap multipliers v (E v = 0, E v^2 = 1), column by column from `rng`:
/// Rademacher (+-1 with probability 1/2) or Mammen's (1993) two-point distribution
/// (-(sqrt5-1)/2 with probability (sqrt5+1)/(2 sqrt5), (sqrt5+1)/2 otherwise, E v^3 = 1).
arma::mat wild_multipliers(bool mammen, arma::uword n, arma::uword B, std::mt19937_64& rng);

struct BootstrapOptions {
  BootstrapType type = BootstrapType::wild_rademacher;
  int replications = 999;
  double level = 0.95;
  unsigned long long seed = 1;
  bool bias_corrected = false;  ///< wild only: resample the RBC estimator (weights l - b)
  VarianceKind kind = VarianceKind::hc3;  ///< scale of the sup-t statistic
};

struct BootstrapBands {
  arma::vec center;            ///< fit (or bias-corrected fit) at the eval points
  arma::vec se;                ///< analytic se used to studentise (kind)
  arma::vec low, high;         ///< pointwise basic-bootstrap interval
  arma::vec uniform_low, uniform_high;  ///< simultaneous sup-t band: center -+ c se
  double critical_value = 0;   ///< c: the level-quantile of max_x |m*(x) - m(x)| / se(x)
  arma::mat draws;             ///< m x B bootstrap fits
};

/// Pointwise and simultaneous (sup-t) bootstrap bands for a fitted model at X_eval.
/// Wild: y*_i = m(x_i) + e_i v_i with Rademacher or Mammen v (E v = 0, E v^2 = 1), so
/// m*(x) = l(x)'y* (linear, no refit); pairs: rows drawn with replacement and refitted with the
/// same bandwidths. Pointwise: [2 m - q_{1-a/2}(m*), 2 m - q_{a/2}(m*)] (basic bootstrap).
/// Uniform: m -+ c se with c the level-quantile of sup_x |m*(x) - m(x)| / se(x) (se the
/// analytic standard error of `kind`; Hall 1993, Neumann & Polzehl 1998 for wild bands).
/// Reproducible: draws come from one mt19937_64 seeded with `seed` on the calling thread.
/// The bands cover E m(x) (variability bands) unless bias_corrected, which centres and
/// resamples the RBC estimator. One output column (`output`).
BootstrapBands bootstrap_bands(const LocalPolynomial& model, const arma::mat& X_eval,
                               const BootstrapOptions& opt, arma::uword output = 0);

}  // namespace attnreg
