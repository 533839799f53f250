// Benchmark: the floor of an all-pairs Gaussian kernel sum against attnreg's kernel regression,
// in one process, on the same data.
//
// The floor is the best plain Nadaraya-Watson loop we can write, timed two ways, and the faster
// one is the reference (100%):
//   * "libmvec": a plain OpenMP loop that GCC vectorises itself. This file is compiled with
//     -O3 -march=native -ffast-math (CMakeLists.txt), under which glibc's math.h declares a
//     vector exp (libmvec, _ZGVdN4v_exp on AVX2) and `#pragma omp simd` calls it. The argument
//     is clamped at -708 (one max per pair): libmvec takes a slow scalar path for lanes whose
//     result would be subnormal, and a far pair's weight of 3e-308 instead of 0 does not
//     change the sums.
//   * "Highway": the same loop written with Google Highway's Exp (the exp attnreg's tiles use,
//     hwy_exp-inl.hpp), compiled for this machine's widest target (-march=native).
// Per pair both do: 2 loads (x_i, y_i: 16 bytes, from L1/L2 since each query re-reads the
// n-vectors), d subtractions and d multiply(-add)s for the squared distance, 1 multiply by
// -1/2, 1 exp (Highway's: reduction 2 FMA, degree-10 Estrin polynomial 10 FMA/mul, 2 converts,
// 2 multiplies to scale, 2 compares/selects), 1 FMA (numerator) and 1 add (denominator).
// attnreg's all-pairs path does that plus the bookkeeping an estimator needs (weights stored to a
// tile of 1024 and read back by the moment sums, row maxima for the underflow check, observation
// weights when given); local linear adds its moments. The neighbour path is timed where it
// applies.
//
// kernel_floor_avx2 is this program built for AVX2 (-march=x86-64-v3), with attnreg's dispatch
// held to AVX2 as well: the AVX2 table on an AVX-512 machine.
//
// Usage: kernel_floor [n] [d] [threads] [big_n]
//   n        training rows = queries (default 20000)
//   d        continuous columns (default 1)
//   threads  OpenMP threads (default 0 = all)
//   big_n    also time the neighbour path at n = m = big_n in 1-D (default 1000000; 0 = skip)
// Prints one table; pairs/s counts n * m kernel evaluations (all pairs) whatever the path.
#include <armadillo>
#include <chrono>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "attnreg/kernels/kernel.hpp"
#include "attnreg/solve/local_fit.hpp"
#include "attnreg/base/runtime.hpp"
#include "attnreg/detail/simd_dispatch.hpp"

#include <hwy/highway.h>
// The exp of attnreg's tiles (Highway's Exp, exactly 0 below -708), for this file's static target.
#include "attnreg/detail/hwy_exp-inl.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The machine this runs on is usually shared, so every timing is reported twice: wall-clock
// seconds and the process's CPU seconds (std::clock: all threads together). Pairs per second
// per core from CPU time is what the ratios use: it does not count time the OS gave to other
// processes.
struct Timing {
  double wall = 1e300, cpu = 1e300;
};

// Best of `reps` runs of f.
template <class F>
Timing best_of(int reps, F f) {
  Timing best;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    const std::clock_t c0 = std::clock();
    f();
    const double cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
    best.wall = std::min(best.wall, seconds_since(t0));
    best.cpu = std::min(best.cpu, cpu);
  }
  return best;
}

// Floor 1: the plain loop; GCC vectorises it with libmvec's exp (see the top of the file). The
// column count is a template argument so that the distance loop unrolls inside the simd loop.
template <std::size_t D>
void floor_nw_libmvec_d(const double* x, const double* y, std::size_t n, const double* q,
                        std::size_t m, double* out, int threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::size_t k = 0; k < m; ++k) {
    const double* qk = q + k * D;
    double a = 0, b = 0;
#pragma omp simd reduction(+ : a, b)
    for (std::size_t i = 0; i < n; ++i) {
      double e = 0;
      for (std::size_t j = 0; j < D; ++j) {
        const double z = x[j * n + i] - qk[j];
        e += z * z;
      }
      const double w = std::exp(std::max(-0.5 * e, -708.0));
      a += w * y[i];
      b += w;
    }
    out[k] = a / b;
  }
}

