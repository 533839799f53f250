// Tests of the criteria module (bandwidth/criteria.hpp): CV, GCV, AICc and their derivatives
// against few-line implementations of the textbook formulas, and the criteria of a fitted
// LocalPolynomial (cv_score, global_diagnostics, the bandwidth objective) against the same
// formulas computed here from its residuals, leave-one-out fits and trace.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "attnreg/bandwidth/bandwidth_select.hpp"
#include "attnreg/bandwidth/criteria.hpp"
#include "attnreg/inference/diagnostics.hpp"
#include "attnreg/solve/local_fit.hpp"

using namespace attnreg;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

// Hurvich, Simonoff and Tsai (1998) eq. 4, weighted mean square in the log.
double aicc_direct(double rss, double W, double n, double tr) {
  return std::log(rss / W) + (1.0 + tr / n) / (1.0 - (tr + 2.0) / n);
}
// Craven and Wahba (1979) with RSS / W as the mean square.
double gcv_direct(double rss, double W, double n, double tr) {
  return (rss / W) / ((1.0 - tr / n) * (1.0 - tr / n));
}
}  // namespace

TEST(Criteria, ValuesMatchTheTextbookFormulas) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int rep = 0; rep < 50; ++rep) {
    const double n = 10.0 + std::floor(200.0 * u(rng));
    const double W = rep % 2 == 0 ? n : n * (0.5 + u(rng));
    const double tr = (n - 3.0) * u(rng);
    const double rss = 1e-3 + 10.0 * u(rng);
    const criteria::FitSums s{rss, W, n, tr};
    EXPECT_NEAR(criteria::gcv(s), gcv_direct(rss, W, n, tr), 1e-13 * gcv_direct(rss, W, n, tr));
    EXPECT_NEAR(criteria::aicc(s), aicc_direct(rss, W, n, tr),
                1e-13 * std::fabs(aicc_direct(rss, W, n, tr)) + 1e-14);
    EXPECT_DOUBLE_EQ(criteria::cv_ls(rss, W), rss / W);
  }
  // Unweighted: GCV = n RSS / (n - tr)^2 exactly as written in the textbooks.
  const criteria::FitSums s{2.5, 40.0, 40.0, 7.0};
  EXPECT_DOUBLE_EQ(criteria::gcv(s), 40.0 * 2.5 / (33.0 * 33.0));
  EXPECT_DOUBLE_EQ(criteria::residual_df(40.0, 7.0, 5.5), 40.0 - 14.0 + 5.5);
}

TEST(Criteria, UndefinedCriteriaAreInfinite) {
  EXPECT_EQ(criteria::gcv({1.0, 10.0, 10.0, 10.0}), kInf);  // tr L = n
  EXPECT_EQ(criteria::gcv({1.0, 10.0, 10.0, 12.0}), kInf);
  EXPECT_EQ(criteria::aicc({1.0, 10.0, 10.0, 8.0}), kInf);  // 1 - (tr + 2) / n = 0
  EXPECT_EQ(criteria::aicc({0.0, 10.0, 10.0, 3.0}), kInf);  // RSS = 0: interpolation
  arma::vec g;
  EXPECT_EQ(criteria::aicc({1.0, 10.0, 10.0, 9.0}, arma::vec{1.0}, arma::vec{1.0}, g), kInf);
  EXPECT_TRUE(g.is_empty());
  EXPECT_EQ(criteria::gcv({1.0, 10.0, 10.0, 11.0}, arma::vec{1.0}, arma::vec{1.0}, g), kInf);
  EXPECT_TRUE(g.is_empty());
}

