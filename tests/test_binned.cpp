// Binned approximations (binned.hpp): the FFT node fits against direct sums over the binned
// data (a few-line oracle), exactness when every point sits on a node, the error falling as
// the grid grows, the binned cv_ls objective and its gradient, the chosen bandwidth against the
// exact search, thread independence and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "attnreg/bandwidth/bandwidth_select.hpp"
#include "attnreg/kernels/binned.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/solve/local_fit.hpp"

using namespace attnreg;

namespace {

struct Data {
  arma::mat X;
  arma::mat Y;
};

Data binned_data(std::size_t n, std::size_t d, std::uint64_t seed, double offset = 0.0) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> U(0.0, 1.0);
  std::normal_distribution<double> N(0.0, 1.0);
  Data D{arma::mat(n, d), arma::mat(n, 1)};
  for (std::size_t i = 0; i < n; ++i) {
    double s = 0.0;
    for (std::size_t a = 0; a < d; ++a) {
      D.X(i, a) = offset + U(rng);
      s += std::sin(2.0 * 3.141592653589793 * (D.X(i, a) - offset) * (a + 1));
    }
    D.Y(i, 0) = s + 0.3 * N(rng);
  }
  return D;
}

// Oracle: linear binning written out, then the local polynomial fit at node g by direct sums
// over the nodes (monomials in bandwidth units), solved by arma::solve. 1-D.
double oracle_node_fit(const arma::vec& x, const arma::vec& y, std::size_t G, double h,
                       int degree, const Kernel& K, std::size_t g) {
  const double lo = x.min(), hi = x.max(), delta = (hi - lo) / (G - 1);
  arma::vec c(G, arma::fill::zeros), s(G, arma::fill::zeros);
  for (std::size_t i = 0; i < x.n_elem; ++i) {
    double pos = (x(i) - lo) / delta;
    std::size_t j = std::min<std::size_t>(static_cast<std::size_t>(std::floor(pos)), G - 2);
    const double f = pos - j;
    c(j) += 1 - f;
    c(j + 1) += f;
    s(j) += (1 - f) * y(i);
    s(j + 1) += f * y(i);
  }
  const std::size_t q = degree + 1;
  std::size_t support = 0;  // nodes with data and weight: fewer than q -> no fit
  for (std::size_t j = 0; j < G; ++j)
    if (c(j) > 0 && K.shape((static_cast<double>(j) - static_cast<double>(g)) * delta / h) > 0)
      ++support;
  if (support < q) return arma::datum::nan;
  arma::mat A(q, q, arma::fill::zeros);
  arma::vec T(q, arma::fill::zeros);
  for (std::size_t j = 0; j < G; ++j) {
    const double u = (static_cast<double>(j) - static_cast<double>(g)) * delta / h;
    const double w = K.shape(u);
    for (std::size_t r = 0; r < q; ++r) {
      T(r) += s(j) * w * std::pow(u, r);
      for (std::size_t t = 0; t < q; ++t) A(r, t) += c(j) * w * std::pow(u, r + t);
    }
  }
  const arma::vec b = arma::solve(A, T);
  return b(0);
}

}  // namespace

TEST(Binned, NodeFitsEqualDirectSumsOverTheBinnedData) {
  for (std::uint64_t seed : {1u, 2u}) {
    for (double offset : {0.0, 1e6}) {
      Data D = binned_data(700, 1, seed, offset);
      for (KernelType kt : {KernelType::gaussian, KernelType::epanechnikov, KernelType::biweight}) {
        for (int degree = 0; degree <= 3; ++degree) {
          for (double h : {0.03, 0.2}) {
            BinnedFitOptions o;
            o.degree = degree;
            o.kernel = Kernel(kt);
            o.grid_size = 57;
            BinnedLocalPolynomial b(o);
            b.fit(D.X, D.Y, arma::vec{h});
            const arma::mat gf = b.grid_fit();
            for (std::size_t g : {0u, 13u, 28u, 56u}) {
              const double want =
                  oracle_node_fit(D.X.col(0), D.Y.col(0), 57, h, degree, Kernel(kt), g);
              if (std::isnan(want)) {
                EXPECT_TRUE(std::isnan(gf(g, 0)));
                continue;
              }
              EXPECT_NEAR(gf(g, 0), want, 1e-9 * (1.0 + std::fabs(want)))
                  << "kernel " << static_cast<int>(kt) << " degree " << degree << " h " << h
                  << " node " << g << " offset " << offset;
            }
          }
        }
      }
    }
  }
}

