// Tests of the kernel value types, var_types parsing, the neighbour index and the kernel-weight
// engine (KernelSpace) against direct formulas.
#include <gtest/gtest.h>

#include <armadillo>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "attnreg/base/error.hpp"
#include "attnreg/kernels/kernel.hpp"
#include "attnreg/kernels/kernel_pairs.hpp"
#include "attnreg/kernels/neighbors.hpp"

using namespace attnreg;

namespace {

const double kPi = 3.14159265358979323846;

// Composite Simpson rule on [a, b] with 2 * half intervals.
template <class F>
double simpson(F f, double a, double b, int half = 200000) {
  const int n = 2 * half;
  const double h = (b - a) / n;
  double s = f(a) + f(b);
  for (int i = 1; i < n; ++i) s += (i % 2 ? 4.0 : 2.0) * f(a + i * h);
  return s * h / 3.0;
}

// The kernels written out independently of kernel.hpp (normalised densities).
double ref_kernel(const std::string& name, double u) {
  const double a = std::fabs(u);
  if (name == "gaussian") return std::exp(-0.5 * u * u) / std::sqrt(2.0 * kPi);
  if (name == "gaussian4") return 0.5 * (3.0 - u * u) * std::exp(-0.5 * u * u) / std::sqrt(2.0 * kPi);
  if (a > 1.0) return 0.0;
  if (name == "epanechnikov") return 0.75 * (1.0 - u * u);
  if (name == "uniform") return 0.5;
  if (name == "triangular") return 1.0 - a;
  if (name == "biweight") return 15.0 / 16.0 * std::pow(1.0 - u * u, 2);
  if (name == "triweight") return 35.0 / 32.0 * std::pow(1.0 - u * u, 3);
  if (name == "tricube") return 70.0 / 81.0 * std::pow(1.0 - a * a * a, 3);
  if (name == "cosine") return kPi / 4.0 * std::cos(kPi * u / 2.0);
  throw std::runtime_error("unknown kernel " + name);
}

}  // namespace

TEST(Kernel, ConstantsMatchNumericalIntegration) {
  for (const std::string& name : Kernel::names()) {
    const Kernel K = Kernel::from_name(name);
    const double lim = K.compact() ? 1.0 : 40.0;
    // Split at 0 so the kinks of triangular/tricube fall on a node.
    auto integral = [&](auto f) { return simpson(f, -lim, 0.0) + simpson(f, 0.0, lim); };
    const double mass = integral([&](double u) { return K(u); });
    const double mu2 = integral([&](double u) { return u * u * K(u); });
    const double rk = integral([&](double u) { return K(u) * K(u); });
    const double first = integral([&](double u) { return u * K(u); });
    EXPECT_NEAR(mass, 1.0, 1e-11) << name;
    EXPECT_NEAR(first, 0.0, 1e-12) << name;
    EXPECT_NEAR(mu2, K.mu2(), 1e-11) << name;
    EXPECT_NEAR(rk, K.roughness(), 1e-11) << name;
    EXPECT_DOUBLE_EQ(K.shape(0.0), 1.0) << name;
  }
}

TEST(Kernel, ValuesMatchDirectFormulas) {
  for (const std::string& name : Kernel::names()) {
    const Kernel K = Kernel::from_name(name);
    for (double u = -1.7; u <= 1.7; u += 0.0137) {
      EXPECT_NEAR(K(u), ref_kernel(name, u), 2e-16 * 8) << name << " u=" << u;
      EXPECT_EQ(K(u), K(-u)) << name;
    }
    if (K.compact()) {
      EXPECT_EQ(K(1.0 + 1e-12), 0.0) << name;
      EXPECT_EQ(K(-3.0), 0.0) << name;
      EXPECT_EQ(K.support(), 1.0);
    } else {
      EXPECT_TRUE(std::isinf(K.support()));
    }
  }
  // The uniform kernel's support is closed.
  EXPECT_EQ(Kernel(KernelType::uniform).shape(1.0), 1.0);
  EXPECT_EQ(Kernel(KernelType::uniform).shape(-1.0), 1.0);
}

