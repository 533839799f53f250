// attnreg: the binned local polynomial fit and its error estimate (see binned.hpp for the
// method and its references; the grid, binning and FFTs: binned_internal.hpp).
#include "attnreg/kernels/binned.hpp"
#include "attnreg/base/constants.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>
#include <unordered_set>

#include "attnreg/base/error.hpp"
#include "attnreg/detail/binned_internal.hpp"
#include "attnreg/solve/local_fit.hpp"
#include "attnreg/solve/local_solve.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace attnreg {

using namespace binned_detail;  // binned_internal.hpp

namespace {


int thread_count(int requested) {
#ifdef _OPENMP
  return requested > 0 ? requested : omp_get_max_threads();
#else
  (void)requested;
  return 1;
#endif
}

const char* status_reason(QueryStatus s) {
  switch (s) {
    case QueryStatus::no_weight:
    case QueryStatus::underflow:
      return "no kernel weight reaches the grid nodes next to it";
    case QueryStatus::singular: return "the local design at the grid nodes next to it is singular";
    default: return "";
  }
}

}  // namespace

// ------------------------------------------------------------------------------ the fit
struct BinnedLocalPolynomial::Impl {
  Grid grid;
  std::size_t q = 1, k = 1;
  std::vector<std::array<int, 2>> basis;
  arma::vec c;                    ///< binned weights
  arma::mat S;                    ///< binned weighted responses (total x k)
  std::vector<double> coef;       ///< per node: q x k coefficients (bandwidth units), row-major
  std::vector<QueryStatus> status;  ///< per node
  double noise = 0.0;             ///< weights at or below this are FFT rounding
};

