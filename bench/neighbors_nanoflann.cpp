// attnreg bench: the core's NeighborIndex (neighbors.cpp) against nanoflann 1.4.3
// (libnanoflann-dev) on the queries the kernel code asks: every training point within a ball
// (truncated Gaussian) or a box (compact kernels) of a query, in bandwidth units.
//
// n = 1e5 uniform points in [0, 1]^d, d = 1, 2, 3; m = 2e4 queries at fresh uniform points; the
// radius gives about 200 neighbours per query. Timed: building the index, then for every query
// the exact neighbour set (the core: the ranges it returns, filtered by the exact distance, as
// its callers do when they evaluate the kernel; nanoflann: radiusSearch with L2, unsorted, and
// for the box a custom L-infinity metric is not available, so the box query is answered by the
// ball of radius r sqrt(d) filtered to the box). The neighbour counts must agree.
//
//   g++ -O2 -std=c++17 -fopenmp -Icore/include bench/neighbors_nanoflann.cpp \
//       core/src/neighbors.cpp core/src/error.cpp -larmadillo -o /tmp/nb && /tmp/nb
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include <nanoflann.hpp>

#include "attnreg/kernels/neighbors.hpp"

namespace {

struct Cloud {
  const arma::mat* P;  // d x n
  std::size_t kdtree_get_point_count() const { return P->n_cols; }
  double kdtree_get_pt(std::size_t i, std::size_t j) const { return (*P)(j, i); }
  template <class BBox>
  bool kdtree_get_bbox(BBox&) const { return false; }
};

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

template <int D>
void run(std::size_t n, std::size_t m, bool ball) {
  std::mt19937_64 eng(42);
  std::uniform_real_distribution<double> U(0, 1);
  arma::mat P(D, n), Q(D, m);
  for (auto& v : P) v = U(eng);
  for (auto& v : Q) v = U(eng);
  // About 200 neighbours: volume of the ball / box times n.
  const double target = 200.0 / static_cast<double>(n);
  const double unit_ball = D == 1 ? 2.0 : D == 2 ? M_PI : 4.0 * M_PI / 3.0;
  const double r = ball ? std::pow(target / unit_ball, 1.0 / D) : 0.5 * std::pow(target, 1.0 / D);

  double t0 = now();
  attnreg::NeighborIndex idx;
  idx.build(P, 48);
  const double build_core = now() - t0;
  // Positions of the reordered points, as the callers hold them.
  arma::mat S(D, n);
  for (std::size_t k = 0; k < n; ++k) S.col(k) = P.col(idx.order()[k]);
  std::vector<attnreg::IndexRange> ranges;
  std::size_t count_core = 0;
  t0 = now();
  for (std::size_t q = 0; q < m; ++q) {
    const double* qp = Q.colptr(q);
    ranges.clear();
    if (ball) idx.ball_query(qp, r, ranges); else idx.box_query(qp, r, ranges);
    for (const auto& g : ranges) {
      for (std::size_t k = g.first; k < g.last; ++k) {
        const double* p = S.colptr(k);
        double acc = 0;
        bool in = true;
        for (int j = 0; j < D; ++j) {
          const double dj = p[j] - qp[j];
          if (ball) acc += dj * dj; else in = in && std::fabs(dj) <= r;
        }
        count_core += ball ? (acc <= r * r) : in;
      }
    }
  }
  const double query_core = now() - t0;

  using Tree = nanoflann::KDTreeSingleIndexAdaptor<nanoflann::L2_Simple_Adaptor<double, Cloud>,
                                                   Cloud, D>;
  Cloud cloud{&P};
  t0 = now();
  Tree tree(D, cloud, nanoflann::KDTreeSingleIndexAdaptorParams(48));
  tree.buildIndex();
  const double build_nf = now() - t0;
  std::vector<std::pair<unsigned, double>> matches;
  nanoflann::SearchParams sp(32, 0.0f, false);
  std::size_t count_nf = 0;
  const double rs = ball ? r : r * std::sqrt(static_cast<double>(D));
  t0 = now();
  for (std::size_t q = 0; q < m; ++q) {
    const double* qp = Q.colptr(q);
    matches.clear();
    tree.radiusSearch(qp, rs * rs, matches, sp);
    if (ball) {
      count_nf += matches.size();
    } else {
      for (const auto& mt : matches) {
        bool in = true;
        for (int j = 0; j < D; ++j) in = in && std::fabs(P(j, mt.first) - qp[j]) <= r;
        count_nf += in;
      }
    }
  }
  const double query_nf = now() - t0;
  std::printf("| %d | %s | %zu | %.3f | %.3f | %.3f | %.3f | %zu | %zu |\n", D,
              ball ? "ball" : "box", n, build_core, query_core, build_nf, query_nf, count_core,
              count_nf);
}

}  // namespace

int main() {
  const std::size_t n = 100000, m = 20000;
  std::printf("| d | query | n | core build s | core queries s | nanoflann build s | "
              "nanoflann queries s | core count | nanoflann count |\n|---|---|---|---|---|---|---|---|---|\n");
  for (bool ball : {true, false}) {
    run<1>(n, m, ball);
    run<2>(n, m, ball);
    run<3>(n, m, ball);
  }
}
