// attnreg: the bandwidth objective's gradient pass (bandwidth_select.hpp): the derivation,
// the per-query sink that accumulates the moments of the weights and of their derivatives and
// solves each local fit, its SIMD helpers, and the feeder of the fast-sum moments.
#include "attnreg/detail/bandwidth_select_internal.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "attnreg/detail/fast_moment_feeder.hpp"
#include "attnreg/detail/kernel_simd.hpp"
#include "attnreg/moments/local_moments.hpp"
#include "attnreg/solve/local_solve.hpp"

namespace attnreg {
namespace bandwidth_detail {

namespace {

// ------------------------------------------------------------------ derivation
// Parameters: theta_j = log h_j for a continuous column j, theta_j = lambda_j for a categorical
// one. For query x_i (a training row) and training row k the weight is
//     w_k = a_k prod_{cont j} k(u_kj) prod_{cat j} l_j(x_ij, X_kj; lambda_j),  u_kj = (X_kj - x_ij)/h_j.
// Continuous: d u_kj / d log h_j = -u_kj, so
//     d w_k / d log h_j = w_k * psi(u_kj),   psi(u) = -u k'(u) / k(u)            (1)
// (psi = u^2 for the Gaussian, 2u^2/(1-u^2) for the Epanechnikov, ...; where k(u) = 0 the
// weight and its derivative are both 0). Categorical: d w_k / d lambda_j = w_k * r_j,
// r_j = (d l_j / d lambda) / l_j (lambda is kept strictly inside its range, so l_j > 0).
//
// The local fit (local_fit.hpp) solves, in data units d_k = X_k - x_i (continuous columns),
//     A beta = T,  A = sum_k w_k D_k D_k' + lambda_r omega P0,  T = sum_k w_k D_k y_k,
// D_k = [1, d_k] (degree 1) or [1] (degree 0), P0 = diag(0, 1, ..., 1), omega = sum_k w_k,
// and m = e1' beta. The data-unit design does not depend on theta, so
//     d m = e1' A^{-1} (dT - dA beta),  dA = sum_k dw_k D_k D_k' + lambda_r d omega P0,
//     dT = sum_k dw_k D_k y_k.                                                   (2)
// The engine works in bandwidth units z_k = S^{-1} D_k, S = diag(1, h): A_bw = S^{-1} A S^{-1},
// T_bw = S^{-1} T, beta_bw = S beta, and the ridge becomes lambda_r omega diag(0, 1/h^2) (the
// `penalty` of local_fit.cpp). Substituting, with every matrix in (2) transformed the same way
// and e1' S = e1',
//     d m = c' (dT_bw - dA_bw beta_bw),  c = A_bw^{-1} e1,
//     dA_bw = sum_k dw_k z_k z_k' + lambda_r d omega diag(0, 1/h^2),  dT_bw = sum_k dw_k z_k y_k,
// with z_k held at its current value: the h-dependence of z in bandwidth units is only the
// change of coordinates S, which cancels. So one pass accumulates, per query, the moments
// (A, T) with weights w_k and, per parameter j, the same moments with weights dw_k / d theta_j.
//
// Leave-one-out (cv_ls): the engine excludes the query's own row, so (A, T) are the moments
// of the refit without row i (ridge included, as loo_fitted() does) and m_{-i} and its
// derivative follow from (2). CV = (1/n) sum e_i^2, e_i = y_i - m_{-i}; d CV = -(2/n) sum e_i dm_{-i}.
// Full fit (aic, gcv): the own row adds w_ii e1 e1' to A and w_ii y_i e1 to T (its design is
// [1, 0]); w_ii has derivative only through categorical lambdas (k(0) = 1 has psi(0) = 0).
// The leverage L_ii = w_ii c_0 has derivative
//     d L_ii = dw_ii c_0 - w_ii c' dA_bw c                                       (3)
// (d A^{-1} = -A^{-1} dA A^{-1}). RSS = sum e_i^2, tr L = sum L_ii; then chain rule through
// AICc = ln(RSS/n) + (1 + t/n)/(1 - (t + 2)/n) and GCV = n RSS/(n - t)^2.
//
// Ties. Rows of X with identical values (integer-valued regressors: years of schooling or
// experience, categorical codes) form groups g with c_g rows, mean ybar_g and within-group sum
// of squares SS_g. Every row of a group has the same weights, so the pass runs over the
// distinct rows, with observation weight c_g (one row weighs w1 = w_gg / c_g, w_gg the group's
// own weight): exactly the same objective at a cost quadratic in the number of distinct rows.
//   Leave-one-out for row i of group g: A_{-i} = A_x + (c_g - 1) w1 e1 e1' (A_x: every other
//   group), T_{-i} = T_x + w1 (c_g ybar_g - y_i) e1. With c = A_{-i}^{-1} e1, b = w1 c_0 and
//   m_x = e1' A_{-i}^{-1} T_x, writing y_i = ybar_g + d_i,
//       e_i = y_i - m_{-i}(x_i) = (1 + b) d_i + r_g,  r_g = ybar_g - m_x - b (c_g - 1) ybar_g,
//   so the group contributes (1 + b)^2 SS_g + c_g r_g^2 to n CV (sum d_i = 0), with
//       d r_g = -d m_x - d b (c_g - 1) ybar_g,  d b = d w1 c_0 - w1 c' dA c          (4)
//   (dA = dA_x + (c_g - 1) d w1 e1 e1'; d m_x from (2)). With c_g = 1 this is e_i = y_i - m_x.
//   Full fit: the group adds c_g w1 = w_gg to A and w_gg ybar_g to T; RSS_g = SS_g +
//   c_g (ybar_g - m_g)^2 and the group's c_g leverages sum to w_gg c_0, whose derivative is (3).

/// psi(u) = -u k'(u) / k(u) of eq. (1), for |u| inside the support (0 outside).
inline double psi(KernelType t, double u) { return kernel_psi(t, u); }

/// (d l / d lambda) / l for a categorical kernel at codes distance `dist`, lambda in (0, max).
inline double cat_ratio(const CategoricalKernel& k, double dist, double lambda) {
  switch (k.type) {
    case CategoricalKernelType::aitchison_aitken:
      return dist == 0.0 ? -1.0 / (1.0 - lambda) : 1.0 / lambda;
    case CategoricalKernelType::li_racine_unordered: return dist == 0.0 ? 0.0 : 1.0 / lambda;
    case CategoricalKernelType::wang_van_ryzin:
      return dist == 0.0 ? -1.0 / (1.0 - lambda) : -1.0 / (1.0 - lambda) + dist / lambda;
    case CategoricalKernelType::li_racine_ordered: return dist == 0.0 ? 0.0 : dist / lambda;
    case CategoricalKernelType::li_racine_normalized:  // refused by regressions (kernel_pairs)
      return (dist == 0.0 ? 0.0 : dist / lambda) - 2.0 / ((1.0 - lambda) * (1.0 + lambda));
  }
  return 0.0;
}

// All moments of one weight vector v in one pass, accumulators in registers:
// A[r][c] += sum v z_r z_c (r <= c, z_0 = 1), T[r] += sum v z_r y, for NZ basis columns.
template <int NZ>
ATTNREG_SIMD_INLINE void fused_moments(const double* v, const double* const* z, const double* y,
                                       std::size_t len, double* A, double* T) {
  using namespace simd;
  constexpr int kQ = NZ + 1;
  vd acc[kQ * (kQ + 1) / 2];
  vd tacc[kQ];
  for (auto& a : acc) a = splat(0.0);
  for (auto& a : tacc) a = splat(0.0);
  for (std::size_t i = 0; i < len; i += kLanes) {
    const std::size_t nl = len - i < static_cast<std::size_t>(kLanes) ? len - i : kLanes;
    auto ld = [&](const double* p) ATTNREG_LAMBDA_INLINE {
      return nl == kLanes ? load(p) : load_partial(p, nl);
    };
    vd d[kQ], vd_[kQ];
    vd_[0] = ld(v + i);  // zero in padded lanes
    d[0] = splat(1.0);
    ATTNREG_UNROLL
    for (int a = 0; a < NZ; ++a) {
      d[1 + a] = ld(z[a] + i);
      vd_[1 + a] = vd_[0] * d[1 + a];
    }
    int idx = 0;
    ATTNREG_UNROLL
    for (int r = 0; r < kQ; ++r) {
      ATTNREG_UNROLL
      for (int c = r; c < kQ; ++c) acc[idx++] += c == 0 ? vd_[0] : vd_[r] * d[c];
    }
    const vd yv = ld(y + i);
    ATTNREG_UNROLL
    for (int r = 0; r < kQ; ++r) tacc[r] += vd_[r] * yv;
  }
  int idx = 0;
  for (int r = 0; r < kQ; ++r)
    for (int c = r; c < kQ; ++c) A[r * kQ + c] += hsum(acc[idx++]);
  for (int r = 0; r < kQ; ++r) T[r] += hsum(tacc[r]);
}

/// Dispatch on the number of basis columns (0..3); false for more.
ATTNREG_SIMD_CLONES bool fused_moments_dispatch(std::size_t nz, const double* v,
                                                const double* const* z, const double* y,
                                                std::size_t len, double* A, double* T) {
  switch (nz) {
    case 0: fused_moments<0>(v, z, y, len, A, T); return true;
    case 1: fused_moments<1>(v, z, y, len, A, T); return true;
    case 2: fused_moments<2>(v, z, y, len, A, T); return true;
    case 3: fused_moments<3>(v, z, y, len, A, T); return true;
    default: return false;
  }
}

/// z_a = x_a - q_a over a tile, and for the Gaussian wd_p = w z_p^2 (eq. (1) with psi = u^2).
ATTNREG_SIMD_CLONES void gaussian_prep(const double* const* x, const double* q, std::size_t dc,
                                       const double* w, std::size_t len, double* z,
                                       const int* par_cont, std::size_t n_par, double* wd) {
  for (std::size_t a = 0; a < dc; ++a) {
    const double* xa = x[a];
    const double qa = q[a];
    double* za = z + a * len;
#pragma omp simd
    for (std::size_t i = 0; i < len; ++i) za[i] = xa[i] - qa;
  }
  for (std::size_t p = 0; p < n_par; ++p) {
    if (par_cont[p] < 0) continue;
    const double* zp = z + static_cast<std::size_t>(par_cont[p]) * len;
    double* wp = wd + p * len;
#pragma omp simd
    for (std::size_t i = 0; i < len; ++i) wp[i] = w[i] * zp[i] * zp[i];
  }
}

/// wd[i] = w[i] r(|codes[i] - xq|) with r = cat_ratio(kernel, ., lambda), 0 where w[i] = 0:
/// the same numbers as cat_ratio gives element by element, lane-wise (cat_ratio's branches and
/// divisions per element were a quarter of an evaluation's time).
ATTNREG_SIMD_CLONES void categorical_dweights(CategoricalKernelType type, double lambda,
                                              const double* codes, double xq, const double* w,
                                              std::size_t len, double* wd) {
  switch (type) {
    case CategoricalKernelType::aitchison_aitken:
    case CategoricalKernelType::li_racine_unordered: {
      CategoricalKernel ck;
      ck.type = type;
      const double r0 = cat_ratio(ck, 0.0, lambda), r1 = cat_ratio(ck, 1.0, lambda);
#pragma omp simd
      for (std::size_t i = 0; i < len; ++i)
        wd[i] = w[i] > 0.0 ? w[i] * (codes[i] == xq ? r0 : r1) : 0.0;
      return;
    }
    case CategoricalKernelType::wang_van_ryzin: {
      const double r0 = -1.0 / (1.0 - lambda);
#pragma omp simd
      for (std::size_t i = 0; i < len; ++i) {
        const double dist = std::fabs(codes[i] - xq);
        wd[i] = w[i] > 0.0 ? w[i] * (dist == 0.0 ? r0 : r0 + dist / lambda) : 0.0;
      }
      return;
    }
    case CategoricalKernelType::li_racine_normalized: {  // refused by regressions (kernel_pairs)
      const double r0 = -2.0 / ((1.0 - lambda) * (1.0 + lambda));
#pragma omp simd
      for (std::size_t i = 0; i < len; ++i) {
        const double dist = std::fabs(codes[i] - xq);
        wd[i] = w[i] > 0.0 ? w[i] * (dist == 0.0 ? r0 : r0 + dist / lambda) : 0.0;
      }
      return;
    }
    case CategoricalKernelType::li_racine_ordered: {
#pragma omp simd
      for (std::size_t i = 0; i < len; ++i) {
        const double dist = std::fabs(codes[i] - xq);
        wd[i] = w[i] > 0.0 ? w[i] * (dist == 0.0 ? 0.0 : dist / lambda) : 0.0;
      }
      return;
    }
  }
}

class GradientSink final : public TileSink {
 public:
  explicit GradientSink(const Shared& sh) : sh_(sh) {
    dc_ = sh.space != nullptr ? sh.space->n_continuous() : 1;
    p_ = sh.degree == 1 ? dc_ : 0;
    q_ = p_ + 1;
    nv_ = 1 + sh.n_par;
    // Per slot one query's LocalMoments row: per weight vector (w, then dw per parameter)
    // A (q x q, full) and T (q; the one response).
    block_ = moments::LocalMoments::empty(
        KernelSpace::kBlock,
        moments::MomentLayout::full_storage(static_cast<int>(p_), 1, static_cast<int>(sh.n_par)),
        false);
    blk_ = static_cast<std::size_t>(block_.layout.n_block());
    z_.resize(std::max<std::size_t>(dc_, 1) * KernelSpace::kTile);
    wd_.resize(std::max<std::size_t>(sh.n_par, 1) * KernelSpace::kTile);
    Af_.resize(q_ * q_);
    L_.resize(q_ * q_);
    s_.resize(q_);
    c_.resize(q_);
    beta_.resize(q_);
    dAf_.resize(q_ * q_);
  }

