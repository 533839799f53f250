// attnreg: binned approximations of the local polynomial fits and of the cv_ls objective, for
// one or two continuous columns (no categorical ones), any kernel.
//
// Linear binning (Wand 1994, "Fast computation of multivariate kernel estimators", J. Comput.
// Graph. Statist. 3(4); Fan and Marron 1994, J. Comput. Graph. Statist. 3(1); the scheme of
// R's KernSmooth::locpoly): a training point x with weight a and response y, between the grid
// nodes g and g + 1 (spacing delta, x = node_g + f delta), gives a (1 - f) to node g and a f to
// node g + 1, and the same shares of a y (and a y^2); in 2-D the four nodes of its cell get the
// bilinear shares. The binned data are then G (or G1 x G2) pseudo-observations at the nodes.
//
// At every node the local moments of the binned data,
//     A_rs(g) = sum_j c_{g+j} k(u_j) z_r(u_j) z_s(u_j),  T_r(g) = sum_j S_{g+j} k(u_j) z_r(u_j),
// u_j = j delta / h (bandwidth units, the basis z = (1, u, ..., u^p) in 1-D, (1, u1, u2) in 2-D),
// are discrete correlations of the grid counts with k(u) u^e: computed for all nodes at once by
// FFT (FFTW 3, zero-padded so that nothing wraps around; the kernel is kept while its shape
// exceeds 1e-17, i.e. 8.85 bandwidths for the Gaussian). Each node then solves the same
// equilibrated Cholesky system as the exact fit (local_fit.hpp; the omega-scaled ridge
// included), which gives the fit and the derivatives nu! beta_nu / h^nu at the nodes.
// Between nodes the fit (and each derivative) is interpolated linearly (bilinearly in 2-D);
// beyond the grid (a query outside the training range) the moments are summed directly over
// the binned data. Cost: O(n) to bin, O(G log G) per bandwidth, O(1) per query.
//
// Error: the binned fit differs from the exact one by O((delta / h)^2) (the binning error of
// Hall and Wand 1996, "On the accuracy of binned kernel density estimators", J. Multivariate
// Anal. 56, plus the interpolation between nodes): it falls fourfold when the grid doubles,
// and is exact at the nodes when every training point sits on a node. approx_error() measures
// it: exact and binned fits at a random subsample of the training rows.
//
// Leave-one-out (the cv_ls objective): CV(h) = n^{-1} sum_i (y_i - m_{-i}(x_i))^2 with the
// moments at x_i interpolated (linearly, bilinearly) from the node moments and the point's own
// weight k(0) = 1 at u = 0 taken out, A_- = A(x_i) - e1 e1', T_- = T(x_i) - y_i e1 (the binned
// data smear the point over its cell's nodes; interpolating back leaves it at x_i up to
// O((delta / h)^2), the same order as the fit's error). m_{-i} = e1' A_-^{-1} T_- (with the
// omega-scaled ridge of A_-). The gradient in log h_a is exact for this binned objective:
// h_a dA/dh_a comes from the node moments of k(u) psi(u_a) u^e, psi = -u k'(u) / k(u), by the
// same FFTs (bandwidth_gradient.cpp eq. (1)). The squared residual of an observation (x, y) is
// G1(x) y^2 + G2(x) y + G3(x), smooth in x; within each grid cell the G's are fitted by a
// quadratic (tensor quadratic in 2-D) in the position f through f = 0, 1/2, 1 and summed
// against the cell's power sums sum f^a (1, y, y^2) (error O((delta / h)^3), below the
// binning's), so an evaluation costs O(G log G + G) after one O(n) pass. A cell where some
// sample has less than one unit of other points' weight, or whose sum comes out negative, is
// summed point by point. The search starts at five grid spacings.
//
// Threads: the binning and the FFTs run on one thread; the per-query interpolation is split
// across threads without reductions, and the cv_ls sum runs over the cells in order on one
// thread, so every number is the same for any thread count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attnreg/base/arma.hpp"
#include "attnreg/base/option_spec.hpp"
#include "attnreg/kernels/kernel.hpp"

