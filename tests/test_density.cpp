// Kernel densities, conditional densities / distributions / quantiles (density.hpp) against
// direct float64 oracles written from the formulas (triple loops, no shared code).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "attnreg/density.hpp"
#include "attnreg/detail/density_kernels.hpp"
#include "attnreg/error.hpp"

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