  void begin_block(const std::size_t* queries, std::size_t count) override {
    qs_ = queries;
    count_ = count;
    std::fill(block_.row(0), block_.row(static_cast<std::int64_t>(count)), 0.0);
  }

  void tile(std::size_t slot, std::size_t first, std::size_t len, const double* w) override {
    const KernelSpace& sp = *sh_.space;
    const std::size_t qi = qs_[slot];
    const std::size_t oi = orig_ != nullptr ? orig_[qi] : qi;
    const arma::mat& xs = sp.scaled();
    const double* qc = nullptr;
    if (dc_ > 0) qc = Qcont_->colptr(qi);
    const KernelType kt = sp.spec().kernel.type;
    const double* xp[64];
    for (std::size_t a = 0; a < dc_ && a < 64; ++a) xp[a] = xs.colptr(a) + first;
    gaussian_prep(xp, qc, dc_, w, len, z_.data(), sh_.par_cont.data(),
                  kt == KernelType::gaussian ? sh_.n_par : 0, wd_.data());
    for (std::size_t p = 0; p < sh_.n_par; ++p) {
      double* wd = &wd_[p * len];
      if (sh_.par_cont[p] >= 0) {
        if (kt == KernelType::gaussian) continue;
        const double* z = &z_[static_cast<std::size_t>(sh_.par_cont[p]) * len];
        for (std::size_t i = 0; i < len; ++i) wd[i] = w[i] != 0.0 ? w[i] * psi(kt, z[i]) : 0.0;
      } else {
        const std::size_t c = static_cast<std::size_t>(sh_.par_cat[p]);
        categorical_dweights(sh_.cat_kern[c].type, sh_.cat_lambda[c],
                             sh_.cat_codes_int[c] + first, sh_.cat_codes_q[c][oi], w, len, wd);
      }
    }
    const double* y = sh_.y_int->memptr() + first;
    double* base = block_.row(static_cast<std::int64_t>(slot));
    for (std::size_t v = 0; v < nv_; ++v) {
      const double* wv = v == 0 ? w : &wd_[(v - 1) * len];
      double* A = base + v * blk_;
      double* T = A + q_ * q_;
      const double* zp[4];
      for (std::size_t a = 0; a < p_ && a < 4; ++a) zp[a] = &z_[a * len];
      if (!fused_moments_dispatch(p_, wv, zp, y, len, A, T)) accumulate(wv, y, len, A, T);
    }
  }

