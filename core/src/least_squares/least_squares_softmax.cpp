// Attention regression (Goulet Coulombe 2025, arXiv:2504.09663, eq. 28): see
// least_squares_softmax.hpp.
#include "attnreg/least_squares/least_squares_softmax.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

#include "attnreg/base/error.hpp"
#include "attnreg/detail/least_squares_internal.hpp"
#include "attnreg/solve/lbfgs.hpp"
#include "attnreg/base/runtime.hpp"

// One row of the objective with Google Highway: softmax_rows-inl.hpp is compiled once per SIMD
// target (hwy/foreach_target.h) and HWY_DYNAMIC_DISPATCH picks the best for the running CPU.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "attnreg/detail/softmax_rows-inl.hpp"
#include <hwy/foreach_target.h>  // must come before highway.h
#include <hwy/highway.h>
#include "attnreg/detail/softmax_rows-inl.hpp"

namespace attnreg {

HWY_EXPORT(SoftmaxRow);

namespace {

inline double softmax_row(const detail::SoftmaxRowArgs& a, std::size_t i, double* w, double* g,
                          double* r, double* dkq, double* dkk) {
  return HWY_DYNAMIC_DISPATCH(SoftmaxRow)(a, i, w, g, r, dkq, dkk);
}

// Row blocks: at most kMaxBlocks of them, so per-block gradient buffers stay O(n rank) in total.
constexpr arma::uword kMaxBlocks = 64;
constexpr arma::uword kMinBlock = 32;

// Softmax rows of S (b x n) in place, with entry (i, mask_col(i)) excluded when masking.
void softmax_rows(arma::mat& S, arma::uword row0, bool mask_self) {
  const arma::uword b = S.n_rows, n = S.n_cols;
  for (arma::uword i = 0; i < b; ++i) {
    const arma::uword self = row0 + i;
    double mx = -std::numeric_limits<double>::infinity();
    for (arma::uword j = 0; j < n; ++j) {
      if (mask_self && j == self) continue;
      mx = std::max(mx, S(i, j));
    }
    double z = 0.0;
    for (arma::uword j = 0; j < n; ++j) {
      const double e = (mask_self && j == self) ? 0.0 : std::exp(S(i, j) - mx);
      S(i, j) = e;
      z += e;
    }
    S.row(i) /= z;
  }
}

// Box-Muller on a fully specified engine, so starts are identical on every platform.
double std_normal(std::mt19937_64& eng) {
  const double u1 = (static_cast<double>(eng() >> 11) + 0.5) * 0x1.0p-53;
  const double u2 = (static_cast<double>(eng() >> 11) + 0.5) * 0x1.0p-53;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586476925 * u2);
}

// K = D W with every entry a plain dot product in a fixed order: BLAS may split the work
// differently for different thread counts, and predictions must not depend on them.
arma::mat fixed_order_product(const arma::mat& D, const arma::mat& W) {
  const arma::uword n = D.n_rows, q = D.n_cols, L = W.n_cols;
  arma::mat K(n, L, arma::fill::zeros);
  for (arma::uword l = 0; l < L; ++l) {
    double* kl = K.colptr(l);
    for (arma::uword a = 0; a < q; ++a) {
      const double w = W(a, l);
      const double* da = D.colptr(a);
      for (arma::uword i = 0; i < n; ++i) kl[i] += da[i] * w;
    }
  }
  return K;
}

// Softmax attention of query rows Kq (m x L) over key rows Kk (n x L) applied to Y (n x k), row
// by row with fixed-order sums (identical for any thread count); mask_self skips key i for
// query i (leave-self-out on the training rows).
void attend(const arma::mat& Kq, const arma::mat& Kk, const arma::mat& Y, bool mask_self,
            arma::mat& out, int n_threads) {
  const arma::uword m = Kq.n_rows, n = Kk.n_rows, L = Kk.n_cols, k = Y.n_cols;
  out.set_size(m, k);
  const arma::mat KkT = Kk.t();  // L x n: key j contiguous
  const int threads = resolve_threads(n_threads);
  (void)threads;
#ifdef _OPENMP
#pragma omp parallel num_threads(threads) if (m > 16)
#endif
  {
    std::vector<double> e(n);
    std::vector<double> acc(k);
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
    for (long long ii = 0; ii < static_cast<long long>(m); ++ii) {
      const auto i = static_cast<arma::uword>(ii);
      double mx = -std::numeric_limits<double>::infinity();
      for (arma::uword j = 0; j < n; ++j) {
        const double* kj = KkT.colptr(j);
        double s = 0.0;
        for (arma::uword l = 0; l < L; ++l) s += Kq(i, l) * kj[l];
        e[j] = s;
        if (!(mask_self && j == i)) mx = std::max(mx, s);
      }
      double z = 0.0;
      std::fill(acc.begin(), acc.end(), 0.0);
      for (arma::uword j = 0; j < n; ++j) {
        const double w = (mask_self && j == i) ? 0.0 : std::exp(e[j] - mx);
        z += w;
        for (arma::uword c = 0; c < k; ++c) acc[c] += w * Y(j, c);
      }
      for (arma::uword c = 0; c < k; ++c) out(i, c) = acc[c] / z;
    }
  }
}

}  // namespace

