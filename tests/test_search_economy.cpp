// The economical one-column bandwidth search (binned curve locates the basins, the exact
// objective polishes; BandwidthSelectOptions::exact_curve = false) against the search seeded
// by the exact objective curve (exact_curve = true): the same minimum of the exact objective,
// on several data shapes; and the one-sort fast-sum objective against the all-pairs one.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "attnreg/bandwidth/bandwidth_select.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/detail/bandwidth_select_internal.hpp"

using namespace attnreg;

namespace {

// x in [0, 1] of a given shape, y = a smooth signal (optionally with a fine ripple) + noise.
void shaped(const std::string& shape, std::size_t n, unsigned seed, bool ripple, arma::mat& X,
            arma::vec& y) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> U(0.0, 1.0);
  std::normal_distribution<double> N(0.0, 1.0);
  X.set_size(n, 1);
  y.set_size(n);
  for (std::size_t i = 0; i < n; ++i) {
    double x = U(rng);
    if (shape == "ties") x = std::round(x * 1500.0) / 1500.0;  // ~1,500 distinct values
    if (shape == "clusters") x = (i % 2 == 0 ? 0.2 : 0.7) + 0.05 * N(rng);
    X(i, 0) = x;
    y(i) = std::sin(2.0 * M_PI * x) + (ripple ? 0.4 * std::sin(30.0 * M_PI * x) : 0.0) +
           0.3 * N(rng);
  }
  if (shape == "shifted") X.col(0) += 1e6;
}

BandwidthSelectResult search(const arma::mat& X, const arma::vec& y, KernelType k, int degree,
                             bool exact_curve) {
  BandwidthSelectOptions o;
  o.kernel.kernel = Kernel(k);
  o.degree = degree;
  o.exact_curve = exact_curve;
  return select_bandwidth(X, y, o);
}

}  // namespace

TEST(SearchEconomy, SameMinimumAsTheExactCurveSearch) {
  struct Case {
    std::string shape;
    std::size_t n;
    KernelType kernel;
    int degree;
    bool ripple;
  };
  const Case cases[] = {
      {"uniform", 1500, KernelType::gaussian, 1, false},
      {"uniform", 1500, KernelType::gaussian, 0, false},
      {"uniform", 1500, KernelType::gaussian, 1, true},  // a second basin at small h
      {"ties", 4000, KernelType::gaussian, 1, false},
      {"clusters", 1500, KernelType::gaussian, 1, false},
      {"shifted", 1500, KernelType::gaussian, 1, true},
      {"uniform", 2000, KernelType::epanechnikov, 1, false},
      {"clusters", 2000, KernelType::biweight, 0, true},
      {"uniform", 40, KernelType::gaussian, 1, false},  // tiny n: the exact curve itself
      // Just above the pair engine's switch (kEconomyMinRows): a guide of ~n grid points.
      {"uniform", 600, KernelType::gaussian, 1, true},
      {"clusters", 520, KernelType::gaussian, 0, false},
      {"uniform", 499, KernelType::gaussian, 1, true},  // just below: the exact curve
      // A compact kernel just below its switch (kEconomyMinRowsFastSums): the exact curve.
      {"uniform", 999, KernelType::epanechnikov, 1, false},
      // The Gaussian guide's switch from one node per row to the full grid
      // (kEconomyFullGridRows), on sparse data: cluster tails.
      {"clusters", kEconomyFullGridRows - 1, KernelType::gaussian, 1, false},
      {"clusters", kEconomyFullGridRows, KernelType::gaussian, 1, false},
      // The searches' Newton first steps (smooth kernels; bandwidth_curve.cpp) at 1,000 rows,
      // on uniform, clustered and rippled data.
      {"uniform", 1000, KernelType::gaussian, 1, false},
      {"clusters", 1000, KernelType::gaussian, 1, false},
      {"uniform", 1000, KernelType::gaussian, 0, true},
  };
  for (const Case& c : cases) {
    for (unsigned seed : {1u, 2u}) {
      SCOPED_TRACE(c.shape + " n=" + std::to_string(c.n) + " kernel " + Kernel(c.kernel).name() +
                   " degree " + std::to_string(c.degree) + (c.ripple ? " ripple" : "") +
                   " seed " + std::to_string(seed));
      arma::mat X;
      arma::vec y;
      shaped(c.shape, c.n, seed, c.ripple, X, y);
      const BandwidthSelectResult full = search(X, y, c.kernel, c.degree, true);
      const BandwidthSelectResult econ = search(X, y, c.kernel, c.degree, false);
      EXPECT_TRUE(full.curve_exact);
      ASSERT_EQ(econ.curve_grid.n_elem, 30u);
      const bool compact = c.kernel != KernelType::gaussian;
      const std::size_t switch_n = compact ? kEconomyMinRowsFastSums : kEconomyMinRows;
      EXPECT_EQ(econ.curve_exact, c.n < switch_n);
      // The same local minimum of the exact objective: the objective to well within the
      // minimiser's stopping tolerance, the bandwidth to the flatness of the minimum (a
      // compact kernel's objective has kinks where points enter or leave windows).
      const bool smooth = c.kernel == KernelType::gaussian;
      EXPECT_NEAR(econ.objective, full.objective, (smooth ? 1e-9 : 1e-6) * full.objective);
      EXPECT_NEAR(econ.bandwidth(0), full.bandwidth(0),
                  (smooth ? 2e-3 : 2e-2) * full.bandwidth(0));
      // Both are exact objective values at the returned bandwidths.
      BandwidthSelectOptions o;
      o.kernel.kernel = Kernel(c.kernel);
      o.degree = c.degree;
      const BandwidthObjective obj(X, y, o);
      EXPECT_DOUBLE_EQ(obj(econ.bandwidth), econ.objective);
      if (c.n >= switch_n) {
        // Fewer exact evaluations where the objective is smooth. A compact kernel's objective
        // has kinks, where both searches end on the decrease test after a number of halvings
        // that depends on where the kinks fall, not on the start.
        if (smooth) {
          EXPECT_LT(econ.n_evals, full.n_evals);
        }
        // The binned curve is within a small relative distance of the exact one, on the full
        // 4001-point guide and on the one-node-per-row guide below kEconomyFullGridRows
        // (coarse where the data are sparse: cluster tails, heavy tails).
        for (arma::uword g = 0; g < econ.curve_values.n_elem; ++g) {
          EXPECT_DOUBLE_EQ(econ.curve_grid(g), full.curve_grid(g));
          const double v = econ.curve_values(g), w = full.curve_values(g);
          if (std::isfinite(v) && std::isfinite(w) && econ.curve_grid(g) > 2.0 * econ.lower(0)) {
            EXPECT_NEAR(v, w, 0.05 * w);
          }
        }
      }
    }
  }
}