  void end_block(const double* row_max) override {
    for (std::size_t s = 0; s < count_; ++s) finish(s, row_max[s]);
  }

  const arma::mat* Qcont_ = nullptr;
  const std::vector<std::int64_t>* self_ = nullptr;
  /// Query index -> original query (the row of the per-query data and outputs); null = the
  /// same (a run over a subset of the queries names them here).
  const std::size_t* orig_ = nullptr;

  /// Moments of `slot` computed elsewhere (fast sums): one row of layout() (per weight vector
  /// v, w then dw per parameter, A (q x q row-major) followed by T (q)).
  void set_moments(std::size_t slot, const double* row) {
    std::copy(row, row + nv_ * blk_, block_.row(static_cast<std::int64_t>(slot)));
  }
  const moments::MomentLayout& layout() const { return block_.layout; }

 private:
  // A[r][c] += sum v z_r z_c (r <= c, z_0 = 1), T[r] += sum v z_r y.
  void accumulate(const double* v, const double* y, std::size_t len, double* A, double* T) {
    double s0 = 0, t0 = 0;
#pragma omp simd reduction(+ : s0, t0)
    for (std::size_t i = 0; i < len; ++i) {
      s0 += v[i];
      t0 += v[i] * y[i];
    }
    A[0] += s0;
    T[0] += t0;
    for (std::size_t a = 0; a < p_; ++a) {
      const double* za = &z_[a * len];
      double s1 = 0, t1 = 0;
#pragma omp simd reduction(+ : s1, t1)
      for (std::size_t i = 0; i < len; ++i) {
        const double vz = v[i] * za[i];
        s1 += vz;
        t1 += vz * y[i];
      }
      A[1 + a] += s1;
      T[1 + a] += t1;
      for (std::size_t b = a; b < p_; ++b) {
        const double* zb = &z_[b * len];
        double s2 = 0;
#pragma omp simd reduction(+ : s2)
        for (std::size_t i = 0; i < len; ++i) s2 += v[i] * za[i] * zb[i];
        A[(1 + a) * q_ + 1 + b] += s2;
      }
    }
  }

