// Least squares with absorbed fixed effects, the projection M_D: sweeps, within transform,
// absorbed degrees of freedom and the leverage of the dummies.
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

namespace attnreg {
namespace fe_detail {

void check_options(const AbsorbOptions& opt) {
  check::require(opt.tol > 0.0 && opt.tol < 1.0, "tol",
                 "must be in (0, 1); the default 1e-10 is the relative accuracy of M_D x");
  check::require(opt.max_iter >= 1, "max_iter", "must be >= 1 (default 10000)");
  check::require(opt.rank_tol >= 0.0 && opt.rank_tol < 1.0, "rank_tol",
                 "must be in [0, 1); the default 1e-7 matches R's lm");
}

arma::vec positive_weights_or_ones(const arma::vec& weights, arma::uword n) {
  if (weights.is_empty()) return arma::ones(n);
  if (weights.n_elem != n) {
    std::ostringstream msg;
    msg << "weights: has " << weights.n_elem << " values but X has " << n
        << " rows (pass one weight per row)";
    throw InvalidArgument(msg.str());
  }
  for (arma::uword i = 0; i < n; ++i) {
    if (!(std::isfinite(weights(i)) && weights(i) > 0.0)) {
      std::ostringstream msg;
      msg << "weights: must be finite and > 0 with absorbed fixed effects, got " << weights(i)
          << " at row " << i + 1 << " (drop rows with zero weight before fitting)";
      throw InvalidArgument(msg.str());
    }
  }
  return weights;
}

Components components12(const Factors& f) {
  const arma::uword L1 = f.n_levels[0], L2 = f.n_levels[1];
  std::vector<arma::uword> parent(L1 + L2);
  std::iota(parent.begin(), parent.end(), arma::uword{0});
  auto find = [&](arma::uword a) {
    while (parent[a] != a) {
      parent[a] = parent[parent[a]];
      a = parent[a];
    }
    return a;
  };
  for (arma::uword i = 0; i < f.codes.n_rows; ++i) {
    const arma::uword a = find(f.codes(i, 0)), b = find(L1 + f.codes(i, 1));
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  }
  Components c;
  std::vector<arma::uword> id(L1 + L2, static_cast<arma::uword>(-1));
  c.comp_of_f1.resize(L1);
  c.comp_of_f2.resize(L2);
  for (arma::uword v = 0; v < L1 + L2; ++v) {
    const arma::uword r = find(v);
    if (id[r] == static_cast<arma::uword>(-1)) id[r] = c.count++;
    if (v < L1) {
      c.comp_of_f1[v] = id[r];
    } else {
      c.comp_of_f2[v - L1] = id[r];
    }
  }
  return c;
}

// Largest connected component (levels of all factors linked by the rows) whose dummy Gram
// matrix is pseudo-inverted densely for the HC2/HC3 leverages of two or more factors.
constexpr arma::uword kMaxLeverageLevels = 3000;

// Leverages of the fixed-effect dummies, h_i = w_i d_i' (D'WD)^- d_i (the diagonal of the
// projection W^{1/2} D (D'WD)^- D' W^{1/2}, the same for every generalised inverse). The levels
// split into connected components (a row links its levels); per component the Gram matrix G,
// scaled to unit diagonal (G~ = S^{-1/2} G S^{-1/2}, eigenvalues in [0, factors]), is
// pseudo-inverted by its eigendecomposition, and S^{-1/2} G~^+ S^{-1/2} is a generalised
// inverse of G. Throws when a component has more than kMaxLeverageLevels levels.
arma::vec dummy_leverage(const Factors& f, const arma::vec& w) {
  const arma::uword n = f.codes.n_rows, F = f.n_factors();
  std::vector<arma::uword> offset(F + 1, 0);
  for (arma::uword j = 0; j < F; ++j) offset[j + 1] = offset[j] + f.n_levels[j];
  const arma::uword L = offset[F];
  // Union-find over the global level indices.
  std::vector<arma::uword> parent(L);
  for (arma::uword a = 0; a < L; ++a) parent[a] = a;
  auto find = [&](arma::uword a) {
    while (parent[a] != a) {
      parent[a] = parent[parent[a]];
      a = parent[a];
    }
    return a;
  };
  for (arma::uword i = 0; i < n; ++i) {
    const arma::uword r0 = find(offset[0] + f.codes(i, 0));
    for (arma::uword j = 1; j < F; ++j) {
      const arma::uword rj = find(offset[j] + f.codes(i, j));
      if (rj != r0) parent[rj] = r0;
    }
  }
  // Component ids and local positions.
  std::vector<arma::uword> comp(L), local(L);
  std::vector<arma::uword> size;
  std::vector<arma::sword> id_of_root(L, -1);
  for (arma::uword a = 0; a < L; ++a) {
    const arma::uword root = find(a);
    if (id_of_root[root] < 0) {
      id_of_root[root] = static_cast<arma::sword>(size.size());
      size.push_back(0);
    }
    comp[a] = static_cast<arma::uword>(id_of_root[root]);
    local[a] = size[comp[a]]++;
  }
  const arma::uword C = size.size();
  for (arma::uword c = 0; c < C; ++c) {
    if (size[c] > kMaxLeverageLevels) {
      std::ostringstream msg;
      msg << "cov_type: HC2/HC3 with " << F << " absorbed factors need the leverage of the "
          << "dummies, computed here from a dense pseudo-inverse per connected component of the "
          << "factor levels; the largest component has " << size[c] << " levels (limit "
          << kMaxLeverageLevels << "); use HC1 (fixest's \"hetero\") or put the smaller factors "
          << "in X as dummy columns";
      throw InvalidArgument(msg.str());
    }
  }
  std::vector<arma::mat> G(C);
  for (arma::uword c = 0; c < C; ++c) G[c].zeros(size[c], size[c]);
  for (arma::uword i = 0; i < n; ++i) {
    const arma::uword c = comp[offset[0] + f.codes(i, 0)];
    for (arma::uword j = 0; j < F; ++j) {
      const arma::uword a = local[offset[j] + f.codes(i, j)];
      for (arma::uword k = 0; k < F; ++k) G[c](a, local[offset[k] + f.codes(i, k)]) += w(i);
    }
  }
  for (arma::uword c = 0; c < C; ++c) {
    const arma::vec s = 1.0 / arma::sqrt(G[c].diag());
    arma::mat Gs = G[c];
    Gs.each_col() %= s;
    Gs.each_row() %= s.t();
    Gs = 0.5 * (Gs + Gs.t());
    arma::vec lam;
    arma::mat U;
    if (!arma::eig_sym(lam, U, Gs)) {
      throw NumericalError("cov_type: HC2/HC3: the eigendecomposition of the dummy Gram matrix "
                           "failed");
    }
    // Eigenvalues lie in [0, F]; the redundant directions are 0 up to rounding.
    const double cut = 1e-10 * std::max(1.0, lam.max());
    arma::vec inv(lam.n_elem, arma::fill::zeros);
    for (arma::uword k = 0; k < lam.n_elem; ++k) inv(k) = lam(k) > cut ? 1.0 / lam(k) : 0.0;
    arma::mat Ginv = (U.each_row() % inv.t()) * U.t();
    Ginv.each_col() %= s;
    Ginv.each_row() %= s.t();
    G[c] = std::move(Ginv);
  }
  arma::vec h(n);
  for (arma::uword i = 0; i < n; ++i) {
    const arma::uword c = comp[offset[0] + f.codes(i, 0)];
    double acc = 0.0;
    for (arma::uword j = 0; j < F; ++j) {
      const arma::uword a = local[offset[j] + f.codes(i, j)];
      for (arma::uword k = 0; k < F; ++k) acc += G[c](a, local[offset[k] + f.codes(i, k)]);
    }
    h(i) = w(i) * acc;
  }
  return h;
}

bool nested_in_clusters(const Factors& f, arma::uword j, const arma::uvec& c) {
  std::vector<arma::uword> owner(f.n_levels[j], static_cast<arma::uword>(-1));
  for (arma::uword i = 0; i < c.n_elem; ++i) {
    arma::uword& o = owner[f.codes(i, j)];
    if (o == static_cast<arma::uword>(-1)) {
      o = c(i);
    } else if (o != c(i)) {
      return false;
    }
  }
  return true;
}

}  // namespace fe_detail

using namespace fe_detail;

// ---------------------------------------------------------------------------------------------
Factors Factors::from_codes(const arma::umat& codes) {
  check::require(codes.n_rows >= 1, "absorb", "needs at least one row");
  check::require(codes.n_cols >= 1, "absorb", "needs at least one factor (column)");
  Factors f;
  f.codes = codes;
  for (arma::uword j = 0; j < codes.n_cols; ++j) {
    const arma::uword L = codes.col(j).max() + 1;
    std::vector<char> seen(L, 0);
    for (arma::uword i = 0; i < codes.n_rows; ++i) seen[codes(i, j)] = 1;
    for (arma::uword l = 0; l < L; ++l) {
      if (!seen[l]) {
        std::ostringstream msg;
        msg << "absorb: factor " << j + 1 << " has no row with level code " << l
            << " (codes must be 0..L-1 with every level present; re-code the factor)";
        throw InvalidArgument(msg.str());
      }
    }
    f.n_levels.push_back(L);
  }
  return f;
}

arma::uword Factors::total_levels() const {
  arma::uword s = 0;
  for (arma::uword L : n_levels) s += L;
  return s;
}

WithinResult within_transform(const arma::mat& X, const Factors& f, const arma::vec& weights,
                              const AbsorbOptions& opt) {
  check_options(opt);
  check::require(X.n_rows == f.codes.n_rows, "X",
                 "has " + std::to_string(X.n_rows) + " rows but absorb has " +
                     std::to_string(f.codes.n_rows) + " (pass one label per row)");
  check::all_finite(X, "X");
  const arma::vec w = positive_weights_or_ones(weights, X.n_rows);
  const Sweeper sw(f, w, f.n_factors());
  WithinResult out;
  out.x = X;
  const int threads = resolve_threads(opt.n_threads);
  const long long p = static_cast<long long>(X.n_cols);
  std::vector<int> iters(X.n_cols, 0);
  std::vector<char> conv(X.n_cols, 1);
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic) num_threads(threads) if (p > 1)
#endif
  for (long long j = 0; j < p; ++j) {
    arma::vec v = X.col(static_cast<arma::uword>(j));
    bool c = true;
    iters[static_cast<size_t>(j)] = sw.solve(v, nullptr, opt, c);
    conv[static_cast<size_t>(j)] = c ? 1 : 0;
    out.x.col(static_cast<arma::uword>(j)) = v;
  }
  (void)threads;
  for (arma::uword j = 0; j < X.n_cols; ++j) {
    out.iterations = std::max(out.iterations, iters[j]);
    out.converged = out.converged && conv[j];
  }
  return out;
}

