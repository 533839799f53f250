// attnreg: identical rows of a design matrix grouped once (ties), for every kernel statistic
// that runs over the training rows (bandwidth objectives, fitted values, leverages, LOO fits,
// traces of the smoother matrix). Rows of X that are equal in every column get the same kernel
// weights from every query, so the all-pairs sums can run over the distinct rows with the
// group's total observation weight: a cost quadratic in the number of distinct rows.
#pragma once

#include "attnreg/base/arma.hpp"
#include <cstddef>
#include <vector>

namespace attnreg {

struct DistinctRows {
  arma::mat X;                        ///< G x d distinct rows, in order of their first row
  std::vector<std::size_t> group_of;  ///< n: group of each row of the input
  arma::vec count;                    ///< G: rows per group
  /// True when some rows are repeated (G < n).
  bool has_ties() const { return X.n_rows < group_of.size(); }
};

/// Group the identical rows of X (exact equality in every column). Groups are numbered in order
/// of their first row, so a matrix without repeated rows keeps its row order (X is returned
/// unchanged and group_of is the identity). O(n log n * d).
DistinctRows distinct_rows(const arma::mat& X);

}  // namespace attnreg