bool floor_nw_libmvec(const double* x, const double* y, std::size_t n, std::size_t d,
                      const double* q, std::size_t m, double* out, int threads) {
  switch (d) {
    case 1: floor_nw_libmvec_d<1>(x, y, n, q, m, out, threads); return true;
    case 2: floor_nw_libmvec_d<2>(x, y, n, q, m, out, threads); return true;
    case 3: floor_nw_libmvec_d<3>(x, y, n, q, m, out, threads); return true;
    case 5: floor_nw_libmvec_d<5>(x, y, n, q, m, out, threads); return true;
    case 10: floor_nw_libmvec_d<10>(x, y, n, q, m, out, threads); return true;
    default: return false;
  }
}

// Floors 2 and 3: the same loop with Highway (static target: -march=native), two accumulators
// each; floor 2 with Highway's Exp, floor 3 with kernel.hpp's exp algorithm in Highway operations.
namespace hn = hwy::HWY_NAMESPACE;
template <bool kPoly>
void floor_nw_highway(const double* x, const double* y, std::size_t n, std::size_t d,
                      const double* q, std::size_t m, double* out, int threads) {
  const hn::ScalableTag<double> dv;
  using V = hn::Vec<decltype(dv)>;
  const std::size_t N = hn::Lanes(dv);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::size_t k = 0; k < m; ++k) {
    const double* qk = q + k * d;
    const V mhalf = hn::Set(dv, -0.5), q0 = hn::Set(dv, qk[0]);
    V num0 = hn::Zero(dv), den0 = hn::Zero(dv), num1 = hn::Zero(dv), den1 = hn::Zero(dv);
    auto weight = [&](std::size_t i) HWY_ATTR {
      V z = hn::Sub(hn::LoadU(dv, x + i), q0);
      V e = hn::Mul(z, z);
      for (std::size_t j = 1; j < d; ++j) {
        z = hn::Sub(hn::LoadU(dv, x + j * n + i), hn::Set(dv, qk[j]));
        e = hn::MulAdd(z, z, e);
      }
      const V arg = hn::Mul(mhalf, e);
      return kPoly ? attnreg::HWY_NAMESPACE::ExpNonpositivePoly(dv, arg)
                   : attnreg::HWY_NAMESPACE::ExpNonpositiveHwy(dv, arg);
    };
    std::size_t i = 0;
    for (; i + 2 * N <= n; i += 2 * N) {
      const V w0 = weight(i), w1 = weight(i + N);
      num0 = hn::MulAdd(w0, hn::LoadU(dv, y + i), num0);
      den0 = hn::Add(den0, w0);
      num1 = hn::MulAdd(w1, hn::LoadU(dv, y + i + N), num1);
      den1 = hn::Add(den1, w1);
    }
    double a = hn::GetLane(hn::SumOfLanes(dv, hn::Add(num0, num1)));
    double b = hn::GetLane(hn::SumOfLanes(dv, hn::Add(den0, den1)));
    for (; i < n; ++i) {
      double e = 0;
      for (std::size_t j = 0; j < d; ++j) {
        const double z = x[j * n + i] - qk[j];
        e += z * z;
      }
      const double w = std::exp(-0.5 * e);
      a += w * y[i];
      b += w;
    }
    out[k] = a / b;
  }
}

