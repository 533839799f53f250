// attnreg: local polynomial kernel regression: local constant (Nadaraya-Watson), local linear
// (with the ridge of Local Linear Attention) and local polynomial of degree 2 or 3.
//
// Layout: one observation per ROW. X is n x d (continuous and categorical columns, see
// kernel.hpp for var_types and codes), Y is n x k (k >= 1 outputs: the "values" of attention).
//
// Estimator (core/README.md, Conventions; Zuo et al. 2025, arXiv:2510.01450, eqs. 6-8). For a query
// x let w_i(x) be the product-kernel weight of training row i (kernel_pairs.hpp) and z_i =
// basis(x_i - x) over the continuous columns: (x_i - x) for local linear (degree 1), ((x_i - x),
// (x_i - x)^2, ..., (x_i - x)^p) for degree p >= 2 with one continuous column, for degree 2 with d
// > 1 continuous columns the d linear terms (x_ia - x_a) followed by the products (x_ia - x_a)(x_ib
// - x_b), a <= b, in the order (1,1), (1,2), ..., (1,d), (2,2), ..., (d,d), and nothing for degree
// 0. The fit solves
//     (a, B) = argmin sum_i w_i ||y_i - a - B z_i||^2 + lambda * omega * ||B||_F^2,
// omega = sum_i w_i, i.e. the DESIGN's normalised-weight objective multiplied by omega. With the
// statistics of eq. 7 but the ridge scaled by the weight sum,
//     A = [omega  mu'; mu  Sigma],  Sigma = sum_i w_i z_i z_i' + lambda * omega * I,
//     T = sum_i w_i [1; z_i] y_i',
// the fit is m(x) = a = e1' A^{-1} T and the equivalent kernel (attention weights) is
//     l_i(x) = w_i e1' A^{-1} [1; z_i],
// which is eq. 8's s_ij = w_ij (1 - z_ij' rho) / (omega - mu' rho), rho = Sigma^{-1} mu. Because
// the ridge scales with omega, any common factor in the weights cancels (Algorithm 1's running
// max stays exact). Categorical columns enter only through w_i (as R np does). The gradient
// (marginal effects) is B: d m / d x_j for each continuous column j. Degree 0 is NW:
// l_i = w_i / omega, non-negative, summing to 1. For every degree the l_i sum to 1.
//
// Numerics: z is formed in bandwidth units (z_j / h_j, with the ridge rescaled to match so the
// estimator is unchanged), A is equilibrated by its diagonal and factored by Cholesky. A query
// is rejected with NumericalError when no training point has a positive weight, when its
// largest weight is below KernelSpace::kTinyWeight (all Gaussian weights underflow: the
// nearest training point is more than ~36 bandwidths away), or when the equilibrated local
// design has a Cholesky pivot below kSingularPivot (fewer distinct neighbours than
// coefficients, a constant column, ...). Nothing returns NaN silently.
//
// Leave-one-out: at training row i the fit without row i uses the sums without i; with the
// omega-scaled ridge leaving i out also lowers omega and so the penalty, which is included, so
// loo_fitted() is the exact refit for every lambda. For lambda = 0 it equals the classical
// shortcut (m(x_i) - L_ii y_i) / (1 - L_ii), L_ii = l_i(x_i) (the leverage).
//
// Ties (distinct_rows.hpp): the training statistics (fitted values, leverages, LOO fits,
// tr L'L) run over the G distinct rows of X. Group g (rows i in g, observation weights a_i,
// W_g = sum a_i, S_g = sum a_i y_i) enters the kernel sums as one row of weight W_g and
// response S_g / W_g, which gives the same moments (A, T) at every query. With A_x, T_x the
// moments without group g and u_g the kernel weight of one unit of observation weight at
// distance 0 (1 times the categorical kernels' diagonal):
//   full fit at x_g:  A = A_x + u_g W_g e1 e1',  T = T_x + u_g S_g e1 (same for all i in g);
//   leverage of i:    L_ii = u_g a_i c_0, c = A^{-1} e1, i.e. the group's sum times a_i / W_g;
//   LOO at row i:     A_{-i} = A_x + u_g (W_g - a_i) e1 e1',  T_{-i} = T_x + u_g (S_g - a_i y_i) e1
//                     (only row i leaves; the other rows of its group stay in the fit);
//   tr L'L = sum_g c_g sum_h (sum_{j in h} a_j^2 / W_h^2) l_h(x_g)^2, l_h the grouped weight.
// Every statistic costs O(G^2) kernel evaluations plus O(n) small solves.
#pragma once

