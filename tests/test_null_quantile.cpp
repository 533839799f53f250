// Tests for the finite-sample critical values of studentised linear statistics
// (core/include/attnreg/detail/null_quantile.hpp): cases with closed forms, t = Z / sqrt(V)
// with V = chi^2_nu / nu independent of Z (Student t), and t = Z / sqrt(rho Z^2 + V), whose
// quantile is t_q / sqrt(1 + rho t_q^2); both approximations (Pearson's three moments and the
// saddlepoint over the spectrum) against them and against each other.
#include <gtest/gtest.h>

#include <cmath>

#include "attnreg/detail/null_quantile.hpp"
#include "attnreg/inference/distributions.hpp"

using namespace attnreg;
using detail::NullMoments;
using detail::NullSpectrum;

namespace {

// V = chi^2_nu / nu as one spectral term of multiplicity nu
NullSpectrum student_spectrum(double nu, double rho) {
  NullSpectrum s;
  s.lambda = {1.0 / nu};
  s.nu = {nu};
  s.c2 = {0.0};
  s.rho = rho;
  return s;
}

}  // namespace

// Pearson's three-moment chi-square is exact for a chi-square: A_perp = I_nu / nu.
TEST(NullQuantile, PearsonMomentsGiveStudentTExactly) {
  for (double nu : {3.0, 12.0, 60.0, 400.0})
    for (double level : {0.9, 0.95, 0.99}) {
      const NullMoments m{0.0, 0.0, 0.0, 1.0, 1.0 / nu, 1.0 / (nu * nu)};
      const double c = detail::null_critical_value(m, level);
      EXPECT_NEAR(c, student_t_quantile(0.5 + level / 2, nu), 1e-8 * c) << nu << " " << level;
    }
}

// The saddlepoint (Lugannani-Rice) distribution of a scaled chi-square has a relative error
// O(1 / nu) (Daniels 1987, Int. Statist. Rev. 55(1), for the gamma family), largest in the lower
// tail at one degree of freedom, where the density is unbounded; the approximation is
// deterministic, and its error in the quantile of t is 0.135, 0.042, 0.017 and below 1e-4 of
// it at nu = 1, 2, 3 and >= 12 (always on the large, conservative side for nu <= 12): the
// tolerance 0.2 / nu^2 holds those with room. The rho shift is exact algebra.
TEST(NullQuantile, SaddlepointGivesStudentTToItsAccuracy) {
  for (double nu : {1.0, 2.0, 3.0, 12.0, 60.0, 400.0})
    for (double level : {0.9, 0.95, 0.99})
      for (double rho : {0.0, 0.05}) {
        const double q = student_t_quantile(0.5 + level / 2, nu);
        const double expect = q / std::sqrt(1 + rho * q * q);
        const double c = detail::null_critical_value(student_spectrum(nu, rho), level);
        EXPECT_NEAR(c, expect, 0.2 / (nu * nu) * expect) << nu << " " << level << " " << rho;
        if (nu <= 12) {
          EXPECT_GT(c, expect * (1 - 1e-9)) << nu << " " << level << " " << rho;
        }
      }
}

// A spectrum of many comparable eigenvalues with c != 0 (the regime where three moments fit the
// conditional distribution well): the two approximations agree.
TEST(NullQuantile, SpectrumAndMomentsAgreeWithManyTerms) {
  const arma::uword r = 300;
  arma::vec lam = arma::linspace(0.5, 1.5, r) / r;  // tr = 1
  arma::mat M = arma::diagmat(lam);
  arma::vec f(r, arma::fill::zeros);
  f(0) = 0.05;
  f(1) = -0.03;
  M += f * f.t();  // Sigma = M - f f' = diag(lam)
  const NullSpectrum s = detail::null_spectrum(M, f);
  // moments of A = F'F restricted as in null_quantile.cpp: with kappa = |f|^2,
  // k_j = a'A^j a = f'M^(j-1) f, t_j = tr M^j
  const arma::vec Mf = M * f;
  const arma::mat M2 = M * M;
  const NullMoments m = detail::null_moments_from(
      arma::dot(f, f), arma::dot(f, Mf), arma::dot(Mf, Mf), arma::trace(M), arma::trace(M2),
      arma::accu(M % M2));
  for (double level : {0.9, 0.95}) {
    const double a = detail::null_critical_value(s, level), b = detail::null_critical_value(m, level);
    EXPECT_NEAR(a, b, 0.005 * b) << level;
  }
  // the spectrum keeps 48 terms and lumps the rest; the totals are preserved
  ASSERT_EQ(s.lambda.n_elem, 49u);
  EXPECT_NEAR(arma::dot(s.lambda, s.nu), arma::accu(lam), 1e-12);
  EXPECT_NEAR(arma::accu(s.c2) + s.rho, arma::dot(f, f), 1e-14);
}

TEST(NullQuantile, DegenerateNullHasNoCriticalValue) {
  // e'Ae = Z^2 exactly (all of A along a): |t| = 1 always, no level-0.95 quantile below 1e6
  // in the bracket's sense; the caller reports the point
  NullSpectrum s;
  s.rho = 1.0;
  const double c = detail::null_critical_value(s, 0.95);
  EXPECT_TRUE(std::isnan(c) || std::abs(c - 1.0) < 1e-6);
}