TEST(Kernel, ExpMatchesLibmToTwoUlp) {
  double worst = 0.0;
  for (double x = -708.0; x <= 0.0; x += 0.00731) {
    const double ref = std::exp(x);
    const double got = kernel_detail::exp_nonpositive(x);
    worst = std::max(worst, std::fabs(got - ref) / ref);
  }
  EXPECT_LT(worst, 4.5e-16);
  EXPECT_EQ(kernel_detail::exp_nonpositive(0.0), 1.0);
  EXPECT_EQ(kernel_detail::exp_nonpositive(-709.0), 0.0);
  EXPECT_EQ(kernel_detail::exp_nonpositive(-1e300), 0.0);
  EXPECT_EQ(kernel_detail::exp_nonpositive(-std::numeric_limits<double>::infinity()), 0.0);
}

TEST(Kernel, NamesAndAliases) {
  EXPECT_EQ(Kernel::from_name("Gaussian").type, KernelType::gaussian);
  EXPECT_EQ(Kernel::from_name("normal").type, KernelType::gaussian);
  EXPECT_EQ(Kernel::from_name("epa").type, KernelType::epanechnikov);
  EXPECT_EQ(Kernel::from_name("quartic").type, KernelType::biweight);
  for (const std::string& name : Kernel::names())
    EXPECT_EQ(std::string(Kernel::from_name(name).name()), name);
  try {
    Kernel::from_name("laplace", "kernel");
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("kernel"), std::string::npos);
    EXPECT_NE(msg.find("laplace"), std::string::npos);
    EXPECT_NE(msg.find("epanechnikov"), std::string::npos);
  }
}

TEST(Kernel, VarTypesParsing) {
  auto t = parse_var_types("ccu o", 4);
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0], VarType::continuous);
  EXPECT_EQ(t[2], VarType::unordered);
  EXPECT_EQ(t[3], VarType::ordered);
  EXPECT_EQ(format_var_types(t), "ccuo");
  EXPECT_EQ(parse_var_types("", 3).size(), 3u);
  EXPECT_EQ(parse_var_types("CUO", 0).size(), 3u);
  EXPECT_THROW(parse_var_types("cx", 2), InvalidArgument);
  EXPECT_THROW(parse_var_types("cc", 3), InvalidArgument);
  try {
    parse_var_types("cz", 2);
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("var_types"), std::string::npos);
  }
}

TEST(Kernel, CategoricalKernelValuesAndRanges) {
  const CategoricalKernel aa(CategoricalKernelType::aitchison_aitken);
  const CategoricalKernel lru(CategoricalKernelType::li_racine_unordered);
  const CategoricalKernel wvr(CategoricalKernelType::wang_van_ryzin);
  const CategoricalKernel lro(CategoricalKernelType::li_racine_ordered);
  // Aitchison-Aitken: 1 - lambda / lambda (c - 1); sums to 1 over the c levels.
  EXPECT_DOUBLE_EQ(aa(2, 2, 0.3, 4), 0.7);
  EXPECT_DOUBLE_EQ(aa(2, 0, 0.3, 4), 0.1);
  EXPECT_NEAR(aa(0, 0, 0.3, 4) + 3 * aa(0, 1, 0.3, 4), 1.0, 1e-15);
  EXPECT_DOUBLE_EQ(aa.max_bandwidth(4), 0.75);
  EXPECT_DOUBLE_EQ(lru(1, 1, 0.4, 3), 1.0);
  EXPECT_DOUBLE_EQ(lru(1, 2, 0.4, 3), 0.4);
  EXPECT_DOUBLE_EQ(wvr(3, 3, 0.4, 5), 0.6);
  EXPECT_DOUBLE_EQ(wvr(3, 1, 0.4, 5), 0.5 * 0.6 * 0.16);
  EXPECT_DOUBLE_EQ(lro(3, 0, 0.5, 5), 0.125);
  EXPECT_DOUBLE_EQ(lro(3, 3, 0.0, 5), 1.0);  // 0^0 = 1
  EXPECT_DOUBLE_EQ(lro(3, 2, 0.0, 5), 0.0);
  EXPECT_TRUE(wvr.ordered());
  EXPECT_FALSE(aa.ordered());
  EXPECT_NO_THROW(aa.check_bandwidth(0.75, 4, "bw"));
  EXPECT_THROW(aa.check_bandwidth(0.76, 4, "bw"), InvalidArgument);
  EXPECT_THROW(lru.check_bandwidth(-0.01, 4, "bw"), InvalidArgument);
  EXPECT_THROW(lro.check_bandwidth(1.5, 4, "bw"), InvalidArgument);
  EXPECT_THROW(lro.check_bandwidth(std::nan(""), 4, "bw"), InvalidArgument);
  EXPECT_NO_THROW(lro.check_bandwidth(1.0, 4, "bw"));
  EXPECT_NO_THROW(wvr.check_bandwidth(0.99, 4, "bw"));
  EXPECT_THROW(wvr.check_bandwidth(1.0, 4, "bw"), InvalidArgument);  // identically 0 there
  EXPECT_EQ(CategoricalKernel::from_name("liracine", true, "k").type,
            CategoricalKernelType::li_racine_ordered);
  EXPECT_EQ(CategoricalKernel::from_name("li_racine", false, "k").type,
            CategoricalKernelType::li_racine_unordered);
  EXPECT_EQ(CategoricalKernel::from_name("wangvanryzin", true, "k").type,
            CategoricalKernelType::wang_van_ryzin);
  EXPECT_THROW(CategoricalKernel::from_name("wang_van_ryzin", false, "k"), InvalidArgument);
  EXPECT_THROW(CategoricalKernel::from_name("aitchison_aitken", true, "k"), InvalidArgument);
}

