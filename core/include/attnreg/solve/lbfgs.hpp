// attnreg: limited-memory BFGS (Nocedal and Wright, Numerical Optimization, 2nd ed., Algorithm
// 7.4, two-loop recursion) with More and Thuente's strong-Wolfe line search (ACM TOMS 20(3),
// 1994: cubic/quadratic interpolation, safeguarded extrapolation; MINPACK-2's dcsrch/dcstep,
// written anew). Written for the smooth objectives of the core (the attention regression of
// Goulet Coulombe 2025, arXiv:2504.09663, eq. 28); no external optimiser library.
#pragma once

#include "attnreg/base/arma.hpp"
#include <functional>
#include <string>

namespace attnreg {
namespace optim {

struct LbfgsOptions {
  int memory = 10;          ///< correction pairs kept
  int max_iter = 500;       ///< iterations (each one line search)
  double gtol = 1e-6;       ///< stop when ||g||_inf <= gtol * max(1, |f|)
  double ftol = 1e-12;      ///< stop when f_prev - f <= ftol * max(1, |f_prev|, |f|)
  int max_linesearch = 30;  ///< objective evaluations per line search
  double c1 = 1e-4;         ///< sufficient decrease (Armijo)
  double c2 = 0.9;          ///< curvature (strong Wolfe)
};

struct LbfgsResult {
  arma::vec x;
  double f = 0.0;
  arma::vec grad;
  int iterations = 0;
  int n_evals = 0;
  bool converged = false;
  std::string message;  ///< why it stopped
};

/// f(x) returning the value and writing the gradient into `grad` (same size as x). A non-finite
/// value is treated as "too far" by the line search, which then shrinks the step.
using Objective = std::function<double(const arma::vec& x, arma::vec& grad)>;

/// Minimise from x0. Polls for interrupts once per iteration (throws attnreg::Interrupted).
LbfgsResult minimize_lbfgs(const Objective& fg, const arma::vec& x0, const LbfgsOptions& options = {});

}  // namespace optim
}  // namespace attnreg
