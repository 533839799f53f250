// Tests of the one local solve (solve/local_solve.hpp): the omega-scaled ridge, the
// equilibrated Cholesky with its pivot threshold and status, and the plain Cholesky of
// attention, against a direct float64 oracle (Gaussian elimination with partial pivoting) on
// random SPD systems of several sizes and seeds, near-singular and zero-diagonal designs,
// huge and tiny scales, and the ridge on and off.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "attnreg/solve/local_solve.hpp"

using namespace attnreg;
using local_solve::SolveStatus;

namespace {

using Mat = std::vector<double>;  // row-major

// Oracle: solve A X = B (q x q, q x r, row-major) by Gaussian elimination with partial
// pivoting on the full matrix; no symmetry, no equilibration.
Mat oracle_solve(Mat A, Mat B, std::size_t q, std::size_t r) {
  for (std::size_t k = 0; k < q; ++k) {
    std::size_t p = k;
    for (std::size_t i = k + 1; i < q; ++i)
      if (std::fabs(A[i * q + k]) > std::fabs(A[p * q + k])) p = i;
    for (std::size_t j = 0; j < q; ++j) std::swap(A[k * q + j], A[p * q + j]);
    for (std::size_t j = 0; j < r; ++j) std::swap(B[k * r + j], B[p * r + j]);
    for (std::size_t i = k + 1; i < q; ++i) {
      const double f = A[i * q + k] / A[k * q + k];
      for (std::size_t j = k; j < q; ++j) A[i * q + j] -= f * A[k * q + j];
      for (std::size_t j = 0; j < r; ++j) B[i * r + j] -= f * B[k * r + j];
    }
  }
  for (std::size_t ii = q; ii-- > 0;)
    for (std::size_t j = 0; j < r; ++j) {
      double v = B[ii * r + j];
      for (std::size_t k = ii + 1; k < q; ++k) v -= A[ii * q + k] * B[k * r + j];
      B[ii * r + j] = v / A[ii * q + ii];
    }
  return B;
}

// A local design sum_i w_i z_i z_i' with z_i = [1, u_i, u_i^2, ...] (q terms).
Mat local_design(std::size_t q, std::size_t n, std::mt19937_64& rng, double spread = 1.0) {
  std::normal_distribution<double> nd(0.0, spread);
  std::uniform_real_distribution<double> ud(0.1, 1.0);
  Mat A(q * q, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    const double u = nd(rng), w = ud(rng);
    std::vector<double> z(q, 1.0);
    for (std::size_t a = 1; a < q; ++a) z[a] = z[a - 1] * u;
    for (std::size_t a = 0; a < q; ++a)
      for (std::size_t b = 0; b < q; ++b) A[a * q + b] += w * z[a] * z[b];
  }
  return A;
}

// A random SPD matrix M M' + q I.
Mat random_spd(std::size_t q, std::mt19937_64& rng) {
  std::normal_distribution<double> nd;
  Mat M(q * q), A(q * q, 0.0);
  for (double& v : M) v = nd(rng);
  for (std::size_t i = 0; i < q; ++i)
    for (std::size_t j = 0; j < q; ++j) {
      double s = i == j ? static_cast<double>(q) : 0.0;
      for (std::size_t k = 0; k < q; ++k) s += M[i * q + k] * M[j * q + k];
      A[i * q + j] = s;
    }
  return A;
}

Mat random_rhs(std::size_t q, std::size_t r, std::mt19937_64& rng) {
  std::normal_distribution<double> nd;
  Mat B(q * r);
  for (double& v : B) v = nd(rng);
  return B;
}

double max_rel_err(const Mat& x, const Mat& ref) {
  double scale = 0.0, err = 0.0;
  for (double v : ref) scale = std::max(scale, std::fabs(v));
  for (std::size_t i = 0; i < x.size(); ++i) err = std::max(err, std::fabs(x[i] - ref[i]));
  return err / scale;
}

SolveStatus solve(const Mat& A, std::size_t q, Mat& B, std::size_t r) {
  Mat L(q * q), s(q);
  return local_solve::spd_solve(A.data(), q, B.data(), r, L.data(), s.data());
}

}  // namespace

TEST(LocalSolve, RandomSpdSystemsMatchTheOracle) {
  for (std::uint64_t seed : {1u, 2u, 3u})
    for (std::size_t q : {1u, 2u, 3u, 4u, 6u, 8u})
      for (std::size_t r : {1u, 3u}) {
        std::mt19937_64 rng(seed * 100 + q);
        const Mat A = random_spd(q, rng);
        const Mat B = random_rhs(q, r, rng);
        Mat X = B;
        ASSERT_EQ(solve(A, q, X, r), SolveStatus::ok) << "q = " << q;
        EXPECT_LT(max_rel_err(X, oracle_solve(A, B, q, r)), 1e-12) << "q = " << q << " seed " << seed;
      }
}