AbsorbedDF absorbed_df(const Factors& f, const AbsorbOptions& opt) {
  AbsorbedDF df;
  df.levels = f.total_levels();
  const arma::uword K = f.n_factors(), n = f.codes.n_rows;
  if (K == 1) return df;
  const Components comp = components12(f);
  df.components = comp.count;
  df.redundant = comp.count;
  if (K == 2) return df;
  arma::uword c = 0;
  for (arma::uword j = 2; j < K; ++j) c += f.n_levels[j];
  const double work = static_cast<double>(n) * c * c;
  if (c > opt.exact_df_max_columns || work > 1e10 || static_cast<double>(n) * c > 2e7) {
    df.redundant += K - 2;  // lower bound: each further factor repeats the constant
    df.exact = false;
    return df;
  }
  // rank of M_{D1 D2} [D3 ... DK] by pivoted QR of the transformed dummies.
  arma::mat Dm(n, c, arma::fill::zeros);
  arma::uword off = 0;
  for (arma::uword j = 2; j < K; ++j) {
    for (arma::uword i = 0; i < n; ++i) Dm(i, off + f.codes(i, j)) = 1.0;
    off += f.n_levels[j];
  }
  Factors f12;
  f12.codes = f.codes.cols(0, 1);
  f12.n_levels = {f.n_levels[0], f.n_levels[1]};
  AbsorbOptions o = opt;
  o.tol = std::min(opt.tol, 1e-12);
  const WithinResult m = within_transform(Dm, f12, arma::vec(), o);
  const double norm_max = std::sqrt(static_cast<double>(n));
  arma::mat A = m.x;
  std::vector<lapack_int> jpvt(c, 0);
  arma::vec tau;
  lapack::geqp3(A, jpvt, tau);
  arma::uword r = 0;
  const arma::uword kmax = std::min(n, c);
  while (r < kmax && std::abs(A(r, r)) > 1e-7 * norm_max) ++r;
  df.redundant += c - r;
  return df;
}

