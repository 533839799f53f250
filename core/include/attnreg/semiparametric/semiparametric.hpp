// attnreg: semiparametric regression -- the partially linear model and the smooth-coefficient
// model -- composed from the local fit (local_fit.hpp), its bandwidth selectors
// (bandwidth_select.hpp, local_polynomial.hpp) and OLS (least_squares.hpp).
//
// Partially linear model (Robinson 1988, Econometrica 56(4), 931-954):
//     y = X' beta + g(Z) + e,   E[e | X, Z] = 0.
// Taking E[. | Z] and subtracting gives the "double residual" regression
//     y - E[y|Z] = (X - E[X|Z])' beta + e,
// so beta is OLS (no intercept: a constant is absorbed by g) of e_y = y - m_y(Z) on
// e_X = X - m_X(Z), with m_y, m_Xj kernel regressions on Z (local constant by default, as R np's
// npplreg; local linear on request), each with its own data-driven bandwidths (np's default:
// least-squares cross-validation per conditional mean). Fitted values and predictions are
// m_y(z) + (x - m_X(z))' beta, as npplreg's. Covariance of beta: "nonrobust" is npplreg's,
// sigma^2 (e_X' e_X)^{-1} with sigma^2 = RSS / (n - k - d_Z); HC0..HC3 are White's sandwich on
// the residual regression (least_squares.hpp).
//
// Smooth-coefficient model (Cai, Fan and Yao 2000, JASA 95, 941-956; Li and Racine 2010,
// Econometric Theory 26, 1607-1637; R np's npscoef):
//     y = W' beta(Z) + e,   W = (1, X) (the intercept column unless fit_intercept = false).
// At z, beta(z) = argmin_b sum_i K_h(Z_i, z) (y_i - W_i' b)^2 = M_WW(z)^{-1} M_Wy(z), the
// kernel-weighted moments M_WW = sum_i K W_i W_i', M_Wy = sum_i K W_i y_i -- the local-constant
// (degree 0) fit of the responses W_a W_b and W_a y on Z (local_polynomial_eval), whose ratio
// does not depend on the weights' common scale -- then one small equilibrated Cholesky solve
// (local_solve::spd_solve). Leave-one-out: the same with row i's moments removed (the local fit's
// exact leave-one-out sums), so CV(h) = (1/n) sum_i (y_i - W_i' beta_{-i}(Z_i))^2 exactly. The
// sums run over the distinct rows of Z (ties grouped as in local_fit.hpp), so discrete or
// rounded Z (years of experience, ...) costs O(G^2), G distinct rows, not O(n^2).
#pragma once

#include <string>
#include <vector>

#include "attnreg/base/arma.hpp"
#include "attnreg/bandwidth/bandwidth_select.hpp"
#include "attnreg/kernels/kernel.hpp"
#include "attnreg/least_squares/least_squares.hpp"
#include "attnreg/solve/local_fit.hpp"

namespace attnreg {

struct PartiallyLinearOptions {
  /// The kernel over Z (var_types: of Z), passed whole to every conditional mean's fit and
  /// bandwidth search.
  KernelSpec kernel;
  int degree = 0;  ///< conditional means: 0 local constant (np's default), 1 local linear
  BandwidthMethod method = BandwidthMethod::cv_ls;  ///< selector per conditional mean
  int n_starts = 3;
};

class PartiallyLinear {
 public:
  explicit PartiallyLinear(PartiallyLinearOptions options = {}) : opt_(std::move(options)) {}

  /// Fit on X (n x k, the linear part), y (n) and Z (n x d_Z, the nonparametric part). bandwidth:
  /// (1 + k) x d_Z, row 0 for E[y|Z] and row j for E[X_j|Z]; empty = select each row with
  /// opt.method. Throws InvalidArgument naming the argument: shapes, NaN/Inf, a column shared by
  /// X and Z, a constant column of X (the intercept is part of g), a column of X that is (close
  /// to) a function of Z (its residual vanishes: beta_j is not identified).
  PartiallyLinear& fit(const arma::mat& X, const arma::vec& y, const arma::mat& Z,
                       const arma::mat& bandwidth = arma::mat());

  const arma::vec& coefficients() const { return beta_; }
  /// Covariance of beta (k x k): Classical = npplreg's; HC0..HC3 the sandwich.
  arma::mat covariance(CovType type = CovType::HC3) const;
  arma::vec std_errors(CovType type = CovType::HC3) const {
    return arma::sqrt(covariance(type).diag());
  }
  /// Bandwidths, (1 + k) x d_Z (row 0: E[y|Z], row j: E[X_j|Z]).
  const arma::mat& bandwidth() const { return bw_; }
  /// Selector objective per conditional mean (1 + k; NaN when the bandwidths were given).
  const arma::vec& objective() const { return objective_; }
  /// Selection results (empty when the bandwidths were given).
  const std::vector<BandwidthSelectResult>& selection() const { return selection_; }
  /// m_y(z) + (x - m_X(z))' beta at new rows.
  arma::vec predict(const arma::mat& X_new, const arma::mat& Z_new) const;
  /// The nonparametric part g(z) = m_y(z) - m_X(z)' beta at new rows of Z.
  arma::vec g(const arma::mat& Z_new) const;
  const arma::vec& fitted() const { return fitted_; }
  arma::vec residuals() const { return y_ - fitted_; }
  /// The residuals of the conditional means: e_y (n) and e_X (n x k).
  const arma::vec& y_residuals() const { return ey_; }
  const arma::mat& x_residuals() const { return ex_; }
  /// npplreg's sigma^2 = RSS / (n - k - d_Z) and R^2 = (sum (y - ybar)(f - ybar))^2 /
  /// (sum (y - ybar)^2 sum (f - ybar)^2), the squared correlation of y and the fit f about the
  /// mean of y (np's RSQfunc; NaN when y or f is constant).
  double sigma2() const;
  double r_squared() const;
  std::size_t n_obs() const { return y_.n_elem; }
  bool is_fitted() const { return fitted_flag_; }
  const PartiallyLinearOptions& options() const { return opt_; }

