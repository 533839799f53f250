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
  check::require(static_cast<double>(G) * static_cast<double>(G) <= 4e8, "uniform_method",
                 "'wild_t' refits every draw through the hat matrix of the " +
                     std::to_string(G) + " distinct training rows (" +
                     std::to_string(static_cast<double>(G) * G * 8 / 1e9) +
                     " GB); use uniform_method 'gaussian' for this fit");
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
  // H over the distinct rows: the attention weights of the distinct rows summed over each
  // group, computed over the distinct rows directly (LocalPolynomial::distinct_attention_weights)
  check::require(model.n_distinct() == G, "model", "distinct training rows disagree");
  H_ = model.distinct_attention_weights(groups_.X);
  arma::vec fs(G, arma::fill::zeros);
  for (arma::uword i = 0; i < n; ++i) fs(groups_.group_of(i)) += groups_.share(i) * fit_(i);
  HF_ = H_ * fs;
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

arma::mat WildTBands::max_statistics(const std::vector<const arma::mat*>& Ws,
                                     const arma::mat& V) const {
  check::require(V.n_rows == n_multipliers(), "multipliers",
                 "needs " + std::to_string(n_multipliers()) + " rows (one per " +
                     (kind_ == VarianceKind::cr1 ? "cluster" : "training row") + "), got " +
                     std::to_string(V.n_rows));
  const SingleThreadedBlas one_thread;
  const std::vector<Smoother> S = prepare(Ws);
  arma::mat out(V.n_cols, Ws.size());
  draw_statistics(S, V, out, 0);
  return out;
}

void WildTBands::draw_statistics(const std::vector<Smoother>& S, const arma::mat& V,
                                 arma::mat& out, arma::uword r0) const {
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
  const arma::mat Fs = H_ * U;  // the refit of the noise at the distinct rows
  // the re-projected residuals e* = y* - H y* (kept, in the sorted order, for cr1 only) and,
  // except for cr1, the per-group sums of share_i^2 omega*_i
  arma::mat Og, Z;
  arma::vec s2;  // homoskedastic: sigma*^2 per draw
  if (cr) Z.set_size(n, r); else Og.set_size(G, r);
  if (kind_ == VarianceKind::homoskedastic) s2.zeros(r);
  for (arma::uword j = 0; j < r; ++j) {
    const double* v = V.colptr(j);
    double* z = cr ? Z.colptr(j) : nullptr;
    double ss = 0;
    for (arma::uword g = 0; g < G; ++g) {
      const double hg = HF_(g) + Fs(g, j);
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
    const arma::mat N = S[w].Wg * U;  // W z
    arma::mat Var;
    if (cr) {
      Var.zeros(W.n_rows, r);
      arma::mat C(W.n_rows, n_clusters_);
      for (arma::uword j = 0; j < r; ++j) {
        C.zeros();
        for (arma::uword k = 0; k < n; ++k) C.col(cl_[order_[k]]) += W.col(order_[k]) * Z(k, j);
        Var.col(j) = cr_adj_ * arma::sum(arma::square(C), 1);
      }
    } else {
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
  const arma::uword chunk = 128;
  arma::mat V;
  for (arma::uword r0 = 0; r0 < R; r0 += chunk) {
    const arma::uword nc = std::min(chunk, R - r0);
    V.set_size(nm, nc);
    rng.fill(V.memptr(), V.n_elem);
    draw_statistics(S, V, T, r0);
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
