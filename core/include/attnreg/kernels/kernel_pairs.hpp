// attnreg: the pair loop behind every kernel estimator (NW, local linear / polynomial, their
// leave-one-out forms, and the bandwidth selectors built on them).
//
// A KernelSpace holds the training rows prepared once for fast kernel sums:
//   * continuous columns centred (at the column mean) and divided by their bandwidth, stored
//     column-major in "internal" order (one contiguous array per column, so loops over training
//     points vectorise);
//   * categorical columns as level indices, with a (levels x levels) table of kernel values per
//     column (built once from the categorical kernel and its lambda);
//   * observation weights divided by their maximum (every estimator here is invariant to a
//     common factor in the weights);
//   * for the neighbour path, a NeighborIndex (sorted values in 1-D, a k-d tree for d > 1)
//     whose order is the internal order.
//
// The weight of training point i for a query x is
//     w_i(x) = a_i * prod_{continuous j} k((X_ij - x_j) / h_j) * prod_{categorical j} l_j(x_j, X_ij)
// with k the kernel *shape* (k(0) = 1; see kernel.hpp), a_i the observation weight. For the
// Gaussian the continuous product is one exp(-||z||^2 / 2).
//
// run() streams these weights, tile by tile, to a TileSink that accumulates whatever it needs
// (local moments for local polynomial fits, derivative moments for bandwidth gradients, ...).
// The weight matrix is never formed. Work is split over blocks of queries with OpenMP; every
// query's tiles arrive in a fixed order and each sink reduces them in a fixed order, so results
// do not depend on the number of threads.
//
// Paths:
//   * all pairs: every query meets every training point, in tiles of kTile points; the queries
//     of a block share each tile while it is in cache.
//   * neighbours (compact kernels, and the Gaussian when truncation > 0): only ranges of the
//     index that can hold a non-zero weight. Compact kernels lose nothing (the weight is exactly
//     zero outside the unit box). The Gaussian drops a point only when its weight is provably
//     below truncation * (the largest weight of that query): a lower bound M on the largest
//     weight comes from the points near the query, and every point outside the ball
//     ||z||^2 <= 2 log(c_max / (truncation * M)) has weight < truncation * M (c_max bounds
//     a_i * prod l_j). With truncation = 1e-16 the relative change in any kernel sum is below
//     n * 1e-16 in the worst case and far smaller in practice; queries whose nearby points all
//     have zero weight fall back to all pairs.
//
// Self exclusion: when the queries are the training rows themselves (fitted values, leverages,
// leave-one-out), a query may name its own training point (PreparedQueries::self). With
// RunOptions::exclude_self the engine zeroes that weight before the sink sees it (and before
// the truncation maximum is taken, so the leave-one-out sums are as exact as the full ones);
// the sink adds the self term back from self_weight() where it needs the full sum.
#pragma once

#include "attnreg/base/arma.hpp"
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "attnreg/base/option_spec.hpp"
#include "attnreg/kernels/kernel.hpp"
#include "attnreg/kernels/neighbors.hpp"

// The kernel-weight tiles are Google Highway code compiled per SIMD target and dispatched at run
// time (detail/kernel_tiles-inl.hpp). The moment loops that consume them are compiled for
// AVX-512, AVX2+FMA and the baseline and picked at load time (GCC function multi-versioning on
// x86-64 Linux); elsewhere they are compiled once. Define ATTNREG_NO_CLONES to turn this off.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    !defined(ATTNREG_NO_CLONES) && !defined(__CUDACC__)
#define ATTNREG_SIMD_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define ATTNREG_SIMD_CLONES
#endif