 private:
  void require_fitted(const char* what) const;
  PartiallyLinearOptions opt_;
  std::vector<LocalPolynomial> means_;  ///< E[y|Z], E[X_1|Z], ...
  std::vector<BandwidthSelectResult> selection_;
  arma::mat bw_, ex_, X_, Z_;
  arma::vec objective_, beta_, ey_, y_, fitted_;
  OLS ols_{OLSOptions{false}};
  bool fitted_flag_ = false;
};

struct SmoothCoefficientOptions {
  KernelSpec kernel;  ///< the kernel over Z (var_types: of Z)
  bool fit_intercept = true;  ///< W = (1, X) as npscoef; false: W = X
};

class SmoothCoefficient {
 public:
  explicit SmoothCoefficient(SmoothCoefficientOptions options = {}) : opt_(std::move(options)) {}

  /// Fit on X (n x p), y (n), Z (n x d_Z) with bandwidths over Z (length d_Z, or 1 when Z is all
  /// continuous). Throws InvalidArgument naming the argument for bad input, NumericalError when
  /// a fitted coefficient does not exist (no weight or a singular local design M_WW(z)).
  SmoothCoefficient& fit(const arma::mat& X, const arma::vec& y, const arma::mat& Z,
                         const arma::vec& bandwidth);

  /// beta(z) at new rows of Z: m x q (q = p + 1 with the intercept first, else p).
  arma::mat coefficients(const arma::mat& Z_new) const;
  /// Standard errors of beta(z) at new rows of Z (m x q, as coefficients()). beta(z) = A(z) y
  /// with A(z) = M_WW(z)^{-1} [K_h(Z_i, z) W_i]_i is linear in y, so its covariance given
  /// (X, Z) is A(z) diag(sigma_i^2) A(z)'; with the residuals e_i = y_i - W_i' beta(Z_i) for
  /// sigma_i^2 this is the sandwich
  ///     M_WW(z)^{-1} [sum_i K_h(Z_i, z)^2 e_i^2 W_i W_i'] M_WW(z)^{-1}
  /// (Eicker-Huber-White with kernel weights; Cai, Fan and Yao 2000, §2.3; Fan and Zhang 2008,
  /// Statistics and Its Interface 1, 179-195, eq. 2.6), the square roots of its diagonal.
  /// Throws as coefficients().
  arma::mat coefficient_se(const arma::mat& Z_new) const;
  /// W(x)' beta(z) at new rows.
  arma::vec predict(const arma::mat& X_new, const arma::mat& Z_new) const;
  const arma::vec& fitted() const { return fitted_; }
  arma::vec residuals() const { return y_ - fitted_; }
  /// Exact leave-one-out fits W_i' beta_{-i}(Z_i); throws NumericalError naming the first row
  /// without one.
  arma::vec loo_fitted() const;
  /// (1/n) sum (y_i - loo_i)^2, +inf when some leave-one-out fit does not exist.
  double cv_score() const;
  const arma::vec& bandwidth() const { return space_.bandwidth(); }
  std::size_t n_coefficients() const { return q_; }
  bool is_fitted() const { return fitted_flag_; }
  const SmoothCoefficientOptions& options() const { return opt_; }

 private:
  void require_fitted(const char* what) const;
  arma::mat design(const arma::mat& X, const char* arg) const;
  /// Solve beta per query from the degree-0 moment fits (rows = queries): m x q, status.
  arma::mat solve(const arma::mat& M, std::vector<QueryStatus>& status) const;
  SmoothCoefficientOptions opt_;
  KernelSpace space_;    ///< over Z (validation, bandwidths)
  KernelSpace gspace_;   ///< over the distinct rows of Z, weighted by their counts
  arma::mat W_, gresp_internal_;
  arma::vec y_, fitted_, loo_;
  std::vector<QueryStatus> loo_status_;
  std::size_t q_ = 0, p_ = 0;
  bool fitted_flag_ = false;
};

/// CV(h) of the smooth-coefficient model (leave-one-out squared error) at `bandwidth`; +inf where
/// some leave-one-out fit does not exist.
double smooth_coefficient_cv(const arma::mat& X, const arma::vec& y, const arma::mat& Z,
                             const arma::vec& bandwidth, const SmoothCoefficientOptions& opt);

/// Least-squares cross-validated bandwidths over Z for the smooth-coefficient model (the search of
/// local_polynomial.hpp over the box of bandwidth_select.hpp for the columns of Z).
BandwidthSelectResult select_smooth_coefficient_bandwidth(const arma::mat& X, const arma::vec& y,
                                                          const arma::mat& Z,
                                                          const SmoothCoefficientOptions& opt,
                                                          int n_starts = 3, int grid_size = 30);

}  // namespace attnreg
