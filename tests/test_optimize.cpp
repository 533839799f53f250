// Bound-constrained L-BFGS: known minima inside the box, on a bound, and with multistart.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "attnreg/base/error.hpp"
#include "attnreg/solve/optimize.hpp"

using attnreg::minimize_box;

TEST(MinimizeBox, RosenbrockInterior) {
  auto f = [](const arma::vec& x, arma::vec& g) {
    const double a = 1 - x(0), b = x(1) - x(0) * x(0);
    g = {-2 * a - 400 * x(0) * b, 200 * b};
    return a * a + 100 * b * b;
  };
  auto r = minimize_box(f, {-1.2, 1.0}, {-5, -5}, {5, 5});
  EXPECT_TRUE(r.converged) << r.message;
  EXPECT_NEAR(r.x(0), 1.0, 1e-5);
  EXPECT_NEAR(r.x(1), 1.0, 1e-5);
}

TEST(MinimizeBox, SolutionOnTheBoundAndNeverOutside) {
  // min (x-3)^2 + (y+2)^2 over [0,1] x [-1,1] -> (1, -1)
  int outside = 0;
  auto f = [&](const arma::vec& x, arma::vec& g) {
    if (x(0) < 0 || x(0) > 1 || x(1) < -1 || x(1) > 1) ++outside;
    g = {2 * (x(0) - 3), 2 * (x(1) + 2)};
    return std::pow(x(0) - 3, 2) + std::pow(x(1) + 2, 2);
  };
  auto r = minimize_box(f, {0.5, 0.0}, {0, -1}, {1, 1});
  EXPECT_TRUE(r.converged) << r.message;
  EXPECT_DOUBLE_EQ(r.x(0), 1.0);
  EXPECT_DOUBLE_EQ(r.x(1), -1.0);
  EXPECT_EQ(outside, 0);
}

TEST(MinimizeBox, MultistartFindsTheGlobalMinimumOfADoubleWell) {
  // f = (x^2 - 1)^2 + 0.3 x: global minimum near x = -1.04, local near x = +0.96.
  auto f = [](const arma::vec& x, arma::vec& g) {
    g = {4 * x(0) * (x(0) * x(0) - 1) + 0.3};
    return std::pow(x(0) * x(0) - 1, 2) + 0.3 * x(0);
  };
  arma::mat starts = {{0.9, -0.5, 2.0}};
  auto r = attnreg::minimize_multistart(f, starts, arma::vec{-3}, arma::vec{3});
  EXPECT_LT(r.x(0), -1.0);
  EXPECT_GT(r.n_evals, 3);
  arma::vec g;
  EXPECT_THROW(minimize_box([](const arma::vec&, arma::vec& gg) { gg = {0.0}; return NAN; },
                            arma::vec{0.0}, arma::vec{-1}, arma::vec{1}),
               attnreg::NumericalError);
}

#include <thread>

#include "attnreg/base/runtime.hpp"

TEST(Runtime, CancelAllStopsGuardsOnEveryThreadUntilCleared) {
  // Faces that run the core on their own worker threads (Dask's threaded scheduler) cannot
  // deliver Ctrl-C there; cancel_all(true) makes every poll() return true, on any thread.
  attnreg::cancel_all(true);
  bool seen_in_thread = false;
  std::thread t([&] {
    attnreg::InterruptGuard g;
    seen_in_thread = g.poll();
  });
  t.join();
  attnreg::InterruptGuard here;
  EXPECT_TRUE(seen_in_thread);
  EXPECT_TRUE(here.poll());
  EXPECT_THROW(here.rethrow_if_interrupted(), attnreg::Interrupted);
  attnreg::cancel_all(false);
  attnreg::InterruptGuard after;
  EXPECT_FALSE(after.poll());
}