TEST(LocalSolve, LocalDesignsWithAndWithoutTheRidge) {
  for (std::uint64_t seed : {4u, 5u})
    for (std::size_t q : {2u, 3u, 4u})
      for (double lambda : {0.0, 1e-3, 0.5}) {
        std::mt19937_64 rng(seed * 10 + q);
        const Mat A = local_design(q, 40, rng);
        std::vector<double> pen(q - 1);
        for (std::size_t a = 0; a < q - 1; ++a) pen[a] = 1.0 / (a + 2.0);
        const Mat B = random_rhs(q, 2, rng);
        // Oracle: A + lambda * omega * diag(0, pen), written out.
        Mat Ar = A;
        for (std::size_t a = 1; a < q; ++a) Ar[a * q + a] += lambda * A[0] * pen[a - 1];
        Mat X = B, Af(q * q), L(q * q), s(q);
        ASSERT_EQ(local_solve::ridge_spd_solve(A.data(), q, lambda, pen.data(), X.data(), 2,
                                               Af.data(), L.data(), s.data()),
                  SolveStatus::ok);
        EXPECT_LT(max_rel_err(X, oracle_solve(Ar, B, q, 2)), 1e-10);
        // The ridged copy is exactly the oracle's matrix (same operation order).
        for (std::size_t i = 0; i < q * q; ++i) EXPECT_EQ(Af[i], Ar[i]);
      }
}

TEST(LocalSolve, RidgeIsOmegaScaledAndAbsentAtZero) {
  Mat A = {4.0, 1.0, 0.5, 1.0, 3.0, 0.2, 0.5, 0.2, 2.0};
  const double pen[2] = {2.0, 0.25};
  Mat R = A;
  local_solve::add_ridge(R.data(), 3, 1, 0.1, A[0], pen);
  EXPECT_EQ(R[0], 4.0);
  EXPECT_EQ(R[4], 3.0 + 0.1 * 4.0 * 2.0);
  EXPECT_EQ(R[8], 2.0 + 0.1 * 4.0 * 0.25);
  // Unit penalty from the first entry (attention's Sigma + lambda omega I).
  Mat S = A;
  local_solve::add_ridge(S.data(), 3, 0, 0.5, 2.0, static_cast<const double*>(nullptr));
  for (std::size_t a = 0; a < 3; ++a) EXPECT_EQ(S[a * 3 + a], A[a * 3 + a] + 1.0);
  // lambda = 0 adds nothing, even where the penalty is infinite (1/h^2 at h ~ 1e-300).
  const double inf_pen[2] = {std::numeric_limits<double>::infinity(), 1.0};
  Mat Z = A;
  local_solve::add_ridge(Z.data(), 3, 1, 0.0, A[0], inf_pen);
  EXPECT_EQ(Z, A);
  EXPECT_EQ(local_solve::ridge_diagonal(0.0, std::numeric_limits<double>::infinity()), 0.0);
  EXPECT_EQ(local_solve::ridge_diagonal(0.25, 8.0), 2.0);
}

TEST(LocalSolve, NearSingularDesignsFailAtThePivotThreshold) {
  // [[1, 1], [1, 1 + e]]: the equilibrated second pivot is e / (1 + e).
  for (double e : {0.0, 1e-16, 1e-14, 1e-13}) {
    const Mat A = {1.0, 1.0, 1.0, 1.0 + e};
    Mat B = {1.0, 2.0};
    EXPECT_EQ(solve(A, 2, B, 1), SolveStatus::singular) << "e = " << e;
    EXPECT_EQ(B, (Mat{1.0, 2.0})) << "the right-hand side is left alone";
  }
  for (double e : {1e-10, 1e-8, 1e-4}) {
    const Mat A = {1.0, 1.0, 1.0, 1.0 + e};
    const Mat B = {1.0, 2.0};
    Mat X = B;
    ASSERT_EQ(solve(A, 2, X, 1), SolveStatus::ok) << "e = " << e;
    // The condition number is ~ 4 / e: the error bound scales with it.
    EXPECT_LT(max_rel_err(X, oracle_solve(A, B, 2, 1)), 1e-15 * 4.0 / e) << "e = " << e;
  }
  // A rank-deficient local design: every u_i equal (no slope is identified).
  Mat D(9, 0.0);
  for (int i = 0; i < 5; ++i) {
    const double z[3] = {1.0, 0.3, 0.09};
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) D[a * 3 + b] += z[a] * z[b];
  }
  Mat B = {1.0, 0.0, 0.0};
  EXPECT_EQ(solve(D, 3, B, 1), SolveStatus::singular);
}

