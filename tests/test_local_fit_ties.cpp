// Tie grouping and lazy training statistics of LocalPolynomial (local_fit.hpp, "Ties"):
// fitted values, leverages, leave-one-out fits and tr(L'L) computed over the distinct rows
// equal the ungrouped quantities (predict, attention weights, literal leave-one-out refits).
#include <gtest/gtest.h>

#include <armadillo>
#include <cmath>
#include <string>
#include <vector>

#include "attnreg/inference/diagnostics.hpp"
#include "attnreg/kernels/distinct_rows.hpp"
#include "attnreg/kernels/kernel.hpp"
#include "attnreg/solve/local_fit.hpp"

using namespace attnreg;

namespace {

double max_rel(const arma::mat& a, const arma::mat& b) {
  return arma::abs(a - b).max() / (1.0 + arma::abs(b).max());
}

struct Case {
  arma::mat X, Y;
  arma::vec h, w;
  std::string types;
};

// Heavy ties: continuous columns on a few grid values, a categorical column with 3 levels.
Case make_case(unsigned seed, std::size_t n, bool mixed, bool two_cont, bool weights,
               std::size_t k) {
  arma::arma_rng::set_seed(seed);
  Case c;
  const std::size_t d = 1 + (two_cont ? 1 : 0) + (mixed ? 1 : 0);
  c.X.set_size(n, d);
  c.X.col(0) = arma::floor(arma::randu<arma::vec>(n) * 9.0);  // 9 distinct values
  std::size_t j = 1;
  c.types = "c";
  if (two_cont) {
    c.X.col(j++) = arma::floor(arma::randu<arma::vec>(n) * 4.0) * 0.5;
    c.types += "c";
  }
  if (mixed) {
    c.X.col(j++) = arma::floor(arma::randu<arma::vec>(n) * 3.0);
    c.types += "u";
  }
  c.Y = arma::sin(c.X.col(0)) * arma::ones<arma::rowvec>(k) + arma::randn<arma::mat>(n, k);
  c.h.set_size(d);
  c.h(0) = 2.6;
  if (two_cont) c.h(1) = 1.6;
  if (mixed) c.h(d - 1) = 0.3;
  if (weights) c.w = 0.2 + arma::randu<arma::vec>(n);
  return c;
}

LocalFitOptions options(const Case& c, int degree, const std::string& kernel, double ridge,
                        bool eager, int threads) {
  LocalFitOptions o;
  o.degree = degree;
  o.kernel.kernel = Kernel::from_name(kernel, "kernel");
  o.kernel.var_types = c.types;
  o.ridge = ridge;
  o.compute_fitted = eager;
  o.kernel.n_threads = threads;
  return o;
}

}  // namespace

TEST(DistinctRows, GroupsInOrderOfFirstRow) {
  arma::mat X = {{1, 0}, {2, 1}, {1, 0}, {0, 5}, {2, 1}, {1, 0}};
  const DistinctRows g = distinct_rows(X);
  ASSERT_EQ(g.X.n_rows, 3u);
  EXPECT_TRUE(g.has_ties());
  EXPECT_TRUE(arma::approx_equal(g.X, arma::mat({{1, 0}, {2, 1}, {0, 5}}), "absdiff", 0.0));
  EXPECT_EQ(g.group_of, (std::vector<std::size_t>{0, 1, 0, 2, 1, 0}));
  EXPECT_TRUE(arma::approx_equal(g.count, arma::vec({3, 2, 1}), "absdiff", 0.0));
  const arma::mat U = arma::randu<arma::mat>(7, 2);
  const DistinctRows u = distinct_rows(U);
  EXPECT_FALSE(u.has_ties());
  EXPECT_TRUE(arma::approx_equal(u.X, U, "absdiff", 0.0));
}