  void finish(std::size_t s, double row_max) {
    const std::size_t qq = qs_[s];                               // index into the queries
    const std::size_t qi = orig_ != nullptr ? orig_[qq] : qq;    // original query
    Shared& out = const_cast<Shared&>(sh_);
    double* base = block_.row(static_cast<std::int64_t>(s));
    // Symmetrise every block's A.
    for (std::size_t v = 0; v < nv_; ++v) {
      double* A = base + v * blk_;
      for (std::size_t r = 0; r < q_; ++r)
        for (std::size_t c = r + 1; c < q_; ++c) A[c * q_ + r] = A[r * q_ + c];
    }
    const std::size_t k = static_cast<std::size_t>((*self_)[qq]);
    const double yq = (*sh_.y)(qi);  // ybar_g
    const double cg = (*sh_.count)(qi);
    // The group's own weight, and the weight added back: all of it (full fit) or all but the
    // left-out row (leave-one-out; nothing without ties). See "Ties" above.
    const double w_group =
        sh_.space != nullptr
            ? sh_.space->self_weight(k)
            : (sh_.fast_w == nullptr || sh_.fast_w->is_empty() ? 1.0 : (*sh_.fast_w)(k));
    const double w_one = w_group / cg;
    double w_self = sh_.full ? w_group : (cg - 1.0) * w_one;
    std::vector<double>& dws = dws_;
    dws.assign(sh_.n_par, 0.0);
    if (w_self > 0.0) {
      for (std::size_t p = 0; p < sh_.n_par; ++p)
        if (sh_.par_cat[p] >= 0) {
          const std::size_t c = static_cast<std::size_t>(sh_.par_cat[p]);
          dws[p] = w_self * cat_ratio(sh_.cat_kern[c], 0.0, sh_.cat_lambda[c]);
        }
      // Leave-one-out: the group's other rows enter A only; their responses are carried by
      // r_g of eq. (4), so T keeps T_x.
      base[0] += w_self;
      if (sh_.full) base[q_ * q_] += w_self * yq;
      for (std::size_t p = 0; p < sh_.n_par; ++p) {
        double* A = base + (1 + p) * blk_;
        A[0] += dws[p];
        if (sh_.full) A[q_ * q_] += dws[p] * yq;
      }
      row_max = std::max(row_max, w_one);
    }
    bool good = row_max > 0.0 && row_max >= KernelSpace::kTinyWeight;
    const double* A = base;
    const double* T = base + q_ * q_;
    const double omega = A[0];
    if (good) {
      // The local fit's solve (local_solve.hpp), so failures agree with LocalPolynomial.
      std::copy(A, A + q_ * q_, Af_.begin());
      local_solve::add_ridge(Af_.data(), q_, 1, sh_.ridge, omega, sh_.pen.data());
      good = local_solve::equilibrated_cholesky(Af_.data(), q_, L_.data(), s_.data()) ==
             local_solve::SolveStatus::ok;
    }
    out.ok[qi] = good ? 1 : 0;
    if (!good && sh_.stop_at_undefined) throw UndefinedFit{qi};
    if (!good) return;
    std::fill(c_.begin(), c_.end(), 0.0);
    c_[0] = 1.0;
    local_solve::equilibrated_solve(L_.data(), s_.data(), q_, c_.data(), 1);
    std::copy(T, T + q_, beta_.begin());
    local_solve::equilibrated_solve(L_.data(), s_.data(), q_, beta_.data(), 1);
    const double b = w_one * c_[0];  // leave-one-out b of eq. (4)
    if (sh_.full) {
      out.resid[qi] = yq - beta_[0];
      out.lev[qi] = w_self * c_[0];
    } else {
      out.resid[qi] = yq - beta_[0] - b * (cg - 1.0) * yq;
      out.b[qi] = b;
    }
    for (std::size_t p = 0; p < sh_.n_par; ++p) {
      const double* dA = base + (1 + p) * blk_;
      const double* dT = dA + q_ * q_;
      std::copy(dA, dA + q_ * q_, dAf_.begin());
      const double domega = dA[0];
      local_solve::add_ridge(dAf_.data(), q_, 1, sh_.ridge, domega, sh_.pen.data());
      double dm = 0.0, cAc = 0.0;
      for (std::size_t r = 0; r < q_; ++r) {
        double g = dT[r], h = 0.0;
        for (std::size_t c = 0; c < q_; ++c) {
          g -= dAf_[r * q_ + c] * beta_[c];
          h += dAf_[r * q_ + c] * c_[c];
        }
        dm += c_[r] * g;
        cAc += c_[r] * h;
      }
      out.dm[qi * sh_.n_par + p] = dm;
      if (sh_.full) {
        out.dlev[qi * sh_.n_par + p] = dws[p] * c_[0] - w_self * cAc;  // eq. (3)
      } else {
        // d w1: categorical only (k(0) = 1 for every continuous kernel).
        double dw_one = 0.0;
        if (sh_.par_cat[p] >= 0) {
          const std::size_t c = static_cast<std::size_t>(sh_.par_cat[p]);
          dw_one = w_one * cat_ratio(sh_.cat_kern[c], 0.0, sh_.cat_lambda[c]);
        }
        out.db[qi * sh_.n_par + p] = dw_one * c_[0] - w_one * cAc;  // eq. (4)
      }
    }
  }

