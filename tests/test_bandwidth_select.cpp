// Bandwidth selection (bandwidth_select.hpp): objectives against literal formulas and refits,
// the analytic gradient against central differences, the search against brute-force grids,
// and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "attnreg/bandwidth/bandwidth_select.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/solve/local_fit.hpp"
#include "attnreg/bandwidth/plugin_bandwidth.hpp"

using namespace attnreg;

namespace {

// n rows: continuous columns uniform on [0, 1], then (when with_cat) one unordered column with
// 3 levels that shifts y.
void make_data(std::size_t n, std::size_t dc, bool with_cat, unsigned seed, arma::mat& X,
               arma::vec& y) {
  arma::arma_rng::set_seed(seed);
  X.set_size(n, dc + (with_cat ? 1 : 0));
  X.cols(0, dc - 1) = arma::randu<arma::mat>(n, dc);
  y = arma::sin(5.0 * X.col(0)) + 0.3 * arma::randn<arma::vec>(n);
  if (dc > 1) y += X.col(1) % X.col(1);
  if (with_cat) {
    arma::vec c = arma::floor(3.0 * arma::randu<arma::vec>(n));
    X.col(dc) = c;
    y += 0.5 * c;
  }
}

std::string types_for(std::size_t dc, bool with_cat) {
  return std::string(dc, 'c') + (with_cat ? "u" : "");
}

// Literal leave-one-out: refit LocalPolynomial on the other n - 1 rows and predict x_i.
double literal_cv(const arma::mat& X, const arma::vec& y, const arma::vec& bw,
                  const LocalFitOptions& o) {
  double s = 0;
  LocalFitOptions oo = o;
  oo.compute_fitted = false;
  for (arma::uword i = 0; i < X.n_rows; ++i) {
    arma::mat Xi = X;
    arma::vec yi = y;
    Xi.shed_row(i);
    yi.shed_row(i);
    LocalPolynomial lp(oo);
    lp.fit(Xi, yi, bw);
    const double e = y(i) - lp.predict(X.row(i))(0, 0);
    s += e * e;
  }
  return s / X.n_rows;
}

}  // namespace

TEST(BandwidthSelect, CvEqualsLiteralRefitAndLooFitted) {
  for (int degree : {0, 1})
    for (double ridge : {0.0, 0.3})
      for (bool cat : {false, true}) {
        if (degree == 0 && ridge > 0) continue;
        arma::mat X;
        arma::vec y;
        make_data(30, 2, cat, 7 + degree, X, y);
        arma::vec bw = cat ? arma::vec{0.3, 0.4, 0.2} : arma::vec{0.3, 0.4};
        BandwidthSelectOptions o;
        o.degree = degree;
        o.ridge = ridge;
        o.kernel.var_types = types_for(2, cat);
        BandwidthObjective obj(X, y, o);
        const double cv = obj(bw);
        LocalFitOptions lo;
        lo.degree = degree;
        lo.ridge = ridge;
        lo.kernel = o.kernel;
        EXPECT_NEAR(cv, literal_cv(X, y, bw, lo), 1e-10 * cv) << degree << ridge << cat;
        LocalPolynomial lp(lo);
        lp.fit(X, y, bw);
        const double cv2 = arma::mean(arma::square(y - lp.loo_fitted()));
        EXPECT_NEAR(cv, cv2, 1e-12 * cv);
      }
}

