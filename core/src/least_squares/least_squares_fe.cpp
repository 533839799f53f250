// Least squares with absorbed fixed effects: see attnreg/least_squares/least_squares_fe.hpp.
#include "attnreg/least_squares/least_squares_fe.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>

#include "attnreg/base/error.hpp"
#include "attnreg/solve/lapack.hpp"
#include "attnreg/base/runtime.hpp"

namespace attnreg {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Below this multiple of the column's largest value a change is rounding, not progress.
constexpr double kRoundingFloor = 1e-13;

// Weighted group-mean sweeps over the factors (Gaure 2013's Kaczmarz step).
struct Sweeper {
  const Factors& f;
  const arma::vec& w;  // n weights (ones when unweighted)
  std::vector<arma::vec> inv_wsum;

  Sweeper(const Factors& f_, const arma::vec& w_, arma::uword n_factors) : f(f_), w(w_) {
    for (arma::uword j = 0; j < n_factors; ++j) {
      arma::vec s(f.n_levels[j], arma::fill::zeros);
      const arma::uword* c = f.codes.colptr(j);
      for (arma::uword i = 0; i < w.n_elem; ++i) s(c[i]) += w(i);
      inv_wsum.push_back(1.0 / s);
    }
  }
  arma::uword k() const { return inv_wsum.size(); }

  // v <- T v (one sweep); alpha[j] += the means removed for factor j (when alpha is given).
  void sweep(arma::vec& v, std::vector<arma::vec>* alpha, arma::vec& means) const {
    const arma::uword n = v.n_elem;
    for (arma::uword j = 0; j < k(); ++j) {
      const arma::uword* c = f.codes.colptr(j);
      means.zeros(f.n_levels[j]);
      for (arma::uword i = 0; i < n; ++i) means(c[i]) += w(i) * v(i);
      means %= inv_wsum[j];
      for (arma::uword i = 0; i < n; ++i) v(i) -= means(c[i]);
      if (alpha) (*alpha)[j] += means;
    }
  }

  double wnorm(const arma::vec& v) const {
    double s = 0.0;
    for (arma::uword i = 0; i < v.n_elem; ++i) s += w(i) * v(i) * v(i);
    return std::sqrt(s);
  }

  // v <- M_D v by accelerated sweeps; returns the steps taken, sets converged.
  int solve(arma::vec& v, std::vector<arma::vec>* alpha, const AbsorbOptions& opt,
            bool& converged) const {
    arma::vec means;
    converged = true;
    if (alpha) {
      alpha->clear();
      for (arma::uword j = 0; j < k(); ++j) alpha->push_back(arma::zeros(f.n_levels[j]));
    }
    if (k() == 1) {  // exact in one pass
      sweep(v, alpha, means);
      return 1;
    }
    const arma::uword n = v.n_elem;
    const double norm0 = arma::abs(v).max();
    if (norm0 == 0.0) return 0;
    const double floor = kRoundingFloor * norm0;
    double ref = -1.0, prev = std::numeric_limits<double>::infinity();
    bool small_before = false;
    std::vector<arma::vec> a1;
    arma::vec x0(n), x1(n);
    for (int it = 1; it <= opt.max_iter; ++it) {
      x0 = v;
      sweep(v, alpha, means);
      x1 = v;
      if (alpha) a1 = *alpha;
      if (ref < 0.0) ref = arma::abs(x1).max();
      sweep(v, alpha, means);
      // One pass: the largest change of the last plain sweep (dgx = v - x1) and the Irons-Tuck
      // inner products with d2 = dgx - (x1 - x0).
      double delta = 0.0, num = 0.0, den = 0.0;
      for (arma::uword i = 0; i < n; ++i) {
        const double dgx = v(i) - x1(i);
        const double d2 = dgx - (x1(i) - x0(i));
        delta = std::max(delta, std::abs(dgx));
        num += w(i) * dgx * d2;
        den += w(i) * d2 * d2;
      }
      const double rate = delta / prev;
      // Twice in a row: one rate estimate from an extrapolated step can be optimistic.
      const bool small = rate < 1.0 && delta <= opt.tol * (1.0 - rate) * ref;
      if (delta <= floor || (small && small_before)) return it;
      small_before = small;
      prev = delta;
      if (opt.accelerate && den > 0.0) {  // Irons-Tuck: x2 - c (x2 - x1), c = <dgx,d2>/<d2,d2>
        const double c = num / den;
        if (std::isfinite(c)) {
          for (arma::uword i = 0; i < n; ++i) v(i) -= c * (v(i) - x1(i));
          if (alpha) {
            for (arma::uword j = 0; j < k(); ++j) (*alpha)[j] -= c * ((*alpha)[j] - a1[j]);
          }
        }
      }
    }
    converged = false;
    return opt.max_iter;
  }
};

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

// Union-find over the levels of factors 1 and 2 (factor-2 level l is node L1 + l).
struct Components {
  std::vector<arma::uword> comp_of_f1, comp_of_f2;  // component id per level
  arma::uword count = 0;
};

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

}  // namespace

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
      std::vector<arma::uword> owner(f.n_levels[j], static_cast<arma::uword>(-1));
      bool nested = true;
      for (arma::uword i = 0; i < clusters.n_rows && nested; ++i) {
        arma::uword& o = owner[f.codes(i, j)];
        if (o == static_cast<arma::uword>(-1)) {
          o = clusters(i, g);
        } else if (o != clusters(i, g)) {
          nested = false;
        }
      }
      nested_any = nested;
    }
    if (nested_any) out -= static_cast<double>(f.n_levels[j]);
  }
  return std::max(out, 0.0);
}