// The normalised Li-Racine kernel: lambda^|d| (1 - lambda) / (1 + lambda) (np's "nliracine").
// It sums to one over all integers for every training code (geometric series; the terms beyond
// |d| = 2000 are below lambda^2000 <= 1e-90 for lambda <= 0.9), plain li_racine does not.
TEST(Kernel, NormalisedLiRacineSumsToOneOverTheIntegers) {
  const CategoricalKernel nlr(CategoricalKernelType::li_racine_normalized);
  const CategoricalKernel lro(CategoricalKernelType::li_racine_ordered);
  EXPECT_TRUE(nlr.ordered());
  EXPECT_TRUE(nlr.sums_to_one());
  EXPECT_FALSE(lro.sums_to_one());
  EXPECT_TRUE(nlr.open_top());
  for (double lam : {0.0, 0.05, 0.3, 0.9})
    for (double xi : {-3.0, 0.0, 7.0}) {
      double s = 0.0;
      for (int z = -2000; z <= 2000; ++z) s += nlr(z, xi, lam, 0);
      EXPECT_NEAR(s, 1.0, 1e-13) << lam << " " << xi;
      // lambda^|d| times the constant, for codes between and beyond any levels
      for (double x : {xi - 2.0, xi, xi + 5.0})
        EXPECT_NEAR(nlr(x, xi, lam, 0), lro(x, xi, lam, 0) * (1 - lam) / (1 + lam), 1e-16);
    }
  EXPECT_STREQ(nlr.name(), "li_racine_normalized");
  for (const char* n : {"li_racine_normalized", "liracine_normalised", "nliracine", "NLiRacine"})
    EXPECT_EQ(CategoricalKernel::from_name(n, true, "k").type,
              CategoricalKernelType::li_racine_normalized)
        << n;
  EXPECT_THROW(CategoricalKernel::from_name("nliracine", false, "k"), InvalidArgument);
  EXPECT_NO_THROW(nlr.check_bandwidth(0.999, 3, "b"));
  EXPECT_THROW(nlr.check_bandwidth(1.0, 3, "b"), InvalidArgument);  // identically 0 there
  EXPECT_THROW(nlr.check_bandwidth(-0.1, 3, "b"), InvalidArgument);
}

// ---------------------------------------------------------------- neighbour index