TEST(LocalFitTies, GroupedStatisticsEqualUngroupedAndLiteralRefits) {
  int n_cases = 0;
  for (unsigned seed : {1u, 2u}) {
    for (bool mixed : {false, true}) {
      for (bool two_cont : {false, true}) {
        for (bool weights : {false, true}) {
          for (int degree : {0, 1}) {
            for (const char* kernel : {"gaussian", "epanechnikov"}) {
              const std::size_t k = seed == 1 ? 1 : 2;
              Case c = make_case(seed * 100 + n_cases, 90, mixed, two_cont, weights, k);
              const double ridge = (seed == 2 && degree == 1) ? 0.05 : 0.0;
              const std::string tag = std::to_string(seed) + (mixed ? " mixed" : "") +
                                      (two_cont ? " 2c" : "") + (weights ? " w" : "") +
                                      " deg" + std::to_string(degree) + " " + kernel;
              LocalPolynomial m(options(c, degree, kernel, ridge, true, 1));
              m.fit(c.X, c.Y, c.h, c.w);
              ASSERT_LT(m.n_distinct(), c.X.n_rows) << tag;
              // Fitted values = predict at the training rows (ungrouped path).
              EXPECT_LT(max_rel(m.fitted(), m.predict(c.X)), 1e-12) << tag;
              // Leverages and tr(L'L) from the ungrouped n x n equivalent kernel.
              const arma::mat L = m.attention_weights(c.X);
              EXPECT_LT(max_rel(m.leverage(), arma::vec(L.diag())), 1e-12) << tag;
              const double tll = arma::accu(arma::square(L));
              EXPECT_NEAR(m.trace_LtL(), tll, 1e-12 * tll) << tag;
              EXPECT_NEAR(m.effective_df(), arma::trace(L), 1e-12 * arma::trace(L)) << tag;
              // Leave-one-out = literal refits without row i (the rest of its group stays).
              const arma::mat loo = m.loo_fitted();
              LocalFitOptions o1 = options(c, degree, kernel, ridge, false, 1);
              for (std::size_t i = 0; i < c.X.n_rows; i += 7) {
                arma::uvec keep = arma::regspace<arma::uvec>(0, c.X.n_rows - 1);
                keep.shed_row(i);
                LocalPolynomial r(o1);
                r.fit(c.X.rows(keep), c.Y.rows(keep), c.h,
                      c.w.is_empty() ? arma::vec() : arma::vec(c.w.elem(keep)));
                const arma::mat ref = r.predict(c.X.row(i));
                EXPECT_LT(max_rel(loo.row(i), ref), 1e-12) << tag << " row " << i;
              }
              ++n_cases;
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(n_cases, 64);
}

TEST(LocalFitTies, LazyEqualsEagerAndFitComputesNothing) {
  for (bool mixed : {false, true}) {
    Case c = make_case(7, 300, mixed, false, true, 2);
    LocalPolynomial eager(options(c, 1, "gaussian", 0.0, true, 1));
    eager.fit(c.X, c.Y, c.h, c.w);
    EXPECT_EQ(eager.statistics_evaluations(), 1);
    LocalPolynomial lazy(options(c, 1, "gaussian", 0.0, false, 1));
    lazy.fit(c.X, c.Y, c.h, c.w);
    EXPECT_EQ(lazy.statistics_evaluations(), 0);
    const arma::mat p = lazy.predict(c.X.rows(0, 9));  // prediction needs no statistics
    EXPECT_EQ(lazy.statistics_evaluations(), 0);
    EXPECT_TRUE(arma::approx_equal(lazy.loo_fitted(), eager.loo_fitted(), "absdiff", 0.0));
    EXPECT_TRUE(arma::approx_equal(lazy.fitted(), eager.fitted(), "absdiff", 0.0));
    EXPECT_TRUE(arma::approx_equal(lazy.leverage(), eager.leverage(), "absdiff", 0.0));
    EXPECT_EQ(lazy.effective_df(), eager.effective_df());
    EXPECT_EQ(lazy.statistics_evaluations(), 1);  // cached after first use
    // Refitting resets the cache.
    lazy.fit(c.X, c.Y * 2.0, c.h, c.w);
    EXPECT_EQ(lazy.statistics_evaluations(), 0);
    EXPECT_LT(max_rel(lazy.fitted(), 2.0 * eager.fitted()), 1e-14);
  }
}

TEST(LocalFitTies, OneAndTwoThreadsBitIdentical) {
  // Enough distinct rows (G^2 > 2e6 pairs) that the grouped pass really runs on 2 threads.
  Case c = make_case(11, 6000, true, false, true, 2);
  c.X.col(0) = arma::floor(arma::randu<arma::vec>(c.X.n_rows) * 1500.0);
  c.h(0) = 40.0;
  LocalPolynomial a(options(c, 1, "gaussian", 0.0, false, 1));
  LocalPolynomial b(options(c, 1, "gaussian", 0.0, false, 2));
  a.fit(c.X, c.Y, c.h, c.w);
  b.fit(c.X, c.Y, c.h, c.w);
  ASSERT_LT(a.n_distinct(), c.X.n_rows);
  ASSERT_GT(a.n_distinct() * a.n_distinct(), 2000000u);
  EXPECT_TRUE(arma::approx_equal(a.fitted(), b.fitted(), "absdiff", 0.0));
  EXPECT_TRUE(arma::approx_equal(a.loo_fitted(), b.loo_fitted(), "absdiff", 0.0));
  EXPECT_TRUE(arma::approx_equal(a.leverage(), b.leverage(), "absdiff", 0.0));
  EXPECT_EQ(a.trace_LtL(), b.trace_LtL());
}

TEST(LocalFitTies, DiagnosticsOnTiedRowsEqualRowByRow) {
  for (bool mixed : {false, true}) {
    Case c = make_case(21, 120, mixed, false, false, 1);
    LocalPolynomial m(options(c, 1, "gaussian", 0.0, false, 1));
    m.fit(c.X, c.Y, c.h);
    // Global: sigma^2 and the residual df from the ungrouped n x n smoother matrix.
    const arma::mat L = m.attention_weights(c.X);
    const GlobalDiagnostics g = global_diagnostics(m);
    const double tll = arma::accu(arma::square(L)), tl = arma::trace(L);
    EXPECT_NEAR(g.trace_LtL, tll, 1e-12 * tll);
    EXPECT_NEAR(g.trace_L, tl, 1e-12 * tl);
    const arma::vec e = c.Y.col(0) - L * c.Y.col(0);
    const double s2 = arma::dot(e, e) / (120.0 - 2.0 * tl + tll);
    EXPECT_NEAR(g.sigma2, s2, 1e-12 * s2);
    // Pointwise at the (tied) training rows = one row at a time (no grouping there).
    for (VarianceKind kind : {VarianceKind::hc3, VarianceKind::homoskedastic}) {
      PointwiseOptions po;
      po.kind = kind;
      const PointwiseDiagnostics all = pointwise_diagnostics(m, c.X, po);
      for (arma::uword i = 0; i < c.X.n_rows; i += 11) {
        const PointwiseDiagnostics one = pointwise_diagnostics(m, c.X.row(i), po);
        EXPECT_NEAR(all.fit(i), one.fit(0), 1e-12 * (1.0 + std::fabs(one.fit(0))));
        EXPECT_NEAR(all.se(i), one.se(0), 1e-12 * (1.0 + std::fabs(one.se(0))));
        // mixed fits: the multivariate pilot (diagnostics.hpp), also grouped over tied rows
        EXPECT_NEAR(all.bias(i), one.bias(0), 1e-12 * (1.0 + std::fabs(one.bias(0))));
        EXPECT_NEAR(all.rbc_high(i), one.rbc_high(0), 1e-12 * (1.0 + std::fabs(one.rbc_high(0))));
      }
    }
  }
}

TEST(LocalFitTies, PilotCoefficientWeightsWithTiesEqualRowwiseLeastSquares) {
  // Oracle: weighted least squares over all rows (normal equations in long double-free form:
  // C = (Z' W Z)^{-1} Z' W, solved by QR of sqrt(W) Z), no grouping.
  for (unsigned seed : {1u, 2u}) {
    arma::arma_rng::set_seed(seed);
    const arma::uword n = 200;
    const arma::vec x = arma::floor(arma::randu<arma::vec>(n) * 12.0);
    const arma::vec xe = arma::linspace(0.5, 10.5, 7);
    const arma::vec a = seed == 2 ? arma::vec(0.3 + arma::randu<arma::vec>(n)) : arma::vec();
    const Kernel k = Kernel::from_name("gaussian", "kernel");
    const int deg = 3;
    const double b = 2.5;
    const std::vector<arma::mat> G = pilot_coefficient_weights(x, xe, k, deg, b, a);
    for (arma::uword j = 0; j < xe.n_elem; ++j) {
      arma::mat Z(n, deg + 1);
      arma::vec w(n);
      for (arma::uword i = 0; i < n; ++i) {
        const double u = (x(i) - xe(j)) / b;
        w(i) = k.shape(u) * (a.is_empty() ? 1.0 : a(i));
        for (int e = 0; e <= deg; ++e) Z(i, e) = std::pow(u, e);
      }
      const arma::vec sq = arma::sqrt(w / w.max());
      arma::mat Q, R;
      ASSERT_TRUE(arma::qr_econ(Q, R, Z.each_col() % sq));
      const arma::mat C = arma::solve(arma::trimatu(R), Q.t()).eval().each_row() % sq.t();
      for (int e = 0; e <= deg; ++e) {
        const arma::rowvec g = G[static_cast<std::size_t>(e)].row(j);
        EXPECT_LT(arma::abs(g - C.row(e)).max(), 1e-12 * (1.0 + arma::abs(C.row(e)).max()))
            << seed << " " << j << " " << e;
      }
    }
  }
}
