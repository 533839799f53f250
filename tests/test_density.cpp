// Kernel densities, conditional densities / distributions / quantiles (density.hpp) against
// direct float64 oracles written from the formulas (triple loops, no shared code).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "attnreg/density/density.hpp"
#include "attnreg/detail/density_kernels.hpp"
#include "attnreg/base/error.hpp"

using namespace attnreg;

namespace {

constexpr double kPi = 3.14159265358979323846;

// ---- oracle kernels (Gaussian continuous, Aitchison-Aitken, Wang-van Ryzin) ----
double ok_pdf(char t, double q, double x, double h, const std::vector<double>& lv) {
  if (t == 'c') {
    const double u = (q - x) / h;
    return std::exp(-0.5 * u * u) / std::sqrt(2 * kPi) / h;
  }
  if (t == 'u') return q == x ? 1 - h : h / (lv.size() - 1.0);
  return q == x ? 1 - h : 0.5 * (1 - h) * std::pow(h, std::abs(q - x));
}
double ok_conv(char t, double a, double b, double h, const std::vector<double>& lv) {
  if (t == 'c') return std::exp(-(a - b) * (a - b) / (4 * h * h)) / (2 * std::sqrt(kPi) * h);
  double s = 0;
  for (double z : lv) s += ok_pdf(t, z, a, h, lv) * ok_pdf(t, z, b, h, lv);
  return s;
}
double ok_cdf(char t, double y, double x, double h, const std::vector<double>& lv) {
  if (t == 'c') return 0.5 * std::erfc(-(y - x) / h / std::sqrt(2.0));
  double s = 0;
  for (double z : lv)
    if (z <= y) s += ok_pdf(t, z, x, h, lv);
  return s;
}

struct Data {
  arma::mat X, Y;
  std::string tx, ty;
  std::vector<std::vector<double>> lx, ly;  // levels per column
};

std::vector<double> levels_of(const arma::vec& v) {
  arma::vec u = arma::unique(v);
  return std::vector<double>(u.begin(), u.end());
}

Data make_data(std::size_t n, const std::string& tx, const std::string& ty, unsigned seed,
               bool ties) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> N(0, 1);
  std::uniform_int_distribution<int> U3(0, 2), U4(0, 3);
  Data d;
  d.tx = tx;
  d.ty = ty;
  auto fill = [&](const std::string& t, arma::mat& M, std::vector<std::vector<double>>& lv) {
    M.set_size(n, t.size());
    for (std::size_t j = 0; j < t.size(); ++j) {
      for (std::size_t i = 0; i < n; ++i) {
        if (t[j] == 'c') M(i, j) = ties && i % 3 == 1 ? M(i - 1, j) : 2.0 + 1.5 * N(rng);
        else if (t[j] == 'u') M(i, j) = U3(rng);
        else M(i, j) = 1 + U4(rng);
      }
      lv.push_back(levels_of(M.col(j)));
    }
  };
  fill(tx, d.X, d.lx);
  if (!ty.empty()) fill(ty, d.Y, d.ly);
  // y depends on x a little, so conditional objectives have structure.
  for (std::size_t i = 0; i < n && !ty.empty(); ++i)
    if (ty[0] == 'c') d.Y(i, 0) += 0.7 * d.X(i, 0);
  return d;
}

double kx(const Data& d, std::size_t a, std::size_t b, const arma::vec& bw) {
  double p = 1;
  for (std::size_t j = 0; j < d.tx.size(); ++j) p *= ok_pdf(d.tx[j], d.X(a, j), d.X(b, j), bw(j), d.lx[j]);
  return p;
}
double ky(const Data& d, std::size_t a, std::size_t b, const arma::vec& bw) {
  double p = 1;
  const std::size_t dx = d.tx.size();
  for (std::size_t j = 0; j < d.ty.size(); ++j)
    p *= ok_pdf(d.ty[j], d.Y(a, j), d.Y(b, j), bw(dx + j), d.ly[j]);
  return p;
}

double oracle_density_ml(const Data& d, const arma::vec& bw) {
  const std::size_t n = d.X.n_rows;
  double L = 0;
  for (std::size_t i = 0; i < n; ++i) {
    double s = 0;
    for (std::size_t k = 0; k < n; ++k)
      if (k != i) s += kx(d, i, k, bw);
    L -= std::log(s / (n - 1.0));
  }
  return L;
}
double oracle_density_ls(const Data& d, const arma::vec& bw) {
  const double n = static_cast<double>(d.X.n_rows);
  double F = 0, L = 0;
  for (std::size_t i = 0; i < d.X.n_rows; ++i)
    for (std::size_t k = 0; k < d.X.n_rows; ++k) {
      double p = 1;
      for (std::size_t j = 0; j < d.tx.size(); ++j)
        p *= ok_conv(d.tx[j], d.X(i, j), d.X(k, j), bw(j), d.lx[j]);
      F += p;
      if (k != i) L += kx(d, i, k, bw);
    }
  return F / (n * n) - 2 * L / (n * (n - 1));
}
double oracle_cond_ml(const Data& d, const arma::vec& bw) {
  const std::size_t n = d.X.n_rows;
  double L = 0;
  for (std::size_t i = 0; i < n; ++i) {
    double num = 0, den = 0;
    for (std::size_t k = 0; k < n; ++k)
      if (k != i) {
        num += kx(d, i, k, bw) * ky(d, i, k, bw);
        den += kx(d, i, k, bw);
      }
    L -= std::log(num / den);
  }
  return L;
}
double oracle_cond_ls(const Data& d, const arma::vec& bw) {
  const std::size_t n = d.X.n_rows, dx = d.tx.size();
  double cv = 0;
  for (std::size_t l = 0; l < n; ++l) {
    double G = 0, den = 0, f = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (i == l) continue;
      den += kx(d, l, i, bw);
      f += kx(d, l, i, bw) * ky(d, l, i, bw);
      for (std::size_t j = 0; j < n; ++j) {
        if (j == l) continue;
        double kb = 1;
        for (std::size_t c = 0; c < d.ty.size(); ++c)
          kb *= ok_conv(d.ty[c], d.Y(i, c), d.Y(j, c), bw(dx + c), d.ly[c]);
        G += kx(d, l, i, bw) * kx(d, l, j, bw) * kb;
      }
    }
    cv += G / (den * den) - 2 * f / den;
  }
  return cv / n;
}
double oracle_cdf(const Data& d, const arma::vec& bw, std::size_t l, const arma::rowvec& y,
                  bool loo) {
  const std::size_t n = d.X.n_rows, dx = d.tx.size();
  double num = 0, den = 0;
  for (std::size_t k = 0; k < n; ++k) {
    if (loo && k == l) continue;
    double g = 1;
    for (std::size_t c = 0; c < d.ty.size(); ++c) g *= ok_cdf(d.ty[c], y(c), d.Y(k, c), bw(dx + c), d.ly[c]);
    num += kx(d, l, k, bw) * g;
    den += kx(d, l, k, bw);
  }
  return num / den;
}
double oracle_dist_ls(const Data& d, const arma::vec& bw) {
  const std::size_t n = d.X.n_rows;
  double cv = 0;
  for (std::size_t l = 0; l < n; ++l)
    for (std::size_t j = 0; j < n; ++j) {
      bool le = true;
      for (std::size_t c = 0; c < d.ty.size(); ++c) le = le && d.Y(l, c) <= d.Y(j, c);
      const double e = (le ? 1.0 : 0.0) - oracle_cdf(d, bw, l, d.Y.row(j), true);
      cv += e * e;
    }
  return cv / (double(n) * n);
}