namespace {
std::set<std::size_t> covered(const NeighborIndex& idx, const std::vector<IndexRange>& r) {
  std::set<std::size_t> s;
  std::size_t prev_last = 0;
  for (std::size_t k = 0; k < r.size(); ++k) {
    EXPECT_LT(r[k].first, r[k].last);
    if (k > 0) {
      EXPECT_GT(r[k].first, prev_last);  // ascending, merged when adjacent
    }
    prev_last = r[k].last;
    for (std::size_t p = r[k].first; p < r[k].last; ++p) s.insert(idx.order()[p]);
  }
  return s;
}
}  // namespace

TEST(NeighborIndex, QueriesCoverEveryPointInTheRegion) {
  for (int d : {1, 2, 3, 5}) {
    arma::arma_rng::set_seed(10 + d);
    const arma::uword n = 2000;
    arma::mat P = arma::randn(d, n);
    P.cols(0, 99).zeros();  // ties
    NeighborIndex idx;
    idx.build(P, 16);
    std::vector<std::size_t> ord = idx.order();
    std::sort(ord.begin(), ord.end());
    for (std::size_t k = 0; k < n; ++k) ASSERT_EQ(ord[k], k);  // a permutation
    for (int t = 0; t < 30; ++t) {
      arma::vec q = arma::randn(d) * 1.2;
      if (t == 0) q.zeros();
      const double radius = 0.05 + 0.1 * t;
      std::vector<IndexRange> box, ball;
      idx.box_query(q.memptr(), radius, box);
      idx.ball_query(q.memptr(), radius, ball);
      const auto sbox = covered(idx, box), sball = covered(idx, ball);
      for (arma::uword i = 0; i < n; ++i) {
        const arma::vec diff = P.col(i) - q;
        if (arma::max(arma::abs(diff)) <= radius) {
          EXPECT_TRUE(sbox.count(i)) << d << " " << i;
        }
        if (arma::norm(diff) <= radius) {
          EXPECT_TRUE(sball.count(i)) << d << " " << i;
        }
      }
      if (d == 1) {  // exact in 1-D: nothing outside the slack-widened window
        for (std::size_t i : sbox) EXPECT_LE(std::fabs(P(0, i) - q(0)), radius * (1 + 1e-12));
      }
    }
  }
}

// ---------------------------------------------------------------- kernel weights

namespace {

// Direct product-kernel weight (shape, i.e. without c_K, as the estimators use).
double direct_weight(const arma::rowvec& x, const arma::rowvec& xi, const arma::vec& h,
                     const std::string& types, const std::string& kernel, double ow) {
  double w = ow;
  double e = 0.0;
  for (arma::uword j = 0; j < x.n_elem; ++j) {
    if (types[j] == 'c') {
      const double u = (x(j) - xi(j)) / h(j);
      if (kernel == "gaussian")
        e += u * u;
      else
        w *= ref_kernel(kernel, u) / ref_kernel(kernel, 0.0);
    } else if (types[j] == 'u') {  // aitchison_aitken with the number of levels below
      w *= x(j) == xi(j) ? 1.0 - h(j) : h(j) / 2.0;  // 3 levels
    } else {  // li_racine ordered
      w *= std::pow(h(j), std::fabs(x(j) - xi(j)));
    }
  }
  return kernel == "gaussian" ? w * std::exp(-0.5 * e) : w;
}

}  // namespace

