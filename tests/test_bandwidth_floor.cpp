// The search box's floor is the estimator's own limit of definition (bandwidth_select.hpp,
// "Floor"), so interior optima below the former heuristic floor (k-th distinct neighbour / 3
// for the Gaussian) are found: R np's local-constant cv.ls optimum on statsmodels' two-regressor
// test case, and the local-linear cv_ls and AICc optima on CPS1988 experience below h = 1. Also
// weighted cross-validation ("Weights") against a direct float64 leave-one-out oracle.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "attnreg/bandwidth/bandwidth_select.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/kernels/kernel_pairs.hpp"
#include "test_util.hpp"

using namespace attnreg;

namespace {

const std::string kFix = std::string(ATTNREG_DATA_DIR) + "/../tests/fixtures";

// CPS1988 (data/cps1988.csv): log wage and experience (columns 1 and 3).
void read_cps(arma::vec& x, arma::vec& y) {
  std::ifstream in(std::string(ATTNREG_DATA_DIR) + "/cps1988.csv");
  ASSERT_TRUE(in.good());
  std::string line;
  std::getline(in, line);
  std::vector<double> xs, ys;
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::string wage, educ, exper;
    std::getline(ss, wage, ',');
    std::getline(ss, educ, ',');
    std::getline(ss, exper, ',');
    ys.push_back(std::log(std::stod(wage)));
    xs.push_back(std::stod(exper));
  }
  x = arma::vec(xs);
  y = arma::vec(ys);
}

// Direct weighted leave-one-out CV (1-D or multivariate continuous, Gaussian), float64:
// sum_i w_i (y_i - m_{-i}(x_i))^2 / sum_i w_i, m_{-i} the local constant / linear fit with
// kernel weights w_k K((x_k - x_i) / h), k != i.
double oracle_cv(const arma::mat& X, const arma::vec& y, const arma::vec& h, const arma::vec& w,
                 int degree) {
  const arma::uword n = X.n_rows, d = X.n_cols;
  double num = 0.0, den = 0.0;
  for (arma::uword i = 0; i < n; ++i) {
    arma::mat D(n - 1, degree == 1 ? d + 1 : 1, arma::fill::ones);
    arma::vec k(n - 1), yy(n - 1);
    arma::uword r = 0;
    for (arma::uword j = 0; j < n; ++j) {
      if (j == i) continue;
      double q = 0.0;
      for (arma::uword c = 0; c < d; ++c) {
        const double u = (X(j, c) - X(i, c)) / h(c);
        q += u * u;
        if (degree == 1) D(r, 1 + c) = X(j, c) - X(i, c);
      }
      k(r) = w(j) * std::exp(-0.5 * q);
      yy(r) = y(j);
      ++r;
    }
    const arma::mat A = D.t() * (D.each_col() % k);
    const arma::vec b = D.t() * (k % yy);
    const arma::vec beta = arma::solve(A, b);
    const double m = beta(0);
    num += w(i) * (y(i) - m) * (y(i) - m);
    den += w(i);
  }
  return num / den;
}

}  // namespace

TEST(BandwidthFloor, ReproducesNpLocalConstantOptimumOnStatsmodelsCase) {
  // statsmodels' test_kernel_regression.py, test_continuousdata_lc_cvls: R np's npregbw gives
  // [0.6163835, 0.1649656]; the former floor of column 2 (0.19097) stopped the search at
  // [0.6464, 0.1910] with CV 1.659322.
  const arma::mat D = attnreg_test::read_csv(kFix + "/np_kernelreg_cc.csv");
  ASSERT_EQ(D.n_rows, 60u);
  const arma::mat X = D.cols(0, 1);
  const arma::vec y = D.col(2);
  BandwidthSelectOptions o;
  o.degree = 0;
  const BandwidthSelectResult r = select_bandwidth(X, y, o);
  EXPECT_NEAR(r.bandwidth(0), 0.6163835, 1e-5 * 0.6163835);
  EXPECT_NEAR(r.bandwidth(1), 0.1649656, 1e-5 * 0.1649656);
  EXPECT_NEAR(r.objective, 1.643536, 1e-6 * 1.643536);
  EXPECT_LT(r.objective, 1.659322);
  EXPECT_EQ(r.at_bound, std::vector<int>({0, 0}));
  EXPECT_LT(r.lower(1), 0.1649656);
  // np's bandwidths are a stationary point of our objective (their 7 digits).
  BandwidthObjective obj(X, y, o);
  arma::vec g;
  const double f = obj(arma::vec{0.6163835, 0.1649656}, &g);
  EXPECT_NEAR(f, r.objective, 1e-9);
  EXPECT_LT(arma::abs(g).max(), 1e-5);
}