arma::vec bw_for(const std::string& types, const std::vector<std::vector<double>>& lv,
                 double hc, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> U(0.05, 0.6);
  arma::vec b(types.size());
  for (std::size_t j = 0; j < types.size(); ++j) {
    if (types[j] == 'c') b(j) = hc * (0.6 + U(rng));
    else b(j) = U(rng) * (types[j] == 'u' ? (lv[j].size() - 1.0) / lv[j].size() : 1.0);
  }
  return b;
}

// Central differences of the objective in theta (log h / lambda).
arma::vec fd_grad(const DensityObjective& obj, const arma::vec& bw, const std::string& types) {
  arma::vec g(bw.n_elem);
  for (std::size_t j = 0; j < bw.n_elem; ++j) {
    const double e = 1e-5;
    arma::vec a = bw, b = bw;
    if (types[j] == 'c') { a(j) *= std::exp(e); b(j) *= std::exp(-e); }
    else { a(j) += e; b(j) -= e; }
    g(j) = (obj(a) - obj(b)) / (2 * e);
  }
  return g;
}

struct Case { std::size_t n; std::string tx, ty; unsigned seed; bool ties; };

const std::vector<Case> kDensityCases = {
    {7, "c", "", 1, false},  {23, "c", "", 2, true},    {40, "cc", "", 3, false},
    {31, "cu", "", 4, true}, {25, "co", "", 5, false},  {36, "cuo", "", 6, true},
};
const std::vector<Case> kCondCases = {
    {9, "c", "c", 11, false}, {24, "c", "c", 12, true},   {30, "o", "c", 13, false},
    {27, "cu", "c", 14, true}, {33, "co", "c", 15, false}, {26, "c", "co", 16, true},
    {28, "u", "o", 17, false},
};

}  // namespace

TEST(Density, EvaluateMatchesOracleAllKinds) {
  for (const Case& cs : kCondCases) {
    Data d = make_data(cs.n, cs.tx, cs.ty, cs.seed, cs.ties);
    std::vector<std::vector<double>> lv = d.lx;
    lv.insert(lv.end(), d.ly.begin(), d.ly.end());
    const arma::vec bw = bw_for(cs.tx + cs.ty, lv, 0.8, cs.seed);
    DensityOptions opt;
    // f(x) at the training rows.
    DensityData dd(DensityKind::density, d.X, cs.tx, arma::mat(), "", opt);
    const arma::vec fx = density_evaluate(dd, bw.head(cs.tx.size()), d.X);
    DensityData cd(DensityKind::conditional_density, d.X, cs.tx, d.Y, cs.ty, opt);
    const arma::vec fyx = density_evaluate(cd, bw, d.X, d.Y);
    DensityData cf(DensityKind::conditional_distribution, d.X, cs.tx, d.Y, cs.ty, opt);
    arma::mat Yq = d.Y;
    Yq.row(0) += 0.37;  // also off the data
    const arma::vec Fyx = density_evaluate(cf, bw, d.X, Yq);
    for (std::size_t i = 0; i < cs.n; ++i) {
      double s = 0, num = 0;
      for (std::size_t k = 0; k < cs.n; ++k) {
        s += kx(d, i, k, bw);
        num += kx(d, i, k, bw) * ky(d, i, k, bw);
      }
      EXPECT_NEAR(fx(i), s / cs.n, 1e-13 * s / cs.n);
      EXPECT_NEAR(fyx(i), num / s, 1e-13 * num / s);
      const double F = oracle_cdf(d, bw, i, Yq.row(i), false);
      EXPECT_NEAR(Fyx(i), F, 1e-14);
    }
  }
}

