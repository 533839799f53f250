// attnreg internal: the absorbed-fixed-effects machinery shared by least_squares_fe*.cpp
// (sweeps of Gaure 2013, components of the factor graph, leverage of the dummies).
#pragma once

#include "attnreg/base/constants.hpp"
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "attnreg/base/arma.hpp"
#include "attnreg/least_squares/least_squares_fe.hpp"

namespace attnreg {
namespace fe_detail {

// Below this multiple of the column's largest value a change is rounding, not progress.
constexpr double kRoundingFloor = 1e-13;

// Weighted group-mean sweeps over the factors (Gaure 2013's Kaczmarz step).
struct Sweeper {
  const Factors& f;
  const arma::vec& w;  // n weights (ones when unweighted)
  std::vector<arma::vec> inv_wsum;

  Sweeper(const Factors& f_, const arma::vec& w_, arma::uword n_factors) : f(f_), w(w_) {
    for (arma::uword j = 0; j < n_factors; ++j) {
      arma::vec s(f.n_levels[j], arma::fill::zeros);
      const arma::uword* c = f.codes.colptr(j);
      for (arma::uword i = 0; i < w.n_elem; ++i) s(c[i]) += w(i);
      inv_wsum.push_back(1.0 / s);
    }
  }
  arma::uword k() const { return inv_wsum.size(); }

  // v <- T v (one sweep); alpha[j] += the means removed for factor j (when alpha is given).
  void sweep(arma::vec& v, std::vector<arma::vec>* alpha, arma::vec& means) const {
    const arma::uword n = v.n_elem;
    for (arma::uword j = 0; j < k(); ++j) {
      const arma::uword* c = f.codes.colptr(j);
      means.zeros(f.n_levels[j]);
      for (arma::uword i = 0; i < n; ++i) means(c[i]) += w(i) * v(i);
      means %= inv_wsum[j];
      for (arma::uword i = 0; i < n; ++i) v(i) -= means(c[i]);
      if (alpha) (*alpha)[j] += means;
    }
  }

  double wnorm(const arma::vec& v) const {
    double s = 0.0;
    for (arma::uword i = 0; i < v.n_elem; ++i) s += w(i) * v(i) * v(i);
    return std::sqrt(s);
  }

  // v <- M_D v by accelerated sweeps; returns the steps taken, sets converged.
  int solve(arma::vec& v, std::vector<arma::vec>* alpha, const AbsorbOptions& opt,
            bool& converged) const {
    arma::vec means;
    converged = true;
    if (alpha) {
      alpha->clear();
      for (arma::uword j = 0; j < k(); ++j) alpha->push_back(arma::zeros(f.n_levels[j]));
    }
    if (k() == 1) {  // exact in one pass
      sweep(v, alpha, means);
      return 1;
    }
    const arma::uword n = v.n_elem;
    const double norm0 = arma::abs(v).max();
    if (norm0 == 0.0) return 0;
    const double floor = kRoundingFloor * norm0;
    double ref = -1.0, prev = std::numeric_limits<double>::infinity();
    bool small_before = false;
    std::vector<arma::vec> a1;
    arma::vec x0(n), x1(n);
    for (int it = 1; it <= opt.max_iter; ++it) {
      x0 = v;
      sweep(v, alpha, means);
      x1 = v;
      if (alpha) a1 = *alpha;
      if (ref < 0.0) ref = arma::abs(x1).max();
      sweep(v, alpha, means);
      // One pass: the largest change of the last plain sweep (dgx = v - x1) and the Irons-Tuck
      // inner products with d2 = dgx - (x1 - x0).
      double delta = 0.0, num = 0.0, den = 0.0;
      for (arma::uword i = 0; i < n; ++i) {
        const double dgx = v(i) - x1(i);
        const double d2 = dgx - (x1(i) - x0(i));
        delta = std::max(delta, std::abs(dgx));
        num += w(i) * dgx * d2;
        den += w(i) * d2 * d2;
      }
      const double rate = delta / prev;
      // Twice in a row: one rate estimate from an extrapolated step can be optimistic.
      const bool small = rate < 1.0 && delta <= opt.tol * (1.0 - rate) * ref;
      if (delta <= floor || (small && small_before)) return it;
      small_before = small;
      prev = delta;
      if (opt.accelerate && den > 0.0) {  // Irons-Tuck: x2 - c (x2 - x1), c = <dgx,d2>/<d2,d2>
        const double c = num / den;
        if (std::isfinite(c)) {
          for (arma::uword i = 0; i < n; ++i) v(i) -= c * (v(i) - x1(i));
          if (alpha) {
            for (arma::uword j = 0; j < k(); ++j) (*alpha)[j] -= c * ((*alpha)[j] - a1[j]);
          }
        }
      }
    }
    converged = false;
    return opt.max_iter;
  }
};

void check_options(const AbsorbOptions& opt);

/// The weights, or ones when empty; throws unless every weight is finite and > 0.
arma::vec positive_weights_or_ones(const arma::vec& weights, arma::uword n);


// Union-find over the levels of factors 1 and 2 (factor-2 level l is node L1 + l).
struct Components {
  std::vector<arma::uword> comp_of_f1, comp_of_f2;  // component id per level
  arma::uword count = 0;
};
Components components12(const Factors& f);

/// Leverages of the fixed-effect dummies, h_i = w_i d_i' (D'WD)^- d_i (least_squares_fe_within.cpp).
arma::vec dummy_leverage(const Factors& f, const arma::vec& w);

/// Whether every level of factor j lies within one cluster of the cluster column c.
bool nested_in_clusters(const Factors& f, arma::uword j, const arma::uvec& c);

}  // namespace fe_detail
}  // namespace attnreg
