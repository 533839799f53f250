// attnreg: spatial index over training points, so that kernel sums with compact (or truncated)
// kernels cost the number of neighbours rather than n.
//
// The index works in the coordinates it is given (the kernel code passes coordinates already
// divided by their bandwidths, so a kernel's support is the unit box and the truncated Gaussian's
// a ball). It reorders the points: order()[k] is the input column stored at position k, and
// every query answers with ranges [first, last) of positions, ascending and merged when
// adjacent, so callers evaluate kernels over contiguous memory.
//
//   * d == 1: the points sorted by value; a query is one range found by binary search.
//   * d >= 2: a k-d tree (median split on the widest side of each node's bounding box, leaves
//     of at most leaf_size points); a query returns the leaves whose bounding boxes meet the
//     region. Ranges may contain points outside the region: callers evaluate the exact kernel
//     there (zero for compact kernels), so results do not depend on the index.
#pragma once

#include "attnreg/base/arma.hpp"
#include <cstddef>
#include <vector>

namespace attnreg {

/// A half-open range of positions in a NeighborIndex's order.
struct IndexRange {
  std::size_t first = 0;
  std::size_t last = 0;
};

class NeighborIndex {
 public:
  NeighborIndex() = default;

  /// Build over the columns of P (d x n; one point per column). leaf_size >= 1 (k-d tree only).
  void build(const arma::mat& P, std::size_t leaf_size = 48);

  std::size_t n() const { return n_; }
  std::size_t dim() const { return d_; }
  bool empty() const { return n_ == 0; }
  /// order()[k] = input column stored at position k.
  const std::vector<std::size_t>& order() const { return order_; }

  /// Ranges holding every point p with max_j |p_j - q_j| <= radius (L-infinity ball).
  void box_query(const double* q, double radius, std::vector<IndexRange>& out) const;
  /// Ranges holding every point p with ||p - q||_2 <= radius.
  void ball_query(const double* q, double radius, std::vector<IndexRange>& out) const;
  /// A short range of points near q (d == 1: up to 2 * half_width points around q's insertion
  /// position in sorted order; k-d tree: the leaf whose cell contains q). Used to find a lower
  /// bound on the largest kernel weight before choosing a truncation radius.
  IndexRange near_range(const double* q, std::size_t half_width = 8) const;

 private:
  struct Node {
    std::size_t first = 0, last = 0;  // positions covered
    std::ptrdiff_t left = -1, right = -1;
    int split_dim = -1;
    double split = 0.0;
  };
  std::size_t build_node(std::size_t first, std::size_t last, std::vector<double>& pts);
  template <bool kBall>
  void query(const double* q, double radius, std::vector<IndexRange>& out) const;
  static void push(std::vector<IndexRange>& out, std::size_t first, std::size_t last);

  std::size_t n_ = 0, d_ = 0, leaf_size_ = 48;
  std::vector<std::size_t> order_;
  std::vector<double> sorted_;  // d == 1: the sorted coordinates
  std::vector<Node> nodes_;     // d >= 2
  std::vector<double> lo_, hi_; // d >= 2: bounding box of node k at [k*d, (k+1)*d)
};

}  // namespace attnreg
