// attnreg::rd::rdplot: binned means and polynomial fits against direct computations, and the
// bad-input policy (attnreg/rd/rdplot.hpp; the rdrobust oracle runs in
// python-package/tests/test_rdplot.py).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "attnreg/base/error.hpp"
#include "attnreg/rd/rdplot.hpp"

namespace {

namespace rd = attnreg::rd;

void simulate(std::size_t n, double c, unsigned seed, std::vector<double>& y, std::vector<double>& x) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::normal_distribution<double> e(0, 0.3);
  y.resize(n);
  x.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = c + u(g);
    const double d = x[i] - c;
    y[i] = 1 + d - 0.5 * d * d + (d >= 0 ? 0.7 : 0) + e(g);
  }
}

TEST(RdPlot, EvenBinsMeansAreDirectMeans) {
  std::vector<double> y, x;
  simulate(500, 3.0, 1, y, x);
  rd::RdPlotOptions o;
  o.c = 3.0;
  o.nbins_left = 5;
  o.nbins_right = 8;
  const rd::RdPlotResult r = rd::rdplot(y, x, {}, o);
  ASSERT_EQ(r.left.J, 5);
  ASSERT_EQ(r.right.J, 8);
  for (const rd::RdPlotSide* s : {&r.left, &r.right}) {
    std::size_t total = 0;
    for (int j = 0; j < s->J; ++j) {
      double sy = 0;
      std::size_t cnt = 0;
      for (std::size_t i = 0; i < x.size(); ++i) {
        const bool side = (s == &r.right) == (x[i] >= 3.0);
        const bool last = j == s->J - 1;
        if (side && x[i] >= s->edges[j] && (x[i] < s->edges[j + 1] || (last && x[i] <= s->edges[j + 1]))) {
          sy += y[i];
          ++cnt;
        }
      }
      ASSERT_EQ(cnt, s->count[j]);
      total += cnt;
      if (cnt) EXPECT_NEAR(s->mean_y[j], sy / cnt, 1e-13 * (1 + std::fabs(sy / cnt)));
    }
    EXPECT_EQ(total, s->n);
  }
}

TEST(RdPlot, LinearDataGivesExactLinearFit) {
  // y = a + b (x - c) exactly on each side: the p = 2 fit recovers it to rounding.
  std::vector<double> y, x;
  simulate(300, -2.0, 2, y, x);
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] < -2.0 ? 1 + 2 * (x[i] + 2) : 4 - (x[i] + 2);
  rd::RdPlotOptions o;
  o.c = -2.0;
  o.p = 2;
  o.nbins_left = o.nbins_right = 4;
  const rd::RdPlotResult r = rd::rdplot(y, x, {}, o);
  EXPECT_NEAR(r.left.coef[0], 1, 1e-12);
  EXPECT_NEAR(r.left.coef[1], 2, 1e-12);
  EXPECT_NEAR(r.left.coef[2], 0, 1e-11);
  EXPECT_NEAR(r.right.coef[0], 4, 1e-12);
  EXPECT_NEAR(r.right.coef[1], -1, 1e-12);
}

TEST(RdPlot, EveryRuleGivesPositiveBins) {
  std::vector<double> y, x;
  simulate(800, 0.0, 3, y, x);
  for (const char* s : {"es", "espr", "esmv", "esmvpr", "qs", "qspr", "qsmv", "qsmvpr"}) {
    rd::RdPlotOptions o;
    o.binselect = rd::parse_binselect(s);
    const rd::RdPlotResult r = rd::rdplot(y, x, {}, o);
    EXPECT_GE(r.left.J, 1) << s;
    EXPECT_GE(r.right.J, 1) << s;
    EXPECT_EQ(r.binselect, s);
    // quantile-spaced bins hold (nearly) equal counts
    if (s[0] == 'q') {
      const auto mm = std::minmax_element(r.left.count.begin(), r.left.count.end());
      EXPECT_LE(*mm.second - *mm.first, 2u) << s;
    }
  }
}

TEST(RdPlot, BadInput) {
  std::vector<double> y, x;
  simulate(100, 0.0, 4, y, x);
  rd::RdPlotOptions o;
  EXPECT_THROW(rd::parse_binselect("xx"), attnreg::InvalidArgument);
  o.c = 5;
  EXPECT_THROW(rd::rdplot(y, x, {}, o), attnreg::InvalidArgument);
  o.c = 0;
  std::vector<double> w(x.size(), 1.0);
  w[0] = -1;
  EXPECT_THROW(rd::rdplot(y, x, w, o), attnreg::InvalidArgument);
  x[1] = INFINITY;
  EXPECT_THROW(rd::rdplot(y, x, {}, o), attnreg::InvalidArgument);
}

}  // namespace