// ---------------------------------------------------------------------------------------------
void AbsorbedOLS::require_fitted(const char* what) const {
  if (!fitted_flag_) {
    throw InvalidArgument(std::string(what) + ": the model is not fitted yet (call fit first)");
  }
}

arma::uvec AbsorbedOLS::kept_columns() const {
  std::vector<arma::uword> k;
  for (arma::uword j = 0; j < absorbed_.size(); ++j) {
    if (!absorbed_[j]) k.push_back(j);
  }
  return arma::uvec(k);
}

AbsorbedOLS& AbsorbedOLS::fit(const arma::mat& X, const arma::mat& Y, const arma::umat& factors,
                              const arma::vec& weights) {
  check_options(opt_);
  check::require(X.n_rows >= 1, "X", "needs at least one row");
  check::require(X.n_cols >= 1, "X",
                 "needs at least one regressor with absorbed fixed effects (the fixed effects "
                 "take the place of the intercept)");
  check::require(Y.n_cols >= 1, "y", "needs at least one column (one output)");
  check::rows_match(Y, X.n_rows, "y", "X");
  check::require(factors.n_rows == X.n_rows, "absorb",
                 "has " + std::to_string(factors.n_rows) + " rows but X has " +
                     std::to_string(X.n_rows) + " (pass one label per row)");
  check::all_finite(X, "X");
  check::all_finite(Y, "y");
  fitted_flag_ = false;
  f_ = Factors::from_codes(factors);
  w_ = positive_weights_or_ones(weights, X.n_rows);
  weighted_ = !weights.is_empty();
  df_ = absorbed_df(f_, opt_);
  X_ = X;
  y_ = Y;
  const arma::uword n = X.n_rows, p = X.n_cols, k = Y.n_cols;

  const WithinResult wx = within_transform(arma::join_rows(X, Y), f_, w_, opt_);
  iterations_ = wx.iterations;
  converged_ = wx.converged;
  const arma::mat Xt = wx.x.cols(0, p - 1);
  ytil_ = wx.x.cols(p, p + k - 1);

  const Sweeper sw(f_, w_, f_.n_factors());
  absorbed_.assign(p, false);
  for (arma::uword j = 0; j < p; ++j) {
    const double before = sw.wnorm(X.col(j)), after = sw.wnorm(Xt.col(j));
    absorbed_[j] = !(after > opt_.rank_tol * before);
  }
  const arma::uvec kept = kept_columns();
  const arma::vec sw_root = arma::sqrt(w_);
  coef_.set_size(p, k);
  coef_.fill(kNaN);
  rank_ = 0;
  inner_fitted_ = false;
  arma::mat resid_t = ytil_;  // M_D y - M_D X b
  if (!kept.is_empty()) {
    OLSOptions io;
    io.fit_intercept = false;
    io.rank_tol = opt_.rank_tol;
    io.precision = opt_.precision;
    io.n_threads = opt_.n_threads;
    inner_ = OLS(io);
    arma::mat Xs = Xt.cols(kept);
    Xs.each_col() %= sw_root;
    arma::mat ys = ytil_;
    ys.each_col() %= sw_root;
    inner_.fit(Xs, ys);
    inner_fitted_ = true;
    rank_ = inner_.rank();
    coef_.rows(kept) = inner_.coefficients();
    resid_t = inner_.residuals();
    resid_t.each_col() /= sw_root;
  }
  fitted_ = Y - resid_t;

  // Fixed effects from the target (y - X b) - e, which lies in span(D).
  arma::mat b0 = coef_;
  b0.replace(kNaN, 0.0);
  alpha_ = fe_values(Y - X * b0);
  (void)n;
  fitted_flag_ = true;
  return *this;
}

