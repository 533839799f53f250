// Tests of LocalMoments (moments/local_moments.hpp): moments of blocks of rows merged in any
// order and grouping equal the single-pass sums (a direct float64 oracle), in both storages,
// with derivative moments, logits large enough that exp() overflows without the running max,
// empty blocks and one row.
#include <gtest/gtest.h>

#include <armadillo>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "attnreg/base/error.hpp"
#include "attnreg/moments/local_moments.hpp"

using attnreg::moments::LocalMoments;
using attnreg::moments::MomentLayout;

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// Rows of one query: logits l, design z (n x p), values y (n x k), derivative factors g
// (n x n_deriv; derivative weight j of row i is w_i g_ij).
struct Rows {
  arma::vec l;
  arma::mat z, y, g;
};

Rows random_rows(arma::uword n, const MomentLayout& L, double logit_mean, std::mt19937& rng) {
  std::normal_distribution<double> N(0.0, 1.0);
  auto fill = [&](arma::mat& a) { a.imbue([&] { return N(rng); }); };
  Rows r;
  r.l.set_size(n);
  r.l.imbue([&] { return logit_mean + 3.0 * N(rng); });
  r.z.set_size(n, L.p);
  r.y.set_size(n, L.k);
  r.g.set_size(n, L.n_deriv);
  fill(r.z);
  fill(r.y);
  fill(r.g);
  return r;
}

// The producer: one query's moments over rows [lo, hi), relative to their own max, written
// through the layout (the way the sinks and attention kernels write them).
void accumulate(const MomentLayout& L, const Rows& r, arma::uword lo, arma::uword hi, double& m,
                double* row, double& peak) {
  m = kNegInf;
  for (arma::uword i = lo; i < hi; ++i) m = std::max(m, r.l(i));
  std::fill(row, row + L.n_stats(), 0.0);
  peak = 0.0;
  if (lo >= hi) return;
  const int q = L.q();
  for (arma::uword i = lo; i < hi; ++i) {
    const double w = std::exp(r.l(i) - m);
    peak = std::max(peak, w);
    std::vector<double> u(q, 1.0);
    for (int a = 1; a < q; ++a) u[a] = r.z(i, a - 1);
    for (int v = 0; v <= L.n_deriv; ++v) {
      const double wv = v == 0 ? w : w * r.g(i, v - 1);
      double* blk = row + v * L.n_block();
      for (int a = 0; a < q; ++a)
        for (int b = a; b < q; ++b) {
          blk[L.a_index(a, b)] += wv * u[a] * u[b];
          if (!L.packed && b != a) blk[L.a_index(b, a)] += wv * u[a] * u[b];
        }
      for (int a = 0; a < q; ++a)
        for (int o = 0; o < L.k; ++o) blk[L.t_index(a, o)] += wv * u[a] * r.y(i, o);
    }
  }
}

// Oracle: block v's A (q x q) and T (q x k) over all rows, in units of exp(max l).
void oracle(const MomentLayout& L, const Rows& r, int v, arma::mat& A, arma::mat& T) {
  const arma::uword n = r.l.n_elem;
  const double m = r.l.max();
  arma::mat U = arma::join_rows(arma::ones(n), r.z);
  arma::vec w = arma::exp(r.l - m);
  if (v > 0) w %= r.g.col(v - 1);
  A = U.t() * (U.each_col() % w);
  T = U.t() * (r.y.each_col() % w);
  (void)L;
}

// Moments of `rows.size()` queries over the row blocks [cuts[b], cuts[b+1]).
std::vector<LocalMoments> block_moments(const MomentLayout& L, const std::vector<Rows>& rows,
                                        const std::vector<arma::uword>& cuts) {
  std::vector<LocalMoments> parts;
  for (std::size_t b = 0; b + 1 < cuts.size(); ++b) {
    LocalMoments p = LocalMoments::empty(static_cast<std::int64_t>(rows.size()), L, true);
    for (std::size_t i = 0; i < rows.size(); ++i)
      accumulate(L, rows[i], cuts[b], cuts[b + 1], p.max[i], p.row(static_cast<std::int64_t>(i)),
                 p.peak[i]);
    parts.push_back(std::move(p));
  }
  return parts;
}

