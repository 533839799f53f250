// attnreg: zero-padded FFT correlations over the binning grid (binned_internal.hpp).
#include <algorithm>
#include <cmath>
#include <mutex>
#include <new>

#include "attnreg/base/error.hpp"
#include "attnreg/detail/binned_internal.hpp"

namespace attnreg {
namespace binned_detail {
namespace {

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

}  // namespace

GridFft::GridFft(const Grid& grid) : grid_(grid) {
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

GridFft::~GridFft() {
  std::lock_guard<std::mutex> lock(fftw_plan_mutex());
  if (fwd_) fftw_destroy_plan(fwd_);
  if (inv_) fftw_destroy_plan(inv_);
  fftw_free(real_);
  fftw_free(cplx_);
}

cvec GridFft::forward_data(const double* data) const {
  std::fill(real_, real_ + nreal_, 0.0);
  const std::size_t G0 = grid_.G[0], G1 = grid_.G[1];
  for (std::size_t g0 = 0; g0 < G0; ++g0)
    for (std::size_t g1 = 0; g1 < G1; ++g1) real_[g0 * P_[1] + g1] = data[g0 * G1 + g1];
  return run_forward();
}

cvec GridFft::forward_kernel(const std::vector<double>& k0, const std::vector<double>& k1) const {
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

void GridFft::correlate(const cvec& data, const cvec& kern, double* out) const {
  auto* z = reinterpret_cast<std::complex<double>*>(cplx_);
  for (std::size_t i = 0; i < ncplx_; ++i) z[i] = data[i] * kern[i];
  fftw_execute(inv_);
  const double scale = 1.0 / static_cast<double>(nreal_);
  const std::size_t G0 = grid_.G[0], G1 = grid_.G[1];
  for (std::size_t g0 = 0; g0 < G0; ++g0)
    for (std::size_t g1 = 0; g1 < G1; ++g1)
      out[g0 * G1 + g1] = real_[g0 * P_[1] + g1] * scale;
}

cvec GridFft::run_forward() const {
  fftw_execute(fwd_);
  const auto* z = reinterpret_cast<const std::complex<double>*>(cplx_);
  return cvec(z, z + ncplx_);
}

cvec kernel_spectrum(const GridFft& fft, const Grid& grid, const Kernel& K, const arma::vec& h,
                     const std::size_t* L, std::array<int, 2> e, int psi) {
  const auto k0 = axis_kernel(K, grid.delta[0], h(0), L[0], e[0], psi == 0);
  const auto k1 = grid.d == 2 ? axis_kernel(K, grid.delta[1], h(1), L[1], e[1], psi == 1)
                              : std::vector<double>{1.0};
  return fft.forward_kernel(k0, k1);
}

}  // namespace binned_detail
}  // namespace attnreg