TEST(Binned, EqualsExactWhenEveryPointSitsOnANode) {
  // 1-D: 60 lattice values, each 3 times; grid of 60 points.
  std::mt19937_64 rng(3);
  std::normal_distribution<double> N(0.0, 1.0);
  arma::vec lat = arma::linspace(2.0, 5.0, 60);
  arma::mat X(180, 1), Y(180, 2);
  for (std::size_t i = 0; i < 180; ++i) {
    X(i, 0) = lat(i % 60);
    Y(i, 0) = std::cos(X(i, 0)) + 0.1 * N(rng);
    Y(i, 1) = X(i, 0) * X(i, 0) + 0.1 * N(rng);
  }
  for (KernelType kt : {KernelType::gaussian, KernelType::epanechnikov}) {
    for (int degree = 0; degree <= 3; ++degree) {
      LocalFitOptions eo;
      eo.degree = degree;
      eo.kernel.kernel = Kernel(kt);
      eo.ridge = degree == 1 ? 0.1 : 0.0;
      eo.compute_fitted = false;
      LocalPolynomial ex(eo);
      ex.fit(X, Y, arma::vec{0.2});
      BinnedFitOptions bo;
      bo.degree = degree;
      bo.kernel = Kernel(kt);
      bo.ridge = eo.ridge;
      bo.grid_size = 60;
      BinnedLocalPolynomial b(bo);
      b.fit(X, Y, arma::vec{0.2});
      const arma::mat q = arma::mat(lat);
      EXPECT_LT(arma::abs(ex.predict(q) - b.predict(q)).max(), 1e-10) << degree;
      EXPECT_LT(arma::abs(ex.fitted() - b.fitted()).max(), 1e-10) << degree;
      if (degree >= 1) {
        const arma::cube ge = ex.gradient(q), gb = b.gradient(q);
        EXPECT_LT(arma::abs(arma::vectorise(ge - gb)).max(), 1e-9) << degree;
        arma::mat g1(q.n_rows, 2);
        for (std::size_t o = 0; o < 2; ++o) g1.col(o) = ge.slice(o).col(0);
        EXPECT_LT(arma::abs(b.derivative(q, 1) - g1).max(), 1e-9);
      }
      const BinnedErrorEstimate e = b.approx_error(50, 7);
      EXPECT_EQ(e.n_points, 50u);
      EXPECT_LT(e.max_abs, 1e-10);
    }
  }
  // 2-D: a 15 x 15 lattice, each point twice.
  arma::mat X2(450, 2), Y2(450, 1);
  for (std::size_t i = 0; i < 450; ++i) {
    X2(i, 0) = (i % 15) / 14.0;
    X2(i, 1) = ((i / 15) % 15) / 14.0;
    Y2(i, 0) = std::sin(3 * X2(i, 0)) * X2(i, 1) + 0.1 * N(rng);
  }
  for (int degree = 0; degree <= 1; ++degree) {
    LocalFitOptions eo;
    eo.degree = degree;
    eo.compute_fitted = false;
    LocalPolynomial ex(eo);
    ex.fit(X2, Y2, arma::vec{0.12, 0.2});
    BinnedFitOptions bo;
    bo.degree = degree;
    bo.grid_size = 15;
    BinnedLocalPolynomial b(bo);
    b.fit(X2, Y2, arma::vec{0.12, 0.2});
    EXPECT_LT(arma::abs(ex.predict(X2) - b.predict(X2)).max(), 1e-10);
    if (degree == 1) {
      EXPECT_LT(arma::abs(arma::vectorise(ex.gradient(X2) - b.gradient(X2))).max(), 1e-9);
    }
  }
}

