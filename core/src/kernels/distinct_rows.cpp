#include "attnreg/kernels/distinct_rows.hpp"

#include <algorithm>
#include <numeric>

namespace attnreg {

DistinctRows distinct_rows(const arma::mat& X) {
  // Sort row indices lexicographically, then run-length (stable: ties keep the rows' order).
  const std::size_t n = X.n_rows, d = X.n_cols;
  std::vector<std::size_t> idx(n);
  std::iota(idx.begin(), idx.end(), std::size_t{0});
  auto row_less = [&](std::size_t a, std::size_t b) {
    for (std::size_t j = 0; j < d; ++j) {
      const double xa = X(a, j), xb = X(b, j);
      if (xa != xb) return xa < xb;
    }
    return a < b;
  };
  std::sort(idx.begin(), idx.end(), row_less);
  auto same_row = [&](std::size_t a, std::size_t b) {
    for (std::size_t j = 0; j < d; ++j)
      if (X(a, j) != X(b, j)) return false;
    return true;
  };
  std::vector<std::size_t> sorted_group(n);
  std::vector<std::size_t> first;  // first row of each group, in sorted order
  for (std::size_t t = 0; t < n; ++t) {
    if (t == 0 || !same_row(idx[t - 1], idx[t])) first.push_back(idx[t]);
    sorted_group[idx[t]] = first.size() - 1;
  }
  const std::size_t G = first.size();
  std::vector<std::size_t> ord(G), rank(G);  // sorted group -> position by first row
  std::iota(ord.begin(), ord.end(), std::size_t{0});
  std::sort(ord.begin(), ord.end(), [&](std::size_t a, std::size_t b) { return first[a] < first[b]; });
  for (std::size_t r = 0; r < G; ++r) rank[ord[r]] = r;

  DistinctRows out;
  out.group_of.resize(n);
  out.count.zeros(G);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t g = rank[sorted_group[i]];
    out.group_of[i] = g;
    out.count(g) += 1.0;
  }
  if (G == n) {
    out.X = X;
  } else {
    out.X.set_size(G, d);
    for (std::size_t g = 0; g < G; ++g) out.X.row(rank[g]) = X.row(first[g]);
  }
  return out;
}

}  // namespace attnreg