TEST(Density, DensityObjectivesMatchOracle) {
  for (const Case& cs : kDensityCases) {
    Data d = make_data(cs.n, cs.tx, cs.ty, cs.seed, cs.ties);
    DensityData dd(DensityKind::density, d.X, cs.tx, arma::mat(), "", DensityOptions());
    for (double hc : {0.05, 0.7, 40.0}) {  // tiny, moderate, huge
      const arma::vec bw = bw_for(cs.tx, d.lx, hc, cs.seed + 7);
      DensityObjective ml(dd, DensityMethod::cv_ml), ls(dd, DensityMethod::cv_ls);
      arma::vec g;
      const double vml = ml(bw, &g);
      const double oml = oracle_density_ml(d, bw);
      if (std::isfinite(oml)) {
        EXPECT_NEAR(vml, oml, 1e-11 * std::abs(oml)) << cs.tx << " n=" << cs.n << " h=" << hc;
        const arma::vec fg = fd_grad(ml, bw, cs.tx);
        for (std::size_t j = 0; j < bw.n_elem; ++j)
          EXPECT_NEAR(g(j), fg(j), 1e-5 * (1 + std::abs(fg(j)))) << cs.tx << " col " << j;
      }
      const double vls = ls(bw, &g);
      const double ols = oracle_density_ls(d, bw);
      EXPECT_NEAR(vls, ols, 1e-11 * std::abs(ols)) << cs.tx << " n=" << cs.n << " h=" << hc;
      const arma::vec fg = fd_grad(ls, bw, cs.tx);
      for (std::size_t j = 0; j < bw.n_elem; ++j)
        EXPECT_NEAR(g(j), fg(j), 1e-6 * (std::abs(ols) + std::abs(fg(j)))) << cs.tx << " col " << j;
    }
  }
}

TEST(Density, ConditionalObjectivesMatchOracle) {
  for (const Case& cs : kCondCases) {
    Data d = make_data(cs.n, cs.tx, cs.ty, cs.seed, cs.ties);
    std::vector<std::vector<double>> lv = d.lx;
    lv.insert(lv.end(), d.ly.begin(), d.ly.end());
    const std::string t = cs.tx + cs.ty;
    DensityData cd(DensityKind::conditional_density, d.X, cs.tx, d.Y, cs.ty, DensityOptions());
    DensityData cf(DensityKind::conditional_distribution, d.X, cs.tx, d.Y, cs.ty, DensityOptions());
    for (double hc : {0.08, 0.9, 30.0}) {
      const arma::vec bw = bw_for(t, lv, hc, cs.seed + 3);
      DensityObjective ml(cd, DensityMethod::cv_ml), ls(cd, DensityMethod::cv_ls),
          dl(cf, DensityMethod::cv_ls);
      arma::vec g;
      const double oml = oracle_cond_ml(d, bw);
      if (std::isfinite(oml)) {
        EXPECT_NEAR(ml(bw, &g), oml, 1e-11 * std::abs(oml)) << t << " h=" << hc;
        const arma::vec fg = fd_grad(ml, bw, t);
        for (std::size_t j = 0; j < bw.n_elem; ++j)
          EXPECT_NEAR(g(j), fg(j), 1e-5 * (1 + std::abs(fg(j)))) << t << " col " << j;
      }
      const double ols = oracle_cond_ls(d, bw);
      if (std::isfinite(ols)) {
        EXPECT_NEAR(ls(bw, &g), ols, 1e-10 * std::abs(ols)) << t << " h=" << hc;
        const arma::vec fg = fd_grad(ls, bw, t);
        for (std::size_t j = 0; j < bw.n_elem; ++j)
          EXPECT_NEAR(g(j), fg(j), 1e-5 * (std::abs(ols) + std::abs(fg(j)))) << t << " col " << j << " h=" << hc << " bw " << bw.t();
      }
      const double odl = oracle_dist_ls(d, bw);
      EXPECT_NEAR(dl(bw, &g), odl, 1e-10 * std::abs(odl) + 1e-15) << t << " h=" << hc;
      const arma::vec fg = fd_grad(dl, bw, t);
      for (std::size_t j = 0; j < bw.n_elem; ++j)
        EXPECT_NEAR(g(j), fg(j), 1e-5 * (std::abs(odl) + std::abs(fg(j)))) << t << " col " << j << " h=" << hc << " val " << odl;
    }
  }
}

TEST(Density, KernelPiecesMatchNumericalIntegrals) {
  // G = int K, Kbar = K * K and Kbar' by a fine midpoint rule, for every kernel.
  for (const std::string& name : Kernel::names()) {
    const Kernel k = Kernel::from_name(name);
    // Second-order kernels; gaussian4's pieces: test_kernel_gaussian4.cpp (its larger K(0) puts
    // the midpoint rule's step error at the indicator above this tolerance).
    if (k.order() != 2) continue;
    const double lim = k.compact() ? 1.0 : 12.0;
    const int M = 200000;
    const double du = 2 * lim / M;
    for (double u : {-1.7, -0.6, -0.2, 0.0, 0.3, 0.95, 1.4}) {
      double G = 0;
      for (int i = 0; i < M; ++i) {
        const double s = -lim + (i + 0.5) * du;
        if (s <= u) G += k(s) * du;
      }
      EXPECT_NEAR(density_detail::kcdf(k, u), G, 2e-5) << name << " u=" << u;
    }
    for (double t : {0.0, 0.13, -0.5, 0.77, 1.3, -1.9, 2.5}) {
      double C = 0, Cp = 0, Cm = 0;
      const double e = 1e-4;
      for (int i = 0; i < M; ++i) {
        const double s = -lim + (i + 0.5) * du;
        C += k(s) * k(s + t) * du;
        Cp += k(s) * k(s + t + e) * du;
        Cm += k(s) * k(s + t - e) * du;
      }
      double dv = 0;
      EXPECT_NEAR(density_detail::kconv(k, t, &dv), C, 2e-6) << name << " t=" << t;
      if (t != 0.0 || k.type != KernelType::triangular) {
        EXPECT_NEAR(dv, (Cp - Cm) / (2 * e), 2e-3) << name << " t=" << t;
      }
      // Kernel derivative K'(u) against central differences.
      const double h = 1e-6;
      if (std::abs(std::abs(t) - 1) > 1e-3 && t != 0.0) {
        EXPECT_NEAR(density_detail::kderiv(k, t), (k(t + h) - k(t - h)) / (2 * h), 1e-5)
            << name << " t=" << t;
      }
    }
  }
}

