// attnreg: the binning grid, linear binning, the kernel and solve helpers of the binned local
// moments (binned_internal.hpp), and the names and grid sizes of the approximations.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

#include "attnreg/base/error.hpp"
#include "attnreg/detail/binned_internal.hpp"
#include "attnreg/solve/local_fit.hpp"
#include "attnreg/solve/local_solve.hpp"
#include "attnreg/base/names.hpp"

namespace attnreg {
namespace binned_detail {
namespace {

/// Gaussian kernel kept while its shape exceeds 1e-17: |u| <= sqrt(2 ln 1e17).
constexpr double kGaussianReach = 8.85;

}  // namespace

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

}  // namespace binned_detail

// ------------------------------------------------------------------------------ names
Approximation approximation_from_name(const std::string& name, const std::string& arg) {
  const std::string s = detail::lower_case(name);
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

}  // namespace attnreg
