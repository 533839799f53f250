// Least squares for tall designs in three passes over X (see ols_tall.hpp).
#include "attnreg/least_squares/ols_tall.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "attnreg/base/error.hpp"
#include "attnreg/detail/least_squares_internal.hpp"
#include "attnreg/solve/lapack.hpp"

extern "C" {
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work,
             const int* lwork, int* info);
void dtrsm_(const char* side, const char* uplo, const char* transa, const char* diag,
            const int* m, const int* n, const double* alpha, const double* a, const int* lda,
            double* b, const int* ldb);
void dsyrk_(const char* uplo, const char* trans, const int* n, const int* k, const double* alpha,
            const double* a, const int* lda, const double* beta, double* c, const int* ldc);
}

namespace attnreg {


namespace {

// Rows per panel: fixed (results do not depend on it varying), small enough that a panel of
// ~40 columns stays in L2.
constexpr arma::uword kPanel = 4096;
constexpr arma::uword kMinRows = 20000;
constexpr arma::uword kRowsPerColumn = 50;
constexpr double kRefineTol = 1e-13;
constexpr int kMaxRefine = 4;

// The problem as the passes see it: design column j of row i is 1 for the intercept, else X.
struct Problem {
  const StridedMatrix& X;
  const arma::vec& y;
  const arma::vec& w;  // empty: unweighted
  bool intercept;
  arma::uword q;       // design columns
  double d(arma::uword i, arma::uword j) const {
    if (intercept) return j == 0 ? 1.0 : X(i, j - 1);
    return X(i, j);
  }
  double sw(arma::uword i) const { return w.is_empty() ? 1.0 : std::sqrt(w(i)); }
};

// Pass 1: the (q+1) x (q+1) triangular factor of [W^{1/2} D, W^{1/2} y] by panels stacked
// under the running factor.
arma::mat tsqr(const Problem& P) {
  const arma::uword n = P.X.n_rows, q1 = P.q + 1;
  arma::mat R(q1, q1, arma::fill::zeros);
  arma::mat buf(q1 + kPanel, q1);
  arma::vec tau(q1);
  const int lda = static_cast<int>(buf.n_rows), nc = static_cast<int>(q1);
  int info = 0, lwork = -1;
  double wsize = 0.0;
  dgeqrf_(&lda, &nc, buf.memptr(), &lda, tau.memptr(), &wsize, &lwork, &info);
  lwork = std::max(static_cast<int>(wsize), nc);
  std::vector<double> work(static_cast<std::size_t>(lwork));
  for (arma::uword i0 = 0; i0 < n; i0 += kPanel) {
    const arma::uword m = std::min(n, i0 + kPanel) - i0;
    for (arma::uword c = 0; c < q1; ++c) {
      for (arma::uword a = 0; a < q1; ++a) buf(a, c) = a <= c ? R(a, c) : 0.0;
    }
    bool finite = true;
    for (arma::uword b = 0; b < m; ++b) {
      const arma::uword i = i0 + b;
      const double s = P.sw(i);
      for (arma::uword j = 0; j < P.q; ++j) {
        const double v = P.d(i, j);
        finite = finite && std::isfinite(v);
        buf(q1 + b, j) = s * v;
      }
      buf(q1 + b, P.q) = s * P.y(i);
    }
    if (!finite) throw InvalidArgument("X: contains NaN or infinite values (remove or impute them)");
    const int rows = static_cast<int>(q1 + m);
    dgeqrf_(&rows, &nc, buf.memptr(), &lda, tau.memptr(), work.data(), &lwork, &info);
    if (info != 0) throw NumericalError("ols_tall: dgeqrf failed");
    for (arma::uword c = 0; c < q1; ++c) {
      for (arma::uword a = 0; a <= c; ++a) R(a, c) = buf(a, c);
    }
  }
  return R;
}

// The kept columns in pivoted, scaled coordinates: design column index and 1 / scale.
struct Kept {
  std::vector<arma::uword> col;
  std::vector<double> inv_scale;
  arma::mat R11;  // r x r upper triangular
};

// One residual pass at x (pivoted, scaled coordinates): raw residuals e = y - D b in long
// double, g = A' W e (A = the kept scaled columns); with `meat`, also the HC meat of the scores
// Z = W^{1/2} A R11^{-1}.
struct PassOut {
  arma::vec e, g;
  arma::mat S;
  long double wss = 0.0L;
  arma::uword n_leverage_one = 0;  // HC2/HC3 rows left out (ls_detail::leverage_one_tol)
};

double hc_factor(const CovOptions& cov, double N, double dfres) {
  if (cov.type == CovType::HC1) return dfres > 0 ? std::sqrt(N / dfres) : kNaN;
  return 1.0;
}

PassOut residual_pass(const Problem& P, const Kept& K, const arma::vec& x, bool meat,
                      const CovOptions& cov, bool freq, double N, double dfres) {
  const arma::uword n = P.X.n_rows, r = K.col.size();
  PassOut out;
  out.e.set_size(n);
  std::vector<long double> g(r, 0.0L);
  if (meat) out.S.zeros(r, r);
  const bool lev = cov.type == CovType::HC2 || cov.type == CovType::HC3;
  const double lev_tol =
      lev && meat && r > 0
          ? ls_detail::leverage_one_tol(
                r, ls_detail::triangular_condition(
                       K.R11, arma::solve(arma::trimatu(K.R11), arma::eye(r, r))))
          : 0.0;
  const double f1 = hc_factor(cov, N, dfres);
  arma::mat A(kPanel, r);
  std::vector<long double> gp(r);
  std::vector<double> row(P.q), h(kPanel);
  std::vector<long double> xs(r);
  for (arma::uword c = 0; c < r; ++c) xs[c] = static_cast<long double>(x(c)) * K.inv_scale[c];
  for (arma::uword i0 = 0; i0 < n; i0 += kPanel) {
    const arma::uword m = std::min(n, i0 + kPanel) - i0;
    std::fill(gp.begin(), gp.end(), 0.0L);
    for (arma::uword b = 0; b < m; ++b) {
      const arma::uword i = i0 + b;
      for (arma::uword j = 0; j < P.q; ++j) row[j] = P.d(i, j);
      long double acc = P.y(i);
      for (arma::uword c = 0; c < r; ++c) {
        acc -= static_cast<long double>(row[K.col[c]]) * xs[c];
      }
      const double wi = P.w.is_empty() ? 1.0 : P.w(i);
      const long double we = acc * wi;
      for (arma::uword c = 0; c < r; ++c) gp[c] += static_cast<long double>(row[K.col[c]]) * we;
      out.e(i) = static_cast<double>(acc);
      out.wss += acc * we;
      if (meat) {
        const double s = std::sqrt(wi);
        for (arma::uword c = 0; c < r; ++c) A(b, c) = s * row[K.col[c]] * K.inv_scale[c];
      }
    }
    for (arma::uword c = 0; c < r; ++c) g[c] += gp[c] * K.inv_scale[c];
    if (!meat) continue;
    const int mm = static_cast<int>(m), nr = static_cast<int>(r), lda = static_cast<int>(A.n_rows);
    const int ldr = static_cast<int>(K.R11.n_rows);
    const double one = 1.0;
    const char side = 'R', uplo = 'U', trans = 'N', diag = 'N';
    dtrsm_(&side, &uplo, &trans, &diag, &mm, &nr, &one, K.R11.memptr(), &ldr, A.memptr(), &lda);
    // Scores z_i times omega_i^{1/2}: analytic weights (and none) w_i^{1/2} e_i, frequency
    // weights e_i with leverage h_i / w_i; HC2/HC3 divide by (1 - h_i)^{1/2} or (1 - h_i).
    std::fill(h.begin(), h.begin() + m, 0.0);
    if (lev) {
      for (arma::uword c = 0; c < r; ++c) {
        const double* z = A.colptr(c);
        for (arma::uword b = 0; b < m; ++b) h[b] += z[b] * z[b];
      }
    }
    for (arma::uword b = 0; b < m; ++b) {
      const arma::uword i = i0 + b;
      const double wi = P.w.is_empty() ? 1.0 : P.w(i);
      double s = (freq ? 1.0 : std::sqrt(wi)) * out.e(i) * f1;
      if (lev) {
        const double hi = freq ? (wi > 0.0 ? h[b] / wi : 0.0) : h[b];
        const double om = 1.0 - hi;
        if (om > lev_tol) {
          s /= cov.type == CovType::HC2 ? std::sqrt(om) : om;
        } else {  // leverage one: the 0/0 term is left out
          s = 0.0;
          ++out.n_leverage_one;
        }
      }
      h[b] = s;
    }
    for (arma::uword c = 0; c < r; ++c) {
      double* z = A.colptr(c);
      for (arma::uword b = 0; b < m; ++b) z[b] *= h[b];
    }
    const char lo = 'U', tr = 'T';
    const double beta = 1.0;
    dsyrk_(&lo, &tr, &nr, &mm, &one, A.memptr(), &lda, &beta, out.S.memptr(), &nr);
  }
  if (meat) out.S = arma::symmatu(out.S);
  out.g.set_size(r);
  for (arma::uword c = 0; c < r; ++c) out.g(c) = static_cast<double>(g[c]);
  return out;
}

arma::mat unpivot(const arma::mat& Cp, const OLSState& st, arma::uword q) {
  arma::mat C(q, q);
  C.fill(kNaN);
  for (arma::uword a = 0; a < Cp.n_rows; ++a) {
    const auto ja = static_cast<arma::uword>(st.pivot(a));
    for (arma::uword b = 0; b < Cp.n_cols; ++b) {
      const auto jb = static_cast<arma::uword>(st.pivot(b));
      C(ja, jb) = Cp(a, b) / (st.scale(ja) * st.scale(jb));
    }
  }
  return C;
}

arma::vec solve_normal(const arma::mat& R11, const arma::vec& g) {
  // R11' R11 d = g by two triangular solves.
  arma::vec u, d;
  if (!arma::solve(u, arma::trimatl(R11.t()), g, arma::solve_opts::no_approx) ||
      !arma::solve(d, arma::trimatu(R11), u, arma::solve_opts::no_approx)) {
    throw NumericalError("ols_tall: triangular solve failed (design numerically singular)");
  }
  return d;
}

// The coefficient table of OLS::inference(cov) from the tall fit (same formulas: t, p with
// df_residual degrees of freedom, R^2 and adjusted R^2 accumulated in long double).
void tall_inference(TallOLS& out, const arma::vec& y, const arma::vec& weights, bool intercept,
                    const CovOptions& cov, double N, double dfres) {
  Inference& inf = out.inf;
  inf.cov_type = cov.type;
  inf.df_residual = dfres;
  inf.df_inference = dfres;
  inf.estimate = arma::mat(out.coef);
  inf.std_error = arma::mat(out.std_errors);
  inf.sigma = arma::rowvec{std::sqrt(out.sigma2)};
  ls_detail::finish_inference(inf, arma::mat(y), arma::mat(out.residuals), weights, intercept, N);
}

}  // namespace

bool ols_tall_applies(arma::uword n, arma::uword q, const OLSOptions& opt, const CovOptions& cov) {
  const bool hc = cov.type == CovType::Classical || cov.type == CovType::HC0 ||
                  cov.type == CovType::HC1 || cov.type == CovType::HC2 || cov.type == CovType::HC3;
  const double work = static_cast<double>(n) * q * q;
  return hc && q >= 1 && n >= kMinRows && n >= kRowsPerColumn * q &&
         opt.precision != Precision::Extended &&
         !(opt.precision == Precision::Auto && work <= ls_detail::kExtendedAlways);
}

TallOLS ols_tall(const StridedMatrix& X, const arma::vec& y, const arma::vec& weights,
                 const OLSOptions& opt, const CovOptions& cov) {
  const arma::uword n = X.n_rows;
  const arma::uword q = X.n_cols + (opt.fit_intercept ? 1 : 0);
  check::require(ols_tall_applies(n, q, opt, cov), "X",
                 "is not a tall design this path covers (use OLS.fit)");
  check::require(y.n_elem == n, "y", "must have one value per row of X");
  check::all_finite(y, "y");
  const bool weighted = !weights.is_empty();
  if (weighted) check_weights(weights, n, "weights");
  const bool freq = weighted && opt.weight_type == WeightType::Frequency;
  if (freq) check_frequency_weights(weights);
  const Problem P{X, y, weights, opt.fit_intercept, q};
  TallOLS out;

  const arma::mat Rfull = tsqr(P);
  OLSState st;
  double min_ratio = 1.0, r00 = 0.0;
  const arma::uword r = ls_detail::factor_design(Rfull.submat(0, 0, q - 1, q - 1), opt, st,
                                                 min_ratio, r00);
  const double work = static_cast<double>(n) * q * q;
  if (r00 == 0.0 || r == 0) return out;
  if (opt.precision == Precision::Auto && min_ratio < ls_detail::kIllCondPivot &&
      work <= ls_detail::kExtendedIllCond) {
    return out;  // OLS::fit would refine in extended precision
  }
  Kept K;
  for (arma::uword c = 0; c < r; ++c) {
    K.col.push_back(static_cast<arma::uword>(st.pivot(c)));
    K.inv_scale.push_back(1.0 / st.scale(K.col.back()));
  }
  K.R11 = arma::trimatu(st.qr.submat(0, 0, r - 1, r - 1));
  // Initial solution from the factor: x = R11^{-1} (Q2' Q' W^{1/2} y)_{1:r}.
  arma::mat c = Rfull.submat(0, q, q - 1, q);
  lapack::ormqr(st.qr, st.tau, r, c, true);
  arma::vec x;
  if (!arma::solve(x, arma::trimatu(K.R11), arma::vec(c.col(0).head(r)), arma::solve_opts::no_approx)) {
    throw NumericalError("ols_tall: triangular solve failed (design numerically singular)");
  }

  double N = static_cast<double>(n);
  if (weighted) {
    long double s = 0.0L;
    for (arma::uword i = 0; i < n; ++i) s += freq ? weights(i) : (weights(i) > 0.0 ? 1.0 : 0.0);
    N = static_cast<double>(s);
  }
  const double dfres = N - static_cast<double>(r);
  const bool robust = cov.type != CovType::Classical;
  PassOut last;
  bool settled = false;
  for (int step = 0; step <= kMaxRefine; ++step) {
    last = residual_pass(P, K, x, robust && step >= 1, cov, freq, N, dfres);
    const arma::vec d = solve_normal(K.R11, last.g);
    const bool small = arma::abs(d).max() <= kRefineTol * arma::abs(x).max();
    out.refinement_steps = step;
    if (step >= 1 && small) {
      settled = true;
      break;
    }
    x += d;
  }
  if (!settled) return out;  // refinement did not settle: OLS::fit's path

  st.rank = static_cast<double>(r);
  out.rank = r;
  out.pivot = st.pivot;
  out.coef.set_size(q);
  out.coef.fill(kNaN);
  for (arma::uword a = 0; a < r; ++a) out.coef(K.col[a]) = x(a) * K.inv_scale[a];
  out.residuals = std::move(last.e);
  out.sigma2 = dfres > 0 ? static_cast<double>(last.wss / dfres) : kNaN;
  const arma::mat Rinv = arma::solve(arma::trimatu(K.R11), arma::eye(r, r));
  const arma::mat Cp = robust ? arma::mat(Rinv * last.S * Rinv.t())
                              : arma::mat(Rinv * Rinv.t() * out.sigma2);
  out.cov = unpivot(Cp, st, q);
  out.std_errors = arma::sqrt(out.cov.diag());
  tall_inference(out, y, weights, opt.fit_intercept, cov, N, dfres);
  out.inf.n_leverage_one = last.n_leverage_one;
  out.done = true;
  return out;
}

}  // namespace attnreg
