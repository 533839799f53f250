// attnreg: the variance kinds of the linear-smoother diagnostics (names, per-observation
// omega_i, the cluster-robust sum); see core/include/attnreg/inference/diagnostics.hpp.
#include <cctype>
#include <map>
#include <string>
#include <vector>

#include "attnreg/base/error.hpp"
#include "attnreg/base/names.hpp"
#include "attnreg/detail/diagnostics_checks.hpp"
#include "attnreg/inference/diagnostics.hpp"
#include "attnreg/inference/nn_variance.hpp"

namespace attnreg {

using detail::output_column;

VarianceKind variance_kind_from_name(const std::string& name, const std::string& arg) {
  using K = VarianceKind;
  return detail::option_from_name<K>(
      name,
      {{"const", K::homoskedastic}, {"homoskedastic", K::homoskedastic},
       {"homoscedastic", K::homoskedastic}, {"iid", K::homoskedastic}, {"hc0", K::hc0},
       {"hc1", K::hc1}, {"hc2", K::hc2}, {"hc3", K::hc3}, {"cr1", K::cr1}, {"cluster", K::cr1},
       {"nn", K::nn}, {"local", K::local}},
      arg, "variance kind",
      "one of 'const' (homoskedastic), 'hc0', 'hc1', 'hc2', 'hc3', 'cr1' (cluster-robust, needs "
      "cluster ids), 'nn' (nearest-neighbour residuals), 'local' (local residual variance, "
      "pointwise only)");
}

const char* variance_kind_name(VarianceKind k) {
  switch (k) {
    case VarianceKind::homoskedastic: return "const";
    case VarianceKind::hc0: return "hc0";
    case VarianceKind::hc1: return "hc1";
    case VarianceKind::hc2: return "hc2";
    case VarianceKind::hc3: return "hc3";
    case VarianceKind::cr1: return "cr1";
    case VarianceKind::nn: return "nn";
    case VarianceKind::local: return "local";
  }
  return "?";
}

namespace {

// omega of hc0, hc2 and hc3 at the flagged training rows only (variance_omega's `needed`).
arma::vec robust_omega_on(const LocalPolynomial& model, VarianceKind kind, arma::uword output,
                          const arma::uvec& needed) {
  const std::vector<QueryStatus>& st = model.training_fit_status();
  const arma::uword n = st.size();
  check::require(needed.n_elem == n, "needed", "needs one flag per training row");
  std::vector<QueryStatus> st_needed(n, QueryStatus::ok);
  for (arma::uword i = 0; i < n; ++i)
    if (needed(i) != 0) st_needed[i] = st[i];
  throw_on_failed_query(st_needed, model.space(), model.options().degree, model.options().ridge,
                        "X (fitted values at the training rows inside an evaluation point's "
                        "window)",
                        false);
  const arma::vec y = output_column(model.training_y(), output, "variance");
  const arma::vec fit = output_column(model.fitted_unchecked(), output, "variance");
  const arma::vec& lev = model.leverage_unchecked();
  arma::vec out(n, arma::fill::zeros);
  for (arma::uword i = 0; i < n; ++i) {
    if (needed(i) == 0) continue;
    const double e = y(i) - fit(i), one_m = 1 - lev(i);
    if (kind != VarianceKind::hc0 && !(one_m > 1e-12))
      throw NumericalError("kind: leverage L_ii = " + std::to_string(lev(i)) + " at row " +
                           std::to_string(i + 1) + " is >= 1, so " + variance_kind_name(kind) +
                           " is undefined; use a larger bandwidth or kind 'hc0'/'hc1'");
    out(i) = kind == VarianceKind::hc0 ? e * e
             : kind == VarianceKind::hc2 ? e * e / one_m
                                         : e * e / (one_m * one_m);
  }
  return out;
}

}  // namespace

arma::vec variance_omega(const LocalPolynomial& model, VarianceKind kind, double sigma2,
                         double trace_L, arma::uword output, const arma::uvec* needed) {
  if (needed != nullptr && (kind == VarianceKind::hc0 || kind == VarianceKind::hc2 ||
                            kind == VarianceKind::hc3))
    return robust_omega_on(model, kind, output, *needed);
  const arma::vec e = output_column(model.residuals(), output, "variance");
  const arma::uword n = e.n_elem;
  const arma::vec& lev = model.leverage();
  switch (kind) {
    case VarianceKind::homoskedastic: return arma::vec(n, arma::fill::value(sigma2));
    case VarianceKind::hc0: return arma::square(e);
    case VarianceKind::hc1: {
      const double dn = static_cast<double>(n) - trace_L;
      if (!(dn > 0)) throw NumericalError("kind: hc1 needs n > tr L; use hc0 or a larger bandwidth");
      return arma::square(e) * (static_cast<double>(n) / dn);
    }
    case VarianceKind::hc2:
    case VarianceKind::hc3: {
      arma::vec out(n);
      for (arma::uword i = 0; i < n; ++i) {
        const double one_m = 1 - lev(i);
        if (!(one_m > 1e-12))
          throw NumericalError("kind: leverage L_ii = " + std::to_string(lev(i)) + " at row " +
                               std::to_string(i + 1) + " is >= 1, so " +
                               variance_kind_name(kind) +
                               " is undefined; use a larger bandwidth or kind 'hc0'/'hc1'");
        out(i) = e(i) * e(i) / (kind == VarianceKind::hc2 ? one_m : one_m * one_m);
      }
      return out;
    }
    case VarianceKind::nn: {
      // Nearest-neighbour residuals of y (not of the fit): nprobust's vce = "nn".
      check::require(model.training_x().n_cols == 1 && model.space().n_continuous() == 1,
                     "kind", "'nn' (nearest-neighbour residuals) needs one continuous "
                             "regressor; use 'hc3' or 'hc0' with several");
      return nn_residual_variance(model.training_x().col(0),
                                  output_column(model.training_y(), output, "variance"),
                                  kNnMatch);
    }
    case VarianceKind::local:
      throw InvalidArgument("cov_type: 'local' (the local residual variance at a point) is "
                            "available for pointwise inference (diagnose) only; use 'hc3' "
                            "here");
    case VarianceKind::cr1: break;
  }
  throw InvalidArgument("kind: cr1 is computed by cluster_variance");
}

arma::vec cluster_variance(const arma::mat& W, const arma::vec& resid,
                           const std::vector<long long>& cluster, double trace_L) {
  const arma::uword n = resid.n_elem;
  check::require(cluster.size() == n, "cluster",
                 "needs one cluster id per training row (" + std::to_string(n) + "), got " +
                     std::to_string(cluster.size()));
  std::map<long long, arma::uword> index;
  for (long long c : cluster) index.emplace(c, index.size());
  const arma::uword G = index.size();
  check::require(G >= 2, "cluster", "needs at least two distinct clusters");
  arma::mat S(W.n_rows, G, arma::fill::zeros);  // S(x, g) = sum_{i in g} l_i(x) e_i
  for (arma::uword i = 0; i < n; ++i) S.col(index[cluster[i]]) += W.col(i) * resid(i);
  const double dn = static_cast<double>(n);
  const double adj = (static_cast<double>(G) / (G - 1)) * ((dn - 1) / (dn - trace_L));
  return adj * arma::sum(arma::square(S), 1);
}

}  // namespace attnreg
