// attnreg: the one small local solve of every local fit (Zuo et al. 2025, arXiv:2510.01450, eq. 8
// with the omega-scaled ridge of core/README.md, Conventions): the local linear / polynomial fit,
// the bandwidth objective and its binned approximation, partials, marginal effects, the
// semiparametric fits, and attention (direct and blockwise, CPU and CUDA through lla_tile.hpp).
//
//   ridge:       A_aa += lambda * omega * pen_a on the slope diagonal (omega = sum of the
//                weights = A_00 for a local design; pen_a = 1 for attention's Sigma, h_a^-2
//                in bandwidth units for the local fits). Scaling by omega makes the fit
//                invariant to a common factor of the weights (the running-max shift is exact).
//                lambda = 0 adds nothing: at h ~ 1e-300 pen is inf and 0 * inf would make
//                every design singular although the fit is scale-equivariant.
//   equilibrated Cholesky: S A S = L L' with S = diag(A)^(-1/2) (the equilibrated diagonal is
//                1), status singular when a pivot falls below kSingularPivot and not_positive
//                when a diagonal entry is not positive and finite. A X = B is then solved as
//                X = S L'^-1 L^-1 S B. Used where a singular design must be reported (a local
//                fit that does not exist), so every caller fails at the same designs.
//   plain Cholesky: A = L L' in place, working precision (float or double), status
//                not_positive when a pivot is not positive and finite: attention's Sigma
//                (direct and CUDA), where the ridge keeps A well conditioned.
//
// Everything here is ATTNREG_HD inline over raw row-major buffers (no Armadillo, no
// allocation, no exceptions), so the CUDA kernels and the CPU share it.
#pragma once

#include <stddef.h>

#include <math.h>

#include "attnreg/base/hd.hpp"

