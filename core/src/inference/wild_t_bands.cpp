// attnreg: uniform bands by the wild bootstrap-t (WildTBands) and the names of the band methods;
// the formulas, their sources and how the draws are generated and batched are in
// core/include/attnreg/inference/diagnostics.hpp and core/README.md ("Uniform bands").
#include "attnreg/inference/diagnostics.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <utility>
#include <vector>

#if defined(__unix__) || defined(__APPLE__)
#include <dlfcn.h>
#endif

#include "attnreg/base/constants.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/base/names.hpp"
#include "attnreg/base/runtime.hpp"
#include "attnreg/detail/diagnostics_checks.hpp"
#include "attnreg/kernels/distinct_rows.hpp"

namespace attnreg {

using detail::output_column;

UniformMethod uniform_method_from_name(const std::string& name, const std::string& arg) {
  using M = UniformMethod;
  return detail::option_from_name<M>(
      name,
      {{"auto", M::automatic}, {"automatic", M::automatic}, {"wild_t", M::wild_t},
       {"wild-t", M::wild_t}, {"gaussian", M::gaussian}},
      arg, "uniform band method",
      "'wild_t' (wild bootstrap-t, the standard errors re-estimated in every draw), 'gaussian' "
      "(Gaussian sup-t of the estimated covariance, as binsreg and lpdensity) or 'auto'");
}

const char* uniform_method_name(UniformMethod m) {
  switch (m) {
    case UniformMethod::automatic: return "auto";
    case UniformMethod::wild_t: return "wild_t";
    case UniformMethod::gaussian: return "gaussian";
  }
  return "?";
}

namespace {
// A threaded OpenBLAS splits a matrix product's rows and columns over its threads, and the
// edge tiles of that split run other micro-kernels whose sums round differently, so dgemm's
// last bits depend on its thread count (OPENBLAS_NUM_THREADS / OMP_NUM_THREADS at load time).
// The draws' products therefore run with one BLAS thread (fixed blocking): the critical values
// then depend on the seed only. Found at run time (the library the process loaded); with a
// BLAS without these entry points (reference BLAS, single-threaded) nothing is changed.
class SingleThreadedBlas {
 public:
  SingleThreadedBlas() {
#if defined(__unix__) || defined(__APPLE__)
    set_ = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
    auto get = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
    if (set_ && get) {
      saved_ = get();
      set_(1);
    } else {
      set_ = nullptr;
    }
#endif
  }
  ~SingleThreadedBlas() {
    if (set_) set_(saved_);
  }
  SingleThreadedBlas(const SingleThreadedBlas&) = delete;
  SingleThreadedBlas& operator=(const SingleThreadedBlas&) = delete;

