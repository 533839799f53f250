// attnreg::rd::rdrobust: the conventional estimate and its attention weights against a direct
// two-sided weighted least-squares fit (normal equations solved by Armadillo), on ties, a
// shifted origin, and a side with few points. The agreement with rdrobust 2.1.1 is tested in
// python-package/tests/test_rd.py.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include "attnreg/base/arma.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/rd/rdrobust.hpp"
#include "attnreg/detail/rd_local.hpp"

namespace {

// nu-th coefficient weights of the order-p fit on one side with the triangular kernel.
arma::rowvec side_weights(const arma::vec& x, double c, double h, int p, int nu) {
  arma::mat R(x.n_elem, p + 1);
  arma::vec k(x.n_elem);
  for (arma::uword i = 0; i < x.n_elem; ++i) {
    const double u = (x(i) - c) / h;
    k(i) = std::max(1 - std::fabs(u), 0.0) / h;
    for (int j = 0; j <= p; ++j) R(i, j) = std::pow(x(i) - c, j);
  }
  const arma::mat RW = R.each_col() % k;
  const arma::mat L = arma::solve(RW.t() * R, RW.t());
  return L.row(nu) * std::tgamma(nu + 1.0);
}

void check_case(const std::vector<double>& xs, double c, double h, int p, int nu, unsigned seed) {
  std::mt19937_64 g(seed);
  std::normal_distribution<double> e(0, 0.3);
  attnreg::rd::RdData d;
  d.x = xs;
  for (double x : xs) d.y.push_back(std::sin(x - c) + (x >= c ? 1.0 : 0.0) + e(g));
  attnreg::rd::RdOptions o;
  o.c = c;
  o.p = p;
  o.deriv = nu;
  o.h_left = o.h_right = h;
  o.b_left = o.b_right = 1.5 * h;
  const attnreg::rd::RdResult r = attnreg::rd::rdrobust(d, o);
  arma::vec x(xs), y(d.y);
  arma::vec a(x.n_elem, arma::fill::zeros);
  const arma::uvec left = arma::find(x < c), right = arma::find(x >= c);
  a(left) = -side_weights(x(left), c, h, p, nu).t();
  a(right) = side_weights(x(right), c, h, p, nu).t();
  // Both solve the same (p+1)-dimensional normal equations with condition number below 1e5:
  // agreement to 1e-9 of the largest weight.
  const double scale = arma::abs(a).max();
  for (arma::uword i = 0; i < x.n_elem; ++i) EXPECT_NEAR(r.weights[i], a(i), 1e-9 * scale);
  EXPECT_NEAR(r.est.coef[0], arma::dot(a, y), 1e-9 * scale);
}

}  // namespace

TEST(RdRobust, WeightsMatchDirectFit) {
  std::mt19937_64 g(7);
  std::uniform_real_distribution<double> U(-1, 1);
  std::vector<double> plain, ties, far, few;
  for (int i = 0; i < 300; ++i) {
    const double u = U(g);
    plain.push_back(u);
    ties.push_back(std::round(u * 12) / 12);
    far.push_back(u + 1e6);
    few.push_back(std::fabs(u));
  }
  for (int i = 0; i < 6; ++i) few.push_back(-0.08 * (i + 1));
  for (int p : {1, 2}) {
    check_case(plain, 0.0, 0.6, p, 0, 1);
    check_case(ties, 0.0, 0.6, p, 0, 2);
    check_case(far, 1e6, 0.6, p, 0, 3);
    check_case(few, 0.0, 0.6, p, 0, 4);
  }
  check_case(plain, 0.0, 0.7, 2, 1, 5);
}

TEST(RdRobust, BadInput) {
  attnreg::rd::RdData d;
  for (int i = 0; i < 50; ++i) {
    d.x.push_back(-1 + 0.04 * i);
    d.y.push_back(i);
  }
  attnreg::rd::RdOptions o;
  o.c = 3.0;
  EXPECT_THROW(attnreg::rd::rdrobust(d, o), attnreg::InvalidArgument);
  o.c = 0.0;
  o.level = 95;
  EXPECT_THROW(attnreg::rd::rdrobust(d, o), attnreg::InvalidArgument);
  o.level = 0.95;
  d.x[2] = INFINITY;
  EXPECT_THROW(attnreg::rd::rdrobust(d, o), attnreg::InvalidArgument);
}