std::vector<arma::mat> AbsorbedOLS::fe_values(const arma::mat& T) const {
  const arma::uword K = f_.n_factors(), c = T.n_cols;
  std::vector<arma::mat> out;
  for (arma::uword j = 0; j < K; ++j) out.emplace_back(f_.n_levels[j], c);
  const Sweeper sw(f_, w_, K);
  Components comp;
  if (K >= 2) comp = components12(f_);
  const int threads = resolve_threads(opt_.n_threads);
  const long long cc = static_cast<long long>(c);
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic) num_threads(threads) if (cc > 1)
#endif
  for (long long col = 0; col < cc; ++col) {
    arma::vec v = T.col(static_cast<arma::uword>(col));
    std::vector<arma::vec> a;
    bool conv = true;
    sw.solve(v, &a, opt_, conv);
    if (K >= 2) {
      // Reference: the first level of factor 2 in each component is 0; level 0 of factors
      // 3..K is 0; the constants move into factor 1.
      std::vector<double> shift(comp.count, kNaN);
      for (arma::uword l = 0; l < f_.n_levels[1]; ++l) {
        double& s = shift[comp.comp_of_f2[l]];
        if (std::isnan(s)) s = a[1](l);
      }
      for (arma::uword l = 0; l < f_.n_levels[1]; ++l) a[1](l) -= shift[comp.comp_of_f2[l]];
      for (arma::uword l = 0; l < f_.n_levels[0]; ++l) a[0](l) += shift[comp.comp_of_f1[l]];
      for (arma::uword j = 2; j < K; ++j) {
        const double s = a[j](0);
        a[j] -= s;
        a[0] += s;
      }
    }
    for (arma::uword j = 0; j < K; ++j) out[j].col(static_cast<arma::uword>(col)) = a[j];
  }
  (void)threads;
  return out;
}

std::vector<bool> AbsorbedOLS::aliased() const {
  std::vector<bool> out(coef_.n_rows);
  for (arma::uword j = 0; j < coef_.n_rows; ++j) out[j] = std::isnan(coef_(j, 0));
  return out;
}

double AbsorbedOLS::df_residual() const {
  require_fitted("df_residual");
  const double n_eff =
      opt_.frequency_weights ? arma::accu(w_) : static_cast<double>(y_.n_rows);
  return n_eff - static_cast<double>(rank_) - static_cast<double>(df_.df_absorbed());
}

arma::rowvec AbsorbedOLS::sigma2() const {
  require_fitted("sigma2");
  const double df = df_residual();
  const arma::mat e = residuals();
  arma::rowvec s(e.n_cols);
  const Sweeper sw(f_, w_, 0);
  for (arma::uword c = 0; c < e.n_cols; ++c) {
    const double nrm = sw.wnorm(e.col(c));
    s(c) = df > 0 ? nrm * nrm / df : kNaN;
  }
  return s;
}

arma::rowvec AbsorbedOLS::r_squared_within() const {
  require_fitted("r_squared_within");
  const arma::mat e = residuals();
  const Sweeper sw(f_, w_, 0);
  arma::rowvec r(e.n_cols);
  for (arma::uword c = 0; c < e.n_cols; ++c) {
    const double rss = sw.wnorm(e.col(c)), tss = sw.wnorm(ytil_.col(c));
    r(c) = tss > 0 ? 1.0 - (rss / tss) * (rss / tss) : kNaN;
  }
  return r;
}

