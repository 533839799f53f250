// attnreg: binned approximations (see binned.hpp for the method and its references).
#include "attnreg/kernels/binned.hpp"

#include <fftw3.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <complex>
#include <limits>
#include <mutex>
#include <random>
#include <sstream>
#include <unordered_set>

#include "attnreg/base/error.hpp"
#include "attnreg/solve/local_fit.hpp"
#include "attnreg/solve/local_solve.hpp"
#include "attnreg/bandwidth/criteria.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace attnreg {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
/// Gaussian kernel kept while its shape exceeds 1e-17: |u| <= sqrt(2 ln 1e17).
constexpr double kGaussianReach = 8.85;

int thread_count(int requested) {
#ifdef _OPENMP
  return requested > 0 ? requested : omp_get_max_threads();
#else
  (void)requested;
  return 1;
#endif
}

// ------------------------------------------------------------------------------ the grid
struct Grid {
  std::size_t d = 1;
  std::size_t G[2] = {1, 1};
  double lo[2] = {0.0, 0.0};
  double delta[2] = {1.0, 1.0};
  std::size_t total() const { return G[0] * G[1]; }
  double node(std::size_t a, std::size_t g) const {
    return g + 1 == G[a] && G[a] > 1 ? hi_[a] : lo[a] + delta[a] * static_cast<double>(g);
  }
  double hi_[2] = {0.0, 0.0};
};

Grid make_grid(const arma::mat& X, std::size_t gs) {
  Grid g;
  g.d = X.n_cols;
  for (std::size_t a = 0; a < g.d; ++a) {
    const double lo = X.col(a).min(), hi = X.col(a).max();
    if (!(hi > lo))
      throw InvalidArgument("X: column " + std::to_string(a + 1) +
                            " is constant; no binning grid spans it (drop the column, or use "
                            "approx=\"exact\")");
    g.G[a] = gs;
    g.lo[a] = lo;
    g.hi_[a] = hi;
    g.delta[a] = (hi - lo) / static_cast<double>(gs - 1);
  }
  return g;
}

/// Cell of x along column a: node g (0 <= g <= G - 2) and fraction f in [0, 1].
inline void locate(const Grid& grid, std::size_t a, double x, std::size_t& g, double& f) {
  const double pos = (x - grid.lo[a]) / grid.delta[a];
  const std::size_t last = grid.G[a] - 2;
  if (!(pos > 0.0)) {
    g = 0;
    f = 0.0;
  } else if (pos >= static_cast<double>(grid.G[a] - 1)) {
    g = last;
    f = 1.0;
  } else {
    g = std::min(static_cast<std::size_t>(pos), last);
    f = std::min(1.0, pos - static_cast<double>(g));
  }
}

/// Linear binning (one thread: the sums do not depend on the thread count). c: weights,
/// S: total x k weighted responses, Q (optional): weighted squares of output 0.
void linear_bin(const Grid& grid, const arma::mat& X, const arma::mat& Y, const arma::vec& w,
                arma::vec& c, arma::mat& S, arma::vec* Q) {
  const std::size_t n = X.n_rows, k = Y.n_cols, T = grid.total();
  c.zeros(T);
  S.zeros(T, k);
  if (Q != nullptr) Q->zeros(T);
  const bool weighted = !w.is_empty();
  for (std::size_t i = 0; i < n; ++i) {
    const double a = weighted ? w(i) : 1.0;
    if (a == 0.0) continue;
    std::size_t idx[4];
    double share[4];
    std::size_t m = 0;
    if (grid.d == 1) {
      std::size_t g;
      double f;
      locate(grid, 0, X(i, 0), g, f);
      idx[0] = g;
      share[0] = a * (1.0 - f);
      idx[1] = g + 1;
      share[1] = a * f;
      m = 2;
    } else {
      std::size_t g0, g1;
      double f0, f1;
      locate(grid, 0, X(i, 0), g0, f0);
      locate(grid, 1, X(i, 1), g1, f1);
      const std::size_t G1 = grid.G[1];
      idx[0] = g0 * G1 + g1;
      share[0] = a * (1.0 - f0) * (1.0 - f1);
      idx[1] = g0 * G1 + g1 + 1;
      share[1] = a * (1.0 - f0) * f1;
      idx[2] = (g0 + 1) * G1 + g1;
      share[2] = a * f0 * (1.0 - f1);
      idx[3] = (g0 + 1) * G1 + g1 + 1;
      share[3] = a * f0 * f1;
      m = 4;
    }
    for (std::size_t s = 0; s < m; ++s) {
      if (share[s] == 0.0) continue;
      c(idx[s]) += share[s];
      for (std::size_t o = 0; o < k; ++o) S(idx[s], o) += share[s] * Y(i, o);
      if (Q != nullptr) (*Q)(idx[s]) += share[s] * Y(i, 0) * Y(i, 0);
    }
  }
}