TEST(KernelSpace, WeightsMatchDirectProductKernel) {
  arma::arma_rng::set_seed(7);
  const arma::uword n = 1500;
  arma::mat X(n, 4);
  X.col(0) = arma::randn(n);
  X.col(1) = arma::floor(3 * arma::randu(n));  // unordered, 3 levels
  X.col(2) = arma::randn(n) * 3 + 10;
  X.col(3) = arma::floor(4 * arma::randu(n));  // ordered
  const arma::vec h = {0.4, 0.3, 1.1, 0.6};
  const arma::vec ow = arma::randu(n) + 0.1;
  for (const std::string& kernel : Kernel::names()) {
    for (PairAlgorithm alg : {PairAlgorithm::all_pairs, PairAlgorithm::neighbors}) {
      // Kernels with negative values have no neighbour path (it refuses them).
      if (alg == PairAlgorithm::neighbors && !Kernel::from_name(kernel).nonnegative()) continue;
      KernelSpec spec;
      spec.kernel = Kernel::from_name(kernel);
      spec.var_types = "cuco";
      spec.algorithm = alg;
      KernelSpace ks(X, h, spec, ow);
      EXPECT_EQ(ks.uses_neighbors(), alg == PairAlgorithm::neighbors);
      arma::mat Xq = X.rows(0, 9);
      Xq(0, 0) += 0.123;
      const PreparedQueries Q = ks.prepare(Xq, "X_new");
      std::vector<double> w(n);
      for (arma::uword q = 0; q < Xq.n_rows; ++q) {
        ks.weights(Q, q, 0, n, w.data());
        for (arma::uword k = 0; k < n; ++k) {
          const arma::uword i = ks.order()[k];
          const double ref =
              direct_weight(Xq.row(q), X.row(i), h, "cuco", kernel, ow(i) / ow.max());
          EXPECT_NEAR(w[k], ref, 1e-13 * std::max(1.0, ref)) << kernel << " q=" << q << " i=" << i;
        }
      }
      for (arma::uword k = 0; k < n; k += 97) {
        const arma::uword i = ks.order()[k];
        EXPECT_NEAR(ks.self_weight(k), direct_weight(X.row(i), X.row(i), h, "cuco", kernel, ow(i) / ow.max()),
                    1e-15);
      }
    }
  }
}

namespace {
// A sink that records every (query, position, weight) it is sent, to check the engine.
struct Recorder : TileSink {
  arma::mat* sums;  // m x n dense, internal positions
  arma::vec* maxes;
  const std::size_t* qs = nullptr;
  std::size_t count = 0;
  void begin_block(const std::size_t* q, std::size_t c) override {
    qs = q;
    count = c;
  }
  void tile(std::size_t s, std::size_t first, std::size_t len, const double* w) override {
    for (std::size_t i = 0; i < len; ++i) (*sums)(qs[s], first + i) += w[i];
  }
  void end_block(const double* row_max) override {
    for (std::size_t s = 0; s < count; ++s) (*maxes)(qs[s]) = row_max[s];
  }
};
}  // namespace

TEST(KernelSpace, RunVisitsEveryPairOnceAndNeighboursAgree) {
  arma::arma_rng::set_seed(3);
  for (int dc : {1, 2, 3}) {
    const arma::uword n = 2500, m = 70;
    arma::mat X = arma::randn(n, dc);
    arma::mat Xq = arma::randn(m, dc);
    const arma::vec h(dc, arma::fill::value(0.3));
    for (const std::string kernel : {"gaussian", "epanechnikov", "uniform"}) {
      arma::mat S[2];
      arma::vec M[2];
      for (int path = 0; path < 2; ++path) {
        KernelSpec spec;
        spec.kernel = Kernel::from_name(kernel);
        spec.algorithm = path == 0 ? PairAlgorithm::all_pairs : PairAlgorithm::neighbors;
        KernelSpace ks(X, h, spec);
        const PreparedQueries Q = ks.prepare(Xq, "Xq");
        arma::mat sums(m, n, arma::fill::zeros);
        arma::vec maxes(m, arma::fill::zeros);
        ks.run(Q, [&]() {
          auto r = std::make_unique<Recorder>();
          r->sums = &sums;
          r->maxes = &maxes;
          return std::unique_ptr<TileSink>(std::move(r));
        }, RunOptions{1, false, "test"});
        // Back to original row order.
        S[path].set_size(m, n);
        for (std::size_t k = 0; k < n; ++k) S[path].col(ks.order()[k]) = sums.col(k);
        M[path] = maxes;
      }
      // Each pair at most once (no double counting) and the same weights on both paths, except
      // Gaussian weights below 1e-16 of the row maximum, which the neighbour path may drop.
      for (arma::uword q = 0; q < m; ++q) {
        const double mx = S[0].row(q).max();
        EXPECT_EQ(M[0](q), mx);
        EXPECT_EQ(M[1](q), S[1].row(q).max());
        for (arma::uword i = 0; i < n; ++i) {
          const double a = S[0](q, i), b = S[1](q, i);
          if (b != 0.0 || kernel != std::string("gaussian")) {
            EXPECT_EQ(a, b) << kernel << " dc=" << dc;
          } else {
            EXPECT_LT(a, 1e-16 * mx) << kernel << " dc=" << dc;
          }
        }
        EXPECT_NEAR(arma::accu(S[1].row(q)), arma::accu(S[0].row(q)), 1e-14 * arma::accu(S[0].row(q)) + 1e-300);
      }
    }
  }
}