TEST(Density, CompactKernelObjectivesMatchOracle) {
  // Epanechnikov / biweight / cosine: cv_ls uses the kernel's own convolution (oracle by
  // numerical integration per pair), cv_ml the leave-one-out density.
  Data d = make_data(21, "c", "", 41, true);
  for (const char* name : {"epanechnikov", "biweight", "cosine", "triangular"}) {
    DensityOptions opt;
    opt.kernel = Kernel::from_name(name);
    DensityData dd(DensityKind::density, d.X, "c", arma::mat(), "", opt);
    const arma::vec bw{2.5};
    const double n = 21;
    double F = 0, L = 0, ML = 0;
    for (std::size_t i = 0; i < 21; ++i) {
      double s = 0;
      for (std::size_t j = 0; j < 21; ++j) {
        const double t = (d.X(i, 0) - d.X(j, 0)) / bw(0);
        double c = 0;
        const int M = 20000;
        for (int q = 0; q < M; ++q) {
          const double z = -1 + (q + 0.5) * 2.0 / M;
          c += opt.kernel(z) * opt.kernel(z + t) * 2.0 / M;
        }
        F += c / bw(0);
        if (j != i) s += opt.kernel(t) / bw(0);
      }
      L += s;
      ML -= std::log(s / (n - 1));
    }
    DensityObjective ls(dd, DensityMethod::cv_ls), ml(dd, DensityMethod::cv_ml);
    EXPECT_NEAR(ls(bw), F / (n * n) - 2 * L / (n * (n - 1)), 1e-8) << name;
    EXPECT_NEAR(ml(bw), ML, 1e-11 * std::abs(ML)) << name;
  }
}

TEST(Density, IntegratesToOne) {
  // 1-D, every kernel; 2-D continuous x unordered (sum over levels of the integral).
  Data d = make_data(30, "cu", "", 51, true);
  for (const std::string& name : Kernel::names()) {
    DensityOptions opt;
    opt.kernel = Kernel::from_name(name);
    DensityData dd(DensityKind::density, arma::mat(d.X.col(0)), "c", arma::mat(), "", opt);
    const double h = 0.6;
    const double lo = d.X.col(0).min() - 15 * h, hi = d.X.col(0).max() + 15 * h;
    const int M = 60001;
    arma::mat grid(M, 1);
    for (int i = 0; i < M; ++i) grid(i, 0) = lo + (hi - lo) * i / (M - 1.0);
    const arma::vec f = density_evaluate(dd, arma::vec{h}, grid);
    const double I = arma::accu(f) * (hi - lo) / (M - 1.0);
    // The trapezoid rule's error is O(step^2) for continuous kernels, O(step) at the uniform
    // kernel's jumps (60 jumps of height 1/(2 n h), step 5e-4).
    EXPECT_NEAR(I, 1.0, opt.kernel.type == KernelType::uniform ? 5e-5 : 1e-6) << name;
  }
  DensityData dd(DensityKind::density, d.X, "cu", arma::mat(), "", DensityOptions());
  const arma::vec bw{0.5, 0.3};
  double I = 0;
  const int M = 4001;
  const double lo = d.X.col(0).min() - 8, hi = d.X.col(0).max() + 8;
  for (double lvl : d.lx[1]) {
    arma::mat grid(M, 2);
    for (int i = 0; i < M; ++i) { grid(i, 0) = lo + (hi - lo) * i / (M - 1.0); grid(i, 1) = lvl; }
    I += arma::accu(density_evaluate(dd, bw, grid)) * (hi - lo) / (M - 1.0);
  }
  EXPECT_NEAR(I, 1.0, 1e-9);
  // 2-D continuous on a grid; conditional density integrates to one in y.
  Data c = make_data(25, "cc", "", 52, false);
  DensityData d2(DensityKind::density, c.X, "cc", arma::mat(), "", DensityOptions());
  const int Q = 501;
  const double a0 = c.X.col(0).min() - 6, a1 = c.X.col(0).max() + 6;
  const double b0 = c.X.col(1).min() - 6, b1 = c.X.col(1).max() + 6;
  arma::mat g2(Q * Q, 2);
  for (int i = 0; i < Q; ++i)
    for (int j = 0; j < Q; ++j) {
      g2(i * Q + j, 0) = a0 + (a1 - a0) * i / (Q - 1.0);
      g2(i * Q + j, 1) = b0 + (b1 - b0) * j / (Q - 1.0);
    }
  const double I2 = arma::accu(density_evaluate(d2, arma::vec{0.7, 0.9}, g2)) * (a1 - a0) *
                    (b1 - b0) / ((Q - 1.0) * (Q - 1.0));
  EXPECT_NEAR(I2, 1.0, 1e-6);
  DensityData cd(DensityKind::conditional_density, arma::mat(c.X.col(0)), "c",
                 arma::mat(c.X.col(1)), "c", DensityOptions());
  arma::mat xq(Q, 1, arma::fill::value(0.4)), yq(Q, 1);
  for (int j = 0; j < Q; ++j) yq(j, 0) = b0 + (b1 - b0) * j / (Q - 1.0);
  const double Iy = arma::accu(density_evaluate(cd, arma::vec{0.7, 0.9}, xq, yq)) * (b1 - b0) / (Q - 1.0);
  EXPECT_NEAR(Iy, 1.0, 1e-6);
}