// Tied rows (integer-valued columns, as years of schooling): the objective runs over the
// distinct rows with counts (bandwidth_gradient.cpp, "Ties", eq. 4); it must equal the literal
// per-row refits, the smoother's own leave-one-out and the AICc/GCV formulas, and its gradient
// the central differences, for lc/ll, ridge, and a categorical column.
TEST(BandwidthSelect, TiedRowsGiveTheSameObjectiveAndGradient) {
  for (int degree : {0, 1})
    for (double ridge : {0.0, 0.2})
      for (bool cat : {false, true}) {
        if (degree == 0 && ridge > 0) continue;
        arma::mat X;
        arma::vec y;
        make_data(45, 2, cat, 21 + degree, X, y);
        X.cols(0, 1) = arma::round(6.0 * X.cols(0, 1)) / 6.0;  // 7 x 7 values: many ties
        X.row(3) = X.row(4);                                    // and an exact duplicate row
        const arma::vec bw = cat ? arma::vec{0.25, 0.3, 0.3} : arma::vec{0.25, 0.3};
        BandwidthSelectOptions o;
        o.degree = degree;
        o.ridge = ridge;
        o.kernel.var_types = types_for(2, cat);
        BandwidthObjective obj(X, y, o);
        ASSERT_LT(obj.n_unique(), X.n_rows);
        arma::vec g;
        const double cv = obj(bw, &g);
        LocalFitOptions lo;
        lo.degree = degree;
        lo.ridge = ridge;
        lo.kernel = o.kernel;
        EXPECT_NEAR(cv, literal_cv(X, y, bw, lo), 1e-10 * cv) << degree << ridge << cat;
        LocalPolynomial lp(lo);
        lp.fit(X, y, bw);
        EXPECT_NEAR(cv, arma::mean(arma::square(y - lp.loo_fitted())), 1e-10 * cv);
        for (arma::uword j = 0; j < bw.n_elem; ++j) {
          const double step = 1e-5;
          arma::vec bp = bw, bm = bw;
          if (j < 2) {
            bp(j) = bw(j) * std::exp(step);
            bm(j) = bw(j) * std::exp(-step);
          } else {
            bp(j) = bw(j) + step;
            bm(j) = bw(j) - step;
          }
          const double fd = (obj(bp) - obj(bm)) / (2 * step);
          EXPECT_NEAR(g(j), fd, 1e-5 * std::max(1.0, std::fabs(fd))) << "cv column " << j;
        }
        const double n = static_cast<double>(X.n_rows), tr = lp.effective_df();
        const double rss = arma::accu(arma::square(y - lp.fitted()));
        for (BandwidthMethod m : {BandwidthMethod::aic, BandwidthMethod::gcv}) {
          o.method = m;
          BandwidthObjective full(X, y, o);
          arma::vec gf;
          const double f = full(bw, &gf);
          EXPECT_NEAR(full.last_trace(), tr, 1e-10 * tr);
          EXPECT_NEAR(full.last_rss(), rss, 1e-10 * rss);
          const double want = m == BandwidthMethod::aic
                                  ? std::log(rss / n) + (1 + tr / n) / (1 - (tr + 2) / n)
                                  : n * rss / ((n - tr) * (n - tr));
          EXPECT_NEAR(f, want, 1e-10 * std::fabs(want));
          for (arma::uword j = 0; j < bw.n_elem; ++j) {
            const double step = 1e-5;
            arma::vec bp = bw, bm = bw;
            if (j < 2) {
              bp(j) = bw(j) * std::exp(step);
              bm(j) = bw(j) * std::exp(-step);
            } else {
              bp(j) = bw(j) + step;
              bm(j) = bw(j) - step;
            }
            const double fd = (full(bp) - full(bm)) / (2 * step);
            EXPECT_NEAR(gf(j), fd, 1e-5 * std::max(1.0, std::fabs(fd)))
                << bandwidth_method_name(m) << " column " << j;
          }
        }
      }
}

TEST(BandwidthSelect, AicAndGcvEqualTheirFormulas) {
  for (int degree : {0, 1})
    for (bool cat : {false, true}) {
      arma::mat X;
      arma::vec y;
      make_data(40, 1, cat, 3, X, y);
      const arma::vec bw = cat ? arma::vec{0.15, 0.3} : arma::vec{0.15};
      LocalFitOptions lo;
      lo.degree = degree;
      lo.kernel.var_types = types_for(1, cat);
      LocalPolynomial lp(lo);
      lp.fit(X, y, bw);
      const double n = 40, tr = lp.effective_df();
      const double rss = arma::accu(arma::square(y - lp.fitted()));
      BandwidthSelectOptions o;
      o.degree = degree;
      o.kernel = lo.kernel;
      o.method = BandwidthMethod::aic;
      const double aic = BandwidthObjective(X, y, o)(bw);
      EXPECT_NEAR(aic, std::log(rss / n) + (1 + tr / n) / (1 - (tr + 2) / n), 1e-10);
      o.method = BandwidthMethod::gcv;
      BandwidthObjective g(X, y, o);
      EXPECT_NEAR(g(bw), n * rss / ((n - tr) * (n - tr)), 1e-10 * rss);
      EXPECT_NEAR(g.last_trace(), tr, 1e-10);
    }
}