namespace attnreg {

enum class PairAlgorithm : int {
  automatic = 0,  ///< neighbours when they pay (compact or truncated kernel, 1..8 continuous
                  ///< columns, n >= 1024, and 64 probe queries visit under 60% of the
                  ///< points), all pairs otherwise
  all_pairs,      ///< exact: every training point for every query
  neighbors       ///< spatial index (needs a compact kernel or truncation > 0, and a continuous
                  ///< column)
};

/// Parse "auto", "all_pairs", "neighbors" (or "neighbours"); throws InvalidArgument.
PairAlgorithm pair_algorithm_from_name(const std::string& name, const std::string& arg);
const char* pair_algorithm_name(PairAlgorithm a);

/// The kernel specification: how weights are formed from the columns of X, and the threads of
/// the pair loop. One struct, held as the member `kernel` of every option struct of a kernel
/// estimator (LocalFitOptions, BandwidthSelectOptions, SpecificationOptions, the semiparametric
/// models' options) and passed whole from one to the next, so a field set by a face reaches
/// every estimator that a model composes. Defaults: the local_fit option table
/// (attnreg/base/option_spec.hpp).
struct KernelSpec {
  Kernel kernel{KernelType::gaussian};  ///< continuous columns
  /// Column types, one of 'c', 'u', 'o' per column of X (kernel.hpp's parse_var_types; "" = all
  /// continuous); checked against X by KernelSpace.
  std::string var_types = spec::local_fit::var_types;
  CategoricalKernel unordered_kernel{CategoricalKernelType::aitchison_aitken};
  CategoricalKernel ordered_kernel{CategoricalKernelType::li_racine_ordered};
  PairAlgorithm algorithm = PairAlgorithm::automatic;
  /// Gaussian neighbour path: weights below truncation * (row maximum) may be dropped.
  /// 0 disables truncation (the Gaussian then always uses all pairs). Must be in [0, 1e-8].
  double truncation = spec::local_fit::truncation;
  /// OpenMP threads of the estimators' pair loops (RunOptions::n_threads; 0 = the OpenMP
  /// default). KernelSpace itself does not read it.
  int n_threads = spec::local_fit::n_threads;
};

/// Queries in the coordinates of one KernelSpace (see KernelSpace::prepare).
struct PreparedQueries {
  std::size_t m = 0;
  arma::mat cont;                    ///< n_continuous x m, centred and scaled like the training data
  std::vector<std::uint32_t> codes;  ///< n_categorical x m level indices (query-major)
  std::vector<std::int64_t> self;    ///< per query: internal position of its own training row,
                                     ///< or -1; empty when no query is a training row
};

/// Receives the kernel weights of one thread's queries, tile by tile. One sink per thread.
class TileSink {
 public:
  virtual ~TileSink() = default;
  /// A block of queries starts; queries[s] is the query index of slot s (s < count).
  virtual void begin_block(const std::size_t* queries, std::size_t count) = 0;
  /// Weights w[0..len) of the training points at internal positions first .. first+len-1 for
  /// the query in `slot`. Tiles of one query never overlap and come in a fixed order.
  virtual void tile(std::size_t slot, std::size_t first, std::size_t len, const double* w) = 0;
  /// The block ends. row_max[s] is the largest weight seen for slot s (self excluded when the
  /// run excluded it): 0 means no training point had a positive weight.
  virtual void end_block(const double* row_max) = 0;
};

struct RunOptions {
  int n_threads = 0;          ///< 0 = OpenMP default; runs under 2e6 pairs use one thread
  bool exclude_self = false;  ///< zero each query's own training point (needs PreparedQueries::self)
  std::string label = "kernel sums";  ///< progress label
};

class KernelSpace {
 public:
  /// Tile length over training points (all-pairs path; neighbour ranges are split to it).
  static constexpr std::size_t kTile = 1024;
  /// Queries per block (the unit of parallel work).
  static constexpr std::size_t kBlock = 32;
  /// Largest weight that counts as "all weights underflow": a query whose largest weight is
  /// below this is rejected (the weights would be subnormal and lose precision).
  static constexpr double kTinyWeight = 1e-289;

  KernelSpace() = default;

  /// Prepare X (n x d, one observation per row) with per-column bandwidths (length d: h_j > 0
  /// for continuous columns, lambda_j in the kernel's range for categorical ones; length 1 is
  /// allowed when every column is continuous) and optional observation weights (length n,
  /// >= 0, not all 0; empty = all 1). Validates everything, naming the argument.
  KernelSpace(const arma::mat& X, const arma::vec& bandwidth, const KernelSpec& spec,
              const arma::vec& obs_weights = arma::vec());