TEST(KernelSpace, BadInputIsRejectedWithTheArgumentNamed) {
  arma::mat X = {{0.0, 1.0}, {1.0, 0.0}, {2.0, 1.0}};
  KernelSpec spec;
  auto expect_msg = [](auto fn, const std::string& needle) {
    try {
      fn();
      ADD_FAILURE() << "expected InvalidArgument mentioning " << needle;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_msg([&] { KernelSpace(X, arma::vec{0.0, 1.0}, spec); }, "bandwidth");
  expect_msg([&] { KernelSpace(X, arma::vec{-1.0, 1.0}, spec); }, "bandwidth");
  expect_msg([&] { KernelSpace(X, arma::vec{std::nan(""), 1.0}, spec); }, "bandwidth");
  expect_msg([&] { KernelSpace(X, arma::vec{std::numeric_limits<double>::infinity(), 1.0}, spec); },
             "bandwidth");
  expect_msg([&] { KernelSpace(X, arma::vec{1.0, 1.0, 1.0}, spec); }, "bandwidth");
  arma::mat Xn = X;
  Xn(1, 1) = std::nan("");
  expect_msg([&] { KernelSpace(Xn, arma::vec{1.0, 1.0}, spec); }, "X");
  expect_msg([&] { KernelSpace(X, arma::vec{1.0, 1.0}, spec, arma::vec{1.0, -1.0, 1.0}); },
             "sample_weight");
  expect_msg([&] { KernelSpace(X, arma::vec{1.0, 1.0}, spec, arma::vec{0.0, 0.0, 0.0}); },
             "sample_weight");
  expect_msg([&] { KernelSpace(X, arma::vec{1.0, 1.0}, spec, arma::vec{1.0, 1.0}); },
             "sample_weight");
  // Categorical columns: codes must be integers, lambda in range, unseen levels rejected.
  KernelSpec mixed = spec;
  mixed.var_types = "cu";
  expect_msg([&] { KernelSpace(X, arma::vec{1.0, 0.6}, mixed); }, "bandwidth[2]");  // AA: <= 1/2
  EXPECT_NO_THROW(KernelSpace(X, arma::vec{1.0, 0.5}, mixed));
  expect_msg([&] { KernelSpace(X, arma::vec{1.0}, mixed); }, "bandwidth");
  arma::mat Xf = X;
  Xf(0, 1) = 0.5;
  expect_msg([&] { KernelSpace(Xf, arma::vec{1.0, 0.2}, mixed); }, "integer");
  KernelSpace ks(X, arma::vec{1.0, 0.2}, mixed);
  expect_msg([&] { ks.prepare(arma::mat{{0.5, 2.0}}, "X_new"); }, "X_new");
  expect_msg([&] { ks.prepare(arma::mat{{0.5, 0.0, 1.0}}, "X_new"); }, "columns");
  KernelSpec wvr = spec;
  wvr.var_types = "co";
  wvr.ordered_kernel = CategoricalKernel(CategoricalKernelType::wang_van_ryzin);
  expect_msg([&] { KernelSpace(X, arma::vec{1.0, 1.0}, wvr); }, "wang_van_ryzin");
  KernelSpec nb = spec;
  nb.algorithm = PairAlgorithm::neighbors;
  nb.truncation = 0.0;
  expect_msg([&] { KernelSpace(X, arma::vec{1.0, 1.0}, nb); }, "algorithm");
  KernelSpec tr = spec;
  tr.truncation = 0.1;
  expect_msg([&] { KernelSpace(X, arma::vec{1.0, 1.0}, tr); }, "truncation");
}