TEST(BandwidthSelect, GradientMatchesCentralDifferences) {
  const KernelType kernels[] = {KernelType::gaussian, KernelType::epanechnikov,
                                KernelType::biweight, KernelType::tricube, KernelType::cosine};
  const BandwidthMethod methods[] = {BandwidthMethod::cv_ls, BandwidthMethod::aic,
                                     BandwidthMethod::gcv};
  for (KernelType kt : kernels)
    for (int degree : {0, 1})
      for (BandwidthMethod m : methods) {
        arma::mat X;
        arma::vec y;
        make_data(60, 2, true, 11, X, y);
        BandwidthSelectOptions o;
        o.degree = degree;
        o.kernel.kernel = Kernel(kt);
        o.method = m;
        o.kernel.var_types = "ccu";
        o.ridge = degree == 1 ? 0.05 : 0.0;
        BandwidthObjective obj(X, y, o);
        const bool compact = kt != KernelType::gaussian;
        const arma::vec bw = compact ? arma::vec{0.55, 0.7, 0.35} : arma::vec{0.2, 0.3, 0.35};
        arma::vec g;
        const double f0 = obj(bw, &g);
        ASSERT_TRUE(std::isfinite(f0));
        for (arma::uword j = 0; j < 3; ++j) {
          // theta = log h (continuous), lambda (categorical).
          const double step = 1e-5;
          arma::vec bp = bw, bm = bw;
          if (j < 2) {
            bp(j) = bw(j) * std::exp(step);
            bm(j) = bw(j) * std::exp(-step);
          } else {
            bp(j) = bw(j) + step;
            bm(j) = bw(j) - step;
          }
          const double fd = (obj(bp) - obj(bm)) / (2 * step);
          EXPECT_NEAR(g(j), fd, 1e-5 * std::max(1.0, std::fabs(fd)))
              << Kernel(kt).name() << " degree " << degree << " method "
              << bandwidth_method_name(m) << " column " << j;
        }
      }
}

TEST(BandwidthSelect, OrderedKernelsGradient) {
  arma::mat X;
  arma::vec y;
  make_data(50, 1, true, 5, X, y);
  for (const char* name : {"li_racine", "wang_van_ryzin"}) {
    BandwidthSelectOptions o;
    o.kernel.var_types = "co";
    o.kernel.ordered_kernel = CategoricalKernel::from_name(name, true, "okertype");
    BandwidthObjective obj(X, y, o);
    const arma::vec bw{0.2, 0.4};
    arma::vec g;
    obj(bw, &g);
    const double fd = (obj(arma::vec{0.2, 0.4 + 1e-6}) - obj(arma::vec{0.2, 0.4 - 1e-6})) / 2e-6;
    EXPECT_NEAR(g(1), fd, 1e-5 * std::max(1.0, std::fabs(fd))) << name;
  }
}