// CR2 (Bell and McCaffrey 2002) and CR3 of the conventional estimate against a direct
// computation: on each side, sum over clusters of (l_g' A_g e_g)^2 with A_g = (I - H_gg)^{-1/2}
// (Armadillo's principal square root of the inverse) or (I - H_gg)^{-1}, H_gg = X_g G^{-1}
// X_g' W_g the cluster block of the order-p fit's hat matrix and e its residuals. Unbalanced
// clusters straddling the cutoff; the local Gram matrices and I - H_gg have condition numbers
// below ~1e4, so both agree to ~1e-11 relative; 1e-8 is far below any formula difference.
TEST(RdRobust, ClusterCR2CR3MatchDirect) {
  std::mt19937_64 g(21);
  std::uniform_real_distribution<double> U(-1, 1);
  std::normal_distribution<double> e(0, 0.3);
  attnreg::rd::RdData d;
  for (int i = 0; i < 500; ++i) {
    const double x = U(g);
    d.x.push_back(x);
    d.y.push_back(1 + x - 0.5 * x * x + (x >= 0) + e(g));
    d.cluster.push_back(i < 20 ? i : 20 + (i * 7) % 23);  // 20 singletons, 23 larger clusters
  }
  const double h = 0.6;
  for (bool cr3 : {false, true}) {
    attnreg::rd::RdOptions o;
    o.h_left = o.h_right = o.b_left = o.b_right = h;
    o.vce = cr3 ? attnreg::rd::RdVce::cr3 : attnreg::rd::RdVce::cr2;
    const attnreg::rd::RdResult r = attnreg::rd::rdrobust(d, o);
    double v = 0;
    for (int side = 0; side < 2; ++side) {
      std::vector<arma::uword> rows;
      for (arma::uword i = 0; i < d.x.size(); ++i)
        if ((side ? d.x[i] >= 0 : d.x[i] < 0) && std::fabs(d.x[i]) < h) rows.push_back(i);
      const arma::uword n = rows.size();
      arma::mat X(n, 2);
      arma::vec w(n), y(n);
      for (arma::uword j = 0; j < n; ++j) {
        X(j, 0) = 1;
        X(j, 1) = d.x[rows[j]];
        w(j) = (1 - std::fabs(d.x[rows[j]]) / h) / h;
        y(j) = d.y[rows[j]];
      }
      const arma::mat Gi = arma::inv_sympd(X.t() * (X.each_col() % w));
      const arma::mat Lw = Gi * (X.each_col() % w).t();
      const arma::rowvec ell = Lw.row(0);
      const arma::vec res = y - X * (Gi * (X.t() * (w % y)));
      std::map<std::int64_t, std::vector<arma::uword>> by;
      for (arma::uword j = 0; j < n; ++j) by[d.cluster[rows[j]]].push_back(j);
      for (const auto& kv : by) {
        const arma::uvec m = arma::conv_to<arma::uvec>::from(kv.second);
        const arma::mat Xg = X.rows(m);
        const arma::mat ImH =
            arma::eye(m.n_elem, m.n_elem) - Xg * Gi * (Xg.each_col() % w(m)).t();
        const arma::mat A =
            cr3 ? arma::mat(arma::inv(ImH)) : arma::mat(arma::real(arma::sqrtmat(arma::inv(ImH))));
        const double s = arma::as_scalar(ell.cols(m) * A * res(m));
        v += s * s;
      }
    }
    EXPECT_NEAR(r.est.se[0], std::sqrt(v), 1e-8 * std::sqrt(v));
  }
  attnreg::rd::RdData nocl = d;
  nocl.cluster.clear();
  attnreg::rd::RdOptions o;
  o.h_left = o.h_right = h;
  o.vce = attnreg::rd::RdVce::cr2;
  EXPECT_THROW(attnreg::rd::rdrobust(nocl, o), attnreg::InvalidArgument);
}

