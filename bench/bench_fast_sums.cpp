// Exact fast sums for 1-D compact kernels (core/include/attnreg/kernels/fast_sums.hpp) against the
// neighbour-index and all-pairs paths, side by side in one run: CPU and wall seconds.
//   bench_fast_sums [quick | economy [big] | economy1m | eval]
// Results: bench/results/fast_sums.md.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <random>
#include <string>

#include "attnreg/bandwidth/bandwidth_select.hpp"
#include "attnreg/kernels/fast_sums.hpp"
#include "attnreg/solve/local_fit.hpp"

using namespace attnreg;

namespace {

struct Timing {
  double wall, cpu;
};

Timing timed(const std::function<void()>& f) {
  const auto w0 = std::chrono::steady_clock::now();
  const std::clock_t c0 = std::clock();
  f();
  const std::clock_t c1 = std::clock();
  const auto w1 = std::chrono::steady_clock::now();
  return {std::chrono::duration<double>(w1 - w0).count(),
          static_cast<double>(c1 - c0) / CLOCKS_PER_SEC};
}

void data(std::size_t n, arma::mat& X, arma::mat& Y, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> N01(0.0, 1.0);
  std::uniform_real_distribution<double> U(0.0, 1.0);
  X.set_size(n, 1);
  Y.set_size(n, 1);
  for (std::size_t i = 0; i < n; ++i) {
    X(i, 0) = U(rng);
    Y(i, 0) = std::sin(2.0 * M_PI * X(i, 0)) + 0.3 * N01(rng);
  }
}

const char* alg_name(PairAlgorithm a) {
  return a == PairAlgorithm::automatic ? "fast sums (auto)"
                                       : (a == PairAlgorithm::neighbors ? "neighbour index" : "all pairs");
}

void row(const char* what, std::size_t n, PairAlgorithm a, const Timing& t, const std::string& extra) {
  std::printf("| %s | %zu | %s | %.3f | %.3f | %s |\n", what, n, alg_name(a), t.wall, t.cpu,
              extra.c_str());
  std::fflush(stdout);
}

void fit_predict(std::size_t n, PairAlgorithm a, bool with_loo) {
  arma::mat X, Y;
  data(n, X, Y, 1);
  LocalFitOptions o;
  o.kernel.kernel = Kernel(KernelType::epanechnikov);
  o.degree = 1;
  o.kernel.algorithm = a;
  o.compute_fitted = with_loo;
  const arma::vec bw{0.05};
  arma::mat Xn = arma::linspace(0.0, 1.0, 1000);
  arma::mat pred;
  double df = 0.0;
  LocalPolynomial f(o);
  const Timing t = timed([&]() {
    f.fit(X, Y, bw);
    pred = f.predict(Xn);
    if (with_loo) df = f.effective_df();
  });
  char buf[200];
  std::snprintf(buf, sizeof buf, "h = 0.05, m(0.5) = %.12f%s", pred(500, 0),
                with_loo ? (", tr L = " + std::to_string(df)).c_str() : "");
  row(with_loo ? "LL fit (fitted, leverages, LOO at all n) + predict 1000"
               : "LL fit + predict 1000",
      n, a, t, buf);
}

void cv_search(std::size_t n, PairAlgorithm a) {
  arma::mat X, Y;
  data(n, X, Y, 2);
  BandwidthSelectOptions o;
  o.kernel.kernel = Kernel(KernelType::epanechnikov);
  o.degree = 1;
  o.method = BandwidthMethod::cv_ls;
  o.kernel.algorithm = a;
  BandwidthSelectResult r;
  const Timing t = timed([&]() { r = select_bandwidth(X, arma::vec(Y.col(0)), o); });
  char buf[200];
  std::snprintf(buf, sizeof buf, "h = %.10g, CV = %.12g, %d evaluations", r.bandwidth(0),
                r.objective, r.n_evals);
  row("LL cv_ls search (default: 30-point curve + 3 starts)", n, a, t, buf);
}

// Search economy (issue 23, item 6): the default search (binned curve locates the basins,
// the exact objective polishes) against the exact 30-point curve search, same data, one run.
void economy_search(std::size_t n, KernelType kt, bool exact_curve) {
  arma::mat X, Y;
  data(n, X, Y, 2);
  BandwidthSelectOptions o;
  o.kernel.kernel = Kernel(kt);
  o.degree = 1;
  o.method = BandwidthMethod::cv_ls;
  o.exact_curve = exact_curve;
  BandwidthSelectResult r;
  const Timing t = timed([&]() { r = select_bandwidth(X, arma::vec(Y.col(0)), o); });
  char buf[200];
  std::snprintf(buf, sizeof buf, "h = %.10g, CV = %.13g, %d exact evaluations", r.bandwidth(0),
                r.objective, r.n_evals);
  char what[160];
  std::snprintf(what, sizeof what, "LL %s exact cv_ls search, %s", Kernel(kt).name(),
                exact_curve ? "exact 30-point curve + 3 starts" : "economy (binned curve, exact polish)");
  std::printf("| %s | %zu | %.3f | %.3f | %s |\n", what, n, t.wall, t.cpu, buf);
  std::fflush(stdout);
}

// One exact cv_ls evaluation (value and h-gradient) at n = 10^6, and the fast-sum pass alone
// (its moments handed to a consumer that only reads them), each the mean of `reps` calls.
struct NullConsumer final : FastMomentsConsumer {
  double sink = 0.0;
  void query(const FastMomentsQuery& q) override { sink += q.M[0] + (q.D ? q.D[0] : 0.0); }
};

void evaluation_cost(std::size_t n, int reps) {
  arma::mat X, Y;
  data(n, X, Y, 2);
  BandwidthSelectOptions o;
  o.kernel.kernel = Kernel(KernelType::epanechnikov);
  o.degree = 1;
  o.method = BandwidthMethod::cv_ls;
  const BandwidthObjective obj(X, arma::vec(Y.col(0)), o);
  double v = 0.0;
  arma::vec g;
  Timing t = timed([&]() {
    for (int r = 0; r < reps; ++r) v = obj(arma::vec{0.0157 * (1.0 + 1e-3 * r)}, &g);
  });
  std::printf("| one exact cv_ls evaluation with gradient (mean of %d) | %zu | %.4f | %.4f | CV(0.0157) = %.13g |\n",
              reps, n, t.wall / reps, t.cpu / reps, v);
  const double h = 0.0157;
  arma::vec xs = arma::sort(X.col(0)) / h, ys = Y.col(0);
  std::vector<std::int64_t> self(n);
  for (std::size_t i = 0; i < n; ++i) self[i] = static_cast<std::int64_t>(i);
  FastMomentsProblem fp;
  fp.kernel = KernelType::epanechnikov;
  fp.n = fp.m = n;
  fp.x = fp.t = xs.memptr();
  fp.Y = ys.memptr();
  fp.k = 1;
  fp.self = self.data();
  fp.max_power = 2;
  fp.derivative = true;
  t = timed([&]() {
    for (int r = 0; r < reps; ++r)
      fast_window_moments(fp, [&]() { return std::unique_ptr<FastMomentsConsumer>(new NullConsumer); });
  });
  std::printf("| fast-sum pass alone, LL moments + h-derivative, LOO (mean of %d) | %zu | %.4f | %.4f | - |\n",
              reps, n, t.wall / reps, t.cpu / reps);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "quick") == 0;
  if (argc > 1 && std::strcmp(argv[1], "economy1m") == 0) {  // the economical 10^6 search alone
    economy_search(1000000, KernelType::epanechnikov, false);
    return 0;
  }
  if (argc > 1 && std::strcmp(argv[1], "eval") == 0) {  // cost of one evaluation at 10^6
    std::printf("| workload | n | wall s | CPU s | result |\n|---|---|---|---|---|\n");
    evaluation_cost(1000000, 5);
    return 0;
  }
  if (argc > 1 && std::strcmp(argv[1], "economy") == 0) {
    // bench_fast_sums economy [big]: n = 5,000 and 10,000 Gaussian, 10^6 Epanechnikov (big).
    const bool big = argc > 2 && std::strcmp(argv[2], "big") == 0;
    std::printf("| workload | n | wall s | CPU s | result |\n|---|---|---|---|---|\n");
    for (std::size_t n : {5000, 10000})
      for (bool ec : {true, false}) economy_search(n, KernelType::gaussian, ec);
    for (bool ec : {true, false}) economy_search(50000, KernelType::epanechnikov, ec);
    if (big)
      for (bool ec : {false, true}) economy_search(1000000, KernelType::epanechnikov, ec);
    return 0;
  }
  std::printf("| workload | n | path | wall s | CPU s | result |\n|---|---|---|---|---|---|\n");
  // Where the fast path takes over (kFastSumsMinRows): fit with leverages and LOO.
  for (std::size_t n : {64, 128, 256, 1024}) {
    fit_predict(n, PairAlgorithm::automatic, true);
    fit_predict(n, PairAlgorithm::neighbors, true);
  }
  for (std::size_t n : {5000, 10000}) {
    cv_search(n, PairAlgorithm::automatic);
    cv_search(n, PairAlgorithm::neighbors);
    if (!quick) cv_search(n, PairAlgorithm::all_pairs);
  }
  fit_predict(100000, PairAlgorithm::automatic, true);
  fit_predict(100000, PairAlgorithm::neighbors, true);
  fit_predict(1000000, PairAlgorithm::automatic, false);
  fit_predict(1000000, PairAlgorithm::neighbors, false);
  fit_predict(1000000, PairAlgorithm::automatic, true);
  if (!quick) cv_search(50000, PairAlgorithm::neighbors);
  cv_search(50000, PairAlgorithm::automatic);
  cv_search(1000000, PairAlgorithm::automatic);
  return 0;
}
