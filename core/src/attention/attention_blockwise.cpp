// attnreg attention engine: the blockwise paths in the input precision T: softmax / NW (online
// softmax) and FlashLLA (Zuo et al. 2025, arXiv:2510.01450, Algorithm 1 with the CG solver of
// Algorithm 2). Per query block they hold Theta(Br (d + dv + Bc) + Bc (d + dv)) numbers; the inputs
// are only read. All per-row arithmetic is in attnreg/attention/lla_tile.hpp (shared with the CUDA
// kernels); the tile GEMMs go to BLAS (gemm_nt / gemm_nn in attention.cpp).
#include <cmath>
#include <sstream>

#include "attnreg/detail/attention_internal.hpp"

namespace attnreg {
namespace attention {
namespace detail {

namespace {

/// Per-thread buffers of one query block, grown on demand (never shrunk).
template <class T>
struct Workspace {
  std::vector<T> q, k, v, kb, S, U, O, m, l;
  std::vector<T> Mt, Mu, X, R, P, SP, qa, pa, spa, ma, lam, rhoq, invdelta;
  std::vector<i64> active;
  std::vector<tile::CGRow<T>> cg;

  static void grow(std::vector<T>& x, i64 n) {
    if (static_cast<i64>(x.size()) < n) x.resize(static_cast<std::size_t>(n));
  }
};

/// Logits of rows [0, nr) of the packed query block qrows (nr x d) against the packed key tile
/// (bc x d): S = a q k' (+ rbf key bias), masked for each row's global query index rowq[r]
/// (or i0 + r when rowq is null). Rows of S have stride ldS.
template <class T>
void tile_logits(const Plan& p, int nr, int bc, const T* qrows, const T* ktile, const T* kb,
                 i64 key0, i64 i0, const i64* rowq, T* S, int ldS) {
  const int d = static_cast<int>(p.d);
  gemm_nt(nr, bc, d, static_cast<T>(p.a), qrows, d, ktile, d, T(0), S, ldS);
  for (int r = 0; r < nr; ++r) {
    T* row = S + static_cast<i64>(r) * ldS;
    if (p.rbf) tile::add_key_bias_row(row, bc, kb);
    i64 lo, hi;
    p.geo.range(rowq ? rowq[r] : i0 + r, lo, hi);
    if (key0 < lo || key0 + bc - 1 > hi) tile::mask_row(row, bc, key0, lo, hi);
  }
}

/// Pack key tile [c0, c0 + bc) of (b, h) and, for the rbf kernel, its key biases.
template <class T>
void load_keys(const Plan& p, const View<const T>& K, i64 b, i64 h, i64 c0, int bc,
               Workspace<T>& ws) {
  const int d = static_cast<int>(p.d);
  pack_rows(K, b, h, c0, bc, ws.k.data(), d);
  if (p.rbf)
    for (int j = 0; j < bc; ++j)
      ws.kb[j] = tile::rbf_key_bias(ws.k.data() + static_cast<i64>(j) * d, d, static_cast<T>(p.a));
}

struct BlockIndex {
  i64 b, h, i0;
  int br;
};

BlockIndex block_index(const Plan& p, i64 item) {
  const i64 nb = p.n_blocks();
  BlockIndex ix;
  ix.b = item / (p.H * nb);
  ix.h = (item / nb) % p.H;
  ix.i0 = (item % nb) * p.Br;
  ix.br = static_cast<int>(std::min(p.Br, p.geo.n_q - ix.i0));
  return ix;
}

/// Pack key / value tile [c0, c0 + bc) of the block's (b, h) and the logits of the block's
/// queries (ws.q) against it into ws.S (row stride Bc).
template <class T>
void load_tile_logits(const Plan& p, const View<const T>& K, const View<const T>& V,
                      const BlockIndex& ix, i64 c0, int bc, Workspace<T>& ws) {
  load_keys(p, K, ix.b, ix.h, c0, bc, ws);
  pack_rows(V, ix.b, ix.h, c0, bc, ws.v.data(), static_cast<int>(p.dv));
  tile_logits(p, ix.br, bc, ws.q.data(), ws.k.data(), ws.kb.data(), c0, ix.i0, nullptr,
              ws.S.data(), static_cast<int>(p.Bc));
}

}  // namespace

// ---------------------------------------------------------------- softmax / NW

template <class T>
void run_softmax_blockwise(const Plan& p, const View<const T>& Q, const View<const T>& K,
                           const View<const T>& V, const View<T>& out, Diagnostics&) {
  const int d = static_cast<int>(p.d), dv = static_cast<int>(p.dv);
  const int Bc = static_cast<int>(p.Bc), Br = static_cast<int>(p.Br);
  parallel_items<Workspace<T>>(p.B * p.H * p.n_blocks(), p.n_threads,
                               [&](i64 item, Workspace<T>& ws) {
    const BlockIndex ix = block_index(p, item);
    const int br = ix.br;
    Workspace<T>::grow(ws.q, static_cast<i64>(Br) * d);
    Workspace<T>::grow(ws.k, static_cast<i64>(Bc) * d);
    Workspace<T>::grow(ws.v, static_cast<i64>(Bc) * dv);
    Workspace<T>::grow(ws.kb, Bc);
    Workspace<T>::grow(ws.S, static_cast<i64>(Br) * Bc);
    Workspace<T>::grow(ws.O, static_cast<i64>(Br) * dv);
    Workspace<T>::grow(ws.m, Br);
    Workspace<T>::grow(ws.l, Br);
    pack_rows(Q, ix.b, ix.h, ix.i0, br, ws.q.data(), d);
    for (int r = 0; r < br; ++r) {
      ws.m[r] = tile::neg_inf<T>();
      ws.l[r] = T(0);
    }
    std::fill(ws.O.begin(), ws.O.begin() + static_cast<i64>(br) * dv, T(0));
    i64 klo, khi;
    p.geo.block_range(ix.i0, ix.i0 + br, klo, khi);
    for (i64 c0 = klo; c0 <= khi; c0 += Bc) {
      const int bc = static_cast<int>(std::min<i64>(Bc, khi - c0 + 1));
      load_tile_logits(p, K, V, ix, c0, bc, ws);
      for (int r = 0; r < br; ++r) {
        // Online softmax (Zuo et al. 2025, Alg. 1 lines 8-10 with the values in place of K).
        const tile::RowUpdate<T> u =
            tile::online_update_row(ws.S.data() + static_cast<i64>(r) * Bc, bc, ws.m[r]);
        ws.l[r] = u.alpha * ws.l[r] + u.rowsum;
        tile::rescale_row(ws.O.data() + static_cast<i64>(r) * dv, dv, u.alpha);
      }
      gemm_nn(br, dv, bc, T(1), ws.S.data(), Bc, ws.v.data(), dv, T(1), ws.O.data(), dv);
    }
    for (int r = 0; r < br; ++r) {
      T* o = ws.O.data() + static_cast<i64>(r) * dv;
      tile::normalize_row(o, dv, ws.l[r]);
      // Inputs are finite (make_plan checked), so a non-finite max logit means a logit
      // overflowed the working precision (inf - inf = NaN in the shift), and a non-finite
      // output with finite logits means the weighted sum of V overflowed. Say so rather than
      // return NaN rows.
      bool ok = std::isfinite(static_cast<double>(ws.m[r]));
      for (int c = 0; ok && c < dv; ++c) ok = std::isfinite(static_cast<double>(o[c]));
      if (!ok) {
        std::ostringstream msg;
        msg << to_string(p.method) << ": ";
        if (!std::isfinite(static_cast<double>(ws.m[r]))) {
          msg << "a logit overflows " << (sizeof(T) == 4 ? "float32" : "float64") << " at "
              << where(ix.b, ix.h, ix.i0 + r)
              << (p.rbf ? " (||q - k||^2 / bandwidth^2 is too large: rescale Q and K or "
                          "increase bandwidth"
                        : " (scale * q.k is too large: rescale Q and K or reduce scale")
              << (sizeof(T) == 4 ? ", or pass float64)" : ")");
        } else {
          msg << "the output overflows " << (sizeof(T) == 4 ? "float32" : "float64") << " at "
              << where(ix.b, ix.h, ix.i0 + r) << " (rescale V"
              << (sizeof(T) == 4 ? ", or pass float64)" : ")");
        }
        throw NumericalError(msg.str());
      }
    }
    unpack_rows(ws.O.data(), dv, br, out, ix.b, ix.h, ix.i0);
  });
}

// ---------------------------------------------------------------- FlashLLA

// Outside the anonymous namespace: run_lla_blockwise's closure holds these, and GCC warns
// (-Wsubobject-linkage) when this file is compiled inside a unity batch.
struct BlockReport {
  int sweeps = 0;
  i64 not_converged = 0;
  double max_rel_residual = 0.0;
  double min_rel_delta = 1.0;
};

namespace {

/// Size the workspace for one query block, pack its queries and start its statistics: running
/// max -inf, omega = 0, mu~ = 0, and the per-row ridge.
template <class T>
void lla_block_setup(const Plan& p, const View<const T>& Q, const BlockIndex& ix,
                     Workspace<T>& ws) {
  const int d = static_cast<int>(p.d), dv = static_cast<int>(p.dv);
  const int Bc = static_cast<int>(p.Bc), Br = static_cast<int>(p.Br);
  const i64 Brd = static_cast<i64>(Br) * d;
  Workspace<T>::grow(ws.q, Brd);
  Workspace<T>::grow(ws.k, static_cast<i64>(Bc) * d);
  Workspace<T>::grow(ws.v, static_cast<i64>(Bc) * dv);
  Workspace<T>::grow(ws.kb, Bc);
  Workspace<T>::grow(ws.S, static_cast<i64>(Br) * Bc);
  Workspace<T>::grow(ws.U, static_cast<i64>(Br) * Bc);
  Workspace<T>::grow(ws.O, static_cast<i64>(Br) * dv);
  for (auto* x : {&ws.Mt, &ws.Mu, &ws.X, &ws.R, &ws.P, &ws.SP, &ws.qa, &ws.pa, &ws.spa})
    Workspace<T>::grow(*x, Brd);
  for (auto* x : {&ws.m, &ws.l, &ws.ma, &ws.lam, &ws.rhoq, &ws.invdelta})
    Workspace<T>::grow(*x, Br);
  if (static_cast<int>(ws.active.size()) < Br) ws.active.resize(Br);
  if (static_cast<int>(ws.cg.size()) < Br) ws.cg.resize(Br);
  pack_rows(Q, ix.b, ix.h, ix.i0, ix.br, ws.q.data(), d);
  for (int r = 0; r < ix.br; ++r) {
    ws.m[r] = tile::neg_inf<T>();
    ws.l[r] = T(0);
    ws.lam[r] = static_cast<T>(p.ridge_at(ix.b, ix.h, ix.i0 + r));
  }
  std::fill(ws.Mt.begin(), ws.Mt.begin() + static_cast<i64>(ix.br) * d, T(0));
}

/// (i) Statistics pass, Algorithm 1 lines 6-12: running max m, omega (ws.l), mu~ (ws.Mt) =
/// sum w k over keys [klo, khi]; then line 14 / eq. 11: mu (ws.Mu) = mu~ - omega q.
template <class T>
void lla_statistics_pass(const Plan& p, const View<const T>& K, const BlockIndex& ix, i64 klo,
                         i64 khi, Workspace<T>& ws) {
  const int d = static_cast<int>(p.d), Bc = static_cast<int>(p.Bc), br = ix.br;
  T* q = ws.q.data();
  T* Mt = ws.Mt.data();
  for (i64 c0 = klo; c0 <= khi; c0 += Bc) {
    const int bc = static_cast<int>(std::min<i64>(Bc, khi - c0 + 1));
    load_keys(p, K, ix.b, ix.h, c0, bc, ws);
    tile_logits(p, br, bc, q, ws.k.data(), ws.kb.data(), c0, ix.i0, nullptr, ws.S.data(), Bc);
    for (int r = 0; r < br; ++r) {
      const tile::RowUpdate<T> u =
          tile::online_update_row(ws.S.data() + static_cast<i64>(r) * Bc, bc, ws.m[r]);
      ws.l[r] = u.alpha * ws.l[r] + u.rowsum;                           // line 10
      tile::rescale_row(Mt + static_cast<i64>(r) * d, d, u.alpha);      // line 11
    }
    gemm_nn(br, d, bc, T(1), ws.S.data(), Bc, ws.k.data(), d, T(1), Mt, d);  // + W K_c
  }
  for (int r = 0; r < br; ++r)
    tile::center_mu_row(Mt + static_cast<i64>(r) * d, ws.l[r], q + static_cast<i64>(r) * d,
                        ws.Mu.data() + static_cast<i64>(r) * d, d);
}

/// (ii) CGSolve, Algorithm 2: Sigma_i rho_i = mu_i for every row of the block, from rho = 0
/// (rho in ws.X). Returns the number of sweeps over the keys.
template <class T>
int lla_cg_solve(const Plan& p, const View<const T>& K, const BlockIndex& ix, i64 klo, i64 khi,
                 Workspace<T>& ws) {
  const int d = static_cast<int>(p.d), Bc = static_cast<int>(p.Bc), br = ix.br;
  const T tol = static_cast<T>(p.cg_tol);
  T* q = ws.q.data();
  T* X = ws.X.data();
  T* R = ws.R.data();
  T* P = ws.P.data();
  for (int r = 0; r < br; ++r)
    ws.cg[r] = tile::cg_init_row(ws.Mu.data() + static_cast<i64>(r) * d,
                                 X + static_cast<i64>(r) * d, R + static_cast<i64>(r) * d,
                                 P + static_cast<i64>(r) * d, d, tol);
  int sweeps = 0;
  for (int t = 0; t < p.cg_max_iter; ++t) {
    // Active mask: only rows still above tolerance take part in this sweep.
    int na = 0;
    for (int r = 0; r < br; ++r)
      if (ws.cg[r].status == tile::kCGActive) ws.active[na++] = ix.i0 + r;
    if (na == 0) break;
    for (int a = 0; a < na; ++a) {
      const i64 r = ws.active[a] - ix.i0;
      std::copy(q + r * d, q + r * d + d, ws.qa.data() + static_cast<i64>(a) * d);
      std::copy(P + r * d, P + r * d + d, ws.pa.data() + static_cast<i64>(a) * d);
      ws.ma[a] = ws.m[r];
    }
    T* spa = ws.spa.data();
    std::fill(spa, spa + static_cast<i64>(na) * d, T(0));
    for (i64 c0 = klo; c0 <= khi; c0 += Bc) {  // lines 4-8
      const int bc = static_cast<int>(std::min<i64>(Bc, khi - c0 + 1));
      load_keys(p, K, ix.b, ix.h, c0, bc, ws);
      tile_logits(p, na, bc, ws.qa.data(), ws.k.data(), ws.kb.data(), c0, 0, ws.active.data(),
                  ws.S.data(), Bc);
      for (int a = 0; a < na; ++a)                                        // line 6
        tile::weights_from_max_row(ws.S.data() + static_cast<i64>(a) * Bc, bc, ws.ma[a]);
      gemm_nt(na, bc, d, T(1), ws.pa.data(), d, ws.k.data(), d, T(0), ws.U.data(), Bc);
      for (int a = 0; a < na; ++a) {                                      // W .* (P K_c')
        T* u = ws.U.data() + static_cast<i64>(a) * Bc;
        const T* w = ws.S.data() + static_cast<i64>(a) * Bc;
        for (int j = 0; j < bc; ++j) u[j] *= w[j];
      }
      gemm_nn(na, d, bc, T(1), ws.U.data(), Bc, ws.k.data(), d, T(1), spa, d);  // line 7
    }
    for (int a = 0; a < na; ++a) {  // lines 9-16
      const i64 r = ws.active[a] - ix.i0;
      T* sp = spa + static_cast<i64>(a) * d;
      tile::sigma_p_finish_row(sp, P + r * d, q + r * d, ws.Mt.data() + r * d, ws.l[r],
                               ws.lam[r], d);
      tile::cg_step_row(ws.cg[r], X + r * d, R + r * d, P + r * d, sp, d);
    }
    ++sweeps;
  }
  return sweeps;
}

/// CG outcome of the block and Algorithm 1 line 16, delta = omega - mu' rho, per row: 1/delta
/// and rho'q (the brsum(R .* Q) term of relmm) for the output pass. Throws NumericalError
/// when a denominator is not positive.
template <class T>
BlockReport lla_denominators(const Plan& p, const BlockIndex& ix, int sweeps, Workspace<T>& ws) {
  const int d = static_cast<int>(p.d);
  BlockReport rep;
  rep.sweeps = sweeps;
  for (int r = 0; r < ix.br; ++r) {
    const T* mu = ws.Mu.data() + static_cast<i64>(r) * d;
    const double bn = std::sqrt(static_cast<double>(tile::dot(mu, mu, d)));
    const double rel = bn > 0 ? std::sqrt(static_cast<double>(ws.cg[r].rr)) / bn : 0.0;
    if (ws.cg[r].status != tile::kCGConverged && rel > p.cg_tol) ++rep.not_converged;
    rep.max_rel_residual = std::max(rep.max_rel_residual, rel);
    const T* rho = ws.X.data() + static_cast<i64>(r) * d;
    const T omega = ws.l[r];
    const T delta = tile::lla_delta_row(omega, mu, rho, d);
    if (!(delta > T(0)) || !std::isfinite(static_cast<double>(delta))) {
      std::ostringstream msg;
      msg << "LLA (blockwise): the denominator omega - mu'rho is " << delta << " at "
          << where(ix.b, ix.h, ix.i0 + r)
          << "; Sigma is numerically singular there (increase ridge, or use float64)";
      throw NumericalError(msg.str());
    }
    rep.min_rel_delta = std::min(rep.min_rel_delta, static_cast<double>(delta / omega));
    ws.invdelta[r] = T(1) / delta;
    ws.rhoq[r] = tile::dot(rho, ws.q.data() + static_cast<i64>(r) * d, d);
  }
  return rep;
}

/// (iii) Output pass, Algorithm 1 lines 17-22, written to out.
template <class T>
void lla_output_pass(const Plan& p, const View<const T>& K, const View<const T>& V,
                     const View<T>& out, const BlockIndex& ix, i64 klo, i64 khi,
                     Workspace<T>& ws) {
  const int d = static_cast<int>(p.d), dv = static_cast<int>(p.dv);
  const int Bc = static_cast<int>(p.Bc), br = ix.br;
  T* O = ws.O.data();
  std::fill(O, O + static_cast<i64>(br) * dv, T(0));
  for (i64 c0 = klo; c0 <= khi; c0 += Bc) {
    const int bc = static_cast<int>(std::min<i64>(Bc, khi - c0 + 1));
    load_tile_logits(p, K, V, ix, c0, bc, ws);
    gemm_nt(br, bc, d, T(1), ws.X.data(), d, ws.k.data(), d, T(0), ws.U.data(), Bc);  // R K_c'
    for (int r = 0; r < br; ++r) {
      T* s = ws.S.data() + static_cast<i64>(r) * Bc;
      tile::weights_from_max_row(s, bc, ws.m[r]);                          // line 19
      tile::lla_weights_row(s, ws.U.data() + static_cast<i64>(r) * Bc, ws.rhoq[r],
                            ws.invdelta[r], bc);                           // line 20, eq. 12
    }
    gemm_nn(br, dv, bc, T(1), ws.S.data(), Bc, ws.v.data(), dv, T(1), O, dv);  // line 21
  }
  unpack_rows(O, dv, br, out, ix.b, ix.h, ix.i0);
}

/// Diagnostics from the blocks' reports, in item order (independent of the thread count).
void lla_block_diagnostics(const Plan& p, const std::vector<BlockReport>& reports,
                           bool single, Diagnostics& diag) {
  const i64 n_items = static_cast<i64>(reports.size());
  diag.cg_iterations.resize(static_cast<std::size_t>(n_items));
  diag.cg_iteration_limit = p.cg_max_iter;
  diag.cg_tol = p.cg_tol;
  double min_rel = 1.0;
  for (i64 it = 0; it < n_items; ++it) {
    const BlockReport& r = reports[it];
    diag.cg_iterations[it] = r.sweeps;
    diag.cg_max_iterations = std::max(diag.cg_max_iterations, r.sweeps);
    diag.cg_rows_not_converged += r.not_converged;
    diag.cg_max_relative_residual = std::max(diag.cg_max_relative_residual, r.max_rel_residual);
    min_rel = std::min(min_rel, r.min_rel_delta);
  }
  diag.cg_converged = diag.cg_rows_not_converged == 0;
  if (!diag.cg_converged) {
    std::ostringstream msg;
    msg << "LLA (blockwise): conjugate gradients did not reach cg_tol = " << p.cg_tol << " for "
        << diag.cg_rows_not_converged << " of " << p.B * p.H * p.geo.n_q
        << " queries within cg_max_iter = " << p.cg_max_iter
        << " (largest relative residual " << diag.cg_max_relative_residual
        << "); increase cg_max_iter or ridge, or use algorithm = \"direct\"";
    diag.warnings.push_back(msg.str());
  }
  add_denominator_warning(diag, min_rel, single);
}
}  // namespace

template <class T>
void run_lla_blockwise(const Plan& p, const View<const T>& Q, const View<const T>& K,
                       const View<const T>& V, const View<T>& out, Diagnostics& diag) {
  const i64 n_items = p.B * p.H * p.n_blocks();
  std::vector<BlockReport> reports(static_cast<std::size_t>(n_items));
  parallel_items<Workspace<T>>(n_items, p.n_threads, [&](i64 item, Workspace<T>& ws) {
    const BlockIndex ix = block_index(p, item);
    lla_block_setup(p, Q, ix, ws);
    i64 klo, khi;
    p.geo.block_range(ix.i0, ix.i0 + ix.br, klo, khi);
    lla_statistics_pass(p, K, ix, klo, khi, ws);
    const int sweeps = lla_cg_solve(p, K, ix, klo, khi, ws);
    reports[item] = lla_denominators(p, ix, sweeps, ws);
    lla_output_pass(p, K, V, out, ix, klo, khi, ws);
  });
  lla_block_diagnostics(p, reports, sizeof(T) == 4, diag);
}

template void run_softmax_blockwise<float>(const Plan&, const View<const float>&,
                                           const View<const float>&, const View<const float>&,
                                           const View<float>&, Diagnostics&);
template void run_softmax_blockwise<double>(const Plan&, const View<const double>&,
                                            const View<const double>&, const View<const double>&,
                                            const View<double>&, Diagnostics&);
template void run_lla_blockwise<float>(const Plan&, const View<const float>&,
                                       const View<const float>&, const View<const float>&,
                                       const View<float>&, Diagnostics&);
template void run_lla_blockwise<double>(const Plan&, const View<const double>&,
                                        const View<const double>&, const View<const double>&,
                                        const View<double>&, Diagnostics&);

}  // namespace detail
}  // namespace attention
}  // namespace attnreg
