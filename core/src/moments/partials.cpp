#include "attnreg/moments/partials.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "attnreg/detail/attention_internal.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/kernels/kernel_pairs.hpp"
#include "attnreg/attention/lla_tile.hpp"

namespace attnreg {

namespace {

std::vector<VarType> continuous_types(const LocalFitOptions& opt, std::size_t d) {
  std::vector<VarType> vt = parse_var_types(opt.kernel.var_types, d, "var_types");
  for (VarType t : vt)
    check::require(t == VarType::continuous, "var_types",
                   "partial statistics (attnreg.dask) support continuous columns only: a "
                   "categorical kernel depends on the levels seen in all of training, which one "
                   "block does not know (encode the category as dummy columns, or fit in memory)");
  return vt;
}

void check_degree(const LocalFitOptions& opt, std::size_t d) {
  check::require(opt.degree >= 0 && opt.degree <= 3, "degree",
                 "must be 0 (local constant), 1 (local linear), 2 or 3");
  check::require(std::isfinite(opt.ridge) && opt.ridge >= 0.0, "ridge",
                 "must be >= 0 and finite (0 = classical local linear)");
  // The rule of LocalPolynomial's in-memory fit (local_fit.cpp): degree 2 in any number of
  // continuous columns (squares and cross products), degree 3 in exactly one.
  if ((opt.degree == 3 && d != 1) || (opt.degree == 2 && d == 0)) {
    std::ostringstream msg;
    msg << "degree " << opt.degree << " needs "
        << (opt.degree == 3 ? "exactly one continuous column" : "a continuous column")
        << ", X has " << d
        << (opt.degree == 3 ? " (use degree 1 or 2 for several continuous columns)" : "");
    throw InvalidArgument("degree: " + msg.str());
  }
}

arma::vec continuous_bandwidths(const arma::vec& bandwidth, std::size_t d) {
  check::require(bandwidth.n_elem == d || bandwidth.n_elem == 1, "bandwidth",
                 "give one value per column of X, or one value for every column");
  arma::vec h(d);
  for (std::size_t j = 0; j < d; ++j) h(j) = bandwidth.n_elem == 1 ? bandwidth(0) : bandwidth(j);
  for (std::size_t j = 0; j < d; ++j)
    check::require(std::isfinite(h(j)) && h(j) > 0.0, "bandwidth",
                   "every bandwidth must be positive and finite");
  return h;
}

/// A local partial's moments: the full storage, q terms, k outputs, no derivatives.
moments::MomentLayout local_layout(std::size_t q, std::size_t k) {
  return moments::MomentLayout::full_storage(static_cast<int>(q) - 1, static_cast<int>(k));
}

}  // namespace

LocalPartial local_partial_empty(std::size_t m, std::size_t q, std::size_t k, std::size_t dim,
                                 int degree) {
  LocalPartial p;
  p.degree = degree;
  p.q = q;
  p.k = k;
  p.dim = dim;
  p.moments = moments::LocalMoments::empty(static_cast<std::int64_t>(m), local_layout(q, k), true);
  return p;
}

LocalPartial local_partial(const arma::mat& X_block, const arma::mat& Y_block,
                           const arma::mat& X_query, const arma::vec& bandwidth,
                           const LocalFitOptions& opt, const arma::vec& sample_weight,
                           const std::vector<std::int64_t>& self_rows,
                           const std::string& query_arg) {
  const std::size_t d = X_query.n_cols, m = X_query.n_rows;
  check::require(d >= 1, query_arg, "needs at least one column");
  check_degree(opt, d);
  continuous_types(opt, d);
  continuous_bandwidths(bandwidth, d);
  check::require(Y_block.n_cols >= 1, "y", "needs at least one column (one output)");
  const std::size_t k = Y_block.n_cols;
  const std::size_t q = 1 + LocalPolySpec::n_terms(opt.degree, d);
  check::require(self_rows.empty() || self_rows.size() == m, "self_rows",
                 "must be empty or give one block row (or -1) per query");
  if (X_block.n_rows > 0 && X_block.n_cols != d) {
    std::ostringstream msg;
    msg << "X: has " << X_block.n_cols << " columns but the queries have " << d
        << " (every partition must have the same columns)";
    throw InvalidArgument(msg.str());
  }
  check::all_finite(X_query, query_arg);
  check::rows_match(Y_block, X_block.n_rows, "y", "X");
  check::all_finite(Y_block, "y");
  if (!sample_weight.is_empty())
    check::require(sample_weight.n_elem == X_block.n_rows, "sample_weight",
                   "must have one value per row of X");
  for (std::size_t i = 0; i < self_rows.size(); ++i)
    check::require(self_rows[i] >= -1 && self_rows[i] < static_cast<std::int64_t>(X_block.n_rows),
                   "self_rows", "each entry must be -1 or a row of the block");
  double log_scale = 0.0;
  if (!sample_weight.is_empty()) {
    check::all_finite(sample_weight, "sample_weight");
    check::require(arma::all(sample_weight >= 0.0), "sample_weight", "must be >= 0");
    const double mx = sample_weight.max();
    if (!(mx > 0.0)) return local_partial_empty(m, q, k, d, opt.degree);
    log_scale = std::log(mx);  // KernelSpace divides the weights by their maximum
  }
  if (X_block.n_rows == 0) return local_partial_empty(m, q, k, d, opt.degree);

  const KernelSpace space(X_block, bandwidth, opt.kernel, sample_weight);  // continuous (above)
  arma::mat Yi(Y_block.n_rows, k);
  const auto& order = space.order();
  for (std::size_t r = 0; r < order.size(); ++r) Yi.row(r) = Y_block.row(order[r]);
  PreparedQueries Q = space.prepare(X_query, query_arg);
  bool any_self = false;
  for (std::int64_t s : self_rows) any_self = any_self || s >= 0;
  if (any_self) {
    Q.self.resize(m);
    for (std::size_t i = 0; i < m; ++i)
      Q.self[i] = self_rows[i] < 0 ? -1
                                   : static_cast<std::int64_t>(
                                         space.position()[static_cast<std::size_t>(self_rows[i])]);
  }
  LocalEvalRequest req;
  req.fit = false;
  req.moments = true;
  LocalEvalResult r = local_polynomial_eval(space, Yi, LocalPolySpec{opt.degree, 0.0}, Q, req,
                                            opt.kernel.n_threads);
  LocalPartial p;
  p.degree = opt.degree;
  p.q = q;
  p.k = k;
  p.dim = d;
  p.moments.layout = local_layout(q, k);
  p.moments.max.assign(m, log_scale);
  p.moments.peak.assign(r.moment_max.begin(), r.moment_max.end());
  // Query i's numbers: A (q x q) then T (q x k), both as local_polynomial_eval wrote them.
  const std::size_t ns = static_cast<std::size_t>(p.moments.layout.n_stats());
  p.moments.stats.resize(m * ns);
  for (std::size_t i = 0; i < m; ++i) {
    double* row = p.moments.row(static_cast<std::int64_t>(i));
    std::copy(r.moment_A.colptr(i), r.moment_A.colptr(i) + q * q, row);
    std::copy(r.moment_T.colptr(i), r.moment_T.colptr(i) + q * k, row + q * q);
  }
  return p;
}

void merge(LocalPartial& into, const LocalPartial& other) {
  const bool same = into.degree == other.degree && into.q == other.q && into.k == other.k &&
                    into.dim == other.dim && into.moments.same_shape(other.moments);
  check::require(same, "other",
                 "describes different queries or fits (merge partials computed for the same "
                 "queries, degree, columns and outputs)");
  into.moments.merge(other.moments);
}

arma::mat local_finalize(const LocalPartial& p, const arma::vec& bandwidth,
                         const LocalFitOptions& opt, std::vector<QueryStatus>* status,
                         bool throw_on_failure, bool leave_one_out,
                         const std::string& query_arg) {
  check_degree(opt, p.dim);
  check::require(opt.degree == p.degree, "degree",
                 "differs from the degree the partial was computed with");
  const arma::vec h = continuous_bandwidths(bandwidth, p.dim);
  const std::vector<double> pen = local_penalty_scales(h, p.degree);
  check::require(pen.size() + 1 == p.q, "partial",
                 "has a number of local coefficients that does not match degree and columns");
  arma::mat fit;
  std::vector<QueryStatus> st;
  // The solve's inputs: A ((q*q) x m) and T ((q*k) x m) are the rows of the full storage.
  const std::size_t m = p.n_query(), ns = static_cast<std::size_t>(p.moments.layout.n_stats());
  check::require(p.moments.layout == local_layout(p.q, p.k) && p.moments.peak.size() == m &&
                     p.moments.stats.size() == m * ns,
                 "partial", "has moments of the wrong shape (make it with local_partial)");
  const arma::mat S(const_cast<double*>(p.moments.stats.data()), ns, m, false, true);
  const arma::vec peak(const_cast<double*>(p.moments.peak.data()), m, false, true);
  local_polynomial_solve(S.rows(0, p.q * p.q - 1), S.rows(p.q * p.q, ns - 1), peak, p.k,
                         opt.ridge, pen, fit, st);
  if (throw_on_failure)
    throw_on_failed_query(st, opt.kernel.kernel, p.dim, 0, p.degree, opt.ridge, query_arg,
                          leave_one_out);
  if (status != nullptr) *status = std::move(st);
  return fit;
}

// ---------------------------------------------------------------- softmax / nw_rbf

template <class T>
SoftmaxPartial softmax_partial(const attention::View<const T>& Q,
                               const attention::View<const T>& K,
                               const attention::View<const T>& V, std::int64_t key_offset,
                               std::int64_t n_keys_total, const attention::Options& opt) {
  using attention::detail::i64;
  check::require(opt.method == attention::Method::softmax ||
                     opt.method == attention::Method::nw_rbf,
                 "method", "softmax partials need method softmax or nw_rbf");
  attention::detail::check_key_slice(key_offset, K.shape[2], n_keys_total);
  const attention::detail::Plan p =
      attention::detail::make_plan<T>(Q, K, &V, nullptr, opt, "out", n_keys_total);
  // omega, sum w v: the packed storage with no design column.
  SoftmaxPartial part =
      attention::detail::empty_key_partial(p, key_offset, K.shape[2], n_keys_total, 0);
  const i64 nq = p.geo.n_q, d = p.d, dv = p.dv;
  const i64 k_first = key_offset, k_last = key_offset + K.shape[2] - 1;
  const i64 bc = std::max<i64>(1, p.Bc);
  struct WS {
    std::vector<double> q, k, v, s, kb;
  };
  attention::detail::parallel_items<WS>(p.B * p.H * nq, p.n_threads, [&](i64 row, WS& ws) {
    const i64 b = row / (p.H * nq), h = (row / nq) % p.H, i = row % nq;
    i64 lo, hi;
    p.geo.range(i, lo, hi);
    lo = std::max(lo, k_first);
    hi = std::min(hi, k_last);
    if (lo > hi) return;
    ws.q.resize(d);
    ws.k.resize(bc * d);
    ws.v.resize(bc * dv);
    ws.s.resize(bc);
    attention::detail::pack_rows(Q, b, h, i, 1, ws.q.data(), d);
    double& m = part.moments.max[row];
    double* st = part.moments.row(row);
    for (i64 c0 = lo; c0 <= hi; c0 += bc) {
      const int n = static_cast<int>(std::min(bc, hi - c0 + 1));
      attention::detail::pack_rows(K, b, h, c0 - key_offset, n, ws.k.data(), d);
      attention::detail::pack_rows(V, b, h, c0 - key_offset, n, ws.v.data(), dv);
      // Logits (lla_tile.hpp): a q'k, plus the rbf key bias -(a/2)||k||^2 for nw_rbf.
      for (int j = 0; j < n; ++j) {
        const double* kj = ws.k.data() + static_cast<i64>(j) * d;
        ws.s[j] = p.a * tile::dot(ws.q.data(), kj, static_cast<int>(d));
        if (p.rbf) ws.s[j] += tile::rbf_key_bias(kj, static_cast<int>(d), p.a);
      }
      // Online softmax (Zuo et al. 2025, arXiv:2510.01450, Alg. 1 lines 8-10 with the values in
      // place of K).
      const tile::RowUpdate<double> u = tile::online_update_row(ws.s.data(), n, m);
      st[0] = u.alpha * st[0] + u.rowsum;
      tile::rescale_row(st + 1, static_cast<int>(dv), u.alpha);
      for (int j = 0; j < n; ++j)
        tile::axpy(ws.s[j], ws.v.data() + static_cast<i64>(j) * dv, st + 1, static_cast<int>(dv));
    }
  });
  return part;
}

template <class T>
void softmax_finalize(const SoftmaxPartial& p, const attention::View<T>& out) {
  check::require(out.data != nullptr, "out", "data pointer is null");
  check::require(out.shape[0] == p.batch && out.shape[1] == p.heads && out.shape[2] == p.n_query &&
                     out.shape[3] == p.dim_v,
                 "out", "must have shape (batch, heads, n_q, dim of V)");
  attention::require_all_keys(p.key_ranges, p.n_keys_total, "softmax attention");
  check::require(p.moments.layout.p == 0 && p.moments.layout.k == p.dim_v && p.moments.layout.packed,
                 "partial", "is not a softmax partial (make it with softmax_partial)");
  const std::int64_t nf = p.n_stats(), nq = p.n_query;
  std::vector<double> o(static_cast<std::size_t>(p.dim_v));
  for (std::int64_t row = 0; row < p.batch * p.heads * nq; ++row) {
    const double* st = p.moments.row(row);
    if (!(st[0] > 0.0)) {
      std::ostringstream msg;
      msg << "softmax_finalize: query " << (row % nq + 1) << " (batch " << (row / (p.heads * nq) + 1)
          << ", head " << ((row / nq) % p.heads + 1)
          << ") has no key weight (the statistics are incomplete: merge the partials of every "
             "key block first)";
      throw NumericalError(msg.str());
    }
    std::copy(st + 1, st + nf, o.begin());
    tile::normalize_row(o.data(), static_cast<int>(p.dim_v), st[0]);
    attention::detail::unpack_rows(o.data(), p.dim_v, 1, out, row / (p.heads * nq),
                                   (row / nq) % p.heads, row % nq);
  }
}

template SoftmaxPartial softmax_partial<float>(const attention::View<const float>&,
                                               const attention::View<const float>&,
                                               const attention::View<const float>&, std::int64_t,
                                               std::int64_t, const attention::Options&);
template SoftmaxPartial softmax_partial<double>(const attention::View<const double>&,
                                                const attention::View<const double>&,
                                                const attention::View<const double>&,
                                                std::int64_t, std::int64_t,
                                                const attention::Options&);
template void softmax_finalize<float>(const SoftmaxPartial&, const attention::View<float>&);
template void softmax_finalize<double>(const SoftmaxPartial&, const attention::View<double>&);

}  // namespace attnreg
