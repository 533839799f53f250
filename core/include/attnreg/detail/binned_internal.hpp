// attnreg (internal): the pieces the binned fit (kernels/binned.cpp) and the binned cv_ls
// objective (kernels/binned_cv.cpp) share: the grid and linear binning
// (kernels/binned_grid.cpp), the zero-padded FFTs over it (kernels/binned_fft.cpp), and the
// kernel and solve helpers of the local moments. See kernels/binned.hpp for the method.
#pragma once

#include <fftw3.h>

#include <array>
#include <complex>
#include <cstddef>
#include <vector>

#include "attnreg/base/arma.hpp"
#include "attnreg/kernels/binned.hpp"
#include "attnreg/kernels/kernel.hpp"

namespace attnreg {
namespace binned_detail {

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

/// gs nodes per column of X spanning its range (a constant column is an error).
Grid make_grid(const arma::mat& X, std::size_t gs);

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

/// Weight of corner (s0, s1) of the cell at fractions f in the linear interpolation.
inline double corner_weight(std::size_t d, const double* f, std::size_t s0, std::size_t s1) {
  return (s0 ? f[0] : 1.0 - f[0]) * (d == 2 ? (s1 ? f[1] : 1.0 - f[1]) : 1.0);
}

/// Node index of corner (s0, s1) of the cell with lower node g.
inline std::size_t corner_node(const Grid& grid, const std::size_t* g, std::size_t s0,
                               std::size_t s1) {
  return (g[0] + s0) * grid.G[1] + (grid.d == 2 ? g[1] + s1 : 0);
}

/// Linear binning (one thread: the sums do not depend on the thread count). c: weights,
/// S: total x k weighted responses, Q (optional): weighted squares of output 0.
void linear_bin(const Grid& grid, const arma::mat& X, const arma::mat& Y, const arma::vec& w,
                arma::vec& c, arma::mat& S, arma::vec* Q);

// ------------------------------------------------------------------------------ FFTs
using cvec = std::vector<std::complex<double>>;

/// Zero-padded real FFTs over the grid (P_a = a 7-smooth size >= 2 G_a - 1, so a correlation
/// with any kernel of reach <= G_a - 1 does not wrap around). Not thread-safe (one buffer).
class GridFft {
 public:
  explicit GridFft(const Grid& grid);
  ~GridFft();
  GridFft(const GridFft&) = delete;
  GridFft& operator=(const GridFft&) = delete;

  std::size_t padded(std::size_t a) const { return P_[a]; }

  /// Spectrum of grid data (total values, node (g0, g1) at g0 * G1 + g1).
  cvec forward_data(const double* data) const;
  /// Spectrum of the separable kernel k0(j0) k1(j1), j_a in [-L_a, L_a] (vector index j + L),
  /// stored flipped so that the product with a data spectrum is the correlation
  /// out(g) = sum_j data(g + j) k(j).
  cvec forward_kernel(const std::vector<double>& k0, const std::vector<double>& k1) const;
  /// out (total) = correlation of the data with the kernel.
  void correlate(const cvec& data, const cvec& kern, double* out) const;

 private:
  cvec run_forward() const;
  Grid grid_;
  std::size_t P_[2] = {1, 1};
  std::size_t nreal_ = 0, ncplx_ = 0;
  double* real_ = nullptr;
  fftw_complex* cplx_ = nullptr;
  fftw_plan fwd_ = nullptr, inv_ = nullptr;
};

// ------------------------------------------------------------------------------ moments
/// Exponents (e0, e1) of the basis terms: 1-D (0), (1), ..., (p); 2-D (0,0), (1,0), (0,1).
std::vector<std::array<int, 2>> basis_exponents(std::size_t d, int degree);

/// Kernel reach in nodes along column a.
std::size_t reach(const Kernel& K, double delta, double h, std::size_t G);

/// k(u) u^e (psi: k(u) psi(u) u^e) at u = j delta / h, j = -L..L.
std::vector<double> axis_kernel(const Kernel& K, double delta, double h, std::size_t L, int e,
                                bool with_psi);

/// Spectrum of the kernel k(u) u0^e0 u1^e1 over the grid (reach L per column), with psi on
/// column psi (-1: on none).
cvec kernel_spectrum(const GridFft& fft, const Grid& grid, const Kernel& K, const arma::vec& h,
                     const std::size_t* L, std::array<int, 2> e, int psi);

/// The local fit's solve (local_solve.hpp) of the q x q SPD system A X = B (B q x r,
/// row-major, in place), q <= 4: false where the exact fit would report a singular design.
bool spd_solve(const double* A, std::size_t q, double* B, std::size_t r);

/// Penalty scale of each basis term (bandwidth units), as local_penalty_scales.
std::vector<double> penalties(const arma::vec& h, int degree);

}  // namespace binned_detail
}  // namespace attnreg
