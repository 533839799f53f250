#include "attnreg/solve/lbfgs.hpp"
#include "attnreg/base/constants.hpp"

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


// One trial point of a line search: step a, phi(a) = f(x + a d), phi'(a), and the full x and g.
struct Trial {
  double a = 0.0, f = kInf, df = 0.0;
  arma::vec x, g;
};

// The end points of More and Thuente's interval of uncertainty and the bracketing state.
struct Interval {
  double stx = 0.0, fx = 0.0, dx = 0.0;  // best step so far (lowest value)
  double sty = 0.0, fy = 0.0, dy = 0.0;  // the other end
  bool brackt = false;
};

// Minimiser of the cubic through (u, fu, du) and (v, fv, dv), as u + r (v - u) (the scaled
// formulas of More and Thuente). `real` is false when the discriminant is not positive (no
// real minimiser, or a double root; it is then taken as 0).
double cubic_step(double u, double fu, double du, double v, double fv, double dv, bool& real) {
  const double theta = 3.0 * (fu - fv) / (v - u) + du + dv;
  const double s = std::max({std::fabs(theta), std::fabs(du), std::fabs(dv)});
  const double disc = (theta / s) * (theta / s) - (du / s) * (dv / s);
  real = disc > 0.0;
  double gamma = s * std::sqrt(std::max(0.0, disc));
  if (v < u) gamma = -gamma;
  const double p = (gamma - du) + theta, q = ((gamma - du) + gamma) + dv;
  return u + (p / q) * (v - u);
}

// One step of More and Thuente (1994), "Line search algorithms with guaranteed sufficient
// decrease", ACM TOMS 20(3), 286-307, section 4 (MINPACK-2's dcstep): from the interval I and the
// new trial (stp, fp, dp), the next trial step -- cubic or quadratic interpolation, chosen by
// the paper's four cases -- safeguarded to [stpmin, stpmax] and, once bracketed, to 0.66 of the
// interval; I is updated to keep a minimiser of the (modified) function inside.
double more_thuente_step(Interval& I, double stp, double fp, double dp, double stpmin,
                         double stpmax) {
  const double sgnd = dp * std::copysign(1.0, I.dx);
  double stpf;
  bool real;
  if (fp > I.fx) {  // case 1: higher value, the minimum is bracketed
    const double stpc = cubic_step(I.stx, I.fx, I.dx, stp, fp, dp, real);
    const double stpq =
        I.stx + ((I.dx / ((I.fx - fp) / (stp - I.stx) + I.dx)) / 2.0) * (stp - I.stx);
    stpf = (real && std::fabs(stpc - I.stx) < std::fabs(stpq - I.stx))
               ? stpc
               : (real ? stpc + (stpq - stpc) / 2.0 : stpq);
    I.brackt = true;
  } else if (sgnd < 0.0) {  // case 2: lower value, derivatives of opposite sign
    const double stpc = cubic_step(stp, fp, dp, I.stx, I.fx, I.dx, real);
    const double stpq = stp + (dp / (dp - I.dx)) * (I.stx - stp);
    stpf = (real && std::fabs(stpc - stp) > std::fabs(stpq - stp)) ? stpc : stpq;
    I.brackt = true;
  } else if (std::fabs(dp) < std::fabs(I.dx)) {  // case 3: the derivative decreases
    double stpc = cubic_step(stp, fp, dp, I.stx, I.fx, I.dx, real);
    const double r = (stpc - stp) / (I.stx - stp);  // < 0: beyond stp, away from stx
    if (!(r < 0.0 && real && std::isfinite(stpc))) stpc = stp > I.stx ? stpmax : stpmin;
    const double stpq = stp + (dp / (dp - I.dx)) * (I.stx - stp);
    if (I.brackt) {
      stpf = std::fabs(stpc - stp) < std::fabs(stpq - stp) ? stpc : stpq;
      const double lim = stp + 0.66 * (I.sty - stp);
      stpf = stp > I.stx ? std::min(lim, stpf) : std::max(lim, stpf);
    } else {
      stpf = std::fabs(stpc - stp) > std::fabs(stpq - stp) ? stpc : stpq;
      stpf = std::max(stpmin, std::min(stpmax, stpf));
    }
  } else if (I.brackt) {  // case 4: the derivative does not decrease, bracketed
    stpf = std::isfinite(I.fy) ? cubic_step(stp, fp, dp, I.sty, I.fy, I.dy, real)
                               : 0.5 * (stp + I.sty);
  } else {
    stpf = stp > I.stx ? stpmax : stpmin;
  }
  if (fp > I.fx) {
    I.sty = stp;
    I.fy = fp;
    I.dy = dp;
  } else {
    if (sgnd < 0.0) {
      I.sty = I.stx;
      I.fy = I.fx;
      I.dy = I.dx;
    }
    I.stx = stp;
    I.fx = fp;
    I.dx = dp;
  }
  return std::isfinite(stpf) ? stpf : 0.5 * (I.stx + I.sty);
}