// ------------------------------------------------------------------------------ FFTs
std::size_t nice_size(std::size_t n) {
  for (std::size_t m = std::max<std::size_t>(n, 1);; ++m) {
    std::size_t r = m;
    for (std::size_t p : {2, 3, 5, 7})
      while (r % p == 0) r /= p;
    if (r == 1) return m;
  }
}

std::mutex& fftw_plan_mutex() {  // FFTW's planner is not thread-safe
  static std::mutex m;
  return m;
}

using cvec = std::vector<std::complex<double>>;

/// Zero-padded real FFTs over the grid (P_a = a 7-smooth size >= 2 G_a - 1, so a correlation
/// with any kernel of reach <= G_a - 1 does not wrap around). Not thread-safe (one buffer).
class GridFft {
 public:
  explicit GridFft(const Grid& grid) : grid_(grid) {
    P_[0] = nice_size(2 * grid.G[0] - 1);
    P_[1] = grid.d == 2 ? nice_size(2 * grid.G[1] - 1) : 1;
    nreal_ = P_[0] * P_[1];
    ncplx_ = grid.d == 2 ? P_[0] * (P_[1] / 2 + 1) : P_[0] / 2 + 1;
    real_ = static_cast<double*>(fftw_malloc(sizeof(double) * nreal_));
    cplx_ = static_cast<fftw_complex*>(fftw_malloc(sizeof(fftw_complex) * ncplx_));
    if (real_ == nullptr || cplx_ == nullptr) throw std::bad_alloc();
    std::lock_guard<std::mutex> lock(fftw_plan_mutex());
    if (grid.d == 1) {
      fwd_ = fftw_plan_dft_r2c_1d(static_cast<int>(P_[0]), real_, cplx_, FFTW_ESTIMATE);
      inv_ = fftw_plan_dft_c2r_1d(static_cast<int>(P_[0]), cplx_, real_, FFTW_ESTIMATE);
    } else {
      fwd_ = fftw_plan_dft_r2c_2d(static_cast<int>(P_[0]), static_cast<int>(P_[1]), real_, cplx_,
                                  FFTW_ESTIMATE);
      inv_ = fftw_plan_dft_c2r_2d(static_cast<int>(P_[0]), static_cast<int>(P_[1]), cplx_, real_,
                                  FFTW_ESTIMATE);
    }
    if (fwd_ == nullptr || inv_ == nullptr) throw NumericalError("binned: FFTW could not plan");
  }
  ~GridFft() {
    std::lock_guard<std::mutex> lock(fftw_plan_mutex());
    if (fwd_) fftw_destroy_plan(fwd_);
    if (inv_) fftw_destroy_plan(inv_);
    fftw_free(real_);
    fftw_free(cplx_);
  }
  GridFft(const GridFft&) = delete;
  GridFft& operator=(const GridFft&) = delete;

  std::size_t padded(std::size_t a) const { return P_[a]; }

  /// Spectrum of grid data (total values, node (g0, g1) at g0 * G1 + g1).
  cvec forward_data(const double* data) const {
    std::fill(real_, real_ + nreal_, 0.0);
    const std::size_t G0 = grid_.G[0], G1 = grid_.G[1];
    for (std::size_t g0 = 0; g0 < G0; ++g0)
      for (std::size_t g1 = 0; g1 < G1; ++g1) real_[g0 * P_[1] + g1] = data[g0 * G1 + g1];
    return run_forward();
  }
  /// Spectrum of the separable kernel k0(j0) k1(j1), j_a in [-L_a, L_a] (vector index j + L),
  /// stored flipped so that the product with a data spectrum is the correlation
  /// out(g) = sum_j data(g + j) k(j).
  cvec forward_kernel(const std::vector<double>& k0, const std::vector<double>& k1) const {
    std::fill(real_, real_ + nreal_, 0.0);
    const long L0 = static_cast<long>(k0.size() / 2), L1 = static_cast<long>(k1.size() / 2);
    const long P0 = static_cast<long>(P_[0]), P1 = static_cast<long>(P_[1]);
    for (long j0 = -L0; j0 <= L0; ++j0) {
      const double a = k0[static_cast<std::size_t>(j0 + L0)];
      if (a == 0.0) continue;
      const long m0 = ((-j0) % P0 + P0) % P0;
      for (long j1 = -L1; j1 <= L1; ++j1) {
        const long m1 = ((-j1) % P1 + P1) % P1;
        real_[m0 * P1 + m1] = a * k1[static_cast<std::size_t>(j1 + L1)];
      }
    }
    return run_forward();
  }
  /// out (total) = correlation of the data with the kernel.
  void correlate(const cvec& data, const cvec& kern, double* out) const {
    auto* z = reinterpret_cast<std::complex<double>*>(cplx_);
    for (std::size_t i = 0; i < ncplx_; ++i) z[i] = data[i] * kern[i];
    fftw_execute(inv_);
    const double scale = 1.0 / static_cast<double>(nreal_);
    const std::size_t G0 = grid_.G[0], G1 = grid_.G[1];
    for (std::size_t g0 = 0; g0 < G0; ++g0)
      for (std::size_t g1 = 0; g1 < G1; ++g1)
        out[g0 * G1 + g1] = real_[g0 * P_[1] + g1] * scale;
  }

