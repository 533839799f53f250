// attnreg: the attention engine (core/README.md, Conventions): softmax / Nadaraya-Watson attention,
// Local Linear Attention (Zuo et al. 2025, arXiv:2510.01450) with three algorithms, kernelised
// linear attention and Mesa.
//
// Tensors. Q is (batch, heads, n_q, d), K is (batch, heads, n_k, d), V is (batch, heads, n_k,
// d_v); the output is (batch, heads, n_q, d_v). They are passed as raw views: a pointer, four
// extents and four strides counted in ELEMENTS (not bytes), so a C-contiguous numpy array, a
// transposed one, or an R array (column-major) is read in place without a copy. A plain
// (seq, dim) matrix is batch = heads = 1 (matrix_view). Inputs and output are both float32 or
// both float64. The output is written through its own view and must not overlap the inputs.
//
// Keys and values share their length n_k; queries may differ (cross-attention). With `causal`,
// query i may use key j <= i + (n_k - n_q) ("bottom-right" alignment: with n_q == n_k this is
// j <= i; with n_q < n_k the queries are the last n_q positions, as when decoding), which needs
// n_q <= n_k. A sliding `window` w > 0 further restricts query i (aligned position
// a_i = i + n_k - n_q) to keys a_i - w < j <= a_i when causal, |j - a_i| < w otherwise.
//
// Methods (Options::method):
//   softmax  m(q) = sum_j w_j v_j / sum_j w_j with w_j = exp(scale q'k_j); scale defaults to
//            1/sqrt(d). Single pass with the running max (online softmax).
//   nw_rbf   the same with w_j = exp(-||q - k_j||^2 / (2 h^2)); h = bandwidth, default
//            d^(1/4) so that with unit-norm q, k it equals softmax with its default scale
//            (Pai 2025, "Regression is All You Need": tau = h^2).
//   lla      Local Linear Attention (Zuo et al. 2025, eqs. 6-8) with the omega-scaled ridge of
//            core/README.md, Conventions: m(q) = sum_j s_j v_j, s_j = w_j (1 - z_j'rho) / (omega - mu'rho),
//            rho = Sigma^-1 mu, Sigma = sum w z z' + ridge * omega * I, z_j = k_j - q.
//            Kernel: dot, w = exp(q'k / h) (Zuo et al. 2025, Alg. 1), or rbf, w = exp(-||q-k||^2/(2h^2)).
//            Algorithms: naive (materialises the n_q x n_k weights, explicit centring, exact
//            solve, float64: the oracle), direct (per-query omega, mu~, Sigma~ and value
//            moments accumulated over key blocks with the running max, merged associatively,
//            Cholesky; float64; for small d), blockwise (Zuo et al. 2025, Algorithm 1 with the batched
//            conjugate-gradient solver of Algorithm 2; working memory Theta(block (d + Bc)) per
//            thread, Theta(n d) overall; computes in the input precision).
//   linear   m(q) = sum_j phi(q)'phi(k_j) v_j / sum_j phi(q)'phi(k_j) (normalize = true) or
//            sum_j phi(q)'phi(k_j) v_j, with phi one of FeatureMap (elu(x) + 1 as Katharopoulos
//            et al., relu, identity, or Pai's (2025) Epanechnikov map [sqrt(1 - 2/tau),
//            sqrt(2/tau) x], which with unit-norm q, k and tau >= 4 is Epanechnikov NW).
//            Causal: the running-state recurrence S_i = S_{i-1} + phi(k_i) v_i'.
//   mesa     the global ridge regression of Zuo et al. 2025, eq. 2: m(q_i) = S_i H_i^-1 q_i,
//            S_i = sum_j v_j k_j', H_i = sum_j k_j k_j' + ridge I over the keys query i may use
//            (causal: the recurrence of eq. 2). Here the ridge is NOT scaled: all weights are 1.
//
// Ridge: a scalar, or one value per query position (Zuo et al. 2025, eq. 27): a vector of length
// n_q (shared by all batches and heads) or batch * heads * n_q (row-major (b, h, i)).
//
// Threads: OpenMP over (batch, head, query block) (LLA, softmax, nw_rbf) or (batch, head)
// (linear and mesa recurrences). Each work item runs on one thread in a fixed order, so the
// result is bitwise identical for every thread count.
//
// Errors: InvalidArgument for bad shapes, NaN/Inf input, bad options, and for LLA or Mesa with
// ridge 0 at a query that sees fewer than d keys (Sigma is then singular: pass ridge > 0).
// NumericalError when a computed Sigma is not positive definite in working precision or the
// LLA denominator omega - mu'rho is not positive. Interrupted on Ctrl-C (faces' checker).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>
#include "attnreg/base/option_spec.hpp"