#include "attnreg/base/arma.hpp"
#include "attnreg/base/error.hpp"
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "attnreg/kernels/distinct_rows.hpp"
#include "attnreg/base/option_spec.hpp"

#include "attnreg/kernels/kernel.hpp"
#include "attnreg/kernels/kernel_pairs.hpp"
#include "attnreg/solve/local_solve.hpp"

namespace attnreg {

struct LocalFitOptions {
  int degree = spec::local_fit::degree;  ///< 0 = local constant (NW), 1 = local linear, 2 = local
                                 ///< quadratic (any number of continuous columns), 3 = local
                                 ///< cubic (exactly one continuous column)
  /// Kernels, column types, pair algorithm, truncation and threads (kernel_pairs.hpp).
  KernelSpec kernel;
  double ridge = spec::local_fit::ridge;  ///< lambda >= 0 on the slope terms, scaled by omega (Zuo et al. 2025, eq. 6)
  /// true: fit() also computes fitted values, leverages and LOO fits (and throws when a fitted
  /// value does not exist). false: they are computed on first use of fitted(), leverage(),
  /// loo_fitted(), effective_df() or trace_LtL() and cached, so fit() does no O(n^2) work.
  bool compute_fitted = spec::local_fit::compute_fitted;
};

/// Per-query outcome of a local fit.
enum class QueryStatus : std::uint8_t {
  ok = 0,
  no_weight = 1,  ///< every kernel weight is exactly 0 (no training point in the support)
  underflow = 2,  ///< the largest weight is below KernelSpace::kTinyWeight
  singular = 3    ///< the local design is (numerically) singular
};

/// What local_polynomial_eval computes.
struct LocalEvalRequest {
  bool fit = true;          ///< m(x): m x k
  bool gradient = false;    ///< B: m x d x k (NaN in categorical columns); degree >= 1
  bool coefficients = false;///< A^{-1} e1 per query (q x m), the equivalent-kernel coefficients
  bool loo = false;         ///< leverages and leave-one-out fits (queries from training_queries())
  /// The raw local moments per query before the solve (partials.hpp): A (upper triangle of the
  /// q x q row-major matrix, without the ridge), T (q x k row-major) and the largest weight.
  /// When PreparedQueries::self names a query's own training row, that row is excluded.
  bool moments = false;
  /// The local coefficients A^{-1} T per query (m x q x k, in the basis of bandwidth units:
  /// the coefficient of z^e is h^e times the data-unit one); local_polynomial.hpp turns them
  /// into derivatives.
  bool solution = false;
};

/// Results of local_polynomial_eval. A failed query has status != ok and NaN in its rows; the
/// caller decides whether to throw (LocalPolynomial always does) or, as bandwidth selection
/// does, to score the failure.
struct LocalEvalResult {
  arma::mat fit;                     ///< m x k
  arma::cube gradient;               ///< m x d x k
  arma::mat coefficients;            ///< q x m (q = 1 + number of basis terms)
  arma::vec leverage;                ///< m: L_ii = l_i(x_i)
  arma::mat loo;                     ///< m x k: exact leave-one-out fits
  std::vector<QueryStatus> status;   ///< m: status of the full fit
  std::vector<QueryStatus> loo_status;  ///< m: status of the leave-one-out fit
  arma::mat moment_A;                ///< (q*q) x m (request.moments; lower triangle 0)
  arma::mat moment_T;                ///< (q*k) x m
  arma::vec moment_max;              ///< m: largest weight seen (0 = none positive)
  arma::cube solution;               ///< m x q x k (request.solution; NaN where failed)
};

/// Static description of a local polynomial fit over a KernelSpace (degree and ridge, and the
/// penalty scaling of each basis term in bandwidth units).
struct LocalPolySpec {
  int degree = 1;
  double ridge = 0.0;
  /// Number of basis terms (q - 1) for this degree and space.
  static std::size_t n_terms(int degree, std::size_t n_continuous) {
    if (degree == 0) return 0;
    if (degree == 1) return n_continuous;
    if (degree == 2 && n_continuous > 1) return n_continuous + n_continuous * (n_continuous + 1) / 2;
    return static_cast<std::size_t>(degree);
  }
};

/// The one pass over pairs behind every LocalPolynomial method: local moments for each query
/// (and, with request.loo, the moments without the query's own row), then one small solve per
/// query. Y_internal is the n x k response in the space's internal order
/// (Y_internal.row(k) = Y.row(space.order()[k])). Reusable by bandwidth selection: statuses are
/// reported, not thrown.
LocalEvalResult local_polynomial_eval(const KernelSpace& space, const arma::mat& Y_internal,
                                      const LocalPolySpec& spec, const PreparedQueries& Q,
                                      const LocalEvalRequest& request, int n_threads);

/// Everything a fitted LocalPolynomial needs, as plain values (no arma::uword), so the faces
/// can save and restore a model (pickle, R lists).
struct LocalFitState {
  int degree = 1;
  std::string kernel = "gaussian";
  std::string var_types;
  std::string unordered_kernel = "aitchison_aitken";
  std::string ordered_kernel = "li_racine";
  double ridge = 0.0;
  std::string algorithm = "auto";
  double truncation = 1e-16;
  arma::mat X;              ///< n x d training rows
  arma::mat Y;              ///< n x k responses
  arma::vec bandwidth;      ///< d
  arma::vec sample_weight;  ///< n, or empty
  arma::mat fitted;         ///< n x k (empty when compute_fitted was false)
  arma::vec leverage;       ///< n
  arma::mat loo;            ///< n x k
  arma::vec loo_status;     ///< n, QueryStatus codes as doubles
};

class LocalPolynomial {
 public:
  explicit LocalPolynomial(LocalFitOptions options = {}) : opt_(std::move(options)) {}

