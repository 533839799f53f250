// The fourth-order Gaussian kernel (kernels/shapes/gaussian4.hpp; R np's ckertype = "gaussian",
// ckerorder = 4): its constants by numerical integration, and NW / local-linear fits, the
// density, the density cv_ls objective and the regression cv_ls objective (with its gradient)
// against direct float64 sums on random data with ties and a shifted origin. Paths that need
// nonnegative weights refuse it with an error naming the kernel.
#include <gtest/gtest.h>

#include <armadillo>
#include <cmath>
#include <functional>
#include <string>

#include "attnreg/bandwidth/bandwidth_select.hpp"
#include "attnreg/bandwidth/dpi_bandwidth.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/density/density.hpp"
#include "attnreg/detail/density_kernels.hpp"
#include "attnreg/inference/diagnostics.hpp"
#include "attnreg/kernels/binned.hpp"
#include "attnreg/kernels/fast_sums.hpp"
#include "attnreg/kernels/kernel.hpp"
#include "attnreg/solve/local_fit.hpp"

using namespace attnreg;

namespace {

const double kPi = 3.14159265358979323846;

// K(u) = (3 - u^2) / 2 phi(u), written out.
double k4(double u) { return 0.5 * (3.0 - u * u) * std::exp(-0.5 * u * u) / std::sqrt(2 * kPi); }

double integral(const std::function<double(double)>& f, double a = -40, double b = 40) {
  const int n = 400000;
  const double h = (b - a) / n;
  double s = f(a) + f(b);
  for (int i = 1; i < n; ++i) s += (i % 2 ? 4.0 : 2.0) * f(a + i * h);
  return s * h / 3.0;
}

// Random data: d continuous columns with a shifted origin (1e3) and ties (rounded values).
void make(arma::uword n, arma::uword d, int seed, arma::mat& X, arma::vec& y) {
  arma::arma_rng::set_seed(seed);
  X = arma::round(4 * arma::randu<arma::mat>(n, d)) / 4 + 1e3;  // few levels: many ties
  X.col(0) += 0.3 * arma::randn<arma::vec>(n);                  // column 0 mostly distinct
  X.col(0).head(5).fill(X(0, 0));                               // ... with a tie of five
  y = arma::sin(X.col(0)) + 0.2 * arma::randn<arma::vec>(n);
}

// Product weight of training row i at query x.
double weight(const arma::mat& X, arma::uword i, const arma::rowvec& x, const arma::vec& h) {
  double w = 1;
  for (arma::uword j = 0; j < X.n_cols; ++j) w *= k4((X(i, j) - x(j)) / h(j));
  return w;
}

// Local constant / linear fit at x, excluding row `skip` (-1: none), by weighted least squares.
double fit_at(const arma::mat& X, const arma::vec& y, const arma::rowvec& x, const arma::vec& h,
              int degree, long skip) {
  const arma::uword q = degree == 0 ? 1 : 1 + X.n_cols;
  arma::mat A(q, q, arma::fill::zeros);
  arma::vec t(q, arma::fill::zeros);
  for (arma::uword i = 0; i < X.n_rows; ++i) {
    if (static_cast<long>(i) == skip) continue;
    arma::vec z(q);
    z(0) = 1;
    for (arma::uword j = 1; j < q; ++j) z(j) = X(i, j - 1) - x(j - 1);
    const double w = weight(X, i, x, h);
    A += w * z * z.t();
    t += w * y(i) * z;
  }
  const arma::vec c = arma::solve(A, t);
  return c(0);
}

}  // namespace

TEST(Gaussian4, ConstantsMatchNumericalIntegration) {
  const Kernel K = Kernel::from_name("gaussian4");
  EXPECT_EQ(std::string(K.name()), "gaussian4");
  EXPECT_EQ(K.order(), 4);
  EXPECT_FALSE(K.nonnegative());
  EXPECT_FALSE(K.compact());
  EXPECT_NEAR(integral([&](double u) { return K(u); }), 1.0, 1e-12);
  EXPECT_NEAR(integral([&](double u) { return u * u * K(u); }), 0.0, 1e-12);
  EXPECT_NEAR(integral([&](double u) { return u * u * u * u * K(u); }), -3.0, 1e-11);
  EXPECT_NEAR(integral([&](double u) { return K(u) * K(u); }), K.roughness(), 1e-12);
  EXPECT_EQ(K.mu2(), 0.0);
  for (double u : {-4.0, -1.7320508075688772, -0.3, 0.0, 0.5, 2.0, 6.0}) {
    EXPECT_NEAR(K(u), k4(u), 1e-15) << u;
    EXPECT_NEAR(K.shape(u) * K.constant(), k4(u), 1e-15) << u;
  }
  EXPECT_LT(K(2.0), 0.0);
  EXPECT_EQ(K.shape(1e200), 0.0);
  // Density pieces: G = int K, K * K and its derivative, by Simpson's rule.
  for (double u : {-1.7, -0.2, 0.0, 0.95, 2.5}) {
    EXPECT_NEAR(density_detail::kcdf(K, u), integral(k4, -40, u), 1e-12) << u;
    double dc = 0;
    const double c = density_detail::kconv(K, u, &dc);
    EXPECT_NEAR(c, integral([&](double s) { return k4(s) * k4(s + u); }), 1e-12) << u;
    const double e = 1e-5;
    const double fd = (integral([&](double s) { return k4(s) * k4(s + u + e); }) -
                       integral([&](double s) { return k4(s) * k4(s + u - e); })) / (2 * e);
    EXPECT_NEAR(dc, fd, 1e-8) << u;
  }
  EXPECT_EQ(Kernel::from_name("Gaussian4").type, KernelType::gaussian4);
}