#include "attnreg/moments/local_moments.hpp"

namespace attnreg {
namespace attention {

/// A (batch, heads, seq, dim) view. T is `const float`/`const double` for inputs and
/// `float`/`double` for outputs. Strides are in elements and may be any non-negative values
/// (zero strides broadcast, e.g. one K shared by all heads).
template <class T>
struct View {
  T* data = nullptr;
  std::int64_t shape[4] = {0, 0, 0, 0};    ///< batch, heads, seq, dim
  std::int64_t strides[4] = {0, 0, 0, 0};  ///< in elements

  std::int64_t batch() const { return shape[0]; }
  std::int64_t heads() const { return shape[1]; }
  std::int64_t seq() const { return shape[2]; }
  std::int64_t dim() const { return shape[3]; }
  T& at(std::int64_t b, std::int64_t h, std::int64_t s, std::int64_t d) const {
    return data[b * strides[0] + h * strides[1] + s * strides[2] + d * strides[3]];
  }
};

/// C-contiguous (row-major) (batch, heads, seq, dim) view.
template <class T>
View<T> make_view(T* data, std::int64_t batch, std::int64_t heads, std::int64_t seq,
                  std::int64_t dim) {
  View<T> v;
  v.data = data;
  v.shape[0] = batch;
  v.shape[1] = heads;
  v.shape[2] = seq;
  v.shape[3] = dim;
  v.strides[3] = 1;
  v.strides[2] = dim;
  v.strides[1] = seq * dim;
  v.strides[0] = heads * seq * dim;
  return v;
}

/// View with explicit extents and element strides.
template <class T>
View<T> make_view(T* data, const std::int64_t shape[4], const std::int64_t strides[4]) {
  View<T> v;
  v.data = data;
  for (int i = 0; i < 4; ++i) {
    v.shape[i] = shape[i];
    v.strides[i] = strides[i];
  }
  return v;
}

/// A row-major (seq, dim) matrix as one batch and one head.
template <class T>
View<T> matrix_view(T* data, std::int64_t seq, std::int64_t dim) {
  return make_view(data, 1, 1, seq, dim);
}

/// A column-major (seq, dim) matrix (an R or Armadillo matrix) as one batch and one head.
template <class T>
View<T> col_major_matrix_view(T* data, std::int64_t seq, std::int64_t dim) {
  View<T> v = make_view(data, 1, 1, seq, dim);
  v.strides[2] = 1;
  v.strides[3] = seq;
  v.strides[1] = seq * dim;
  v.strides[0] = seq * dim;
  return v;
}

enum class Method { softmax, nw_rbf, lla, linear, mesa };
enum class LLAAlgorithm { naive, direct, blockwise };
enum class LLAKernel { dot, rbf };
enum class FeatureMap { elu_plus_one, relu, identity, epanechnikov };

/// Every option, with its default. NaN means "use the documented default".
struct Options {
  Method method = Method::softmax;
  bool causal = spec::attention::causal;
  std::int64_t window = spec::attention::window;  ///< sliding window width w (0 = none), see the header comment

