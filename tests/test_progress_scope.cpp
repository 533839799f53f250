// Progress of long bootstrap loops (runtime.hpp ProgressScope): the significance test, the
// specification test and the pairs bootstrap report one task from 0 to its total, and the
// inner kernel sums they run are muted while the scope is alive (one bar per run).
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <tuple>
#include <vector>

#include "attnreg/inference/diagnostics.hpp"
#include "attnreg/base/runtime.hpp"
#include "attnreg/inference/specification_tests.hpp"

using namespace attnreg;

namespace {

using Report = std::tuple<std::size_t, std::size_t, std::string>;

struct Recorder {
  std::vector<Report> seen;
  Recorder() {
    set_progress_reporter([this](std::size_t d, std::size_t t, const std::string& l) {
      seen.emplace_back(d, t, l);
    });
  }
  ~Recorder() { set_progress_reporter(nullptr); }
  // Every report carries `label` and `total`, the counts never decrease, and the last is total.
  void expect_one_task(const std::string& label, std::size_t total) const {
    ASSERT_FALSE(seen.empty());
    std::size_t last = 0;
    for (const Report& r : seen) {
      EXPECT_EQ(std::get<2>(r), label);
      EXPECT_EQ(std::get<1>(r), total);
      EXPECT_GE(std::get<0>(r), last);
      last = std::get<0>(r);
    }
    EXPECT_EQ(std::get<0>(seen.front()), 0u);
    EXPECT_EQ(last, total);
  }
};

LocalPolynomial fit(const arma::mat& X, const arma::vec& y, const arma::vec& h) {
  LocalFitOptions o;
  o.degree = 1;
  LocalPolynomial m(o);
  m.fit(X, arma::mat(y), h);
  return m;
}

}  // namespace

TEST(ProgressScope, MutesInnerReportsAndNests) {
  Recorder rec;
  {
    ProgressScope outer(3, "outer");
    InterruptGuard g;
    g.progress(1, 10, "inner");  // muted
    {
      ProgressScope inner(5, "nested");  // not the outermost: silent
      inner.step(2);
    }
    outer.step(3);
  }
  rec.expect_one_task("outer", 3);
  EXPECT_EQ(rec.seen.size(), 2u);
  InterruptGuard g;  // after the scope, plain reports are back
  g.progress(1, 2, "after");
  EXPECT_EQ(std::get<2>(rec.seen.back()), "after");
}

TEST(ProgressScope, SignificanceSpecificationAndPairsBootstrapReportOneTask) {
  arma::arma_rng::set_seed(3);
  const std::size_t n = 80;
  const arma::mat X = arma::randu<arma::mat>(n, 2);
  const arma::vec y = arma::sin(3 * X.col(0)) + 0.2 * arma::randn(n);
  const LocalPolynomial m = fit(X, y, arma::vec{0.15, 0.3});
  {
    Recorder rec;
    SignificanceOptions o;
    o.replications = 99;
    o.chunk = 40;
    significance_test(m, o);
    rec.expect_one_task("significance test", 2 * 99);
  }
  {
    Recorder rec;
    SpecificationOptions o;
    o.replications = 50;
    o.chunk = 16;
    o.bandwidth = arma::vec{0.2, 0.3};
    const arma::mat Z = arma::join_horiz(arma::ones(n), X);
    specification_test(Z, y, X, o);
    rec.expect_one_task("specification test", 50);
  }
  {
    Recorder rec;  // the cv_ls searches (before and in the bootstrap) are muted
    SpecificationOptions o;  // bandwidths re-selected on each draw (n <= 500)
    o.replications = 19;
    const arma::mat Z = arma::join_horiz(arma::ones(n), X);
    const SpecificationTest t = specification_test(Z, y, X, o);
    EXPECT_TRUE(t.reselected);
    rec.expect_one_task("specification test", 19);
  }
  {
    const LocalPolynomial wide = fit(X, y, arma::vec{0.3, 0.5});
    const arma::mat E = arma::randu<arma::mat>(7, 2) * 0.6 + 0.2;
    BootstrapOptions o;
    o.type = BootstrapType::pairs;
    o.replications = 30;
    Recorder rec;
    bootstrap_bands(wide, E, o);
    rec.expect_one_task("pairs bootstrap", 30);
  }
}