void row(const char* what, std::size_t n, std::size_t m, Timing t, double floor_ppc) {
  const double pairs = static_cast<double>(n) * static_cast<double>(m);
  const double ppc = pairs / t.cpu;  // per core
  std::printf("%-46s %9.3f s wall %9.3e pairs/s %9.3e pairs/s/core %7.1f%% of floor\n", what,
              t.wall, pairs / t.wall, ppc, 100.0 * ppc / floor_ppc);
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 20000;
  const std::size_t d = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1;
  const int threads_req = argc > 3 ? std::atoi(argv[3]) : 0;
  const std::size_t big_n = argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 1000000;
#if defined(__AVX2__) && !defined(__AVX512F__)
  // Built for AVX2 (kernel_floor_avx2): hold attnreg's tiles to AVX2 too, so that every row of
  // the table is about AVX2 even on an AVX-512 machine. Before the first dispatched call.
  hwy::DisableTargets(HWY_AVX3 | HWY_AVX3_DL);
#endif
  const int threads = attnreg::resolve_threads(threads_req);
  const std::size_t m = n;

  arma::arma_rng::set_seed(1);
  const arma::mat X = arma::randn(n, d);
  const arma::vec y = arma::sin(X.col(0)) + 0.1 * arma::randn(n);
  const double h = 1.06 * std::pow(static_cast<double>(n), -1.0 / (d + 4));  // normal reference
  const arma::mat Xs = X / h;               // the floor works in bandwidth units
  const arma::mat Qs = arma::mat(Xs.t());   // query-major for the floor
  std::vector<double> out(m);
  const int reps = n <= 20000 ? 3 : 1;

  std::printf("kernel_floor: n = m = %zu, d = %zu, threads = %d, h = %.4g (Gaussian)\n", n, d,
              threads, h);
  bool have_mvec = true;
  Timing t_mvec = best_of(reps, [&] {
    have_mvec = floor_nw_libmvec(Xs.memptr(), y.memptr(), n, d, Qs.memptr(), m, out.data(), threads);
  });
  std::vector<double> out_hwy(m), out_poly(m);
  const Timing t_hwy = best_of(reps, [&] {
    floor_nw_highway<false>(Xs.memptr(), y.memptr(), n, d, Qs.memptr(), m, out_hwy.data(), threads);
  });
  const Timing t_poly = best_of(reps, [&] {
    floor_nw_highway<true>(Xs.memptr(), y.memptr(), n, d, Qs.memptr(), m, out_poly.data(), threads);
  });
  if (!have_mvec) {  // d without an instantiation: floor 2 alone
    t_mvec = Timing();
    out = out_hwy;
  }
  Timing t_floor = t_mvec.cpu < t_hwy.cpu ? t_mvec : t_hwy;
  if (t_poly.cpu < t_floor.cpu) t_floor = t_poly;
  const double floor_pps = static_cast<double>(n) * m / t_floor.cpu;
  std::printf("SIMD target of attnreg's tiles here: %s; the floor's Highway loop: %s\n",
              attnreg::simd_dispatch::target_name(), hwy::TargetName(HWY_TARGET));
  if (have_mvec) {
    row("floor 1: plain loop, libmvec exp (-ffast-math)", n, m, t_mvec, floor_pps);
  } else {
    std::printf("floor 1: not instantiated for d = %zu (d in 1, 2, 3, 5, 10)\n", d);
  }
  row("floor 2: plain loop, Highway Exp", n, m, t_hwy, floor_pps);
  row("floor 3: plain loop, Highway ops, Taylor-13 exp", n, m, t_poly, floor_pps);
  {
    double d2 = 0, d3 = 0;
    for (std::size_t k = 0; k < m; ++k) {
      d2 = std::max(d2, std::fabs(out_hwy[k] - out[k]));
      d3 = std::max(d3, std::fabs(out_poly[k] - out[k]));
    }
    std::printf("  (max |floor 2 - floor 1| = %.2e, |floor 3 - floor 1| = %.2e)\n", d2, d3);
  }

  auto fit_opts = [&](int degree, attnreg::PairAlgorithm alg, const char* kernel) {
    attnreg::LocalFitOptions o;
    o.degree = degree;
    o.kernel.algorithm = alg;
    o.kernel.kernel = attnreg::Kernel::from_name(kernel);
    o.compute_fitted = false;
    o.kernel.n_threads = threads_req;
    return o;
  };
  arma::mat pred;
  const arma::vec bw(d, arma::fill::value(h));
  {
    attnreg::LocalPolynomial nw(fit_opts(0, attnreg::PairAlgorithm::all_pairs, "gaussian"));
    nw.fit(X, y, bw);
    const Timing t = best_of(reps, [&] { pred = nw.predict(X); });
    row("attnreg NW predict, all pairs", n, m, t, floor_pps);
    double diff = 0;
    for (std::size_t k = 0; k < m; ++k) diff = std::max(diff, std::fabs(pred(k, 0) - out[k]));
    std::printf("  (max |attnreg - floor| = %.2e)\n", diff);
  }
  {
    attnreg::LocalPolynomial ll(fit_opts(1, attnreg::PairAlgorithm::all_pairs, "gaussian"));
    ll.fit(X, y, bw);
    const Timing t = best_of(reps, [&] { pred = ll.predict(X); });
    row("attnreg local linear predict, all pairs", n, m, t, floor_pps);
  }
  if (d <= 8) {
    for (const char* kernel : {"gaussian", "epanechnikov"}) {
      for (int degree : {0, 1}) {
        attnreg::LocalPolynomial nb(fit_opts(degree, attnreg::PairAlgorithm::neighbors, kernel));
        // The Epanechnikov bandwidth with 2 (d = 1) or 3 times the Gaussian's standard
        // deviation (a compact kernel at the normal-reference h leaves tail queries without
        // enough neighbours for a local linear fit).
        const arma::vec b =
            std::string(kernel) == "gaussian" ? bw
                                              : arma::vec((d == 1 ? 2.0 : 3.0) * bw * std::sqrt(5.0));
        const std::string label = std::string("attnreg ") + (degree ? "LL" : "NW") +
                                  " predict, neighbours, " + kernel;
        try {
          nb.fit(X, y, b);
          const Timing t = best_of(reps, [&] { pred = nb.predict(X); });
          row(label.c_str(), n, m, t, floor_pps);
        } catch (const std::exception& e) {
          std::printf("%-46s failed: %s\n", label.c_str(), e.what());
        }
      }
    }
  }
  {
    attnreg::LocalPolynomial full(fit_opts(1, attnreg::PairAlgorithm::automatic, "gaussian"));
    attnreg::LocalFitOptions o = fit_opts(1, attnreg::PairAlgorithm::automatic, "gaussian");
    o.compute_fitted = true;
    attnreg::LocalPolynomial ll(o);
    const Timing t = best_of(1, [&] { ll.fit(X, y, bw); });
    row("attnreg LL fit (fitted + leverage + LOO), auto", n, n, t, floor_pps);
  }

  if (big_n > 0) {
    // Neighbour path at scale: 1-D, n = m = big_n, a bandwidth that keeps ~100 points within
    // one bandwidth (uniform design on [0, 1]).
    arma::arma_rng::set_seed(2);
    const arma::mat Xb = arma::randu(big_n, 1);
    const arma::vec yb = arma::sin(6.0 * Xb.col(0)) + 0.1 * arma::randn(big_n);
    for (const char* kernel : {"epanechnikov", "gaussian"}) {
      for (int degree : {0, 1}) {
        const double hb = (std::string(kernel) == "gaussian" ? 20.0 : 50.0) / big_n;
        attnreg::LocalPolynomial nb(fit_opts(degree, attnreg::PairAlgorithm::neighbors, kernel));
        const Timing t_fit = best_of(1, [&] { nb.fit(Xb, yb, arma::vec{hb}); });
        const Timing t_pred = best_of(1, [&] { pred = nb.predict(Xb); });
        std::printf("neighbours n = m = %zu, %s %s, h = %.3g: fit (index) %.3f s + predict %.3f s "
                    "= %.3f s wall, %.3f s CPU\n",
                    big_n, kernel, degree ? "LL" : "NW", hb, t_fit.wall, t_pred.wall,
                    t_fit.wall + t_pred.wall, t_fit.cpu + t_pred.cpu);
      }
    }
  }
  return 0;
}