  /// Dot-product kernels (softmax; lla with the dot kernel): logits scale * q'k.
  /// Default 1/sqrt(d). For lla, scale = 1/h; give scale or bandwidth, not both.
  double scale = spec::attention::scale;
  /// nw_rbf and lla-rbf: the Gaussian bandwidth h (default d^(1/4)); lla-dot: h of exp(q'k/h)
  /// (default sqrt(d)).
  double bandwidth = spec::attention::bandwidth;

  /// lla: lambda of Sigma = sum w z z' + lambda omega I; mesa: lambda of H = sum k k' + lambda I.
  double ridge = spec::attention::ridge;
  /// Per-query ridge (Zuo et al. 2025, eq. 27): empty, length n_q, or batch * heads * n_q.
  /// Overrides `ridge` when not empty.
  std::vector<double> ridge_per_query;

  LLAAlgorithm lla_algorithm = LLAAlgorithm::blockwise;
  LLAKernel lla_kernel = LLAKernel::dot;
  std::int64_t block_q = spec::attention::block_q;  ///< Br: query rows per block (blockwise/direct, softmax, nw_rbf)
  std::int64_t block_k = spec::attention::block_k;  ///< Bc: keys per tile
  /// CG stops a row when ||Sigma rho - mu|| <= cg_tol ||mu||. NaN: 1e-12 for float64 inputs,
  /// 1e-6 for float32.
  double cg_tol = spec::attention::cg_tol;
  int cg_max_iter = spec::attention::cg_max_iter;  ///< 0: 2 d + 10 (CG is exact after d steps in exact arithmetic)

  FeatureMap feature_map = FeatureMap::elu_plus_one;  ///< linear attention
  double feature_tau = spec::attention::feature_tau;  ///< Epanechnikov map's temperature tau (>= 2; = NW for tau >= 4)
  bool normalize = spec::attention::normalize;  ///< linear attention: divide by sum_j phi(q)'phi(k_j)

