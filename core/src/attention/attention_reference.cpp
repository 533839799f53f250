// attnreg attention engine: the float64 paths. Naive LLA (the oracle: materialised weights,
// explicit centring z = k - q, exact solve), direct LLA (per-query sufficient statistics over
// key blocks, merged associatively, Cholesky) with its public map-reduce form (lla_partial /
// merge / lla_finalize), and the dense attention weights of every method. Linear attention and
// Mesa (running-state recurrences): attention_recurrent.cpp.
#include <algorithm>
#include <cmath>
#include <utility>
#include <sstream>

#include "attnreg/detail/attention_internal.hpp"

namespace attnreg {
namespace attention {
namespace detail {

namespace {

// ---------------------------------------------------------------- kernel weights, float64

/// Kernel weights of query q (d) against keys [lo, hi] of (b, h), shifted by their max:
/// w[j - lo] = exp(l_j - max_j l_j). Computed pairwise (rbf from ||q - k||^2 itself, not the
/// expanded form of the blockwise path), so it is an independent check of that path.
template <class T>
void kernel_row(const Plan& p, const View<const T>& K, i64 b, i64 h, const double* q, i64 lo,
                i64 hi, double* w) {
  const i64 n = hi - lo + 1;
  double mx = -HUGE_VAL;
  for (i64 j = 0; j < n; ++j) {
    double l = 0.0;
    if (p.rbf) {
      for (i64 c = 0; c < p.d; ++c) {
        const double z = static_cast<double>(K.at(b, h, lo + j, c)) - q[c];
        l += z * z;
      }
      l = -0.5 * p.a * l;
    } else {
      for (i64 c = 0; c < p.d; ++c) l += static_cast<double>(K.at(b, h, lo + j, c)) * q[c];
      l *= p.a;
    }
    w[j] = l;
    mx = std::max(mx, l);
  }
  for (i64 j = 0; j < n; ++j) w[j] = std::exp(w[j] - mx);
}

}  // namespace

void throw_not_pd(const char* what, i64 b, i64 h, i64 i) {
  std::ostringstream msg;
  msg << what << ": Sigma is not positive definite at " << where(b, h, i)
      << " (the keys this query sees do not span the space, or the weights concentrate on "
         "too few keys); increase ridge or the bandwidth";
  throw NumericalError(msg.str());
}

void throw_bad_delta(const char* what, double delta, i64 b, i64 h, i64 i) {
  std::ostringstream msg;
  msg << what << ": the denominator omega - mu'rho is " << delta << " at " << where(b, h, i)
      << "; Sigma is numerically singular there (increase ridge)";
  throw NumericalError(msg.str());
}

namespace {

struct RowState {
  std::vector<double> q, w, z, buf, Sig, rho, phi, phik;
};

/// LLA weights of one query by the textbook route (Zuo et al. 2025, arXiv:2510.01450, eq. 7-8 with
/// explicit z = k - q): on entry w holds the kernel weights of keys [lo, hi]; on exit the
/// equivalent-kernel weights s_j = w_j (1 - z_j'rho) / (omega - mu'rho). Returns (omega - mu'rho) /
/// omega.
template <class T>
double lla_naive_row(const Plan& p, const View<const T>& K, i64 b, i64 h, i64 i, i64 lo, i64 hi,
                     RowState& st) {
  const i64 n = hi - lo + 1, d = p.d;
  st.z.resize(static_cast<std::size_t>(n * d));
  for (i64 j = 0; j < n; ++j)
    for (i64 c = 0; c < d; ++c) st.z[j * d + c] = static_cast<double>(K.at(b, h, lo + j, c)) - st.q[c];
  // Z as an n x d matrix (column-major view of the row-major buffer is d x n: use its transpose).
  const arma::mat Zt(st.z.data(), static_cast<arma::uword>(d), static_cast<arma::uword>(n), false,
                     true);
  const arma::vec w(st.w.data(), static_cast<arma::uword>(n), false, true);
  const double omega = arma::accu(w);
  const arma::vec mu = Zt * w;
  arma::mat Sigma = Zt * arma::diagmat(w) * Zt.t();
  Sigma.diag() += p.ridge_at(b, h, i) * omega;
  arma::vec rho;
  if (!arma::solve(rho, Sigma, mu, arma::solve_opts::no_approx)) throw_not_pd("LLA (naive)", b, h, i);
  const double delta = omega - arma::dot(mu, rho);
  if (!(delta > 0) || !std::isfinite(delta)) throw_bad_delta("LLA (naive)", delta, b, h, i);
  const arma::vec zr = Zt.t() * rho;
  for (i64 j = 0; j < n; ++j) st.w[j] = st.w[j] * (1.0 - zr[j]) / delta;
  return delta / omega;
}

}  // namespace

// ---------------------------------------------------------------- dense weights (all methods)

template <class T>
void dense_weights(const Plan& p, const View<const T>& Q, const View<const T>& K, i64 b, i64 h,
                   std::vector<double>& W, double* min_rel) {
  const i64 nq = p.geo.n_q, nk = p.geo.n_k, d = p.d;
  W.assign(static_cast<std::size_t>(nq * nk), 0.0);
  if (p.method == Method::mesa) {
    // a_ij = k_j' H_i^-1 q_i: m(q_i) = S_i H_i^-1 q_i = sum_j v_j a_ij (Zuo et al. 2025, eq. 2).
    parallel_items<RowState>(nq, p.n_threads, [&](i64 i, RowState& st) {
      i64 lo, hi;
      p.geo.range(i, lo, hi);
      st.Sig.assign(static_cast<std::size_t>(d * d), 0.0);
      st.q.resize(d);
      for (i64 j = lo; j <= hi; ++j)
        for (i64 r = 0; r < d; ++r)
          for (i64 c = 0; c < d; ++c)
            st.Sig[r * d + c] += static_cast<double>(K.at(b, h, j, r)) * K.at(b, h, j, c);
      for (i64 r = 0; r < d; ++r) st.Sig[r * d + r] += p.ridge_at(b, h, i);
      for (i64 c = 0; c < d; ++c) st.q[c] = Q.at(b, h, i, c);
      if (!tile::cholesky(st.Sig.data(), static_cast<int>(d))) throw_not_pd("Mesa", b, h, i);
      tile::cholesky_solve(st.Sig.data(), static_cast<int>(d), st.q.data());
      for (i64 j = lo; j <= hi; ++j) {
        double s = 0;
        for (i64 c = 0; c < d; ++c) s += static_cast<double>(K.at(b, h, j, c)) * st.q[c];
        W[i * nk + j] = s;
      }
    });
    return;
  }
  if (p.method == Method::linear) {
    const i64 df = feature_dim(p);
    parallel_items<RowState>(nq, p.n_threads, [&](i64 i, RowState& st) {
      i64 lo, hi;
      p.geo.range(i, lo, hi);
      st.phi.resize(df);
      st.phik.resize(df);
      feature_row(p, Q, b, h, i, st.phi.data());
      double den = 0;
      for (i64 j = lo; j <= hi; ++j) {
        feature_row(p, K, b, h, j, st.phik.data());
        const double s = tile::dot(st.phi.data(), st.phik.data(), static_cast<int>(df));
        W[i * nk + j] = s;
        den += s;
      }
      if (p.normalize) {
        if (!(den > 0) || !std::isfinite(den)) {
          std::ostringstream msg;
          msg << "linear attention: the normaliser sum_j phi(q)'phi(k_j) is " << den << " at "
              << where(b, h, i)
              << " (the feature map is not positive there); use feature_map = "
                 "\"elu_plus_one\", or normalize = false";
          throw NumericalError(msg.str());
        }
        for (i64 j = lo; j <= hi; ++j) W[i * nk + j] /= den;
      }
    });
    return;
  }
  // softmax, nw_rbf, lla: kernel weights (then eq. 8 for lla).
  std::vector<double> rel(static_cast<std::size_t>(nq), 1.0);
  parallel_items<RowState>(nq, p.n_threads, [&](i64 i, RowState& st) {
    i64 lo, hi;
    p.geo.range(i, lo, hi);
    st.q.resize(d);
    for (i64 c = 0; c < d; ++c) st.q[c] = Q.at(b, h, i, c);
    st.w.resize(static_cast<std::size_t>(hi - lo + 1));
    kernel_row(p, K, b, h, st.q.data(), lo, hi, st.w.data());
    // Finite inputs with a non-finite weight: a logit overflowed float64 (exp(inf - inf)).
    for (double x : st.w) {
      if (!std::isfinite(x)) {
        std::ostringstream msg;
        msg << to_string(p.method) << ": a logit overflows float64 at " << where(b, h, i)
            << (p.rbf ? " (||q - k||^2 / bandwidth^2 is too large: rescale Q and K or increase "
                        "bandwidth)"
                      : " (scale * q.k is too large: rescale Q and K or reduce scale)");
        throw NumericalError(msg.str());
      }
    }
    if (p.method == Method::lla) {
      rel[i] = lla_naive_row(p, K, b, h, i, lo, hi, st);
    } else {
      double omega = 0;
      for (double x : st.w) omega += x;
      for (double& x : st.w) x /= omega;
    }
    std::copy(st.w.begin(), st.w.end(), W.begin() + i * nk + lo);
  });
  if (min_rel) *min_rel = *std::min_element(rel.begin(), rel.end());
}

// ---------------------------------------------------------------- LLA naive

template <class T>
void run_lla_naive(const Plan& p, const View<const T>& Q, const View<const T>& K,
                   const View<const T>& V, const View<T>& out, Diagnostics& diag) {
  const i64 nq = p.geo.n_q, nk = p.geo.n_k, dv = p.dv;
  std::vector<double> W, Vb(static_cast<std::size_t>(nk * dv)), Ob(static_cast<std::size_t>(nq * dv));
  double min_rel = 1.0;
  for (i64 b = 0; b < p.B; ++b)
    for (i64 h = 0; h < p.H; ++h) {
      double mr = 1.0;
      dense_weights(p, Q, K, b, h, W, &mr);  // the n_q x n_k materialised weights
      min_rel = std::min(min_rel, mr);
      pack_rows(V, b, h, 0, nk, Vb.data(), dv);
      gemm_nn(static_cast<int>(nq), static_cast<int>(dv), static_cast<int>(nk), 1.0, W.data(),
              static_cast<int>(nk), Vb.data(), static_cast<int>(dv), 0.0, Ob.data(),
              static_cast<int>(dv));
      unpack_rows(Ob.data(), dv, nq, out, b, h, 0);
    }
  add_denominator_warning(diag, min_rel, false);
}

// ---------------------------------------------------------------- LLA direct

// Outside the anonymous namespace: run_lla_direct's and lla_finalize's workspaces hold it, and
// GCC warns (-Wsubobject-linkage) when this file is compiled inside a unity batch.
struct DirectWS {
  std::vector<double> q, k, v, kb, S, F, Sig, rho, mu;
  static void grow(std::vector<double>& x, i64 n) {
    if (static_cast<i64>(x.size()) < n) x.resize(static_cast<std::size_t>(n));
  }
};

namespace {

/// Fold keys [k_lo, k_hi] (local rows of K, V; global position = key_offset + local) into the
/// statistics of queries [i0, i0 + br) of (b, h): running max m (br) and stats (br x nf) =
/// [omega, mu~, Sigma~ packed, nu~, Gamma]. One GEMM per key tile: stats += W F with the key
/// features F_j = [1, k_j, k_j k_j' (packed), v_j, v_j k_j'].
template <class T>
void direct_accumulate(const Plan& p, const View<const T>& Q, const View<const T>& K,
                       const View<const T>& V, i64 b, i64 h, i64 i0, int br, i64 k_lo, i64 k_hi,
                       i64 key_offset, double* m, double* stats, DirectWS& ws) {
  const int d = static_cast<int>(p.d), dv = static_cast<int>(p.dv);
  const int Bc = static_cast<int>(p.Bc);
  const i64 nf = 1 + p.d + p.d * (p.d + 1) / 2 + p.dv + p.dv * p.d;
  DirectWS::grow(ws.q, static_cast<i64>(br) * d);
  DirectWS::grow(ws.k, static_cast<i64>(Bc) * d);
  DirectWS::grow(ws.v, static_cast<i64>(Bc) * dv);
  DirectWS::grow(ws.kb, Bc);
  DirectWS::grow(ws.S, static_cast<i64>(br) * Bc);
  DirectWS::grow(ws.F, static_cast<i64>(Bc) * nf);
  pack_rows(Q, b, h, i0, br, ws.q.data(), d);
  for (i64 c0 = k_lo; c0 <= k_hi; c0 += Bc) {
    const int bc = static_cast<int>(std::min<i64>(Bc, k_hi - c0 + 1));
    pack_rows(K, b, h, c0, bc, ws.k.data(), d);
    pack_rows(V, b, h, c0, bc, ws.v.data(), dv);
    for (int j = 0; j < bc; ++j) {
      const double* kj = ws.k.data() + static_cast<i64>(j) * d;
      const double* vj = ws.v.data() + static_cast<i64>(j) * dv;
      double* f = ws.F.data() + j * nf;
      f[0] = 1.0;
      std::copy(kj, kj + d, f + 1);
      tile::packed_outer(kj, d, f + 1 + d);
      double* fv = f + 1 + d + static_cast<i64>(d) * (d + 1) / 2;
      std::copy(vj, vj + dv, fv);
      double* fg = fv + dv;
      for (int a = 0; a < dv; ++a)
        for (int c = 0; c < d; ++c) fg[a * d + c] = vj[a] * kj[c];
      if (p.rbf) ws.kb[j] = tile::rbf_key_bias(kj, d, p.a);
    }
    gemm_nt(br, bc, d, p.a, ws.q.data(), d, ws.k.data(), d, 0.0, ws.S.data(), Bc);
    const i64 key0 = key_offset + c0;
    for (int r = 0; r < br; ++r) {
      double* row = ws.S.data() + static_cast<i64>(r) * Bc;
      if (p.rbf) tile::add_key_bias_row(row, bc, ws.kb.data());
      i64 lo, hi;
      p.geo.range(i0 + r, lo, hi);
      if (key0 < lo || key0 + bc - 1 > hi) tile::mask_row(row, bc, key0, lo, hi);
      const tile::RowUpdate<double> u = tile::online_update_row(row, bc, m[r]);
      tile::rescale_row(stats + r * nf, static_cast<int>(nf), u.alpha);
    }
    gemm_nn(br, static_cast<int>(nf), bc, 1.0, ws.S.data(), Bc, ws.F.data(), static_cast<int>(nf),
            1.0, stats, static_cast<int>(nf));
  }
}

/// Solve one query from its complete statistics and write its output row (dv). Returns
/// (omega - mu'rho) / omega.
double direct_finalize_row(const Plan& p, const double* q, const double* st, double lambda,
                           double* out_row, DirectWS& ws, i64 b, i64 h, i64 i) {
  const int d = static_cast<int>(p.d), dv = static_cast<int>(p.dv);
  const double omega = st[0];
  const double* mut = st + 1;
  const double* sig = mut + d;
  const double* nu = sig + static_cast<i64>(d) * (d + 1) / 2;
  const double* gam = nu + dv;
  DirectWS::grow(ws.Sig, static_cast<i64>(d) * d);
  DirectWS::grow(ws.rho, d);
  DirectWS::grow(ws.mu, d);
  if (!(omega > 0)) {
    std::ostringstream msg;
    msg << "LLA (direct): no key weight at " << where(b, h, i)
        << " (the statistics are incomplete: merge the partials of every key block first)";
    throw NumericalError(msg.str());
  }
  // Eq. 11 with the omega-scaled ridge, then Cholesky.
  tile::center_sigma(sig, mut, omega, q, lambda, ws.Sig.data(), d);
  tile::center_mu_row(mut, omega, q, ws.mu.data(), d);
  std::copy(ws.mu.begin(), ws.mu.begin() + d, ws.rho.begin());
  if (!tile::cholesky(ws.Sig.data(), d)) throw_not_pd("LLA (direct)", b, h, i);
  tile::cholesky_solve(ws.Sig.data(), d, ws.rho.data());
  const double delta = tile::lla_delta_row(omega, ws.mu.data(), ws.rho.data(), d);
  if (!(delta > 0) || !std::isfinite(delta)) throw_bad_delta("LLA (direct)", delta, b, h, i);
  // m(q) = (nu~ (1 + q'rho) - Gamma rho) / delta  (eq. 8 summed with z_j = k_j - q).
  const double qr = tile::dot(q, ws.rho.data(), d);
  for (int a = 0; a < dv; ++a)
    out_row[a] = (nu[a] * (1.0 + qr) - tile::dot(gam + static_cast<i64>(a) * d, ws.rho.data(), d)) / delta;
  return delta / omega;
}

}  // namespace

template <class T>
void run_lla_direct(const Plan& p, const View<const T>& Q, const View<const T>& K,
                    const View<const T>& V, const View<T>& out, Diagnostics& diag) {
  const i64 nf = 1 + p.d + p.d * (p.d + 1) / 2 + p.dv + p.dv * p.d;
  const i64 n_items = p.B * p.H * p.n_blocks();
  std::vector<double> min_rel(static_cast<std::size_t>(n_items), 1.0);
  struct WS {
    DirectWS d;
    std::vector<double> m, st, o;
  };
  parallel_items<WS>(n_items, p.n_threads, [&](i64 item, WS& ws) {
    const i64 nb = p.n_blocks();
    const i64 b = item / (p.H * nb), h = (item / nb) % p.H, i0 = (item % nb) * p.Br;
    const int br = static_cast<int>(std::min(p.Br, p.geo.n_q - i0));
    ws.m.assign(br, -HUGE_VAL);
    ws.st.assign(static_cast<std::size_t>(br * nf), 0.0);
    ws.o.resize(static_cast<std::size_t>(br * p.dv));
    i64 klo, khi;
    p.geo.block_range(i0, i0 + br, klo, khi);
    direct_accumulate(p, Q, K, V, b, h, i0, br, klo, khi, 0, ws.m.data(), ws.st.data(), ws.d);
    for (int r = 0; r < br; ++r) {
      const double rel =
          direct_finalize_row(p, ws.d.q.data() + static_cast<i64>(r) * p.d, ws.st.data() + r * nf,
                              p.ridge_at(b, h, i0 + r), ws.o.data() + r * p.dv, ws.d, b, h, i0 + r);
      min_rel[item] = std::min(min_rel[item], rel);
    }
    unpack_rows(ws.o.data(), p.dv, br, out, b, h, i0);
  });
  double mr = 1.0;
  for (double x : min_rel) mr = std::min(mr, x);
  add_denominator_warning(diag, mr, false);
}

void check_key_slice(std::int64_t key_offset, std::int64_t n_k, std::int64_t n_keys_total) {
  check::require(key_offset >= 0 && n_keys_total >= 1 && key_offset + n_k <= n_keys_total,
                 "key_offset",
                 "the slice [key_offset, key_offset + n_k) must lie in [0, n_keys_total), got "
                 "key_offset = " + std::to_string(key_offset) + ", n_k = " +
                     std::to_string(n_k) + ", n_keys_total = " + std::to_string(n_keys_total));
}

KeyPartial empty_key_partial(const Plan& p, std::int64_t key_offset, std::int64_t n_k,
                             std::int64_t n_keys_total, int design_dim) {
  KeyPartial part;
  part.batch = p.B;
  part.heads = p.H;
  part.n_query = p.geo.n_q;
  part.dim = p.d;
  part.dim_v = p.dv;
  part.n_keys_total = n_keys_total;
  part.causal = p.geo.causal;
  part.window = p.geo.window;
  if (n_k > 0) part.key_ranges = {key_offset, key_offset + n_k};
  part.moments = moments::LocalMoments::empty(
      p.B * p.H * p.geo.n_q,
      moments::MomentLayout::packed_storage(design_dim, static_cast<int>(p.dv)), false);
  return part;
}

}  // namespace detail

// ---------------------------------------------------------------- public map-reduce form

using detail::i64;

template <class T>
LLAPartial lla_partial(const View<const T>& Q, const View<const T>& K, const View<const T>& V,
                       std::int64_t key_offset, std::int64_t n_keys_total, const Options& opt) {
  detail::check_key_slice(key_offset, K.shape[2], n_keys_total);
  Options o = opt;
  o.method = Method::lla;
  const detail::Plan p = detail::make_plan<T>(Q, K, &V, nullptr, o, "out", n_keys_total);
  // omega, mu~, Sigma~ packed, nu~, Gamma: the packed storage.
  LLAPartial part = detail::empty_key_partial(p, key_offset, K.shape[2], n_keys_total,
                                              static_cast<int>(p.d));
  const i64 nb = p.n_blocks();
  const i64 k_first = key_offset, k_last = key_offset + K.shape[2] - 1;
  detail::parallel_items<detail::DirectWS>(p.B * p.H * nb, p.n_threads,
                                           [&](i64 item, detail::DirectWS& ws) {
    const i64 b = item / (p.H * nb), h = (item / nb) % p.H, i0 = (item % nb) * p.Br;
    const int br = static_cast<int>(std::min(p.Br, p.geo.n_q - i0));
    i64 glo, ghi;
    p.geo.block_range(i0, i0 + br, glo, ghi);
    glo = std::max(glo, k_first);
    ghi = std::min(ghi, k_last);
    if (glo > ghi) return;  // no key of this slice is visible to the block
    const i64 row0 = (b * p.H + h) * p.geo.n_q + i0;
    detail::direct_accumulate(p, Q, K, V, b, h, i0, br, glo - key_offset, ghi - key_offset,
                              key_offset, part.moments.max.data() + row0, part.moments.row(row0),
                              ws);
  });
  return part;
}

std::vector<i64> merge_key_ranges(const std::vector<i64>& a, const std::vector<i64>& b) {
  // Union of the key slices; an overlap would count keys twice.
  std::vector<std::pair<i64, i64>> iv;
  for (const std::vector<i64>* q : {&a, &b}) {
    check::require(q->size() % 2 == 0, "other", "has a malformed key coverage");
    for (std::size_t k = 0; k < q->size(); k += 2) {
      check::require((*q)[k] < (*q)[k + 1], "other", "has a malformed key coverage");
      iv.emplace_back((*q)[k], (*q)[k + 1]);
    }
  }
  std::sort(iv.begin(), iv.end());
  std::vector<i64> ranges;
  for (const auto& [lo, hi] : iv) {
    if (!ranges.empty() && lo < ranges.back()) {
      std::ostringstream msg;
      msg << "covers keys [" << lo << ", " << hi << ") that the other partial already holds "
          << "(up to " << ranges.back() << "); merge partials of disjoint key slices, each key "
          << "exactly once";
      check::require(false, "other", msg.str());
    }
    if (!ranges.empty() && lo == ranges.back()) {
      ranges.back() = hi;
    } else {
      ranges.push_back(lo);
      ranges.push_back(hi);
    }
  }
  return ranges;
}

void require_all_keys(const std::vector<i64>& ranges, i64 n_keys_total, const char* what) {
  if (ranges.size() == 2 && ranges[0] == 0 && ranges[1] == n_keys_total) return;
  std::ostringstream msg;
  msg << "covers keys ";
  if (ranges.empty()) msg << "(none)";
  for (std::size_t k = 0; k + 1 < ranges.size(); k += 2)
    msg << (k ? ", " : "") << "[" << ranges[k] << ", " << ranges[k + 1] << ")";
  msg << " of n_keys_total = " << n_keys_total
      << "; merge the partials of every key slice before finalising (" << what
      << " over a subset of the keys is a different estimate)";
  check::require(false, "partial", msg.str());
}

void merge(KeyPartial& into, const KeyPartial& other) {
  const bool same = into.batch == other.batch && into.heads == other.heads &&
                    into.n_query == other.n_query && into.dim == other.dim &&
                    into.dim_v == other.dim_v && into.n_keys_total == other.n_keys_total &&
                    into.moments.same_shape(other.moments);
  check::require(same, "other",
                 "describes different queries or keys (merge partials computed with the same Q, "
                 "the same options and slices of the same key sequence)");
  check::require(into.causal == other.causal && into.window == other.window, "other",
                 "was computed under another mask (causal = " +
                     std::string(other.causal ? "true" : "false") + ", window = " +
                     std::to_string(other.window) + " vs causal = " +
                     std::string(into.causal ? "true" : "false") + ", window = " +
                     std::to_string(into.window) + "; compute every partial with the same mask)");
  std::vector<i64> ranges = merge_key_ranges(into.key_ranges, other.key_ranges);
  into.moments.merge(other.moments);
  into.key_ranges = std::move(ranges);
}

template <class T>
Diagnostics lla_finalize(const View<const T>& Q, const LLAPartial& stats, const View<T>& out,
                         const Options& opt) {
  detail::Plan p;
  check::require(Q.data != nullptr && out.data != nullptr, "Q", "data pointer is null");
  const bool match = Q.shape[0] == stats.batch && Q.shape[1] == stats.heads &&
                     Q.shape[2] == stats.n_query && Q.shape[3] == stats.dim;
  check::require(match, "Q", "does not match the statistics (pass the Q they were computed with)");
  const bool out_ok = out.shape[0] == stats.batch && out.shape[1] == stats.heads &&
                      out.shape[2] == stats.n_query && out.shape[3] == stats.dim_v;
  check::require(out_ok, "out", "must have shape (batch, heads, n_q, dim of V)");
  require_all_keys(stats.key_ranges, stats.n_keys_total, "LLA");
  // The mask is baked into the statistics: finalising them under another one would return the
  // estimate of the partial's mask as if it were the one asked for.
  check::require(opt.causal == stats.causal, "causal",
                 std::string("differs from the statistics' (lla_partial ran with causal = ") +
                     (stats.causal ? "true" : "false") +
                     "): pass the mask of lla_partial, or recompute the partials with this one");
  check::require(opt.window == stats.window, "window",
                 "differs from the statistics' (lla_partial ran with window = " +
                     std::to_string(stats.window) +
                     "): pass the mask of lla_partial, or recompute the partials with this one");
  check::require(stats.moments.layout.p == stats.dim && stats.moments.layout.packed &&
                     stats.moments.layout.n_deriv == 0,
                 "stats", "are not LLA statistics (make them with lla_partial)");
  detail::check_finite(Q, "Q");
  p.B = stats.batch;
  p.H = stats.heads;
  p.d = stats.dim;
  p.dv = stats.dim_v;
  p.geo.n_q = stats.n_query;
  p.geo.n_k = stats.n_keys_total;
  Options o = opt;
  o.method = Method::lla;
  detail::apply_options(p, o, sizeof(T) == 4);
  detail::check_ridge_rank(p, "lla");
  Diagnostics diag;
  diag.method = "lla/direct";
  diag.n_threads = p.n_threads;
  std::vector<double> min_rel(static_cast<std::size_t>(p.B * p.H), 1.0);
  struct WS {
    detail::DirectWS d;
    std::vector<double> q, o;
  };
  detail::parallel_items<WS>(p.B * p.H, p.n_threads, [&](i64 item, WS& ws) {
    const i64 b = item / p.H, h = item % p.H;
    ws.q.resize(p.d);
    ws.o.resize(p.dv);
    for (i64 i = 0; i < p.geo.n_q; ++i) {
      for (i64 c = 0; c < p.d; ++c) ws.q[c] = Q.at(b, h, i, c);
      const i64 row = (b * p.H + h) * p.geo.n_q + i;
      const double rel = detail::direct_finalize_row(p, ws.q.data(), stats.moments.row(row),
                                                     p.ridge_at(b, h, i), ws.o.data(), ws.d, b, h, i);
      min_rel[item] = std::min(min_rel[item], rel);
      for (i64 c = 0; c < p.dv; ++c) out.at(b, h, i, c) = static_cast<T>(ws.o[c]);
    }
  });
  double mr = 1.0;
  for (double x : min_rel) mr = std::min(mr, x);
  detail::add_denominator_warning(diag, mr, false);
  return diag;
}

// ---------------------------------------------------------------- instantiations

namespace detail {
#define ATTNREG_INSTANTIATE(T)                                                                 \
  template void dense_weights<T>(const Plan&, const View<const T>&, const View<const T>&, i64, \
                                 i64, std::vector<double>&, double*);                                   \
  template void run_lla_naive<T>(const Plan&, const View<const T>&, const View<const T>&,      \
                                 const View<const T>&, const View<T>&, Diagnostics&);          \
  template void run_lla_direct<T>(const Plan&, const View<const T>&, const View<const T>&,     \
                                  const View<const T>&, const View<T>&, Diagnostics&);
ATTNREG_INSTANTIATE(float)
ATTNREG_INSTANTIATE(double)
#undef ATTNREG_INSTANTIATE
}  // namespace detail

template LLAPartial lla_partial<float>(const View<const float>&, const View<const float>&,
                                       const View<const float>&, std::int64_t, std::int64_t,
                                       const Options&);
template LLAPartial lla_partial<double>(const View<const double>&, const View<const double>&,
                                        const View<const double>&, std::int64_t, std::int64_t,
                                        const Options&);
template Diagnostics lla_finalize<float>(const View<const float>&, const LLAPartial&,
                                         const View<float>&, const Options&);
template Diagnostics lla_finalize<double>(const View<const double>&, const LLAPartial&,
                                          const View<double>&, const Options&);

}  // namespace attention
}  // namespace attnreg