namespace {

/// Moments A (q x q) and T (q x k) at a point, summed directly over the binned data.
void direct_moments(const BinnedLocalPolynomial::Impl& I, const Kernel& K, const arma::vec& h,
                    const double* x, std::vector<double>& A, std::vector<double>& T) {
  const std::size_t q = I.q, k = I.k, d = I.grid.d;
  A.assign(q * q, 0.0);
  T.assign(q * k, 0.0);
  std::vector<double> z(q);
  for (std::size_t g0 = 0; g0 < I.grid.G[0]; ++g0) {
    const double u0 = (I.grid.node(0, g0) - x[0]) / h(0);
    const double k0 = K.shape(u0);
    if (k0 == 0.0) continue;
    for (std::size_t g1 = 0; g1 < I.grid.G[1]; ++g1) {
      const std::size_t g = g0 * I.grid.G[1] + g1;
      if (I.c(g) == 0.0) continue;
      const double u1 = d == 2 ? (I.grid.node(1, g1) - x[1]) / h(1) : 0.0;
      const double w = k0 * (d == 2 ? K.shape(u1) : 1.0);
      if (w == 0.0) continue;
      for (std::size_t r = 0; r < q; ++r)
        z[r] = std::pow(u0, I.basis[r][0]) * std::pow(u1, I.basis[r][1]);
      for (std::size_t r = 0; r < q; ++r) {
        for (std::size_t s = 0; s < q; ++s) A[r * q + s] += I.c(g) * w * z[r] * z[s];
        for (std::size_t o = 0; o < k; ++o) T[r * k + o] += I.S(g, o) * w * z[r];
      }
    }
  }
}

/// Solve one local system: coefficients (q x k, row-major) from A, T with the ridge.
QueryStatus solve_node(std::vector<double>& A, const double* T, std::size_t q, std::size_t k,
                       double ridge, const std::vector<double>& pen, double noise,
                       double* coef) {
  const double omega = A[0];
  if (!(omega > noise)) return QueryStatus::no_weight;
  local_solve::add_ridge(A.data(), q, 1, ridge, omega, pen.data());
  std::copy(T, T + q * k, coef);
  return spd_solve(A.data(), q, coef, k) ? QueryStatus::ok : QueryStatus::singular;
}

/// Validates the fit's options and data like LocalPolynomial::fit (naming the argument); the
/// bandwidth per column (one number for all columns) and the grid size gs.
arma::vec checked_fit_inputs(const BinnedFitOptions& opt, const arma::mat& X, const arma::mat& Y,
                             const arma::vec& bandwidth, const arma::vec& sample_weight, int& gs) {
  const std::size_t n = X.n_rows, d = X.n_cols;
  check::require(opt.degree >= 0 && opt.degree <= 3, "degree", "must be 0, 1, 2 or 3");
  opt.kernel.require_nonnegative("the binned fit");
  check::require(std::isfinite(opt.ridge) && opt.ridge >= 0.0, "ridge", "must be >= 0 and finite");
  check::require(d >= 1, "X", "needs at least one column");
  gs = binned_grid_size(std::vector<VarType>(d, VarType::continuous), opt.grid_size);
  check::require(opt.degree <= 1 || d == 1, "degree",
                 "degree 2 and 3 need exactly one continuous column (use degree 1 for two)");
  check::require(n >= 1, "X", "needs at least one row");
  check::require(Y.n_rows == n, "Y",
                 "must have one row per row of X (got " + std::to_string(Y.n_rows) + " rows for " +
                     std::to_string(n) + ")");
  check::require(Y.n_cols >= 1, "Y", "needs at least one column");
  check::all_finite(X, "X");
  check::all_finite(Y, "Y");
  arma::vec h = bandwidth;
  if (h.n_elem == 1 && d == 2) h = arma::vec{bandwidth(0), bandwidth(0)};
  check::require(h.n_elem == d, "bandwidth",
                 "needs one value per column of X (or one number for all columns)");
  for (std::size_t a = 0; a < d; ++a)
    check::require(std::isfinite(h(a)) && h(a) > 0.0, "bandwidth",
                   "must be > 0 and finite (pass a positive number per column)");
  if (!sample_weight.is_empty()) {
    check::require(sample_weight.n_elem == n, "sample_weight", "needs one value per row of X");
    check::all_finite(sample_weight, "sample_weight");
    check::require(arma::all(sample_weight >= 0.0), "sample_weight", "must be >= 0");
    check::require(arma::accu(sample_weight) > 0.0, "sample_weight",
                   "all weights are zero; give at least one positive weight");
  }
  return h;
}

/// Moments at every node (A_rs: q x q upper triangle, T_r: q x k, one grid each) by FFT.
void node_moments(const BinnedLocalPolynomial::Impl& I, const BinnedFitOptions& opt,
                  const arma::vec& h, std::vector<std::vector<double>>& Am,
                  std::vector<std::vector<double>>& Tm) {
  const std::size_t d = I.grid.d, q = I.q, k = I.k, T = I.grid.total();
  GridFft fft(I.grid);
  // Moments at every node: one kernel spectrum per exponent pair.
  std::size_t L[2] = {reach(opt.kernel, I.grid.delta[0], h(0), I.grid.G[0]), 0};
  if (d == 2) L[1] = reach(opt.kernel, I.grid.delta[1], h(1), I.grid.G[1]);
  const cvec cs = fft.forward_data(I.c.memptr());
  std::vector<cvec> ss(k);
  for (std::size_t o = 0; o < k; ++o) ss[o] = fft.forward_data(I.S.colptr(o));
  // A_rs from exponent sums, T_r from basis exponents.
  Am.assign(q * q, {});
  Tm.assign(q * k, {});
  std::vector<std::vector<double>> cacheA;
  std::vector<std::array<int, 2>> seen;
  auto kernel_spec = [&](std::array<int, 2> e) {
    return kernel_spectrum(fft, I.grid, opt.kernel, h, L, e, -1);
  };
  for (std::size_t r = 0; r < q; ++r)
    for (std::size_t s = r; s < q; ++s) {
      const std::array<int, 2> e{I.basis[r][0] + I.basis[s][0], I.basis[r][1] + I.basis[s][1]};
      std::size_t found = seen.size();
      for (std::size_t t = 0; t < seen.size(); ++t)
        if (seen[t] == e) found = t;
      if (found == seen.size()) {
        const cvec ks = kernel_spec(e);
        cacheA.emplace_back(T);
        fft.correlate(cs, ks, cacheA.back().data());
        seen.push_back(e);
      }
      Am[r * q + s] = cacheA[found];
    }
  for (std::size_t r = 0; r < q; ++r) {
    const cvec ks = kernel_spec(I.basis[r]);
    for (std::size_t o = 0; o < k; ++o) {
      Tm[r * k + o].assign(T, 0.0);
      fft.correlate(ss[o], ks, Tm[r * k + o].data());
    }
  }
}

/// Coefficients and status at every node from the node moments.
void solve_nodes(BinnedLocalPolynomial::Impl& I, const BinnedFitOptions& opt,
                 const arma::vec& h, const std::vector<std::vector<double>>& Am,
                 const std::vector<std::vector<double>>& Tm) {
  const std::size_t q = I.q, k = I.k, T = I.grid.total();
  const std::vector<double> pen = penalties(h, opt.degree);
  I.coef.assign(T * q * k, kNaN);
  I.status.assign(T, QueryStatus::ok);
  std::vector<double> A(q * q), Tv(q * k);
  for (std::size_t g = 0; g < T; ++g) {
    for (std::size_t r = 0; r < q; ++r)
      for (std::size_t s = 0; s < q; ++s) A[r * q + s] = Am[std::min(r, s) * q + std::max(r, s)][g];
    for (std::size_t t = 0; t < q * k; ++t) Tv[t] = Tm[t][g];
    std::vector<double> cf(q * k);
    const QueryStatus st = solve_node(A, Tv.data(), q, k, opt.ridge, pen, I.noise, cf.data());
    I.status[g] = st;
    if (st == QueryStatus::ok) std::copy(cf.begin(), cf.end(), I.coef.begin() + g * q * k);
  }
}

}  // namespace

