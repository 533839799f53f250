#include "attnreg/detail/pow2_scale.hpp"
#include "attnreg/bandwidth/bandwidth_select.hpp"
#include "attnreg/kernels/distinct_rows.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
#include <sstream>

#include "attnreg/base/error.hpp"
#include "attnreg/kernels/fast_sums.hpp"
#include "attnreg/moments/local_moments.hpp"
#include "attnreg/solve/local_fit.hpp"
#include "attnreg/solve/local_solve.hpp"
#include "attnreg/bandwidth/criteria.hpp"
#include "attnreg/detail/fast_moment_feeder.hpp"
#include "attnreg/bandwidth/plugin_bandwidth.hpp"
#include "attnreg/base/runtime.hpp"
#include "attnreg/detail/kernel_simd.hpp"

namespace attnreg {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

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

struct Shared {
  const KernelSpace* space = nullptr;  // null on the fast-sum path (one continuous column)
  const arma::vec* fast_w = nullptr;   // fast-sum path: weights, sorted order (empty = all 1)
  const arma::vec* y_int = nullptr;   // internal order
  const arma::vec* y = nullptr;       // original order (queries are original rows)
  int degree = 1;
  double ridge = 0.0;
  bool full = false;                  // aic / gcv (full fit) vs cv_ls (leave-one-out)
  std::size_t n_par = 0;              // 0 = value only
  std::vector<double> pen;            // per basis term (bandwidth units)
  // Parameter p -> column kind: continuous index, or categorical index.
  std::vector<int> par_cont;          // continuous index or -1
  std::vector<int> par_cat;           // categorical index or -1
  std::vector<const double*> cat_codes_int;  // raw codes, internal order, per categorical col
  std::vector<const double*> cat_codes_q;    // raw codes, original order, per categorical col
  std::vector<CategoricalKernel> cat_kern;
  std::vector<double> cat_lambda;
  const arma::vec* count = nullptr;   // rows per distinct row (query order)
  const arma::vec* ss = nullptr;      // within-group sum of squares (query order)
  // Outputs per query (original index): resid is r_g (cv_ls) or ybar_g - m_g (full fit); b and
  // db the leave-one-out b of eq. (4) and its derivatives (cv_ls only).
  std::vector<double> resid, lev, dm, dlev, b, db;
  std::vector<unsigned char> ok;
  // KernelSpace path: a query whose fit does not exist throws UndefinedFit (the objective is
  // +inf whatever the other queries give), so the run stops at that block.
  bool stop_at_undefined = false;
};

// Thrown by GradientSink when a query's fit does not exist; names the query (original index).
struct UndefinedFit {
  std::size_t query;
};

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

// Distance from each distinct value to its k-th nearest other distinct value; the largest.
double kth_distinct_gap(const arma::vec& x, int k) {
  arma::vec u = arma::unique(x);  // sorted
  const std::size_t m = u.n_elem;
  double worst = 0.0;
  for (std::size_t t = 0; t < m; ++t) {
    // Merge the left and right neighbours in order of distance.
    std::size_t l = t, r = t;
    double d = 0.0;
    for (int j = 0; j < k; ++j) {
      const double dl = l > 0 ? u(t) - u(l - 1) : kInf;
      const double dr = r + 1 < m ? u(r + 1) - u(t) : kInf;
      if (dl <= dr) {
        d = dl;
        --l;
      } else {
        d = dr;
        ++r;
      }
    }
    worst = std::max(worst, d);
  }
  return worst;
}

// The estimator's own limit of definition in one continuous column (the default floor of the
// search box; see "Floor" in bandwidth_select.hpp). For each distinct value v_t of the column
// (c_t rows), the leave-one-out fit at a row with that value sees the other rows: its own value
// again when c_t >= 2 (distance 0) and the other distinct values. d1 <= d2 are the distances to
// the nearest two such design values. The smallest bandwidth h_t at which that fit exists and
// keeps its digits:
//   local constant: one neighbour with weight the engine accepts: d1 < h (compact kernels;
//     the point at distance exactly h has weight 0) or k(d1/h) >= KernelSpace::kTinyWeight
//     (Gaussian: d1/h < r = sqrt(2 ln(1/kTinyWeight)) ~ 36.5);
//   local linear: two distinct design values; compact kernels: d2 < h; the Gaussian: the nearer
//     one accepted as above, and the equilibrated 2 x 2 local design [S0 S1; S1 S2] of the two
//     keeps its smallest Cholesky pivot 1 - S1^2 / (S0 S2) >= kFloorPivot, so the fit loses at
//     most 8 of its 16 digits. With weights w1, w2 = rho w1 at signed distances s1 d1, s2 d2
//     the pivot is rho D / ((1 + rho)(a + rho b)), D = (s1 d1 - s2 d2)^2, a = d1^2, b = d2^2,
//     which rises with rho = exp(-(d2^2 - d1^2) / (2 h^2)); the smallest admissible rho is the
//     smaller root of tau b rho^2 + (tau (a + b) - D) rho + tau a = 0 and gives
//     h = sqrt((d2^2 - d1^2) / (-2 ln rho)); the nearest value is paired with each of the next
//     five and the best pair counts (two values almost on top of each other on one side never
//     make a good design alone). (d1 = 0, a tied own value: the pivot is c / (c + rho) ~ 1, so
//     only d2 / h < r is needed.)
// The floor is max_t h_t. When that is 0 (every value repeated, local constant) the column's
// objective is constant below the smallest gap between distinct values divided by r (compact:
// the gap itself), where the column already acts as exact matching; that is the floor then.
// This is a per-column necessary condition: a multivariate bandwidth whose leave-one-out fits
// fail is scored +inf by the objective (and the search steps back).
constexpr double kFloorPivot = 1e-8;

double definition_floor(const arma::vec& x, int degree, const Kernel& kernel) {
  arma::vec u = arma::sort(x);
  std::vector<double> val;
  std::vector<std::size_t> cnt;
  for (double v : u) {
    if (val.empty() || v != val.back()) {
      val.push_back(v);
      cnt.push_back(1);
    } else {
      ++cnt.back();
    }
  }
  const std::size_t m = val.size();
  const bool compact = kernel.compact();
  const double r = std::sqrt(-2.0 * std::log(KernelSpace::kTinyWeight));
  double floor = 0.0, min_gap = kInf;
  for (std::size_t t = 0; t + 1 < m; ++t) min_gap = std::min(min_gap, val[t + 1] - val[t]);
  for (std::size_t t = 0; t < m; ++t) {
    // The nearest design values (signed distances), own value first when repeated.
    constexpr int kNear = 6;
    double sd[kNear];
    int have = 0;
    if (cnt[t] >= 2) sd[have++] = 0.0;
    std::size_t l = t, rr = t;
    while (have < kNear) {
      const double dl = l > 0 ? val[t] - val[l - 1] : kInf;
      const double dr = rr + 1 < m ? val[rr + 1] - val[t] : kInf;
      if (!std::isfinite(dl) && !std::isfinite(dr)) break;
      if (dl <= dr) {
        sd[have++] = -dl;
        --l;
      } else {
        sd[have++] = dr;
        ++rr;
      }
    }
    const double d1 = std::fabs(sd[0]);
    double ht;
    if (degree == 0) {
      ht = compact ? d1 : d1 / r;
    } else {
      const double d2 = have > 1 ? std::fabs(sd[1]) : kInf;
      if (compact) {
        ht = d2;
      } else if (d1 == 0.0 || d2 == d1) {
        ht = d2 / r;
      } else {
        // The nearest value paired with each of the next ones: the best such 2-point design
        // (two values almost on top of each other on one side never make a good one alone).
        ht = kInf;
        for (int k = 1; k < have; ++k) {
          const double dk = std::fabs(sd[k]);
          const double a = d1 * d1, b = dk * dk, D = (sd[0] - sd[k]) * (sd[0] - sd[k]);
          const double tau = kFloorPivot;
          const double B = tau * (a + b) - D, disc = B * B - 4.0 * tau * b * tau * a;
          if (!(B < 0.0 && disc >= 0.0)) continue;  // pivot < tau at every h
          // Smaller root, computed without cancellation: rho = 2 C / (-B + sqrt(disc)).
          const double rho = std::min(2.0 * tau * a / (-B + std::sqrt(disc)), std::exp(-1.0));
          const double hk = b > a ? std::sqrt((b - a) / (-2.0 * std::log(rho))) : 0.0;
          ht = std::min(ht, std::max(d1 / r, hk));
        }
        if (!std::isfinite(ht)) ht = std::max(d1 / r, std::sqrt((d2 * d2 - d1 * d1) / 2.0));
      }
    }
    floor = std::max(floor, ht);
  }
  if (!(floor > 0.0)) floor = compact ? min_gap : min_gap / r;
  // Step just beyond the limit: compact kernels give a point exactly at distance h weight 0,
  // and the Gaussian's weight at exactly r bandwidths is the threshold itself.
  return floor * (1.0 + 1e-9);
}

std::string lower_copy(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

struct BandwidthObjective::UndefinedHint {
  static constexpr std::size_t kMax = 16;  // at most one block of KernelSpace::run
  std::mutex mutex;
  std::vector<std::size_t> queries;  // most recent first, distinct

  std::vector<std::size_t> get() {
    std::lock_guard<std::mutex> lock(mutex);
    return queries;
  }
  void add(std::size_t q) {
    std::lock_guard<std::mutex> lock(mutex);
    queries.erase(std::remove(queries.begin(), queries.end(), q), queries.end());
    queries.insert(queries.begin(), q);
    if (queries.size() > kMax) queries.resize(kMax);
  }
};

BandwidthMethod bandwidth_method_from_name(const std::string& name, const std::string& arg) {
  const std::string s = lower_copy(name);
  if (s == "cv_ls" || s == "cv.ls" || s == "cvls") return BandwidthMethod::cv_ls;
  if (s == "aic" || s == "cv.aic" || s == "cv_aic" || s == "aicc") return BandwidthMethod::aic;
  if (s == "gcv") return BandwidthMethod::gcv;
  if (s == "rot" || s == "normal_reference" || s == "normal-reference") return BandwidthMethod::rot;
  if (s == "dpi") return BandwidthMethod::dpi;
  throw InvalidArgument(arg + ": unknown bandwidth selector '" + name +
                        "'; choose one of cv_ls (cv.ls), aic (cv.aic), gcv, rot, dpi");
}

const char* bandwidth_method_name(BandwidthMethod m) {
  switch (m) {
    case BandwidthMethod::cv_ls: return "cv_ls";
    case BandwidthMethod::aic: return "aic";
    case BandwidthMethod::gcv: return "gcv";
    case BandwidthMethod::rot: return "rot";
    case BandwidthMethod::dpi: return "dpi";
  }
  return "?";
}

BandwidthObjective::BandwidthObjective(const arma::mat& X_in, const arma::vec& y_in,
                                       const BandwidthSelectOptions& opt)
    : X_(X_in), y_(y_in), opt_(opt), hint_(std::make_shared<UndefinedHint>()) {
  if (!opt.weights.is_empty()) {
    // Observation weights (see "Weights" in bandwidth_select.hpp): rows of weight 0 take no
    // part in any fit nor in the criterion, so they are dropped; the rest are divided by their
    // maximum (every criterion is invariant to a common factor).
    check::require(opt.weights.n_elem == X_in.n_rows, "weights",
                   "must have one value per row of X (got " + std::to_string(opt.weights.n_elem) +
                       " weights for " + std::to_string(X_in.n_rows) + " rows)");
    check::require(opt.weights.is_finite() && arma::all(opt.weights >= 0.0), "weights",
                   "must be finite and >= 0");
    check::require(arma::any(opt.weights > 0.0), "weights",
                   "are all zero; give at least one positive weight");
    const arma::uvec keep = arma::find(opt.weights > 0.0);
    if (keep.n_elem < X_in.n_rows) {
      X_ = X_in.rows(keep);
      if (y_in.n_elem == X_in.n_rows) y_ = y_in.elem(keep);
    }
    w_ = opt.weights.elem(keep);
    w_ /= w_.max();
  }
  const arma::mat& X = X_;
  const arma::vec& y = y_;
  check::require(opt.degree == 0 || opt.degree == 1, "estimator",
                 "must be local constant (lc, degree 0) or local linear (ll, degree 1)");
  check::require(opt.method == BandwidthMethod::cv_ls || opt.method == BandwidthMethod::aic ||
                     opt.method == BandwidthMethod::gcv,
                 "method", "the objective exists for cv_ls, aic and gcv only");
  check::require(std::isfinite(opt.ridge) && opt.ridge >= 0.0, "ridge", "must be >= 0 and finite");
  check::require(X.n_cols >= 1, "X", "needs at least one column");
  check::require(X.n_cols <= 64, "X", "bandwidth selection handles at most 64 columns");
  check::require(X.n_rows == y.n_elem, "y",
                 "must have one value per row of X (got " + std::to_string(y.n_elem) +
                     " values for " + std::to_string(X.n_rows) + " rows)");
  check::require(X.n_rows >= 5, "X",
                 "bandwidth selection needs at least 5 rows (got " + std::to_string(X.n_rows) +
                     "); pass a bandwidth by hand");
  check::all_finite(X, "X");
  check::all_finite(y, "y");
  types_ = parse_var_types(opt.var_types, X.n_cols);
  const int k = opt.min_neighbors > 0 ? opt.min_neighbors : opt.degree + 1;
  const std::size_t n_cont = static_cast<std::size_t>(
      std::count(types_.begin(), types_.end(), VarType::continuous));
  lower_.set_size(X.n_cols);
  upper_.set_size(X.n_cols);
  levels_.assign(X.n_cols, 0);
  for (std::size_t j = 0; j < X.n_cols; ++j) {
    const arma::vec col = X.col(j);
    const std::size_t n_distinct = arma::vec(arma::unique(col)).n_elem;
    if (types_[j] == VarType::continuous) {
      if (n_distinct < static_cast<std::size_t>(k) + 1) {
        std::ostringstream m;
        m << "X: continuous column " << (j + 1) << " has " << n_distinct
          << " distinct value(s); a data-driven bandwidth for "
          << (opt.degree == 1 ? "local linear" : "local constant") << " needs at least "
          << (k + 1) << " (drop the column, declare it categorical in var_types, or pass a "
          << "bandwidth by hand)";
        throw InvalidArgument(m.str());
      }
      if (opt.min_neighbors > 0) {
        // The bwcheck guard asked for: k distinct neighbours within reach of every point.
        const double gap = kth_distinct_gap(col, k);
        const double factor = opt.kernel.compact() ? 1.0 : 1.0 / 3.0;
        // Compact kernels: a point exactly at distance h has weight 0, so step just beyond.
        lower_(j) = gap * factor * (opt.kernel.compact() ? 1.0 + 1e-9 : 1.0);
      } else {
        lower_(j) = definition_floor(col, opt.degree, opt.kernel);
      }
      upper_(j) = 100.0 * (col.max() - col.min());
    } else {
      for (double v : col)
        check::require(v == std::floor(v), "X",
                       "categorical column " + std::to_string(j + 1) +
                           " must hold integer codes");
      check::require(n_distinct >= 2, "X",
                     "categorical column " + std::to_string(j + 1) +
                         " has a single level: drop it (it cannot change any fit)");
      levels_[j] = static_cast<int>(n_distinct);
      const CategoricalKernel& ck =
          types_[j] == VarType::ordered ? opt.ordered_kernel : opt.unordered_kernel;
      const double mx = ck.max_bandwidth(levels_[j]);
      lower_(j) = 1e-6 * mx;
      upper_(j) = ck.type == CategoricalKernelType::wang_van_ryzin ||
                          ck.type == CategoricalKernelType::aitchison_aitken
                      ? mx * (1.0 - 1e-6)
                      : mx;
    }
  }
  (void)n_cont;

  // Group identical rows (see "Ties"; distinct_rows.hpp); with weights, rows identical in X and
  // in their weight (see "Weights").
  const std::size_t n = X.n_rows;
  DistinctRows groups = distinct_rows(w_.is_empty() ? X : arma::mat(arma::join_rows(X, w_)));
  const std::size_t G = groups.X.n_rows;
  rows_ = std::move(groups.count);
  if (w_.is_empty()) {
    Xu_ = std::move(groups.X);
    unit_.ones(G);
  } else {
    Xu_ = groups.X.cols(0, X.n_cols - 1);
    unit_ = groups.X.col(X.n_cols);
  }
  count_ = rows_ % unit_;
  weight_sum_ = arma::accu(count_);
  ybar_.zeros(G);
  ss_.zeros(G);
  for (std::size_t i = 0; i < n; ++i) ybar_(groups.group_of[i]) += y(i);
  ybar_ /= rows_;
  for (std::size_t i = 0; i < n; ++i) {  // two-pass: no cancellation in SS
    const std::size_t g = groups.group_of[i];
    const double e = y(i) - ybar_(g);
    ss_(g) += e * e;
  }
  // Fast sums (fast_sums_eligible's conditions, decided here once): the sort of the distinct
  // values does not depend on the bandwidth, so it is done once for every evaluation, and no
  // KernelSpace (with its neighbour index) is built per evaluation. Each query's numbers are
  // those of the KernelSpace path: the same centre (the mean of the distinct values), the same
  // scaling (x - centre) / h, the same weights count / max(count); the queries run in sorted
  // order (sequential memory access), and so does the objective's sum over them.
  const bool ties = Xu_.n_rows < X_.n_rows || !w_.is_empty();
  arma::vec ow;
  if (ties && count_.min() != count_.max()) ow = count_ / count_.max();
  bool tiny = false;
  for (double a : ow) tiny = tiny || (a > 0.0 && a < 1e-200);
  fast_ = X_.n_cols == 1 && types_[0] == VarType::continuous &&
          fast_sums_supported(opt.kernel.type) && (opt.degree == 0 || opt.degree == 1) &&
          opt.algorithm == PairAlgorithm::automatic && G >= kFastSumsMinRows && !tiny;
  if (fast_) {
    const arma::vec xu = Xu_.col(0);
    fast_center_ = arma::mean(xu);
    std::vector<std::size_t> perm(G);
    std::iota(perm.begin(), perm.end(), std::size_t{0});
    std::stable_sort(perm.begin(), perm.end(),
                     [&](std::size_t a, std::size_t b) { return xu(a) < xu(b); });
    fast_x_.set_size(G);
    fast_y_.set_size(G);
    fast_rows_.set_size(G);
    fast_unit_.set_size(G);
    fast_ss_.set_size(G);
    if (!ow.is_empty()) fast_w_.set_size(G);
    fast_self_.resize(G);
    for (std::size_t k = 0; k < G; ++k) {
      fast_x_(k) = xu(perm[k]);
      fast_y_(k) = ybar_(perm[k]);
      fast_rows_(k) = rows_(perm[k]);
      fast_unit_(k) = unit_(perm[k]);
      fast_ss_(k) = ss_(perm[k]);
      if (!ow.is_empty()) fast_w_(k) = ow(perm[k]);
      fast_self_[k] = static_cast<std::int64_t>(k);
    }
  }
}

double BandwidthObjective::operator()(const arma::vec& bandwidth, arma::vec* grad) const {
  const std::size_t d = X_.n_cols, n = Xu_.n_rows;  // n: distinct rows (queries)
  const double n_obs = static_cast<double>(X_.n_rows);
  check::require(bandwidth.n_elem == d, "bandwidth", "needs one value per column of X");
  KernelSpec spec;
  spec.kernel = opt_.kernel;
  spec.var_types = types_;
  spec.unordered = opt_.unordered_kernel;
  spec.ordered = opt_.ordered_kernel;
  spec.algorithm = opt_.algorithm;
  spec.truncation = opt_.truncation;
  const bool ties = Xu_.n_rows < X_.n_rows || !w_.is_empty();
  // The fast-sum path needs no KernelSpace: its sorted data were prepared once (constructor).
  std::unique_ptr<KernelSpace> space_ptr;
  PreparedQueries Q;
  arma::vec y_int;
  if (fast_) {
    const double h = bandwidth(0);
    if (!(std::isfinite(h) && h > 0.0)) {
      std::ostringstream msg;
      msg << "bandwidth: must be > 0 and finite for continuous column 1, got " << h
          << " (pass a positive number, e.g. a rule-of-thumb 1.06 sd n^(-1/5))";
      throw InvalidArgument(msg.str());
    }
  } else {
    space_ptr.reset(new KernelSpace(Xu_, bandwidth, spec, ties ? count_ : arma::vec()));
    Q = space_ptr->training_queries();
    y_int = ybar_.elem(arma::conv_to<arma::uvec>::from(space_ptr->order()));
  }

  Shared sh;
  sh.space = space_ptr.get();
  sh.fast_w = fast_ ? &fast_w_ : nullptr;
  sh.y_int = fast_ ? &fast_y_ : &y_int;
  // Per-query data: the distinct rows in their own order, or sorted on the fast-sum path.
  const arma::vec& q_rows = fast_ ? fast_rows_ : rows_;
  const arma::vec& q_unit = fast_ ? fast_unit_ : unit_;
  const arma::vec& q_ybar = fast_ ? fast_y_ : ybar_;
  const arma::vec& q_ss = fast_ ? fast_ss_ : ss_;
  sh.y = &q_ybar;
  sh.count = &q_rows;
  sh.ss = &q_ss;
  sh.degree = opt_.degree;
  sh.ridge = opt_.degree == 1 ? opt_.ridge : 0.0;
  sh.full = opt_.method != BandwidthMethod::cv_ls;
  const std::vector<std::size_t> fast_cc{0}, fast_kc;
  const auto& cc = fast_ ? fast_cc : space_ptr->continuous_columns();
  const auto& kc = fast_ ? fast_kc : space_ptr->categorical_columns();
  if (opt_.degree == 1)
    for (std::size_t c : cc) sh.pen.push_back(1.0 / (bandwidth(c) * bandwidth(c)));
  std::vector<arma::vec> codes_int(kc.size());
  std::vector<arma::vec> codes_q(kc.size());
  for (std::size_t c = 0; c < kc.size(); ++c) {
    const std::size_t j = kc[c];
    codes_q[c] = Xu_.col(j);
    codes_int[c] = codes_q[c].elem(arma::conv_to<arma::uvec>::from(space_ptr->order()));
    sh.cat_codes_int.push_back(codes_int[c].memptr());
    sh.cat_codes_q.push_back(codes_q[c].memptr());
    sh.cat_kern.push_back(types_[j] == VarType::ordered ? opt_.ordered_kernel
                                                        : opt_.unordered_kernel);
    sh.cat_lambda.push_back(bandwidth(j));
    if (grad != nullptr)
      check::require(bandwidth(j) > 0.0 &&
                         !(bandwidth(j) >= 1.0 &&
                           sh.cat_kern.back().type == CategoricalKernelType::wang_van_ryzin),
                     "bandwidth",
                     "categorical lambdas must lie strictly inside the kernel's range (above 0; "
                     "below 1 for wang_van_ryzin) for a gradient");
  }
  // Parameters in column order.
  if (grad != nullptr) {
    sh.n_par = d;
    sh.par_cont.assign(d, -1);
    sh.par_cat.assign(d, -1);
    for (std::size_t a = 0; a < cc.size(); ++a) sh.par_cont[cc[a]] = static_cast<int>(a);
    for (std::size_t c = 0; c < kc.size(); ++c) sh.par_cat[kc[c]] = static_cast<int>(c);
  }
  sh.resid.assign(n, 0.0);
  sh.lev.assign(n, 0.0);
  sh.dm.assign(n * sh.n_par, 0.0);
  sh.dlev.assign(n * sh.n_par, 0.0);
  sh.b.assign(n, 0.0);
  sh.db.assign(n * sh.n_par, 0.0);
  sh.ok.assign(n, 0);

  RunOptions ro;
  ro.n_threads = opt_.n_threads;
  ro.exclude_self = true;
  ro.label = "bandwidth objective";
  if (fast_) {
    // 1-D compact kernel: exact fast sums over sorted windows (fast_sums.hpp); the one
    // parameter's weights a (-u k'(u)) = w psi(u) come from the same sums. Training points
    // and queries (the distinct rows, each at its own value) in sorted order.
    const double h = bandwidth(0);
    arma::vec xs(n);
    for (std::size_t k = 0; k < n; ++k) xs(k) = (fast_x_(k) - fast_center_) / h;
    Q.m = n;
    Q.cont = xs.t();
    Q.self = fast_self_;
    FastMomentsProblem fp;
    fp.kernel = opt_.kernel.type;
    fp.n = n;
    fp.x = xs.memptr();
    fp.a = fast_w_.is_empty() ? nullptr : fast_w_.memptr();
    fp.Y = fast_y_.memptr();
    fp.k = 1;
    fp.m = Q.m;
    fp.t = Q.cont.memptr();
    fp.self = Q.self.data();
    fp.max_power = opt_.degree == 1 ? 2 : 0;
    fp.derivative = sh.n_par > 0;
    fp.n_threads = opt_.n_threads;
    fast_window_moments(fp, [&]() {
      return std::unique_ptr<FastMomentsConsumer>(new FastGradientFeeder(sh, Q, opt_.degree));
    });
  } else {
    // Queries whose fit did not exist at recent evaluations run first (UndefinedHint), and the
    // run stops at the first fit that does not exist: the objective is then +inf. Every
    // query's numbers, and the sums over them below, are those of one full pass.
    sh.stop_at_undefined = true;
    auto sinks = [&](const PreparedQueries& QQ, const std::size_t* orig) {
      return [&sh, &QQ, orig]() {
        auto s = std::unique_ptr<GradientSink>(new GradientSink(sh));
        s->Qcont_ = &QQ.cont;
        s->self_ = &QQ.self;
        s->orig_ = orig;
        return std::unique_ptr<TileSink>(std::move(s));
      };
    };
    try {
      const std::vector<std::size_t> hint = hint_->get();
      if (!hint.empty()) {
        const std::size_t nc = kc.size();
        PreparedQueries P;
        P.m = hint.size();
        P.cont.set_size(Q.cont.n_rows, P.m);
        P.codes.resize(nc * P.m);
        P.self.resize(P.m);
        for (std::size_t t = 0; t < P.m; ++t) {
          const std::size_t i = hint[t];
          if (Q.cont.n_rows > 0) P.cont.col(t) = Q.cont.col(i);
          for (std::size_t c = 0; c < nc; ++c) P.codes[t * nc + c] = Q.codes[i * nc + c];
          P.self[t] = Q.self[i];
        }
        space_ptr->run(P, sinks(P, hint.data()), ro);
      }
      space_ptr->run(Q, sinks(Q, nullptr), ro);
    } catch (const UndefinedFit& u) {
      hint_->add(u.query);
      if (grad != nullptr) grad->zeros(d);
      return kInf;
    }
  }

  if (grad != nullptr) grad->zeros(d);
  for (std::size_t i = 0; i < n; ++i)
    if (!sh.ok[i]) return kInf;
  // Reductions in query order (independent of threads).
  double rss = 0.0, tr = 0.0;
  arma::vec drss(sh.n_par, arma::fill::zeros), dtr(sh.n_par, arma::fill::zeros);
  for (std::size_t i = 0; i < n; ++i) {
    // Group g: rows_ rows of weight unit_ each (1 without weights).
    const double e = sh.resid[i], cg = q_rows(i), ss = q_ss(i), wg = q_unit(i);
    if (sh.full) {  // RSS_g = SS_g + c_g (ybar_g - m_g)^2
      rss += wg * (ss + cg * e * e);
      tr += sh.lev[i];
      for (std::size_t p = 0; p < sh.n_par; ++p) {
        drss(p) -= 2.0 * wg * cg * e * sh.dm[i * sh.n_par + p];
        dtr(p) += sh.dlev[i * sh.n_par + p];
      }
    } else {  // eq. (4): (1 + b)^2 SS_g + c_g r_g^2
      // Without ties (ss = 0) the (1 + b)^2 SS_g term is absent: b = w1 c_0 can overflow
      // where the leave-one-out weights are near the underflow limit (0 * inf).
      const double ob = ss > 0.0 ? 1.0 + sh.b[i] : 0.0;
      rss += wg * (ob * ob * ss + cg * e * e);
      for (std::size_t p = 0; p < sh.n_par; ++p) {
        const double db = cg > 1.0 ? sh.db[i * sh.n_par + p] : 0.0;
        const double dr = -sh.dm[i * sh.n_par + p] - db * (cg - 1.0) * q_ybar(i);
        drss(p) += wg * (2.0 * ob * db * ss + 2.0 * cg * e * dr);
      }
    }
  }
  last_rss_ = rss;
  last_trace_ = tr;
  // rss is the weighted sum sum_i w_i e_i^2 (w_i = 1 without weights), W = sum_i w_i (= n
  // without weights): the mean squared error is rss / W, and n (the rows) stays the sample
  // size in the AICc and GCV penalties.
  const criteria::FitSums sums{rss, weight_sum_, static_cast<double>(n_obs), tr};
  double f = kInf;
  arma::vec g(sh.n_par, arma::fill::zeros);
  switch (opt_.method) {
    case BandwidthMethod::cv_ls: f = criteria::cv_ls(rss, weight_sum_, drss, g); break;
    case BandwidthMethod::aic: f = criteria::aicc(sums, drss, dtr, g); break;
    case BandwidthMethod::gcv: f = criteria::gcv(sums, drss, dtr, g); break;
    default: break;
  }
  // aic and gcv do not exist here (criteria.hpp): no gradient.
  if (f == kInf && opt_.method != BandwidthMethod::cv_ls) return kInf;
  if (grad != nullptr) *grad = g;
  return f;
}

arma::vec rot_bandwidth(const arma::mat& X, const Kernel& kernel) {
  check::require(X.n_rows >= 2, "X", "needs at least 2 rows for a normal-reference bandwidth");
  check::all_finite(X, "X");
  const double n = static_cast<double>(X.n_rows);
  const double q = static_cast<double>(X.n_cols);
  // Canonical-bandwidth ratio delta(K) / delta(phi) (Marron and Nolan 1988).
  kernel.require_second_order("the rule-of-thumb bandwidth");
  const double delta_k = std::pow(kernel.roughness() / (kernel.mu2() * kernel.mu2()), 0.2);
  const double delta_phi = std::pow(0.28209479177387814347, 0.2);  // 1/(2 sqrt(pi))
  arma::vec h(X.n_cols);
  for (std::size_t j = 0; j < X.n_cols; ++j) {
    arma::vec x = arma::sort(X.col(j));
    const double sd = arma::stddev(x);
    auto quant = [&](double p) {
      const double pos = p * (n - 1.0);
      const std::size_t lo = static_cast<std::size_t>(std::floor(pos));
      const std::size_t hi = std::min<std::size_t>(lo + 1, x.n_elem - 1);
      return x(lo) + (pos - lo) * (x(hi) - x(lo));
    };
    const double iqr = quant(0.75) - quant(0.25);
    const double s = iqr > 0.0 ? std::min(sd, iqr / 1.349) : sd;
    check::require(s > 0.0, "X",
                   "column " + std::to_string(j + 1) +
                       " is constant: no normal-reference bandwidth exists (drop it)");
    h(j) = 1.06 * s * std::pow(n, -1.0 / (4.0 + q)) * delta_k / delta_phi;
  }
  return h;
}

namespace {
// The log-bandwidths of search_curve's grid.
std::vector<double> curve_points(double lo, double hi, double range, double base, std::size_t G) {
  const double gh = std::max(lo + 1e-3, std::min({hi, std::log(2.0 * range), base + std::log(4.0)}));
  std::vector<double> t(G);
  for (std::size_t g = 0; g < G; ++g)
    t[g] = lo + (gh - lo) * static_cast<double>(g) / static_cast<double>(G - 1);
  return t;
}

// Grid indices of the curve's local minima (finite values not above a finite neighbour; NaN,
// a point not evaluated, constrains nothing), best first, at most n_starts of them.
std::vector<std::size_t> curve_minima(const arma::vec& values, int n_starts) {
  const std::size_t G = values.n_elem;
  std::vector<std::pair<double, std::size_t>> minima;
  for (std::size_t g = 0; g < G; ++g) {
    const double v = values(g);
    if (!std::isfinite(v)) continue;
    const bool left = g == 0 || !(values(g - 1) < v);
    const bool right = g + 1 == G || !(values(g + 1) < v);
    if (left && right) minima.emplace_back(v, g);
  }
  std::sort(minima.begin(), minima.end());
  const std::size_t ns = std::min<std::size_t>(minima.size(), static_cast<std::size_t>(std::max(n_starts, 0)));
  std::vector<std::size_t> out(ns);
  for (std::size_t s = 0; s < ns; ++s) out[s] = minima[s].second;
  return out;
}
}  // namespace

std::vector<double> search_curve(const std::function<double(double)>& value, double lo,
                                 double hi, double range, double base, std::size_t G,
                                 int n_starts, arma::vec& grid, arma::vec& values) {
  const std::vector<double> ts = curve_points(lo, hi, range, base, G);
  grid.set_size(G);
  values.set_size(G);
  for (std::size_t g = 0; g < G; ++g) {
    grid(g) = std::exp(ts[g]);
    const double v = value(ts[g]);
    values(g) = std::isfinite(v) ? v : kInf;
  }
  std::vector<double> starts;
  for (std::size_t g : curve_minima(values, n_starts)) starts.push_back(std::log(grid(g)));
  return starts;
}

namespace {
BandwidthSelectResult select_bandwidth_unscaled(const arma::mat& X, const arma::vec& y,
                                                const BandwidthSelectOptions& opt);
}  // namespace

BandwidthSelectResult select_bandwidth(const arma::mat& X, const arma::vec& y,
                                       const BandwidthSelectOptions& opt) {
  // Rows of weight 0 take no part in anything (starts, grid, box): drop them first, so the
  // result is exactly that of the data without them. (BandwidthObjective validates weights.)
  if (!opt.weights.is_empty() && opt.weights.n_elem == X.n_rows && y.n_elem == X.n_rows &&
      opt.weights.is_finite() && arma::all(opt.weights >= 0.0) &&
      arma::any(opt.weights > 0.0) && arma::any(opt.weights == 0.0)) {
    const arma::uvec keep = arma::find(opt.weights > 0.0);
    BandwidthSelectOptions o = opt;
    o.weights = opt.weights.elem(keep);
    return select_bandwidth(X.rows(keep), y.elem(keep), o);
  }
  // Every criterion's minimiser is invariant under y -> c y (cv_ls and gcv scale by c^2, aic
  // shifts by log c^2), but at extreme scales (|y| ~ 1e+-150) the squared residuals lose
  // precision or overflow and the search went wrong without a word. Bring y to order one by
  // a power of two (exact in floating point), select, and undo the scale on the objective.
  // Likewise x -> c x with h -> c h for a continuous column: a column spread over 1e-300 is
  // not constant (the message said so) and one over 1e307 overflows the search box; both are
  // brought to order one by a power of two and the bandwidths scaled back.
  const int e = detail::extreme_scale_exponent(y.is_empty() ? 0.0 : arma::abs(y).max(), 200);
  std::vector<int> ex(X.n_cols, 0);
  bool scale_x = false;
  if (X.is_finite() && X.n_rows >= 2) {
    std::vector<VarType> t;
    try {
      t = parse_var_types(opt.var_types, X.n_cols, "var_types");
    } catch (const InvalidArgument&) {
      t.clear();  // the unscaled call reports it
    }
    for (std::size_t j = 0; j < t.size(); ++j) {
      if (t[j] != VarType::continuous) continue;
      const double range = X.col(j).max() - X.col(j).min();
      const double mag = arma::abs(X.col(j)).max();
      const int ej = detail::extreme_scale_exponent(range, 200);
      if (ej == 0) continue;
      if (!std::isfinite(std::ldexp(mag, -ej))) continue;
      ex[j] = ej;
      scale_x = true;
    }
  }
  if (e == 0 && !scale_x) return select_bandwidth_unscaled(X, y, opt);
  const arma::vec ys = e == 0 ? y : arma::vec(y * std::ldexp(1.0, -e));
  arma::mat Xs = X;
  BandwidthSelectOptions os = opt;
  for (std::size_t j = 0; j < ex.size(); ++j) {
    if (ex[j] == 0) continue;
    Xs.col(j) *= std::ldexp(1.0, -ex[j]);
    if (os.start.n_elem == X.n_cols) os.start(j) = std::ldexp(os.start(j), -ex[j]);
  }
  BandwidthSelectResult res = select_bandwidth_unscaled(Xs, ys, os);
  for (std::size_t j = 0; j < ex.size(); ++j) {
    if (ex[j] == 0) continue;
    if (j < res.bandwidth.n_elem) res.bandwidth(j) = std::ldexp(res.bandwidth(j), ex[j]);
    if (j < res.lower.n_elem) res.lower(j) = std::ldexp(res.lower(j), ex[j]);
    if (j < res.upper.n_elem) res.upper(j) = std::ldexp(res.upper(j), ex[j]);
    if (j == 0 && X.n_cols == 1)
      for (double& g : res.curve_grid) g = std::ldexp(g, ex[j]);
  }
  auto unscale = [&](double v) {
    if (!std::isfinite(v)) return v;
    return opt.method == BandwidthMethod::aic ? v + 2.0 * e * std::log(2.0) : std::ldexp(v, 2 * e);
  };
  res.objective = unscale(res.objective);
  for (double& v : res.curve_values) v = unscale(v);
  return res;
}

namespace {
BandwidthSelectResult select_bandwidth_unscaled(const arma::mat& X, const arma::vec& y,
                                                const BandwidthSelectOptions& opt) {
  check::require(opt.n_starts >= 1, "n_starts", "must be at least 1");
  // Each grid point is a full cross-validation pass over the data, and the curve only seeds
  // the gradient search, so a huge grid is a mistake that would run for minutes or hours.
  constexpr int kMaxGridSize = 10000;
  check::require(opt.grid_size >= 0 && opt.grid_size <= kMaxGridSize, "grid_size",
                 "must be between 0 and " + std::to_string(kMaxGridSize) +
                     " (each grid point is one full cross-validation pass and the curve only "
                     "seeds the search; 30 is the default), got " +
                     std::to_string(opt.grid_size));
  BandwidthSelectResult res;
  res.method = bandwidth_method_name(opt.method);
  BandwidthSelectOptions cvopt = opt;
  if (opt.method == BandwidthMethod::rot || opt.method == BandwidthMethod::dpi)
    cvopt.method = BandwidthMethod::cv_ls;
  BandwidthObjective obj(X, y, cvopt);  // validates X, y
  res.lower = obj.lower();
  res.upper = obj.upper();
  const std::size_t d = X.n_cols;
  const auto& types = obj.var_types();
  std::vector<std::size_t> cont, cat;
  for (std::size_t j = 0; j < d; ++j)
    (types[j] == VarType::continuous ? cont : cat).push_back(j);
  // The searched objective: exact, or binned (binned.hpp), whose box starts at five grid
  // spacings (below, the binned data cannot resolve the kernel).
  std::unique_ptr<BinnedCVObjective> binned;
  if (opt.approx == Approximation::binned && opt.method != BandwidthMethod::rot &&
      opt.method != BandwidthMethod::dpi) {
    check::require(opt.method == BandwidthMethod::cv_ls, "approx",
                   "\"binned\" selection is for method cv_ls; use approx=\"exact\" for aic or gcv");
    check::require(opt.weights.is_empty(), "approx",
                   "\"binned\" selection has no observation weights; use approx=\"exact\" "
                   "with weights");
    binned_grid_size(types, opt.approx_grid_size, "approx_grid_size");
    binned.reset(new BinnedCVObjective(X, y, opt.degree, opt.kernel, opt.ridge,
                                       opt.approx_grid_size, opt.n_threads));
    for (std::size_t j = 0; j < d; ++j) res.lower(j) = std::max(res.lower(j), 5.0 * binned->spacing(j));
  }
  auto eval = [&](const arma::vec& b, arma::vec* g) { return binned ? (*binned)(b, g) : obj(b, g); };

  if (opt.method == BandwidthMethod::rot || opt.method == BandwidthMethod::dpi) {
    check::require(cat.empty(), "method",
                   std::string(res.method) +
                       " is a rule for continuous columns only; with categorical columns use "
                       "cv_ls, aic or gcv");
    if (opt.method == BandwidthMethod::rot) {
      res.bandwidth = rot_bandwidth(X, opt.kernel);
    } else {
      check::require(d == 1 && opt.degree == 1 && opt.kernel.type == KernelType::gaussian,
                     "method", "dpi is the plug-in rule for 1-D local linear with the Gaussian "
                               "kernel; use cv_ls, aic or gcv otherwise");
      res.bandwidth = arma::vec{dpi_local_linear(X.col(0), y).bandwidth};
    }
    for (std::size_t j = 0; j < d; ++j)
      if (!(res.bandwidth(j) > 0.0) || !std::isfinite(res.bandwidth(j)))
        throw NumericalError("method: the " + res.method + " rule gave no usable bandwidth "
                             "for column " + std::to_string(j + 1) + "; use cv_ls");
    try {
      res.objective = obj(res.bandwidth);
    } catch (const NumericalError&) {
      res.objective = kInf;
    }
    res.n_evals = 1;
    res.converged = true;
    res.message = "closed-form rule; objective is the cv_ls score at the bandwidth";
    res.at_bound.assign(d, 0);
    return res;
  }
  if (opt.kernel.type == KernelType::uniform && !cont.empty() && (d > 1 || opt.grid_size < 2))
    throw InvalidArgument(
        "kernel: the uniform kernel's objective is piecewise constant in the bandwidth (zero "
        "gradient), so it cannot be searched; use epanechnikov or another smooth kernel, or a "
        "single continuous column (searched on the grid)");

  // theta: log h (continuous), lambda (categorical).
  arma::vec lo(d), hi(d);
  for (std::size_t j : cont) {
    lo(j) = std::log(res.lower(j));
    hi(j) = std::log(obj.upper()(j));
  }
  for (std::size_t j : cat) {
    lo(j) = obj.lower()(j);
    hi(j) = obj.upper()(j);
  }
  // The box's lower end: the estimator's floor (raised to five grid spacings when binned),
  // raised again below where the objective is undefined.
  arma::vec box_lower = res.lower;
  auto to_bw = [&](const arma::vec& t) {
    arma::vec b = t;
    for (std::size_t j : cont) b(j) = std::exp(t(j));
    for (std::size_t j = 0; j < d; ++j) b(j) = std::min(std::max(b(j), box_lower(j)), obj.upper()(j));
    return b;
  };
  int evals = 0;
  double best = kInf;
  InterruptGuard guard;
  auto note = [&](double f) {
    ++evals;
    if (f < best) best = f;
    if (guard.poll()) guard.rethrow_if_interrupted();
    if (opt.on_eval) opt.on_eval(evals, best);
  };
  Objective f = [&](const arma::vec& t, arma::vec& g) {
    arma::vec gb;
    double v;
    try {
      v = eval(to_bw(t), &gb);
    } catch (const NumericalError&) {
      v = kInf;
      gb.zeros(d);
    }
    g = gb;
    if (!std::isfinite(v)) g.zeros(d);
    note(v);
    return v;
  };

  // Starting points.
  arma::vec base(d);
  if (!cont.empty()) {
    arma::mat Xc(X.n_rows, cont.size());
    for (std::size_t a = 0; a < cont.size(); ++a) Xc.col(a) = X.col(cont[a]);
    const arma::vec r = rot_bandwidth(Xc, opt.kernel);
    for (std::size_t a = 0; a < cont.size(); ++a)
      base(cont[a]) = std::min(std::max(std::log(r(a)), lo(cont[a])), hi(cont[a]));
  }
  for (std::size_t j : cat) base(j) = 0.5 * (lo(j) + hi(j));
  // Check the objective at each continuous column's floor (the other columns at their start):
  // the floor is a per-column necessary condition for the leave-one-out fits; where the
  // objective is still undefined there (+inf: a compact kernel's joint support, a local-linear
  // design singular in the joint space) the floor is raised, by bisection on log h, to within
  // 1e-3 of the smallest bandwidth where it is defined, so the box's lower end is a bandwidth
  // the estimator accepts.
  if (opt.min_neighbors <= 0 && opt.grid_size >= 0) {
    auto finite_at = [&](std::size_t j, double t) {
      arma::vec b = base;
      for (std::size_t c : cont) b(c) = std::exp(b(c));
      b(j) = std::exp(t);
      double v;
      try {
        v = eval(b, nullptr);
      } catch (const NumericalError&) {
        v = kInf;
      }
      note(v);
      return std::isfinite(v);
    };
    for (std::size_t j : cont) {
      if (finite_at(j, lo(j))) continue;
      double a = lo(j), b = std::max(base(j), lo(j));
      if (!finite_at(j, b)) continue;  // undefined at the start too: leave it to the search
      while (b - a > 1e-3) {
        const double mid = 0.5 * (a + b);
        (finite_at(j, mid) ? b : a) = mid;
      }
      lo(j) = b;
      box_lower(j) = std::exp(b);
    }
    res.lower = box_lower;
  }
  if (!opt.start.is_empty()) {
    check::require(opt.start.n_elem == d && opt.start.is_finite() && arma::all(opt.start >= 0),
                   "start", "needs one finite, non-negative bandwidth per column");
    for (std::size_t j = 0; j < d; ++j) {
      const double t = types[j] == VarType::continuous ? std::log(std::max(opt.start(j), 1e-300))
                                                      : opt.start(j);
      base(j) = std::min(std::max(t, lo(j)), hi(j));
    }
  }
  arma::mat starts;
  std::vector<bool> log_scale(d);
  for (std::size_t j = 0; j < d; ++j) log_scale[j] = types[j] == VarType::continuous;

  // Search economy (one continuous column; see BandwidthSelectOptions::exact_curve). The
  // objective curve's only job is to locate the basins of the exact objective, and the binned
  // objective (binned.hpp; 4001 points, O(G log G) an evaluation against a full
  // cross-validation pass) draws the same curve to about 1e-4 relative. Its local minima are
  // refined on it (with its exact gradient), and those whose binned value is within the
  // binned/exact discrepancy of the best are searched by the exact objective from there: the
  // answer is a local minimum of the exact objective, to the minimiser's tolerance, as with
  // the exact curve, after a few exact evaluations instead of grid_size. Below five grid
  // spacings the binned data cannot resolve the kernel: there the curve is evaluated exactly
  // when the binned curve still falls at its smallest resolved bandwidth (discrete or tightly
  // clustered data), and left unevaluated (NaN) otherwise.
  std::unique_ptr<BinnedCVObjective> guide;
  if (d == 1 && cont.size() == 1 && opt.grid_size >= 2 && !opt.exact_curve && !binned &&
      opt.method == BandwidthMethod::cv_ls && opt.weights.is_empty() &&
      opt.kernel.type != KernelType::uniform && opt.kernel.nonnegative() &&
      obj.n_unique() >= kEconomyMinRows) {
    try {
      guide.reset(new BinnedCVObjective(X, y, opt.degree, opt.kernel, opt.ridge,
                                        kBinnedSelectGrid1D, opt.n_threads));
    } catch (const InvalidArgument&) {
      guide.reset();
    } catch (const NumericalError&) {
      guide.reset();
    }
  }
  auto exact_at = [&](double t) {
    double v;
    try {
      v = eval(arma::vec{std::exp(t)}, nullptr);
    } catch (const NumericalError&) {
      v = kInf;
    }
    note(v);
    return std::isfinite(v) ? v : kInf;
  };
  arma::uvec curve_is_exact;  // per curve point: 1 where curve_values holds the exact objective
  // The searches' stopping tests measure against the objective curve's spread where there is
  // a curve: the runs start at the curve's minima, next to the answer, where the decrease a
  // run achieves is no measure of the objective's scale (MinimizeOptions::f_scale).
  MinimizeOptions mopt = opt.minimize;
  // The spread is the curve's median minus its minimum: robust to the blow-up of the
  // objective at the smallest bandwidths, which the range would let set a loose tolerance.
  auto curve_spread = [](const arma::vec& v) {
    const arma::vec f = v.elem(arma::find_finite(v));
    if (f.n_elem < 2) return 0.0;
    const double s = arma::median(f) - f.min();
    return std::isfinite(s) && s > 0 ? s : 0.0;
  };
  bool economy = false;
  std::vector<std::pair<double, double>> econ_cand;  // economy: (binned value, log h), best first
  if (guide) {
    const std::size_t G = static_cast<std::size_t>(opt.grid_size);
    const std::vector<double> ts = curve_points(lo(0), hi(0), X.col(0).max() - X.col(0).min(),
                                                base(0), G);
    const double t_res = std::log(5.0 * guide->spacing(0));  // the binned objective's floor
    auto guide_f = [&](const arma::vec& t, arma::vec& g) {
      arma::vec gb;
      double v;
      try {
        v = (*guide)(arma::vec{std::exp(t(0))}, &gb);
      } catch (const NumericalError&) {
        v = kInf;
      }
      if (!std::isfinite(v)) {
        g.zeros(1);
        return kInf;
      }
      g = gb;
      if (guard.poll()) guard.rethrow_if_interrupted();
      return v;
    };
    res.curve_grid.set_size(G);
    res.curve_values.set_size(G);
    curve_is_exact.zeros(G);
    std::size_t g0 = G;  // first resolved point
    for (std::size_t g = 0; g < G; ++g) {
      res.curve_grid(g) = std::exp(ts[g]);
      res.curve_values(g) = std::numeric_limits<double>::quiet_NaN();
      if (ts[g] < t_res) continue;
      if (g0 == G) g0 = g;
      arma::vec gr;
      res.curve_values(g) = guide_f(arma::vec{ts[g]}, gr);
    }
    bool any = false;
    for (std::size_t g = g0; g < G; ++g) any = any || std::isfinite(res.curve_values(g));
    if (any) {
      const bool falls = g0 > 0 && (!std::isfinite(res.curve_values(g0)) || g0 + 1 == G ||
                                    !(res.curve_values(g0 + 1) < res.curve_values(g0)));
      if (falls)
        for (std::size_t g = 0; g < g0; ++g) {
          res.curve_values(g) = exact_at(ts[g]);
          curve_is_exact(g) = 1;
        }
      mopt.f_scale = curve_spread(res.curve_values);
      // Candidates: refined on the binned objective (inside its resolved range), or the exact
      // curve's grid point below it.
      std::vector<std::pair<double, double>> cand;  // (value, log h)
      for (std::size_t g : curve_minima(res.curve_values, opt.n_starts)) {
        if (curve_is_exact(g)) {
          cand.emplace_back(res.curve_values(g), ts[g]);
          continue;
        }
        MinimizeResult gr;
        gr.f = kInf;
        const arma::vec glo{std::max(lo(0), t_res)};
        minimize_from_starts(guide_f, arma::mat{ts[g]}, glo, arma::vec{hi(0)}, {true},
                             mopt, gr);
        if (std::isfinite(gr.f)) cand.emplace_back(gr.f, gr.x(0));
        else cand.emplace_back(res.curve_values(g), ts[g]);
      }
      std::sort(cand.begin(), cand.end());
      economy = !cand.empty();
      econ_cand = std::move(cand);
    }
    if (!economy) {
      res.curve_grid.reset();
      res.curve_values.reset();
      curve_is_exact.reset();
    }
  }
  if (economy) {
    // Starts: econ_cand (searched below).
  } else if (d == 1 && cont.size() == 1 && opt.grid_size >= 2) {
    // The objective curve over a log-spaced grid from the guard to four times the
    // normal-reference bandwidth (at most twice the data range; pairs, and so the cost of a
    // compact kernel's evaluation, grow with h); its best local minima start the gradient
    // search, which may leave the grid up to the box's upper end.
    const std::vector<double> st = search_curve(
        [&](double t) {
          double v;
          try {
            v = eval(arma::vec{std::exp(t)}, nullptr);
          } catch (const NumericalError&) {
            v = kInf;
          }
          note(v);
          return v;
        },
        lo(0), hi(0), X.col(0).max() - X.col(0).min(), base(0),
        static_cast<std::size_t>(opt.grid_size), opt.n_starts, res.curve_grid, res.curve_values);
    res.curve_exact = true;
    curve_is_exact.ones(res.curve_values.n_elem);
    mopt.f_scale = curve_spread(res.curve_values);
    if (st.empty()) {
      throw NumericalError(
          "bandwidth: the objective is undefined (+inf) at every bandwidth of the search grid: "
          "some leave-one-out fit has no weight or a singular design; check X for isolated "
          "points or use the Gaussian kernel");
    }
    starts = arma::rowvec(st);
    if (opt.kernel.type == KernelType::uniform) {
      // Piecewise constant: the grid minimum is the answer.
      const arma::uword gb = res.curve_values.index_min();  // the best local minimum
      res.bandwidth = arma::vec{res.curve_grid(gb)};
      res.objective = res.curve_values(gb);
      res.n_evals = evals;
      res.converged = false;
      res.message = "uniform kernel: grid minimum (the objective is piecewise constant)";
      return res;
    }
  } else {
    starts = search_starts(base, lo, hi, log_scale, opt.n_starts, opt.seed);
  }
  // Multistart search. A start where the objective is undefined (+inf: some leave-one-out fit
  // has no weight or a singular local design, common at the normal-reference bandwidth with
  // several columns and few rows) is moved up -- continuous bandwidths doubled, at most 12
  // times and never past the box -- instead of aborting the search; a start that stays
  // undefined is skipped (the error below reports when every start was).
  MinimizeResult mr;
  mr.f = kInf;
  if (economy) {
    // The best binned candidate first; its first exact value says how far the binned
    // objective is from the exact one here, and every other candidate within three times that
    // (and 1e-3 relative) of the best binned value is searched too.
    double first = std::numeric_limits<double>::quiet_NaN();
    Objective f1 = [&](const arma::vec& t, arma::vec& g) {
      const double v = f(t, g);
      if (std::isnan(first)) first = v;
      return v;
    };
    const double vb = econ_cand[0].first;
    // A compact kernel's exact objective is piecewise smooth, kinked where points enter or
    // leave windows; at large n its gradient is noisy at the minimum (n = 10^6: jumps of 1e-7
    // in df/dlog h over 1e-4 in log h), and the polish crawls down decreases of 1e-10 ... 1e-15
    // relative. A step gaining less than 1e-10 of the cv_ls value (whose scale is |f|) ends it
    // (bench/results/nw_threads.md: 7 exact evaluations instead of 17, CV 2e-9 relative higher).
    MinimizeOptions popt = mopt;
    if (opt.kernel.compact() && popt.f_scale > 0.0 && std::isfinite(vb))
      popt.ftol = std::max(popt.ftol, 1e-10 * std::fabs(vb) / popt.f_scale);
    minimize_from_starts(f1, arma::mat{econ_cand[0].second}, lo, hi, log_scale, popt, mr);
    const double margin =
        3.0 * (std::isfinite(first) ? std::fabs(first - vb) : 0.0) + 1e-3 * std::fabs(vb);
    for (std::size_t c = 1; c < econ_cand.size(); ++c)
      if (econ_cand[c].first <= vb + margin)
        minimize_from_starts(f, arma::mat{econ_cand[c].second}, lo, hi, log_scale, popt,
                             mr);
  } else {
    minimize_from_starts(f, starts, lo, hi, log_scale, mopt, mr);
  }
  if (!std::isfinite(mr.f))
    throw NumericalError(
        "bandwidth: the objective is undefined (+inf) at every point the search visited: some "
        "leave-one-out fit has no weight or a singular design; use the Gaussian kernel or "
        "fewer columns");
  res.bandwidth = to_bw(mr.x);
  res.objective = mr.f;
  res.n_evals = evals;
  res.converged = mr.converged;
  res.message = mr.message;
  // The curve's best (exact) point can beat a search that stopped on a plateau.
  if (res.curve_values.n_elem > 0) {
    double vb = kInf;
    arma::uword gb = 0;
    for (arma::uword g = 0; g < res.curve_values.n_elem; ++g)
      if (curve_is_exact(g) && res.curve_values(g) < vb) {
        vb = res.curve_values(g);
        gb = g;
      }
    if (vb < res.objective) {
      res.bandwidth = arma::vec{res.curve_grid(gb)};
      res.objective = vb;
    }
  }
  // The floor itself is a candidate: on discrete data the objective falls, ever more slowly,
  // towards its value at the floor (the column then acts as exact matching, cell means), and
  // the search stops on that plateau when the gradient vanishes. Where the floor is at least
  // as good, it is the answer (and is reported as the box's end below).
  for (std::size_t j : cont) {
    if (res.bandwidth(j) <= box_lower(j) * (1.0 + 1e-9)) continue;
    arma::vec b = res.bandwidth;
    b(j) = box_lower(j);
    double v;
    try {
      v = eval(b, nullptr);
    } catch (const NumericalError&) {
      v = kInf;
    }
    note(v);
    if (v <= res.objective) {
      res.bandwidth = b;
      res.objective = v;
    }
  }
  res.n_evals = evals;
  // Say when the answer sits on the edge of the box: the objective still falls beyond it (for
  // continuous columns at the lower edge: typically discrete data, where the cell means win).
  res.at_bound.assign(d, 0);
  for (std::size_t j = 0; j < d; ++j) {
    const bool at_lo = res.bandwidth(j) <= box_lower(j) * (1.0 + 1e-9);
    const bool at_hi = res.bandwidth(j) >= obj.upper()(j) * (1.0 - 1e-9);
    if (!at_lo && !at_hi) continue;
    res.at_bound[j] = at_lo ? -1 : 1;
    std::ostringstream m;
    m << "; column " << (j + 1) << " is at the " << (at_lo ? "lower" : "upper")
      << " end of the search box";
    if (at_lo && types[j] == VarType::continuous)
      m << (opt.min_neighbors > 0
                ? " (the guard: min_neighbors distinct neighbours within reach of every point)"
                : " (the smallest bandwidth at which every leave-one-out fit exists)");
    else if (at_hi && types[j] == VarType::continuous)
      m << " (100 x the range: the column acts linearly / is smoothed out)";
    res.message += m.str();
  }
  return res;
}
}  // namespace

}  // namespace attnreg
