// attnreg: the binned cv_ls objective and its gradient (see binned.hpp, "Leave-one-out").
#include <algorithm>
#include "attnreg/base/constants.hpp"
#include <array>
#include <cmath>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <utility>

#include "attnreg/bandwidth/criteria.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/detail/binned_internal.hpp"
#include "attnreg/solve/local_solve.hpp"

namespace attnreg {

using namespace binned_detail;  // binned_internal.hpp

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
namespace {


/// 1-D: the values of axis_kernel (binned_grid.cpp) for every plane of one evaluation,
/// k(u) u^e (with psi: k(u) psi(u) u^e) at u = j delta / h, j = -L..L, in the same operations,
/// with k(u), psi(u) and each power u^e (std::pow, as there; u^1 = u exactly) computed once
/// instead of once per plane.
class AxisTable {
 public:
  AxisTable(const Kernel& K, double delta, double h, std::size_t L, bool with_psi)
      : u_(2 * L + 1), k_(2 * L + 1), psi_(with_psi ? 2 * L + 1 : 0) {
    for (std::size_t i = 0; i < u_.size(); ++i) {
      const double j = static_cast<double>(static_cast<long>(i) - static_cast<long>(L));
      u_[i] = j * delta / h;
      k_[i] = K.shape(u_[i]);
      if (with_psi && k_[i] != 0.0) psi_[i] = kernel_psi(K.type, u_[i]);
    }
  }
  std::vector<double> plane(int e, bool with_psi) {
    const std::vector<double>* pw = e > 0 ? &power(e) : nullptr;
    std::vector<double> v(k_);
    for (std::size_t i = 0; i < v.size(); ++i) {
      double s = v[i];
      if (s != 0.0 && with_psi) s *= psi_[i];
      if (s != 0.0 && e > 0) s *= (*pw)[i];
      v[i] = s;
    }
    return v;
  }

 private:
  const std::vector<double>& power(int e) {
    if (e == 1) return u_;
    for (const auto& p : powers_)
      if (p.first == e) return p.second;
    std::vector<double> v(u_.size());
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::pow(u_[i], e);
    powers_.emplace_back(e, std::move(v));
    return powers_.back().second;
  }
  std::vector<double> u_, k_, psi_;
  std::vector<std::pair<int, std::vector<double>>> powers_;
};

/// One evaluation of the objective at a bandwidth: the moments at every node and the
/// leave-one-out parts of a point from the moments interpolated at it.
struct CvEvaluation {
  CvEvaluation(const BinnedCVObjective::Impl& impl, const arma::vec& bandwidth, bool with_grad);
  bool loo_parts(const double* mv, double f, double* out, double* omega_out) const;
  void interpolate(const std::size_t* g, const double* f, double* mv) const;

  const BinnedCVObjective::Impl& I;
  std::size_t d, T, q, blk, W;
  int n_psi;
  std::vector<std::array<int, 2>> basis;
  std::vector<double> node;  ///< per node: W values (see node_moments)
  std::vector<double> pen;
  /// 1-D: the kernel at one grid step, k(r) and k(r) r^2 (r = delta / h; 0 beyond the
  /// kernel's reach, as in the binned moments), and their h d/dh (see loo_parts).
  double self_k = 0.0, self_k2 = 0.0, self_dk = 0.0, self_dk2 = 0.0;