BinnedLocalPolynomial::BinnedLocalPolynomial(BinnedFitOptions options) : opt_(options) {}
BinnedLocalPolynomial::~BinnedLocalPolynomial() = default;
BinnedLocalPolynomial::BinnedLocalPolynomial(BinnedLocalPolynomial&&) noexcept = default;
BinnedLocalPolynomial& BinnedLocalPolynomial::operator=(BinnedLocalPolynomial&&) noexcept = default;

void BinnedLocalPolynomial::require_fitted(const char* what) const {
  if (!impl_)
    throw InvalidArgument(std::string(what) + ": the binned model is not fitted; call fit() first");
}

BinnedLocalPolynomial& BinnedLocalPolynomial::fit(const arma::mat& X, const arma::mat& Y,
                                                  const arma::vec& bandwidth,
                                                  const arma::vec& sample_weight) {
  const std::size_t d = X.n_cols;
  int gs = 0;
  const arma::vec h = checked_fit_inputs(opt_, X, Y, bandwidth, sample_weight, gs);
  auto I = std::make_unique<Impl>();
  I->grid = make_grid(X, static_cast<std::size_t>(gs));
  I->basis = basis_exponents(d, opt_.degree);
  I->q = I->basis.size();
  I->k = Y.n_cols;
  linear_bin(I->grid, X, Y, sample_weight, I->c, I->S, nullptr);
  const double total_w = arma::accu(I->c);
  I->noise = 1e-13 * total_w;
  std::vector<std::vector<double>> Am, Tm;
  node_moments(*I, opt_, h, Am, Tm);
  solve_nodes(*I, opt_, h, Am, Tm);
  x_ = X;
  y_ = Y;
  w_ = sample_weight;
  h_ = h;
  impl_ = std::move(I);
  have_fitted_ = false;
  have_err_ = false;
  fitted_.reset();
  return *this;
}

namespace {

/// Coefficients (q x k) at each query: interpolated between nodes inside the grid, summed
/// directly beyond it. status per query.
void query_coefficients(const BinnedLocalPolynomial::Impl& I, const BinnedFitOptions& opt,
                        const arma::vec& h, const arma::mat& Xq, std::vector<double>& out,
                        std::vector<QueryStatus>& status) {
  const std::size_t m = Xq.n_rows, q = I.q, k = I.k, d = I.grid.d, qk = q * k;
  out.assign(m * qk, kNaN);
  status.assign(m, QueryStatus::ok);
  const std::vector<double> pen = penalties(h, opt.degree);
#pragma omp parallel for schedule(static) num_threads(thread_count(opt.n_threads)) if (m > 4096)
  for (std::size_t i = 0; i < m; ++i) {
    double x[2] = {Xq(i, 0), d == 2 ? Xq(i, 1) : 0.0};
    bool inside = true;
    for (std::size_t a = 0; a < d; ++a) {
      const double tol = 1e-9 * I.grid.delta[a];
      if (x[a] < I.grid.lo[a] - tol || x[a] > I.grid.hi_[a] + tol) inside = false;
    }
    double* o = out.data() + i * qk;
    if (!inside) {
      std::vector<double> A, T;
      direct_moments(I, opt.kernel, h, x, A, T);
      // Direct sums carry no FFT rounding: any positive weight counts (as the exact fit).
      status[i] = solve_node(A, T.data(), q, k, opt.ridge, pen, 0.0, o);
      if (status[i] != QueryStatus::ok) std::fill(o, o + qk, kNaN);
      continue;
    }
    std::size_t g[2] = {0, 0};
    double f[2] = {0.0, 0.0};
    for (std::size_t a = 0; a < d; ++a) locate(I.grid, a, x[a], g[a], f[a]);
    std::fill(o, o + qk, 0.0);
    QueryStatus st = QueryStatus::ok;
    const std::size_t n1 = d == 2 ? 2 : 1;
    for (std::size_t s0 = 0; s0 < 2; ++s0)
      for (std::size_t s1 = 0; s1 < n1; ++s1) {
        const double wt = corner_weight(d, f, s0, s1);
        if (wt == 0.0) continue;
        const std::size_t node = corner_node(I.grid, g, s0, s1);
        if (I.status[node] != QueryStatus::ok) {
          st = I.status[node];
          continue;
        }
        const double* cn = I.coef.data() + node * qk;
        for (std::size_t t = 0; t < qk; ++t) o[t] += wt * cn[t];
      }
    status[i] = st;
    if (st != QueryStatus::ok) std::fill(o, o + qk, kNaN);
  }
}

void throw_failed(const std::vector<QueryStatus>& status, const arma::vec& h,
                  const double* delta, std::size_t d, const std::string& arg) {
  for (std::size_t i = 0; i < status.size(); ++i) {
    if (status[i] == QueryStatus::ok) continue;
    std::ostringstream m;
    m << arg << ": row " << (i + 1) << " has no binned fit: " << status_reason(status[i])
      << " (bandwidth " << h(0);
    if (d == 2) m << ", " << h(1);
    m << "; grid spacing " << delta[0];
    if (d == 2) m << ", " << delta[1];
    m << "); use a larger bandwidth, or approx=\"exact\"";
    throw NumericalError(m.str());
  }
}

/// Coefficients (q x k per row, as query_coefficients) at the rows of Xq; throws naming `arg`
/// and the first row without a binned fit.
std::vector<double> checked_coefficients(const BinnedLocalPolynomial::Impl& I,
                                         const BinnedFitOptions& opt, const arma::vec& h,
                                         const arma::mat& Xq, std::size_t d,
                                         const std::string& arg) {
  std::vector<double> cf;
  std::vector<QueryStatus> st;
  query_coefficients(I, opt, h, Xq, cf, st);
  throw_failed(st, h, I.grid.delta, d, arg);
  return cf;
}

}  // namespace

