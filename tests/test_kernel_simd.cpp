// Tests of the Highway kernel-weight tiles (kernel_tiles-inl.hpp, dispatched in kernel_pairs.cpp):
// the vector exp against a long-double reference (ulp error, range, exact 0 for far pairs and
// -inf), the lane-wise kernel shapes against kernel.hpp's scalar ones, and tile-position
// invariance of KernelSpace::weights (the same weight wherever a tile starts).
#include <gtest/gtest.h>

#include <armadillo>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "attnreg/kernels/kernel.hpp"
#include "attnreg/kernels/kernel_pairs.hpp"
#include "attnreg/detail/simd_dispatch.hpp"

#include <hwy/targets.h>

using namespace attnreg;

namespace {

// Distance in units in the last place between two positive finite doubles (or 0 and 0).
std::int64_t ulp_distance(double a, double b) {
  std::int64_t ia, ib;
  std::memcpy(&ia, &a, sizeof ia);
  std::memcpy(&ib, &b, sizeof ib);
  return ia > ib ? ia - ib : ib - ia;
}

std::vector<double> vexp(const std::vector<double>& x) {
  std::vector<double> y(x.size(), -1.0);
  simd_dispatch::exp_nonpositive(x.data(), x.size(), y.data());
  return y;
}

}  // namespace

// Runs `body` once per SIMD target this CPU supports (each compiled copy of the tiles), then
// restores the normal dispatch.
template <class F>
void for_each_target(F body) {
  for (const std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    SCOPED_TRACE(hwy::TargetName(target));
    body();
  }
  hwy::SetSupportedTargetsForTest(0);
}

TEST(KernelSimd, TargetIsNamed) {
  const std::string t = simd_dispatch::target_name();
  EXPECT_FALSE(t.empty());
  for_each_target([] { EXPECT_FALSE(std::string(simd_dispatch::target_name()).empty()); });
}

TEST(KernelSimd, ExpIsWithinOneUlpOnItsRange) {
  for_each_target([&] {
    // Dense grid over [-708, 0] plus the small arguments where e^x is near 1, odd lengths so the
    // padded tail is exercised.
    std::vector<double> x;
    for (double v = -708.0; v <= 0.0; v += 0.00731) x.push_back(v);
    for (double v = -1e-3; v < 0.0; v += 1.37e-7) x.push_back(v);
    x.push_back(-std::ldexp(1.0, -60));
    x.push_back(-708.0);
    const std::vector<double> y = vexp(x);
    std::int64_t worst = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      // long double exp is accurate well beyond double precision; round it once.
      const double ref = static_cast<double>(std::exp(static_cast<long double>(x[i])));
      ASSERT_GT(y[i], 0.0) << x[i];
      ASSERT_TRUE(std::isnormal(y[i])) << x[i];
      worst = std::max(worst, ulp_distance(y[i], ref));
    }
    EXPECT_LE(worst, 1);
  });
}

TEST(KernelSimd, ExpEdgesAreExact) {
  for_each_target([&] {
    const double inf = std::numeric_limits<double>::infinity();
    const std::vector<double> x = {0.0, -0.0, -1e-300, -708.0000000001, -709.0, -745.2, -1000.0,
                                   -1e300, -std::numeric_limits<double>::max(), -inf};
    const std::vector<double> y = vexp(x);
    EXPECT_EQ(y[0], 1.0);
    EXPECT_EQ(y[1], 1.0);
    EXPECT_EQ(y[2], 1.0);
    for (std::size_t i = 3; i < x.size(); ++i) {
      EXPECT_EQ(y[i], 0.0) << x[i];
      EXPECT_FALSE(std::signbit(y[i])) << x[i];
    }
  });
}