TEST(Binned, ErrorFallsAsTheGridGrows) {
  for (std::size_t d : {1u, 2u}) {
    Data D = binned_data(d == 1 ? 3000 : 2000, d, 11);
    for (KernelType kt : {KernelType::gaussian, KernelType::epanechnikov}) {
      for (int degree = 0; degree <= 1; ++degree) {
        LocalFitOptions eo;
        eo.degree = degree;
        eo.kernel.kernel = Kernel(kt);
        eo.compute_fitted = false;
        LocalPolynomial ex(eo);
        const arma::vec h = d == 1 ? arma::vec{0.08} : arma::vec{0.15, 0.15};
        ex.fit(D.X, D.Y, h);
        const arma::mat q = D.X.rows(0, 199);
        const arma::mat want = ex.predict(q);
        double prev = arma::datum::inf;
        for (int G : d == 1 ? std::vector<int>{51, 101, 201, 401, 801}
                            : std::vector<int>{21, 41, 81, 161}) {
          BinnedFitOptions bo;
          bo.degree = degree;
          bo.kernel = Kernel(kt);
          bo.grid_size = G;
          BinnedLocalPolynomial b(bo);
          b.fit(D.X, D.Y, h);
          const double err = arma::abs(b.predict(q) - want).max();
          EXPECT_LT(err, 0.7 * prev) << "d " << d << " G " << G << " degree " << degree;
          prev = err;
          const BinnedErrorEstimate e = b.approx_error(200, 1);
          EXPECT_EQ(e.n_points, 200u);
          EXPECT_GT(e.max_abs, 0.0);
          EXPECT_LE(e.rms, e.max_abs);
        }
        EXPECT_LT(prev, d == 1 ? 1e-3 : 5e-3);
      }
    }
  }
}

TEST(Binned, CvObjectiveEqualsExactOnLatticeAndGradientIsExact) {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> N(0.0, 1.0);
  arma::mat X(180, 1);
  arma::vec y(180);
  for (std::size_t i = 0; i < 180; ++i) {
    X(i, 0) = (i % 60) / 59.0;
    y(i) = std::cos(3 * X(i, 0)) + 0.1 * N(rng);
  }
  for (KernelType kt : {KernelType::gaussian, KernelType::epanechnikov}) {
    for (int degree = 0; degree <= 1; ++degree) {
      for (double ridge : {0.0, 0.3}) {
        if (degree == 0 && ridge > 0) continue;
        BandwidthSelectOptions so;
        so.degree = degree;
        so.kernel.kernel = Kernel(kt);
        so.ridge = ridge;
        BandwidthObjective exact(X, y, so);
        BinnedCVObjective binned(X, y, degree, Kernel(kt), ridge, 60);
        for (double h : {0.05, 0.2}) {
          arma::vec ge, gb;
          const double ve = exact(arma::vec{h}, &ge), vb = binned(arma::vec{h}, &gb);
          EXPECT_NEAR(vb, ve, 1e-12 * ve);
          EXPECT_NEAR(gb(0), ge(0), 1e-9 * (std::fabs(ge(0)) + ve));
        }
      }
    }
  }
  // Random data, 1-D and 2-D: the gradient is the derivative of this binned objective.
  for (std::size_t d : {1u, 2u}) {
    Data D = binned_data(2000, d, 21);
    for (int degree = 0; degree <= 1; ++degree) {
      BinnedCVObjective binned(D.X, D.Y.col(0), degree, Kernel(KernelType::gaussian), 0.1, 0);
      const arma::vec h = d == 1 ? arma::vec{0.04} : arma::vec{0.1, 0.13};
      arma::vec g;
      binned(h, &g);
      for (std::size_t a = 0; a < d; ++a) {
        const double e = 1e-5;
        arma::vec hp = h, hm = h;
        hp(a) *= std::exp(e);
        hm(a) *= std::exp(-e);
        const double fd = (binned(hp) - binned(hm)) / (2 * e);
        EXPECT_NEAR(g(a), fd, 1e-6 * std::fabs(fd) + 1e-12) << "d " << d << " a " << a;
      }
    }
  }
}

TEST(Binned, CvObjectiveIsASumOfSquaresOnSparseData) {
  // Fewer points than grid nodes, bandwidths down to about one grid spacing: where a point's
  // own weight dominates its cell the quadratic shortcut must not be used (it went negative).
  Data D = binned_data(300, 1, 51);
  BinnedCVObjective o(D.X, D.Y.col(0), 1, Kernel(KernelType::gaussian), 0.0, 0);
  for (double m : {1.0, 1.38, 2.0, 5.0, 20.0}) {
    const double v = o(arma::vec{m * o.spacing(0)});
    EXPECT_TRUE(v >= 0.0) << m << " " << v;
  }
}