TEST(SearchEconomy, ExactCurveOptionKeepsEveryExactValue) {
  arma::mat X;
  arma::vec y;
  shaped("uniform", 1200, 3, false, X, y);
  const BandwidthSelectResult full = search(X, y, KernelType::gaussian, 1, true);
  BandwidthSelectOptions o;
  const BandwidthObjective obj(X, y, o);
  ASSERT_EQ(full.curve_values.n_elem, 30u);
  for (arma::uword g = 0; g < 30; g += 7)
    EXPECT_DOUBLE_EQ(full.curve_values(g), obj(arma::vec{full.curve_grid(g)}));
}

// The fast-sum objective sorts the distinct values once (constructor); every evaluation equals
// the all-pairs one (the same centre and scaling), with ties (weights) and a shifted origin.
TEST(SearchEconomy, SortedOnceFastSumObjectiveEqualsAllPairs) {
  for (const std::string shape : {"uniform", "ties", "shifted"}) {
    for (int degree : {0, 1}) {
      SCOPED_TRACE(shape + " degree " + std::to_string(degree));
      arma::mat X;
      arma::vec y;
      shaped(shape, 3000, 7, true, X, y);
      BandwidthSelectOptions o;
      o.kernel.kernel = Kernel(KernelType::epanechnikov);
      o.degree = degree;
      const BandwidthObjective fast(X, y, o);
      o.kernel.algorithm = PairAlgorithm::all_pairs;
      const BandwidthObjective pairs(X, y, o);
      for (double h : {0.004, 0.02, 0.1, 0.7}) {
        arma::vec g1, g2;
        const double f1 = fast(arma::vec{h}, &g1), f2 = pairs(arma::vec{h}, &g2);
        ASSERT_TRUE(std::isfinite(f2));
        EXPECT_NEAR(f1, f2, 1e-10 * f2);
        EXPECT_NEAR(g1(0), g2(0), 1e-10 * (1.0 + std::fabs(g2(0))));
      }
      // A bad bandwidth still names the argument.
      EXPECT_THROW(fast(arma::vec{-1.0}), InvalidArgument);
    }
  }
}

// minimize_newton_start: the search over log h whose first step is the Newton step on a model
// curvature. f(t) = 1 + c (t - m)^2 / 2 + (t - m)^4 / 4 (curvature c at the minimum m), as an
// objective over one log-bandwidth with its exact gradient; evaluations counted.
namespace {
struct Quartic {
  double m, c;
  int evals = 0;  // as Search counts them: a point evaluated again is recalled, not counted
  double last = std::nan("");
  double operator()(const arma::vec& t, arma::vec& g) {
    if (!(t(0) == last)) ++evals;
    last = t(0);
    const double u = t(0) - m;
    g = arma::vec{c * u + u * u * u};
    return 0.5 * c * u * u + 0.25 * u * u * u * u + 1.0;
  }
};
}  // namespace