arma::mat BinnedLocalPolynomial::predict(const arma::mat& X_new) const {
  require_fitted("predict");
  check::require(X_new.n_cols == x_.n_cols, "X",
                 "must have " + std::to_string(x_.n_cols) + " column(s), as in fit");
  check::all_finite(X_new, "X");
  const std::vector<double> cf = checked_coefficients(*impl_, opt_, h_, X_new, impl_->grid.d, "X");
  const std::size_t q = impl_->q, k = impl_->k;
  arma::mat out(X_new.n_rows, k);
  for (std::size_t i = 0; i < X_new.n_rows; ++i)
    for (std::size_t o = 0; o < k; ++o) out(i, o) = cf[i * q * k + o];
  return out;
}

arma::mat BinnedLocalPolynomial::derivative(const arma::mat& X_new, int order) const {
  require_fitted("derivative");
  check::require(x_.n_cols == 1, "order",
                 "derivatives of any order need one continuous column; use gradient() for two");
  check::require(order >= 0 && order <= opt_.degree, "order",
                 "must be between 0 and the degree (" + std::to_string(opt_.degree) +
                     "); fit a higher degree for higher derivatives");
  check::require(X_new.n_cols == 1, "X", "must have 1 column, as in fit");
  check::all_finite(X_new, "X");
  const std::vector<double> cf = checked_coefficients(*impl_, opt_, h_, X_new, 1, "X");
  const std::size_t q = impl_->q, k = impl_->k;
  double fact = 1.0;
  for (int t = 2; t <= order; ++t) fact *= t;
  const double scale = fact / std::pow(h_(0), order);
  arma::mat out(X_new.n_rows, k);
  for (std::size_t i = 0; i < X_new.n_rows; ++i)
    for (std::size_t o = 0; o < k; ++o)
      out(i, o) = scale * cf[i * q * k + static_cast<std::size_t>(order) * k + o];
  return out;
}

arma::cube BinnedLocalPolynomial::gradient(const arma::mat& X_new) const {
  require_fitted("gradient");
  check::require(opt_.degree >= 1, "gradient",
                 "needs degree >= 1 (a local constant fit has no slope; use local linear)");
  check::require(X_new.n_cols == x_.n_cols, "X",
                 "must have " + std::to_string(x_.n_cols) + " column(s), as in fit");
  check::all_finite(X_new, "X");
  const std::vector<double> cf = checked_coefficients(*impl_, opt_, h_, X_new, impl_->grid.d, "X");
  const std::size_t q = impl_->q, k = impl_->k, d = x_.n_cols;
  arma::cube out(X_new.n_rows, d, k);
  for (std::size_t i = 0; i < X_new.n_rows; ++i)
    for (std::size_t a = 0; a < d; ++a)
      for (std::size_t o = 0; o < k; ++o) out(i, a, o) = cf[i * q * k + (1 + a) * k + o] / h_(a);
  return out;
}