TEST(BandwidthSelect, OneDimOptimumBeatsBruteForceGrid) {
  for (int degree : {0, 1})
    for (BandwidthMethod m : {BandwidthMethod::cv_ls, BandwidthMethod::aic, BandwidthMethod::gcv})
      for (unsigned seed : {1u, 2u}) {
        arma::mat X;
        arma::vec y;
        make_data(150, 1, false, seed, X, y);
        BandwidthSelectOptions o;
        o.degree = degree;
        o.method = m;
        const BandwidthSelectResult r = select_bandwidth(X, y, o);
        BandwidthObjective obj(X, y, o);
        double best = INFINITY, hbest = 0;
        for (int g = 0; g <= 400; ++g) {
          const double h = std::exp(std::log(0.01) + (std::log(1.0) - std::log(0.01)) * g / 400.0);
          if (h < obj.lower()(0)) continue;
          const double v = obj(arma::vec{h});
          if (v < best) {
            best = v;
            hbest = h;
          }
        }
        EXPECT_LE(r.objective, best + 1e-9 * std::fabs(best)) << bandwidth_method_name(m);
        EXPECT_NEAR(r.bandwidth(0), hbest, 0.02 * hbest) << bandwidth_method_name(m);
        EXPECT_TRUE(r.converged) << r.message;
        EXPECT_EQ(r.curve_grid.n_elem, 30u);
        EXPECT_NEAR(obj(r.bandwidth), r.objective, 1e-12 * std::fabs(r.objective));
      }
}

TEST(BandwidthSelect, MixedOptimumBeatsBruteForceGrid) {
  for (int degree : {0, 1}) {
    arma::mat X;
    arma::vec y;
    make_data(120, 1, true, 4, X, y);
    BandwidthSelectOptions o;
    o.degree = degree;
    o.kernel.var_types = "cu";
    o.n_starts = 4;
    o.seed = 42;
    const BandwidthSelectResult r = select_bandwidth(X, y, o);
    BandwidthObjective obj(X, y, o);
    double best = INFINITY;
    for (int a = 0; a <= 60; ++a)
      for (int b = 0; b <= 20; ++b) {
        const double h = std::exp(std::log(0.02) + (std::log(1.0) - std::log(0.02)) * a / 60.0);
        const double lam = obj.lower()(1) + (obj.upper()(1) - obj.lower()(1)) * b / 20.0;
        if (h < obj.lower()(0)) continue;
        best = std::min(best, obj(arma::vec{h, lam}));
      }
    EXPECT_LE(r.objective, best + 1e-9 * best);
    // Categorical lambda in range.
    EXPECT_GE(r.bandwidth(1), 0.0);
    EXPECT_LE(r.bandwidth(1), 2.0 / 3.0);
    EXPECT_GT(r.bandwidth(0), 0.0);
    // Reproducible with the seed.
    const BandwidthSelectResult r2 = select_bandwidth(X, y, o);
    EXPECT_EQ(r.bandwidth(0), r2.bandwidth(0));
    EXPECT_EQ(r.n_evals, r2.n_evals);
  }
}

TEST(BandwidthSelect, TwoContinuousColumnsBeatGrid) {
  arma::mat X;
  arma::vec y;
  make_data(150, 2, false, 9, X, y);
  BandwidthSelectOptions o;
  o.kernel.kernel = Kernel(KernelType::epanechnikov);
  const BandwidthSelectResult r = select_bandwidth(X, y, o);
  BandwidthObjective obj(X, y, o);
  double best = INFINITY;
  for (int a = 0; a <= 40; ++a)
    for (int b = 0; b <= 40; ++b) {
      const arma::vec h{std::exp(std::log(0.05) + std::log(40.0) * a / 40.0),
                        std::exp(std::log(0.05) + std::log(40.0) * b / 40.0)};
      if (h(0) < obj.lower()(0) || h(1) < obj.lower()(1)) continue;
      best = std::min(best, obj(h));
    }
  EXPECT_LE(r.objective, best + 1e-9 * best);
  EXPECT_TRUE(arma::all(r.bandwidth >= obj.lower()));
}