namespace attnreg {

/// How a kernel estimator or the bandwidth objective is computed.
enum class Approximation : int { exact = 0, binned = 1 };

/// Parse "exact" / "binned" (case-insensitive). Throws InvalidArgument naming `arg`.
Approximation approximation_from_name(const std::string& name, const std::string& arg = "approx");
const char* approximation_name(Approximation a);

/// Default grid points per continuous column: 401 in 1-D (as KernSmooth), 101 x 101 in 2-D.
constexpr int kBinnedGrid1D = 401;
constexpr int kBinnedGrid2D = 101;
/// Default grid of the binned cv_ls objective in 1-D: finer than the fit's, because the
/// minimiser of a flat CV curve moves with errors far below the fit's (measured: the chosen h
/// is within about 1e-3 relative of the exact one for delta / h <= 0.07); an evaluation costs
/// O(G log G) after one O(n) pass, so the finer grid costs little. 2-D: kBinnedGrid2D.
constexpr int kBinnedSelectGrid1D = 4001;
/// Smallest grid accepted per column.
constexpr int kBinnedMinGrid = 10;

/// Check that binning applies to data with these column types and this grid size (0 = the
/// default): one or two continuous columns and no categorical one, grid_size 0 or >= 10.
/// Throws InvalidArgument naming `approx` or `grid_size_arg` and the fix. Returns the grid
/// size per column.
int binned_grid_size(const std::vector<VarType>& types, int grid_size,
                     const std::string& grid_size_arg = "grid_size");

struct BinnedFitOptions {
  int degree = spec::binned::degree;  ///< 0 NW, 1 local linear, 2 or 3 (one continuous column)
  Kernel kernel{KernelType::gaussian};
  double ridge = spec::binned::ridge;  ///< omega-scaled ridge on the slopes, as LocalFitOptions
  int grid_size = spec::binned::grid_size;  ///< per column; 0 = kBinnedGrid1D / kBinnedGrid2D
  int n_threads = spec::binned::n_threads;  ///< 0 = OpenMP default (results do not depend on it)
};

/// Exact vs binned fit at a random subsample of the training rows (approx_error()).
struct BinnedErrorEstimate {
  std::size_t n_points = 0;  ///< rows compared (rows whose exact fit does not exist are skipped)
  double max_abs = 0.0;      ///< max over rows and outputs of |binned - exact|
  double rms = 0.0;          ///< root mean square of the differences
  double scale = 0.0;        ///< standard deviation of the training responses (output 0)
  double relative = 0.0;     ///< max_abs / scale (0 when scale is 0)
  std::uint64_t seed = 0;    ///< the subsample's seed
};

/// Binned local polynomial fit (see the file comment). One or two continuous columns.
class BinnedLocalPolynomial {
 public:
  explicit BinnedLocalPolynomial(BinnedFitOptions options = {});
  ~BinnedLocalPolynomial();
  BinnedLocalPolynomial(BinnedLocalPolynomial&&) noexcept;
  BinnedLocalPolynomial& operator=(BinnedLocalPolynomial&&) noexcept;

  /// X n x d (d = 1 or 2, all continuous), Y n x k, bandwidth length d (or 1 for all
  /// columns), optional sample weights (n, >= 0). Validates like LocalPolynomial::fit (names
  /// the argument); a constant column is an error (no grid spans it).
  BinnedLocalPolynomial& fit(const arma::mat& X, const arma::mat& Y, const arma::vec& bandwidth,
                             const arma::vec& sample_weight = arma::vec());

  /// Fit at new rows (m x d) -> m x k. Throws NumericalError naming the first row whose
  /// binned fit does not exist (no weight near it, or a singular local design).
  arma::mat predict(const arma::mat& X_new) const;
  /// d m / d x_j at new rows: m x d x k (degree >= 1).
  arma::cube gradient(const arma::mat& X_new) const;
  /// The order-th derivative (1-D, 0 <= order <= degree): m x k.
  arma::mat derivative(const arma::mat& X_new, int order) const;
  /// Fitted values at the training rows (interpolated; computed on first use, cached).
  const arma::mat& fitted() const;

  /// Grid nodes per column (G_a) and the node coordinates of column a.
  std::vector<std::size_t> grid_shape() const;
  arma::vec grid_nodes(std::size_t column) const;
  /// Fit at every node (G x k, 2-D: node (g0, g1) at row g0 * G1 + g1; NaN where undefined).
  arma::mat grid_fit() const;

  /// Exact and binned fits at min(n_points, n) training rows drawn without replacement with
  /// `seed` (computed once per (n_points, seed), then cached).
  BinnedErrorEstimate approx_error(std::size_t n_points = 200, std::uint64_t seed = 0) const;

  const BinnedFitOptions& options() const { return opt_; }
  const arma::vec& bandwidth() const { return h_; }
  const arma::mat& training_x() const { return x_; }
  const arma::mat& training_y() const { return y_; }
  const arma::vec& sample_weight() const { return w_; }
  std::size_t n_obs() const { return x_.n_rows; }
  bool is_fitted() const { return impl_ != nullptr; }

  struct Impl;

 private:
  void require_fitted(const char* what) const;
  BinnedFitOptions opt_;
  arma::mat x_, y_;
  arma::vec w_, h_;
  std::unique_ptr<Impl> impl_;
  mutable arma::mat fitted_;
  mutable bool have_fitted_ = false;
  mutable BinnedErrorEstimate err_;
  mutable std::size_t err_points_ = 0;
  mutable std::uint64_t err_seed_ = 0;
  mutable bool have_err_ = false;
};

/// Binned cv_ls objective (see "Leave-one-out" in the file comment) for degree 0 or 1 over one
/// or two continuous columns. Bins once; each evaluation costs O(G log G + G) (plus the points
/// of cells summed point by point).
class BinnedCVObjective {
 public:
  BinnedCVObjective(const arma::mat& X, const arma::vec& y, int degree, const Kernel& kernel,
                    double ridge, int grid_size, int n_threads = 0);  // n_threads: unused
                    // (an evaluation is O(G log G + G) on one thread); kept for the interface
  ~BinnedCVObjective();
  /// CV(h) (+inf where some point's leave-one-out fit does not exist); grad (length d) is set
  /// to d CV / d log h_a when non-null.
  double operator()(const arma::vec& bandwidth, arma::vec* grad = nullptr) const;
  /// Node spacing of column a.
  double spacing(std::size_t a) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace attnreg
