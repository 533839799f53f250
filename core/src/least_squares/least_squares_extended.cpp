// Extended-precision least squares: Householder QR in double-double arithmetic (see
// least_squares_dd.hpp). Used by OLS::fit for small or ill-conditioned designs; the pivot order
// comes from the double-precision dgeqp3 factor, which reveals the rank reliably, so this pass
// only has to be accurate, not clever.
#include <algorithm>
#include <cmath>
#include <vector>

#include "attnreg/base/error.hpp"
#include "attnreg/base/runtime.hpp"
#include "attnreg/detail/least_squares_dd.hpp"
#include "attnreg/detail/least_squares_internal.hpp"

namespace attnreg {
namespace ls_detail {

double power_of_two_scale(double norm) {
  if (!(norm > 0.0) || !std::isfinite(norm)) return 1.0;
  return std::ldexp(1.0, static_cast<int>(std::lround(std::log2(norm))));
}

ExtendedLS extended_least_squares(const arma::mat& A, const arma::mat& Y, double rank_tol,
                                  int n_threads) {
  using dd::Real;
  const arma::uword n = A.n_rows, q = A.n_cols, k = Y.n_cols, w = q + k;
  const int threads = resolve_threads(n_threads);
  // Working matrix [A Y] in double-double, column-major.
  std::vector<Real> M(static_cast<std::size_t>(n) * w);
  auto at = [&](arma::uword i, arma::uword j) -> Real& { return M[j * n + i]; };
  for (arma::uword j = 0; j < q; ++j)
    for (arma::uword i = 0; i < n; ++i) at(i, j) = Real(A(i, j));
  for (arma::uword j = 0; j < k; ++j)
    for (arma::uword i = 0; i < n; ++i) at(i, q + j) = Real(Y(i, j));

  InterruptGuard guard;
  const arma::uword kmax = std::min(n, q);
  arma::uword rank = 0;
  double r00 = 0.0;
  std::vector<Real> v(n);
  for (arma::uword c = 0; c < kmax; ++c) {
    if (guard.poll()) break;
    Real norm2(0.0);
    for (arma::uword i = c; i < n; ++i) norm2 += at(i, c) * at(i, c);
    const Real nrm = dd::sqrt(norm2);
    if (c == 0) r00 = nrm.hi;
    if (!(nrm.hi > rank_tol * r00) || nrm.hi == 0.0) break;
    const Real xc = at(c, c);
    const Real alpha = xc.hi >= 0.0 ? -nrm : nrm;
    for (arma::uword i = c; i < n; ++i) v[i] = at(i, c);
    v[c] = xc - alpha;
    // ||x - alpha e_c||^2 = 2 (||x||^2 - alpha x_c), both terms of the same sign: no cancellation.
    const Real vtv = (norm2 - alpha * xc) * 2.0;
    const long long first = static_cast<long long>(c + 1), last = static_cast<long long>(w);
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(threads) if ((n - c) * (w - c) > 20000)
#endif
    for (long long jj = first; jj < last; ++jj) {
      const auto j = static_cast<arma::uword>(jj);
      Real dot(0.0);
      for (arma::uword i = c; i < n; ++i) dot += v[i] * at(i, j);
      const Real f = (dot * 2.0) / vtv;
      for (arma::uword i = c; i < n; ++i) at(i, j) -= f * v[i];
    }
    at(c, c) = alpha;
    ++rank;
  }
  guard.rethrow_if_interrupted();
  (void)threads;

  ExtendedLS out;
  out.rank = rank;
  out.coef.set_size(rank, k);
  out.cov.set_size(rank, rank);
  out.resid.set_size(n, k);
  if (rank == 0) {
    out.resid = Y;
    return out;
  }
  // Back substitution R b = (Q'Y)_{1:r}, in double-double.
  std::vector<Real> b(static_cast<std::size_t>(rank) * k);
  for (arma::uword j = 0; j < k; ++j) {
    for (arma::uword ii = rank; ii-- > 0;) {
      Real s = at(ii, q + j);
      for (arma::uword l = ii + 1; l < rank; ++l) s -= at(ii, l) * b[j * rank + l];
      b[j * rank + ii] = s / at(ii, ii);
    }
  }
  // Residuals from the original data (exact inputs), in double-double.
  for (arma::uword j = 0; j < k; ++j) {
    for (arma::uword i = 0; i < n; ++i) {
      Real s(Y(i, j));
      for (arma::uword l = 0; l < rank; ++l) s -= b[j * rank + l] * A(i, l);
      out.resid(i, j) = s.to_double();
    }
    for (arma::uword l = 0; l < rank; ++l) out.coef(l, j) = b[j * rank + l].to_double();
  }
  // (R'R)^{-1} = R^{-1} R^{-T}: invert the triangle column by column, then multiply.
  std::vector<Real> Ri(static_cast<std::size_t>(rank) * rank, Real(0.0));
  auto ri = [&](arma::uword i, arma::uword j) -> Real& { return Ri[j * rank + i]; };
  for (arma::uword j = 0; j < rank; ++j) {
    ri(j, j) = Real(1.0) / at(j, j);
    for (arma::uword ii = j; ii-- > 0;) {
      Real s(0.0);
      for (arma::uword l = ii + 1; l <= j; ++l) s += at(ii, l) * ri(l, j);
      ri(ii, j) = -(s / at(ii, ii));
    }
  }
  for (arma::uword a = 0; a < rank; ++a) {
    for (arma::uword c = a; c < rank; ++c) {
      Real s(0.0);
      for (arma::uword l = c; l < rank; ++l) s += ri(a, l) * ri(c, l);
      out.cov(a, c) = out.cov(c, a) = s.to_double();
    }
  }
  return out;
}

}  // namespace ls_detail
}  // namespace attnreg