 private:
  void node_moments(const arma::vec& bandwidth);
};

CvEvaluation::CvEvaluation(const BinnedCVObjective::Impl& impl, const arma::vec& bandwidth,
                           bool with_grad)
    : I(impl), d(impl.grid.d), T(impl.grid.total()) {
  basis = basis_exponents(d, I.degree);
  q = basis.size();
  n_psi = with_grad ? static_cast<int>(d) : 0;
  blk = q * q + q;
  W = blk * static_cast<std::size_t>(1 + n_psi);
  node.assign(T * W, 0.0);
  node_moments(bandwidth);
  pen = penalties(bandwidth, I.degree);
  if (d == 1 && reach(I.kernel, I.grid.delta[0], bandwidth(0), I.grid.G[0]) >= 1) {
    const double r = I.grid.delta[0] / bandwidth(0);
    const double k = I.kernel.shape(r), psi = k != 0.0 ? kernel_psi(I.kernel.type, r) : 0.0;
    self_k = k;
    self_k2 = k * r * r;
    self_dk = k * psi;                      // h d/dh k(delta / h)
    self_dk2 = k * psi * r * r - 2.0 * self_k2;  // h d/dh of k(r) r^2
  }
}

// Node moments, packed per node: for p = -1 (the moments), 0, 1 (h_a d/dh_a of them): A (q x q)
// then T (q). h_a dM/dh_a = D^a - e_a M (D^a: the moments of k(u) psi(u_a) u^e).
void CvEvaluation::node_moments(const arma::vec& bandwidth) {
  std::size_t L[2] = {reach(I.kernel, I.grid.delta[0], bandwidth(0), I.grid.G[0]), 0};
  if (d == 2) L[1] = reach(I.kernel, I.grid.delta[1], bandwidth(1), I.grid.G[1]);
  struct Plane {
    std::array<int, 2> e;
    int psi;
    std::vector<double> c, s;  // correlations of the binned weights and responses
  };
  std::deque<Plane> planes;  // references stay valid as planes are added
  // 1-D: the planes' axis kernels from one table of k(u), psi(u) and u^2 (AxisTable).
  std::unique_ptr<AxisTable> table;
  if (d == 1) table.reset(new AxisTable(I.kernel, I.grid.delta[0], bandwidth(0), L[0], n_psi > 0));
  auto need = [&](std::array<int, 2> e, int psi) -> const Plane& {
    for (const Plane& p : planes)
      if (p.e == e && p.psi == psi) return p;
    const cvec ks = table ? I.fft->forward_kernel(table->plane(e[0], psi == 0), {1.0})
                          : kernel_spectrum(*I.fft, I.grid, I.kernel, bandwidth, L, e, psi);
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
        const std::vector<double>& M = need(e, -1).c;
        const std::vector<double>& D = p >= 0 ? need(e, p).c : M;
        for (std::size_t g = 0; g < T; ++g)
          node[g * W + off + r * q + s] = p < 0 ? M[g] : D[g] - e[p] * M[g];
      }
    for (std::size_t r = 0; r < q; ++r) {
      const std::vector<double>& M = need(basis[r], -1).s;
      const std::vector<double>& D = p >= 0 ? need(basis[r], p).s : M;
      for (std::size_t g = 0; g < T; ++g)
        node[g * W + off + q * q + r] = p < 0 ? M[g] : D[g] - basis[r][p] * M[g];
    }
  }
}

// The leave-one-out fit of an observation (x, y) with its moments interpolated at x. The
// interpolated moments contain the point's own binned contribution S (q x q) and s y (q):
// the point is spread onto its two nodes with weights 1 - f and f, and the moments are
// interpolated back with the same weights, so (1-D, u = node offset / h, r = delta / h)
//   S_00 = s_0 = (1 - f)^2 + f^2 + 2 f (1 - f) k(r),  S_01 = s_1 = 0,  S_11 = 2 f (1 - f) k(r) r^2
// (the cross terms of odd powers cancel). Removing exactly this, not k(0) e1 e1', keeps the
// leave-one-out moments right where the grid is coarse against the gaps between points (at
// a node, f in {0, 1}, the two agree). In 2-D (f < 0) the self weight is k(0) e1 e1'.
// e = y - m_{-i} = y (1 + s_0 v_0) - alpha (v = (A - S)^{-1} e1, alpha = v' T), so
// e^2 = G1 y^2 + G2 y + G3 with G1 = ob^2, G2 = -2 ob alpha, G3 = alpha^2 (ob = 1 + s_0 v_0);
// out[0..2] = G, out[3 + 3a ..] = their log h_a derivatives. False when it does not exist.
bool CvEvaluation::loo_parts(const double* mv, double f, double* out, double* omega_out) const {
  double Af[16], B[8], v[4], b[4], dAf[16];
  const double* A = mv;
  const double* Tv = mv + q * q;
  std::copy(A, A + q * q, Af);
  const double w = f >= 0.0 ? 2.0 * f * (1.0 - f) : 0.0;  // 0 at a node and in 2-D
  const double s0 = w > 0.0 ? (1.0 - f) * (1.0 - f) + f * f + w * self_k : 1.0;
  Af[0] -= s0;  // the point's own weight (k(0) = 1 at u = 0)
  if (q == 2 && w > 0.0) Af[3] -= w * self_k2;
  const double omega = Af[0];
  if (omega_out != nullptr) *omega_out = omega;
  // Below the FFT's rounding of a sum of n unit weights the fit has no other point.
  if (!(omega > 1e-12 * I.n_obs)) return false;
  local_solve::add_ridge(Af, q, 1, I.ridge, omega, pen.data());
  for (std::size_t r = 0; r < q; ++r) {
    B[r * 2] = r == 0 ? 1.0 : 0.0;
    B[r * 2 + 1] = Tv[r];
  }
  // The local fit's solve (local_solve.hpp; binned_detail::spd_solve's arithmetic), inlined:
  // two right-hand sides, and q = 2 (local linear) with its loops unrolled.
  double Lf[16], sf[4];
  const local_solve::SolveStatus st =
      q == 2 ? local_solve::spd_solve(Af, std::size_t{2}, B, std::size_t{2}, Lf, sf)
             : local_solve::spd_solve(Af, q, B, std::size_t{2}, Lf, sf);
  if (st != local_solve::SolveStatus::ok) return false;
  for (std::size_t r = 0; r < q; ++r) {
    v[r] = B[r * 2];
    b[r] = B[r * 2 + 1];
  }
  const double alpha = b[0], ob = 1.0 + s0 * v[0];
  out[0] = ob * ob;
  out[1] = -2.0 * ob * alpha;
  out[2] = alpha * alpha;
  for (int a = 0; a < n_psi; ++a) {
    const double* dA = mv + blk * static_cast<std::size_t>(a + 1);
    const double* dT = dA + q * q;
    std::copy(dA, dA + q * q, dAf);
    const double ds0 = w * self_dk;  // the self weight's h d/dh (0 at a node and in 2-D)
    if (w > 0.0) {
      dAf[0] -= ds0;
      if (q == 2) dAf[3] -= w * self_dk2;
    }
    const double domega = dAf[0];
    if (I.ridge > 0.0)
      for (std::size_t t = 1; t < q; ++t) {
        // pen_t = h_t^-2: its log h_a derivative is -2 pen_t for the slope of axis a.
        const double dpen = (t - 1 == static_cast<std::size_t>(a)) ? -2.0 * pen[t - 1] : 0.0;
        dAf[t * q + t] += I.ridge * (domega * pen[t - 1] + omega * dpen);
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
    const double dob = w > 0.0 ? s0 * dv0 + ds0 * v[0] : dv0;
    out[3 + 3 * a] = 2.0 * ob * dob;
    out[4 + 3 * a] = -2.0 * (dob * alpha + ob * dalpha);
    out[5 + 3 * a] = 2.0 * alpha * dalpha;
  }
  return true;
}

// Moments interpolated at fractions f of the cell with lower node g.
void CvEvaluation::interpolate(const std::size_t* g, const double* f, double* mv) const {
  std::fill(mv, mv + W, 0.0);
  for (std::size_t s0 = 0; s0 < 2; ++s0)
    for (std::size_t s1 = 0; s1 < (d == 2 ? 2u : 1u); ++s1) {
      const double wt = corner_weight(d, f, s0, s1);
      if (wt == 0.0) continue;
      const double* nv = node.data() + corner_node(I.grid, g, s0, s1) * W;
      for (std::size_t t = 0; t < W; ++t) mv[t] += wt * nv[t];
    }
}

/// Sums over a cell's points of the parts fitted by a quadratic in f (values at f in
/// {0, 1/2, 1} per column, nparts per sample): coefficient (a, b) of f0^a f1^b is
/// sum_{i,j} M[a][i] M[b][j] value(i, j), summed against the cell's power sums P.
void quadratic_cell_sums(const double* parts, std::size_t nparts, std::size_t d,
                         const double* P, double* cell_sum) {
  static const double Mq[3][3] = {{1, 0, 0}, {-3, 4, -1}, {2, -4, 2}};
  for (std::size_t t = 0; t < nparts; ++t) {
    double acc = 0.0;
    for (std::size_t a0 = 0; a0 < 3; ++a0)
      for (std::size_t a1 = 0; a1 < (d == 2 ? 3u : 1u); ++a1) {
        double coef = 0.0;
        for (std::size_t i0 = 0; i0 < 3; ++i0)
          for (std::size_t i1 = 0; i1 < (d == 2 ? 3u : 1u); ++i1)
            coef += Mq[a0][i0] * (d == 2 ? Mq[a1][i1] : 1.0) * parts[(i1 * 3 + i0) * nparts + t];
        // t % 3: 0 -> y^2, 1 -> y, 2 -> 1 (as the power sums)
        acc += coef * P[(a1 * 3 + a0) * 3 + t % 3];
      }
    cell_sum[t] = acc;
  }
}

/// The cell's sums (nparts values) by the quadratic in f (see operator()); false where the
/// quadratic is not trusted: some sample has less than one unit of other points' weight
/// (where the point's own weight dominates, the parts vary too fast within the cell), or the
/// cell's sum of squares comes out negative.
/// 1-D: a cell's samples at f = 0 and f = 1 are its two nodes, each shared with the
/// neighbouring cell; their parts are computed once per evaluation (the same computation as
/// at the first cell that needs them: interpolation with weights 1 and 0 copies the node).
struct NodeParts {
  std::vector<double> parts;          // nparts per node
  std::vector<unsigned char> state;  // 0 not yet, 1 computed, 2 no trusted fit there
};

bool cell_by_quadratic(const CvEvaluation& ev, std::size_t cell, const std::size_t* g,
                       double* mv, double* parts, std::size_t nparts, double* cell_sum,
                       NodeParts* nodes) {
  static const double fs[3] = {0.0, 0.5, 1.0};
  const std::size_t ns = ev.d == 2 ? 9 : 3;
  for (std::size_t s = 0; s < ns; ++s) {
    const double f[2] = {fs[s % 3], ev.d == 2 ? fs[s / 3] : 0.0};
    double* ps = parts + s * nparts;
    if (nodes != nullptr && ev.d == 1 && s != 1) {
      const std::size_t node = g[0] + (s == 2 ? 1 : 0);
      unsigned char& st = nodes->state[node];
      double* np = nodes->parts.data() + node * nparts;
      if (st == 0) {
        ev.interpolate(g, f, mv);
        double omega = 0.0;
        st = ev.loo_parts(mv, f[0], np, &omega) && omega >= 1.0 ? 1 : 2;
      }
      if (st == 2) return false;
      std::copy(np, np + nparts, ps);
      continue;
    }
    ev.interpolate(g, f, mv);
    double omega = 0.0;
    if (!(ev.loo_parts(mv, ev.d == 1 ? f[0] : -1.0, ps, &omega) && omega >= 1.0)) return false;
  }
  quadratic_cell_sums(parts, nparts, ev.d, ev.I.power.data() + cell * 27, cell_sum);
  return cell_sum[0] + cell_sum[1] + cell_sum[2] >= 0.0;
}

/// The cell's points one by one, added to total and gsum; false where some point's
/// leave-one-out fit does not exist.
bool cell_by_points(const CvEvaluation& ev, std::size_t cell, double* mv, double* out,
                    double& total, std::vector<double>& gsum) {
  const BinnedCVObjective::Impl& I = ev.I;
  for (std::size_t k = I.cell_start[cell]; k < I.cell_start[cell + 1]; ++k) {
    const std::size_t i = I.cell_points[k];
    std::size_t gi[2] = {0, 0};
    double f[2] = {0.0, 0.0};
    for (std::size_t a = 0; a < ev.d; ++a) locate(I.grid, a, I.X(i, a), gi[a], f[a]);
    ev.interpolate(gi, f, mv);
    if (!ev.loo_parts(mv, ev.d == 1 ? f[0] : -1.0, out, nullptr)) return false;
    const double yi = I.y(i);
    total += out[0] * yi * yi + out[1] * yi + out[2];
    for (int a = 0; a < ev.n_psi; ++a)
      gsum[a] += out[3 + 3 * a] * yi * yi + out[4 + 3 * a] * yi + out[5 + 3 * a];
  }
  return true;
}

}  // namespace

double BinnedCVObjective::operator()(const arma::vec& bandwidth, arma::vec* grad) const {
  Impl& I = *impl_;
  const std::size_t d = I.grid.d;
  check::require(bandwidth.n_elem == d, "bandwidth", "needs one value per column of X");
  for (std::size_t a = 0; a < d; ++a)
    check::require(std::isfinite(bandwidth(a)) && bandwidth(a) > 0.0, "bandwidth",
                   "must be > 0 and finite");
  std::lock_guard<std::mutex> lock(I.mutex);
  const CvEvaluation ev(I, bandwidth, grad != nullptr);
  // Per cell: the parts G at f in {0, 1/2, 1} (per column) fitted by a quadratic (tensor
  // quadratic in 2-D) in f, summed against the cell's power sums sum f^a (1, y, y^2) of its
  // points: the interpolation error is O((delta / h)^3), below the binning's. A cell where some
  // of these fits does not exist is summed point by point.
  const std::size_t nparts = 3 * static_cast<std::size_t>(1 + ev.n_psi);
  const std::size_t C0 = I.grid.G[0] - 1, C1 = d == 2 ? I.grid.G[1] - 1 : 1;
  const std::size_t ns = d == 2 ? 9 : 3;
  double total = 0.0;
  std::vector<double> gsum(d, 0.0);
  std::vector<double> mv(ev.W), parts(nparts * ns), out(nparts);
  NodeParts nodes;
  if (d == 1) {
    nodes.parts.assign(I.grid.G[0] * nparts, 0.0);
    nodes.state.assign(I.grid.G[0], 0);
  }
  for (std::size_t c0 = 0; c0 < C0; ++c0)
    for (std::size_t c1 = 0; c1 < C1; ++c1) {
      const std::size_t cell = c0 * C1 + c1;
      if (I.cell_start[cell] == I.cell_start[cell + 1]) continue;
      const std::size_t g[2] = {c0, c1};
      double cell_sum[9] = {};  // nparts <= 9 values
      if (cell_by_quadratic(ev, cell, g, mv.data(), parts.data(), nparts, cell_sum,
                            d == 1 ? &nodes : nullptr)) {
        for (std::size_t t = 0; t < nparts; ++t) {
          if (t < 3) total += cell_sum[t];
          else gsum[(t - 3) / 3] += cell_sum[t];
        }
        continue;
      }
      if (!cell_by_points(ev, cell, mv.data(), out.data(), total, gsum)) return kInf;
    }
  // The criterion and its gradient (criteria.hpp): total is the leave-one-out RSS.
  if (grad != nullptr) criteria::cv_ls(total, I.n_obs, arma::vec(gsum), *grad);
  return criteria::cv_ls(total, I.n_obs);
}

}  // namespace attnreg
