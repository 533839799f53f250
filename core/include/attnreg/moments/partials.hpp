// attnreg: mergeable partial statistics of the kernel estimators, for running them on a cluster
// (attnreg.dask) or over any other split of the training rows / keys.
//
// Every estimator here is a per-query solve on sums over training rows (Zuo et al. 2025,
// arXiv:2510.01450, eq. 7):
//   local polynomial (NW = degree 0, local linear = degree 1, ...; local_fit.hpp)
//       A = sum_i w_i [1; z_i][1; z_i]'   (omega, mu~, Sigma~ in bandwidth units),
//       T = sum_i w_i [1; z_i] y_i'       (the value moments; for NW: omega and sum_i w_i y_i),
//   softmax / nw_rbf attention: omega = sum_j w_j and sum_j w_j v_j,
//   LLA attention: omega, mu~, Sigma~, nu~, Gamma (attention.hpp KeyPartial).
// All of them are LocalMoments (local_moments.hpp) with one merge.
// Sums over disjoint blocks of rows add, so a partial over block B1 merged with a partial over
// block B2 is the partial over B1 u B2, in any grouping and order (a commutative monoid; the
// results agree to rounding). finalize() then solves per query exactly as the in-memory
// estimator does: the same equilibrated Cholesky, omega-scaled ridge, statuses and errors.
//
// Scales. Weights that are exp-based are kept relative to a per-query scale so that merging
// is exact:
//   * local polynomial: the Gaussian product-kernel shape k has k <= 1, and KernelSpace divides
//     the observation weights by their maximum, so a block's weights are the global ones times
//     max(global sample weight) / max(block sample weight). Each partial keeps log_scale (per
//     query, log of the block's divisor) and row_max (the largest weight per query, relative
//     to exp(log_scale)); merge() rescales both sides to the larger scale (running max with
//     rescaling). After every block is merged the scale is the global maximum, so row_max and
//     the moments are those of the in-memory pass and the underflow / no-weight statuses
//     (KernelSpace::kTinyWeight) are decided on the same numbers. A query far from a block
//     (all its weights in that block underflow to 0) contributes exactly what it contributes in
//     memory, where the same weights underflow the same way.
//   * softmax / nw_rbf / LLA attention: the running max of the logits per query
//     (local_moments.hpp merge_running), as split-KV attention does.
//
// Layout: one observation per row; queries are rows of X_query. Leave-one-out (the cross-
// validation objective at a fixed bandwidth): the queries are the training rows themselves
// and, for the block that holds a query's own row, self_rows names that row (block-relative)
// so that its weight is excluded (KernelSpace self exclusion); finalize with leave_one_out.
//
// Categorical columns are not supported here: a categorical kernel's weights depend on the
// number of levels seen in all of training, which one block cannot know.
#pragma once

#include "attnreg/base/arma.hpp"
#include <cstdint>
#include <string>
#include <vector>

#include "attnreg/attention/attention.hpp"
#include "attnreg/moments/local_moments.hpp"
#include "attnreg/solve/local_fit.hpp"

namespace attnreg {

/// Local polynomial moments of m queries over one block of training rows: a LocalMoments in
/// the full storage (A q x q, T q x k per query) with the peak (the largest weight) tracked.
/// moments.max is the log of this partial's weight divisor (-inf: empty), moments.peak the
/// largest weight relative to it (0 = none positive).
struct LocalPartial {
  int degree = 1;
  std::size_t q = 1;      ///< 1 + number of basis terms
  std::size_t k = 1;      ///< outputs
  std::size_t dim = 0;    ///< columns of X
  moments::LocalMoments moments;

  std::size_t n_query() const { return moments.max.size(); }
};

/// Moments of the queries X_query (m x d) over the training block (X_block n_b x d, Y_block
/// n_b x k) with the kernel, degree, truncation and algorithm of `opt` (opt.ridge enters only
/// at finalize; var_types must be continuous) and bandwidth (length d or 1). sample_weight:
/// empty or length n_b, >= 0. self_rows: empty, or length m with the block row of each query's
/// own training row (or -1): that row is excluded (leave-one-out). A block with no rows or only
/// zero sample weights gives the empty partial. Errors name "X", "y", "X_new",
/// "bandwidth", "sample_weight" as LocalPolynomial does.
LocalPartial local_partial(const arma::mat& X_block, const arma::mat& Y_block,
                           const arma::mat& X_query, const arma::vec& bandwidth,
                           const LocalFitOptions& opt,
                           const arma::vec& sample_weight = arma::vec(),
                           const std::vector<std::int64_t>& self_rows = {},
                           const std::string& query_arg = "X_new");

/// The partial of no training rows (the identity of merge).
LocalPartial local_partial_empty(std::size_t m, std::size_t q, std::size_t k, std::size_t dim,
                                 int degree);

/// into <- into (+) other (statistics over the union of both blocks; LocalMoments::merge).
/// Throws InvalidArgument when they describe different queries or fits.
void merge(LocalPartial& into, const LocalPartial& other);

/// Solve every query from complete (merged) moments: m x k fits. status (optional) receives
/// the per-query status. With throw_on_failure, a failed query throws the NumericalError of
/// LocalPolynomial (predict: "X_new row i: ..."; leave_one_out: "leave-one-out fit at
/// training row i: ..."); otherwise failed rows hold NaN.
arma::mat local_finalize(const LocalPartial& p, const arma::vec& bandwidth,
                         const LocalFitOptions& opt, std::vector<QueryStatus>* status = nullptr,
                         bool throw_on_failure = true, bool leave_one_out = false,
                         const std::string& query_arg = "X_new");

// ---------------------------------------------------------------- softmax / nw_rbf attention

/// Per (batch, head, query) running statistics over a slice of keys: the key-sliced partial of
/// attention (attention.hpp KeyPartial) with moments in the packed storage with p = 0: the running
/// max of the logits and, relative to it, omega = sum_j w_j and sum_j w_j v_j (Zuo et al. 2025,
/// Alg. 1 with rho = 0). Accumulated in double; merged by attention::merge.
using SoftmaxPartial = attention::KeyPartial;

/// Statistics of every query over keys [key_offset, key_offset + K.seq()) of n_keys_total
/// (K, V hold that slice). opt.method is softmax or nw_rbf; scale, bandwidth, causal and
/// window apply with global key positions, as in attention::forward.
template <class T>
SoftmaxPartial softmax_partial(const attention::View<const T>& Q,
                               const attention::View<const T>& K,
                               const attention::View<const T>& V, std::int64_t key_offset,
                               std::int64_t n_keys_total, const attention::Options& opt);

/// out (batch, heads, n_q, dim_v) = sum w v / omega. Throws InvalidArgument when the partial
/// does not cover every key [0, n_keys_total) (merge every key slice first) and
/// NumericalError when a query has no key weight.
template <class T>
void softmax_finalize(const SoftmaxPartial& p, const attention::View<T>& out);

}  // namespace attnreg