TEST(Gaussian4, LocalConstantAndLinearFitsMatchDirectSums) {
  for (int seed : {1, 2}) {
    for (arma::uword d : {1u, 2u}) {
      arma::mat X;
      arma::vec y;
      make(60, d, seed, X, y);
      const arma::vec h = arma::linspace<arma::vec>(0.8, 1.2, d);
      arma::mat Q = X.rows(0, 9);
      Q.col(0) += 0.05;
      for (int degree : {0, 1}) {
        LocalFitOptions o;
        o.degree = degree;
        o.kernel.kernel = Kernel::from_name("gaussian4");
        // Only the queries: with negative weights some training rows' local design is not
        // positive definite (reported as singular there).
        o.compute_fitted = false;
        LocalPolynomial lp(o);
        lp.fit(X, y, h);
        const arma::mat got = lp.predict(Q);
        for (arma::uword r = 0; r < Q.n_rows; ++r) {
          const double want = fit_at(X, y, Q.row(r), h, degree, -1);
          EXPECT_NEAR(got(r, 0), want, 1e-9 * (1 + std::abs(want)))
              << "seed " << seed << " d " << d << " degree " << degree << " row " << r;
        }
      }
    }
  }
}

TEST(Gaussian4, RegressionCvLsAndGradientMatchDirectSums) {
  for (int seed : {3, 4}) {
    for (arma::uword d : {1u, 2u}) {
      arma::mat X;
      arma::vec y;
      make(40, d, seed, X, y);
      const arma::vec h = arma::linspace<arma::vec>(0.7, 1.0, d);
      for (int degree : {0, 1}) {
        BandwidthSelectOptions o;
        o.degree = degree;
        o.kernel.kernel = Kernel::from_name("gaussian4");
        BandwidthObjective obj(X, y, o);
        arma::vec g;
        const double cv = obj(h, &g);
        double want = 0;
        for (arma::uword i = 0; i < X.n_rows; ++i) {
          const double e = y(i) - fit_at(X, y, X.row(i), h, degree, static_cast<long>(i));
          want += e * e;
        }
        want /= X.n_rows;
        EXPECT_NEAR(cv, want, 1e-9 * want) << "seed " << seed << " d " << d << " deg " << degree;
        for (arma::uword j = 0; j < d; ++j) {
          const double step = 1e-5;
          arma::vec hp = h, hm = h;
          hp(j) *= std::exp(step);
          hm(j) *= std::exp(-step);
          const double fd = (obj(hp) - obj(hm)) / (2 * step);
          EXPECT_NEAR(g(j), fd, 1e-5 * std::max(1.0, std::abs(fd))) << "column " << j;
        }
      }
    }
  }
}

TEST(Gaussian4, DensityAndDensityCvLsMatchDirectSums) {
  arma::mat X;
  arma::vec y;
  make(30, 1, 5, X, y);
  const double n = 30, h = 0.4;
  DensityOptions opt;
  opt.kernel = Kernel::from_name("gaussian4");
  DensityData dd(DensityKind::density, X, "c", arma::mat(), "", opt);
  const arma::vec bw{h};
  arma::mat Q = arma::linspace<arma::mat>(998.0, 1002.5, 12);
  const arma::vec got = density_evaluate(dd, bw, Q);
  for (arma::uword r = 0; r < Q.n_rows; ++r) {
    double f = 0;
    for (arma::uword i = 0; i < X.n_rows; ++i) f += k4((Q(r, 0) - X(i, 0)) / h) / h;
    EXPECT_NEAR(got(r), f / n, 1e-12) << r;
  }
  // cv_ls: int fhat^2 - 2/n sum_i fhat_{-i}(X_i), with int fhat^2 by numerical integration.
  double F = 0, L = 0;
  for (arma::uword i = 0; i < X.n_rows; ++i)
    for (arma::uword j = 0; j < X.n_rows; ++j) {
      const double t = (X(i, 0) - X(j, 0)) / h;
      F += integral([&](double z) { return k4(z) * k4(z + t); }) / h;
      if (i != j) L += k4(t) / h;
    }
  DensityObjective ls(dd, DensityMethod::cv_ls);
  EXPECT_NEAR(ls(bw), F / (n * n) - 2 * L / (n * (n - 1)), 1e-10);
}

TEST(Gaussian4, PathsNeedingNonnegativeWeightsRefuseItByName) {
  arma::mat X;
  arma::vec y;
  make(40, 1, 6, X, y);
  const Kernel K = Kernel::from_name("gaussian4");
  auto names_kernel = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const InvalidArgument& e) {
      return std::string(e.what()).find("gaussian4") != std::string::npos;
    }
    return false;
  };
  EXPECT_TRUE(names_kernel([&] { rule_of_thumb_bandwidth(X.col(0), K); }));
  EXPECT_TRUE(names_kernel([&] {
    BinnedFitOptions bo;
    bo.kernel = K;
    BinnedLocalPolynomial(bo).fit(X, y, arma::vec{0.5});
  }));
  EXPECT_FALSE(fast_sums_supported(KernelType::gaussian4));
  EXPECT_TRUE(names_kernel([&] {
    LocalFitOptions o;
    o.kernel.kernel = K;
    o.kernel.algorithm = PairAlgorithm::neighbors;
    LocalPolynomial(o).fit(X, y, arma::vec{0.5});
  }));
  EXPECT_TRUE(names_kernel([&] {
    DensityOptions opt;
    opt.kernel = K;
    density_normal_reference(DensityData(DensityKind::density, X, "c", arma::mat(), "", opt));
  }));
}