TEST(Binned, ChosenBandwidthMatchesTheExactSearch) {
  Data D = binned_data(5000, 1, 31);
  BandwidthSelectOptions so;
  so.degree = 1;
  const BandwidthSelectResult exact = select_bandwidth(D.X, D.Y.col(0), so);
  so.approx = Approximation::binned;
  const BandwidthSelectResult binned = select_bandwidth(D.X, D.Y.col(0), so);
  EXPECT_NEAR(binned.bandwidth(0) / exact.bandwidth(0), 1.0, 1e-3);
}

TEST(Binned, SameNumbersForOneAndTwoThreads) {
  Data D = binned_data(20000, 1, 41);
  Data D2 = binned_data(20000, 2, 42);
  for (const Data* p : {&D, &D2}) {
    const std::size_t d = p->X.n_cols;
    const arma::vec h = d == 1 ? arma::vec{0.03} : arma::vec{0.1, 0.1};
    arma::mat fit[2];
    double cv[2];
    arma::vec g[2];
    for (int t = 0; t < 2; ++t) {
      BinnedFitOptions bo;
      bo.n_threads = t + 1;
      BinnedLocalPolynomial b(bo);
      b.fit(p->X, p->Y, h);
      fit[t] = b.fitted();
      BinnedCVObjective o(p->X, p->Y.col(0), 1, Kernel(KernelType::gaussian), 0.0, 0, t + 1);
      cv[t] = o(h, &g[t]);
    }
    EXPECT_EQ(arma::abs(fit[0] - fit[1]).max(), 0.0);
    EXPECT_EQ(cv[0], cv[1]);
    EXPECT_EQ(arma::abs(g[0] - g[1]).max(), 0.0);
  }
}

TEST(Binned, BadInputNamesTheArgument) {
  auto msg = [](auto f) {
    try {
      f();
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(msg([] { approximation_from_name("fast"); }).find("approx:"), std::string::npos);
  EXPECT_EQ(approximation_from_name("BINNED"), Approximation::binned);
  using V = std::vector<VarType>;
  const V c1{VarType::continuous}, c3(3, VarType::continuous);
  const V cu{VarType::continuous, VarType::unordered}, uu{VarType::unordered};
  EXPECT_NE(msg([&] { binned_grid_size(c1, 9); }).find("grid_size: must be at least 10"),
            std::string::npos);
  EXPECT_EQ(binned_grid_size(c1, 10), 10);
  EXPECT_EQ(binned_grid_size(c1, 0), kBinnedGrid1D);
  EXPECT_NE(msg([&] { binned_grid_size(c3, 0); }).find("one or two continuous"), std::string::npos);
  EXPECT_NE(msg([&] { binned_grid_size(uu, 0); }).find("categorical columns only"),
            std::string::npos);
  EXPECT_NE(msg([&] { binned_grid_size(cu, 0); }).find("approx=\"exact\""), std::string::npos);
  Data D = binned_data(100, 1, 1);
  BinnedLocalPolynomial b;
  EXPECT_NE(msg([&] { b.fit(D.X, D.Y, arma::vec{-1.0}); }).find("bandwidth:"), std::string::npos);
  arma::mat Xc(100, 1, arma::fill::ones);
  EXPECT_NE(msg([&] { b.fit(Xc, D.Y, arma::vec{0.1}); }).find("constant"), std::string::npos);
  BandwidthSelectOptions so;
  so.approx = Approximation::binned;
  so.method = BandwidthMethod::aic;
  EXPECT_NE(msg([&] { select_bandwidth(D.X, D.Y.col(0), so); }).find("approx:"),
            std::string::npos);
  so.method = BandwidthMethod::cv_ls;
  so.approx_grid_size = 5;
  EXPECT_NE(msg([&] { select_bandwidth(D.X, D.Y.col(0), so); }).find("approx_grid_size:"),
            std::string::npos);
  // A binned fit that does not exist at a query says so (compact kernel, a gap in x).
  arma::mat Xg(40, 1);
  for (std::size_t i = 0; i < 40; ++i) Xg(i, 0) = i < 20 ? i * 0.01 : 0.8 + i * 0.01;
  BinnedFitOptions o;
  o.kernel = Kernel(KernelType::epanechnikov);
  BinnedLocalPolynomial bg(o);
  bg.fit(Xg, arma::mat(40, 1, arma::fill::ones), arma::vec{0.05});
  try {
    bg.predict(arma::mat(1, 1, arma::fill::value(0.6)));
    ADD_FAILURE() << "no error";
  } catch (const NumericalError& e) {
    EXPECT_NE(std::string(e.what()).find("approx=\"exact\""), std::string::npos);
  }
}
