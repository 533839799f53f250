#include "attnreg/solve/lbfgs.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <vector>

#include "attnreg/base/error.hpp"
#include "attnreg/base/runtime.hpp"

namespace attnreg {
namespace optim {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// One trial point of a line search: step a, phi(a) = f(x + a d), phi'(a), and the full x and g.
struct Trial {
  double a = 0.0, f = kInf, df = 0.0;
  arma::vec x, g;
};

// Minimiser of the cubic interpolating (a, f, df) at two trials; NaN when it does not exist.
double cubic_minimizer(const Trial& p, const Trial& q) {
  const double d1 = p.df + q.df - 3.0 * (p.f - q.f) / (p.a - q.a);
  const double disc = d1 * d1 - p.df * q.df;
  if (!(disc >= 0.0)) return std::numeric_limits<double>::quiet_NaN();
  const double d2 = std::copysign(std::sqrt(disc), q.a - p.a);
  const double denom = q.df - p.df + 2.0 * d2;
  if (denom == 0.0) return std::numeric_limits<double>::quiet_NaN();
  return q.a - (q.a - p.a) * (q.df + d2 - d1) / denom;
}

// Strong-Wolfe line search along d from (x, f0, g0) (Nocedal and Wright, Algorithms 3.5, 3.6).
// Returns true with the accepted trial in `out`. When the evaluation budget runs out it falls
// back to the best trial that satisfies sufficient decrease, if any.
bool line_search(const Objective& fg, const LbfgsOptions& o, const arma::vec& x, const arma::vec& d,
                 double f0, double df0, double a_init, int& n_evals, Trial& out) {
  bool have_ok = false;
  Trial best_ok;
  int budget = o.max_linesearch;
  auto eval = [&](double a) {
    Trial t;
    t.a = a;
    t.x = x + a * d;
    t.g.set_size(x.n_elem);
    t.f = fg(t.x, t.g);
    ++n_evals;
    --budget;
    if (!std::isfinite(t.f) || !t.g.is_finite()) {
      t.f = kInf;
      t.df = 0.0;
    } else {
      t.df = arma::dot(t.g, d);
    }
    const bool decrease = std::isfinite(t.f) && t.f <= f0 + o.c1 * a * df0;
    if (decrease && (!have_ok || t.f < best_ok.f)) {
      have_ok = true;
      best_ok = t;
    }
    return t;
  };
  auto sufficient = [&](const Trial& t) { return std::isfinite(t.f) && t.f <= f0 + o.c1 * t.a * df0; };
  auto curvature = [&](const Trial& t) { return std::fabs(t.df) <= -o.c2 * df0; };

  // lo satisfies sufficient decrease with the lowest value so far; the step lies between lo, hi.
  auto zoom = [&](Trial lo, Trial hi) -> bool {
    while (budget > 0) {
      const double a_lo = std::min(lo.a, hi.a), a_hi = std::max(lo.a, hi.a), width = a_hi - a_lo;
      if (width <= 1e-15 * std::max(1.0, a_hi)) break;
      double a = std::isfinite(hi.f) ? cubic_minimizer(lo, hi) : std::numeric_limits<double>::quiet_NaN();
      if (!std::isfinite(a) || a < a_lo + 0.1 * width || a > a_hi - 0.1 * width) {
        a = 0.5 * (lo.a + hi.a);
      }
      Trial t = eval(a);
      if (!sufficient(t) || t.f >= lo.f) {
        hi = std::move(t);
      } else {
        if (curvature(t)) {
          out = std::move(t);
          return true;
        }
        if (t.df * (hi.a - lo.a) >= 0.0) hi = lo;
        lo = std::move(t);
      }
    }
    if (have_ok) {
      out = best_ok;
      return true;
    }
    return false;
  };

  Trial prev;
  prev.a = 0.0;
  prev.f = f0;
  prev.df = df0;
  prev.x = x;
  double a = a_init;
  bool first = true;
  while (budget > 0) {
    Trial t = eval(a);
    if (!sufficient(t) || (!first && t.f >= prev.f)) return zoom(prev, t);
    if (curvature(t)) {
      out = std::move(t);
      return true;
    }
    if (t.df >= 0.0) return zoom(t, prev);
    prev = std::move(t);
    a *= 2.0;
    first = false;
  }
  if (have_ok) {
    out = best_ok;
    return true;
  }
  return false;
}

}  // namespace

LbfgsResult minimize_lbfgs(const Objective& fg, const arma::vec& x0, const LbfgsOptions& o) {
  check::require(o.memory >= 1, "memory", "must be >= 1");
  check::require(o.max_iter >= 0, "max_iter", "must be >= 0");
  check::require(o.max_linesearch >= 1, "max_linesearch", "must be >= 1");
  check::require(o.gtol >= 0.0 && o.ftol >= 0.0, "tol", "tolerances must be >= 0");
  check::require(o.c1 > 0.0 && o.c1 < o.c2 && o.c2 < 1.0, "c1/c2",
                 "line-search constants need 0 < c1 < c2 < 1");
  LbfgsResult res;
  res.x = x0;
  res.grad.set_size(x0.n_elem);
  res.f = fg(res.x, res.grad);
  res.n_evals = 1;
  if (!std::isfinite(res.f) || !res.grad.is_finite()) {
    throw NumericalError("L-BFGS: the objective or its gradient is not finite at the start");
  }
  // The tests are relative to max(1, |f|): absolute where |f| < 1. Unlike minimize_box's
  // (optimize.hpp: relative to the decrease achieved, invariant under f -> a f + b) this is kept
  // here because the one caller, the attention regression, runs in units where the response is
  // scaled by a power of two to order one (least_squares_softmax.cpp), so f is O(1) whatever
  // the data's units, and an ill-conditioned quadratic whose minimum is 0 must reach
  // |x - x*| < 1e-8 (Lbfgs.IllConditionedQuadratic): a test relative to the decrease from the
  // start stops there at 2e-6.
  auto gconv = [&](const arma::vec& g, double f) {
    return g.n_elem == 0 || arma::abs(g).max() <= o.gtol * std::max(1.0, std::fabs(f));
  };
  if (gconv(res.grad, res.f)) {
    res.converged = true;
    res.message = "gradient below tolerance";
    return res;
  }
  std::deque<arma::vec> S, Yd;
  std::deque<double> rho;
  InterruptGuard guard;
  res.message = "maximum number of iterations reached";
  for (int it = 0; it < o.max_iter; ++it) {
    if (guard.poll()) break;
    // Two-loop recursion (Algorithm 7.4): d = -H g with H_0 = gamma I.
    arma::vec q = res.grad;
    std::vector<double> alpha(S.size());
    for (std::size_t i = S.size(); i-- > 0;) {
      alpha[i] = rho[i] * arma::dot(S[i], q);
      q -= alpha[i] * Yd[i];
    }
    if (!S.empty()) q *= arma::dot(S.back(), Yd.back()) / arma::dot(Yd.back(), Yd.back());
    for (std::size_t i = 0; i < S.size(); ++i) {
      const double beta = rho[i] * arma::dot(Yd[i], q);
      q += (alpha[i] - beta) * S[i];
    }
    arma::vec d = -q;
    double df0 = arma::dot(res.grad, d);
    if (!(df0 < 0.0)) {  // not a descent direction: forget the memory, steepest descent
      S.clear();
      Yd.clear();
      rho.clear();
      d = -res.grad;
      df0 = arma::dot(res.grad, d);
    }
    const double a_init = S.empty() ? std::min(1.0, 1.0 / arma::norm(res.grad, 2)) : 1.0;
    Trial t;
    if (!line_search(fg, o, res.x, d, res.f, df0, a_init, res.n_evals, t)) {
      if (!S.empty()) {  // retry once along steepest descent with a fresh memory
        S.clear();
        Yd.clear();
        rho.clear();
        continue;
      }
      res.message = "line search found no decrease (at a minimum to machine precision?)";
      res.converged = gconv(res.grad, res.f);
      res.iterations = it;
      return res;
    }
    const arma::vec s = t.x - res.x, y = t.g - res.grad;
    const double f_prev = res.f;
    res.x = std::move(t.x);
    res.grad = std::move(t.g);
    res.f = t.f;
    res.iterations = it + 1;
    const double sy = arma::dot(s, y);
    if (sy > 1e-12 * arma::norm(s, 2) * arma::norm(y, 2)) {  // keep only positive curvature
      S.push_back(s);
      Yd.push_back(y);
      rho.push_back(1.0 / sy);
      if (static_cast<int>(S.size()) > o.memory) {
        S.pop_front();
        Yd.pop_front();
        rho.pop_front();
      }
    }
    if (gconv(res.grad, res.f)) {
      res.converged = true;
      res.message = "gradient below tolerance";
      break;
    }
    if (f_prev - res.f <= o.ftol * std::max({1.0, std::fabs(f_prev), std::fabs(res.f)})) {
      res.converged = true;
      res.message = "relative reduction of the objective below ftol";
      break;
    }
  }
  guard.rethrow_if_interrupted();
  return res;
}

}  // namespace optim
}  // namespace attnreg