TEST(BandwidthFloor, CpsExperienceLocalLinearOptimumBelowOne) {
  arma::vec x, y;
  read_cps(x, y);
  ASSERT_GT(x.n_elem, 28000u);
  const arma::mat X(x);
  for (BandwidthMethod m : {BandwidthMethod::cv_ls, BandwidthMethod::aic}) {
    BandwidthSelectOptions o;
    o.degree = 1;
    o.method = m;
    const BandwidthSelectResult r = select_bandwidth(X, y, o);
    BandwidthObjective obj(X, y, o);
    const double at_one = obj(arma::vec{1.0});  // the former floor's answer
    EXPECT_LT(r.bandwidth(0), 1.0) << bandwidth_method_name(m);
    EXPECT_LT(r.objective, at_one) << bandwidth_method_name(m);
    EXPECT_EQ(r.at_bound[0], 0) << bandwidth_method_name(m);
    // An interior minimum: the objective rises on both sides.
    EXPECT_LT(r.objective, obj(arma::vec{r.bandwidth(0) * 0.95}));
    EXPECT_LT(r.objective, obj(arma::vec{r.bandwidth(0) * 1.05}));
    if (m == BandwidthMethod::cv_ls) {
      EXPECT_LT(r.objective, 0.3944139);  // below the value at h = 0.95
      EXPECT_NEAR(r.bandwidth(0), 0.955, 0.01);
    }
  }
}

TEST(BandwidthFloor, LocalConstantGaussianFloorIsWhereWeightsUnderflow) {
  // Untied data: the floor is max_i (distance to the nearest other point) / r, r =
  // sqrt(2 ln(1 / kTinyWeight)); just below it the loneliest point's leave-one-out fit has no
  // accepted weight (objective +inf), at it the objective is finite.
  for (int seed : {1, 2, 3}) {
    arma::arma_rng::set_seed(seed);
    const arma::vec x = arma::sort(arma::randu<arma::vec>(40 + 20 * seed)) * 3.0;
    const arma::vec y = arma::sin(x) + 0.1 * arma::randn<arma::vec>(x.n_elem);
    double gap = 0.0;
    for (arma::uword i = 0; i < x.n_elem; ++i) {
      double g = std::numeric_limits<double>::infinity();
      if (i > 0) g = std::min(g, x(i) - x(i - 1));
      if (i + 1 < x.n_elem) g = std::min(g, x(i + 1) - x(i));
      gap = std::max(gap, g);
    }
    const double r = std::sqrt(-2.0 * std::log(KernelSpace::kTinyWeight));
    BandwidthSelectOptions o;
    o.degree = 0;
    BandwidthObjective obj(arma::mat(x), y, o);
    EXPECT_NEAR(obj.lower()(0), gap / r * (1.0 + 1e-9), 1e-12 * gap / r);
    EXPECT_TRUE(std::isfinite(obj(arma::vec{obj.lower()(0)})));
    EXPECT_FALSE(std::isfinite(obj(arma::vec{obj.lower()(0) * 0.99})));
    // The former heuristic floor (nearest distinct neighbour / 3) is ~12x higher.
    EXPECT_LT(obj.lower()(0), gap / 3.0 / 10.0);
  }
}