 private:
  cvec run_forward() const {
    fftw_execute(fwd_);
    const auto* z = reinterpret_cast<const std::complex<double>*>(cplx_);
    return cvec(z, z + ncplx_);
  }
  Grid grid_;
  std::size_t P_[2] = {1, 1};
  std::size_t nreal_ = 0, ncplx_ = 0;
  double* real_ = nullptr;
  fftw_complex* cplx_ = nullptr;
  fftw_plan fwd_ = nullptr, inv_ = nullptr;
};

// ------------------------------------------------------------------------------ moments
/// Exponents (e0, e1) of the basis terms: 1-D (0), (1), ..., (p); 2-D (0,0), (1,0), (0,1).
std::vector<std::array<int, 2>> basis_exponents(std::size_t d, int degree) {
  std::vector<std::array<int, 2>> e;
  e.push_back({0, 0});
  if (d == 1) {
    for (int p = 1; p <= degree; ++p) e.push_back({p, 0});
  } else if (degree >= 1) {
    e.push_back({1, 0});
    e.push_back({0, 1});
  }
  return e;
}

/// Kernel reach in nodes along column a.
std::size_t reach(const Kernel& K, double delta, double h, std::size_t G) {
  const double r = (K.compact() ? 1.0 : kGaussianReach) * h / delta;
  const double L = std::floor(std::min(r, static_cast<double>(G - 1)));
  return static_cast<std::size_t>(std::max(0.0, L));
}

/// k(u) u^e (psi: k(u) psi(u) u^e) at u = j delta / h, j = -L..L.
std::vector<double> axis_kernel(const Kernel& K, double delta, double h, std::size_t L, int e,
                                bool with_psi) {
  std::vector<double> v(2 * L + 1);
  for (std::size_t i = 0; i < v.size(); ++i) {
    const double j = static_cast<double>(static_cast<long>(i) - static_cast<long>(L));
    const double u = j * delta / h;
    double s = K.shape(u);
    if (s != 0.0 && with_psi) s *= kernel_psi(K.type, u);
    if (s != 0.0 && e > 0) s *= std::pow(u, e);
    v[i] = s;
  }
  return v;
}

/// The local fit's solve (local_solve.hpp) of the q x q SPD system A X = B (B q x r,
/// row-major, in place), q <= 4: false where the exact fit would report a singular design.
bool spd_solve(const double* A, std::size_t q, double* B, std::size_t r) {
  double L[16], s[4];
  return local_solve::spd_solve(A, q, B, r, L, s) == local_solve::SolveStatus::ok;
}

