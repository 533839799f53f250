// attnreg: cluster-robust building blocks shared by the least-squares estimators (OLS, OLS with
// absorbed fixed effects, and any estimator that can hand over its design and residual blocks):
// fixest's small-sample conventions, the CR3 jackknife in closed form and the restricted wild
// cluster bootstrap.
//
// Small-sample factor of CR1 (fixest's ssc(); Berge 2018, the fixest vignette "On standard
// errors"; Stata's vce(cluster) and reghdfe):  c = G/(G-1) * (N-1)/(N-K), where
//   * G/(G-1) is applied when g_adj (fixest's G.adj / cluster.adj), G the fewest clusters over
//     the clustering dimensions (fixest's G.df = "min");
//   * (N-1)/(N-K) when k_adj (K.adj / adj), K the estimated parameters counted by k_fixef
//     (K.fixef / fixef.K): "none" counts only the regressors' rank, "full" adds the absorbed
//     fixed-effect parameters (levels minus redundant levels), and "nonnested" (the default of
//     fixest, pyfixest and reghdfe) adds them except the levels of a factor nested in a
//     cluster variable, for each of which one parameter is kept (the constant the nested
//     levels carry: fixest counts it, so K never falls below rank + 1 with fixed effects).
//
// CR3 (the cluster jackknife; Bell and McCaffrey 2002, Survey Methodology 28(2); MacKinnon,
// Nielsen and Webb 2023, J. Econometrics 232(2), "CV3"):
//   V = (G-1)/G sum_g (b_(g) - b)(b_(g) - b)',
// b_(g) the estimate without cluster g. In closed form (no refit): with A = X'X, residuals e
// and X'e = 0, b_(g) - b = -(A - X_g' C_g X_g)^{-1} X_g' C_g e_g, where C_g = I for a plain
// regression and for fixed effects nested in the clusters, and C_g = (I - P_gg)^{-1} when the
// absorbed dummies' projection P has a block P_gg inside cluster g that does not vanish with it
// (removing the rows of g is adding one dummy per row of g; Frisch-Waugh-Lovell). Cost: one
// k x k solve per cluster after the per-cluster cross-products.
//
// Wild cluster restricted bootstrap (WCR; Cameron, Gelbach and Miller 2008, REStat 90(3);
// the fast algorithm of Roodman, MacKinnon, Nielsen and Webb 2019, Stata Journal 19(1), sec. 3):
// for the hypothesis R'b = r (one restriction on one or more coefficients), with c = A^{-1} R,
// z = X c and the restricted residuals u = y - X b_r, a bootstrap draw v (one weight per
// cluster) gives R'b* - r = sum_h v_h a_h (a_g = sum_{i in g} z_i u_i), and the projected
// cluster scores of its CR1 variance are s = (J - C) v with C_gh = (X_g'z)' A^{-1} X_h'u_h and
// J = diag(a) (or, when absorbed fixed effects are not nested in the clusters,
// J_gh = sum_{i in g} z_i [M_D (u 1_h)]_i). Everything is affine in r, so the bootstrap
// statistics at any r are three B-vectors of sums (test inversion for the confidence interval
// costs O(B) per trial value). The p-value is the share of |t*| >= |t| (symmetric).
#pragma once

#include "attnreg/base/arma.hpp"

#include <functional>
#include <string>

namespace attnreg {

/// How absorbed fixed effects count in K of the (N-1)/(N-K) factor (fixest's K.fixef).
enum class FixefK { None, Nonnested, Full };
/// "none", "nonnested" (or fixest's older "nested"), "full" -> FixefK.
FixefK parse_fixef_k(const std::string& name);
std::string fixef_k_name(FixefK k);

/// fixest's ssc() choices for cluster-robust covariances (see the header comment).
struct SmallSample {
  bool k_adj = true;                   ///< (N-1)/(N-K)
  FixefK k_fixef = FixefK::Nonnested;  ///< what K counts of the absorbed fixed effects
  bool g_adj = true;                   ///< G/(G-1)
};

/// The CR1 factor G/(G-1) (N-1)/(N-K) under `s` (each part only when enabled); NaN when an
/// enabled part has a non-positive denominator.
double cr1_factor(double N, double K, double G, const SmallSample& s);

/// Replaces the blocks of cluster g by C_g X_g and C_g e_g (see CR3 above). rows: the rows of g.
using JackknifeCorrection =
    std::function<void(const arma::uvec& rows, arma::mat& CXg, arma::vec& Ceg)>;

/// CR3: (G-1)/G sum_g d_g d_g' with d_g = (A - X_g' C_g X_g)^{-1} X_g' C_g e_g (k x k).
/// X: n x k design of the fit (already weighted: sqrt(w) times the rows), A = X'X (or the
/// identity when X is orthonormal), e: n residuals (weighted the same way), codes: dense cluster
/// codes 0..G-1. Clusters of one row each (every cluster), or a cluster whose removal leaves
/// the coefficients unidentified, are InvalidArgument.
arma::mat cluster_jackknife(const arma::mat& X, const arma::mat& A, const arma::vec& e,
                            const arma::uvec& codes, arma::uword G,
                            const JackknifeCorrection& correct = {});

/// Dense codes 0..G-1 of cluster ids (any values), in increasing order of the ids; G returned.
arma::uvec dense_cluster_codes(const arma::uvec& ids, arma::uword& G);

/// Applies the annihilator M_D of absorbed fixed effects to the columns of an n x c matrix (in
/// the weighted coordinates of X and y).
using Annihilator = std::function<arma::mat(const arma::mat&)>;

struct WildBootstrapResult {
  double estimate = 0;      ///< R'b
  double std_error = 0;     ///< CR1 standard error of R'b (the fit's small-sample factor)
  double t_stat = 0;        ///< (R'b - r) / std_error
  double p_value = 0;       ///< share of bootstrap |t*| >= |t|
  double ci_lower = 0, ci_upper = 0;  ///< test inversion at `level` (NaN: not bracketed)
  arma::uword replications = 0;
  arma::uword n_clusters = 0;
  arma::vec t_boot;         ///< the B bootstrap t statistics under r
};

/// WCR bootstrap of R'b = r for the least-squares fit of y on X (both weighted: sqrt(w) rows;
/// X of full column rank), clusters as dense codes 0..G-1, V the G x B bootstrap weights (one
/// column per replication), `factor` the CR1 factor of the fit (it cancels in the p-value),
/// `annihilate` M_D when absorbed fixed effects are not nested in the clusters (empty
/// otherwise). level in (0, 1).
WildBootstrapResult wild_cluster_bootstrap(const arma::mat& X, const arma::vec& y,
                                           const arma::uvec& codes, arma::uword G,
                                           const arma::vec& R, double r, const arma::mat& V,
                                           double level, double factor,
                                           const Annihilator& annihilate = {});

/// The 2^G Rademacher sign vectors as a G x 2^G matrix (column b has +1 where bit g of b is 0);
/// G <= 20.
arma::mat rademacher_enumeration(arma::uword G);

}  // namespace attnreg