TEST(SearchEconomy, NewtonFirstStepFindsTheSameMinimumInFewerEvaluations) {
  using bandwidth_detail::minimize_newton_start;
  for (double m : {-3.0, 0.2, 1.5})
    for (double c : {1e-3, 0.1, 10.0}) {
      for (double t0 : {m - 1e-3, m + 0.05, m - 0.4}) {
        SCOPED_TRACE("m " + std::to_string(m) + " c " + std::to_string(c) + " t0 " +
                     std::to_string(t0));
        MinimizeOptions opt;
        opt.f_scale = c;  // the curve's spread sets the tolerances (bandwidth_curve.cpp)
        const double lo = m - 5.0, hi = m + 5.0;
        Quartic unit{m, c}, newton{m, c};
        const Objective fu = [&](const arma::vec& t, arma::vec& g) { return unit(t, g); };
        const Objective fn = [&](const arma::vec& t, arma::vec& g) { return newton(t, g); };
        MinimizeResult ru, rn;
        ASSERT_TRUE(minimize_from_starts(fu, arma::mat{t0}, arma::vec{lo}, arma::vec{hi}, {true},
                                         opt, ru));
        // The model's curvature off by 0.1% (the binned objective's at its minimum, against
        // the exact one's: 1e-4 ... 1e-3 relative at n = 1,000).
        ASSERT_TRUE(minimize_newton_start(fn, t0, 1.001 * (c + 3.0 * (t0 - m) * (t0 - m)), lo,
                                          hi, opt, rn));
        EXPECT_TRUE(rn.converged);
        // The gradient test, |f'| <= G = gtol max(f(t0) - f, f_scale), puts an answer within
        // G / c of m (f'' >= c); the Newton-started search's answer is that close, or at most
        // twice as far as the unit-started one's (which may also stop on the decrease test).
        arma::vec g0;
        const double G = opt.gtol * std::max(Quartic{m, c}(arma::vec{t0}, g0) - 1.0, opt.f_scale);
        EXPECT_LE(std::fabs(rn.x(0) - m), std::max(G / c, 2.0 * std::fabs(ru.x(0) - m)));
        EXPECT_LE(rn.f, std::max(1.0 + G * G / c, ru.f + 1e-15));
        // From a start near the minimum (the binned objective's refined minimum, ~1e-4 from
        // the exact one at n = 1,000), the unit first step overshoots and the Newton one
        // does not: fewer evaluations.
        if (std::fabs(t0 - m) <= 0.05) {
          EXPECT_LT(newton.evals, unit.evals);
        }
        // The answer's gradient is in units of log h (not of the scaled variable).
        EXPECT_NEAR(rn.grad(0), c * (rn.x(0) - m) + std::pow(rn.x(0) - m, 3), 1e-12);
      }
    }
}

TEST(SearchEconomy, NewtonFirstStepFallsBackToTheUnitStep) {
  using bandwidth_detail::minimize_newton_start;
  MinimizeOptions opt;
  opt.f_scale = 0.1;
  // No usable curvature: exactly minimize_from_starts (the same path, point and evaluations).
  for (double k : {0.0, -1.0, std::nan("")}) {
    Quartic a{0.3, 0.1}, b{0.3, 0.1};
    const Objective fa = [&](const arma::vec& t, arma::vec& g) { return a(t, g); };
    const Objective fb = [&](const arma::vec& t, arma::vec& g) { return b(t, g); };
    MinimizeResult ra, rb;
    ASSERT_TRUE(minimize_from_starts(fa, arma::mat{0.25}, arma::vec{-2.0}, arma::vec{2.0}, {true},
                                     opt, ra));
    ASSERT_TRUE(minimize_newton_start(fb, 0.25, k, -2.0, 2.0, opt, rb));
    EXPECT_EQ(ra.x(0), rb.x(0));
    EXPECT_EQ(ra.f, rb.f);
    EXPECT_EQ(a.evals, b.evals);
  }
  // Undefined at the start (+inf, as the bandwidth objectives below their limit): the start
  // moves up as minimize_from_starts moves it, and the search still ends at the minimum.
  int evals = 0;
  const Objective f = [&](const arma::vec& t, arma::vec& g) {
    ++evals;
    g = arma::vec{2.0 * (t(0) - 0.5)};
    return t(0) < -1.0 ? kInf : (t(0) - 0.5) * (t(0) - 0.5);
  };
  MinimizeResult r;
  ASSERT_TRUE(minimize_newton_start(f, -1.5, 2.0, -3.0, 3.0, opt, r));
  EXPECT_NEAR(r.x(0), 0.5, 1e-6);
  // The step is never longer than the unit step: a tiny model curvature does not throw the
  // search across the box.
  Quartic q{0.0, 1.0};
  const Objective fq = [&](const arma::vec& t, arma::vec& g) { return q(t, g); };
  ASSERT_TRUE(minimize_newton_start(fq, 0.5, 1e-12, -50.0, 50.0, opt, r));
  EXPECT_NEAR(r.x(0), 0.0, 1e-6);
}