 private:
  void (*set_)(int) = nullptr;
  int saved_ = 1;
};
}  // namespace

// The wild bootstrap-t over the distinct training rows. Every smoother of the fit has
// W(x, i) = share_i Wg(x, g(i)) (TrainingGroups), so with u_g = sum_{i in g} share_i z_i:
// W z = Wg u, the refit at the distinct rows is H u (H: G x G), and
// sum_i W(x, i)^2 omega_i = Wg^2 * (sum_{i in g} share_i^2 omega_i).
WildTBands::WildTBands(const LocalPolynomial& model, VarianceKind kind,
                       const std::vector<long long>& cluster, arma::uword output,
                       double sigma2_df)
    : kind_(kind), sigma2_df_(sigma2_df) {
  const SingleThreadedBlas one_thread;  // H and H yhat, as the draws' products
  check::require(model.is_fitted(), "model", "is not fitted; call fit() first");
  check::require(kind != VarianceKind::nn && kind != VarianceKind::local, "uniform_method",
                 "'wild_t' does not support the nearest-neighbour ('nn') or the local "
                 "residual variance ('local'); use uniform_method 'gaussian' with them, or a "
                 "heteroskedasticity-robust kind ('hc3')");
  groups_ = training_groups(model);
  const arma::uword G = groups_.X.n_rows;
  gstart_.assign(G + 1, 0);
  for (arma::uword i = 0; i < groups_.group_of.n_elem; ++i) ++gstart_[groups_.group_of(i) + 1];
  for (arma::uword g = 0; g < G; ++g) gstart_[g + 1] += gstart_[g];
  order_.resize(groups_.group_of.n_elem);
  {
    std::vector<arma::uword> next(gstart_.begin(), gstart_.end() - 1);
    for (arma::uword i = 0; i < groups_.group_of.n_elem; ++i)
      order_[next[groups_.group_of(i)]++] = i;
  }
  fit_ = output_column(model.fitted(), output, "uniform bands");
  e_ = output_column(model.residuals(), output, "uniform bands");
  const arma::uword n = e_.n_elem;
  const double dn = static_cast<double>(n), trL = model.effective_df();
  c_.ones(n);
  switch (kind) {
    case VarianceKind::hc1:
      check::require(dn - trL > 0, "kind", "hc1 needs n > tr L; use hc0 or a larger bandwidth");
      c_.fill(dn / (dn - trL));
      break;
    case VarianceKind::hc2:
    case VarianceKind::hc3: {
      const arma::vec& lev = model.leverage();
      for (arma::uword i = 0; i < n; ++i) {
        const double one_m = 1 - lev(i);
        check::require(one_m > 1e-12, "kind", "a leverage is >= 1; use 'hc0'");
        c_(i) = kind == VarianceKind::hc2 ? 1 / one_m : 1 / (one_m * one_m);
      }
      break;
    }
    case VarianceKind::homoskedastic:
      check::require(sigma2_df > 0, "kind",
                     "the homoskedastic variance needs positive residual degrees of freedom");
      break;
    case VarianceKind::cr1: {
      check::require(cluster.size() == n, "cluster",
                     "needs one cluster id per training row (" + std::to_string(n) + "), got " +
                         std::to_string(cluster.size()));
      // number the clusters in order of first appearance (the multiplier rows)
      std::map<long long, arma::uword> first;
      cl_.resize(n);
      for (arma::uword i = 0; i < n; ++i) {
        auto it = first.emplace(cluster[i], first.size()).first;
        cl_[i] = it->second;
      }
      n_clusters_ = first.size();
      check::require(n_clusters_ >= 2, "cluster", "needs at least two distinct clusters");
      const double Gc = static_cast<double>(n_clusters_);
      cr_adj_ = (Gc / (Gc - 1)) * ((dn - 1) / (dn - trL));
      break;
    }
    default: break;
  }
  // The rows of H (the attention weights of the distinct rows summed over each group,
  // LocalPolynomial::distinct_attention_weights) are made per call for the groups the
  // smoothers weigh (refit_rows); the homoskedastic kind's sigma*^2 needs all of them.
  check::require(model.n_distinct() == G, "model", "distinct training rows disagree");
  model_ = &model;
  fs_.zeros(G);
  for (arma::uword i = 0; i < n; ++i) fs_(groups_.group_of(i)) += groups_.share(i) * fit_(i);
  // the sample's per-group share_i^2 omega_i: which points have a positive standard error
  og0_.zeros(G);
  const double s2 = kind == VarianceKind::homoskedastic ? arma::dot(e_, e_) / sigma2_df : 0.0;
  for (arma::uword i = 0; i < n; ++i) {
    const double s = groups_.share(i);
    og0_(groups_.group_of(i)) +=
        s * s * (kind == VarianceKind::homoskedastic ? s2 : c_(i) * e_(i) * e_(i));
  }
  e_s_.resize(n);
  sh_s_.resize(n);
  s2c_s_.resize(n);
  fit_s_.resize(n);
  vrow_s_.resize(n);
  for (arma::uword k = 0; k < n; ++k) {
    const arma::uword i = order_[k];
    const double s = groups_.share(i);
    e_s_[k] = e_(i);
    sh_s_[k] = s;
    s2c_s_[k] = s * s * c_(i);
    fit_s_[k] = fit_(i);
    vrow_s_[k] = kind == VarianceKind::cr1 ? cl_[i] : i;
  }
}

arma::uword WildTBands::n_multipliers() const {
  return kind_ == VarianceKind::cr1 ? n_clusters_ : e_.n_elem;
}

std::vector<WildTBands::Smoother> WildTBands::prepare(
    const std::vector<const arma::mat*>& Ws) const {
  const arma::uword n = e_.n_elem;
  const bool cr = kind_ == VarianceKind::cr1;
  std::vector<Smoother> out(Ws.size());
  for (std::size_t w = 0; w < Ws.size(); ++w) {
    const arma::mat& W = *Ws[w];
    check::require(W.n_cols == n, "W", "needs one column per training row");
    Smoother& S = out[w];
    S.W = &W;
    S.Wg = group_sums(W, groups_);
    if (!cr) S.Wg2 = arma::square(S.Wg);
    S.sparse = !cr && static_cast<double>(arma::accu(S.Wg != 0)) <= 0.25 * S.Wg.n_elem;
    if (S.sparse) S.rows.append(S.Wg);
    // the points with a positive standard error in the sample (as the bands' se)
    arma::vec se2;
    if (cr) {
      arma::mat C(W.n_rows, n_clusters_, arma::fill::zeros);
      for (arma::uword i = 0; i < n; ++i) C.col(cl_[i]) += W.col(i) * e_(i);
      se2 = arma::sum(arma::square(C), 1);
    } else {
      se2 = S.Wg2 * og0_;
    }
    S.keep = arma::find(se2 > 0);
  }
  return out;
}

void WildTBands::SparseRows::append(const arma::mat& M) {
  for (arma::uword k = 0; k < M.n_rows; ++k) {
    for (arma::uword g = 0; g < M.n_cols; ++g)
      if (M(k, g) != 0) {
        col.push_back(g);
        val.push_back(M(k, g));
      }
    ptr.push_back(val.size());
  }
}

double WildTBands::SparseRows::dot(std::size_t k, const double* u) const {
  double f = 0;
  for (std::size_t t = ptr[k]; t < ptr[k + 1]; ++t) f += val[t] * u[col[t]];
  return f;
}

// Only the groups with a weight in some smoother enter the standard errors (and, for cr1,
// the cluster sums), so only their refits H u are needed: |A| x G rows of H instead of G x G,
// which lets the bands scale with the windows (compact kernels) rather than with n^2.
WildTBands::Refit WildTBands::refit_rows(const std::vector<Smoother>& S) const {
  const arma::uword G = groups_.X.n_rows;
  Refit R;
  if (kind_ == VarianceKind::homoskedastic) {
    R.groups = arma::regspace<arma::uvec>(0, G - 1);
  } else {
    std::vector<char> used(G, 0);
    for (const Smoother& s : S)
      for (arma::uword g = 0; g < G; ++g)
        if (!used[g] && arma::any(s.Wg.col(g) != 0)) used[g] = 1;
    std::vector<arma::uword> a;
    for (arma::uword g = 0; g < G; ++g)
      if (used[g]) a.push_back(g);
    R.groups = arma::uvec(a);
  }
  // H(A, :) in blocks of rows: as compressed rows when the first block is sparse (compact
  // kernels: a window's rows), else dense for dgemm (more than a quarter nonzero)
  const arma::uword nA = R.groups.n_elem, blk = 256;
  const std::string fix = "; use uniform_method 'gaussian' for this fit";
  const std::string what =
      "'wild_t' refits every draw through the hat matrix rows of the " + std::to_string(nA) +
      " distinct training rows " +
      (kind_ == VarianceKind::homoskedastic ? "(the homoskedastic variance needs all of them)"
                                            : "inside the evaluation points' windows");
  bool dense = false;
  for (arma::uword a0 = 0; a0 < nA; a0 += blk) {
    const arma::uword a1 = std::min(nA, a0 + blk);
    const arma::mat Hb =
        model_->distinct_attention_weights(groups_.X.rows(R.groups.subvec(a0, a1 - 1)));
    if (a0 == 0 && arma::accu(Hb != 0) > 0.25 * static_cast<double>(Hb.n_elem)) {
      dense = true;
      if (static_cast<double>(nA) * static_cast<double>(G) > 4e8)
        throw WildTTooLarge("uniform_method: " + what + " over " + std::to_string(G) +
                            " columns (" + std::to_string(static_cast<double>(nA) * G * 8 / 1e9) +
                            " GB)" + fix);
      R.H.set_size(nA, G);
    }
    if (dense) {
      R.H.rows(a0, a1 - 1) = Hb;
      continue;
    }
    R.rows.append(Hb);
    if (static_cast<double>(R.rows.val.size()) > 2e8)
      throw WildTTooLarge("uniform_method: " + what + ", more than 2e8 nonzero weights (3.2 GB)" +
                          fix);
  }
  if (dense) {
    R.HF = R.H * fs_;
  } else {
    R.HF.set_size(nA);
    for (arma::uword a = 0; a < nA; ++a) R.HF(a) = R.rows.dot(a, fs_.memptr());
  }
  return R;
}

arma::mat WildTBands::max_statistics(const std::vector<const arma::mat*>& Ws,
                                     const arma::mat& V) const {
  check::require(V.n_rows == n_multipliers(), "multipliers",
                 "needs " + std::to_string(n_multipliers()) + " rows (one per " +
                     (kind_ == VarianceKind::cr1 ? "cluster" : "training row") + "), got " +
                     std::to_string(V.n_rows));
  const SingleThreadedBlas one_thread;
  const std::vector<Smoother> S = prepare(Ws);
  const Refit R = refit_rows(S);
  arma::mat out(V.n_cols, Ws.size());
  draw_statistics(S, R, V, out, 0);
  return out;
}

void WildTBands::draw_statistics(const std::vector<Smoother>& S, const Refit& R,
                                 const arma::mat& V, arma::mat& out, arma::uword r0) const {
  const arma::uword n = e_.n_elem, G = groups_.X.n_rows, r = V.n_cols;
  const bool cr = kind_ == VarianceKind::cr1;
  // The passes over the observations run group by group (the rows sorted by group, ascending
  // within a group, so every sum adds in the same order as a pass over i would).
  // The bootstrap noise z = e v and its group sums u:
  arma::mat U(G, r);
  for (arma::uword j = 0; j < r; ++j) {
    const double* v = V.colptr(j);
    for (arma::uword g = 0; g < G; ++g) {
      double u = 0;
      for (arma::uword k = gstart_[g]; k < gstart_[g + 1]; ++k)
        u += sh_s_[k] * (e_s_[k] * v[vrow_s_[k]]);
      U(g, j) = u;
    }
  }
  // the refit of the noise at the groups the smoothers weigh: dgemm, or the compressed rows
  // (each entry summed in column order, as the dense product's definition)
  arma::mat Fs;
  if (!R.H.is_empty()) {
    Fs = R.H * U;
  } else {
    Fs.set_size(R.groups.n_elem, r);
    for (arma::uword j = 0; j < r; ++j)
      for (arma::uword a = 0; a < R.groups.n_elem; ++a) Fs(a, j) = R.rows.dot(a, U.colptr(j));
  }
  // the re-projected residuals e* = y* - H y* (kept, in the sorted order, for cr1 only) and,
  // except for cr1, the per-group sums of share_i^2 omega*_i (zero where no smoother weighs)
  arma::mat Og, Z;
  arma::vec s2;  // homoskedastic: sigma*^2 per draw
  if (cr) Z.zeros(n, r); else Og.zeros(G, r);
  if (kind_ == VarianceKind::homoskedastic) s2.zeros(r);
  for (arma::uword j = 0; j < r; ++j) {
    const double* v = V.colptr(j);
    double* z = cr ? Z.colptr(j) : nullptr;
    double ss = 0;
    for (arma::uword a = 0; a < R.groups.n_elem; ++a) {
      const arma::uword g = R.groups(a);
      const double hg = R.HF(a) + Fs(a, j);
      double og = 0;
      for (arma::uword k = gstart_[g]; k < gstart_[g + 1]; ++k) {
        const double es = fit_s_[k] + e_s_[k] * v[vrow_s_[k]] - hg;
        if (cr) z[k] = es;
        og += s2c_s_[k] * es * es;
        ss += es * es;
      }
      if (!cr) Og(g, j) = og;
    }
    if (kind_ == VarianceKind::homoskedastic) s2(j) = ss / sigma2_df_;
  }
  if (kind_ == VarianceKind::homoskedastic) {
    arma::vec sh2(G, arma::fill::zeros);
    for (arma::uword i = 0; i < n; ++i)
      sh2(groups_.group_of(i)) += groups_.share(i) * groups_.share(i);
    Og = sh2 * s2.t();
  }
  for (std::size_t w = 0; w < S.size(); ++w) {
    const arma::mat& W = *S[w].W;
    arma::mat N, Var;  // W z and the variances
    if (S[w].sparse) {
      // compressed rows: each entry summed in column order (the windows' groups only)
      const SparseRows& s = S[w].rows;
      const arma::uword m = S[w].Wg.n_rows;
      N.set_size(m, r);
      Var.set_size(m, r);
      for (arma::uword j = 0; j < r; ++j) {
        const double* o = Og.colptr(j);
        for (arma::uword k = 0; k < m; ++k) {
          N(k, j) = s.dot(k, U.colptr(j));
          double b = 0;
          for (std::size_t t = s.ptr[k]; t < s.ptr[k + 1]; ++t)
            b += s.val[t] * s.val[t] * o[s.col[t]];
          Var(k, j) = b;
        }
      }
    } else if (cr) {
      N = S[w].Wg * U;
      Var.zeros(W.n_rows, r);
      arma::mat C(W.n_rows, n_clusters_);
      for (arma::uword j = 0; j < r; ++j) {
        C.zeros();
        for (arma::uword a = 0; a < R.groups.n_elem; ++a)  // rows outside A: W and Z are 0
          for (arma::uword k = gstart_[R.groups(a)]; k < gstart_[R.groups(a) + 1]; ++k)
            C.col(cl_[order_[k]]) += W.col(order_[k]) * Z(k, j);
        Var.col(j) = cr_adj_ * arma::sum(arma::square(C), 1);
      }
    } else {
      N = S[w].Wg * U;
      Var = S[w].Wg2 * Og;
    }
    const arma::uvec& keep = S[w].keep;
    for (arma::uword j = 0; j < r; ++j) {
      double mx = 0;
      for (arma::uword k : keep) {
        const double num = std::abs(N(k, j)), vr = Var(k, j);
        const double t = vr > 0 ? num / std::sqrt(vr) : (num > 0 ? arma::datum::inf : 0.0);
        mx = std::max(mx, t);
      }
      out(r0 + j, w) = mx;
    }
  }
}

arma::vec WildTBands::critical_values(const std::vector<const arma::mat*>& Ws, double level,
                                      int replications, std::uint64_t seed) const {
  check::require(std::isfinite(level) && level > 0 && level < 1, "level",
                 "is a fraction: 0.95 for a 95% interval");
  check::require(replications >= 100, "replications",
                 "must be at least 100 (e.g. 2000), got " + std::to_string(replications));
  const arma::uword R = static_cast<arma::uword>(replications), nm = n_multipliers();
  detail::RademacherStream rng(seed);
  arma::mat T(R, Ws.size());
  const SingleThreadedBlas one_thread;
  const std::vector<Smoother> S = prepare(Ws);
  const Refit Rf = refit_rows(S);
  const arma::uword chunk = 128;
  arma::mat V;
  for (arma::uword r0 = 0; r0 < R; r0 += chunk) {
    const arma::uword nc = std::min(chunk, R - r0);
    V.set_size(nm, nc);
    rng.fill(V.memptr(), V.n_elem);
    draw_statistics(S, Rf, V, T, r0);
  }
  const arma::uword k = static_cast<arma::uword>(std::ceil(level * static_cast<double>(R)));
  arma::vec crit(Ws.size());
  for (std::size_t w = 0; w < Ws.size(); ++w) {
    const arma::vec t = arma::sort(T.col(w));
    crit(w) = t(std::min(std::max<arma::uword>(k, 1), R) - 1);
  }
  return crit;
}

}  // namespace attnreg