TEST(Density, CdfMonotoneBoundedAndQuantileInverts) {
  for (const char* name : {"gaussian", "epanechnikov"}) {
    DensityOptions opt;
    opt.kernel = Kernel::from_name(name);
    Data d = make_data(40, "co", "c", 61, true);
    DensityData cf(DensityKind::conditional_distribution, d.X, "co", d.Y, "c", opt);
    const arma::vec bw{1.2, 0.4, 0.8};
    const int M = 400;
    for (std::size_t i : {0u, 5u, 17u}) {
      arma::mat xq(M, 2), yq(M, 1);
      for (int k = 0; k < M; ++k) {
        xq.row(k) = d.X.row(i);
        yq(k, 0) = -15 + 30.0 * k / (M - 1.0);
      }
      const arma::vec F = density_evaluate(cf, bw, xq, yq);
      for (int k = 0; k < M; ++k) {
        EXPECT_GE(F(k), 0.0);
        EXPECT_LE(F(k), 1.0);
        if (k) {
          EXPECT_GE(F(k), F(k - 1));
        }
      }
      EXPECT_NEAR(F(0), 0.0, 1e-12);
      EXPECT_NEAR(F(M - 1), 1.0, 1e-12);
      for (double tau : {0.01, 0.25, 0.5, 0.9, 0.999}) {
        const arma::vec q = conditional_quantile(cf, bw, arma::mat(d.X.row(i)), arma::vec{tau});
        const arma::vec Fq = density_evaluate(cf, bw, arma::mat(d.X.row(i)), arma::mat{q(0)});
        EXPECT_GE(Fq(0), tau);
        const double eps = 1e-9 * std::max(1.0, std::abs(q(0)));
        const arma::vec Fm =
            density_evaluate(cf, bw, arma::mat(d.X.row(i)), arma::mat{q(0) - eps});
        EXPECT_LT(Fm(0), tau) << name << " tau " << tau;
      }
    }
  }
}

TEST(Density, SameResultsForAnyThreadCount) {
  Data d = make_data(300, "co", "c", 71, true);
  for (DensityKind kind : {DensityKind::density, DensityKind::conditional_density,
                           DensityKind::conditional_distribution}) {
    std::vector<double> vals;
    for (int th : {1, 2, 3}) {
      DensityOptions opt;
      opt.n_threads = th;
      const bool cond = kind != DensityKind::density;
      DensityData dd(kind, d.X, "co", cond ? d.Y : arma::mat(), cond ? "c" : "", opt);
      const arma::vec bw = cond ? arma::vec{0.9, 0.3, 0.7} : arma::vec{0.9, 0.3};
      DensityObjective ls(dd, DensityMethod::cv_ls);
      arma::vec g;
      vals.push_back(ls(bw, &g));
      vals.insert(vals.end(), g.begin(), g.end());
      if (kind != DensityKind::conditional_distribution) {
        DensityObjective ml(dd, DensityMethod::cv_ml);
        vals.push_back(ml(bw, &g));
        vals.insert(vals.end(), g.begin(), g.end());
      }
      const arma::vec e = density_evaluate(dd, bw, d.X, cond ? d.Y : arma::mat());
      vals.insert(vals.end(), e.begin(), e.end());
    }
    const std::size_t k = vals.size() / 3;
    for (std::size_t i = 0; i < k; ++i) {
      EXPECT_EQ(vals[i], vals[k + i]);
      EXPECT_EQ(vals[i], vals[2 * k + i]);
    }
  }
}

// The one-column Gaussian density objectives (each pair of distinct values evaluated once) and
// the conditional distribution objective with one continuous y (sorted y, bands of the
// Gaussian CDF) against the oracles, with ties, and at tiny, moderate and huge bandwidths.
TEST(Density, FastPathsMatchOracle) {
  for (unsigned seed : {101u, 102u, 103u}) {
    for (bool ties : {false, true}) {
      // 1-D density: value and analytic gradient (d/dlog h of the pair terms: K (u^2 - 1) for
      // the density, Kbar (u^2 / 2 - 1) for the convolution).
      Data d = make_data(ties ? 180 : 130, "c", "", seed, ties);
      if (ties)  // heavier ties: one decimal
        for (double& v : d.X) v = std::round(v * 10.0) / 10.0;
      d.lx = {levels_of(d.X.col(0))};
      const double n = static_cast<double>(d.X.n_rows);
      DensityData dd(DensityKind::density, d.X, "c", arma::mat(), "", DensityOptions());
      DensityObjective ml(dd, DensityMethod::cv_ml), ls(dd, DensityMethod::cv_ls);
      for (double h : {1e-3, 0.02, 0.4, 3.0, 500.0}) {
        const arma::vec bw{h};
        double L = 0, gL = 0, F = 0, gF = 0, S2 = 0, gS2 = 0;
        for (std::size_t i = 0; i < d.X.n_rows; ++i) {
          double s = 0, ds = 0;
          for (std::size_t k = 0; k < d.X.n_rows; ++k) {
            const double u = (d.X(i, 0) - d.X(k, 0)) / h;
            const double K = std::exp(-0.5 * u * u) / std::sqrt(2 * kPi) / h;
            const double C = std::exp(-0.25 * u * u) / (2 * std::sqrt(kPi) * h);
            F += C;
            gF += C * (0.5 * u * u - 1);
            if (k == i) continue;
            s += K;
            ds += K * (u * u - 1);
          }
          L -= std::log(s / (n - 1));
          gL -= ds / s;
          S2 += s;
          gS2 += ds;
        }
        arma::vec g;
        if (std::isfinite(L)) {
          EXPECT_NEAR(ml(bw, &g), L, 1e-12 * std::abs(L)) << seed << ties << " h=" << h;
          EXPECT_NEAR(g(0), gL, 1e-10 * (std::abs(gL) + n)) << seed << ties << " h=" << h;
        } else {
          EXPECT_EQ(ml(bw), std::numeric_limits<double>::infinity()) << seed << ties << " h=" << h;
        }
        const double LS = F / (n * n) - 2 * S2 / (n * (n - 1));
        const double gLS = gF / (n * n) - 2 * gS2 / (n * (n - 1));
        EXPECT_NEAR(ls(bw, &g), LS, 1e-12 * std::abs(LS)) << seed << ties << " h=" << h;
        EXPECT_NEAR(g(0), gLS, 1e-11 * (std::abs(gLS) + F / (n * n))) << seed << ties << " h=" << h;
      }
      // Conditional distribution, one continuous y, x ordered / continuous / unordered.
      for (const std::string tx : {"o", "c", "u", "co"}) {
        Data c = make_data(ties ? 70 : 55, tx, "c", seed + 10, ties);
        std::vector<std::vector<double>> lv = c.lx;
        lv.insert(lv.end(), c.ly.begin(), c.ly.end());
        DensityData cf(DensityKind::conditional_distribution, c.X, tx, c.Y, "c", DensityOptions());
        DensityObjective dl(cf, DensityMethod::cv_ls);
        for (double hy : {1e-4, 0.05, 0.6, 4.0, 800.0}) {
          arma::vec bw = bw_for(tx + "c", lv, 0.9, seed);
          bw(tx.size()) = hy;
          const double o = oracle_dist_ls(c, bw);
          arma::vec g;
          EXPECT_NEAR(dl(bw, &g), o, 1e-12 * std::abs(o) + 1e-15) << tx << ties << " hy=" << hy;
          const arma::vec fg = fd_grad(dl, bw, tx + "c");
          for (std::size_t j = 0; j < bw.n_elem; ++j)
            EXPECT_NEAR(g(j), fg(j), 1e-5 * (std::abs(o) + std::abs(fg(j)))) << tx << " col " << j;
        }
      }
    }
  }
}