const arma::mat& BinnedLocalPolynomial::fitted() const {
  require_fitted("fitted");
  if (!have_fitted_) {
    const std::vector<double> cf =
        checked_coefficients(*impl_, opt_, h_, x_, impl_->grid.d, "X (training rows)");
    const std::size_t q = impl_->q, k = impl_->k;
    fitted_.set_size(x_.n_rows, k);
    for (std::size_t i = 0; i < x_.n_rows; ++i)
      for (std::size_t o = 0; o < k; ++o) fitted_(i, o) = cf[i * q * k + o];
    have_fitted_ = true;
  }
  return fitted_;
}

std::vector<std::size_t> BinnedLocalPolynomial::grid_shape() const {
  require_fitted("grid_shape");
  std::vector<std::size_t> s;
  for (std::size_t a = 0; a < impl_->grid.d; ++a) s.push_back(impl_->grid.G[a]);
  return s;
}

arma::vec BinnedLocalPolynomial::grid_nodes(std::size_t column) const {
  require_fitted("grid_nodes");
  check::require(column < impl_->grid.d, "column", "out of range");
  arma::vec v(impl_->grid.G[column]);
  for (std::size_t g = 0; g < v.n_elem; ++g) v(g) = impl_->grid.node(column, g);
  return v;
}

arma::mat BinnedLocalPolynomial::grid_fit() const {
  require_fitted("grid_fit");
  const std::size_t T = impl_->grid.total(), q = impl_->q, k = impl_->k;
  arma::mat out(T, k);
  for (std::size_t g = 0; g < T; ++g)
    for (std::size_t o = 0; o < k; ++o) out(g, o) = impl_->coef[g * q * k + o];
  return out;
}

BinnedErrorEstimate BinnedLocalPolynomial::approx_error(std::size_t n_points,
                                                        std::uint64_t seed) const {
  require_fitted("approx_error");
  check::require(n_points >= 1, "n_points", "must be at least 1");
  if (have_err_ && err_points_ == n_points && err_seed_ == seed) return err_;
  const std::size_t n = x_.n_rows;
  std::vector<arma::uword> rows;
  if (n <= n_points) {
    for (std::size_t i = 0; i < n; ++i) rows.push_back(i);
  } else {
    std::mt19937_64 rng(seed);
    std::unordered_set<std::size_t> seen;
    std::uniform_int_distribution<std::size_t> pick(0, n - 1);
    while (rows.size() < n_points) {
      const std::size_t r = pick(rng);
      if (seen.insert(r).second) rows.push_back(r);
    }
    std::sort(rows.begin(), rows.end());
  }
  const arma::mat Xs = x_.rows(arma::uvec(rows));
  LocalFitOptions eo;
  eo.degree = opt_.degree;
  eo.kernel.kernel = opt_.kernel;
  eo.ridge = opt_.ridge;
  eo.compute_fitted = false;
  eo.kernel.n_threads = opt_.n_threads;
  LocalPolynomial exact(eo);
  exact.fit(x_, y_, h_, w_);
  std::vector<double> cf;
  std::vector<QueryStatus> st;
  query_coefficients(*impl_, opt_, h_, Xs, cf, st);
  const std::size_t q = impl_->q, k = impl_->k;
  BinnedErrorEstimate e;
  e.seed = seed;
  double ss = 0.0;
  std::size_t cnt = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (st[i] != QueryStatus::ok) continue;
    arma::mat ex;
    try {
      ex = exact.predict(Xs.row(i));
    } catch (const NumericalError&) {
      continue;  // no exact fit at this row
    }
    ++e.n_points;
    for (std::size_t o = 0; o < k; ++o) {
      const double diff = std::fabs(cf[i * q * k + o] - ex(0, o));
      e.max_abs = std::max(e.max_abs, diff);
      ss += diff * diff;
      ++cnt;
    }
  }
  e.rms = cnt > 0 ? std::sqrt(ss / static_cast<double>(cnt)) : 0.0;
  e.scale = n > 1 ? arma::stddev(y_.col(0)) : 0.0;
  e.relative = e.scale > 0.0 ? e.max_abs / e.scale : 0.0;
  err_ = e;
  err_points_ = n_points;
  err_seed_ = seed;
  have_err_ = true;
  return e;
}

}  // namespace attnreg