TEST(BandwidthFloor, LocalLinearFloorKeepsTheDesignNonsingular) {
  // Gaussian local linear: at the floor every leave-one-out fit exists (the objective is
  // finite); well below it the loneliest point's two-point design is singular (+inf).
  // Epanechnikov: the floor is the largest distance to the second design value.
  arma::arma_rng::set_seed(11);
  arma::vec x = arma::join_cols(arma::vec{0.0}, 2.0 + arma::sort(arma::randu<arma::vec>(60)));
  const arma::vec y = arma::cos(x) + 0.1 * arma::randn<arma::vec>(x.n_elem);
  BandwidthSelectOptions o;
  o.degree = 1;
  BandwidthObjective obj(arma::mat(x), y, o);
  const double lo = obj.lower()(0);
  EXPECT_TRUE(std::isfinite(obj(arma::vec{lo})));
  EXPECT_FALSE(std::isfinite(obj(arma::vec{lo * 0.5})));
  o.kernel.kernel = Kernel(KernelType::epanechnikov);
  BandwidthObjective oe(arma::mat(x), y, o);
  const arma::vec xs = arma::sort(x);
  double d2max = 0.0;  // distance to the second-nearest other value
  for (arma::uword i = 0; i < xs.n_elem; ++i) {
    arma::vec d = arma::sort(arma::abs(xs - xs(i)));
    d2max = std::max(d2max, d(2));  // d(0) = 0 is the point itself
  }
  EXPECT_NEAR(oe.lower()(0), d2max * (1.0 + 1e-9), 1e-12 * d2max);
  EXPECT_TRUE(std::isfinite(oe(arma::vec{oe.lower()(0)})));
}

TEST(BandwidthFloor, MinNeighborsKeepsTheBwcheckGuard) {
  arma::arma_rng::set_seed(5);
  const arma::vec x = arma::randu<arma::vec>(80);
  const arma::vec y = x + 0.1 * arma::randn<arma::vec>(80);
  BandwidthSelectOptions o;
  o.degree = 1;
  o.min_neighbors = 2;
  BandwidthObjective a(arma::mat(x), y, o);
  o.min_neighbors = 0;
  BandwidthObjective b(arma::mat(x), y, o);
  EXPECT_GT(a.lower()(0), 2.0 * b.lower()(0));  // 0.0129 vs 0.0048
}

TEST(BandwidthFloor, SameResultForOneAndTwoThreads) {
  const arma::mat D = attnreg_test::read_csv(kFix + "/np_kernelreg_cc.csv");
  BandwidthSelectOptions o;
  o.degree = 0;
  o.kernel.n_threads = 1;
  const BandwidthSelectResult a = select_bandwidth(D.cols(0, 1), D.col(2), o);
  o.kernel.n_threads = 2;
  const BandwidthSelectResult b = select_bandwidth(D.cols(0, 1), D.col(2), o);
  EXPECT_EQ(a.bandwidth(0), b.bandwidth(0));
  EXPECT_EQ(a.bandwidth(1), b.bandwidth(1));
  EXPECT_EQ(a.objective, b.objective);
  EXPECT_EQ(a.n_evals, b.n_evals);
}

TEST(WeightedBandwidth, ObjectiveMatchesDirectOracle) {
  for (int degree : {0, 1})
    for (int seed : {1, 2, 3})
      for (arma::uword d : {1u, 2u}) {
        arma::arma_rng::set_seed(100 * seed + d);
        const arma::uword n = 30 + 17 * seed;
        arma::mat X = arma::randu<arma::mat>(n, d);
        if (seed == 3) X.rows(0, 4) = X.rows(5, 9);  // ties (with different weights)
        const arma::vec y = arma::sin(4.0 * X.col(0)) + 0.2 * arma::randn<arma::vec>(n);
        arma::vec w = 0.1 + 3.0 * arma::randu<arma::vec>(n);
        if (seed == 2) w = arma::round(w) + 1.0;  // integer weights
        BandwidthSelectOptions o;
        o.degree = degree;
        o.weights = w;
        BandwidthObjective obj(X, y, o);
        const arma::vec h = 0.15 * arma::ones<arma::vec>(d) + 0.05 * seed;
        arma::vec g;
        const double f = obj(h, &g);
        const double ref = oracle_cv(X, y, h, w, degree);
        EXPECT_NEAR(f, ref, 1e-11 * ref) << degree << " " << seed << " " << d;
        // The gradient (d / d log h) against central differences of the oracle.
        for (arma::uword c = 0; c < d; ++c) {
          const double e = 1e-5;
          arma::vec hp = h, hm = h;
          hp(c) *= std::exp(e);
          hm(c) *= std::exp(-e);
          const double fd = (oracle_cv(X, y, hp, w, degree) - oracle_cv(X, y, hm, w, degree)) /
                            (2.0 * e);
          EXPECT_NEAR(g(c), fd, 1e-6 * (std::fabs(fd) + ref)) << degree << " " << seed;
        }
      }
}