// The tabulated Gaussian CDF of the distribution objective's bands against kcdf's
// 0.5 erfc(-a / sqrt 2): on the nodes a = -j / 256, half-way between them (the largest Taylor
// step), at random points, and at the ends 0 and -8.5; with and without the derivative.
TEST(Density, TabulatedGaussianCdfMatchesErfc) {
  std::vector<double> a;
  for (int j = 0; j <= 2176; ++j) {
    a.push_back(-j / 256.0);
    if (j < 2176) a.push_back(-(j + 0.5) / 256.0);
  }
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> U(-8.5, 0.0);
  for (int i = 0; i < 20000; ++i) a.push_back(U(rng));
  a.push_back(-8.5);
  a.push_back(-0.0);
  const Kernel K(KernelType::gaussian);
  for (double scale : {1.0, 0.37}) {  // y = a * h with ih = 1 / h
    std::vector<double> y(a.size()), G(a.size()), dG(a.size()), G2(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) y[i] = a[i] * scale;
    density_detail::gauss_cdf_band(y.data(), y.size(), 0.0, 1.0 / scale, true, G.data(), dG.data());
    density_detail::gauss_cdf_band(y.data(), y.size(), 0.0, 1.0 / scale, false, G2.data(), nullptr);
    for (std::size_t i = 0; i < a.size(); ++i) {
      const double u = (y[i] - 0.0) * (1.0 / scale);
      const double ref = density_detail::kcdf(K, u);
      EXPECT_NEAR(G[i], ref, 1.5e-16 + 3e-14 * ref) << "a = " << u;
      EXPECT_EQ(G[i], G2[i]);
      const double dref = -u * std::exp(-0.5 * u * u) / std::sqrt(2 * kPi);
      EXPECT_NEAR(dG[i], dref, 1e-15 * std::abs(dref) + 1e-300) << "a = " << u;
    }
  }
}

// The one-continuous-y distribution path with a compact kernel (no band: every pair of
// distinct y values evaluated) against a direct Epanechnikov oracle, x ordered or continuous.
TEST(Density, CompactKernelDistributionMatchesOracle) {
  auto epan = [](double u) { return std::abs(u) < 1 ? 0.75 * (1 - u * u) : 0.0; };
  auto epan_cdf = [](double u) {
    return u <= -1 ? 0.0 : (u >= 1 ? 1.0 : 0.5 + 0.75 * (u - u * u * u / 3));
  };
  for (const std::string tx : {"o", "c"}) {
    for (bool ties : {false, true}) {
      Data d = make_data(45, tx, "c", 121, ties);
      DensityOptions opt;
      opt.kernel = Kernel(KernelType::epanechnikov);
      DensityData cf(DensityKind::conditional_distribution, d.X, tx, d.Y, "c", opt);
      DensityObjective dl(cf, DensityMethod::cv_ls);
      for (double hy : {0.05, 0.8, 30.0}) {
        const arma::vec bw{tx == "o" ? 0.4 : 6.0, hy};
        auto kx_e = [&](std::size_t a, std::size_t b) {
          if (tx == "o") return ok_pdf('o', d.X(a, 0), d.X(b, 0), bw(0), d.lx[0]);
          return epan((d.X(a, 0) - d.X(b, 0)) / bw(0)) / bw(0);
        };
        const std::size_t n = d.X.n_rows;
        double cv = 0;
        for (std::size_t l = 0; l < n; ++l)
          for (std::size_t j = 0; j < n; ++j) {
            double num = 0, den = 0;
            for (std::size_t k = 0; k < n; ++k) {
              if (k == l) continue;
              num += kx_e(l, k) * epan_cdf((d.Y(j, 0) - d.Y(k, 0)) / hy);
              den += kx_e(l, k);
            }
            const double e = (d.Y(l, 0) <= d.Y(j, 0) ? 1.0 : 0.0) - num / den;
            cv += e * e;
          }
        cv /= double(n) * n;
        arma::vec g;
        EXPECT_NEAR(dl(bw, &g), cv, 1e-12 * cv) << tx << ties << " hy=" << hy;
        const arma::vec fg = fd_grad(dl, bw, tx + "c");
        for (std::size_t j = 0; j < 2; ++j)
          EXPECT_NEAR(g(j), fg(j), 1e-5 * (cv + std::abs(fg(j)))) << tx << " col " << j;
      }
    }
  }
}

