// Cluster-robust building blocks (least_squares/cluster_inference.hpp) against direct
// implementations: the CR3 jackknife against explicit leave-one-cluster-out refits, the
// iterative singleton rule against repeated one-pass removal, the CR1 factor, and the wild
// cluster bootstrap against a slow loop over the same (enumerated) Rademacher draws.
#include <gtest/gtest.h>

#include "attnreg/base/arma.hpp"
#include <cmath>

#include "attnreg/base/error.hpp"
#include "attnreg/least_squares/cluster_inference.hpp"
#include "attnreg/least_squares/least_squares_fe.hpp"

namespace {

arma::vec ls(const arma::mat& X, const arma::vec& y) { return arma::solve(X, y); }

}  // namespace

TEST(ClusterInference, JackknifeEqualsLeaveOneClusterOutRefits) {
  for (unsigned seed : {1u, 2u, 3u}) {
    arma::arma_rng::set_seed(seed);
    const arma::uword n = 120, G = 9;
    arma::mat X = arma::join_rows(arma::ones(n), arma::randn(n, 3));
    X.col(2) *= 1e3;  // scales differ: the rank test must not depend on units
    const arma::vec y = X * arma::vec{1, 2, -1e-3, 0.5} + arma::randn(n);
    arma::uvec ids(n);
    for (arma::uword i = 0; i < n; ++i) ids(i) = (i * 7 + seed) % G;
    const arma::vec b = ls(X, y);
    arma::mat S(4, 4, arma::fill::zeros);
    for (arma::uword g = 0; g < G; ++g) {
      const arma::uvec keep = arma::find(ids != g);
      const arma::vec d = ls(X.rows(keep), y(keep)) - b;
      S += d * d.t();
    }
    S *= (G - 1.0) / G;
    arma::uword Gc = 0;
    const arma::uvec codes = attnreg::dense_cluster_codes(ids, Gc);
    ASSERT_EQ(Gc, G);
    const arma::mat V = attnreg::cluster_jackknife(X, X.t() * X, y - X * b, codes, G);
    // Both are solves of systems with condition number ~1e6 here: 1e-8 relative is loose.
    EXPECT_LT(arma::abs(V - S).max() / arma::abs(S).max(), 1e-8);
  }
}

TEST(ClusterInference, JackknifeRefusesSingleRowClustersAndLostRank) {
  arma::arma_rng::set_seed(5);
  const arma::mat X = arma::join_rows(arma::ones(10), arma::randn(10, 1));
  const arma::vec e = arma::randn(10);
  const arma::uvec codes = arma::regspace<arma::uvec>(0, 9);
  EXPECT_THROW(attnreg::cluster_jackknife(X, X.t() * X, e, codes, 10), attnreg::InvalidArgument);
  // A dummy that only cluster 0 identifies.
  arma::mat Xd = arma::join_rows(X, arma::zeros(10));
  Xd(0, 2) = Xd(1, 2) = 1.0;
  arma::uvec c2(10);
  for (arma::uword i = 0; i < 10; ++i) c2(i) = i / 2;
  EXPECT_THROW(attnreg::cluster_jackknife(Xd, Xd.t() * Xd, e, c2, 5), attnreg::InvalidArgument);
}

TEST(ClusterInference, SingletonsAreFoundIteratively) {
  // Row 0 is alone in level 100 of factor 1; without it row 1 is alone in level 50 of factor
  // 2; without that, row 2 is alone in level 101 of factor 1.
  arma::umat codes = {{100, 50}, {101, 50}, {101, 51}, {102, 51},
                      {102, 52}, {103, 52}, {103, 51}, {102, 52}};
  const std::vector<bool> s = attnreg::singleton_rows(codes);
  const std::vector<bool> want = {true, true, true, false, false, false, false, false};
  EXPECT_EQ(s, want);
}

TEST(ClusterInference, CR1Factor) {
  attnreg::SmallSample s;
  EXPECT_DOUBLE_EQ(attnreg::cr1_factor(100, 5, 10, s), 10.0 / 9.0 * 99.0 / 95.0);
  s.k_adj = false;
  EXPECT_DOUBLE_EQ(attnreg::cr1_factor(100, 5, 10, s), 10.0 / 9.0);
  s.g_adj = false;
  EXPECT_DOUBLE_EQ(attnreg::cr1_factor(100, 5, 10, s), 1.0);
  EXPECT_EQ(attnreg::parse_fixef_k("nested"), attnreg::FixefK::Nonnested);
  EXPECT_THROW(attnreg::parse_fixef_k("all"), attnreg::InvalidArgument);
}

TEST(ClusterInference, WildBootstrapEqualsSlowLoop) {
  arma::arma_rng::set_seed(11);
  const arma::uword n = 80, G = 6;
  const arma::mat X = arma::join_rows(arma::ones(n), arma::randn(n, 2));
  arma::uvec codes(n);
  for (arma::uword i = 0; i < n; ++i) codes(i) = i % G;
  const arma::vec y = X * arma::vec{1, 0.2, -0.3} + arma::randn(n) + arma::randn(G)(codes);
  const arma::vec R = {0, 1, 0};
  const double r = 0.1;
  const arma::mat V = attnreg::rademacher_enumeration(G);
  const double c = G / (G - 1.0) * (n - 1.0) / (n - 3.0);
  const attnreg::WildBootstrapResult res =
      attnreg::wild_cluster_bootstrap(X, y, codes, G, R, r, V, 0.9, c);
  auto tstat = [&](const arma::vec& yy) {
    const arma::vec b = ls(X, yy);
    const arma::vec e = yy - X * b;
    const arma::mat Ai = arma::inv_sympd(X.t() * X);
    arma::mat M(3, 3, arma::fill::zeros);
    for (arma::uword g = 0; g < G; ++g) {
      const arma::uvec k = arma::find(codes == g);
      const arma::vec s = X.rows(k).t() * e(k);
      M += s * s.t();
    }
    const double v = c * arma::as_scalar(R.t() * Ai * M * Ai * R);
    return (arma::dot(R, b) - r) / std::sqrt(v);
  };
  EXPECT_NEAR(res.t_stat, tstat(y), 1e-10 * std::fabs(tstat(y)));
  const arma::mat Ai = arma::inv_sympd(X.t() * X);
  const arma::vec b = ls(X, y);
  const arma::vec br = b - Ai * R * ((arma::dot(R, b) - r) / arma::as_scalar(R.t() * Ai * R));
  const arma::vec ur = y - X * br;
  arma::uword count = 0;
  for (arma::uword j = 0; j < V.n_cols; ++j) {
    const arma::vec v = V.col(j);
    const double tb = tstat(X * br + ur % v(codes));
    EXPECT_NEAR(res.t_boot(j), tb, 1e-9 * (1.0 + std::fabs(tb))) << j;
    if (std::fabs(tb) >= std::fabs(res.t_stat) * (1 - 1e-12)) ++count;
  }
  EXPECT_DOUBLE_EQ(res.p_value, double(count) / V.n_cols);
  EXPECT_LT(res.ci_lower, res.estimate);
  EXPECT_GT(res.ci_upper, res.estimate);
}