  /// Fit on X (n x d) and Y (n x k) with bandwidths (length d, or 1 when every column is
  /// continuous) and optional sample weights (length n, >= 0). Throws InvalidArgument for bad
  /// input (naming the argument): NaN/Inf, shapes, bandwidths out of range, fewer rows than
  /// local coefficients or a constant continuous column when ridge = 0 (a ridge keeps both
  /// fits defined). With compute_fitted, also computes fitted values, leverages and LOO fits
  /// and throws NumericalError when a fitted value cannot be computed (a failed LOO fit is
  /// only reported by loo_fitted()).
  LocalPolynomial& fit(const arma::mat& X, const arma::mat& Y, const arma::vec& bandwidth,
                       const arma::vec& sample_weight = arma::vec());

  /// Predictions at new rows (m x d) -> m x k.
  arma::mat predict(const arma::mat& X_new) const;
  /// Equivalent-kernel (attention) weights, m x n: predict(X_new) == attention_weights(X_new) * Y.
  /// Materialises m x n doubles: only call it when you need the weights themselves.
  arma::mat attention_weights(const arma::mat& X_new) const;
  /// The attention weights summed over each group of tied training rows, m x n_distinct()
  /// (columns in the order of distinct_rows(training_x())): computed over the distinct rows
  /// with their total observation weights (the grouped space of "Ties" above), so it costs
  /// m x n_distinct() instead of m x n. Without ties it is attention_weights(X_new).
  arma::mat distinct_attention_weights(const arma::mat& X_new) const;
  /// Gradient (marginal effects) d m / d x_j at new rows: m x d x k (slice c = output c).
  /// Categorical columns have no derivative and hold NaN. Needs degree >= 1.
  arma::cube gradient(const arma::mat& X_new) const;

  /// Fitted values at the training rows (n x k); requires compute_fitted.
  const arma::mat& fitted() const;
  arma::mat residuals() const { return y_ - fitted(); }
  /// Leverages L_ii = l_i(x_i), n.
  const arma::vec& leverage() const;
  /// fitted() and leverage() throw NumericalError when the fit at some training row does not
  /// exist (e.g. too few neighbours under a compact kernel). For callers that need only some
  /// rows (the variance of a fit at a point needs the rows inside its window): the status of
  /// each training row's own fit (QueryStatus::ok where it exists) and the fitted values and
  /// leverages without that check (NaN at the rows whose fit does not exist).
  const std::vector<QueryStatus>& training_fit_status() const;
  const arma::mat& fitted_unchecked() const;
  const arma::vec& leverage_unchecked() const;
  /// tr(L'L) = sum_ij L_ij^2 over the training rows (computed on first use over the distinct
  /// rows, then cached).
  double trace_LtL() const;
  /// Number of distinct training rows (G <= n).
  std::size_t n_distinct() const { return groups_.X.n_rows; }
  /// How many times the training statistics (fitted values, leverages, LOO fits) have been
  /// computed for the current fit: 0 after a lazy fit until one of them is used, then 1.
  int statistics_evaluations() const { return stats_evaluations_; }
  /// tr(L) = sum_i L_ii, the effective degrees of freedom.
  double effective_df() const { return arma::accu(leverage()); }
  /// Exact leave-one-out fits m_{-i}(x_i), n x k. Throws NumericalError naming the first row
  /// whose leave-one-out fit does not exist (e.g. an isolated point under a compact kernel).
  arma::mat loo_fitted() const;
  /// Leave-one-out cross-validation score at this fit's bandwidth, the criterion that cv_ls
  /// minimises (bandwidth_select.hpp): sum_i w_i ||y_i - m_{-i}(x_i)||^2 / (k sum_i w_i) with the
  /// sample weights w_i (1 without weights; rows of weight 0 do not count) over the k outputs.
  /// +inf when some row of positive weight has no leave-one-out fit.
  double cv_score() const;