arma::rowvec AbsorbedOLS::r_squared() const {
  require_fitted("r_squared");
  const arma::mat e = residuals();
  const Sweeper sw(f_, w_, 0);
  arma::rowvec r(e.n_cols);
  const double wsum = arma::accu(w_);
  for (arma::uword c = 0; c < e.n_cols; ++c) {
    const double mean = arma::dot(w_, y_.col(c)) / wsum;
    const double rss = sw.wnorm(e.col(c)), tss = sw.wnorm(y_.col(c) - mean);
    r(c) = tss > 0 ? 1.0 - (rss / tss) * (rss / tss) : kNaN;
  }
  return r;
}

arma::rowvec AbsorbedOLS::adj_r_squared() const {
  const arma::rowvec r2 = r_squared();
  const double df = df_residual();
  const double n_eff = opt_.frequency_weights ? arma::accu(w_) : static_cast<double>(y_.n_rows);
  arma::rowvec out(r2.n_elem);
  for (arma::uword c = 0; c < r2.n_elem; ++c) {
    out(c) = df > 0 ? 1.0 - (1.0 - r2(c)) * ((n_eff - 1.0) / df) : kNaN;
  }
  return out;
}

arma::mat AbsorbedOLS::std_errors(const CovOptions& cov, Inference* fix) const {
  require_fitted("std_errors");
  const arma::uword p = coef_.n_rows, k = coef_.n_cols;
  arma::mat se(p, k);
  se.fill(kNaN);
  if (!inner_fitted_ || rank_ == 0) return se;
  CovOptions inner_cov;
  const double factor = inner_scaling(cov, inner_cov);
  if (cov.type != CovType::HC2 && cov.type != CovType::HC3 && cov.type != CovType::CR2 &&
      !frequency_hc(cov)) {
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
  const double n_eff = opt_.frequency_weights ? arma::accu(w_) : n;
  const double inner_df = n - static_cast<double>(rank_);
  inner = cov;
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
    case CovType::CR1: {
      // Stata's small-sample factor G/(G-1) (N-1)/(N-K) with G the fewest clusters over the
      // dimensions and K = rank + the absorbed parameters that are not nested in a cluster
      // (fixest's ssc(adj = TRUE, fixef.K = "nested", cluster.adj = TRUE), reghdfe).
      inner.type = CovType::CR0;
      double G = 0;
      for (arma::uword d = 0; d < cov.clusters.n_cols; ++d) {
        const double g = static_cast<double>(arma::uvec(arma::unique(cov.clusters.col(d))).n_elem);
        G = d == 0 ? g : std::min(G, g);
      }
      const double K = static_cast<double>(rank_) + absorbed_df_clustered(f_, df_, cov.clusters);
      const double denom = n_eff - K;
      return denom > 0 && G > 1 ? G / (G - 1.0) * (n_eff - 1.0) / denom : kNaN;
    }
    default:
      return kNaN;  // HC2, HC3, CR2: not a scaling of the inner fit's covariance
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
      Vk = inner_.covariance(inner_cov, output) * factor;
      break;
    case CovType::CR2:
      throw InvalidArgument(
          "cov_type: CR2 (Bell-McCaffrey) with absorbed fixed effects needs the leverage of the "
          "dummies and is not available; use CR1 (\"cluster\") or CR0");
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
    for (arma::uword d = 0; d < cov.clusters.n_cols; ++d) {
      const arma::uword g = arma::uvec(arma::unique(cov.clusters.col(d))).n_elem;
      out.n_clusters.push_back(g);
      G = d == 0 ? static_cast<double>(g) : std::min(G, static_cast<double>(g));
    }
    out.df_inference = G - 1.0;
  }
  out.estimate = coef_;
  out.std_error = std_errors(cov, &out);
  out.t_value = out.estimate / out.std_error;
  out.p_value.set_size(out.t_value.n_rows, out.t_value.n_cols);
  for (arma::uword i = 0; i < out.t_value.n_elem; ++i) {
    const double t = out.t_value(i);
    out.p_value(i) = std::isfinite(t) && out.df_residual > 0 && out.df_inference > 0
                         ? 2.0 * student_t_sf(std::fabs(t), out.df_inference)
                         : kNaN;
  }
  out.r_squared = r_squared();
  out.adj_r_squared = adj_r_squared();
  out.sigma = arma::sqrt(sigma2());
  return out;
}