TEST(LocalSolve, ZeroNegativeAndNonFiniteDiagonalsAreNotPositive) {
  const double bad[] = {0.0, -1.0, std::numeric_limits<double>::infinity(),
                        std::numeric_limits<double>::quiet_NaN()};
  for (double d : bad) {
    Mat A = {2.0, 0.1, 0.0, 0.1, d, 0.0, 0.0, 0.0, 1.0};
    Mat B = {1.0, 1.0, 1.0};
    EXPECT_EQ(solve(A, 3, B, 1), SolveStatus::not_positive) << "d = " << d;
  }
  Mat A = {0.0};
  Mat B = {1.0};
  EXPECT_EQ(solve(A, 1, B, 1), SolveStatus::not_positive);
}

TEST(LocalSolve, HugeAndTinyScalesAreEquilibrated) {
  // D A D x' = D b has x' = D^{-1} x: the equilibration makes the solve scale-free, where an
  // unequilibrated pivot test would call the tiny-scale system singular.
  for (std::uint64_t seed : {7u, 8u})
    for (std::size_t q : {2u, 3u, 4u}) {
      std::mt19937_64 rng(seed + q);
      const Mat A = local_design(q, 30, rng);
      const Mat B = random_rhs(q, 1, rng);
      const Mat X = oracle_solve(A, B, q, 1);
      for (int e : {-500, -200, 200, 500}) {
        std::vector<double> D(q);
        for (std::size_t a = 0; a < q; ++a) D[a] = std::ldexp(1.0, a % 2 == 0 ? e : -e);
        Mat As(q * q), Bs(q);
        for (std::size_t i = 0; i < q; ++i) {
          Bs[i] = D[i] * B[i];
          for (std::size_t j = 0; j < q; ++j) As[i * q + j] = D[i] * A[i * q + j] * D[j];
        }
        ASSERT_EQ(solve(As, q, Bs, 1), SolveStatus::ok) << "q = " << q << " e = " << e;
        Mat back(q);
        for (std::size_t a = 0; a < q; ++a) back[a] = D[a] * Bs[a];
        EXPECT_LT(max_rel_err(back, X), 1e-9) << "q = " << q << " e = " << e;
      }
      // A uniform tiny scale (all weights near the underflow limit) solves as well.
      Mat At = A, Bt = B;
      for (double& v : At) v *= 1e-300;
      for (double& v : Bt) v *= 1e-300;
      ASSERT_EQ(solve(At, q, Bt, 1), SolveStatus::ok);
      EXPECT_LT(max_rel_err(Bt, X), 1e-9);
    }
}

TEST(LocalSolve, FactorOnceSolveManyMatchesTheOneCallSolve) {
  std::mt19937_64 rng(11);
  const std::size_t q = 4;
  const Mat A = random_spd(q, rng);
  const Mat B = random_rhs(q, 3, rng);
  Mat X = B;
  ASSERT_EQ(solve(A, q, X, 3), SolveStatus::ok);
  Mat L(q * q), s(q);
  ASSERT_EQ(local_solve::equilibrated_cholesky(A.data(), q, L.data(), s.data()), SolveStatus::ok);
  for (std::size_t c = 0; c < 3; ++c) {
    Mat b(q);
    for (std::size_t i = 0; i < q; ++i) b[i] = B[i * 3 + c];
    local_solve::equilibrated_solve(L.data(), s.data(), q, b.data(), 1);
    for (std::size_t i = 0; i < q; ++i) EXPECT_EQ(b[i], X[i * 3 + c]);
  }
}

TEST(LocalSolve, PlainCholeskyMatchesTheOracleInDoubleAndFloat) {
  for (std::uint64_t seed : {21u, 22u})
    for (int d : {1, 2, 5, 8}) {
      std::mt19937_64 rng(seed * 10 + static_cast<std::uint64_t>(d));
      const std::size_t q = static_cast<std::size_t>(d);
      const Mat A = random_spd(q, rng);
      const Mat B = random_rhs(q, 1, rng);
      const Mat X = oracle_solve(A, B, q, 1);
      Mat L = A, x = B;
      ASSERT_TRUE(local_solve::cholesky(L.data(), d));
      local_solve::cholesky_solve(L.data(), d, x.data());
      EXPECT_LT(max_rel_err(x, X), 1e-12);
      std::vector<float> Lf(A.begin(), A.end()), xf(B.begin(), B.end());
      ASSERT_TRUE(local_solve::cholesky(Lf.data(), d));
      local_solve::cholesky_solve(Lf.data(), d, xf.data());
      EXPECT_LT(max_rel_err(Mat(xf.begin(), xf.end()), X), 1e-4);
    }
  // Not positive definite: a negative, zero or non-finite pivot.
  for (double v : {-1.0, 0.0, std::numeric_limits<double>::quiet_NaN()}) {
    Mat A = {1.0, 2.0, 2.0, 4.0 + v};
    EXPECT_FALSE(local_solve::cholesky(A.data(), 2)) << "v = " << v;
  }
}
