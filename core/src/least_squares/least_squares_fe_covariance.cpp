// Least squares with absorbed fixed effects: covariances and inference.
#include "attnreg/least_squares/least_squares_fe.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>

#include "attnreg/base/error.hpp"
#include "attnreg/solve/lapack.hpp"
#include "attnreg/base/runtime.hpp"
#include "attnreg/detail/least_squares_fe_internal.hpp"
#include "attnreg/detail/least_squares_internal.hpp"
#include "attnreg/least_squares/cluster_inference.hpp"

namespace attnreg {

using namespace fe_detail;

namespace {
// CR2 (Bell and McCaffrey 2002) of an absorbed fit is exact only when every level of every
// absorbed factor lies within one cluster: then the fixed-effect block of the dummy design's
// hat matrix lives inside the cluster blocks, the residuals and the within-transformed
// regressors are orthogonal to it, and the pseudo-inverse square roots (I - H_gg)^{+1/2} of the
// dummy-variable fit act on them as those of the within fit do (Pustejovsky and Tipton 2018,
// JBES 36(4), Theorem 2). Otherwise it refuses. Malformed clusters are left to the inner fit.
void require_cr2_nested(const Factors& f, const arma::umat& clusters) {
  if (clusters.n_cols != 1 || clusters.n_rows != f.codes.n_rows) return;
  for (arma::uword j = 0; j < f.n_factors(); ++j) {
    if (!nested_in_clusters(f, j, clusters.col(0))) {
      std::ostringstream msg;
      msg << "cov_type: CR2 (Bell-McCaffrey) with absorbed fixed effects is computed only when "
          << "every absorbed factor is nested in the clusters (each level within one cluster); "
          << "absorbed factor " << j + 1 << " is not. Use CR1 (\"cluster\") or CR0, or put "
          << "that factor in X as dummy columns";
      throw InvalidArgument(msg.str());
    }
  }
}
// HC2/HC3: the rows whose full leverage h_inner + h_dummies (per copy under frequency weights)
// is one to 1e-10, which covariance() leaves out (a singleton level, or a row a regressor fits
// exactly): the count Inference::n_leverage_one reports.
arma::uword leverage_one_rows(const Factors& f, const arma::vec& w, const arma::vec& h_inner,
                              bool freq) {
  arma::vec h;
  if (f.n_factors() == 1) {
    arma::vec wsum(f.n_levels[0], arma::fill::zeros);
    for (arma::uword i = 0; i < w.n_elem; ++i) wsum(f.codes(i, 0)) += w(i);
    h.set_size(w.n_elem);
    for (arma::uword i = 0; i < w.n_elem; ++i) h(i) = w(i) / wsum(f.codes(i, 0));
  } else {
    h = dummy_leverage(f, w);
  }
  if (!h_inner.is_empty()) h += h_inner;
  arma::uword m = 0;
  for (arma::uword i = 0; i < h.n_elem; ++i) {
    if (!(1.0 - (freq ? h(i) / w(i) : h(i)) > 1e-10)) ++m;
  }
  return m;
}
}  // namespace

arma::mat AbsorbedOLS::std_errors(const CovOptions& cov, Inference* fix) const {
  require_fitted("std_errors");
  const arma::uword p = coef_.n_rows, k = coef_.n_cols;
  arma::mat se(p, k);
  se.fill(kNaN);
  if (!inner_fitted_ || rank_ == 0) return se;
  CovOptions inner_cov;
  const double factor = inner_scaling(cov, inner_cov);
  if (cov.type != CovType::HC2 && cov.type != CovType::HC3 && !frequency_hc(cov) &&
      !(cov.type == CovType::CR3 && std::isnan(factor))) {
    // The inner fit computes its standard errors in scaled units (no under- or overflow at
    // extreme scales of X or y); a covariance's diagonal would underflow first.
    // Two-way clustered: the inner covariance is eigenvalue-fixed when indefinite (Cameron,
    // Gelbach and Miller 2011, sec. 2.3); the positive factor commutes with the fix.
    const arma::mat si = inner_.std_errors(inner_cov, fix);
    se.rows(kept_columns()) = si * std::sqrt(factor);
    return se;
  }
  for (arma::uword c = 0; c < k; ++c) {
    const arma::mat V = covariance(cov, c);
    arma::vec d = V.diag();
    for (arma::uword j = 0; j < p; ++j) se(j, c) = d(j) >= 0 ? std::sqrt(d(j)) : kNaN;
  }
  return se;
}

bool AbsorbedOLS::frequency_hc(const CovOptions& cov) const {
  return opt_.frequency_weights && weighted_ &&
         (cov.type == CovType::HC0 || cov.type == CovType::HC1 || cov.type == CovType::HC2 ||
          cov.type == CovType::HC3);
}

double AbsorbedOLS::inner_scaling(const CovOptions& cov, CovOptions& inner) const {
  // The covariance types that are the inner fit's (on sqrt(w) M_D y, sqrt(w) M_D X) times a
  // factor: the factor, with the inner fit's own covariance options in `inner`.
  const double df = df_residual();
  const double n = static_cast<double>(y_.n_rows);
  const double n_eff = n_effective();
  const double inner_df = n - static_cast<double>(rank_);
  inner = cov;
  // Singleton rows are zero rows of the inner fit: in the cluster of a kept row they change
  // nothing, and only clusters with kept rows count.
  inner.clusters = kept_clusters(cov.clusters);
  switch (cov.type) {
    case CovType::Classical:
      return df > 0 && inner_df > 0 ? inner_df / df : kNaN;
    case CovType::HC0:
      return 1.0;
    case CovType::HC1:
      inner.type = CovType::HC0;
      return df > 0 ? n_eff / df : kNaN;
    case CovType::HAC:
      inner.hac_adjust = false;
      return cov.hac_adjust ? (df > 0 ? n_eff / df : kNaN) : 1.0;
    case CovType::CR0:
      // The inner fit's scores are sqrt(w_i) (M_D x)_i times sqrt(w_i) e_i: the weighted
      // within-transformed scores, summed by cluster.
      return 1.0;
    case CovType::CR1:
      // Stata's small-sample factor G/(G-1) (N-1)/(N-K) with G the fewest clusters over the
      // dimensions and K as options().ssc says (default: rank + the absorbed parameters that
      // are not nested in a cluster, plus one per nested factor; fixest's ssc(), reghdfe).
      inner.type = CovType::CR0;
      return cluster_factor(cov);
    case CovType::CR2:
      require_cr2_nested(f_, cov.clusters);
      return 1.0;
    case CovType::CR3: {
      // Every factor nested in the clusters: leaving a cluster out removes its levels and
      // leaves the other rows' M_D X as they are, so the inner fit's jackknife is the one of
      // the dummy-variable fit. One factor not nested: cr3_one_factor (NaN here).
      bool nested = cov.clusters.n_cols == 1 && cov.clusters.n_rows == f_.codes.n_rows;
      for (arma::uword j = 0; j < f_.n_factors() && nested; ++j) {
        nested = nested_in_clusters(f_, j, cov.clusters.col(0));
      }
      if (nested || cov.clusters.n_cols != 1 || cov.clusters.n_rows != f_.codes.n_rows) {
        return 1.0;  // malformed or two-way clusters: the inner fit's message
      }
      if (f_.n_factors() == 1) return kNaN;
      throw InvalidArgument(
          "cov_type: CR3 with two or more absorbed factors is computed only when every factor "
          "is nested in the clusters (each level within one cluster); use CR1, or put the "
          "factors that are not nested in X as dummy columns");
    }
    default:
      return kNaN;  // HC2, HC3: not a scaling of the inner fit's covariance
  }
}

arma::mat AbsorbedOLS::covariance(const CovOptions& cov, arma::uword output) const {
  require_fitted("covariance");
  check::require(output < y_.n_cols, "output",
                 "is out of range (the model has " + std::to_string(y_.n_cols) + " outputs)");
  const arma::uword p = coef_.n_rows;
  arma::mat V(p, p);
  V.fill(kNaN);
  if (!inner_fitted_ || rank_ == 0) return V;
  const arma::uvec kept = kept_columns();
  arma::mat Vk;
  CovOptions inner_cov;
  const double factor = inner_scaling(cov, inner_cov);
  // Frequency weights: row i stands for w_i copies, each with score x~_i e~_i and leverage
  // h_i / w_i, so the HC meats are not the inner (analytic) fit's: explicit branch below.
  const bool freq_hc = frequency_hc(cov);
  switch (freq_hc ? CovType::HC3 : cov.type) {
    case CovType::Classical:
    case CovType::HC0:
    case CovType::HC1:
    case CovType::HAC:
    case CovType::CR0:
    case CovType::CR1:
    case CovType::CR2:  // nested factors only (inner_scaling refuses the others)
      Vk = inner_.covariance(inner_cov, output) * factor;
      break;
    case CovType::CR3:
      Vk = std::isnan(factor) ? cr3_one_factor(cov, output)
                              : arma::mat(inner_.covariance(inner_cov, output) * factor);
      break;
    case CovType::HC2:
    case CovType::HC3: {
      // Full leverage h_i = h_inner_i + h_D_i (the dummies' leverage: w_i / W_g for one
      // factor; dummy_leverage for more); sandwich on the transformed, scaled data.
      // (HC0 and HC1 under frequency weights come here too and need no leverage.)
      const bool need_h = cov.type == CovType::HC2 || cov.type == CovType::HC3;
      arma::vec h_dummy(w_.n_elem, arma::fill::zeros), h_inner(w_.n_elem, arma::fill::zeros);
      if (need_h && f_.n_factors() == 1) {
        arma::vec wsum(f_.n_levels[0], arma::fill::zeros);
        for (arma::uword i = 0; i < w_.n_elem; ++i) wsum(f_.codes(i, 0)) += w_(i);
        for (arma::uword i = 0; i < w_.n_elem; ++i) h_dummy(i) = w_(i) / wsum(f_.codes(i, 0));
      } else if (need_h) {
        h_dummy = dummy_leverage(f_, w_);
      }
      if (need_h) h_inner = inner_.hat_diagonal();
      const arma::mat& B = inner_.unscaled_covariance();  // (Xs'Xs)^{-1}, NaN where aliased
      const std::vector<bool> al = inner_.aliased();
      std::vector<arma::uword> ok;
      for (arma::uword j = 0; j < al.size(); ++j) {
        if (!al[j]) ok.push_back(j);
      }
      const arma::uvec okv(ok);
      // sqrt(w) M_D X on the kept columns (one exact sweep: one factor).
      const WithinResult wx = within_transform(arma::mat(X_.cols(kept)), f_, w_, opt_);
      arma::mat Xs = wx.x.cols(okv);
      Xs.each_col() %= arma::sqrt(w_);
      arma::vec es = inner_.residuals().col(output);
      arma::vec s(es.n_elem);
      for (arma::uword i = 0; i < es.n_elem; ++i) {
        double h = h_inner(i) + h_dummy(i);
        double ei = es(i);
        if (freq_hc) {  // per copy: leverage h_i / w_i; the meat sums w_i copies of x~ e~
          h /= w_(i);
          ei /= std::sqrt(w_(i));
        }
        const double om = 1.0 - h;
        if (cov.type == CovType::HC0 || cov.type == CovType::HC1) {
          s(i) = ei;
          continue;
        }
        // h = 1 for a row the dummies fit exactly (a singleton level): its transformed row and
        // residual are 0 up to rounding and it adds nothing to the meat (0/0 taken as 0).
        s(i) = om > 1e-10 ? ei / (cov.type == CovType::HC2 ? std::sqrt(om) : om) : 0.0;
      }
      const arma::mat Z = Xs.each_col() % s;
      const arma::mat Bk = B.submat(okv, okv);
      arma::mat Vo = Bk * (Z.t() * Z) * Bk;
      if (cov.type == CovType::HC1) Vo *= factor;  // N / (N - K)
      Vk.set_size(al.size(), al.size());
      Vk.fill(kNaN);
      Vk.submat(okv, okv) = Vo;
      break;
    }
  }
  V.submat(kept, kept) = Vk;
  return V;
}

Inference AbsorbedOLS::inference(const CovOptions& cov) const {
  require_fitted("inference");
  Inference out;
  out.cov_type = cov.type;
  out.maxlags = cov.type == CovType::HAC ? hac_lags(cov.maxlags, y_.n_rows) : 0;
  out.df_residual = df_residual();
  out.df_inference = out.df_residual;
  if (is_cluster_cov(cov.type)) {
    // p-values from Student t with G - 1 degrees of freedom (G the fewest clusters), as Stata.
    double G = 0;
    const arma::umat kc = kept_clusters(cov.clusters);
    for (arma::uword d = 0; d < kc.n_cols; ++d) {
      arma::uword g = 0;
      dense_cluster_codes(kc.col(d), g);
      out.n_clusters.push_back(g);
      G = d == 0 ? static_cast<double>(g) : std::min(G, static_cast<double>(g));
    }
    out.df_inference = G - 1.0;
  }
  out.estimate = coef_;
  out.std_error = std_errors(cov, &out);
  if ((cov.type == CovType::HC2 || cov.type == CovType::HC3) && inner_fitted_ && rank_ > 0) {
    out.n_leverage_one = leverage_one_rows(f_, w_, inner_.hat_diagonal(), frequency_hc(cov));
  }
  ls_detail::t_tests(out);
  out.r_squared = r_squared();
  out.adj_r_squared = adj_r_squared();
  out.sigma = arma::sqrt(sigma2());
  return out;
}

double AbsorbedOLS::cluster_factor(const CovOptions& cov) const {
  const arma::umat kc = kept_clusters(cov.clusters);
  double G = 0;
  for (arma::uword d = 0; d < kc.n_cols; ++d) {
    arma::uword gc = 0;
    dense_cluster_codes(kc.col(d), gc);
    const double g = static_cast<double>(gc);
    G = d == 0 ? g : std::min(G, g);
  }
  double K = static_cast<double>(rank_);
  switch (opt_.ssc.k_fixef) {
    case FixefK::None: break;
    case FixefK::Full: K += static_cast<double>(df_.df_absorbed()); break;
    case FixefK::Nonnested:
      K += n_singletons_ > 0
               ? absorbed_df_clustered(kept_factors(), df_, [&] {
                   arma::umat c(kc.n_rows - n_singletons_, kc.n_cols);
                   arma::uword r = 0;
                   for (arma::uword i = 0; i < kc.n_rows; ++i) {
                     if (!singleton_[i]) c.row(r++) = kc.row(i);
                   }
                   return c;
                 }())
               : absorbed_df_clustered(f_, df_, kc);
      break;
  }
  return cr1_factor(n_effective(), K, G, opt_.ssc);
}

arma::mat AbsorbedOLS::cr3_one_factor(const CovOptions& cov, arma::uword output) const {
  // b_(g) - b = -(X~'X~ - X~_g' C_g X~_g)^{-1} X~_g' C_g e_g with C_g = (I - P_gg)^{-1}, P the
  // dummies' projection (in the sqrt(w) coordinates: sqrt(w_i w_j) / W_f within level f). P_gg
  // is block diagonal by level with blocks u u', u_i = sqrt(w_i / W_f), |u|^2 = c_f = W_fg / W_f,
  // so C_g = I + sum_f u u' / (1 - c_f) over the levels that are not all in g (a level all in
  // g is a projection whose pseudo-inverse acts as I on M_D-transformed blocks).
  const arma::uvec kept = kept_columns();
  const std::vector<bool> al = inner_.aliased();
  std::vector<arma::uword> ok;
  for (arma::uword j = 0; j < al.size(); ++j) {
    if (!al[j]) ok.push_back(j);
  }
  const arma::uvec okv(ok);
  const arma::vec sw = arma::sqrt(w_);
  WithinResult wx = within_transform(arma::mat(X_.cols(kept)), f_, w_, opt_);
  arma::mat Xs = wx.x.cols(okv);
  Xs.each_col() %= sw;
  for (arma::uword i = 0; i < Xs.n_rows && n_singletons_ > 0; ++i) {
    if (singleton_[i]) Xs.row(i).zeros();
  }
  const arma::vec es = inner_.residuals().col(output);
  arma::uword G = 0;
  const arma::uvec codes = dense_cluster_codes(kept_clusters(cov.clusters).col(0), G);
  const arma::uvec& lev = f_.codes.col(0);
  arma::vec W(f_.n_levels[0], arma::fill::zeros);
  std::vector<arma::uword> cnt(f_.n_levels[0], 0);
  for (arma::uword i = 0; i < lev.n_elem; ++i) {
    W(lev(i)) += w_(i);
    ++cnt[lev(i)];
  }
  auto correct = [&](const arma::uvec& rows, arma::mat& CX, arma::vec& Ce) {
    const arma::mat X0 = CX;
    const arma::vec e0 = Ce;
    std::vector<std::pair<arma::uword, arma::uword>> by;  // (level, position in the block)
    for (arma::uword a = 0; a < rows.n_elem; ++a) by.emplace_back(lev(rows(a)), a);
    std::sort(by.begin(), by.end());
    for (std::size_t s0 = 0; s0 < by.size();) {
      std::size_t s1 = s0;
      while (s1 < by.size() && by[s1].first == by[s0].first) ++s1;
      const arma::uword f = by[s0].first;
      if (s1 - s0 < cnt[f]) {
        arma::uvec pos(s1 - s0);
        arma::vec u(s1 - s0);
        double c = 0.0;
        for (std::size_t t = s0; t < s1; ++t) {
          pos(t - s0) = by[t].second;
          u(t - s0) = std::sqrt(w_(rows(by[t].second)) / W(f));
          c += w_(rows(by[t].second)) / W(f);
        }
        const double inv = 1.0 / (1.0 - c);
        CX.rows(pos) += u * (u.t() * X0.rows(pos)) * inv;
        Ce(pos) += u * (arma::dot(u, e0(pos)) * inv);
      }
      s0 = s1;
    }
  };
  const arma::mat Vo = cluster_jackknife(Xs, Xs.t() * Xs, es, codes, G, correct);
  arma::mat Vk(al.size(), al.size());
  Vk.fill(kNaN);
  Vk.submat(okv, okv) = Vo;
  return Vk;
}

WildBootstrapResult AbsorbedOLS::wild_bootstrap(const arma::vec& R, double r,
                                                const arma::uvec& clusters, const arma::mat& V,
                                                double level) const {
  require_fitted("wild_bootstrap");
  const arma::uword p = coef_.n_rows;
  check::require(R.n_elem == p, "param", "needs one weight per regressor");
  check::require(clusters.n_elem == y_.n_rows, "clusters",
                 "must have one id per training row (one-way clustering)");
  check::require(y_.n_cols == 1, "y", "the wild bootstrap is for a single output");
  const std::vector<bool> alias = aliased();
  for (arma::uword j = 0; j < p; ++j) {
    if (alias[j] && R(j) != 0.0) {
      throw InvalidArgument("param: names regressor " + std::to_string(j + 1) +
                            ", which was dropped (aliased or absorbed by the fixed effects; "
                            "coefficient NaN); test a coefficient that was estimated");
    }
  }
  const arma::uvec kept = kept_columns();
  const std::vector<bool> al = inner_.aliased();
  std::vector<arma::uword> ok;
  for (arma::uword j = 0; j < al.size(); ++j) {
    if (!al[j]) ok.push_back(kept(j));
  }
  const arma::uvec okv(ok);
  const arma::vec sw = arma::sqrt(w_);
  WithinResult wx = within_transform(arma::mat(X_.cols(okv)), f_, w_, opt_);
  arma::mat Xs = wx.x;
  Xs.each_col() %= sw;
  arma::vec ys = ytil_.col(0) % sw;
  for (arma::uword i = 0; i < Xs.n_rows && n_singletons_ > 0; ++i) {
    if (singleton_[i]) {
      Xs.row(i).zeros();
      ys(i) = 0.0;
    }
  }
  const arma::umat kc = kept_clusters(arma::umat(clusters));
  arma::uword G = 0;
  const arma::uvec codes = dense_cluster_codes(kc.col(0), G);
  bool nested = true;
  for (arma::uword j = 0; j < f_.n_factors() && nested; ++j) {
    nested = nested_in_clusters(f_, j, kc.col(0));
  }
  Annihilator md;
  if (!nested) {
    md = [&](const arma::mat& S) {
      arma::mat U = S;
      U.each_col() /= sw;
      WithinResult t = within_transform(U, f_, w_, opt_);
      t.x.each_col() %= sw;
      for (arma::uword i = 0; i < t.x.n_rows && n_singletons_ > 0; ++i) {
        if (singleton_[i]) t.x.row(i).zeros();
      }
      return t.x;
    };
  }
  CovOptions cov;
  cov.type = CovType::CR1;
  cov.clusters = arma::umat(clusters);
  return wild_cluster_bootstrap(Xs, ys, codes, G, arma::vec(R(okv)), r, V, level,
                                cluster_factor(cov), md);
}

}  // namespace attnreg