// ---------------------------------------------------------------- fast paths against direct ones
namespace {

// The nearest-neighbour residuals of a sorted block as the window-local rule states them (CCT
// 2014, section 3): for each tie group, widen [lo, hi) by whole tie groups, nearer side first
// (both when the distances agree to sqrt(eps) relative), until it holds nnmatch others; the
// residual is sqrt(J / (J + 1)) (y - mean of the J others).
std::vector<double> nn_direct(const std::vector<double>& x, const std::vector<double>& y,
                              std::size_t nnmatch) {
  const std::size_t n = x.size();
  std::vector<double> res(n);
  const double tol_rel = std::sqrt(std::numeric_limits<double>::epsilon());
  auto start = [&](std::size_t j) { while (j > 0 && x[j - 1] == x[j]) --j; return j; };
  auto end = [&](std::size_t j) { const double v = x[j]; while (j < n && x[j] == v) ++j; return j; };
  const std::size_t cap = std::min(nnmatch, n - 1);
  for (std::size_t j = 0; j < n; ++j) {
    std::size_t lo = start(j), hi = end(j);
    while (hi - lo - 1 < cap) {
      const bool can_l = lo > 0, can_r = hi < n;
      const double dl = can_l ? x[j] - x[lo - 1] : 0, dr = can_r ? x[hi] - x[j] : 0;
      const double tol = std::max(dl, dr) * tol_rel;
      const bool go_r = !can_l || (can_r && dl - dr > tol) || (can_r && std::fabs(dl - dr) <= tol);
      const bool go_l = !can_r || (can_l && dr - dl > tol) || (can_l && std::fabs(dl - dr) <= tol);
      if (go_r) hi = end(hi);
      if (go_l) lo = start(lo - 1);
    }
    double s = 0;
    for (std::size_t i = lo; i < hi; ++i) s += y[i];
    const double J = static_cast<double>(hi - lo - 1);
    res[j] = std::sqrt(J / (J + 1)) * (y[j] - (s - y[j]) / J);
  }
  return res;
}

}  // namespace

// The nearest-neighbour residuals of a window taken from those of the whole side (only the
// groups near a cut edge recomputed) equal the window-local computation exactly: the same
// operations in the same order, so the bound is 0. Windows of every width on sides with ties
// (mass points), x far from 0, and few points; nnmatch 1, 3 and 5.
TEST(RdRobust, NearestNeighbourFastPathEqualsWindowLocal) {
  namespace dt = attnreg::rd::detail;
  std::mt19937_64 g(11);
  std::uniform_real_distribution<double> U(0, 1);
  std::normal_distribution<double> e(0, 1);
  for (int shape = 0; shape < 4; ++shape) {
    const std::size_t n = shape == 3 ? 9 : 400;
    const double off = shape == 2 ? 1e6 : 0.0;
    dt::Side s;
    for (std::size_t i = 0; i < n; ++i) {
      double u = U(g);
      if (shape == 1) u = std::round(u * 25) / 25;  // ties
      s.x.push_back(off + u);
    }
    std::sort(s.x.begin(), s.x.end());
    for (std::size_t i = 0; i < n; ++i) s.D.push_back(s.x[i] - off + e(g));
    for (int right = 0; right < 2; ++right) {
      const double c = right ? off : off + 1.0;  // the side lies right or left of c
      for (int nnmatch : {1, 3, 5}) {
        dt::NnSide full;
        full.side = &s;
        full.cover(0, n, nnmatch);
        for (int step = 1; step <= 40; ++step) {
          const double h = 1.02 * step / 40;
          const dt::Window w = dt::gather(s, c, h, attnreg::rd::RdKernel::triangular);
          if (w.n() == 0) continue;
          std::vector<double> wx(w.x, w.x + w.n()), wy(w.D, w.D + w.n());
          const std::vector<double> direct = nn_direct(wx, wy, nnmatch);
          const std::vector<double> local = dt::residuals(w, attnreg::rd::RdVce::nn, false,
                                                          nnmatch, nullptr, nullptr, 0);
          const std::vector<double> fast = dt::residuals(w, attnreg::rd::RdVce::nn, false,
                                                         nnmatch, nullptr, nullptr, 0, &full);
          ASSERT_EQ(fast.size(), direct.size());
          for (std::size_t j = 0; j < w.n(); ++j) {
            if (std::isnan(direct[j])) {  // one row: J = 0
              EXPECT_TRUE(std::isnan(fast[j]) && std::isnan(local[j]));
              continue;
            }
            EXPECT_EQ(local[j], direct[j]) << "shape " << shape << " h " << h << " row " << j;
            EXPECT_EQ(fast[j], direct[j]) << "shape " << shape << " h " << h << " row " << j;
          }
        }
      }
    }
  }
}