// The stopping rule and the steps are invariant under f -> a f + b (a > 0) and x -> x + s: the
// same path, the same minimiser. A gentle slope f = 0.3 (log-cosh) towards a minimum far from
// the start used to stop early when |f| < 1 (the tests were gtol * max(1, |f|): absolute there),
// so scaling f by 2^-30 moved the answer.
TEST(MinimizeBox, ScaleAndShiftOfTheObjectiveGiveTheSameMinimiser) {
  auto make = [](double a, double b, double s) {
    return [a, b, s](const arma::vec& x, arma::vec& g) {
      const double u = x(0) - s - 2.0, v = x(1) - s + 1.0;
      g = {a * 0.3 * std::tanh(u), a * 2.0 * v * 0.01};
      return a * (0.3 * std::log(std::cosh(u)) + 0.01 * v * v) + b;
    };
  };
  const auto base = minimize_box(make(1.0, 0.0, 0.0), {-3.0, 2.0}, {-6, -6}, {6, 6});
  EXPECT_TRUE(base.converged) << base.message;
  EXPECT_NEAR(base.x(0), 2.0, 1e-6);
  EXPECT_NEAR(base.x(1), -1.0, 1e-5);
  for (const double a : {0.5, 3.7, std::ldexp(1.0, -30), 1e-150, 1e150}) {
    for (const double b : {0.0, -7.0, 1e3}) {
      const double bb = b * std::fmin(a, 1.0);  // a shift of the objective's own order
      const auto r = minimize_box(make(a, bb, 0.0), {-3.0, 2.0}, {-6, -6}, {6, 6});
      EXPECT_TRUE(r.converged) << r.message;
      EXPECT_NEAR(r.x(0), base.x(0), 1e-7) << a << " " << b;
      EXPECT_NEAR(r.x(1), base.x(1), 1e-7) << a << " " << b;
    }
  }
  // A shift of the coordinates (a log-bandwidth under x -> c x) shifts the answer.
  const double s = std::log(1e150);
  const auto r = minimize_box(make(1.0, 0.0, s), {-3.0 + s, 2.0 + s}, {-6 + s, -6 + s},
                              {6 + s, 6 + s});
  EXPECT_NEAR(r.x(0) - s, base.x(0), 1e-7);
  EXPECT_NEAR(r.x(1) - s, base.x(1), 1e-7);
}

// A valley beside an undefined region (f = +inf below t = 0, as a bandwidth objective below the
// estimator's limit) and a nearly flat plateau towards large t, where the gradient is tiny
// and the quasi-Newton steps overshoot across the valley into the undefined region: the
// search must leave the plateau and find the valley's minimum (wage1's five-regressor cv_ls
// crept along such a plateau for ~300 evaluations until the memory was dropped after steps
// shrunk by more than 1000).
TEST(MinimizeBox, LeavesAPlateauBesideAnUndefinedRegion) {
  int evals = 0;
  auto phi = [](double t, double& dphi) {
    const double e = std::exp(-0.5 * (t - 1) * (t - 1));
    dphi = (t - 1) * e + 1e-4;
    return 1 - e + 1e-4 * (t - 1);
  };
  auto f = [&](const arma::vec& x, arma::vec& g) {
    ++evals;
    g.zeros(x.n_elem);
    if (arma::any(x < 0.0)) return arma::datum::inf;
    double v = 0;
    for (arma::uword j = 0; j < x.n_elem; ++j) v += (1.0 + j) * phi(x(j), g(j)), g(j) *= 1.0 + j;
    return v;
  };
  const arma::vec lo(3, arma::fill::value(-2.0)), hi(3, arma::fill::value(12.0));
  for (const arma::vec& x0 : {arma::vec{7.0, 8.0, 6.0}, arma::vec{9.5, 5.0, 11.0}}) {
    evals = 0;
    const auto r = minimize_box(f, x0, lo, hi);
    // d phi = 0 at (t - 1) e = -1e-4: t* = 1 - 1e-4 (1 + O(1e-8)).
    for (arma::uword j = 0; j < 3; ++j) EXPECT_NEAR(r.x(j), 1 - 1e-4, 1e-5) << j;
    std::printf("plateau start (%g, %g, %g): %d evaluations, %s\n", x0(0), x0(1), x0(2), evals,
                r.message.c_str());
  }
}