  std::size_t n() const { return n_; }
  std::size_t dim() const { return types_.size(); }
  std::size_t n_continuous() const { return cont_cols_.size(); }
  std::size_t n_categorical() const { return cat_cols_.size(); }
  const std::vector<std::size_t>& continuous_columns() const { return cont_cols_; }
  const std::vector<std::size_t>& categorical_columns() const { return cat_cols_; }
  const std::vector<VarType>& var_types() const { return types_; }
  const KernelSpec& spec() const { return spec_; }
  /// Bandwidths per column as given (length d).
  const arma::vec& bandwidth() const { return bw_; }
  /// Number of levels of categorical column c (c indexes categorical_columns()).
  int n_levels(std::size_t c) const { return static_cast<int>(levels_[c].size()); }
  /// Sorted distinct codes of categorical column c as seen in training.
  const std::vector<double>& levels(std::size_t c) const { return levels_[c]; }
  /// True when run() uses the neighbour path.
  bool uses_neighbors() const { return use_index_; }

  /// order()[k] = original row stored at internal position k; position() is its inverse.
  const std::vector<std::size_t>& order() const { return order_; }
  const std::vector<std::size_t>& position() const { return position_; }
  /// Scaled continuous coordinates, internal order: column c is continuous column c of X,
  /// (X_ic - center_c) / h_c.
  const arma::mat& scaled() const { return xs_; }
  /// Observation weights (divided by their maximum), internal order; empty when all equal.
  const arma::vec& obs_weights() const { return ow_; }
  /// Centres subtracted from the continuous columns before scaling.
  const arma::vec& center() const { return center_; }
  /// Weight of training point k (internal position) for itself as a query: a_k times the
  /// categorical kernels' value on the diagonal (every continuous shape is 1 at 0).
  double self_weight(std::size_t k) const;

  /// Bring rows of X (m x d) into this space's coordinates. Throws InvalidArgument for NaN/Inf,
  /// a column-count mismatch, a non-integer code, or a category never seen in training.
  PreparedQueries prepare(const arma::mat& X, const std::string& arg) const;
  /// The training rows themselves as queries, each naming its own position (self).
  PreparedQueries training_queries() const;

  /// Stream the weights of every query to per-thread sinks made by make_sink().
  void run(const PreparedQueries& Q, const std::function<std::unique_ptr<TileSink>()>& make_sink,
           const RunOptions& opt = RunOptions()) const;

  /// Kernel weights of query q for internal positions [first, first+len) into w (no self
  /// masking); returns the largest. Exposed for sinks that need a second look and for tests.
  double weights(const PreparedQueries& Q, std::size_t q, std::size_t first, std::size_t len,
                 double* w) const;

 private:
  void build_tables();
  /// Lower bound on the largest weight of query q (neighbour path, Gaussian); excludes `self`.
  double near_max(const PreparedQueries& Q, std::size_t q, std::int64_t self, double* buf) const;
  void ranges_for(const PreparedQueries& Q, std::size_t q, std::int64_t self, double* buf,
                  std::vector<IndexRange>& out) const;

  KernelSpec spec_;
  std::vector<VarType> types_;
  std::size_t n_ = 0;
  arma::vec bw_;
  std::vector<std::size_t> cont_cols_, cat_cols_;
  arma::vec center_, inv_h_;
  arma::mat xs_;  // n x n_continuous, internal order
  std::vector<std::vector<double>> levels_;          // per categorical column
  std::vector<std::vector<std::uint32_t>> codes_;    // per categorical column, internal order
  std::vector<std::vector<double>> tables_;          // per categorical column, L x L row-major
  arma::vec ow_;
  double c_max_ = 1.0;  // upper bound on a_i * prod_j l_j
  bool use_index_ = false;
  NeighborIndex index_;
  std::vector<std::size_t> order_, position_;
};

}  // namespace attnreg