  int n_threads = spec::attention::n_threads;  ///< 0 = OpenMP default
};

/// What a call reports besides its output. `warnings` are complete sentences the faces turn
/// into R warnings / Python warnings.
struct Diagnostics {
  std::string method;  ///< e.g. "lla/blockwise"
  int n_threads = 1;
  std::int64_t n_query_blocks = 0;  ///< work items of the blockwise paths (batch*heads*blocks)
  // LLA blockwise (conjugate gradients)
  std::vector<int> cg_iterations;  ///< per (batch, head, query block), row-major; CG sweeps
  int cg_max_iterations = 0;       ///< max of cg_iterations
  int cg_iteration_limit = 0;      ///< the cg_max_iter that was in force
  double cg_tol = 0.0;             ///< the tolerance that was in force
  bool cg_converged = true;        ///< every query row reached the tolerance
  std::int64_t cg_rows_not_converged = 0;
  double cg_max_relative_residual = 0.0;  ///< max over rows of ||r|| / ||mu|| (CG recurrence)
  // LLA (all algorithms)
  /// min over queries of (omega - mu'rho) / omega, in (0, 1]; small values mean the query is at
  /// the edge of its weighted keys and the local linear weights are large and of both signs.
  double min_relative_denominator = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::string> warnings;
};

/// Run the method of `opt` on Q, K, V, writing `out`. T is float or double.
template <class T>
Diagnostics forward(const View<const T>& Q, const View<const T>& K, const View<const T>& V,
                    const View<T>& out, const Options& opt);

/// Convenience wrappers: forward() with opt.method set.
template <class T>
Diagnostics softmax(const View<const T>& Q, const View<const T>& K, const View<const T>& V,
                    const View<T>& out, Options opt = {});
template <class T>
Diagnostics nw_rbf(const View<const T>& Q, const View<const T>& K, const View<const T>& V,
                   const View<T>& out, Options opt = {});
template <class T>
Diagnostics lla(const View<const T>& Q, const View<const T>& K, const View<const T>& V,
                const View<T>& out, Options opt = {});
template <class T>
Diagnostics linear(const View<const T>& Q, const View<const T>& K, const View<const T>& V,
                   const View<T>& out, Options opt = {});
template <class T>
Diagnostics mesa(const View<const T>& Q, const View<const T>& K, const View<const T>& V,
                 const View<T>& out, Options opt = {});

/// The attention weights (equivalent kernel, core/README.md, Conventions) of the method of `opt`:
/// out(b, h, i, j) is the weight of value j in the output of query i, so forward() == weights * V.
/// Rows sum to 1 for softmax, nw_rbf and lla (and normalised linear attention). Computed in float64
/// by the naive route; `weights` is (batch, heads, n_q, n_k), Theta(n_q n_k) memory.
template <class T>
Diagnostics attention_weights(const View<const T>& Q, const View<const T>& K,
                              const View<T>& weights, const Options& opt);

// ---------------------------------------------------------------- LLA sufficient statistics
// The direct algorithm as an explicit map-reduce, for splitting the keys over workers: each
// worker computes lla_partial() over its slice of keys, partials are combined with merge()
// (associative and commutative), and lla_finalize() solves and writes the output. One round,
// no second pass over the keys: the value moments nu~ = sum w v and Gamma = sum w v k' ride
// along, and m(q) = (nu~ (1 + q'rho) - Gamma rho) / (omega - mu'rho) (eq. 8 expanded).

/// Per (batch, head, query) statistics over a subset of keys, relative to a running max: the
/// split-key partial of LLA (lla_partial) and of softmax / nw_rbf (partials.hpp
/// softmax_partial). The numbers are LocalMoments (attnreg/moments/local_moments.hpp) in the
/// packed storage, (b, h, i) row-major: for LLA omega, mu~ (d), Sigma~ packed upper
/// (d(d+1)/2), nu~ (d_v), Gamma (d_v x d, row-major) (p = d, k = d_v); for softmax omega and
/// nu~ (p = 0).
struct KeyPartial {
  std::int64_t batch = 0, heads = 0, n_query = 0, dim = 0, dim_v = 0;
  std::int64_t n_keys_total = 0;  ///< length of the full key sequence (masks are global)
  /// Running max of the logits per (b, h, i) (-inf where no key was seen yet) and the moments.
  moments::LocalMoments moments;
  /// Key positions the statistics cover: sorted, disjoint half-open intervals [lo, hi) stored
  /// flat (lo0, hi0, lo1, hi1, ...). merge() refuses overlapping slices (a key counted twice)
  /// and the finalisations refuse anything short of [0, n_keys_total) (a silently partial
  /// estimate).
  std::vector<std::int64_t> key_ranges;
  /// The mask the statistics were accumulated under (Options::causal, Options::window): it is
  /// baked into them, so merge() refuses partials of different masks and lla_finalize() a
  /// mask other than this one.
  bool causal = false;
  std::int64_t window = 0;