namespace attnreg {

/// Smallest Cholesky pivot of the equilibrated local design accepted as non-singular.
constexpr double kSingularPivot = 1e-12;

namespace local_solve {

/// Outcome of a factorisation.
enum class SolveStatus : int {
  ok = 0,
  not_positive = 1,  ///< a diagonal entry (or plain pivot) is not positive and finite
  singular = 2       ///< an equilibrated pivot is below kSingularPivot
};

ATTNREG_HD float sqrt_of(float x) { return sqrtf(x); }
ATTNREG_HD double sqrt_of(double x) { return sqrt(x); }

/// True for finite x (false for NaN and +-Inf) without the <cmath> macros, which differ
/// between host and device compilers.
template <class T>
ATTNREG_HD bool is_finite_hd(T x) {
  return (x - x) == T(0);
}

/// The diagonal the omega-scaled ridge adds with unit penalty: lambda * omega (0 when
/// lambda is 0, whatever omega is).
template <class T>
ATTNREG_HD T ridge_diagonal(T lambda, T omega) {
  return lambda > T(0) ? lambda * omega : T(0);
}

/// The omega-scaled ridge on the diagonal of the q x q row-major A: A[a][a] += lambda * omega
/// * pen[a - first] for first <= a < q (pen == nullptr: unit penalty). Nothing when
/// lambda <= 0 (see the file comment).
template <class T>
ATTNREG_HD void add_ridge(T* A, size_t q, size_t first, T lambda, T omega, const T* pen) {
  if (!(lambda > T(0))) return;
  for (size_t a = first; a < q; ++a)
    A[a * q + a] += pen != nullptr ? lambda * omega * pen[a - first] : lambda * omega;
}

/// Cholesky of the diagonally equilibrated S A S = L L' for a symmetric q x q row-major A
/// (upper triangle read). L (q x q, lower triangle written) and s (q: s_a = A_aa^(-1/2)) are
/// the caller's.
template <class T>
ATTNREG_HD SolveStatus equilibrated_cholesky(const T* A, size_t q, T* L, T* s) {
  for (size_t a = 0; a < q; ++a) {
    const T d = A[a * q + a];
    if (!(d > T(0)) || !is_finite_hd(d)) return SolveStatus::not_positive;
    s[a] = T(1) / sqrt_of(d);
  }
  for (size_t j = 0; j < q; ++j) {
    T dj = T(1);  // the equilibrated diagonal is 1
    for (size_t k = 0; k < j; ++k) dj -= L[j * q + k] * L[j * q + k];
    if (!(dj >= T(kSingularPivot))) return SolveStatus::singular;
    const T ljj = sqrt_of(dj);
    L[j * q + j] = ljj;
    for (size_t i = j + 1; i < q; ++i) {
      T v = A[j * q + i] * s[i] * s[j];  // upper triangle holds (j, i)
      for (size_t k = 0; k < j; ++k) v -= L[i * q + k] * L[j * q + k];
      L[i * q + j] = v / ljj;
    }
  }
  return SolveStatus::ok;
}

/// Solve A X = B in place in B (q x r, row-major) with the factor of equilibrated_cholesky:
/// per column, y = S b; L z = y; L' u = z; x = S u.
template <class T>
ATTNREG_HD void equilibrated_solve(const T* L, const T* s, size_t q, T* B, size_t r) {
  for (size_t c = 0; c < r; ++c) {
    for (size_t i = 0; i < q; ++i) {
      T v = B[i * r + c] * s[i];
      for (size_t k = 0; k < i; ++k) v -= L[i * q + k] * B[k * r + c];
      B[i * r + c] = v / L[i * q + i];
    }
    for (size_t ii = q; ii-- > 0;) {
      T v = B[ii * r + c];
      for (size_t k = ii + 1; k < q; ++k) v -= L[k * q + ii] * B[k * r + c];
      B[ii * r + c] = v / L[ii * q + ii];
    }
    for (size_t i = 0; i < q; ++i) B[i * r + c] *= s[i];
  }
}

/// Factor and solve: A X = B in place in B (q x r) for a symmetric q x q A (upper triangle
/// read); L (q x q) and s (q) are scratch. B is left unchanged unless the status is ok.
template <class T>
ATTNREG_HD SolveStatus spd_solve(const T* A, size_t q, T* B, size_t r, T* L, T* s) {
  const SolveStatus st = equilibrated_cholesky(A, q, L, s);
  if (st == SolveStatus::ok) equilibrated_solve(L, s, q, B, r);
  return st;
}

/// The omega-scaled ridge (A_00 = omega) and spd_solve on a copy Af of the q x q local design
/// A: the local fit's whole solve. pen has q - 1 entries (one per slope term).
template <class T>
ATTNREG_HD SolveStatus ridge_spd_solve(const T* A, size_t q, T lambda, const T* pen, T* B,
                                       size_t r, T* Af, T* L, T* s) {
  for (size_t i = 0; i < q * q; ++i) Af[i] = A[i];
  add_ridge(Af, q, 1, lambda, Af[0], pen);
  return spd_solve(Af, q, B, r, L, s);
}

/// In-place Cholesky of a symmetric positive definite d x d row-major matrix A = L L' (L in
/// the lower triangle). Returns false, leaving A partly overwritten, when a pivot is not
/// positive and finite (A not positive definite in working precision).
template <class T>
ATTNREG_HD bool cholesky(T* A, int d) {
  for (int j = 0; j < d; ++j) {
    T s = A[j * d + j];
    for (int k = 0; k < j; ++k) s -= A[j * d + k] * A[j * d + k];
    if (!(s > T(0)) || !is_finite_hd(s)) return false;
    const T ljj = sqrt_of(s);
    A[j * d + j] = ljj;
    for (int i = j + 1; i < d; ++i) {
      T t = A[i * d + j];
      for (int k = 0; k < j; ++k) t -= A[i * d + k] * A[j * d + k];
      A[i * d + j] = t / ljj;
    }
  }
  return true;
}

/// Solve L L' x = b in place (b becomes x) with L from cholesky().
template <class T>
ATTNREG_HD void cholesky_solve(const T* L, int d, T* b) {
  for (int i = 0; i < d; ++i) {
    T s = b[i];
    for (int k = 0; k < i; ++k) s -= L[i * d + k] * b[k];
    b[i] = s / L[i * d + i];
  }
  for (int i = d - 1; i >= 0; --i) {
    T s = b[i];
    for (int k = i + 1; k < d; ++k) s -= L[k * d + i] * b[k];
    b[i] = s / L[i * d + i];
  }
}

}  // namespace local_solve
}  // namespace attnreg