  const Shared& sh_;
  std::size_t dc_ = 0, p_ = 0, q_ = 1, nv_ = 1, blk_ = 0;
  const std::size_t* qs_ = nullptr;
  std::size_t count_ = 0;
  moments::LocalMoments block_;  // the block's moments, one row per slot
  std::vector<double> z_, wd_, Af_, L_, s_, c_, beta_, dAf_, dws_;
};

// Feeds fast-sum moments (fast_sums.hpp; 1-D, compact kernel) to a GradientSink in blocks.
class FastGradientFeeder final : public detail::BlockedMomentFeeder<GradientSink> {
 public:
  FastGradientFeeder(const Shared& sh, const PreparedQueries& Q, int degree)
      : BlockedMomentFeeder<GradientSink>(sh), q_(degree == 1 ? 2 : 1), nv_(1 + sh.n_par) {
    sink_.Qcont_ = &Q.cont;
    sink_.self_ = &Q.self;
    blk_ = row_size();
  }
  void query(const FastMomentsQuery& fq) override {
    const std::size_t C = 2;
    for (std::size_t v = 0; v < nv_; ++v) {
      const double* M = v == 0 ? fq.M : fq.D;  // the one parameter is log h
      double* A = next_row() + v * blk_;
      double* T = A + q_ * q_;
      for (std::size_t a = 0; a < q_; ++a) {
        for (std::size_t b = 0; b < q_; ++b) A[a * q_ + b] = M[(a + b) * C];
        T[a] = M[a * C + 1];
      }
    }
    commit(fq);
  }

 private:
  std::size_t q_, nv_, blk_ = 0;
};

}  // namespace

std::unique_ptr<TileSink> make_gradient_sink(const Shared& sh, const PreparedQueries& Q,
                                             const std::size_t* orig) {
  auto s = std::unique_ptr<GradientSink>(new GradientSink(sh));
  s->Qcont_ = &Q.cont;
  s->self_ = &Q.self;
  s->orig_ = orig;
  return std::unique_ptr<TileSink>(std::move(s));
}

std::unique_ptr<FastMomentsConsumer> make_fast_gradient_feeder(const Shared& sh,
                                                               const PreparedQueries& Q,
                                                               int degree) {
  return std::unique_ptr<FastMomentsConsumer>(new FastGradientFeeder(sh, Q, degree));
}

}  // namespace bandwidth_detail
}  // namespace attnreg
