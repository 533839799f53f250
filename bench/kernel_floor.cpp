// Benchmark: the floor of an all-pairs Gaussian kernel sum against attnreg's kernel regression,
// in one process, on the same data.
//
// The floor is the tightest loop we can write for Nadaraya-Watson: for each query, over every
// training point, the squared distance (d fused multiply-adds), one exp (the same vectorised
// exp attnreg uses; the libm exp is timed too for reference) and two fused multiply-adds
// (numerator and denominator). attnreg's all-pairs path does that plus the bookkeeping an
// estimator needs (tiles, row maxima for the underflow check, observation weights when given);
// local linear adds its moments. The neighbour path is timed where it applies.
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

#include "attnreg/kernel.hpp"
#include "attnreg/local_fit.hpp"
#include "attnreg/runtime.hpp"
// The floor uses attnreg's own 8-lane exp, so the comparison is about everything else.
#include "attnreg/detail/kernel_simd.hpp"

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

// The floor: NW with the Gaussian kernel, all pairs, training data column-major (n x d): per
// pair d subtract-and-FMA for the distance, one exp, two FMAs; 8-lane register accumulators.
ATTNREG_SIMD_CLONES void floor_nw(const double* x, const double* y, std::size_t n, std::size_t d,
                                  const double* q, std::size_t m, double* out, int threads) {
  using namespace attnreg::simd;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::size_t k = 0; k < m; ++k) {
    vd num = splat(0.0), den = splat(0.0);
    std::size_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
      vd z = load(x + i) - q[k * d];
      vd e = z * z;
      for (std::size_t j = 1; j < d; ++j) {
        z = load(x + j * n + i) - q[k * d + j];
        e += z * z;
      }
      const vd w = exp_nonpositive(-0.5 * e);
      num += w * load(y + i);
      den += w;
    }
    double a = hsum(num), b = hsum(den);
    for (; i < n; ++i) {
      double e = 0;
      for (std::size_t j = 0; j < d; ++j) {
        const double z = x[j * n + i] - q[k * d + j];
        e += z * z;
      }
      const double w = std::exp(-0.5 * e);
      a += w * y[i];
      b += w;
    }
    out[k] = a / b;
  }
}

// The same loop with the C library's scalar exp (what a plain C++ loop gets).
void floor_nw_libm(const double* x, const double* y, std::size_t n, std::size_t d,
                   const double* q, std::size_t m, double* out, int threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::size_t k = 0; k < m; ++k) {
    double a = 0, b = 0;
    for (std::size_t i = 0; i < n; ++i) {
      double e = 0;
      for (std::size_t j = 0; j < d; ++j) {
        const double z = x[j * n + i] - q[k * d + j];
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
  const Timing t_floor = best_of(reps, [&] {
    floor_nw(Xs.memptr(), y.memptr(), n, d, Qs.memptr(), m, out.data(), threads);
  });
  const double floor_pps = static_cast<double>(n) * m / t_floor.cpu;
  row("floor: dist + vectorised exp + 2 FMA", n, m, t_floor, floor_pps);
  if (n <= 20000) {
    const Timing t_libm = best_of(1, [&] {
      floor_nw_libm(Xs.memptr(), y.memptr(), n, d, Qs.memptr(), m, out.data(), threads);
    });
    row("floor with libm exp (reference)", n, m, t_libm, floor_pps);
  }

  auto fit_opts = [&](int degree, attnreg::PairAlgorithm alg, const char* kernel) {
    attnreg::LocalFitOptions o;
    o.degree = degree;
    o.algorithm = alg;
    o.kernel = attnreg::Kernel::from_name(kernel);
    o.compute_fitted = false;
    o.n_threads = threads_req;
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