TEST(Criteria, DerivativesMatchFiniteDifferences) {
  // f(theta) = criterion(rss + theta' drss, tr + theta' dtr): its gradient at 0 is the chain
  // rule the bandwidth objective uses.
  std::mt19937_64 rng(5);
  std::normal_distribution<double> nd;
  for (int rep = 0; rep < 20; ++rep) {
    const double n = 60.0, W = rep % 2 == 0 ? n : 45.0, tr = 3.0 + rep, rss = 2.0 + 0.1 * rep;
    const arma::vec drss = {nd(rng), nd(rng)}, dtr = {nd(rng), nd(rng)};
    const criteria::FitSums s{rss, W, n, tr};
    arma::vec ga, gg, gc;
    const double fa = criteria::aicc(s, drss, dtr, ga);
    const double fg = criteria::gcv(s, drss, dtr, gg);
    const double fc = criteria::cv_ls(rss, W, drss, gc);
    EXPECT_DOUBLE_EQ(fa, criteria::aicc(s));
    EXPECT_DOUBLE_EQ(fg, criteria::gcv(s));
    EXPECT_DOUBLE_EQ(fc, criteria::cv_ls(rss, W));
    const double e = 1e-6;
    for (arma::uword p = 0; p < 2; ++p) {
      auto at = [&](double t) {
        return criteria::FitSums{rss + t * drss(p), W, n, tr + t * dtr(p)};
      };
      EXPECT_NEAR(ga(p), (aicc_direct(at(e).rss, W, n, at(e).trace_L) -
                          aicc_direct(at(-e).rss, W, n, at(-e).trace_L)) / (2 * e),
                  1e-6 * (1.0 + std::fabs(ga(p))));
      EXPECT_NEAR(gg(p), (gcv_direct(at(e).rss, W, n, at(e).trace_L) -
                          gcv_direct(at(-e).rss, W, n, at(-e).trace_L)) / (2 * e),
                  1e-6 * (1.0 + std::fabs(gg(p))));
      EXPECT_NEAR(gc(p), drss(p) / W, 1e-15);
    }
  }
}

TEST(Criteria, LooMeanSquareWeightsRowsAndSkipsZeroWeights) {
  const arma::mat y = {{1.0, 2.0}, {3.0, 1.0}, {0.5, 0.5}, {2.0, -1.0}};
  const arma::mat loo = {{1.5, 2.0}, {2.0, 1.5}, {9.0, 9.0}, {2.5, -0.5}};
  const arma::vec w = {1.0, 2.0, 0.0, 0.5};
  double num = 0.0;
  for (arma::uword i = 0; i < 4; ++i)
    num += w(i) * arma::accu(arma::square(y.row(i) - loo.row(i)));
  EXPECT_DOUBLE_EQ(criteria::loo_mean_square(y, loo, w), num / (2.0 * 3.5));
  EXPECT_DOUBLE_EQ(criteria::loo_mean_square(y.col(0), loo.col(0), arma::vec()),
                   arma::mean(arma::square(y.col(0) - loo.col(0))));
}

TEST(Criteria, FittedModelCriteriaAreTheFormulasOfItsSums) {
  std::mt19937_64 rng(9);
  std::normal_distribution<double> nd;
  const arma::uword n = 150;
  arma::mat X(n, 1);
  arma::vec y(n);
  for (arma::uword i = 0; i < n; ++i) {
    X(i, 0) = nd(rng);
    y(i) = std::sin(2.0 * X(i, 0)) + 0.3 * nd(rng);
  }
  for (int degree : {0, 1}) {
    LocalFitOptions fo;
    fo.degree = degree;
    LocalPolynomial m(fo);
    m.fit(X, arma::mat(y), arma::vec{0.35});
    const arma::vec e = y - m.fitted().col(0);
    const double rss = arma::dot(e, e), tr = m.effective_df();
    const arma::vec le = y - m.loo_fitted().col(0);
    const double cv = arma::dot(le, le) / n;
    EXPECT_NEAR(m.cv_score(), cv, 1e-13 * cv);
    const GlobalDiagnostics g = global_diagnostics(m, 0);
    EXPECT_NEAR(g.cv, cv, 1e-13 * cv);
    EXPECT_NEAR(g.gcv, gcv_direct(rss, n, n, tr), 1e-12 * g.gcv);
    EXPECT_NEAR(g.aicc, aicc_direct(rss, n, n, tr), 1e-12 * std::fabs(g.aicc));
    // The bandwidth objective at the same bandwidth evaluates the same criteria.
    for (BandwidthMethod meth : {BandwidthMethod::cv_ls, BandwidthMethod::aic,
                                 BandwidthMethod::gcv}) {
      BandwidthSelectOptions so;
      so.degree = degree;
      so.method = meth;
      const BandwidthObjective objective(X, y, so);
      const double f = objective(arma::vec{0.35});
      const double want = meth == BandwidthMethod::cv_ls ? cv
                          : meth == BandwidthMethod::aic ? aicc_direct(rss, n, n, tr)
                                                         : gcv_direct(rss, n, n, tr);
      EXPECT_NEAR(f, want, 1e-9 * std::fabs(want)) << "degree " << degree;
    }
  }
}