TEST(Density, FastPathsSameResultsForAnyThreadCount) {
  Data d = make_data(400, "o", "c", 111, true);
  std::vector<double> vals[3];
  for (int k = 0; k < 3; ++k) {
    DensityOptions opt;
    opt.n_threads = k + 1;
    arma::vec g;
    DensityData dd(DensityKind::density, d.Y, "c", arma::mat(), "", opt);
    for (DensityMethod m : {DensityMethod::cv_ml, DensityMethod::cv_ls}) {
      DensityObjective obj(dd, m);
      vals[k].push_back(obj(arma::vec{0.3}, &g));
      vals[k].push_back(g(0));
    }
    DensityData cf(DensityKind::conditional_distribution, d.X, "o", d.Y, "c", opt);
    DensityObjective dl(cf, DensityMethod::cv_ls);
    vals[k].push_back(dl(arma::vec{0.4, 0.5}, &g));
    vals[k].insert(vals[k].end(), g.begin(), g.end());
  }
  for (std::size_t i = 0; i < vals[0].size(); ++i) {
    EXPECT_EQ(vals[0][i], vals[1][i]) << i;
    EXPECT_EQ(vals[0][i], vals[2][i]) << i;
  }
}

TEST(Density, SelectionFindsTheMinimum) {
  Data d = make_data(60, "co", "c", 81, false);
  for (DensityKind kind : {DensityKind::density, DensityKind::conditional_density,
                           DensityKind::conditional_distribution}) {
    for (DensityMethod m : {DensityMethod::cv_ml, DensityMethod::cv_ls}) {
      if (kind == DensityKind::conditional_distribution && m == DensityMethod::cv_ml) continue;
      const bool cond = kind != DensityKind::density;
      DensityData dd(kind, d.X, "co", cond ? d.Y : arma::mat(), cond ? "c" : "", DensityOptions());
      const DensityBandwidthResult r = select_density_bandwidth(dd, m);
      DensityObjective obj(dd, m);
      EXPECT_NEAR(obj(r.bandwidth), r.objective, 1e-12 * std::abs(r.objective));
      // No better point nearby (interior columns: +-2% in h, +-0.01 in lambda).
      for (std::size_t j = 0; j < r.bandwidth.n_elem; ++j)
        for (double s : {-1.0, 1.0}) {
          arma::vec b = r.bandwidth;
          if (dd.types()[j] == VarType::continuous) b(j) *= 1 + 0.02 * s;
          else b(j) = std::min(std::max(b(j) + 0.01 * s, 0.0), obj.upper()(j));
          EXPECT_GE(obj(b), r.objective - 1e-12 * std::abs(r.objective));
        }
    }
  }
}

// Tied data: the leave-one-out density at a tied point grows without bound as h -> 0, so the
// cross-validation criteria can fall all the way to the box floor (whether the search gets
// there or stops in a local minimum depends on the sample). A result at an end of the box must
// say so (at_bound, message) and must not claim convergence; a smooth sample ends inside.
TEST(Density, SelectionAtTheBoxEndIsNotConverged) {
  int at_floor = 0;
  auto check = [&](const DensityBandwidthResult& r, const std::string& what) {
    ASSERT_EQ(r.at_bound.size(), r.bandwidth.n_elem) << what;
    for (std::size_t j = 0; j < r.bandwidth.n_elem; ++j) {
      const bool lo = r.bandwidth(j) <= r.lower(j) * (1 + 1e-6);
      const bool hi = r.bandwidth(j) >= r.upper(j) * (1 - 1e-6);
      EXPECT_EQ(r.at_bound[j], lo ? -1 : hi ? 1 : 0) << what << " column " << j;
      if (lo || hi) {
        EXPECT_FALSE(r.converged) << what;
        EXPECT_NE(r.message.find(lo ? "lower end of the search box" : "upper end"),
                  std::string::npos) << r.message;
      }
      at_floor += lo;
    }
  };
  for (unsigned seed : {1u, 2u, 3u}) {
    arma::arma_rng::set_seed(seed);
    const arma::mat rounded = arma::round(3.0 * arma::randn(120, 1)) / 3.0;  // ~15 values
    const arma::mat pairs = arma::repmat(arma::randn(60, 1), 2, 1);          // each one twice
    const arma::mat smooth = arma::randn(120, 1);
    for (DensityMethod m : {DensityMethod::cv_ls, DensityMethod::cv_ml}) {
      for (const arma::mat* x : {&rounded, &pairs})
        check(select_density_bandwidth(
                  DensityData(DensityKind::density, *x, "c", arma::mat(), "", DensityOptions()), m),
              "density seed " + std::to_string(seed));
      const DensityBandwidthResult s = select_density_bandwidth(
          DensityData(DensityKind::density, smooth, "c", arma::mat(), "", DensityOptions()), m);
      EXPECT_EQ(s.at_bound[0], 0) << seed;
      EXPECT_GT(s.bandwidth(0), s.lower(0) * 1.01);
    }
    check(select_density_bandwidth(
              DensityData(DensityKind::conditional_density, smooth, "c", pairs, "c",
                          DensityOptions()), DensityMethod::cv_ls),
          "conditional density seed " + std::to_string(seed));
  }
  EXPECT_GT(at_floor, 0);  // the family above reaches the floor at least once
}

