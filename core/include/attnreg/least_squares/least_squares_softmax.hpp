// attnreg: the attention regression of Goulet Coulombe 2025, arXiv:2504.09663, eq. 28 -- least
// squares in which the weights on the training responses are a softmax of a learned bilinear
// similarity:
//
//   yhat_i = sum_{j != i} a_ij y_j,   a_ij = exp(s_ij) / sum_{l != i} exp(s_il),
//   s_ij = d_i' Omega d_j,   Omega = W W'  (W: q x rank, so Omega is PSD of rank <= rank),
//
// with d = [1, z] (or z), z the standardised regressors. W minimises the leave-self-out mean
// squared error (1/(n k)) sum_i ||y_i - yhat_i||^2; the diagonal is masked because otherwise
// Omega -> infinity lets every row attend to itself and the fit is trivially perfect (DESIGN
// section 2). Keys and queries share W (W_Q = W_K, as Goulet Coulombe 2025, section 2.4).
//
// Gradient: with k_i = W'd_i (so s_ij = k_i'k_j) and G_ij = dLoss/ds_ij
//   = (2/(n k)) a_ij (y_j - yhat_i)'(yhat_i - y_i),
// dLoss/dK = G K + G' K and dLoss/dW = D' (dLoss/dK). The n x n matrices are never held: rows are
// processed in blocks (memory O(block n)), and per-block partial gradients are summed in block
// order, so results do not depend on the thread count. Cost O(n^2 (rank + k)) per evaluation.
//
// The fit runs L-BFGS (lbfgs.hpp) from several seeded random starts and keeps the best.
// Prediction at new rows uses every training row (no mask); attention_weights returns those
// softmax rows (non-negative, summing to 1).
#pragma once

#include "attnreg/base/arma.hpp"
#include <cstdint>
#include <string>

namespace attnreg {

struct AttentionRegressionOptions {
  int rank = 2;                ///< columns of W (rank of Omega), >= 1
  bool fit_intercept = true;   ///< include the constant 1 in d (a bias on each key)
  bool standardize = true;     ///< z = (x - mean) / sd (sd with n - 1; constant columns kept as is)
  int n_starts = 4;            ///< random starts (>= 1), the best objective wins
  std::uint64_t seed = 0;      ///< starts use seeds seed, seed + 1, ...
  int max_iter = 300;          ///< L-BFGS iterations per start
  double tol = 1e-6;           ///< L-BFGS gradient tolerance (relative)
  double init_scale = 1.0;     ///< spread of the random starting scores
  int n_threads = 0;
};

/// Leave-self-out objective and (optionally) its gradient for a design D (n x q, already
/// standardised and with the constant if any), responses Y (n x k) and W (q x rank). Exposed
/// for testing the analytic gradient.
double attention_regression_objective(const arma::mat& D, const arma::mat& Y, const arma::mat& W,
                                      arma::mat* grad, int n_threads = 0);

class AttentionRegression {
 public:
  explicit AttentionRegression(AttentionRegressionOptions options = {}) : opt_(options) {}

  AttentionRegression& fit(const arma::mat& X, const arma::mat& Y);
  arma::mat predict(const arma::mat& X_new) const;
  /// Softmax weights (m x n) over the training rows: predict(X_new) == A * Y.
  arma::mat attention_weights(const arma::mat& X_new) const;
  /// The leave-self-out predictions the objective is built from (n x k).
  arma::mat loo_predictions() const;
  /// Omega over the raw design [1, x] (or x): scores are d(x)' Omega d(x_j) (q x q).
  arma::mat embedding() const;
  /// W over the raw design (q x rank), Omega = W W'.
  arma::mat encoder() const;

  double objective() const { return objective_; }                ///< best leave-self-out MSE
  const arma::vec& start_objectives() const { return start_obj_; }
  int n_evals() const { return n_evals_; }                         ///< over all starts
  int iterations() const { return iterations_; }                   ///< of the best start
  bool converged() const { return converged_; }                    ///< of the best start
  const std::string& message() const { return message_; }
  bool is_fitted() const { return fitted_flag_; }
  arma::uword n_obs() const { return Dz_.n_rows; }
  const AttentionRegressionOptions& options() const { return opt_; }

  /// Saved state: the standardisation, W in standardised coordinates and the training data.
  struct State {
    arma::rowvec mean, sd;
    arma::mat W, Dz, Y;
    double objective = 0;
  };
  State state() const;
  static AttentionRegression from_state(const AttentionRegressionOptions& options, const State& s);

 private:
  arma::mat standardized_design(const arma::mat& X) const;
  void require_fitted(const char* what) const;
  void check_new_x(const arma::mat& X_new, const char* what) const;
  /// Raw-design transformation T with d_z = T d.
  arma::mat transform() const;

  AttentionRegressionOptions opt_;
  arma::rowvec mean_, sd_;
  arma::mat W_;   ///< q x rank, standardised coordinates
  arma::mat Dz_;  ///< n x q training design (standardised)
  arma::mat Y_;   ///< n x k
  double objective_ = 0.0;
  arma::vec start_obj_;
  int n_evals_ = 0, iterations_ = 0;
  bool converged_ = false;
  std::string message_;
  bool fitted_flag_ = false;
};

}  // namespace attnreg