double attention_regression_objective(const arma::mat& D, const arma::mat& Y, const arma::mat& W,
                                      arma::mat* grad, int n_threads) {
  const arma::uword n = D.n_rows, k = Y.n_cols, L = W.n_cols;
  const int threads = resolve_threads(n_threads);
  // Every sum below runs in a fixed order inside one row (softmax_rows-inl.hpp: lane-wise, then
  // the lanes), blocks of rows are fixed by n alone, and their gradient shares are combined in
  // block order, so the objective and gradient are bit-identical for any number of threads
  // (BLAS calls split their sums differently by thread count, which moved the optimiser).
  using detail::SoftmaxRowArgs;
  const arma::uword np = (n + SoftmaxRowArgs::pad - 1) / SoftmaxRowArgs::pad * SoftmaxRowArgs::pad;
  arma::mat K(np, L, arma::fill::zeros), Yp(np, k, arma::fill::zeros);  // zero-padded rows
  K.head_rows(n) = fixed_order_product(D, W);  // n x L: queries = keys
  Yp.head_rows(n) = Y;
  SoftmaxRowArgs args;
  args.n = n;
  args.np = np;
  args.L = L;
  args.k = k;
  args.K = K.memptr();
  args.Y = Yp.memptr();
  args.c = 2.0 / (static_cast<double>(n) * k);
  const arma::uword bsize = std::max(kMinBlock, (n + kMaxBlocks - 1) / kMaxBlocks);
  const arma::uword nblocks = (n + bsize - 1) / bsize;
  arma::vec loss_part(nblocks, arma::fill::zeros);
  arma::mat dK_query;  // n x L, rows written by their own block
  arma::cube dK_key;   // np x L x nblocks, summed in block order afterwards
  arma::mat dK;
  if (grad) {
    dK_query.set_size(n, L);
    dK_key.set_size(np, L, nblocks);
    dK.set_size(n, L);
  }
  // One parallel region per evaluation: the row blocks (static schedule; each block zeroes and
  // fills its own slice of dK_key), then, after the barrier, the in-order sum of the slices
  // over row ranges.
#ifdef _OPENMP
#pragma omp parallel num_threads(threads) if (nblocks > 1 && n > 256)
#endif
  {
    std::vector<double> a(np), g(np), r(k), dkq(L);
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
    for (long long bb = 0; bb < static_cast<long long>(nblocks); ++bb) {
      const auto b = static_cast<arma::uword>(bb);
      const arma::uword i0 = b * bsize, i1 = std::min(n, i0 + bsize);
      double* dkk = nullptr;
      if (grad) {
        dK_key.slice(b).zeros();
        dkk = dK_key.slice(b).memptr();
      }
      double loss = 0.0;
      for (arma::uword i = i0; i < i1; ++i) {
        loss += softmax_row(args, i, a.data(), g.data(), r.data(), grad ? dkq.data() : nullptr,
                            dkk);
        if (grad)
          for (arma::uword l = 0; l < L; ++l) dK_query(i, l) = dkq[l];
      }
      loss_part(b) = loss;
    }
    if (grad) {
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
      for (long long ii = 0; ii < static_cast<long long>(n); ++ii) {
        const auto i = static_cast<arma::uword>(ii);
        for (arma::uword l = 0; l < L; ++l) {
          double v = dK_query(i, l);
          for (arma::uword b = 0; b < nblocks; ++b) v += dK_key(i, l, b);
          dK(i, l) = v;
        }
      }
    }
  }
  if (grad) *grad = fixed_order_product(D.t(), dK);  // D' dK, q x L
  double total = 0.0;
  for (arma::uword b = 0; b < nblocks; ++b) total += loss_part(b);
  return total / (static_cast<double>(n) * k);
}