// End to end: unit weights of 1 take the direct paths (gathered windows' own nearest
// neighbours), no weights the fast ones (views of the sides, side-wide residuals); with a
// weight of 0 in the middle of the windows and fixed h and b, the gathered copy must equal the
// data without that row. Every number is the same to the last bit.
TEST(RdRobust, FastPathsEqualDirectPaths) {
  std::mt19937_64 g(5);
  std::uniform_real_distribution<double> U(-1, 1);
  std::normal_distribution<double> e(0, 0.4);
  for (int shape = 0; shape < 3; ++shape) {
    attnreg::rd::RdData d;
    const double off = shape == 1 ? 1e6 : 0.0;
    for (int i = 0; i < 2000; ++i) {
      double u = U(g);
      if (shape == 2) u = std::round(u * 40) / 40;  // mass points
      d.x.push_back(off + u);
      d.y.push_back(u + 0.3 * (u >= 0) + e(g));
    }
    attnreg::rd::RdOptions o;
    o.c = off;
    for (int p : {1, 2}) {
      o.p = p;
      const attnreg::rd::RdResult a = attnreg::rd::rdrobust(d, o);
      attnreg::rd::RdData dw = d;
      dw.weights.assign(d.x.size(), 1.0);
      const attnreg::rd::RdResult b = attnreg::rd::rdrobust(dw, o);
      EXPECT_EQ(a.bw.h_left, b.bw.h_left);
      EXPECT_EQ(a.bw.b_right, b.bw.b_right);
      for (int k = 0; k < 3; ++k) {
        EXPECT_EQ(a.est.coef[k], b.est.coef[k]) << "shape " << shape;
        EXPECT_EQ(a.est.se[k], b.est.se[k]) << "shape " << shape;
      }
      EXPECT_EQ(a.weights, b.weights);
      const attnreg::rd::RdBwResult all_a = attnreg::rd::rdbwselect(d, o, true);
      const attnreg::rd::RdBwResult all_b = attnreg::rd::rdbwselect(dw, o, true);
      for (std::size_t i = 0; i < all_a.bws.size(); ++i) {
        EXPECT_EQ(all_a.bws[i].h_left, all_b.bws[i].h_left) << all_a.selectors[i];
        EXPECT_EQ(all_a.bws[i].b_right, all_b.bws[i].b_right) << all_a.selectors[i];
      }
      // A zero weight inside the windows: a gathered copy, equal to dropping the row.
      attnreg::rd::RdOptions f = o;
      f.h_left = f.h_right = 0.5;
      f.b_left = f.b_right = 0.7;
      std::size_t zero = 0;
      while (std::fabs(d.x[zero] - off) > 0.2 || d.x[zero] - off >= 0) ++zero;
      attnreg::rd::RdData dz = dw, dd = d;
      dz.weights[zero] = 0.0;
      dd.x.erase(dd.x.begin() + zero);
      dd.y.erase(dd.y.begin() + zero);
      const attnreg::rd::RdResult rz = attnreg::rd::rdrobust(dz, f);
      const attnreg::rd::RdResult rd_ = attnreg::rd::rdrobust(dd, f);
      for (int k = 0; k < 3; ++k) {
        EXPECT_EQ(rz.est.coef[k], rd_.est.coef[k]) << "shape " << shape;
        EXPECT_EQ(rz.est.se[k], rd_.est.se[k]) << "shape " << shape;
      }
      EXPECT_EQ(rz.weights[zero], 0.0);
    }
  }
}
