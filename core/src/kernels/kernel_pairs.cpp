#include "attnreg/kernels/kernel_pairs.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <numeric>
#include <sstream>
#include <string>

#include "attnreg/base/error.hpp"
#include "attnreg/base/runtime.hpp"
#include "attnreg/detail/simd_dispatch.hpp"

// Kernel-weight tiles with Google Highway: kernel_tiles-inl.hpp is compiled once per SIMD target
// (hwy/foreach_target.h) and HWY_DYNAMIC_DISPATCH picks the best for the running CPU.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "attnreg/detail/kernel_tiles-inl.hpp"
#include <hwy/foreach_target.h>  // must come before highway.h
#include <hwy/highway.h>
#include "attnreg/detail/kernel_tiles-inl.hpp"

namespace attnreg {

PairAlgorithm pair_algorithm_from_name(const std::string& name, const std::string& arg) {
  if (name == "auto" || name == "automatic") return PairAlgorithm::automatic;
  if (name == "all_pairs" || name == "exact") return PairAlgorithm::all_pairs;
  if (name == "neighbors" || name == "neighbours") return PairAlgorithm::neighbors;
  throw InvalidArgument(arg + ": unknown algorithm '" + name +
                        "' (choose auto, all_pairs or neighbors)");
}

const char* pair_algorithm_name(PairAlgorithm a) {
  switch (a) {
    case PairAlgorithm::automatic: return "auto";
    case PairAlgorithm::all_pairs: return "all_pairs";
    case PairAlgorithm::neighbors: return "neighbors";
  }
  return "?";
}

// The tile loop (kernel_tiles-inl.hpp): one copy per SIMD target, the best for this CPU picked
// at the first call.
HWY_EXPORT(TileWeights);
HWY_EXPORT(ExpNonpositiveArray);
HWY_EXPORT(KernelShapeArray);
HWY_EXPORT(SimdTargetName);

namespace simd_dispatch {
void exp_nonpositive(const double* x, std::size_t n, double* y) {
  HWY_DYNAMIC_DISPATCH(ExpNonpositiveArray)(x, n, y);
}
void kernel_shape(KernelType kernel, const double* u, std::size_t n, double* y) {
  HWY_DYNAMIC_DISPATCH(KernelShapeArray)(kernel, u, n, y);
}
const char* target_name() {
  check_simd_policy();
  return HWY_DYNAMIC_DISPATCH(SimdTargetName)();
}

namespace {
// ATTNREG_SIMD, applied when the library is loaded (before any dispatch); an error is kept for
// check_simd_policy(): a static initializer must not throw.
std::string apply_simd_env() {
  const char* env = std::getenv("ATTNREG_SIMD");
  if (env == nullptr || *env == '\0') return "";
  const std::string v(env);
  int64_t target = 0;
  if (v == "avx512") target = HWY_AVX3;
  else if (v == "avx2") target = HWY_AVX2;
  else if (v == "sse4") target = HWY_SSE4;
  else if (v == "scalar") target = HWY_EMU128;
  else
    return "ATTNREG_SIMD='" + v + "': unknown SIMD target (use avx512, avx2, sse4 or scalar, "
           "or unset it for the best one this CPU has)";
  // Highway's targets are bits, better ones lower: disabling every lower bit caps the dispatch.
  if (target != HWY_EMU128 && (hwy::SupportedTargets() & target) == 0)
    return "ATTNREG_SIMD='" + v + "': this CPU does not support that target (unset it)";
  hwy::DisableTargets(target - 1);
  return "";
}
const std::string kSimdEnvError = apply_simd_env();
}  // namespace

void check_simd_policy() {
  if (!kSimdEnvError.empty()) throw InvalidArgument(kSimdEnvError);
}
}  // namespace simd_dispatch

namespace {

using detail::TileArgs;

inline double tile_weights(const TileArgs& a, std::size_t first, std::size_t len, double* w) {
  return HWY_DYNAMIC_DISPATCH(TileWeights)(a, first, len, w);
}

// Largest element (used after masking a query's own row): weights are >= 0 and never NaN, so
// the lane-wise maximum is the same number as the sequential one.
inline double tile_max(const double* w, std::size_t len) {
  double r = 0.0;
#pragma omp simd reduction(max : r)
  for (std::size_t i = 0; i < len; ++i) r = w[i] > r ? w[i] : r;
  return r;
}

bool is_integer(double v) { return std::isfinite(v) && v == std::floor(v); }

// ---------------------------------------------------------------- steps of the constructor
// Shape of X, the column types and the kernel options; the column types.
std::vector<VarType> checked_types(const arma::mat& X, const KernelSpec& spec) {
  const std::size_t d = X.n_cols;
  // The column types first, as the estimators checked them before they built a space.
  std::vector<VarType> types = parse_var_types(spec.var_types, d, "var_types");
  check::require(X.n_rows >= 1, "X", "needs at least one row");
  check::require(d >= 1, "X", "needs at least one column");
  check::all_finite(X, "X");
  check::require(spec.truncation >= 0.0 && spec.truncation <= 1e-8, "truncation",
                 "must be in [0, 1e-8] (the default 1e-16 keeps results within 1e-12 of all "
                 "pairs; 0 disables truncation)");
  check::require(spec.unordered_kernel.ordered() == false, "unordered_kernel",
                 "must be an unordered kernel (aitchison_aitken or li_racine)");
  check::require(spec.ordered_kernel.ordered(), "ordered_kernel",
                 "must be an ordered kernel (li_racine or wang_van_ryzin)");
  // The normalising factor (1 - lambda) / (1 + lambda) is the same for every row, so it
  // cancels in a kernel-weighted fit (kernel.hpp): one name for one estimator.
  check::require(spec.ordered_kernel.type != CategoricalKernelType::li_racine_normalized,
                 "ordered_kernel",
                 "li_racine_normalized is for a density's own ordered column; in a regression "
                 "its factor (1 - lambda) / (1 + lambda) cancels, so use li_racine (the same "
                 "fit)");
  return types;
}

// One bandwidth per column (or one for all continuous columns), positive where continuous.
arma::vec checked_bandwidths(const arma::vec& bandwidth, std::size_t d,
                             const std::vector<std::size_t>& cont_cols, bool any_categorical) {
  arma::vec bw;
  if (bandwidth.n_elem == 1 && d > 1) {
    check::require(!any_categorical, "bandwidth",
                   "one bandwidth for several columns is only allowed when all columns are "
                   "continuous; give one value per column (lambda for categorical ones)");
    bw = arma::vec(d, arma::fill::value(bandwidth(0)));
  } else {
    if (bandwidth.n_elem != d) {
      std::ostringstream msg;
      msg << "has " << bandwidth.n_elem << " values but X has " << d
          << " columns (give one bandwidth per column, or one for all continuous columns)";
      throw InvalidArgument("bandwidth: " + msg.str());
    }
    bw = bandwidth;
  }
  for (std::size_t j : cont_cols) {
    if (!(std::isfinite(bw(j)) && bw(j) > 0.0)) {
      std::ostringstream msg;
      msg << "bandwidth: must be > 0 and finite for continuous column " << (j + 1) << ", got "
          << bw(j) << " (pass a positive number, e.g. a rule-of-thumb 1.06 sd n^(-1/5))";
      throw InvalidArgument(msg.str());
    }
  }
  return bw;
}

// Sorted levels of categorical column j (integer codes), its bandwidth checked against them.
std::vector<double> checked_levels(const arma::mat& X, std::size_t j, VarType type,
                                   const KernelSpec& spec, double bw) {
  std::vector<double> lv;
  lv.reserve(16);
  for (std::size_t i = 0; i < X.n_rows; ++i) {
    if (!is_integer(X(i, j))) {
      std::ostringstream msg;
      msg << "X: categorical column " << (j + 1) << " has the non-integer value " << X(i, j)
          << " at row " << (i + 1)
          << " (pass integer codes for categorical columns, e.g. 0, 1, 2 for the levels)";
      throw InvalidArgument(msg.str());
    }
  }
  arma::vec u = arma::unique(X.col(j));
  lv.assign(u.begin(), u.end());
  const CategoricalKernel& ck =
      type == VarType::ordered ? spec.ordered_kernel : spec.unordered_kernel;
  std::ostringstream arg;
  arg << "bandwidth[" << (j + 1) << "] (" << (type == VarType::ordered ? "ordered" : "unordered")
      << " column)";
  ck.check_bandwidth(bw, static_cast<int>(lv.size()), arg.str());
  return lv;
}

// Observation weights divided by their maximum; empty when none are given or all are equal.
arma::vec scaled_obs_weights(const arma::vec& obs_weights, std::size_t n) {
  arma::vec ow;
  if (obs_weights.n_elem > 0) {
    if (obs_weights.n_elem != n) {
      std::ostringstream msg;
      msg << "sample_weight: has " << obs_weights.n_elem << " values but X has " << n
          << " rows (give one weight per row)";
      throw InvalidArgument(msg.str());
    }
    check::all_finite(obs_weights, "sample_weight");
    check::require(obs_weights.min() >= 0.0, "sample_weight",
                   "must be >= 0 (drop rows instead of giving them negative weight)");
    const double mx = obs_weights.max();
    check::require(mx > 0.0, "sample_weight", "all weights are zero (give some row a positive weight)");
    if (obs_weights.min() != mx) ow = obs_weights / mx;
  }
  return ow;
}

// Path: whether to use the neighbour index (for automatic, a candidate the probe may drop).
bool index_path(const KernelSpec& spec, std::size_t dc, std::size_t n) {
  // Truncation bounds dropped weights by exp(-r^2/2): compact kernels and the Gaussian only.
  const bool exp_tail =
      dispatch_kernel(spec.kernel.type, [](auto k) { return decltype(k)::exp_quadratic; });
  const bool truncatable = spec.kernel.compact() || (spec.truncation > 0.0 && exp_tail);
  bool use_index = false;
  switch (spec.algorithm) {
    case PairAlgorithm::all_pairs: use_index = false; break;
    case PairAlgorithm::neighbors:
      check::require(dc >= 1, "algorithm",
                     "'neighbors' needs at least one continuous column (use auto or all_pairs)");
      check::require(truncatable, "algorithm",
                     std::string("'neighbors' needs a compact kernel or truncation > 0 for the "
                                 "Gaussian (got '") + spec.kernel.name() + "'; use all_pairs)");
      use_index = true;
      break;
    case PairAlgorithm::automatic:
      // Candidates; the sample below keeps the index only when it prunes enough.
      use_index = truncatable && dc >= 1 && dc <= 8 && n >= 1024;
      break;
  }
  return use_index;
}

// 64 training rows spread over the order as queries (the automatic path's probe).
PreparedQueries probe_queries(const arma::mat& xs, const std::vector<std::vector<std::uint32_t>>& codes,
                              std::size_t n) {
  const std::size_t probes = std::min<std::size_t>(64, n);
  const std::size_t dc = xs.n_cols, nc = codes.size();
  PreparedQueries Q;
  Q.m = probes;
  Q.cont.set_size(dc, probes);
  Q.codes.resize(nc * probes);
  for (std::size_t t = 0; t < probes; ++t) {
    const std::size_t k = (t * n) / probes + n / (2 * probes);
    for (std::size_t c = 0; c < dc; ++c) Q.cont(c, t) = xs(k, c);
    for (std::size_t c = 0; c < nc; ++c) Q.codes[t * nc + c] = codes[c][k];
  }
  return Q;
}

}  // namespace

KernelSpace::KernelSpace(const arma::mat& X, const arma::vec& bandwidth, const KernelSpec& spec,
                         const arma::vec& obs_weights)
    : spec_(spec) {
  n_ = X.n_rows;
  const std::size_t d = X.n_cols;
  types_ = checked_types(X, spec);
  for (std::size_t j = 0; j < d; ++j)
    (types_[j] == VarType::continuous ? cont_cols_ : cat_cols_).push_back(j);
  bw_ = checked_bandwidths(bandwidth, d, cont_cols_, !cat_cols_.empty());
  levels_.resize(cat_cols_.size());
  for (std::size_t c = 0; c < cat_cols_.size(); ++c)
    levels_[c] = checked_levels(X, cat_cols_[c], types_[cat_cols_[c]], spec, bw_(cat_cols_[c]));
  ow_ = scaled_obs_weights(obs_weights, n_);

  // Continuous columns: centre and scale.
  const std::size_t dc = cont_cols_.size();
  center_.set_size(dc);
  inv_h_.set_size(dc);
  arma::mat xs0(n_, dc);
  for (std::size_t c = 0; c < dc; ++c) {
    const std::size_t j = cont_cols_[c];
    center_(c) = arma::mean(X.col(j));
    inv_h_(c) = 1.0 / bw_(j);
    for (std::size_t i = 0; i < n_; ++i) xs0(i, c) = (X(i, j) - center_(c)) / bw_(j);
  }
  use_index_ = index_path(spec, dc, n_);

  // Row order (the index's when it is used); columns, weights and codes in that order.
  order_.resize(n_);
  std::iota(order_.begin(), order_.end(), std::size_t{0});
  if (use_index_) {
    index_.build(xs0.t());
    order_ = index_.order();
  }
  position_.resize(n_);
  for (std::size_t k = 0; k < n_; ++k) position_[order_[k]] = k;

  xs_.set_size(n_, dc);
  for (std::size_t c = 0; c < dc; ++c)
    for (std::size_t k = 0; k < n_; ++k) xs_(k, c) = xs0(order_[k], c);
  if (!ow_.is_empty()) {
    arma::vec tmp(n_);
    for (std::size_t k = 0; k < n_; ++k) tmp(k) = ow_(order_[k]);
    ow_ = tmp;
  }
  codes_.resize(cat_cols_.size());
  for (std::size_t c = 0; c < cat_cols_.size(); ++c) {
    const std::size_t j = cat_cols_[c];
    codes_[c].resize(n_);
    for (std::size_t k = 0; k < n_; ++k) {
      const double v = X(order_[k], j);
      codes_[c][k] = static_cast<std::uint32_t>(
          std::lower_bound(levels_[c].begin(), levels_[c].end(), v) - levels_[c].begin());
    }
  }
  build_tables();
  if (use_index_ && spec.algorithm == PairAlgorithm::automatic) {
    // Probe: the share of training points a typical query would visit (64 training rows as
    // queries). Near 1 (a Gaussian bandwidth wide against the data in several dimensions),
    // the index only adds overhead: use all pairs.
    const PreparedQueries Q = probe_queries(xs_, codes_, n_);
    std::vector<double> buf(kTile);
    std::vector<IndexRange> ranges;
    double visited = 0.0;
    for (std::size_t t = 0; t < Q.m; ++t) {
      ranges_for(Q, t, -1, buf.data(), ranges);
      for (const IndexRange& r : ranges) visited += static_cast<double>(r.last - r.first);
    }
    if (visited > 0.6 * static_cast<double>(Q.m) * static_cast<double>(n_)) use_index_ = false;
  }
}

void KernelSpace::build_tables() {
  tables_.assign(cat_cols_.size(), {});
  c_max_ = 1.0;  // observation weights are divided by their maximum
  for (std::size_t c = 0; c < cat_cols_.size(); ++c) {
    const std::size_t j = cat_cols_[c];
    const CategoricalKernel& ck =
        types_[j] == VarType::ordered ? spec_.ordered_kernel : spec_.unordered_kernel;
    const std::vector<double>& lv = levels_[c];
    const std::size_t L = lv.size();
    std::vector<double>& t = tables_[c];
    t.resize(L * L);
    double mx = 0.0;
    for (std::size_t a = 0; a < L; ++a)
      for (std::size_t b = 0; b < L; ++b) {
        t[a * L + b] = ck(lv[a], lv[b], bw_(j), static_cast<int>(L));
        mx = std::max(mx, t[a * L + b]);
      }
    c_max_ *= mx;
  }
}

double KernelSpace::self_weight(std::size_t k) const {
  double w = ow_.is_empty() ? 1.0 : ow_(k);
  for (std::size_t c = 0; c < cat_cols_.size(); ++c) {
    const std::size_t L = levels_[c].size();
    const std::uint32_t code = codes_[c][k];
    w *= tables_[c][code * L + code];
  }
  return w;
}

PreparedQueries KernelSpace::prepare(const arma::mat& X, const std::string& arg) const {
  if (X.n_cols != dim()) {
    std::ostringstream msg;
    msg << arg << ": has " << X.n_cols << " columns but the model was fitted with " << dim()
        << " (pass the same columns as in fit)";
    throw InvalidArgument(msg.str());
  }
  check::all_finite(X, arg);
  PreparedQueries Q;
  Q.m = X.n_rows;
  const std::size_t dc = cont_cols_.size(), nc = cat_cols_.size();
  Q.cont.set_size(dc, Q.m);
  for (std::size_t i = 0; i < Q.m; ++i)
    for (std::size_t c = 0; c < dc; ++c)
      Q.cont(c, i) = (X(i, cont_cols_[c]) - center_(c)) / bw_(cont_cols_[c]);
  Q.codes.resize(nc * Q.m);
  for (std::size_t c = 0; c < nc; ++c) {
    const std::size_t j = cat_cols_[c];
    const std::vector<double>& lv = levels_[c];
    for (std::size_t i = 0; i < Q.m; ++i) {
      const double v = X(i, j);
      const auto it = std::lower_bound(lv.begin(), lv.end(), v);
      if (it == lv.end() || *it != v) {
        std::ostringstream msg;
        msg << arg << ": categorical column " << (j + 1) << " has the value " << v << " at row "
            << (i + 1) << ", a level never seen in training (" << lv.size()
            << " levels seen); categorical kernels cannot weigh an unseen category (map it to a "
               "known level or drop the row)";
        throw InvalidArgument(msg.str());
      }
      Q.codes[i * nc + c] = static_cast<std::uint32_t>(it - lv.begin());
    }
  }
  return Q;
}

PreparedQueries KernelSpace::training_queries() const {
  PreparedQueries Q;
  Q.m = n_;
  const std::size_t dc = cont_cols_.size(), nc = cat_cols_.size();
  Q.cont.set_size(dc, n_);
  Q.codes.resize(nc * n_);
  Q.self.resize(n_);
  for (std::size_t i = 0; i < n_; ++i) {
    const std::size_t k = position_[i];
    for (std::size_t c = 0; c < dc; ++c) Q.cont(c, i) = xs_(k, c);
    for (std::size_t c = 0; c < nc; ++c) Q.codes[i * nc + c] = codes_[c][k];
    Q.self[i] = static_cast<std::int64_t>(k);
  }
  return Q;
}

double KernelSpace::weights(const PreparedQueries& Q, std::size_t q, std::size_t first,
                            std::size_t len, double* w) const {
  constexpr std::size_t kMaxCat = 64;
  const std::size_t nc = cat_cols_.size();
  const std::uint32_t* code_ptrs[kMaxCat];
  const double* row_ptrs[kMaxCat];
  std::vector<const std::uint32_t*> code_vec;
  std::vector<const double*> row_vec;
  const std::uint32_t** cp = code_ptrs;
  const double** rp = row_ptrs;
  if (nc > kMaxCat) {
    code_vec.resize(nc);
    row_vec.resize(nc);
    cp = code_vec.data();
    rp = row_vec.data();
  }
  for (std::size_t c = 0; c < nc; ++c) {
    const std::size_t L = levels_[c].size();
    cp[c] = codes_[c].data();
    rp[c] = tables_[c].data() + static_cast<std::size_t>(Q.codes[q * nc + c]) * L;
  }
  TileArgs a;
  a.xs = xs_.memptr();
  a.ld = n_;
  a.dc = cont_cols_.size();
  a.q = a.dc > 0 ? Q.cont.colptr(q) : nullptr;
  a.kernel = spec_.kernel.type;
  a.ncat = nc;
  a.codes = cp;
  a.rows = rp;
  a.ow = ow_.is_empty() ? nullptr : ow_.memptr();
  return tile_weights(a, first, len, w);
}

double KernelSpace::near_max(const PreparedQueries& Q, std::size_t q, std::int64_t self,
                             double* buf) const {
  const double* qc = Q.cont.colptr(q);
  std::size_t hw = 8;
  for (;;) {
    const IndexRange r = index_.near_range(qc, hw);
    double mx = 0.0;
    for (std::size_t first = r.first; first < r.last; first += kTile) {
      const std::size_t len = std::min(kTile, r.last - first);
      double tmx = weights(Q, q, first, len, buf);
      if (self >= static_cast<std::int64_t>(first) &&
          self < static_cast<std::int64_t>(first + len)) {
        buf[static_cast<std::size_t>(self) - first] = 0.0;
        tmx = tile_max(buf, len);
      }
      mx = std::max(mx, tmx);
    }
    // k-d trees give one leaf; 1-D widens the window until a positive weight appears.
    if (mx > 0.0 || index_.dim() != 1 || (r.first == 0 && r.last == n_)) return mx;
    hw *= 8;
  }
}

void KernelSpace::ranges_for(const PreparedQueries& Q, std::size_t q, std::int64_t self,
                             double* buf, std::vector<IndexRange>& out) const {
  out.clear();
  const double* qc = Q.cont.colptr(q);
  if (spec_.kernel.compact()) {
    index_.box_query(qc, 1.0, out);
    return;
  }
  const double M = near_max(Q, q, self, buf);
  if (!(M > 0.0)) {  // nothing positive nearby: every pair (the caller then reports the query)
    out.push_back(IndexRange{0, n_});
    return;
  }
  // Every dropped point has weight <= c_max exp(-r^2/2) = truncation * M <= truncation * max.
  const double r2 = 2.0 * (std::log(c_max_) - std::log(spec_.truncation) - std::log(M));
  index_.ball_query(qc, std::sqrt(std::max(r2, 0.0)), out);
}

void KernelSpace::run(const PreparedQueries& Q,
                      const std::function<std::unique_ptr<TileSink>()>& make_sink,
                      const RunOptions& opt) const {
  int threads = resolve_threads(opt.n_threads);
  // Few kernel evaluations: one thread. By default below 10^7 (~10 ms on one core): a team's
  // end barrier waits for its slowest-scheduled thread, a time slice of milliseconds on a busy
  // machine, while the waiting threads spin (bench/results/nw_threads.md: at 4e6 pairs two
  // threads took 2x the wall and CPU of one at load 19); a thread count the caller asks for is
  // honoured from 2e6. Results do not depend on the thread count.
  const double min_pairs = opt.n_threads > 0 ? 2e6 : 1e7;
  if (static_cast<double>(Q.m) * static_cast<double>(n_) < min_pairs) threads = 1;
  check::require(!opt.exclude_self || Q.self.size() == Q.m, "queries",
                 "exclude_self needs queries made by training_queries()");
  check::require(Q.cont.n_rows == cont_cols_.size() && Q.codes.size() == Q.m * cat_cols_.size(),
                 "queries", "were prepared for a different model (call prepare on this one)");
  const std::size_t m = Q.m;
  if (m == 0) return;

  // Neighbour path: visit queries in index order so that consecutive queries share cache.
  std::vector<std::size_t> qorder(m);
  std::iota(qorder.begin(), qorder.end(), std::size_t{0});
  if (use_index_ && m > kBlock) {
    std::vector<double> key(m);
    for (std::size_t i = 0; i < m; ++i) {
      const IndexRange r = index_.near_range(Q.cont.colptr(i), 1);
      key[i] = static_cast<double>(r.first);
    }
    std::stable_sort(qorder.begin(), qorder.end(),
                     [&](std::size_t a, std::size_t b) { return key[a] < key[b]; });
  }

  const std::size_t n_blocks = (m + kBlock - 1) / kBlock;
  InterruptGuard guard;
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  std::atomic<std::size_t> done{0};

#pragma omp parallel num_threads(threads)
  {
    std::unique_ptr<TileSink> sink;
    try {
      sink = make_sink();
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
      failed = true;
    }
    std::vector<double> w(kTile), buf(kTile), row_max(kBlock);
    std::vector<IndexRange> ranges;
#pragma omp for schedule(dynamic, 1)
    for (std::size_t b = 0; b < n_blocks; ++b) {
      if (failed.load(std::memory_order_relaxed) || guard.poll()) continue;
      try {
        const std::size_t q0 = b * kBlock;
        const std::size_t count = std::min(kBlock, m - q0);
        const std::size_t* qs = &qorder[q0];
        sink->begin_block(qs, count);
        std::fill(row_max.begin(), row_max.end(), 0.0);
        auto deliver = [&](std::size_t s, std::size_t first, std::size_t len) {
          const std::size_t q = qs[s];
          double tmx = weights(Q, q, first, len, w.data());
          if (opt.exclude_self) {
            const std::int64_t self = Q.self[q];
            if (self >= static_cast<std::int64_t>(first) &&
                self < static_cast<std::int64_t>(first + len)) {
              w[static_cast<std::size_t>(self) - first] = 0.0;
              tmx = tile_max(w.data(), len);
            }
          }
          row_max[s] = std::max(row_max[s], tmx);
          sink->tile(s, first, len, w.data());
        };
        if (!use_index_) {
          for (std::size_t first = 0; first < n_; first += kTile) {
            const std::size_t len = std::min(kTile, n_ - first);
            for (std::size_t s = 0; s < count; ++s) deliver(s, first, len);
          }
        } else {
          for (std::size_t s = 0; s < count; ++s) {
            const std::size_t q = qs[s];
            const std::int64_t self = opt.exclude_self ? Q.self[q] : -1;
            ranges_for(Q, q, self, buf.data(), ranges);
            for (const IndexRange& r : ranges)
              for (std::size_t first = r.first; first < r.last; first += kTile)
                deliver(s, first, std::min(kTile, r.last - first));
          }
        }
        sink->end_block(row_max.data());
        const std::size_t finished = done.fetch_add(count) + count;
        guard.progress(finished, m, opt.label);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        failed = true;
      }
    }
  }
  guard.rethrow_if_interrupted();
  if (error) std::rethrow_exception(error);
}

}  // namespace attnreg