TEST(Density, BadInputNamesTheArgument) {
  Data d = make_data(20, "co", "c", 91, false);
  DensityData cf(DensityKind::conditional_distribution, d.X, "co", d.Y, "c", DensityOptions());
  auto msg = [](auto f) {
    try { f(); } catch (const InvalidArgument& e) { return std::string(e.what()); }
    return std::string("no error");
  };
  const arma::vec bw{1.0, 0.3, 1.0};
  for (double tau : {0.0, 1.0, -0.2, 1.5, std::nan("")})
    EXPECT_EQ(msg([&] { conditional_quantile(cf, bw, d.X, arma::vec{tau}); }).rfind("tau:", 0), 0u);
  DensityData cat(DensityKind::density, arma::mat(d.X.col(1)), "o", arma::mat(), "", DensityOptions());
  EXPECT_NE(msg([&] { select_density_bandwidth(cat, DensityMethod::normal_reference); })
                .find("normal_reference needs at least one continuous column"),
            std::string::npos);
  arma::mat Xn = d.X;
  Xn(3, 0) = std::nan("");
  EXPECT_EQ(msg([&] { DensityData(DensityKind::density, Xn, "co", arma::mat(), "", DensityOptions()); })
                .rfind("X:", 0), 0u);
  arma::mat Yn = d.Y;
  Yn(2, 0) = std::nan("");
  EXPECT_EQ(msg([&] { DensityData(DensityKind::conditional_density, d.X, "co", Yn, "c", DensityOptions()); })
                .rfind("y:", 0), 0u);
  EXPECT_EQ(msg([&] { density_evaluate(cf, bw, Xn, d.Y); }).rfind("X_new:", 0), 0u);
  EXPECT_EQ(msg([&] { density_evaluate(cf, arma::vec{1.0, 0.3}, d.X, d.Y); }).rfind("bandwidth:", 0), 0u);
  EXPECT_EQ(msg([&] { density_evaluate(cf, arma::vec{-1.0, 0.3, 1.0}, d.X, d.Y); }).rfind("bandwidth[1]", 0), 0u);
  EXPECT_EQ(msg([&] { density_evaluate(cf, arma::vec{1.0, 1.3, 1.0}, d.X, d.Y); }).rfind("bandwidth[2]", 0), 0u);
  EXPECT_EQ(msg([&] { DensityObjective(cf, DensityMethod::cv_ml); }).rfind("bandwidth:", 0), 0u);
  DensityOptions lr;
  lr.ordered = CategoricalKernel(CategoricalKernelType::li_racine_ordered);
  EXPECT_EQ(msg([&] { DensityData(DensityKind::density, d.X, "co", arma::mat(), "", lr); })
                .rfind("ordered_kernel:", 0), 0u);
  // y's ordered columns take ordered_y, which must sum to one; li_racine on X's ordered column
  // (R np's oxkertype default) goes with a Wang-van Ryzin ordered y
  DensityOptions lry;
  lry.ordered_y = CategoricalKernel(CategoricalKernelType::li_racine_ordered);
  const arma::mat yo = d.X.col(1);
  EXPECT_EQ(msg([&] { DensityData(DensityKind::conditional_density, d.X, "co", yo, "o", lry); })
                .rfind("y_ordered_kernel:", 0), 0u);
  EXPECT_NO_THROW(DensityData(DensityKind::conditional_distribution, d.X, "co", yo, "o", lr));
  // the plain Li-Racine kernel on a density's own ordered column names the normalised one
  EXPECT_NE(msg([&] { DensityData(DensityKind::density, d.X, "co", arma::mat(), "", lr); })
                .find("use li_racine_normalized"),
            std::string::npos);
  DensityOptions nl;
  nl.ordered = CategoricalKernel(CategoricalKernelType::li_racine_normalized);
  nl.ordered_y = nl.ordered;
  EXPECT_NO_THROW(DensityData(DensityKind::density, d.X, "co", arma::mat(), "", nl));
  EXPECT_NO_THROW(DensityData(DensityKind::conditional_density, d.X, "co", yo, "o", nl));
  EXPECT_EQ(msg([&] { DensityData(DensityKind::conditional_distribution, d.X, "co",
                                  arma::mat(d.X.col(1)), "u", DensityOptions()); })
                .rfind("y_types:", 0), 0u);
}

// The normalised Li-Racine kernel on a density's own ordered column: a probability mass
// function on all the integers. Direct sums: the density at codes between, below and above the
// levels (never seen in training), and F(y | x) of an ordered y summed over all integers
// z <= y (to 1 above the data), against a brute-force sum over [-400, 400] (the rest is below
// 0.6^400). Ratios of sums of a few positive terms: 1e-13 relative.
TEST(Density, NormalisedLiRacineIsAMassFunctionOnTheIntegers) {
  const arma::mat X(arma::vec{0.0, 1.0, 1.0, 4.0, 7.0, 7.0, 7.0});
  const double lam = 0.6;
  const CategoricalKernel k(CategoricalKernelType::li_racine_normalized);
  DensityOptions opt;
  opt.ordered = k;
  opt.ordered_y = k;
  const DensityData dd(DensityKind::density, X, "o", arma::mat(), "", opt);
  const arma::mat Q = arma::regspace(-3.0, 10.0);
  const arma::vec f = density_evaluate(dd, arma::vec{lam}, Q);
  double total = 0.0;
  for (std::size_t q = 0; q < Q.n_rows; ++q) {
    double ref = 0.0;
    for (double xi : X) ref += k(Q(q, 0), xi, lam, 0) / X.n_rows;
    EXPECT_NEAR(f(q), ref, 1e-13 * ref) << Q(q, 0);
  }
  const arma::vec all = density_evaluate(dd, arma::vec{lam}, arma::mat(arma::regspace(-400.0, 400.0)));
  for (double v : all) total += v;
  EXPECT_NEAR(total, 1.0, 1e-13);
  // conditional distribution of an ordered y given an unordered x
  const arma::mat Xc(arma::vec{0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0});
  const DensityData cf(DensityKind::conditional_distribution, Xc, "u", X, "o", opt);
  const arma::vec bw{0.2, lam};
  const arma::mat Xq(6, 1, arma::fill::zeros);
  const arma::mat Yq(arma::vec{-2.0, 0.5, 2.0, 5.9, 7.0, 1e3});
  const arma::vec F = density_evaluate(cf, bw, Xq, Yq);
  for (std::size_t q = 0; q < Yq.n_rows; ++q) {
    double num = 0.0, den = 0.0;
    for (std::size_t i = 0; i < X.n_rows; ++i) {
      const double w = Xc(i, 0) == 0.0 ? 0.8 : 0.2;  // aitchison_aitken, 2 levels
      double G = 0.0;
      for (int z = -400; z <= std::floor(std::min(Yq(q, 0), 400.0)); ++z) G += k(z, X(i, 0), lam, 0);
      num += w * G;
      den += w;
    }
    EXPECT_NEAR(F(q), num / den, 1e-13) << Yq(q, 0);
  }
  EXPECT_NEAR(F(5), 1.0, 1e-15);
}