void AbsorbedOLS::check_new(const arma::mat& X_new, const arma::umat& codes_new,
                            const char* what) const {
  require_fitted(what);
  if (X_new.n_cols != X_.n_cols) {
    std::ostringstream msg;
    msg << "X: has " << X_new.n_cols << " columns but the model was fitted with " << X_.n_cols
        << " (pass the same columns as in fit)";
    throw InvalidArgument(msg.str());
  }
  check::all_finite(X_new, "X");
  check::require(codes_new.n_rows == X_new.n_rows && codes_new.n_cols == f_.n_factors(), "absorb",
                 "must have one row per row of X and one column per absorbed factor (" +
                     std::to_string(f_.n_factors()) + ")");
  for (arma::uword j = 0; j < f_.n_factors(); ++j) {
    for (arma::uword i = 0; i < codes_new.n_rows; ++i) {
      if (codes_new(i, j) >= f_.n_levels[j]) {
        std::ostringstream msg;
        msg << "absorb: factor " << j + 1 << " row " << i + 1 << " has level code "
            << codes_new(i, j) << ", not seen in fit (levels 0.." << f_.n_levels[j] - 1
            << "); a fixed effect is known only for levels in the training data";
        throw InvalidArgument(msg.str());
      }
    }
  }
}

arma::mat AbsorbedOLS::predict(const arma::mat& X_new, const arma::umat& codes_new) const {
  check_new(X_new, codes_new, "predict");
  arma::mat b0 = coef_;
  b0.replace(kNaN, 0.0);
  arma::mat out = X_new * b0;
  for (arma::uword j = 0; j < f_.n_factors(); ++j) {
    for (arma::uword i = 0; i < out.n_rows; ++i) out.row(i) += alpha_[j].row(codes_new(i, j));
  }
  return out;
}

arma::mat AbsorbedOLS::fe_operator_rows(const arma::umat& codes_new) const {
  const arma::uword n = y_.n_rows, m = codes_new.n_rows, K = f_.n_factors();
  arma::mat P(m, n, arma::fill::zeros);
  if (K == 1) {
    arma::vec wsum(f_.n_levels[0], arma::fill::zeros);
    for (arma::uword i = 0; i < n; ++i) wsum(f_.codes(i, 0)) += w_(i);
    // Group members per level, then each new row copies its group's weights.
    for (arma::uword r = 0; r < m; ++r) {
      const arma::uword g = codes_new(r, 0);
      for (arma::uword i = 0; i < n; ++i) {
        if (f_.codes(i, 0) == g) P(r, i) = w_(i) / wsum(g);
      }
    }
    return P;
  }
  // Columns of the fixed-effect operator: alpha of each unit vector, in blocks.
  constexpr arma::uword kBlock = 256;
  for (arma::uword i0 = 0; i0 < n; i0 += kBlock) {
    const arma::uword i1 = std::min(n, i0 + kBlock);
    arma::mat E(n, i1 - i0, arma::fill::zeros);
    for (arma::uword i = i0; i < i1; ++i) E(i, i - i0) = 1.0;
    const std::vector<arma::mat> a = fe_values(E);
    for (arma::uword r = 0; r < m; ++r) {
      arma::rowvec row(i1 - i0, arma::fill::zeros);
      for (arma::uword j = 0; j < K; ++j) row += a[j].row(codes_new(r, j));
      P.submat(r, i0, r, i1 - 1) = row;
    }
  }
  return P;
}

arma::mat AbsorbedOLS::attention_weights(const arma::mat& X_new,
                                         const arma::umat& codes_new) const {
  check_new(X_new, codes_new, "attention_weights");
  arma::mat A = fe_operator_rows(codes_new);
  if (inner_fitted_) {
    const arma::uvec kept = kept_columns();
    const arma::mat Z = X_new.cols(kept) - A * X_.cols(kept);
    arma::mat B = inner_.attention_weights(Z);
    B.each_row() %= arma::sqrt(w_).t();
    A += B;
  }
  return A;
}

}  // namespace attnreg
