// TradeoffTable: the named record of the trade-off curve holds its columns under their names.
#include <gtest/gtest.h>

#include "attnreg/inference/tradeoff_table.hpp"

using namespace attnreg;

TEST(TradeoffTable, FieldsAreTheCurveColumnsByName) {
  arma::arma_rng::set_seed(11);
  const arma::mat X = arma::randu<arma::mat>(120, 1);
  const arma::vec y = arma::sin(6.0 * X.col(0)) + 0.2 * arma::randn<arma::vec>(120);
  const arma::vec hs{0.04, 0.08, 0.16};
  for (int degree : {0, 1}) {
    LocalFitOptions fo;
    fo.degree = degree;
    const arma::mat t =
        tradeoff_curve(X, y, hs, fo, X, VarianceKind::homoskedastic, -1, 0);
    const TradeoffTable r = tradeoff_table(X, y, hs, fo, X, VarianceKind::homoskedastic, -1, 0);
    const auto f = r.fields();
    ASSERT_EQ(f.size(), t.n_cols);
    const char* names[] = {"bandwidth", "bias2", "variance", "mse", "cv", "gcv", "df"};
    for (arma::uword j = 0; j < t.n_cols; ++j) {
      EXPECT_EQ(f[j].first, names[j]);
      EXPECT_TRUE(arma::approx_equal(*f[j].second, arma::vec(t.col(j)), "absdiff", 0.0))
          << names[j];
    }
    EXPECT_TRUE(arma::approx_equal(r.mse, r.bias2 + r.variance, "reldiff", 1e-12));
    EXPECT_TRUE(arma::approx_equal(r.bandwidth, hs, "absdiff", 0.0));
  }
}