double absorbed_df_clustered(const Factors& f, const AbsorbedDF& df, const arma::umat& clusters) {
  check::require(clusters.n_rows == f.codes.n_rows, "clusters",
                 "must have one row per observation (as the absorbed factors)");
  double out = static_cast<double>(df.df_absorbed());
  for (arma::uword j = 0; j < f.n_factors(); ++j) {
    bool nested_any = false;
    for (arma::uword g = 0; g < clusters.n_cols && !nested_any; ++g) {
      nested_any = nested_in_clusters(f, j, clusters.col(g));
    }
    // fixest and pyfixest keep one parameter per nested factor (the constant its levels carry).
    if (nested_any) out -= static_cast<double>(f.n_levels[j]) - 1.0;
  }
  return std::max(out, 0.0);
}

std::vector<bool> singleton_rows(const arma::umat& codes) {
  const arma::uword n = codes.n_rows, K = codes.n_cols;
  std::vector<std::vector<arma::uword>> count(K);
  for (arma::uword j = 0; j < K; ++j) {
    count[j].assign(n == 0 ? 0 : codes.col(j).max() + 1, 0);
    for (arma::uword i = 0; i < n; ++i) ++count[j][codes(i, j)];
  }
  std::vector<bool> drop(n, false);
  // Passes until none is found: a row dropped for factor j lowers the counts of its levels of
  // the other factors, which can make another row a singleton.
  for (bool changed = true; changed;) {
    changed = false;
    for (arma::uword i = 0; i < n; ++i) {
      if (drop[i]) continue;
      bool single = false;
      for (arma::uword j = 0; j < K && !single; ++j) single = count[j][codes(i, j)] == 1;
      if (!single) continue;
      drop[i] = true;
      changed = true;
      for (arma::uword j = 0; j < K; ++j) --count[j][codes(i, j)];
    }
  }
  return drop;
}


}  // namespace attnreg