void AttentionRegression::require_fitted(const char* what) const {
  if (!fitted_flag_) {
    throw InvalidArgument(std::string(what) + ": the model is not fitted yet (call fit first)");
  }
}

void AttentionRegression::check_new_x(const arma::mat& X_new, const char* what) const {
  require_fitted(what);
  ls_detail::check_new_x_columns(X_new, mean_.n_elem);
}

arma::mat AttentionRegression::standardized_design(const arma::mat& X) const {
  arma::mat Z = X.each_row() - mean_;
  Z.each_row() /= sd_;
  if (!opt_.fit_intercept) return Z;
  return arma::join_horiz(arma::ones(X.n_rows, 1), Z);
}

AttentionRegression& AttentionRegression::fit(const arma::mat& X, const arma::mat& Y) {
  check::require(opt_.rank >= 1, "rank", "must be >= 1 (the rank of Omega = W W')");
  check::require(opt_.n_starts >= 1, "n_starts", "must be >= 1");
  check::require(opt_.max_iter >= 0, "max_iter", "must be >= 0");
  check::require(opt_.tol >= 0.0, "tol", "must be >= 0");
  check::require(opt_.init_scale > 0.0 && std::isfinite(opt_.init_scale), "init_scale",
                 "must be finite and > 0");
  check::require(X.n_rows >= 2, "X",
                 "has 1 sample; leave-self-out attention needs at least 2 rows (n_samples = 1)");
  check::require(Y.n_cols >= 1, "y", "needs at least one column (one output)");
  check::rows_match(Y, X.n_rows, "y", "X");
  check::all_finite(X, "X");
  check::all_finite(Y, "y");
  check::require(X.n_cols + (opt_.fit_intercept ? 1 : 0) >= 1, "X",
                 "has no columns and fit_intercept is false: nothing to attend with");
  resolve_threads(opt_.n_threads);
  fitted_flag_ = false;
  const arma::uword p = X.n_cols;
  if (opt_.standardize) {
    // Column moments of x / c with c a power of two near max |x_j| (exact), times c: at
    // X * 1e-200 the variance underflowed to 0 and the column was left unstandardised (the fit
    // was a constant); at X * 1e300 the sum overflowed.
    mean_.set_size(p);
    sd_.set_size(p);
    for (arma::uword j = 0; j < p; ++j) {
      const double c = ls_detail::power_of_two_scale(arma::abs(X.col(j)).max());
      const arma::vec xs = X.col(j) / c;
      mean_(j) = arma::mean(xs) * c;
      sd_(j) = (X.n_rows > 1 ? arma::stddev(xs, 0) : 0.0) * c;
      if (!(sd_(j) > 0.0)) sd_(j) = 1.0;
    }
  } else {
    mean_.zeros(p);
    sd_.ones(p);
  }
  Dz_ = standardized_design(X);
  Y_ = Y;
  const arma::uword q = Dz_.n_cols, L = static_cast<arma::uword>(opt_.rank);

  // The optimiser works on Y / c with c a power of two near max |Y| (exact), so its gradient
  // tolerance and line search see the same numbers at any scale of y (y * 1e-150 stopped at the
  // starting point and fitted a near-constant); objectives are reported in the units of y.
  const double yscale = ls_detail::power_of_two_scale(Y.n_elem ? arma::abs(Y).max() : 0.0);
  const arma::mat Ys = Y / yscale;
  const double fscale = yscale * yscale;
  optim::LbfgsOptions lo;
  lo.max_iter = opt_.max_iter;
  lo.gtol = opt_.tol;
  lo.ftol = 1e-10;
  InterruptGuard guard;
  auto fg = [&](const arma::vec& w, arma::vec& g) {
    // Ctrl-C is checked at every objective evaluation (one start can run thousands of them;
    // checking between starts only took seconds to stop).
    if (guard.poll()) guard.rethrow_if_interrupted();
    const arma::mat Wm(const_cast<double*>(w.memptr()), q, L, false, true);
    arma::mat G;
    const double f = attention_regression_objective(Dz_, Ys, Wm, &G, opt_.n_threads);
    g = arma::vectorise(G);
    return f;
  };
  // Starting W: entries N(0, sigma^2) with sigma chosen so the scores d_i'W W'd_j have spread
  // about init_scale (var(s) ~ rank (sigma^2 q)^2).
  const double sigma =
      opt_.init_scale * std::pow(1.0 / (static_cast<double>(q) * q * static_cast<double>(L)), 0.25);
  start_obj_.set_size(static_cast<arma::uword>(opt_.n_starts));
  n_evals_ = 0;
  bool have = false;
  for (int st = 0; st < opt_.n_starts; ++st) {
    if (guard.poll()) break;
    std::mt19937_64 eng(opt_.seed + static_cast<std::uint64_t>(st));
    arma::vec w0(q * L);
    for (arma::uword i = 0; i < w0.n_elem; ++i) w0(i) = sigma * std_normal(eng);
    const optim::LbfgsResult r = optim::minimize_lbfgs(fg, w0, lo);
    n_evals_ += r.n_evals;
    start_obj_(static_cast<arma::uword>(st)) = r.f * fscale;
    if (!have || r.f * fscale < objective_) {
      have = true;
      objective_ = r.f * fscale;
      W_ = arma::reshape(r.x, q, L);
      iterations_ = r.iterations;
      converged_ = r.converged;
      message_ = r.message;
    }
    guard.progress(static_cast<std::size_t>(st + 1), static_cast<std::size_t>(opt_.n_starts),
                   "attention regression starts");
  }
  guard.rethrow_if_interrupted();
  fitted_flag_ = true;
  return *this;
}