LocalMoments fold(std::vector<LocalMoments> parts, const std::vector<std::size_t>& order) {
  LocalMoments acc = parts[order[0]];
  for (std::size_t j = 1; j < order.size(); ++j) acc.merge(parts[order[j]]);
  return acc;
}

// Pairwise tree: ((0 1) (2 3)) ...
LocalMoments tree(std::vector<LocalMoments> parts) {
  while (parts.size() > 1) {
    std::vector<LocalMoments> next;
    for (std::size_t j = 0; j < parts.size(); j += 2) {
      if (j + 1 < parts.size()) parts[j].merge(parts[j + 1]);
      next.push_back(std::move(parts[j]));
    }
    parts = std::move(next);
  }
  return parts[0];
}

void expect_equals_oracle(const LocalMoments& got, const std::vector<Rows>& rows,
                          const std::string& what) {
  const MomentLayout& L = got.layout;
  const int q = L.q();
  std::vector<double> A(q * q), T(q * std::max(L.k, 1));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(got.max[i], rows[i].l.max()) << what;
    EXPECT_EQ(got.peak[i], 1.0) << what;
    for (int v = 0; v <= L.n_deriv; ++v) {
      arma::mat Ao, To;
      oracle(L, rows[i], v, Ao, To);
      attnreg::moments::solve_inputs(L, got.row(static_cast<std::int64_t>(i)), v, A.data(),
                                     T.data());
      const double scale = std::max({1.0, arma::abs(Ao).max(), To.is_empty() ? 0.0 : arma::abs(To).max()});
      for (int a = 0; a < q; ++a)
        for (int b = 0; b < q; ++b)
          EXPECT_NEAR(A[a * q + b], Ao(a, b), 1e-12 * scale) << what << " A v=" << v;
      for (int a = 0; a < q; ++a)
        for (int o = 0; o < L.k; ++o)
          EXPECT_NEAR(T[a * L.k + o], To(a, o), 1e-12 * scale) << what << " T v=" << v;
    }
  }
}

}  // namespace

TEST(LocalMoments, MergeInAnyOrderAndGroupingEqualsOnePass) {
  std::mt19937 rng(19);
  struct Case {
    MomentLayout L;
    arma::uword n;
    int blocks;
    double logit_mean;
  };
  const std::vector<Case> cases = {
      {MomentLayout::full_storage(1, 1), 40, 4, 0.0},
      {MomentLayout::full_storage(2, 3, 2), 57, 6, 900.0},      // exp(900) overflows
      {MomentLayout::full_storage(0, 2), 25, 3, -900.0},        // exp(-900) underflows
      {MomentLayout::packed_storage(3, 2), 64, 5, 800.0},      // LLA statistics
      {MomentLayout::packed_storage(0, 4), 33, 4, 1000.0},     // softmax statistics
      {MomentLayout::full_storage(3, 1, 1), 1, 3, 750.0},      // one row, two empty blocks
  };
  for (const Case& c : cases) {
    const std::string what = "p=" + std::to_string(c.L.p) + " k=" + std::to_string(c.L.k) +
                             " deriv=" + std::to_string(c.L.n_deriv) +
                             (c.L.packed ? " packed" : " full") + " n=" + std::to_string(c.n);
    std::vector<Rows> rows;
    for (int i = 0; i < 3; ++i) rows.push_back(random_rows(c.n, c.L, c.logit_mean + 40.0 * i, rng));
    // Random cuts, with an empty block forced in (two equal cut points).
    std::vector<arma::uword> cuts{0, c.n, c.n / 2, c.n / 2};
    std::uniform_int_distribution<arma::uword> u(0, c.n);
    for (int b = 3; b < c.blocks; ++b) cuts.push_back(u(rng));
    std::sort(cuts.begin(), cuts.end());
    const std::vector<LocalMoments> parts = block_moments(c.L, rows, cuts);
    std::vector<std::size_t> order(parts.size());
    std::iota(order.begin(), order.end(), 0);
    expect_equals_oracle(fold(parts, order), rows, what + " in order");
    for (int rep = 0; rep < 4; ++rep) {
      std::shuffle(order.begin(), order.end(), rng);
      expect_equals_oracle(fold(parts, order), rows, what + " shuffled");
    }
    expect_equals_oracle(tree(parts), rows, what + " tree");
    // The single pass (one block) is the same numbers.
    expect_equals_oracle(block_moments(c.L, rows, {0, c.n})[0], rows, what + " one pass");
  }
}

