// Tests for distributions.hpp (Boost.Math): the Student t tail and quantile and the normal
// quantile against closed forms (df = 1: Cauchy, df = 2) and 50-digit mpmath values, in the
// extreme tails and for df from 0.5 to 1e6, to about 1e-14 relative; edge cases.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "attnreg/inference/distributions.hpp"
#include "attnreg/least_squares/least_squares.hpp"

using namespace attnreg;

namespace {
double rel(double a, double b) { return std::fabs(a - b) / std::fabs(b); }
}  // namespace

TEST(Distributions, StudentTailEqualsClosedFormsForOneAndTwoDf) {
  for (double t : {1e-3, 0.3, 1.0, 3.0, 30.0, 1e3, 1e6, 1e10}) {
    // df = 1 (Cauchy): P(T > t) = atan2(1, t) / pi.
    EXPECT_LT(rel(student_t_sf(t, 1.0), std::atan2(1.0, t) / M_PI), 1e-14) << t;
    EXPECT_LT(rel(student_t_sf(-t, 1.0), 1.0 - std::atan2(1.0, t) / M_PI), 1e-14) << t;
    // df = 2: P(T > t) = (1 - t / s) / 2 = 1 / (s (s + t)), s = sqrt(2 + t^2).
    const double s = std::sqrt(2.0 + t * t);
    EXPECT_LT(rel(student_t_sf(t, 2.0), 1.0 / (s * (s + t))), 1e-14) << t;
  }
}

TEST(Distributions, StudentTailAgainstHighPrecision) {
  // 50-digit mpmath (quadrature of the density).
  struct Case { double t, df, sf; };
  const Case cases[] = {{5.0, 1e6, 2.8669989354453707845e-7},
                        {10.0, 1e6, 7.6393053840891247767e-24},
                        {0.1, 1e6, 0.46017217274602157868},
                        {3.0, 0.5, 0.1836540779929717241},
                        {40.0, 30.0, 6.8630225972032013936e-28}};
  for (const Case& c : cases) EXPECT_LT(rel(student_t_sf(c.t, c.df), c.sf), 1e-14) << c.t;
  EXPECT_NEAR(student_t_sf(1.959963984540054, std::numeric_limits<double>::infinity()), 0.025,
              1e-16);
  EXPECT_EQ(student_t_sf(std::numeric_limits<double>::infinity(), 3.0), 0.0);
  EXPECT_TRUE(std::isnan(student_t_sf(1.0, 0.0)));
  EXPECT_TRUE(std::isnan(student_t_sf(std::nan(""), 3.0)));
}

TEST(Distributions, NormalQuantileAgainstHighPrecision) {
  struct Case { double p, q; };
  const Case cases[] = {{1e-300, -37.047096299361199237},
                        {1e-20, -9.2623400897984075796},
                        {0.025, -1.9599639845400542118},
                        {0.975, 1.9599639845400538556},
                        {0.9999999999990905, 7.0477002566644087254},
                        {0.5000000001, 2.5066284820303539022e-10}};
  for (const Case& c : cases) EXPECT_LT(rel(normal_quantile(c.p), c.q), 1e-14) << c.p;
  EXPECT_EQ(normal_quantile(0.5), 0.0);
  EXPECT_EQ(normal_quantile(0.0), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(normal_quantile(1.5)));
}

TEST(Distributions, StudentQuantileInvertsTheTail) {
  for (double df : {1.0, 2.0, 5.0, 30.0, 1e6}) {
    for (double p : {1e-12, 0.01, 0.3, 0.5, 0.9, 0.999}) {
      const double q = student_t_quantile(p, df);
      EXPECT_LT(std::fabs(student_t_sf(q, df) - (1.0 - p)), 1e-14 * (1.0 - p) + 1e-300)
          << df << " " << p;
    }
  }
  // df = 1: the Cauchy quantile tan(pi (p - 1/2)).
  EXPECT_LT(rel(student_t_quantile(0.975, 1.0), std::tan(M_PI * 0.475)), 1e-14);
  EXPECT_EQ(student_t_quantile(0.3, std::numeric_limits<double>::infinity()),
            normal_quantile(0.3));
  EXPECT_TRUE(std::isnan(student_t_quantile(0.3, -1.0)));
}

TEST(Distributions, FisherTailEqualsClosedForms) {
  for (double f : {1e-3, 0.5, 1.0, 4.0, 50.0, 1e4}) {
    for (double d2 : {1.0, 3.0, 10.0, 1e3}) {
      // df1 = 2: P(F > f) = (1 + 2 f / d2)^(-d2 / 2).
      const double want = std::exp(-0.5 * d2 * std::log1p(2.0 * f / d2));
      if (want < 1e-300) {  // underflows (1e4 with d2 = 1e3: 21^-500): a zero tail
        EXPECT_LT(fisher_f_sf(f, 2.0, d2), 1e-300);
        continue;
      }
      EXPECT_LT(rel(fisher_f_sf(f, 2.0, d2), want), 1e-13) << f << " " << d2;
      // df1 = 1: F = T^2, so P(F > f) = 2 P(T > sqrt f).
      EXPECT_LT(rel(fisher_f_sf(f, 1.0, d2), 2.0 * student_t_sf(std::sqrt(f), d2)), 1e-13)
          << f << " " << d2;
    }
  }
  EXPECT_EQ(fisher_f_sf(0.0, 3.0, 4.0), 1.0);
  EXPECT_EQ(fisher_f_sf(std::numeric_limits<double>::infinity(), 3.0, 4.0), 0.0);
  EXPECT_TRUE(std::isnan(fisher_f_sf(1.0, 0.0, 4.0)));
}