  std::int64_t n_stats() const { return moments.layout.n_stats(); }
};
using LLAPartial = KeyPartial;

/// Key coverage of split-key partials (KeyPartial): sorted, disjoint half-open
/// intervals [lo, hi) stored flat. merge_key_ranges returns the union of a and b and throws
/// InvalidArgument naming "other" when they overlap (a key counted twice);
/// require_all_keys throws InvalidArgument naming "partial" unless the coverage is exactly
/// [0, n_keys_total) (`what` names the estimate in the message).
std::vector<std::int64_t> merge_key_ranges(const std::vector<std::int64_t>& a,
                                           const std::vector<std::int64_t>& b);
void require_all_keys(const std::vector<std::int64_t>& ranges, std::int64_t n_keys_total,
                      const char* what);

/// Statistics of every query over keys [key_offset, key_offset + K.seq()) of a sequence of
/// n_keys_total keys (K and V hold just that slice). The kernel, bandwidth, causal and window
/// options of `opt` apply with global key positions.
template <class T>
LLAPartial lla_partial(const View<const T>& Q, const View<const T>& K, const View<const T>& V,
                       std::int64_t key_offset, std::int64_t n_keys_total, const Options& opt);

/// into <- into (+) other: the statistics over the union of both key sets (LocalMoments::merge).
/// Throws InvalidArgument when the partials do not describe the same queries and statistics
/// or their key slices overlap.
void merge(KeyPartial& into, const KeyPartial& other);

/// Solve and write the LLA output from complete statistics (Cholesky of Sigma per query).
/// Throws InvalidArgument when the statistics do not cover every key [0, n_keys_total) or
/// when opt.causal or opt.window differs from the mask the statistics were computed under.
template <class T>
Diagnostics lla_finalize(const View<const T>& Q, const LLAPartial& stats, const View<T>& out,
                         const Options& opt);

// ---------------------------------------------------------------- backward (float64 reference)
// Vector-Jacobian products of softmax, nw_rbf and lla: given dO (batch, heads, n_q, d_v), the
// gradients of sum(dO * forward(Q, K, V)) with respect to Q, K, V (and for lla the ridge),
// for the options of the forward (causal, window, scale / bandwidth, kernel, ridge scalar or
// per query). Computed in float64 from the exact forward of each query (explicit centring, one
// Cholesky of Sigma per query; for lla the adjoint of rho = Sigma^-1 mu is a second solve with
// the same factor, reusing rho, delta, omega and the row max), then cast to T. The blockwise
// and direct forwards compute the same function, so these are their gradients too.
// dQ, dK, dV have the shapes of Q, K, V, their own memory (no zero strides, no overlap).
// d_ridge (lla, may be null) receives the gradient in the shape the ridge was given: one value
// (scalar ridge), n_q values (per position, summed over batch and heads) or batch*heads*n_q.
// Options::lla_algorithm, block sizes and CG settings do not apply. Errors as forward(); an LLA
// denominator that is not positive, or a Sigma that is not positive definite, is a
// NumericalError naming the (batch, head, query). Work items are (batch, head) pairs: the
// result is bitwise identical for every thread count.
template <class T>
Diagnostics backward(const View<const T>& Q, const View<const T>& K, const View<const T>& V,
                     const View<const T>& dO, const View<T>& dQ, const View<T>& dK,
                     const View<T>& dV, const Options& opt,
                     std::vector<double>* d_ridge = nullptr);
/// backward() with opt.method = softmax.
template <class T>
Diagnostics softmax_vjp(const View<const T>& Q, const View<const T>& K, const View<const T>& V,
                        const View<const T>& dO, const View<T>& dQ, const View<T>& dK,
                        const View<T>& dV, Options opt = {});
/// backward() with opt.method = lla.
template <class T>
Diagnostics lla_vjp(const View<const T>& Q, const View<const T>& K, const View<const T>& V,
                    const View<const T>& dO, const View<T>& dQ, const View<T>& dK,
                    const View<T>& dV, std::vector<double>* d_ridge = nullptr, Options opt = {});

// ---------------------------------------------------------------- names for the faces

/// Parse the faces' strings; errors name `arg` (the face's argument name) and list the valid
/// choices.
Method parse_method(const std::string& s, const std::string& arg = "method");
LLAAlgorithm parse_lla_algorithm(const std::string& s, const std::string& arg = "algorithm");
LLAKernel parse_lla_kernel(const std::string& s, const std::string& arg = "kernel");
FeatureMap parse_feature_map(const std::string& s, const std::string& arg = "feature_map");
std::string to_string(Method m);
std::string to_string(LLAAlgorithm a);

}  // namespace attention
}  // namespace attnreg
