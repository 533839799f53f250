// Masked (causal) least-squares attention, Goulet Coulombe 2025, arXiv:2504.09663, eq. 35, and the
// recursive-versus-masked pseudo-out-of-sample comparison of its section 4.3.
#include "attnreg/least_squares/least_squares_masked.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "attnreg/base/error.hpp"
#include "attnreg/least_squares/least_squares.hpp"
#include "attnreg/least_squares/least_squares_spectral.hpp"
#include "attnreg/base/runtime.hpp"
#include "attnreg/detail/least_squares_internal.hpp"

namespace attnreg {


arma::mat masked_attention_predict(const arma::mat& F, const arma::mat& Y, bool strict,
                                   double tol) {
  check::rows_match(Y, F.n_rows, "y", "the factors");
  const arma::uword n = F.n_rows, r = F.n_cols, k = Y.n_cols;
  arma::mat out(n, k);
  // Prefix sums, in long double: Cy = sum_tau f_tau y_tau', c1 = sum_tau f_tau,
  // norms = sum_tau ||f_tau|| (for the degeneracy test).
  std::vector<long double> Cy(r * k, 0.0L), c1(r, 0.0L);
  long double norms = 0.0L;
  auto add_row = [&](arma::uword t) {
    for (arma::uword j = 0; j < r; ++j) {
      c1[j] += F(t, j);
      for (arma::uword c = 0; c < k; ++c) Cy[c * r + j] += static_cast<long double>(F(t, j)) * Y(t, c);
    }
    norms += arma::norm(F.row(t), 2);
  };
  for (arma::uword t = 0; t < n; ++t) {
    if (!strict) add_row(t);
    long double den = 0.0L;
    for (arma::uword j = 0; j < r; ++j) den += static_cast<long double>(F(t, j)) * c1[j];
    const double bound = arma::norm(F.row(t), 2) * static_cast<double>(norms);
    const bool ok = bound > 0.0 && std::fabs(static_cast<double>(den)) > tol * bound;
    for (arma::uword c = 0; c < k; ++c) {
      if (!ok) {
        out(t, c) = kNaN;
        continue;
      }
      long double num = 0.0L;
      for (arma::uword j = 0; j < r; ++j) num += static_cast<long double>(F(t, j)) * Cy[c * r + j];
      out(t, c) = static_cast<double>(num / den);
    }
    if (strict) add_row(t);
  }
  return out;
}

arma::mat masked_attention_weights(const arma::mat& F, bool strict, double tol) {
  const arma::uword n = F.n_rows;
  arma::mat W = F * F.t();  // in-sample attention A = F F'
  const arma::vec norms = arma::sqrt(arma::sum(arma::square(F), 1));
  for (arma::uword t = 0; t < n; ++t) {
    const arma::uword last = strict ? t : t + 1;  // columns [0, last) are kept
    long double den = 0.0L, bound = 0.0L;
    for (arma::uword tau = 0; tau < last; ++tau) {
      den += W(t, tau);
      bound += norms(tau);
    }
    const bool ok = bound > 0.0L && std::fabs(static_cast<double>(den)) >
                                        tol * norms(t) * static_cast<double>(bound);
    for (arma::uword tau = 0; tau < n; ++tau) {
      if (!ok) {
        W(t, tau) = kNaN;
      } else {
        W(t, tau) = tau < last ? static_cast<double>(W(t, tau) / den) : 0.0;
      }
    }
  }
  return W;
}

namespace {

// One member of the least-squares family, fitted on a prefix of the rows.
struct PrefixModel {
  bool ridge;
  OLS ols;
  Ridge rdg;
  PrefixModel(bool fit_intercept, double lambda)
      : ridge(lambda > 0.0),
        ols([&] {
          OLSOptions o;
          o.fit_intercept = fit_intercept;
          return o;
        }()),
        rdg([&] {
          RidgeOptions o;
          o.fit_intercept = fit_intercept;
          o.lambda = lambda;
          return o;
        }()) {}
  void fit(const arma::mat& X, const arma::mat& Y) {
    if (ridge) rdg.fit(X, Y); else ols.fit(X, Y);
  }
  arma::mat predict(const arma::mat& X) const { return ridge ? rdg.predict(X) : ols.predict(X); }
  arma::mat weights(const arma::mat& X) const {
    return ridge ? rdg.attention_weights(X) : ols.attention_weights(X);
  }
  arma::mat factors() const { return ridge ? rdg.training_factors() : ols.training_factors(); }
  arma::mat fitted() const { return ridge ? rdg.fitted() : ols.fitted(); }
};

}  // namespace

PseudoOOSResult pseudo_out_of_sample(const arma::mat& X, const arma::mat& Y,
                                     const PseudoOOSOptions& options) {
  check::rows_match(Y, X.n_rows, "y", "X");
  check::all_finite(X, "X");
  check::all_finite(Y, "y");
  check::require(options.ridge >= 0.0 && std::isfinite(options.ridge), "ridge",
                 "must be finite and >= 0 (0 = OLS)");
  const arma::uword n = X.n_rows, k = Y.n_cols;
  const arma::uword q = X.n_cols + (options.fit_intercept ? 1 : 0);
  const arma::uword start = options.start > 0 ? options.start : q + 1;
  if (start >= n) {
    std::ostringstream msg;
    msg << "start: the first forecast row " << start << " leaves nothing to forecast in " << n
        << " rows (need start < n; the default is the number of design columns + 1 = " << q + 1
        << ")";
    throw InvalidArgument(msg.str());
  }
  const arma::uword m = n - start;

  PrefixModel full(options.fit_intercept, options.ridge);
  full.fit(X, Y);
  const arma::mat F = full.factors();  // in-sample attention = F F'
  const arma::mat masked_all = masked_attention_predict(F, Y, /*strict=*/true);
  const arma::mat fitted = full.fitted();

  PseudoOOSResult res;
  res.rows = arma::regspace<arma::uvec>(start, n - 1);
  res.y = Y.rows(start, n - 1);
  res.masked = masked_all.rows(start, n - 1);
  res.in_sample = fitted.rows(start, n - 1);
  res.recursive.set_size(m, k);
  res.weight_gap.set_size(m);
  if (options.keep_weights) {
    res.weights_recursive.zeros(m, n);
    res.weights_masked.zeros(m, n);
  }
  InterruptGuard guard;
  PrefixModel rec(options.fit_intercept, options.ridge);
  for (arma::uword j = 0; j < m; ++j) {
    if (guard.poll()) break;
    const arma::uword t = start + j;
    rec.fit(X.rows(0, t - 1), Y.rows(0, t - 1));
    const arma::mat xt = X.row(t);
    res.recursive.row(j) = rec.predict(xt);
    const arma::rowvec w_rec = rec.weights(xt);  // 1 x t
    // Masked weights of row t: a_{t tau} = f_t' f_tau for tau < t, renormalised (eq. 35).
    arma::rowvec w_mask = F.row(t) * F.rows(0, t - 1).t();
    const double den = arma::accu(w_mask);
    w_mask /= den;
    res.weight_gap(j) = arma::accu(arma::abs(w_mask - w_rec));
    if (options.keep_weights) {
      res.weights_recursive.row(j).head(t) = w_rec;
      res.weights_masked.row(j).head(t) = w_mask;
    }
    guard.progress(j + 1, m, "recursive re-estimation");
  }
  guard.rethrow_if_interrupted();
  res.mse_recursive = arma::mean(arma::square(res.y - res.recursive), 0);
  res.mse_masked = arma::mean(arma::square(res.y - res.masked), 0);
  res.mse_in_sample = arma::mean(arma::square(res.y - res.in_sample), 0);
  return res;
}

}  // namespace attnreg