arma::mat AttentionRegression::attention_weights(const arma::mat& X_new) const {
  check_new_x(X_new, "attention_weights");
  const arma::mat Kt = standardized_design(X_new) * W_;
  arma::mat A = Kt * (Dz_ * W_).t();  // m x n
  softmax_rows(A, 0, false);
  return A;
}

arma::mat AttentionRegression::predict(const arma::mat& X_new) const {
  check_new_x(X_new, "predict");
  // One row at a time (memory O(n) per thread), fixed-order sums: bit-identical for any number
  // of threads (BLAS's GEMV split its sums by thread).
  arma::mat out;
  attend(fixed_order_product(standardized_design(X_new), W_), fixed_order_product(Dz_, W_), Y_,
         false, out, opt_.n_threads);
  return out;
}

arma::mat AttentionRegression::loo_predictions() const {
  require_fitted("loo_predictions");
  const arma::mat K = fixed_order_product(Dz_, W_);
  arma::mat out;
  attend(K, K, Y_, true, out, opt_.n_threads);
  return out;
}

arma::mat AttentionRegression::transform() const {
  // d_z = T d: z = (x - mean) / sd, the constant stays 1.
  const arma::uword p = mean_.n_elem;
  const arma::uword off = opt_.fit_intercept ? 1 : 0;
  arma::mat T(p + off, p + off, arma::fill::zeros);
  if (off) T(0, 0) = 1.0;
  for (arma::uword j = 0; j < p; ++j) {
    T(off + j, off + j) = 1.0 / sd_(j);
    if (off) T(off + j, 0) = -mean_(j) / sd_(j);
  }
  return T;
}

arma::mat AttentionRegression::encoder() const {
  require_fitted("encoder");
  if (!opt_.fit_intercept && arma::any(mean_ != 0.0)) {
    // Without the constant the centring is not linear in d; W acts on the standardised z.
    throw InvalidArgument(
        "encoder: with fit_intercept=false and standardize=true the scores are not bilinear in "
        "the raw x (the centring needs the constant); use standardize=false or fit_intercept=true");
  }
  return transform().t() * W_;
}

arma::mat AttentionRegression::embedding() const {
  const arma::mat W = encoder();
  return W * W.t();
}

AttentionRegression::State AttentionRegression::state() const {
  require_fitted("state");
  return State{mean_, sd_, W_, Dz_, Y_, objective_};
}

AttentionRegression AttentionRegression::from_state(const AttentionRegressionOptions& options,
                                                    const State& s) {
  check::require(s.mean.n_elem == s.sd.n_elem && s.W.n_rows == s.Dz.n_cols &&
                     s.Dz.n_rows == s.Y.n_rows &&
                     s.Dz.n_cols == s.mean.n_elem + (options.fit_intercept ? 1 : 0),
                 "state", "inconsistent AttentionRegression state");
  AttentionRegression m(options);
  m.mean_ = s.mean;
  m.sd_ = s.sd;
  m.W_ = s.W;
  m.Dz_ = s.Dz;
  m.Y_ = s.Y;
  m.objective_ = s.objective;
  m.fitted_flag_ = true;
  return m;
}

}  // namespace attnreg