TEST(KernelSimd, ShapesAgreeWithScalarForms) {
  for_each_target([&] {
    std::vector<double> u;
    for (double v = -1.3; v <= 1.3; v += 0.000917) u.push_back(v);
    for (double v : {1.0, -1.0, 0.0, std::nextafter(1.0, 2.0), std::nextafter(-1.0, -2.0),
                     std::nextafter(1.0, 0.0), 40.0, -40.0, 1e200})
      u.push_back(v);
    for (const std::string& name : Kernel::names()) {
      const Kernel K = Kernel::from_name(name);
      std::vector<double> y(u.size(), -1.0);
      simd_dispatch::kernel_shape(K.type, u.data(), u.size(), y.data());
      for (std::size_t i = 0; i < u.size(); ++i) {
        const double ref = K.shape(u[i]);
        // The vector forms fuse multiply-adds where the scalar ones may not: rounding only.
        EXPECT_NEAR(y[i], ref, 1e-15 * std::max(1.0, ref)) << name << " u=" << u[i];
        if (K.compact() && std::fabs(u[i]) > 1.0) {
          EXPECT_EQ(y[i], 0.0) << name << " u=" << u[i];
        }
        if (K.nonnegative()) EXPECT_GE(y[i], 0.0) << name << " u=" << u[i];
      }
    }
    // The uniform kernel's support is closed, as in the scalar form.
    const double ends[2] = {1.0, -1.0};
    double y[2];
    simd_dispatch::kernel_shape(KernelType::uniform, ends, 2, y);
    EXPECT_EQ(y[0], 1.0);
    EXPECT_EQ(y[1], 1.0);
  });
}

TEST(KernelSimd, WeightsDoNotDependOnWhereATileStarts) {
  for_each_target([&] {
    arma::arma_rng::set_seed(11);
    const arma::uword n = 203;  // not a multiple of any lane count
    arma::mat X(n, 3);
    X.col(0) = arma::randn(n);
    X.col(1) = arma::floor(3 * arma::randu(n));
    X.col(2) = arma::randn(n);
    const arma::vec ow = arma::randu(n) + 0.1;
    for (const std::string& kernel : Kernel::names()) {
      KernelSpec spec;
      spec.kernel = Kernel::from_name(kernel);
      spec.var_types = "cuc";
      spec.algorithm = PairAlgorithm::all_pairs;
      KernelSpace ks(X, arma::vec{0.7, 0.4, 1.3}, spec, ow);
      const PreparedQueries Q = ks.prepare(X.rows(0, 4), "X_new");
      std::vector<double> full(n), part(n);
      for (std::size_t q = 0; q < Q.m; ++q) {
        const double mx = ks.weights(Q, q, 0, n, full.data());
        double seen = 0.0;
        for (double v : full) seen = std::max(seen, v);
        EXPECT_EQ(mx, seen) << kernel;
        for (std::size_t first : {1u, 3u, 5u, 7u, 13u, 200u}) {
          const std::size_t len = n - first;
          ks.weights(Q, q, first, len, part.data());
          for (std::size_t k = 0; k < len; ++k)
            ASSERT_EQ(part[k], full[first + k]) << kernel << " q=" << q << " first=" << first;
        }
      }
    }
  });
}

TEST(KernelSimd, FarPairsWeighExactlyZero) {
  KernelSpec spec;
  spec.algorithm = PairAlgorithm::all_pairs;
  {
    // 40 bandwidths away: exp(-800) is 0, not a subnormal; the near points keep their weights.
    const arma::mat X = arma::vec{0.0, 0.5, 40.0, -40.0, 60.0};
    KernelSpace ks(X, arma::vec{1.0}, spec);
    const PreparedQueries Q = ks.prepare(arma::mat(1, 1, arma::fill::zeros), "X_new");
    std::vector<double> w(X.n_rows);
    ks.weights(Q, 0, 0, X.n_rows, w.data());
    for (std::size_t k = 0; k < X.n_rows; ++k) {
      const double x = X(ks.order()[k], 0);
      if (std::fabs(x) >= 40.0) {
        EXPECT_EQ(w[k], 0.0) << x;
      } else {
        EXPECT_NEAR(w[k], std::exp(-0.5 * x * x), 1e-15) << x;
      }
    }
  }
  {
    // A squared distance that overflows to inf (1e160 bandwidths): exp(-inf) = 0.
    const arma::mat X = arma::vec{0.0, 1.0};
    KernelSpace ks(X, arma::vec{1e-160}, spec);
    const PreparedQueries Q = ks.prepare(arma::mat(1, 1, arma::fill::zeros), "X_new");
    double w[2];
    EXPECT_EQ(ks.weights(Q, 0, 0, 2, w), 1.0);
    for (std::size_t k = 0; k < 2; ++k)
      EXPECT_EQ(w[k], X(ks.order()[k], 0) == 0.0 ? 1.0 : 0.0);
  }
}