  const LocalFitOptions& options() const { return opt_; }
  const KernelSpace& space() const { return space_; }
  const arma::vec& bandwidth() const { return space_.bandwidth(); }
  const arma::mat& training_x() const { return x_; }
  const arma::mat& training_y() const { return y_; }
  /// The observation weights given to fit() (n), or empty when none were.
  const arma::vec& sample_weight() const { return sample_weight_; }
  std::size_t n_obs() const { return x_.n_rows; }
  std::size_t n_outputs() const { return y_.n_cols; }
  bool is_fitted() const { return fitted_flag_; }

  LocalFitState state() const;
  static LocalPolynomial from_state(const LocalFitState& state);

 private:
  void require_fitted(const char* what) const;
  LocalEvalResult evaluate(const arma::mat& X_new, const LocalEvalRequest& req,
                           const std::string& arg) const;
  void ensure_statistics() const;
  void compute_statistics() const;
  void mark_failed_training_fits() const;
  void check_training_fits() const;
  const KernelSpace& grouped_space() const { return groups_.has_ties() ? gspace_ : space_; }

  LocalFitOptions opt_;
  KernelSpace space_;
  arma::mat x_, y_, y_internal_;
  arma::vec sample_weight_;
  DistinctRows groups_;
  KernelSpace gspace_;       ///< over the distinct rows (only built when there are ties)
  arma::mat gy_internal_;    ///< group responses S_g / W_g in gspace_'s internal order
  arma::vec gweight_;        ///< W_g
  arma::mat gsum_;           ///< S_g (G x k)
  // Training statistics, computed in fit() (compute_fitted) or on first use.
  mutable arma::mat fitted_, loo_;
  mutable arma::vec leverage_;
  mutable std::vector<QueryStatus> loo_status_, fit_status_;
  mutable double trace_ltl_ = 0.0;
  mutable bool have_trace_ltl_ = false;
  mutable int stats_evaluations_ = 0;
  std::shared_ptr<std::mutex> stats_mutex_ = std::make_shared<std::mutex>();
  bool fitted_flag_ = false;
  mutable bool have_fitted_ = false;
};

/// The kernel weights of `model`'s product kernel (its kernels and column types) over rows X with
/// observation weights `weights` (empty: 1) at bandwidths `bandwidth`, as a fitted local-constant
/// model: its attention weights at x are K(x_i - x) w_i scaled to sum to one (the factor cancels
/// in any weighted least squares on them). keep_truncation: the Gaussian's truncation rule of
/// `model` (the windows of its own fits); false: every positive weight.
LocalPolynomial kernel_weight_model(const LocalPolynomial& model, const arma::mat& X,
                                    const arma::vec& bandwidth, const arma::vec& weights,
                                    bool keep_truncation);

/// Penalty scale of each basis term of `degree` for the continuous-column bandwidths h (in
/// column order): the omega-scaled ridge in data units expressed in bandwidth units.
std::vector<double> local_penalty_scales(const arma::vec& h_continuous, int degree);

/// The per-query solve of local_polynomial_eval on given moments (A upper triangle of the
/// q x q row-major matrix, T q x k row-major, one column per query; row_max the largest weight
/// per query): equilibrated Cholesky with the omega-scaled ridge lambda * omega * penalty.
/// Writes fit (m x k, NaN where failed) and status.
void local_polynomial_solve(const arma::mat& A, const arma::mat& T, const arma::vec& row_max,
                            std::size_t k, double ridge, const std::vector<double>& penalty,
                            arma::mat& fit, std::vector<QueryStatus>& status);

/// throw_on_failed_query without a KernelSpace: the kernel of the continuous columns and the
/// number of continuous and categorical columns are all the message needs.
void throw_on_failed_query(const std::vector<QueryStatus>& status, const Kernel& kernel,
                           std::size_t n_continuous, std::size_t n_categorical, int degree,
                           double ridge, const std::string& arg, bool leave_one_out);

/// Throws NumericalError describing the first failed query (status != ok) of a result, naming
/// `arg` (the argument whose rows were the queries) and suggesting the fix. No-op when all ok.
void throw_on_failed_query(const std::vector<QueryStatus>& status, const KernelSpace& space,
                           int degree, double ridge, const std::string& arg, bool leave_one_out);

}  // namespace attnreg