// Line search for a step satisfying the strong Wolfe conditions f(a) <= f0 + c1 a f0' and
// |f'(a)| <= c2 |f0'| along d from (x, f0, g0): More and Thuente's algorithm (MINPACK-2's
// dcsrch; extrapolation by 1.1 to 4 times the step, the modified function f(a) - c1 a f0'
// until a step with sufficient decrease and f'(a) >= 0 is seen). A non-finite value brackets
// the step from above and halves it. Returns true with the accepted trial in `out`; when the
// evaluation budget or the interval runs out it falls back to the best trial with sufficient
// decrease, if any.
bool line_search(const Objective& fg, const LbfgsOptions& o, const arma::vec& x, const arma::vec& d,
                 double f0, double df0, double a_init, int& n_evals, Trial& out) {
  bool have_ok = false;
  const double gtest = o.c1 * df0, stpmax = 1e20 * a_init;
  Interval I;
  I.fx = I.fy = f0;
  I.dx = I.dy = df0;
  bool stage1 = true;
  double stp = a_init, stmin = 0.0, stmax = stp + 4.0 * stp;
  double width = stpmax, width1 = 2.0 * width;
  for (int budget = o.max_linesearch; budget > 0; --budget) {
    Trial t;
    t.a = stp;
    t.x = x + stp * d;
    t.g.set_size(x.n_elem);
    t.f = fg(t.x, t.g);
    ++n_evals;
    const bool finite = std::isfinite(t.f) && t.g.is_finite();
    t.df = finite ? arma::dot(t.g, d) : 0.0;
    if (!finite) t.f = kInf;
    const double ftest = f0 + stp * gtest;
    if (finite && t.f <= ftest && (!have_ok || t.f < out.f)) {
      have_ok = true;
      out = t;
    }
    if (finite && t.f <= ftest && std::fabs(t.df) <= -o.c2 * df0) return true;  // Wolfe
    if (!finite) {  // undefined beyond: bracket from above, halve towards the best step
      I.brackt = true;
      I.sty = stp;
      I.fy = kInf;
      I.dy = 0.0;
      stp = I.stx + 0.5 * (stp - I.stx);
    } else {
      if (stage1 && t.f <= ftest && t.df >= 0.0) stage1 = false;
      if (stage1 && t.f <= I.fx && t.f > ftest) {  // the modified function psi = f - gtest a
        Interval M = I;
        M.fx -= I.stx * gtest;
        M.fy -= I.sty * gtest;
        M.dx -= gtest;
        M.dy -= gtest;
        stp = more_thuente_step(M, stp, t.f - stp * gtest, t.df - gtest, stmin, stmax);
        I = M;
        I.fx += I.stx * gtest;
        I.fy += I.sty * gtest;
        I.dx += gtest;
        I.dy += gtest;
      } else {
        stp = more_thuente_step(I, stp, t.f, t.df, stmin, stmax);
      }
      if (I.brackt) {
        if (std::fabs(I.sty - I.stx) >= 0.66 * width1) stp = I.stx + 0.5 * (I.sty - I.stx);
        width1 = width;
        width = std::fabs(I.sty - I.stx);
      }
    }
    if (I.brackt) {
      stmin = std::min(I.stx, I.sty);
      stmax = std::max(I.stx, I.sty);
    } else {
      stmin = stp + 1.1 * (stp - I.stx);
      stmax = stp + 4.0 * (stp - I.stx);
    }
    stp = std::max(0.0, std::min(stp, stpmax));
    if (I.brackt && (stp <= stmin || stp >= stmax || stmax - stmin <= 1e-15 * stmax)) break;
  }
  return have_ok;
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
    // A step without curvature pairs has unit Euclidean length (min(1, 1 / ||g||) crept up on a
    // small gradient by doublings: 11 evaluations for the attention regression's first step);
    // with pairs, the quasi-Newton step 1.
    const double a_init = S.empty() ? 1.0 / arma::norm(d, 2) : 1.0;
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
