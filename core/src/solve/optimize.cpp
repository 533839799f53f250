#include "attnreg/solve/optimize.hpp"

#include <cmath>
#include <deque>
#include <random>
#include <limits>
#include <sstream>

#include "attnreg/base/error.hpp"
#include "attnreg/base/runtime.hpp"

namespace attnreg {

namespace {

arma::vec project(const arma::vec& x, const arma::vec& lo, const arma::vec& hi) {
  return arma::min(arma::max(x, lo), hi);
}

// Projected gradient: zero where a bound blocks the descent direction -g.
arma::vec projected_gradient(const arma::vec& x, const arma::vec& g, const arma::vec& lo,
                             const arma::vec& hi) {
  arma::vec pg = g;
  for (arma::uword i = 0; i < x.n_elem; ++i) {
    if ((x(i) <= lo(i) && g(i) > 0) || (x(i) >= hi(i) && g(i) < 0)) pg(i) = 0.0;
  }
  return pg;
}

// The L-BFGS memory: curvature pairs (s, y) with rho = 1 / s'y, oldest first.
struct Memory {
  std::deque<arma::vec> S, Y;
  std::deque<double> rho;
  void clear() {
    S.clear();
    Y.clear();
    rho.clear();
  }
  void push(const arma::vec& s, const arma::vec& y, int memory) {
    const double sy = arma::dot(s, y);
    if (!(sy > 1e-10 * arma::norm(s, 2) * arma::norm(y, 2))) return;  // no positive curvature
    S.push_back(s);
    Y.push_back(y);
    rho.push_back(1.0 / sy);
    if (static_cast<int>(S.size()) > memory) {
      S.pop_front();
      Y.pop_front();
      rho.pop_front();
    }
  }
};

arma::vec unit(const arma::vec& v) {
  const double n2 = arma::norm(v, 2);
  return n2 > 0 ? arma::vec(v / n2) : v;
}

// The search direction: the two-loop recursion (Nocedal and Wright 2006, Alg. 7.4) on the
// variables not held at a bound by the gradient; without curvature pairs a unit step (a factor
// e in a bandwidth). Not a descent direction: the memory is dropped, projected steepest descent.
arma::vec search_direction(const arma::vec& g, const arma::vec& pg, Memory& m) {
  const arma::uword n = g.n_elem;
  arma::vec free(n, arma::fill::ones);
  for (arma::uword i = 0; i < n; ++i) if (pg(i) == 0.0 && g(i) != 0.0) free(i) = 0.0;
  arma::vec q = g % free;
  std::vector<double> alpha(m.S.size());
  for (std::size_t k = m.S.size(); k-- > 0;) {
    alpha[k] = m.rho[k] * arma::dot(m.S[k] % free, q);
    q -= alpha[k] * (m.Y[k] % free);
  }
  arma::vec d;
  if (!m.S.empty()) {
    const arma::vec& s = m.S.back();
    const arma::vec& y = m.Y.back();
    d = (arma::dot(s, y) / arma::dot(y, y)) * q;
    for (std::size_t k = 0; k < m.S.size(); ++k) {
      const double beta = m.rho[k] * arma::dot(m.Y[k] % free, d);
      d += (m.S[k] % free) * (alpha[k] - beta);
    }
    d = -d % free;
  } else {
    d = -unit(q);
  }
  if (arma::dot(d, g) >= 0) {
    m.clear();
    d = -unit(pg);
  }
  return d;
}

// Backtracking Armijo search along the projected path P[x + t d]. A rejected step is shortened
// to the minimiser of the quadratic through f(x), its slope and f(x + step), kept within
// [1e-4, 0.5] of the step (halving where f is undefined): from a warm start next to the
// minimum the unit first step overshoots by orders of magnitude, and halving would spend one
// objective evaluation per factor 2 getting back. Returns the accepted t, or 0 when no step
// was accepted (xnew, gnew, fnew then hold nothing useful).
double armijo_search(const Objective& f, const arma::vec& x, double fx, const arma::vec& g,
                     const arma::vec& d, const arma::vec& lower, const arma::vec& upper,
                     const MinimizeOptions& opt, MinimizeResult& r, arma::vec& xnew,
                     arma::vec& gnew, double& fnew) {
  double t = 1.0;
  for (int ls = 0; ls < 40 && r.n_evals < opt.max_evals; ++ls) {
    xnew = project(x + t * d, lower, upper);
    if (ls > 0 && arma::norm(xnew - x, "inf") <= opt.xtol) break;
    fnew = f(xnew, gnew);
    ++r.n_evals;
    if (std::isfinite(fnew) && gnew.is_finite() && fnew <= fx + 1e-4 * arma::dot(g, xnew - x))
      return t;
    double shrink = 0.5;
    if (std::isfinite(fnew)) {
      const double slope = arma::dot(g, xnew - x);  // < 0: d is a descent direction
      const double curv = fnew - fx - slope;
      if (slope < 0 && curv > 0) shrink = std::min(0.5, std::max(1e-4, -slope / (2.0 * curv)));
    }
    t *= shrink;
  }
  return 0.0;
}

}  // namespace

MinimizeResult minimize_box(const Objective& f, arma::vec x0, const arma::vec& lower,
                            const arma::vec& upper, const MinimizeOptions& opt) {
  const arma::uword n = x0.n_elem;
  check::require(lower.n_elem == n && upper.n_elem == n, "bounds",
                 "lower and upper must have one entry per parameter");
  check::require(arma::all(lower <= upper), "bounds", "need lower <= upper");
  check::require(x0.is_finite(), "start", "must be finite");
  check::require(opt.xtol >= 0.0, "xtol", "must be >= 0");
  check::require(std::isfinite(opt.f_scale) && opt.f_scale >= 0.0, "f_scale",
                 "must be a finite difference of objective values >= 0");
  InterruptGuard guard;
  MinimizeResult r;
  arma::vec x = project(x0, lower, upper), g(n, arma::fill::zeros);
  double fx = f(x, g);
  r.n_evals = 1;
  if (!std::isfinite(fx) || !g.is_finite()) {
    std::ostringstream msg;
    msg << "minimize: the objective is not finite at the start point (f = " << fx
        << "); choose another start";
    throw NumericalError(msg.str());
  }
  // Every decision below is invariant under f -> a f + b (a > 0) and under shifts of x: the
  // convergence tests measure the gradient and the last decrease against the decrease this run
  // has achieved (f_start - f), never against |f| or an absolute 1, and a step without
  // curvature information has unit length. The bandwidth objectives are minimised over
  // log-bandwidths, where x -> c x shifts the coordinates, and their values scale (cv_ls by
  // c^2 under y -> c y, densities by 1 / c under x -> c x) or shift (aic by log c^2, cv_ml by
  // n log c): the old tests, gtol * max(1, |f|), were absolute below |f| = 1 and so stopped
  // on a gentle slope at y * 0.5 where they went on at y * 1.
  const double f_start = fx;
  Memory mem;
  r.message = "iteration limit reached";
  for (int it = 0; it < opt.max_iter; ++it) {
    if (guard.poll()) break;
    const arma::vec pg = projected_gradient(x, g, lower, upper);
    const double pgn = arma::norm(pg, "inf");
    if (pgn == 0.0 || pgn <= opt.gtol * std::max(f_start - fx, opt.f_scale)) {
      r.converged = true;
      r.message = "projected gradient below gtol";
      break;
    }
    const arma::vec d = search_direction(g, pg, mem);
    const bool quasi_newton = !mem.S.empty();
    arma::vec xnew, gnew(n);
    double fnew = 0.0;
    const double t = armijo_search(f, x, fx, g, d, lower, upper, opt, r, xnew, gnew, fnew);
    r.n_iter = it + 1;
    if (t == 0.0) {
      r.message = r.n_evals >= opt.max_evals ? "evaluation limit reached"
                                             : "line search failed (at a minimum to precision)";
      r.converged = r.n_evals < opt.max_evals;
      break;
    }
    // A quasi-Newton step accepted only after shrinking by more than 1000 says the memory's
    // curvature is far off: on a plateau of very large bandwidths (a near-flat objective next
    // to a steep valley or an undefined region) the pairs give steps that overshoot by orders
    // of magnitude, and kept, they repeat the same overshoot and tiny step every iteration
    // (wage1, five regressors: ~300 of 468 evaluations). Start afresh from the new point with
    // a unit projected steepest-descent step instead. The test is on t, a ratio of steps, so
    // it keeps the search invariant under f -> a f + b and shifts of x.
    if (quasi_newton && t < 1e-3)
      mem.clear();
    else
      mem.push(xnew - x, gnew - g, opt.memory);
    const double fold = fx;
    x = xnew;
    g = gnew;
    fx = fnew;
    // The decrease test also stops at a decrease below 1e-13 |f|, 13 digits of the objective
    // itself: the resolution of its computed value (a sum of n rounded terms), below which
    // a compact kernel's objective at large n is a staircase of kinks that the iterations
    // would descend one step at a time.
    if (fold - fx <= std::max(opt.ftol * std::max(f_start - fx, opt.f_scale),
                              1e-13 * std::fabs(fx))) {
      r.converged = true;
      r.message = "relative decrease of f below ftol";
      break;
    }
    if (r.n_evals >= opt.max_evals) {
      r.message = "evaluation limit reached";
      break;
    }
  }
  guard.rethrow_if_interrupted();
  r.x = x;
  r.f = fx;
  r.grad = g;
  return r;
}

MinimizeResult minimize_multistart(const Objective& f, const arma::mat& starts,
                                   const arma::vec& lower, const arma::vec& upper,
                                   const MinimizeOptions& opt) {
  check::require(starts.n_cols >= 1, "starts", "need at least one starting point");
  MinimizeResult best;
  int evals = 0;
  bool have = false;
  for (arma::uword k = 0; k < starts.n_cols; ++k) {
    MinimizeResult r = minimize_box(f, starts.col(k), lower, upper, opt);
    evals += r.n_evals;
    if (!have || r.f < best.f) {
      best = std::move(r);
      have = true;
    }
  }
  best.n_evals = evals;
  return best;
}

arma::mat search_starts(const arma::vec& base, const arma::vec& lower, const arma::vec& upper,
                        const std::vector<bool>& log_scale, int n_starts, std::uint64_t seed) {
  const arma::uword d = base.n_elem;
  arma::mat starts(d, static_cast<arma::uword>(std::max(n_starts, 1)));
  starts.col(0) = base;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unif(0.0, 1.0);
  for (int s = 1; s < n_starts; ++s)
    for (arma::uword j = 0; j < d; ++j) {
      const double u = unif(rng);
      starts(j, s) = log_scale[j]
                         ? std::min(std::max(base(j) + std::log(4.0) * (2.0 * u - 1.0), lower(j)),
                                    upper(j))
                         : lower(j) + (0.05 + 0.9 * u) * (upper(j) - lower(j));
    }
  return starts;
}

bool minimize_from_starts(const Objective& f, const arma::mat& starts, const arma::vec& lower,
                          const arma::vec& upper, const std::vector<bool>& log_scale,
                          const MinimizeOptions& opt, MinimizeResult& best) {
  bool have = false;
  for (arma::uword s = 0; s < starts.n_cols; ++s) {
    arma::vec t = starts.col(s);
    for (int k = 0;; ++k) {
      try {
        MinimizeResult r = minimize_box(f, t, lower, upper, opt);
        if (!have || r.f < best.f) {
          best = std::move(r);
          have = true;
        }
        break;
      } catch (const NumericalError&) {  // undefined at the start: widen the bandwidths
        bool moved = false;
        for (arma::uword j = 0; j < t.n_elem; ++j) {
          if (!log_scale[j]) continue;
          const double up = std::min(t(j) + std::log(2.0), upper(j));
          moved = moved || up > t(j);
          t(j) = up;
        }
        if (!moved || k >= 12) break;
      }
    }
  }
  return have;
}

}  // namespace attnreg