/// Penalty scale of each basis term (bandwidth units), as local_penalty_scales.
std::vector<double> penalties(const arma::vec& h, int degree) {
  return local_penalty_scales(h, degree);
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

// ------------------------------------------------------------------------------ names
Approximation approximation_from_name(const std::string& name, const std::string& arg) {
  std::string s = name;
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (s == "exact") return Approximation::exact;
  if (s == "binned") return Approximation::binned;
  throw InvalidArgument(arg + ": must be \"exact\" (the default: exact kernel sums) or \"binned\" "
                              "(linear binning and FFT, one or two continuous columns), got \"" +
                        name + "\"");
}

const char* approximation_name(Approximation a) {
  return a == Approximation::binned ? "binned" : "exact";
}

int binned_grid_size(const std::vector<VarType>& types, int grid_size,
                     const std::string& grid_size_arg) {
  std::size_t n_cont = 0, n_cat = 0;
  for (VarType t : types) (t == VarType::continuous ? n_cont : n_cat)++;
  if (n_cont == 0)
    throw InvalidArgument(
        "approx: \"binned\" bins continuous columns, and these data have none (categorical "
        "columns only): use approx=\"exact\", which groups the repeated rows");
  if (n_cont > 2)
    throw InvalidArgument("approx: \"binned\" supports one or two continuous columns (got " +
                          std::to_string(n_cont) +
                          "; a grid in more dimensions is too large): use approx=\"exact\"");
  if (n_cat > 0)
    throw InvalidArgument(
        "approx: \"binned\" supports continuous columns only (these data have " +
        std::to_string(n_cat) + " categorical column(s)): use approx=\"exact\"");
  if (grid_size == 0) return n_cont == 1 ? kBinnedGrid1D : kBinnedGrid2D;
  if (grid_size < kBinnedMinGrid)
    throw InvalidArgument(grid_size_arg + ": must be at least " +
                          std::to_string(kBinnedMinGrid) + " grid points per column (got " +
                          std::to_string(grid_size) + "); the default is " +
                          std::to_string(n_cont == 1 ? kBinnedGrid1D : kBinnedGrid2D) +
                          (n_cont == 1 ? "" : " per column") +
                          ", and more points give a smaller binning error");
  if (grid_size > (n_cont == 1 ? (1 << 24) : 4096))
    throw InvalidArgument(grid_size_arg + ": at most " +
                          std::to_string(n_cont == 1 ? (1 << 24) : 4096) +
                          " points per column (got " + std::to_string(grid_size) + ")");
  return grid_size;
}

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
  const std::size_t n = X.n_rows, d = X.n_cols;
  check::require(opt_.degree >= 0 && opt_.degree <= 3, "degree", "must be 0, 1, 2 or 3");
  opt_.kernel.require_nonnegative("the binned fit");
  check::require(std::isfinite(opt_.ridge) && opt_.ridge >= 0.0, "ridge", "must be >= 0 and finite");
  check::require(d >= 1, "X", "needs at least one column");
  const int gs = binned_grid_size(std::vector<VarType>(d, VarType::continuous), opt_.grid_size);
  check::require(opt_.degree <= 1 || d == 1, "degree",
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
  auto I = std::make_unique<Impl>();
  I->grid = make_grid(X, static_cast<std::size_t>(gs));
  I->basis = basis_exponents(d, opt_.degree);
  I->q = I->basis.size();
  I->k = Y.n_cols;
  linear_bin(I->grid, X, Y, sample_weight, I->c, I->S, nullptr);
  const double total_w = arma::accu(I->c);
  const std::size_t q = I->q, k = I->k, T = I->grid.total();
  GridFft fft(I->grid);
  I->noise = 1e-13 * total_w;
  // Moments at every node: one kernel spectrum per exponent pair.
  std::size_t L[2] = {reach(opt_.kernel, I->grid.delta[0], h(0), I->grid.G[0]), 0};
  if (d == 2) L[1] = reach(opt_.kernel, I->grid.delta[1], h(1), I->grid.G[1]);
  const cvec cs = fft.forward_data(I->c.memptr());
  std::vector<cvec> ss(k);
  for (std::size_t o = 0; o < k; ++o) ss[o] = fft.forward_data(I->S.colptr(o));
  // A_rs from exponent sums, T_r from basis exponents.
  std::vector<std::vector<double>> Am(q * q), Tm(q * k);
  std::vector<std::vector<double>> cacheA;
  std::vector<std::array<int, 2>> seen;
  auto kernel_spec = [&](std::array<int, 2> e) {
    const auto k0 = axis_kernel(opt_.kernel, I->grid.delta[0], h(0), L[0], e[0], false);
    const auto k1 = d == 2 ? axis_kernel(opt_.kernel, I->grid.delta[1], h(1), L[1], e[1], false)
                           : std::vector<double>{1.0};
    return fft.forward_kernel(k0, k1);
  };
  for (std::size_t r = 0; r < q; ++r)
    for (std::size_t s = r; s < q; ++s) {
      const std::array<int, 2> e{I->basis[r][0] + I->basis[s][0], I->basis[r][1] + I->basis[s][1]};
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
    const cvec ks = kernel_spec(I->basis[r]);
    for (std::size_t o = 0; o < k; ++o) {
      Tm[r * k + o].assign(T, 0.0);
      fft.correlate(ss[o], ks, Tm[r * k + o].data());
    }
  }
  const std::vector<double> pen = penalties(h, opt_.degree);
  I->coef.assign(T * q * k, kNaN);
  I->status.assign(T, QueryStatus::ok);
  std::vector<double> A(q * q), Tv(q * k);
  for (std::size_t g = 0; g < T; ++g) {
    for (std::size_t r = 0; r < q; ++r)
      for (std::size_t s = 0; s < q; ++s) A[r * q + s] = Am[std::min(r, s) * q + std::max(r, s)][g];
    for (std::size_t t = 0; t < q * k; ++t) Tv[t] = Tm[t][g];
    std::vector<double> cf(q * k);
    const QueryStatus st = solve_node(A, Tv.data(), q, k, opt_.ridge, pen, I->noise, cf.data());
    I->status[g] = st;
    if (st == QueryStatus::ok) std::copy(cf.begin(), cf.end(), I->coef.begin() + g * q * k);
  }
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
        const double wt = (s0 ? f[0] : 1.0 - f[0]) * (d == 2 ? (s1 ? f[1] : 1.0 - f[1]) : 1.0);
        if (wt == 0.0) continue;
        const std::size_t node = (g[0] + s0) * I.grid.G[1] + (d == 2 ? g[1] + s1 : 0);
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

}  // namespace

arma::mat BinnedLocalPolynomial::predict(const arma::mat& X_new) const {
  require_fitted("predict");
  check::require(X_new.n_cols == x_.n_cols, "X",
                 "must have " + std::to_string(x_.n_cols) + " column(s), as in fit");
  check::all_finite(X_new, "X");
  std::vector<double> cf;
  std::vector<QueryStatus> st;
  query_coefficients(*impl_, opt_, h_, X_new, cf, st);
  throw_failed(st, h_, impl_->grid.delta, impl_->grid.d, "X");
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
  std::vector<double> cf;
  std::vector<QueryStatus> st;
  query_coefficients(*impl_, opt_, h_, X_new, cf, st);
  throw_failed(st, h_, impl_->grid.delta, 1, "X");
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
  std::vector<double> cf;
  std::vector<QueryStatus> st;
  query_coefficients(*impl_, opt_, h_, X_new, cf, st);
  throw_failed(st, h_, impl_->grid.delta, impl_->grid.d, "X");
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
    std::vector<double> cf;
    std::vector<QueryStatus> st;
    query_coefficients(*impl_, opt_, h_, x_, cf, st);
    throw_failed(st, h_, impl_->grid.delta, impl_->grid.d, "X (training rows)");
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
  eo.kernel = opt_.kernel;
  eo.ridge = opt_.ridge;
  eo.compute_fitted = false;
  eo.n_threads = opt_.n_threads;
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

// ------------------------------------------------------------------------------ cv_ls
struct BinnedCVObjective::Impl {
  Grid grid;
  int degree = 1;
  Kernel kernel;
  double ridge = 0.0;
  double n_obs = 0.0;
  int n_threads = 0;
  arma::mat X;  ///< training rows (the leave-one-out fits are evaluated at each)
  arma::vec y;
  arma::vec c;
  arma::mat S;
  std::unique_ptr<GridFft> fft;
  cvec cs, ss;
  /// Points by cell (cell (c0, c1) = c0 * C1 + c1): CSR start offsets and row indices, and per
  /// cell the power sums sum f0^a f1^b (y^2, y, 1), a, b <= 2 ((b * 3 + a) * 3 + {0, 1, 2}).
  std::vector<std::size_t> cell_start, cell_points;
  std::vector<double> power;
  std::mutex mutex;  // one FFT buffer
};

BinnedCVObjective::BinnedCVObjective(const arma::mat& X, const arma::vec& y, int degree,
                                     const Kernel& kernel, double ridge, int grid_size,
                                     int n_threads)
    : impl_(std::make_unique<Impl>()) {
  check::require(degree == 0 || degree == 1, "estimator",
                 "the binned objective is for local constant or local linear fits");
  kernel.require_nonnegative("the binned objective");
  int gs = binned_grid_size(std::vector<VarType>(X.n_cols, VarType::continuous), grid_size,
                            "approx_grid_size");
  if (grid_size == 0 && X.n_cols == 1) gs = kBinnedSelectGrid1D;
  check::require(y.n_elem == X.n_rows, "y", "must have one value per row of X");
  check::all_finite(X, "X");
  check::all_finite(y, "y");
  Impl& I = *impl_;
  I.grid = make_grid(X, static_cast<std::size_t>(gs));
  I.degree = degree;
  I.kernel = kernel;
  I.ridge = degree == 1 ? ridge : 0.0;
  I.n_obs = static_cast<double>(X.n_rows);
  I.n_threads = n_threads;
  I.X = X;
  I.y = y;
  linear_bin(I.grid, X, arma::mat(y), arma::vec(), I.c, I.S, nullptr);
  I.fft = std::make_unique<GridFft>(I.grid);
  I.cs = I.fft->forward_data(I.c.memptr());
  I.ss = I.fft->forward_data(I.S.colptr(0));
  const std::size_t d = I.grid.d, n = X.n_rows;
  const std::size_t C1 = d == 2 ? I.grid.G[1] - 1 : 1, ncell = (I.grid.G[0] - 1) * C1;
  std::vector<std::size_t> cell_of(n);
  I.cell_start.assign(ncell + 1, 0);
  I.power.assign(ncell * 9 * 3, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t g[2] = {0, 0};
    double f[2] = {0.0, 0.0};
    for (std::size_t a = 0; a < d; ++a) locate(I.grid, a, X(i, a), g[a], f[a]);
    const std::size_t cell = g[0] * C1 + (d == 2 ? g[1] : 0);
    cell_of[i] = cell;
    ++I.cell_start[cell + 1];
    double p0 = 1.0;
    for (std::size_t a0 = 0; a0 < 3; ++a0, p0 *= f[0]) {
      double p1 = 1.0;
      for (std::size_t a1 = 0; a1 < (d == 2 ? 3u : 1u); ++a1, p1 *= f[1]) {
        double* P = I.power.data() + cell * 27 + (a1 * 3 + a0) * 3;
        const double w = p0 * p1;
        P[0] += w * y(i) * y(i);
        P[1] += w * y(i);
        P[2] += w;
      }
    }
  }
  for (std::size_t c = 0; c < ncell; ++c) I.cell_start[c + 1] += I.cell_start[c];
  I.cell_points.assign(n, 0);
  std::vector<std::size_t> fill(I.cell_start.begin(), I.cell_start.end() - 1);
  for (std::size_t i = 0; i < n; ++i) I.cell_points[fill[cell_of[i]]++] = i;
}

BinnedCVObjective::~BinnedCVObjective() = default;

double BinnedCVObjective::spacing(std::size_t a) const { return impl_->grid.delta[a]; }

double BinnedCVObjective::operator()(const arma::vec& bandwidth, arma::vec* grad) const {
  Impl& I = *impl_;
  const std::size_t d = I.grid.d, T = I.grid.total();
  check::require(bandwidth.n_elem == d, "bandwidth", "needs one value per column of X");
  for (std::size_t a = 0; a < d; ++a)
    check::require(std::isfinite(bandwidth(a)) && bandwidth(a) > 0.0, "bandwidth",
                   "must be > 0 and finite");
  std::lock_guard<std::mutex> lock(I.mutex);
  const auto basis = basis_exponents(d, I.degree);
  const std::size_t q = basis.size();
  std::size_t L[2] = {reach(I.kernel, I.grid.delta[0], bandwidth(0), I.grid.G[0]), 0};
  if (d == 2) L[1] = reach(I.kernel, I.grid.delta[1], bandwidth(1), I.grid.G[1]);
  const int n_psi = grad != nullptr ? static_cast<int>(d) : 0;
  // Node moments, packed per node: for p = -1 (the moments), 0, 1 (h_a d/dh_a of them): A (q x q)
  // then T (q). h_a dM/dh_a = D^a - e_a M (D^a: the moments of k(u) psi(u_a) u^e).
  const std::size_t blk = q * q + q, W = blk * static_cast<std::size_t>(1 + n_psi);
  std::vector<double> node(T * W, 0.0);
  struct Plane {
    std::array<int, 2> e;
    int psi;
    std::vector<double> c, s;  // correlations of the binned weights and responses
  };
  std::vector<Plane> planes;
  auto need = [&](std::array<int, 2> e, int psi) -> const Plane& {
    for (const Plane& p : planes)
      if (p.e == e && p.psi == psi) return p;
    const auto k0 = axis_kernel(I.kernel, I.grid.delta[0], bandwidth(0), L[0], e[0], psi == 0);
    const auto k1 = d == 2 ? axis_kernel(I.kernel, I.grid.delta[1], bandwidth(1), L[1], e[1], psi == 1)
                           : std::vector<double>{1.0};
    const cvec ks = I.fft->forward_kernel(k0, k1);
    Plane p{e, psi, std::vector<double>(T), std::vector<double>(T)};
    I.fft->correlate(I.cs, ks, p.c.data());
    I.fft->correlate(I.ss, ks, p.s.data());
    planes.push_back(std::move(p));
    return planes.back();
  };
  for (int p = -1; p < n_psi; ++p) {
    const std::size_t off = blk * static_cast<std::size_t>(p + 1);
    for (std::size_t r = 0; r < q; ++r)
      for (std::size_t s = 0; s < q; ++s) {
        const std::array<int, 2> e{basis[r][0] + basis[s][0], basis[r][1] + basis[s][1]};
        const std::vector<double> M = need(e, -1).c;
        const std::vector<double> D = p >= 0 ? need(e, p).c : std::vector<double>();
        for (std::size_t g = 0; g < T; ++g)
          node[g * W + off + r * q + s] = p < 0 ? M[g] : D[g] - e[p] * M[g];
      }
    for (std::size_t r = 0; r < q; ++r) {
      const std::vector<double> M = need(basis[r], -1).s;
      const std::vector<double> D = p >= 0 ? need(basis[r], p).s : std::vector<double>();
      for (std::size_t g = 0; g < T; ++g)
        node[g * W + off + q * q + r] = p < 0 ? M[g] : D[g] - basis[r][p] * M[g];
    }
  }
  const std::vector<double> pen = penalties(bandwidth, I.degree);
  // The leave-one-out fit of an observation (x, y) with its moments interpolated at x:
  // e = y - m_{-i} = y (1 + v_0) - alpha (v = A_-^{-1} e1, alpha = v' T), so
  // e^2 = G1 y^2 + G2 y + G3 with G1 = (1 + v_0)^2, G2 = -2 (1 + v_0) alpha, G3 = alpha^2;
  // out[0..2] = G, out[3 + 3a ..] = their log h_a derivatives. False when it does not exist.
  auto loo_parts = [&](const double* mv, double* out, double* omega_out) -> bool {
    double Af[16], B[8], v[4], b[4], dAf[16];
    const double* A = mv;
    const double* Tv = mv + q * q;
    std::copy(A, A + q * q, Af);
    Af[0] -= 1.0;  // the point's own weight k(0) at u = 0
    const double omega = Af[0];
    if (omega_out != nullptr) *omega_out = omega;
    // Below the FFT's rounding of a sum of n unit weights the fit has no other point.
    if (!(omega > 1e-12 * I.n_obs)) return false;
    local_solve::add_ridge(Af, q, 1, I.ridge, omega, pen.data());
    for (std::size_t r = 0; r < q; ++r) {
      B[r * 2] = r == 0 ? 1.0 : 0.0;
      B[r * 2 + 1] = Tv[r];
    }
    if (!spd_solve(Af, q, B, 2)) return false;
    for (std::size_t r = 0; r < q; ++r) {
      v[r] = B[r * 2];
      b[r] = B[r * 2 + 1];
    }
    const double alpha = b[0], ob = 1.0 + v[0];
    out[0] = ob * ob;
    out[1] = -2.0 * ob * alpha;
    out[2] = alpha * alpha;
    for (int a = 0; a < n_psi; ++a) {
      const double* dA = mv + blk * static_cast<std::size_t>(a + 1);
      const double* dT = dA + q * q;
      std::copy(dA, dA + q * q, dAf);
      if (I.ridge > 0.0)
        for (std::size_t t = 1; t < q; ++t) {
          // pen_t = h_t^-2: its log h_a derivative is -2 pen_t for the slope of axis a.
          const double dpen = (t - 1 == static_cast<std::size_t>(a)) ? -2.0 * pen[t - 1] : 0.0;
          dAf[t * q + t] += I.ridge * (dA[0] * pen[t - 1] + omega * dpen);
        }
      double dv0 = 0.0, dalpha = 0.0;  // dv = -A^-1 dA v; d alpha = v' (dT - dA b)
      for (std::size_t r = 0; r < q; ++r) {
        double tv = 0.0, tb = dT[r];
        for (std::size_t s2 = 0; s2 < q; ++s2) {
          tv += dAf[r * q + s2] * v[s2];
          tb -= dAf[r * q + s2] * b[s2];
        }
        dv0 -= v[r] * tv;
        dalpha += v[r] * tb;
      }
      out[3 + 3 * a] = 2.0 * ob * dv0;
      out[4 + 3 * a] = -2.0 * (dv0 * alpha + ob * dalpha);
      out[5 + 3 * a] = 2.0 * alpha * dalpha;
    }
    return true;
  };
  // Moments interpolated at fractions f of the cell with lower node g.
  auto interpolate = [&](const std::size_t* g, const double* f, double* mv) {
    std::fill(mv, mv + W, 0.0);
    for (std::size_t s0 = 0; s0 < 2; ++s0)
      for (std::size_t s1 = 0; s1 < (d == 2 ? 2u : 1u); ++s1) {
        const double wt = (s0 ? f[0] : 1.0 - f[0]) * (d == 2 ? (s1 ? f[1] : 1.0 - f[1]) : 1.0);
        if (wt == 0.0) continue;
        const double* nv = node.data() + ((g[0] + s0) * I.grid.G[1] + (d == 2 ? g[1] + s1 : 0)) * W;
        for (std::size_t t = 0; t < W; ++t) mv[t] += wt * nv[t];
      }
  };
  // Per cell: the parts G at f in {0, 1/2, 1} (per column) fitted by a quadratic (tensor
  // quadratic in 2-D) in f, summed against the cell's power sums sum f^a (1, y, y^2) of its
  // points: the interpolation error is O((delta / h)^3), below the binning's. A cell where some
  // of these fits does not exist is summed point by point.
  const std::size_t nparts = 3 * static_cast<std::size_t>(1 + n_psi);
  const std::size_t C0 = I.grid.G[0] - 1, C1 = d == 2 ? I.grid.G[1] - 1 : 1;
  const std::size_t ns = d == 2 ? 9 : 3;
  double total = 0.0;
  std::vector<double> gsum(d, 0.0);
  std::vector<double> mv(W), parts(nparts * ns), out(nparts);
  static const double Mq[3][3] = {{1, 0, 0}, {-3, 4, -1}, {2, -4, 2}};
  static const double fs[3] = {0.0, 0.5, 1.0};
  for (std::size_t c0 = 0; c0 < C0; ++c0)
    for (std::size_t c1 = 0; c1 < C1; ++c1) {
      const std::size_t cell = c0 * C1 + c1;
      if (I.cell_start[cell] == I.cell_start[cell + 1]) continue;
      const std::size_t g[2] = {c0, c1};
      // The quadratic is trusted where every sample has at least one unit of other points'
      // weight (where the point's own weight dominates, the parts vary too fast within the
      // cell) and the cell's sum of squares comes out non-negative.
      bool ok = true;
      for (std::size_t s = 0; s < ns && ok; ++s) {
        const double f[2] = {fs[s % 3], d == 2 ? fs[s / 3] : 0.0};
        interpolate(g, f, mv.data());
        double omega = 0.0;
        ok = loo_parts(mv.data(), parts.data() + s * nparts, &omega) && omega >= 1.0;
      }
      const double* P = I.power.data() + cell * 27;
      if (ok) {
        double cell_sum[9];
        // coefficient (a, b) of f0^a f1^b: sum_{i,j} M[a][i] M[b][j] value(i, j)
        for (std::size_t t = 0; t < nparts; ++t) {
          double acc = 0.0;
          for (std::size_t a0 = 0; a0 < 3; ++a0)
            for (std::size_t a1 = 0; a1 < (d == 2 ? 3u : 1u); ++a1) {
              double coef = 0.0;
              for (std::size_t i0 = 0; i0 < 3; ++i0)
                for (std::size_t i1 = 0; i1 < (d == 2 ? 3u : 1u); ++i1)
                  coef += Mq[a0][i0] * (d == 2 ? Mq[a1][i1] : 1.0) *
                          parts[(i1 * 3 + i0) * nparts + t];
              // t % 3: 0 -> y^2, 1 -> y, 2 -> 1 (as the power sums)
              acc += coef * P[(a1 * 3 + a0) * 3 + t % 3];
            }
          cell_sum[t] = acc;
        }
        ok = cell_sum[0] + cell_sum[1] + cell_sum[2] >= 0.0;
        if (ok) {
          for (std::size_t t = 0; t < nparts; ++t) {
            if (t < 3) total += cell_sum[t];
            else gsum[(t - 3) / 3] += cell_sum[t];
          }
          continue;
        }
      }
      for (std::size_t k = I.cell_start[cell]; k < I.cell_start[cell + 1]; ++k) {
        const std::size_t i = I.cell_points[k];
        std::size_t gi[2] = {0, 0};
        double f[2] = {0.0, 0.0};
        for (std::size_t a = 0; a < d; ++a) locate(I.grid, a, I.X(i, a), gi[a], f[a]);
        interpolate(gi, f, mv.data());
        if (!loo_parts(mv.data(), out.data(), nullptr)) return kInf;
        const double yi = I.y(i);
        total += out[0] * yi * yi + out[1] * yi + out[2];
        for (int a = 0; a < n_psi; ++a)
          gsum[a] += out[3 + 3 * a] * yi * yi + out[4 + 3 * a] * yi + out[5 + 3 * a];
      }
    }
  // The criterion and its gradient (criteria.hpp): total is the leave-one-out RSS.
  if (grad != nullptr) criteria::cv_ls(total, I.n_obs, arma::vec(gsum), *grad);
  return criteria::cv_ls(total, I.n_obs);
}

}  // namespace attnreg