TEST(LocalMoments, EmptyIsTheIdentity) {
  const MomentLayout L = MomentLayout::packed_storage(2, 1);
  LocalMoments e = LocalMoments::empty(2, L, true);
  LocalMoments f = e;
  f.merge(e);
  for (std::int64_t i = 0; i < 2; ++i) {
    EXPECT_EQ(f.max[i], kNegInf);
    EXPECT_EQ(f.peak[i], 0.0);
  }
  for (double x : f.stats) EXPECT_EQ(x, 0.0);
  // Merging the empty moments leaves a partial unchanged, on either side.
  std::mt19937 rng(3);
  std::vector<Rows> rows{random_rows(9, L, 500.0, rng), random_rows(9, L, -20.0, rng)};
  const LocalMoments a = block_moments(L, rows, {0, 9})[0];
  LocalMoments ae = a, ea = e;
  ae.merge(e);
  ea.merge(a);
  for (const LocalMoments* x : {&ae, &ea}) {
    EXPECT_EQ(x->max, a.max);
    EXPECT_EQ(x->peak, a.peak);
    EXPECT_EQ(x->stats, a.stats);
  }
}

TEST(LocalMoments, PackedStorageIsTheAttentionOrder) {
  // omega, mu~ (p), Sigma~ packed upper, nu (k), Gamma (k x p): the order of the LLA
  // statistics (attention.hpp KeyPartial) and of the softmax statistics (p = 0).
  const MomentLayout L = MomentLayout::packed_storage(3, 2);
  EXPECT_EQ(L.n_stats(), 1 + 3 + 6 + 2 + 6);
  EXPECT_EQ(L.a_index(0, 0), 0);
  for (int a = 1; a <= 3; ++a) EXPECT_EQ(L.a_index(0, a), a);
  EXPECT_EQ(L.a_index(1, 1), 4);
  EXPECT_EQ(L.a_index(3, 3), 9);
  EXPECT_EQ(L.t_index(0, 1), 11);
  EXPECT_EQ(L.t_index(1 + 2, 1), 10 + 2 + 1 * 3 + 2);
  const MomentLayout S = MomentLayout::packed_storage(0, 4);
  EXPECT_EQ(S.n_stats(), 5);
  const MomentLayout F = MomentLayout::full_storage(2, 3, 1);
  EXPECT_EQ(F.n_block(), 9 + 9);
  EXPECT_EQ(F.n_stats(), 2 * 18);
  EXPECT_EQ(F.t_index(2, 1), 9 + 7);
}

TEST(LocalMoments, MergeRefusesDifferentShapes) {
  LocalMoments a = LocalMoments::empty(3, MomentLayout::full_storage(1, 1), true);
  for (const LocalMoments& b :
       {LocalMoments::empty(2, MomentLayout::full_storage(1, 1), true),
        LocalMoments::empty(3, MomentLayout::full_storage(1, 2), true),
        LocalMoments::empty(3, MomentLayout::full_storage(1, 1, 1), true),
        LocalMoments::empty(3, MomentLayout::packed_storage(1, 1), true),
        LocalMoments::empty(3, MomentLayout::full_storage(1, 1), false)}) {
    try {
      a.merge(b);
      ADD_FAILURE() << "merge of a different shape did not throw";
    } catch (const attnreg::InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("other"), std::string::npos) << e.what();
    }
  }
}
