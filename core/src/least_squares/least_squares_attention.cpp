// OLS as attention: attention weights, the spectral factors (encoder, eigenvalues, factors,
// embedding) and the masked (causal) predictions; see attnreg/least_squares/least_squares.hpp.
#include "attnreg/least_squares/least_squares.hpp"

#include <mutex>
#include <string>

#include "attnreg/base/error.hpp"
#include "attnreg/solve/lapack.hpp"
#include "attnreg/least_squares/least_squares_masked.hpp"
#include "attnreg/detail/least_squares_internal.hpp"

namespace attnreg {


arma::mat OLS::attention_weights(const arma::mat& X_new) const {
  arma::mat out;
  attention_weights(X_new, out);
  return out;
}

void OLS::attention_weights(const arma::mat& X_new, arma::mat& out) const {
  check_new_x(X_new, "attention_weights");
  const arma::uword n = n_obs(), r = rank(), m = X_new.n_rows;
  out.set_size(m, n);
  if (r == 0) {
    out.zeros();
    return;
  }
  // a(x)' = m(x)' R^{-1} Q_1' with m(x) the scaled pivoted design row (eq. 7).
  const arma::mat Gt = solve_rt(pivoted_rows(design(X_new)).t());  // r x m
  bool cached = false;
  {
    std::lock_guard<std::mutex> lock(q1_cache_->mutex);
    cached = q1_cache_->ready;
  }
  if (cached || m >= 8) {
    // Q_1 (n x r) once, then a cache-blocked G Q_1' straight into the m x n result.
    lapack::gemm_nt_streamed(Gt.t(), q1(), out, 0.0, opt_.n_threads);
  } else {
    arma::mat B(n, m, arma::fill::zeros);
    B.rows(0, r - 1) = Gt;
    apply_q(B, false);
    out = B.t();
  }
  // Weighted: Q_1 factors W^{1/2} D, so G Q_1' = d(x)' (D'WD)^{-1} D' W^{1/2}; one more W^{1/2}.
  if (!st_.weights.is_empty()) out.each_row() %= arma::sqrt(st_.weights).t();
}

void OLS::spectral(arma::mat& Ur, arma::vec& s, arma::mat& Vr) const {
  const arma::uword r = rank();
  arma::mat Ru = arma::trimatu(st_.qr.submat(0, 0, r - 1, r - 1));
  for (arma::uword c = 0; c < r; ++c) Ru.col(c) *= st_.scale(static_cast<arma::uword>(st_.pivot(c)));
  if (!arma::svd(Ur, s, Vr, Ru)) throw NumericalError("OLS factors: SVD of R failed");
  // Deterministic signs: the largest entry of each eigenvector is positive.
  for (arma::uword c = 0; c < r; ++c) {
    if (Vr(arma::index_max(arma::abs(Vr.col(c))), c) < 0.0) {
      Vr.col(c) *= -1.0;
      Ur.col(c) *= -1.0;
    }
  }
}

arma::mat OLS::encoder() const {
  require_fitted("encoder");
  const arma::uword r = rank(), q = n_coef();
  arma::mat W(q, r, arma::fill::zeros);
  if (r == 0) return W;
  arma::mat Ur, Vr;
  arma::vec s;
  spectral(Ur, s, Vr);
  for (arma::uword c = 0; c < r; ++c) {
    W.row(static_cast<arma::uword>(st_.pivot(c))) = Vr.row(c) / s.t();
  }
  return W;
}

arma::vec OLS::eigenvalues() const {
  require_fitted("eigenvalues");
  if (rank() == 0) return arma::vec();
  arma::mat Ur, Vr;
  arma::vec s;
  spectral(Ur, s, Vr);
  return s % s;
}

arma::mat OLS::factors(const arma::mat& X_new) const {
  check_new_x(X_new, "factors");
  return design(X_new) * encoder();
}

arma::mat OLS::training_factors() const {
  require_fitted("training_factors");
  const arma::uword r = rank();
  if (r == 0) return arma::mat(n_obs(), 0);
  arma::mat Ur, Vr;
  arma::vec s;
  spectral(Ur, s, Vr);
  arma::mat F = q1() * Ur;
  if (!st_.weights.is_empty()) F.each_col() %= arma::sqrt(st_.weights);  // keys W D U Lambda^{-1/2}
  return F;
}

arma::mat OLS::embedding() const {
  require_fitted("embedding");
  arma::mat O = st_.cov_unscaled;
  O.replace(kNaN, 0.0);
  return O;
}

namespace {
void refuse_weighted_masked(const arma::vec& w, const char* what) {
  if (!w.is_empty()) {
    throw InvalidArgument(std::string(what) +
                          ": masked (causal) attention is defined for unweighted fits only; "
                          "refit without weights");
  }
}
}  // namespace

arma::mat OLS::masked_predictions(bool strict) const {
  require_fitted("masked_predictions");
  refuse_weighted_masked(st_.weights, "masked_predictions");
  if (rank() == 0) return masked_attention_predict(arma::mat(n_obs(), 0), y_, strict);
  return masked_attention_predict(q1(), y_, strict);
}

arma::mat OLS::masked_weights(bool strict) const {
  require_fitted("masked_weights");
  refuse_weighted_masked(st_.weights, "masked_weights");
  if (rank() == 0) return masked_attention_weights(arma::mat(n_obs(), 0), strict);
  return masked_attention_weights(q1(), strict);
}

}  // namespace attnreg