TEST(BandwidthSelect, RotAndDpi) {
  arma::mat X;
  arma::vec y;
  make_data(200, 1, false, 2, X, y);
  BandwidthSelectOptions o;
  o.method = BandwidthMethod::rot;
  const BandwidthSelectResult r = select_bandwidth(X, y, o);
  const double sd = arma::stddev(X.col(0));
  arma::vec s = arma::sort(X.col(0));
  const double iqr = (s(149) + 0.25 * (s(150) - s(149))) - (s(49) + 0.75 * (s(50) - s(49)));
  EXPECT_NEAR(r.bandwidth(0), 1.06 * std::min(sd, iqr / 1.349) * std::pow(200.0, -0.2), 1e-12);
  o.method = BandwidthMethod::dpi;
  const BandwidthSelectResult d = select_bandwidth(X, y, o);
  EXPECT_NEAR(d.bandwidth(0), dpi_local_linear(X.col(0), y).bandwidth, 1e-15);
  o.kernel.var_types = "cu";
  arma::mat Xc;
  make_data(200, 1, true, 2, Xc, y);
  EXPECT_THROW(select_bandwidth(Xc, y, o), InvalidArgument);
}

TEST(BandwidthSelect, DegenerateDataGiveClearErrors) {
  BandwidthSelectOptions o;
  auto msg = [&](const arma::mat& X, const arma::vec& y) {
    try {
      select_bandwidth(X, y, o);
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  arma::mat X(20, 1, arma::fill::ones);
  arma::vec y = arma::randu<arma::vec>(20);
  EXPECT_NE(msg(X, y).find("X: continuous column 1 has 1 distinct"), std::string::npos)
      << msg(X, y);
  X.rows(0, 9).fill(2.0);
  EXPECT_NE(msg(X, y).find("2 distinct"), std::string::npos) << msg(X, y);
  arma::mat X4 = arma::randu<arma::mat>(4, 1);
  EXPECT_NE(msg(X4, arma::randu<arma::vec>(4)).find("at least 5 rows"), std::string::npos);
  arma::mat Xn = arma::randu<arma::mat>(10, 1);
  Xn(3, 0) = NAN;
  EXPECT_NE(msg(Xn, arma::randu<arma::vec>(10)).find("X"), std::string::npos);
  EXPECT_NE(msg(arma::randu<arma::mat>(10, 1), arma::randu<arma::vec>(9)).find("y:"),
            std::string::npos);
  EXPECT_THROW(bandwidth_method_from_name("cv_foo"), InvalidArgument);
  EXPECT_EQ(bandwidth_method_from_name("cv.aic"), BandwidthMethod::aic);
  // A grid of 10^9 CV passes would run for hours: capped, with the cap and the reason.
  o.grid_size = 1000000000;
  EXPECT_NE(msg(arma::randu<arma::mat>(30, 1), arma::randu<arma::vec>(30))
                .find("grid_size: must be between 0 and 10000 (each grid point is one full "
                      "cross-validation pass"),
            std::string::npos);
}

TEST(SelectBandwidth, ResponseAtExtremeScalesSelectsTheSameBandwidth) {
  // The criteria's minimisers do not depend on the scale of y, but at |y| ~ 1e+-150 the
  // squared residuals lost precision and the search went elsewhere (50-100% off, no word).
  arma::arma_rng::set_seed(21);
  const arma::mat X = arma::randu<arma::mat>(150, 2);
  const arma::vec y = arma::sin(4 * X.col(0)) + arma::cos(4 * X.col(1)) + 0.2 * arma::randn(150);
  for (BandwidthMethod m : {BandwidthMethod::cv_ls, BandwidthMethod::aic, BandwidthMethod::gcv}) {
    BandwidthSelectOptions o;
    o.method = m;
    const BandwidthSelectResult base = select_bandwidth(X, y, o);
    for (double c : {1e-150, 1e150}) {
      const BandwidthSelectResult r = select_bandwidth(X, y * c, o);
      EXPECT_LT(arma::abs(r.bandwidth / base.bandwidth - 1).max(), 1e-5) << bandwidth_method_name(m) << c;
      const double want = m == BandwidthMethod::aic ? base.objective + 2 * std::log(c)
                                                    : base.objective * c * c;
      EXPECT_NEAR(r.objective, want, 1e-9 * std::abs(want)) << bandwidth_method_name(m) << c;
    }
  }
}

TEST(SelectBandwidth, RegressorsAtExtremeScalesGiveTheScaledBandwidth) {
  // x * 1e-300 was reported "constant" and x * 1e307 overflowed the search box ("bandwidth:
  // must be > 0 and finite ... got inf" although no bandwidth was passed).
  arma::arma_rng::set_seed(22);
  const arma::mat X = arma::randu<arma::mat>(120, 1);
  const arma::vec y = arma::sin(3 * X.col(0)) + 0.2 * arma::randn(120);
  for (BandwidthMethod m : {BandwidthMethod::cv_ls, BandwidthMethod::dpi}) {
    BandwidthSelectOptions o;
    o.method = m;
    const BandwidthSelectResult base = select_bandwidth(X, y, o);
    for (double c : {1e-300, 1e-307, 1e300, 1e307}) {
      const BandwidthSelectResult r = select_bandwidth(X * c, y, o);
      EXPECT_NEAR(r.bandwidth(0) / c, base.bandwidth(0), 1e-9 * base.bandwidth(0))
          << bandwidth_method_name(m) << " " << c;
      EXPECT_NEAR(r.objective, base.objective, 1e-9 * std::abs(base.objective));
    }
  }
}

TEST(SelectBandwidth, StartOptionRefinesLocallyFromTheGivenBandwidths) {
  arma::arma_rng::set_seed(12);
  const arma::mat X = arma::randu<arma::mat>(150, 2);
  const arma::vec y = arma::sin(6 * X.col(0)) + X.col(1) + 0.2 * arma::randn(150);
  BandwidthSelectOptions o;
  const BandwidthSelectResult full = select_bandwidth(X, y, o);
  BandwidthSelectOptions l = o;
  l.start = full.bandwidth;
  l.n_starts = 1;
  l.grid_size = 0;
  const BandwidthSelectResult local = select_bandwidth(X, y, l);
  EXPECT_LT(arma::abs(arma::log(local.bandwidth / full.bandwidth)).max(), 1e-3);
  EXPECT_LE(local.objective, full.objective * (1 + 1e-9));
  EXPECT_LT(local.n_evals, full.n_evals);
  l.start = arma::vec{0.1};
  EXPECT_THROW(select_bandwidth(X, y, l), InvalidArgument);
}

// at_bound: -1 / +1 exactly where the answer equals the box's lower / upper end, 0 inside
// (the bindings warn from this flag).
TEST(BandwidthSelect, AtBoundFlagsTheBoxEnds) {
  arma::arma_rng::set_seed(7);
  const arma::uword n = 200;
  // A discrete regressor whose cells are exact, local constant: leave-one-out wants the cell
  // means, which the objective reaches only at the box's lower end (the estimator's limit: the
  // neighbouring cells' weights at the engine's underflow threshold). With noise in the cells
  // a tiny borrowing from the neighbours (weight ~1e-5 at h ~ 0.22) lowers the leave-one-out
  // variance, a genuine interior optimum that the former floor (gap / 3) hid.
  arma::mat Xd(n, 1);
  for (arma::uword i = 0; i < n; ++i) Xd(i, 0) = static_cast<double>(i % 5);
  const arma::vec yd = arma::square(Xd.col(0));
  BandwidthSelectOptions o;
  o.degree = 0;
  const BandwidthSelectResult lo = select_bandwidth(Xd, yd, o);
  ASSERT_EQ(lo.at_bound.size(), 1u);
  EXPECT_EQ(lo.at_bound[0], -1);
  EXPECT_NEAR(lo.bandwidth(0), lo.lower(0), 1e-9 * lo.lower(0));
  // A smooth curve: interior.
  const arma::vec x = arma::randu<arma::vec>(n);
  const arma::vec ys = arma::sin(6.0 * x) + 0.3 * arma::randn<arma::vec>(n);
  o.degree = 1;
  const BandwidthSelectResult in = select_bandwidth(arma::mat(x), ys, o);
  ASSERT_EQ(in.at_bound.size(), 1u);
  EXPECT_EQ(in.at_bound[0], 0);
  EXPECT_GT(in.bandwidth(0), in.lower(0) * 1.01);
  EXPECT_LT(in.bandwidth(0), in.upper(0) * 0.99);
  // Every flag agrees with the box; the closed-form rules flag nothing.
  o.method = BandwidthMethod::rot;
  const BandwidthSelectResult rot = select_bandwidth(arma::mat(x), ys, o);
  ASSERT_EQ(rot.at_bound.size(), 1u);
  EXPECT_EQ(rot.at_bound[0], 0);
}

// An evaluation whose objective is undefined (+inf) remembers the distinct rows whose fit did
// not exist, runs them first at later evaluations and stops at the first fit that does not
// exist (BandwidthObjective::UndefinedHint). Only the order of work may change: after undefined
// evaluations the objective and its gradient must be those of a fresh objective and of the
// literal leave-one-out refits, on mixed data with ties (two unordered columns, one ordered,
// integer-valued continuous ones), for cv_ls, aic and gcv, and with one or two threads.
TEST(BandwidthSelect, UndefinedEvaluationsLeaveLaterValuesUnchanged) {
  for (std::size_t n : {std::size_t{70}, std::size_t{1500}})
    for (unsigned seed : {3u, 8u}) {
      arma::arma_rng::set_seed(seed);
      arma::mat X(n, 5);
      X.col(0) = arma::floor(2.0 * arma::randu<arma::vec>(n));  // unordered, 2 levels
      X.col(1) = arma::floor(3.0 * arma::randu<arma::vec>(n));  // unordered, 3 levels
      X.col(2) = arma::floor(4.0 * arma::randu<arma::vec>(n));  // ordered, 4 levels
      X.col(3) = arma::floor(12.0 * arma::randu<arma::vec>(n)); // integer-valued
      X.col(4) = arma::randu<arma::vec>(n);
      if (n < 100) X.col(4) = arma::round(8.0 * X.col(4));     // ties in every column
      X.row(5) = X.row(6);                                     // an exact duplicate row
      X(9, 3) = 40.0;                                          // an isolated row
      const arma::vec y = arma::sin(0.5 * X.col(3)) + X.col(4) + 0.3 * X.col(0) -
                          0.2 * X.col(2) + 0.3 * arma::randn<arma::vec>(n);
      const arma::vec bad{0.3, 0.3, 0.3, 0.05, 0.02};  // some fits do not exist
      const std::vector<arma::vec> good{arma::vec{0.2, 0.4, 0.3, 2.0, 0.6},
                                        arma::vec{0.1, 0.2, 0.5, 5.0, 2.5}};
      for (BandwidthMethod m : {BandwidthMethod::cv_ls, BandwidthMethod::aic,
                                BandwidthMethod::gcv}) {
        if (n > 100 && m != BandwidthMethod::cv_ls) continue;
        for (int threads : {1, 2}) {
          BandwidthSelectOptions o;
          o.kernel.var_types = "uuocc";
          o.method = m;
          o.kernel.n_threads = threads;
          const BandwidthObjective warm(X, y, o);
          arma::vec g;
          EXPECT_TRUE(std::isinf(warm(bad, &g))) << n << " " << seed;
          EXPECT_TRUE(arma::all(g == 0.0));
          for (const arma::vec& bw : good) {
            EXPECT_TRUE(std::isinf(warm(bad)));  // the remembered rows run first
            arma::vec gw, gf;
            const double fw = warm(bw, &gw);
            const BandwidthObjective fresh(X, y, o);
            const double ff = fresh(bw, &gf);
            ASSERT_TRUE(std::isfinite(ff));
            EXPECT_NEAR(fw, ff, 1e-12 * std::fabs(ff)) << n << " " << seed << " " << threads;
            EXPECT_LE(arma::abs(gw - gf).max(), 1e-12 * std::max(1.0, arma::abs(gf).max()));
            if (m == BandwidthMethod::cv_ls && n < 100) {
              LocalFitOptions lo;
              lo.kernel = o.kernel;
              LocalPolynomial lp(lo);
              lp.fit(X, y, bw);
              const double cv = arma::mean(arma::square(y - lp.loo_fitted()));
              EXPECT_NEAR(fw, cv, 1e-10 * cv);
            }
          }
        }
      }
    }
}