TEST(WeightedBandwidth, EqualWeightsZeroWeightsAndScale) {
  arma::arma_rng::set_seed(9);
  const arma::uword n = 60;
  const arma::mat X = arma::randu<arma::mat>(n, 1);
  const arma::vec y = arma::cos(3.0 * X.col(0)) + 0.2 * arma::randn<arma::vec>(n);
  for (int degree : {0, 1}) {
    BandwidthSelectOptions o;
    o.degree = degree;
    const BandwidthSelectResult plain = select_bandwidth(X, y, o);
    o.weights = arma::vec(n, arma::fill::value(3.0));
    const BandwidthSelectResult eq = select_bandwidth(X, y, o);
    EXPECT_NEAR(eq.bandwidth(0), plain.bandwidth(0), 1e-10 * plain.bandwidth(0));
    EXPECT_NEAR(eq.objective, plain.objective, 1e-12 * plain.objective);
    // Weight 0 drops the row: the same as the data without those rows.
    arma::vec w = 0.5 + arma::randu<arma::vec>(n);
    w.subvec(0, 9).zeros();
    o.weights = w;
    BandwidthObjective with0(X, y, o);
    o.weights = w.subvec(10, n - 1);
    BandwidthObjective sub(X.rows(10, n - 1), y.subvec(10, n - 1), o);
    EXPECT_EQ(with0(arma::vec{0.1}), sub(arma::vec{0.1}));
    // A common factor in the weights changes nothing.
    o.weights = 1e10 * w.subvec(10, n - 1);
    BandwidthObjective big(X.rows(10, n - 1), y.subvec(10, n - 1), o);
    EXPECT_NEAR(big(arma::vec{0.1}), sub(arma::vec{0.1}), 1e-13 * sub(arma::vec{0.1}));
  }
}

TEST(WeightedBandwidth, SelectionMinimisesTheWeightedCriterionAndRejectsBadWeights) {
  arma::arma_rng::set_seed(21);
  const arma::uword n = 80;
  const arma::mat X = arma::randu<arma::mat>(n, 1);
  const arma::vec y = arma::sin(6.0 * X.col(0)) + 0.3 * arma::randn<arma::vec>(n);
  const arma::vec w = 0.2 + 2.0 * arma::square(X.col(0));
  BandwidthSelectOptions o;
  o.weights = w;
  const BandwidthSelectResult r = select_bandwidth(X, y, o);
  const double h = r.bandwidth(0);
  EXPECT_NEAR(r.objective, oracle_cv(X, y, arma::vec{h}, w, 1), 1e-11 * r.objective);
  EXPECT_LT(r.objective, oracle_cv(X, y, arma::vec{h * 0.97}, w, 1));
  EXPECT_LT(r.objective, oracle_cv(X, y, arma::vec{h * 1.03}, w, 1));
  o.kernel.n_threads = 1;
  const BandwidthSelectResult r1 = select_bandwidth(X, y, o);
  o.kernel.n_threads = 2;
  const BandwidthSelectResult r2 = select_bandwidth(X, y, o);
  EXPECT_EQ(r1.bandwidth(0), r2.bandwidth(0));
  EXPECT_EQ(r1.objective, r2.objective);
  o.weights = arma::vec(3, arma::fill::ones);
  EXPECT_THROW(select_bandwidth(X, y, o), InvalidArgument);
  o.weights = -w;
  EXPECT_THROW(select_bandwidth(X, y, o), InvalidArgument);
  o.weights = arma::zeros<arma::vec>(n);
  EXPECT_THROW(select_bandwidth(X, y, o), InvalidArgument);
}
