// Instrumental-variables regression: covariances, first-stage statistics and the
// overidentification and endogeneity tests (formulas and sources in
// attnreg/least_squares/iv.hpp).
#include "attnreg/least_squares/iv.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include <boost/math/special_functions/gamma.hpp>

#include "attnreg/base/constants.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/detail/least_squares_fe_internal.hpp"
#include "attnreg/detail/least_squares_internal.hpp"
#include "attnreg/inference/distributions.hpp"

namespace attnreg {

namespace iv_detail {
double iv_min_generalized_eig(const arma::mat& A, const arma::mat& B);  // iv.cpp
}  // namespace iv_detail

namespace {

using iv_detail::iv_min_generalized_eig;

double iv_chi2_sf(double x, double df) {
  if (!(x >= 0) || !(df > 0)) return kNaN;
  return boost::math::gamma_q(df / 2.0, x / 2.0);
}

arma::uvec iv_cluster_index(const arma::uvec& c, arma::uword& G) {
  const arma::uvec u = arma::unique(c);
  G = u.n_elem;
  arma::uvec idx(c.n_elem);
  for (arma::uword i = 0; i < c.n_elem; ++i) {
    idx(i) = static_cast<arma::uword>(
        std::lower_bound(u.begin(), u.end(), c(i)) - u.begin());
  }
  return idx;
}

arma::mat iv_cluster_meat(const arma::mat& S, const arma::uvec& c) {
  arma::uword G = 0;
  const arma::uvec idx = iv_cluster_index(c, G);
  arma::mat sums(G, S.n_cols, arma::fill::zeros);
  for (arma::uword i = 0; i < S.n_rows; ++i) sums.row(idx(i)) += S.row(i);
  return sums.t() * sums;
}

void require_iv_cov(CovType type) {
  if (type == CovType::HAC || type == CovType::CR2) {
    throw InvalidArgument("cov_type: " + cov_type_name(type) +
                          " is not available for instrumental variables (use nonrobust, "
                          "HC0-HC3, CR0 or CR1)");
  }
}

}  // namespace

arma::umat IVRegression::kept_clusters(const CovOptions& cov) const {
  const bool cl = is_cluster_cov(cov.type);
  if (!cl) {
    check::require(cov.clusters.is_empty(), "groups",
                   "cluster ids were given but the covariance type is not cluster-robust (use "
                   "cov_type=\"CR1\")");
    return arma::umat();
  }
  check::require(!cov.clusters.is_empty(), "groups",
                 "a cluster-robust covariance needs cluster ids (groups=)");
  check::require(cov.clusters.n_rows == n_all_, "groups",
                 "has " + std::to_string(cov.clusters.n_rows) + " rows but the model was "
                 "fitted on " + std::to_string(n_all_) + " (pass one id per training row)");
  check::require(cov.clusters.n_cols == 1 || cov.clusters.n_cols == 2, "groups",
                 "one or two clustering dimensions are supported");
  return cov.clusters.rows(keep_);
}

double IVRegression::fewest_clusters(const arma::umat& cl) const {
  double G = 0;
  for (arma::uword d = 0; d < cl.n_cols; ++d) {
    const double g = static_cast<double>(arma::uvec(arma::unique(cl.col(d))).n_elem);
    G = d == 0 ? g : std::min(G, g);
  }
  return G;
}

double IVRegression::small_sample_factor(const CovOptions& cov, const arma::umat& cl,
                                         double K) const {
  const double N = static_cast<double>(n_keep_);
  switch (cov.type) {
    case CovType::HC1: {
      const double df = N - K - static_cast<double>(df_abs_);
      return df > 0 ? N / df : kNaN;
    }
    case CovType::CR1: {
      // The OLS path's convention: K counts the absorbed levels not nested in a cluster.
      const double Kc = K + (has_fe_ ? absorbed_df_clustered(f_, dfinfo_, cl) : 0.0);
      const double G = fewest_clusters(cl);
      return N - Kc > 0 && G > 1 ? G / (G - 1.0) * (N - 1.0) / (N - Kc) : kNaN;
    }
    default:
      return 1.0;
  }
}

arma::mat IVRegression::raw_meat(const arma::mat& S, const CovOptions& cov,
                                 const arma::umat& cl) const {
  if (!is_cluster_cov(cov.type)) return S.t() * S;
  if (cl.n_cols == 1) return iv_cluster_meat(S, cl.col(0));
  // Two-way (Cameron, Gelbach and Miller 2011): V_1 + V_2 - V_12, V_12 on the intersection.
  const arma::uword m2 = cl.col(1).max() + 1;
  const arma::uvec both = cl.col(0) * m2 + cl.col(1);
  return iv_cluster_meat(S, cl.col(0)) + iv_cluster_meat(S, cl.col(1)) - iv_cluster_meat(S, both);
}

arma::vec IVRegression::dummy_leverage_kept() const {
  arma::vec h(n_keep_, arma::fill::zeros);
  if (!has_fe_) return h;
  if (f_.n_factors() == 1) {
    arma::vec wsum(f_.n_levels[0], arma::fill::zeros);
    for (arma::uword i = 0; i < n_keep_; ++i) wsum(f_.codes(i, 0)) += w_(i);
    for (arma::uword i = 0; i < n_keep_; ++i) h(i) = w_(i) / wsum(f_.codes(i, 0));
    return h;
  }
  return fe_detail::dummy_leverage(f_, w_);
}

arma::mat IVRegression::sandwich(const arma::mat& Xs, const arma::vec& e, const arma::mat& B,
                                 const arma::vec& leverage, const CovOptions& cov,
                                 const arma::umat& cl, double K_df, Inference* fix) const {
  const double N = static_cast<double>(n_keep_);
  switch (cov.type) {
    case CovType::Classical: {
      const double df = N - K_df - static_cast<double>(df_abs_);
      if (!(df > 0)) return arma::mat(B.n_rows, B.n_cols, arma::fill::value(kNaN));
      return arma::dot(e, e) / df * B;
    }
    case CovType::HC0:
    case CovType::HC1:
    case CovType::HC2:
    case CovType::HC3:
    case CovType::CR0:
    case CovType::CR1: {
      arma::vec ea = e;
      if (cov.type == CovType::HC2 || cov.type == CovType::HC3) {
        for (arma::uword i = 0; i < e.n_elem; ++i) {
          const double om = 1.0 - leverage(i);
          // A row fitted exactly (leverage one) adds nothing to the meat (0/0 taken as 0).
          ea(i) = om > 1e-10 ? e(i) / (cov.type == CovType::HC2 ? std::sqrt(om) : om) : 0.0;
        }
      }
      const arma::mat S = Xs.each_col() % ea;
      arma::mat V = B * raw_meat(S, cov, cl) * B * small_sample_factor(cov, cl, K_df);
      V = 0.5 * (V + V.t());
      if (is_cluster_cov(cov.type) && cl.n_cols == 2) {
        double ratio = 0;
        if (ls_detail::clip_negative_eigenvalues(V, &ratio) && fix) {
          fix->psd_fixed = true;
          fix->psd_min_eigenvalue = std::min(fix->psd_min_eigenvalue, ratio);
        }
      }
      return V;
    }
    default:
      require_iv_cov(cov.type);
      return arma::mat();
  }
}

arma::mat IVRegression::covariance(const CovOptions& cov, Inference* fix) const {
  require_fitted("covariance");
  const arma::umat cl = kept_clusters(cov);
  require_iv_cov(cov.type);
  if (cov.type == CovType::Classical) {
    // s^2 C^{-1} (for k != 1 as linearmodels' IVLIML: not the sandwich with the x^ scores).
    const double df = df_residual();
    if (!(df > 0)) return arma::mat(Cinv_.n_rows, Cinv_.n_cols, arma::fill::value(kNaN));
    return sigma2() * Cinv_;
  }
  arma::vec h;
  if (cov.type == CovType::HC2 || cov.type == CovType::HC3) {
    arma::mat Q, R;
    arma::qr_econ(Q, R, Xhat_);
    h = arma::sum(arma::square(Q), 1) + dummy_leverage_kept();
  }
  return sandwich(Xhat_, e_, Cinv_, h, cov, cl, static_cast<double>(b_.n_elem), fix);
}

Inference IVRegression::inference(const CovOptions& cov) const {
  require_fitted("inference");
  Inference out;
  out.cov_type = cov.type;
  out.df_residual = df_residual();
  out.df_inference = out.df_residual;
  const arma::mat V = covariance(cov, &out);
  if (is_cluster_cov(cov.type)) {
    const arma::umat cl = kept_clusters(cov);
    for (arma::uword d = 0; d < cl.n_cols; ++d) {
      out.n_clusters.push_back(arma::uvec(arma::unique(cl.col(d))).n_elem);
    }
    out.df_inference = fewest_clusters(cl) - 1.0;
  }
  out.estimate = b_;
  arma::vec d = V.diag();
  out.std_error.set_size(b_.n_elem, 1);
  for (arma::uword j = 0; j < d.n_elem; ++j) {
    out.std_error(j, 0) = d(j) >= 0 ? std::sqrt(d(j)) : kNaN;
  }
  ls_detail::t_tests(out);
  const double r2 = r_squared();
  out.r_squared = arma::rowvec{r2};
  const double df = out.df_residual;
  const double N = static_cast<double>(n_keep_);
  out.adj_r_squared = arma::rowvec{df > 0 ? 1.0 - (1.0 - r2) * (N - 1.0) / df : kNaN};
  out.sigma = arma::rowvec{std::sqrt(sigma2())};
  return out;
}

IVFirstStage IVRegression::first_stage(const CovOptions& cov) const {
  require_fitted("first_stage");
  const arma::umat cl = kept_clusters(cov);
  require_iv_cov(cov.type);
  IVFirstStage fs;
  const double N = static_cast<double>(n_keep_);
  const arma::uword p1i = X1s_.n_cols, L = Qz_.n_cols;
  const double q = static_cast<double>(q_);
  const arma::mat Zf = arma::join_rows(X1s_, Z2s_);
  arma::solve(fs.coef, Zf, X2s_);
  const arma::mat V = X2s_ - Qz_ * (Qz_.t() * X2s_);
  const arma::mat Q1 = p1i > 0 ? arma::mat(Qz_.cols(0, p1i - 1)) : arma::mat(n_keep_, 0);
  const arma::mat Qz2 = Qz_.cols(p1i, L - 1);
  const arma::mat Pi = Qz2.t() * X2s_;          // q x p2: first stage on the partialled basis
  const arma::mat X2p = p1i > 0 ? arma::mat(X2s_ - Q1 * (Q1.t() * X2s_)) : X2s_;
  const double df2 = N - static_cast<double>(L) - static_cast<double>(df_abs_);
  fs.df1 = q;
  fs.df2 = is_cluster_cov(cov.type) ? fewest_clusters(cl) - 1.0 : df2;
  fs.partial_r2.set_size(p2_);
  fs.partial_f.set_size(p2_);
  fs.partial_f_pvalue.set_size(p2_);
  arma::vec hz;
  if (cov.type == CovType::HC2 || cov.type == CovType::HC3) {
    hz = arma::sum(arma::square(Qz_), 1) + dummy_leverage_kept();
  }
  const arma::mat ZfInv = arma::inv_sympd(arma::symmatu(Zf.t() * Zf));
  for (arma::uword j = 0; j < p2_; ++j) {
    const double rss_u = arma::dot(V.col(j), V.col(j));
    const double rss_r = arma::dot(X2p.col(j), X2p.col(j));
    fs.partial_r2(j) = 1.0 - rss_u / rss_r;
    if (cov.type == CovType::Classical) {
      fs.partial_f(j) = ((rss_r - rss_u) / q) / (rss_u / df2);
    } else {
      // Wald test of the excluded instruments' coefficients under the robust covariance.
      const arma::mat Vc =
          sandwich(Zf, V.col(j), ZfInv, hz, cov, cl, static_cast<double>(L), nullptr);
      const arma::vec g = fs.coef.col(j).rows(p1i, L - 1);
      const arma::mat Vs = Vc.submat(p1i, p1i, L - 1, L - 1);
      fs.partial_f(j) = arma::dot(g, arma::solve(Vs, g)) / q;
    }
    fs.partial_f_pvalue(j) = fisher_f_sf(fs.partial_f(j), fs.df1, fs.df2);
  }
  // Cragg-Donald: (N - L - df_absorbed)/q mineig((X2'M_Z X2)^{-1} X2'(P_Z - P_X1) X2).
  fs.cragg_donald_f = iv_min_generalized_eig(V.t() * V, Pi.t() * Pi) * df2 / q;
  fs.kleibergen_paap_rk = kNaN;
  fs.kleibergen_paap_f = kNaN;
  if (cov.type != CovType::Classical) {
    // Kleibergen and Paap (2006), sec. 3, rank p2 - 1: Theta = F Pi G^{-1} with F = I (the
    // instruments' orthonormal basis Qz2), G'G = X2~'X2~. With Theta = U S V', the statistic
    // needs only the last right singular vector v and the left singular vectors U2 from the
    // p2-th on: lambda = U2' Theta v = (s_p2, 0, ...)' and
    // rk = lambda' [(v' G^{-T} (x) U2') Var(vec Pi) (G^{-1} v (x) U2)]^{-1} lambda
    // (their A_q, B_q differ from U2, v by invertible factors, which the quadratic form ignores).
    arma::mat R;
    arma::chol(R, arma::symmatu(X2p.t() * X2p));
    const arma::mat Ri = arma::inv(arma::trimatu(R));
    const arma::mat Theta = Pi * Ri;
    arma::mat U, Vv;
    arma::vec sv;
    arma::svd(U, sv, Vv, Theta);
    const arma::uword K = p2_;
    const arma::vec v = Vv.col(K - 1);
    const arma::mat U2 = U.cols(K - 1, U.n_cols - 1);
    arma::vec lambda(U2.n_cols, arma::fill::zeros);
    lambda(0) = sv(K - 1);
    // Scores of vec(Pi): row i is kron(v_i, z_i) with v_i the first-stage residuals.
    arma::mat S(n_keep_, q_ * K);
    for (arma::uword j = 0; j < K; ++j) {
      S.cols(j * q_, (j + 1) * q_ - 1) = Qz2.each_col() % V.col(j);
    }
    CovOptions hc = cov;
    if (cov.type == CovType::HC2 || cov.type == CovType::HC3) hc.type = CovType::HC1;
    const arma::mat meat = raw_meat(S, hc, cl);
    const arma::mat T = arma::kron(Ri * v, U2);  // (G^{-1} v) (x) U2: (K q) x (q - K + 1)
    const arma::mat Om = T.t() * meat * T;
    fs.kleibergen_paap_rk = arma::dot(lambda, arma::solve(Om, lambda));
    fs.kleibergen_paap_f =
        fs.kleibergen_paap_rk / q / small_sample_factor(hc, cl, static_cast<double>(L));
  }
  return fs;
}

IVTest IVRegression::overidentification(const CovOptions& cov) const {
  require_fitted("overidentification");
  const arma::umat cl = kept_clusters(cov);
  IVTest t;
  t.df1 = static_cast<double>(q_) - static_cast<double>(p2_);
  const bool robust = cov.type != CovType::Classical;
  t.name = robust ? "Hansen J" : "Sargan";
  if (q_ == p2_) {
    t.statistic = kNaN;
    t.p_value = kNaN;
    t.name += " (exactly identified: no test)";
    return t;
  }
  if (!robust) {
    const arma::vec g = Qz_.t() * e_;
    t.statistic = static_cast<double>(n_keep_) * arma::dot(g, g) / arma::dot(e_, e_);
  } else {
    require_iv_cov(cov.type);
    // Two-step efficient GMM with S from the model's residuals (no small-sample factor: it
    // cancels in J up to the scaling, as in ivreg2).
    CovOptions c = cov;
    if (c.type == CovType::HC2 || c.type == CovType::HC3) c.type = CovType::HC0;
    const arma::mat S = raw_meat(Qz_.each_col() % e_, c, cl);
    const arma::mat Wm = arma::pinv(arma::symmatu(S));
    const arma::mat X = arma::join_rows(X1s_, X2s_);
    const arma::mat A = X.t() * Qz_;
    const arma::vec bg = arma::solve(A * Wm * A.t(), A * Wm * (Qz_.t() * ys_));
    const arma::vec g = Qz_.t() * (ys_ - X * bg);
    t.statistic = arma::dot(g, Wm * g);
  }
  t.p_value = iv_chi2_sf(t.statistic, t.df1);
  return t;
}

IVTest IVRegression::wu_hausman() const {
  require_fitted("wu_hausman");
  // Control function: the F test of M_Z X2 added to the OLS of y on X (Wooldridge 2010, 6.3.1).
  const arma::mat X = arma::join_rows(X1s_, X2s_);
  const arma::mat V = X2s_ - Qz_ * (Qz_.t() * X2s_);
  const arma::mat Xa = arma::join_rows(X, V);
  arma::vec br, bu;
  arma::solve(br, X, ys_);
  arma::solve(bu, Xa, ys_);
  const arma::vec er = ys_ - X * br, eu = ys_ - Xa * bu;
  const double rss_r = arma::dot(er, er), rss_u = arma::dot(eu, eu);
  IVTest t;
  t.name = "Wu-Hausman";
  t.df1 = static_cast<double>(p2_);
  t.df2 = static_cast<double>(n_keep_) - static_cast<double>(Xa.n_cols) -
          static_cast<double>(df_abs_);
  t.statistic = ((rss_r - rss_u) / t.df1) / (rss_u / t.df2);
  t.p_value = fisher_f_sf(t.statistic, t.df1, t.df2);
  return t;
}

}  // namespace attnreg
