// Tests of local constant / local linear / local polynomial regression (LocalPolynomial)
// against a direct float64 oracle and the identities of core/README.md ("Conventions").
#include <gtest/gtest.h>

#include <armadillo>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "attnreg/bandwidth/bandwidth_select.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/kernels/kernel.hpp"
#include "attnreg/solve/local_fit.hpp"

using namespace attnreg;

namespace {

const double kPi = 3.14159265358979323846;

// ---------------------------------------------------------------- the oracle
// A few-line weighted least squares at each query, in data units, straight from the definition (core/README.md, "Conventions"):
// minimise sum_i w_i (y_i - a - b'z_i)^2 + lambda * omega * ||b||^2 with normalised kernel
// densities, Aitchison-Aitken (unordered) and Li-Racine (ordered) categorical kernels.
double kdens(const std::string& name, double u) {
  const double a = std::fabs(u);
  if (name == "gaussian") return std::exp(-0.5 * u * u) / std::sqrt(2.0 * kPi);
  if (a > 1.0) return 0.0;
  if (name == "epanechnikov") return 0.75 * (1.0 - u * u);
  if (name == "uniform") return 0.5;
  if (name == "triangular") return 1.0 - a;
  if (name == "biweight") return 15.0 / 16.0 * std::pow(1.0 - u * u, 2);
  if (name == "triweight") return 35.0 / 32.0 * std::pow(1.0 - u * u, 3);
  if (name == "tricube") return 70.0 / 81.0 * std::pow(1.0 - a * a * a, 3);
  if (name == "cosine") return kPi / 4.0 * std::cos(kPi * u / 2.0);
  throw std::runtime_error(name);
}

struct Oracle {
  arma::mat X, Y;
  arma::vec h, sw;
  std::string types;  // per column c/u/o
  std::string kernel = "gaussian";
  int degree = 1;
  double ridge = 0.0;

  arma::vec weights(const arma::rowvec& x) const {
    const arma::uword n = X.n_rows;
    arma::vec w(n);
    for (arma::uword i = 0; i < n; ++i) {
      double v = sw.is_empty() ? 1.0 : sw(i);
      for (arma::uword j = 0; j < X.n_cols; ++j) {
        const char t = types.empty() ? 'c' : types[j];
        if (t == 'c') {
          v *= kdens(kernel, (X(i, j) - x(j)) / h(j)) / h(j);
        } else if (t == 'u') {
          const double c = static_cast<double>(arma::vec(arma::unique(X.col(j))).n_elem);
          v *= X(i, j) == x(j) ? 1.0 - h(j) : h(j) / (c - 1.0);
        } else {
          v *= std::pow(h(j), std::fabs(X(i, j) - x(j)));
        }
      }
      w(i) = v;
    }
    return w;
  }
  // Design rows [1, z_i] in data units.
  arma::mat design(const arma::rowvec& x) const {
    std::vector<arma::uword> cont;
    for (arma::uword j = 0; j < X.n_cols; ++j)
      if (types.empty() || types[j] == 'c') cont.push_back(j);
    const arma::uword p = degree == 0 ? 0 : (degree == 1 ? cont.size() : degree);
    arma::mat D(X.n_rows, 1 + p, arma::fill::ones);
    for (arma::uword i = 0; i < X.n_rows; ++i) {
      if (degree == 1)
        for (arma::uword a = 0; a < p; ++a) D(i, 1 + a) = X(i, cont[a]) - x(cont[a]);
      else
        for (arma::uword a = 0; a < p; ++a) D(i, 1 + a) = std::pow(X(i, cont[0]) - x(cont[0]), a + 1.0);
    }
    return D;
  }
  // Coefficients (1 + p) x k and the attention row l (n).
  void solve(const arma::rowvec& x, arma::mat& beta, arma::rowvec& l) const {
    const arma::vec w = weights(x);
    const arma::mat D = design(x);
    arma::mat A = D.t() * (D.each_col() % w);
    const double omega = arma::accu(w);
    for (arma::uword a = 1; a < A.n_rows; ++a) A(a, a) += ridge * omega;
    const arma::mat DW = (D.each_col() % w).t();  // (1+p) x n
    const arma::mat S = arma::solve(A, DW);       // rows: coefficient maps
    beta = S * Y;
    l = S.row(0);
  }
  arma::mat predict(const arma::mat& Xq) const {
    arma::mat out(Xq.n_rows, Y.n_cols);
    for (arma::uword q = 0; q < Xq.n_rows; ++q) {
      arma::mat beta;
      arma::rowvec l;
      solve(Xq.row(q), beta, l);
      out.row(q) = beta.row(0);
    }
    return out;
  }
  arma::mat attention(const arma::mat& Xq) const {
    arma::mat W(Xq.n_rows, X.n_rows);
    for (arma::uword q = 0; q < Xq.n_rows; ++q) {
      arma::mat beta;
      arma::rowvec l;
      solve(Xq.row(q), beta, l);
      W.row(q) = l;
    }
    return W;
  }
  // d m / d x_j (first-degree coefficient) for continuous columns, output o.
  arma::mat gradient(const arma::mat& Xq, arma::uword o = 0) const {
    arma::mat G(Xq.n_rows, X.n_cols, arma::fill::value(std::nan("")));
    std::vector<arma::uword> cont;
    for (arma::uword j = 0; j < X.n_cols; ++j)
      if (types.empty() || types[j] == 'c') cont.push_back(j);
    for (arma::uword q = 0; q < Xq.n_rows; ++q) {
      arma::mat beta;
      arma::rowvec l;
      solve(Xq.row(q), beta, l);
      const arma::uword ng = degree == 1 ? cont.size() : 1;
      for (arma::uword a = 0; a < ng; ++a) G(q, cont[a]) = beta(1 + a, o);
    }
    return G;
  }
};

LocalFitOptions options(int degree, const std::string& kernel = "gaussian",
                        const std::string& types = "", double ridge = 0.0,
                        PairAlgorithm alg = PairAlgorithm::automatic, int threads = 0) {
  LocalFitOptions o;
  o.degree = degree;
  o.kernel.kernel = Kernel::from_name(kernel);
  o.kernel.var_types = types;
  o.ridge = ridge;
  o.kernel.algorithm = alg;
  o.kernel.n_threads = threads;
  return o;
}

// max |a - b| / (|b| + scale)
double rel_err(const arma::mat& a, const arma::mat& b, double scale) {
  EXPECT_EQ(a.n_rows, b.n_rows);
  EXPECT_EQ(a.n_cols, b.n_cols);
  double worst = 0.0;
  for (arma::uword i = 0; i < a.n_elem; ++i) {
    if (std::isnan(b(i)) && std::isnan(a(i))) continue;
    worst = std::max(worst, std::fabs(a(i) - b(i)) / (std::fabs(b(i)) + scale));
  }
  return worst;
}

// A one-column matrix (brace-initialising a one-column arma::mat is ambiguous).
arma::mat colmat(std::initializer_list<double> v) { return arma::mat(arma::vec(v)); }

template <class F>
std::string error_message(F f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

// ---------------------------------------------------------------- agreement with the oracle

TEST(LocalFit, MatchesOracleOnRandomDataAllKernelsAndShapes) {
  struct Case {
    arma::uword n, d, k;
    int degree;
    double ridge;
  };
  const std::vector<Case> cases = {{40, 1, 1, 0, 0.0}, {40, 1, 2, 1, 0.0}, {60, 2, 1, 1, 0.0},
                                   {80, 3, 3, 1, 0.0}, {60, 2, 1, 1, 0.7}, {50, 1, 1, 2, 0.0},
                                   {50, 1, 2, 3, 0.0}, {50, 1, 1, 2, 0.3}, {70, 3, 1, 0, 0.0}};
  int seed = 100;
  for (const Case& c : cases) {
    for (const std::string& kernel : Kernel::names()) {
      // Nonnegative kernels (the fourth-order gaussian4: test_kernel_gaussian4.cpp).
      if (!Kernel::from_name(kernel).nonnegative()) continue;
      arma::arma_rng::set_seed(seed++);
      Oracle o;
      o.X = arma::randn(c.n, c.d);
      o.X.rows(0, 4) = arma::repmat(o.X.row(5), 5, 1);  // ties
      o.Y = arma::randn(c.n, c.k) + 3.0;
      o.h = 0.6 + 0.8 * arma::randu(c.d);
      if (kernel != "gaussian")  // compact support: enough neighbours for every training row
        o.h = (2.0 + arma::randu(c.d)) * std::sqrt(static_cast<double>(c.d));
      o.kernel = kernel;
      o.degree = c.degree;
      o.ridge = c.ridge;
      const arma::mat Xq = 0.6 * arma::randn(9, c.d);
      LocalPolynomial m(options(c.degree, kernel, "", c.ridge));
      m.fit(o.X, o.Y, o.h);
      const std::string tag = kernel + " n=" + std::to_string(c.n) + " d=" + std::to_string(c.d) +
                              " deg=" + std::to_string(c.degree);
      EXPECT_LT(rel_err(m.predict(Xq), o.predict(Xq), 1.0), 1e-10) << tag;
      EXPECT_LT(rel_err(m.fitted(), o.predict(o.X), 1.0), 1e-10) << tag;
      EXPECT_LT(rel_err(m.attention_weights(Xq), o.attention(Xq), 1e-3), 1e-9) << tag;
      if (c.degree >= 1) {
        const arma::cube G = m.gradient(Xq);
        for (arma::uword out = 0; out < c.k; ++out)
          EXPECT_LT(rel_err(G.slice(out), o.gradient(Xq, out), 1.0), 1e-9) << tag;
      }
    }
  }
}

TEST(LocalFit, ObservationWeightsAndWideDataRange) {
  arma::arma_rng::set_seed(5);
  Oracle o;
  o.X = arma::randn(120, 2);
  o.X.col(0) = o.X.col(0) * 1000.0 + 2.0e6;  // a far-from-zero column (e.g. calendar days)
  o.Y = arma::randn(120, 1);
  o.h = {600.0, 0.5};
  o.sw = arma::randu(120) * 3.0;
  o.sw(3) = 0.0;
  for (int degree : {0, 1}) {
    o.degree = degree;
    LocalPolynomial m(options(degree));
    m.fit(o.X, o.Y, o.h, o.sw);
    arma::mat Xq = o.X.rows(10, 19);
    Xq.col(0) += 37.0;
    EXPECT_LT(rel_err(m.predict(Xq), o.predict(Xq), 1.0), 1e-10) << degree;
    EXPECT_LT(rel_err(m.fitted(), o.predict(o.X), 1.0), 1e-10) << degree;
  }
}

TEST(LocalFit, FixedBandwidthFitIsExactlyScaleEquivariantAtExtremeScales) {
  // x -> 2^e x with h -> 2^e h is exact in floating point, so fit, fitted values and
  // gradient * 2^e must equal the unscaled ones bit for bit, also at 2^-990 ~ 1e-298 where
  // 1 / h^2 overflows (it used to make every local linear design 'singular' at ridge = 0).
  arma::arma_rng::set_seed(21);
  const arma::mat X = arma::randu(80, 2), Xq = arma::randu(7, 2) * 0.8 + 0.1;
  const arma::mat Y = arma::sin(3.0 * X.col(0)) + X.col(1) % X.col(1);
  const arma::vec h = {0.2, 0.3};
  for (int degree : {0, 1}) {
    LocalPolynomial base(options(degree));
    base.fit(X, Y, h);
    const arma::mat p0 = base.predict(Xq);
    for (int e : {-990, 990}) {
      const double c = std::ldexp(1.0, e);
      LocalPolynomial m(options(degree));
      m.fit(X * c, Y, h * c);
      const arma::mat p = m.predict(Xq * c);
      EXPECT_EQ(arma::abs(p - p0).max(), 0.0) << degree << " " << e;
      EXPECT_EQ(arma::abs(m.fitted() - base.fitted()).max(), 0.0) << degree << " " << e;
      if (degree == 1) {
        const arma::cube g = m.gradient(Xq * c) * c, g0 = base.gradient(Xq);
        EXPECT_EQ(arma::abs(g - g0).max(), 0.0) << e;
      }
    }
  }
}

TEST(LocalFit, IntegerWeightsEqualDuplicatedRows) {
  arma::arma_rng::set_seed(8);
  const arma::mat X = arma::randn(30, 2);
  const arma::mat Y = arma::randn(30, 1);
  arma::vec w = arma::floor(arma::randu(30) * 3.0) + 1.0;
  arma::mat Xd, Yd;
  for (arma::uword i = 0; i < 30; ++i)
    for (int r = 0; r < static_cast<int>(w(i)); ++r) {
      Xd.insert_rows(Xd.n_rows, X.row(i));
      Yd.insert_rows(Yd.n_rows, Y.row(i));
    }
  const arma::mat Xq = arma::randn(7, 2);
  for (int degree : {0, 1}) {
    LocalPolynomial a(options(degree)), b(options(degree));
    a.fit(X, Y, arma::vec{0.7, 0.9}, w);
    b.fit(Xd, Yd, arma::vec{0.7, 0.9});
    EXPECT_LT(rel_err(a.predict(Xq), b.predict(Xq), 1.0), 1e-12);
  }
}

TEST(LocalFit, OneRowTinyAndHugeBandwidths) {
  // One training row: NW returns its y everywhere; local linear needs d + 1 rows.
  LocalPolynomial nw(options(0));
  nw.fit(colmat({1.5}), colmat({4.0}), arma::vec{1.0});
  EXPECT_DOUBLE_EQ(nw.predict(colmat({0.0, 3.0}))(1, 0), 4.0);
  EXPECT_DOUBLE_EQ(nw.fitted()(0, 0), 4.0);
  EXPECT_DOUBLE_EQ(nw.leverage()(0), 1.0);
  LocalPolynomial ll(options(1));
  EXPECT_NE(error_message([&] { ll.fit(colmat({1.5}), colmat({4.0}), arma::vec{1.0}); })
                .find("needs at least 2 rows"),
            std::string::npos);

  arma::arma_rng::set_seed(9);
  const arma::mat X = arma::randn(50, 2);
  const arma::mat Y = arma::randn(50, 1);
  const arma::mat Xq = arma::randn(5, 2);
  // Huge bandwidth: NW -> the mean, local linear -> the global OLS line.
  LocalPolynomial big0(options(0)), big1(options(1));
  big0.fit(X, Y, arma::vec{1e7, 1e7});
  big1.fit(X, Y, arma::vec{1e7, 1e7});
  EXPECT_LT(rel_err(big0.predict(Xq), arma::mat(5, 1, arma::fill::value(arma::mean(Y.col(0)))), 1.0),
            1e-12);
  arma::mat D = arma::join_horiz(arma::ones(50, 1), X);
  const arma::vec beta = arma::solve(D, Y.col(0));
  const arma::mat ols = arma::join_horiz(arma::ones(5, 1), Xq) * beta;
  EXPECT_LT(rel_err(big1.predict(Xq), ols, 1.0), 1e-8);
  const arma::cube G = big1.gradient(Xq);
  EXPECT_NEAR(G(0, 0, 0), beta(1), 1e-8);
  EXPECT_NEAR(G(3, 1, 0), beta(2), 1e-8);

  // Tiny bandwidth: NW at the training rows returns y itself; far queries are rejected.
  LocalPolynomial tiny(options(0));
  tiny.fit(X, Y, arma::vec{1e-4, 1e-4});
  EXPECT_LT(rel_err(tiny.fitted(), Y, 1.0), 1e-14);
  const std::string msg = error_message([&] { tiny.predict(arma::mat{{0.123, 0.456}}); });
  EXPECT_NE(msg.find("X_new row 1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("underflow"), std::string::npos) << msg;
  EXPECT_THROW(tiny.predict(arma::mat{{0.123, 0.456}}), NumericalError);
  // Local linear with a tiny bandwidth: each fitted point sees only itself -> singular design.
  LocalPolynomial tiny1(options(1, "epanechnikov"));
  const std::string msg1 = error_message([&] { tiny1.fit(X, Y, arma::vec{1e-4, 1e-4}); });
  EXPECT_NE(msg1.find("singular"), std::string::npos) << msg1;
  EXPECT_THROW(tiny1.fit(X, Y, arma::vec{1e-4, 1e-4}), NumericalError);
  // A compact kernel with no training point in reach of the query.
  LocalPolynomial epa(options(0, "epanechnikov"));
  epa.fit(X, Y, arma::vec{0.5, 0.5});
  const std::string msg2 = error_message([&] { epa.predict(arma::mat{{0.0, 0.0}, {50.0, 0.0}}); });
  EXPECT_NE(msg2.find("X_new row 2"), std::string::npos) << msg2;
  EXPECT_NE(msg2.find("no training point"), std::string::npos) << msg2;
}

TEST(LocalFit, BadInputNamesTheArgument) {
  arma::arma_rng::set_seed(10);
  arma::mat X = arma::randn(20, 2);
  arma::mat Y = arma::randn(20, 1);
  LocalPolynomial m(options(1));
  auto has = [](const std::string& msg, const std::string& needle) {
    return msg.find(needle) != std::string::npos;
  };
  arma::mat Xn = X;
  Xn(4, 1) = std::nan("");
  EXPECT_TRUE(has(error_message([&] { m.fit(Xn, Y, arma::vec{1, 1}); }), "X: contains NaN at row 5"));
  arma::mat Yn = Y;
  Yn(2, 0) = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(has(error_message([&] { m.fit(X, Yn, arma::vec{1, 1}); }), "y: contains Inf"));
  EXPECT_TRUE(has(error_message([&] { m.fit(X, Y.rows(0, 9), arma::vec{1, 1}); }), "y: has 10 rows"));
  EXPECT_TRUE(has(error_message([&] { m.fit(X, Y, arma::vec{1, 0}); }), "bandwidth"));
  EXPECT_TRUE(has(error_message([&] { m.fit(X, Y, arma::vec{1, 1, 1}); }), "bandwidth"));
  EXPECT_TRUE(has(error_message([&] { m.predict(X); }), "not fitted"));
  m.fit(X, Y, arma::vec{1, 1});
  arma::mat Xq = X.rows(0, 2);
  Xq(1, 0) = std::nan("");
  EXPECT_TRUE(has(error_message([&] { m.predict(Xq); }), "X_new: contains NaN at row 2"));
  EXPECT_TRUE(has(error_message([&] { m.predict(arma::randn(3, 3)); }), "X_new: has 3 columns"));
  LocalPolynomial neg(options(1, "gaussian", "", -1.0));
  EXPECT_TRUE(has(error_message([&] { neg.fit(X, Y, arma::vec{1, 1}); }), "ridge"));
  // Degree 2 takes several continuous columns (test_local_polynomial.cpp); degree 3 one.
  LocalPolynomial cubic(options(3));
  EXPECT_TRUE(has(error_message([&] { cubic.fit(X, Y, arma::vec{1, 1}); }), "degree"));
  LocalPolynomial deg5(options(5));
  EXPECT_TRUE(has(error_message([&] { deg5.fit(X, Y, arma::vec{1, 1}); }), "degree"));
  arma::mat Xc = X;
  Xc.col(1).fill(2.0);
  EXPECT_TRUE(has(error_message([&] { m.fit(Xc, Y, arma::vec{1, 1}); }), "column 2 is constant"));
  LocalPolynomial ridge(options(1, "gaussian", "", 0.1));
  EXPECT_NO_THROW(ridge.fit(Xc, Y, arma::vec{1, 1}));
  LocalPolynomial nw(options(0));
  nw.fit(X, Y, arma::vec{1, 1});
  EXPECT_TRUE(has(error_message([&] { nw.gradient(X); }), "gradient"));
  LocalPolynomial badtypes(options(1, "gaussian", "cq"));
  EXPECT_TRUE(has(error_message([&] { badtypes.fit(X, Y, arma::vec{1, 1}); }), "var_types"));
}

// ---------------------------------------------------------------- identities

TEST(LocalFit, NadarayaWatsonWithUnitNormInputsIsSoftmaxAttention) {
  // Seed 000: exp(-||q - k||^2 / (2 h^2)) = exp(-1/h^2) exp(q'k / h^2) for unit-norm q, k, so
  // NW with the Gaussian kernel is softmax(q K' / tau) V with tau = h^2.
  arma::arma_rng::set_seed(11);
  for (arma::uword d : {2u, 3u, 8u}) {
    arma::mat K = arma::randn(200, d);
    K = arma::normalise(K, 2, 1);
    arma::mat Q = arma::normalise(arma::mat(arma::randn(15, d)), 2, 1);
    const arma::mat V = arma::randn(200, 4);
    for (double h : {0.3, 0.7, 2.0}) {
      const double tau = h * h;
      arma::mat logits = Q * K.t() / tau;
      logits.each_col() -= arma::max(logits, 1);
      arma::mat P = arma::exp(logits);
      P.each_col() /= arma::sum(P, 1);
      const arma::mat softmax = P * V;
      LocalPolynomial nw(options(0));
      nw.fit(K, V, arma::vec{h});
      EXPECT_LT(rel_err(nw.predict(Q), softmax, 1.0), 1e-12) << d << " " << h;
      EXPECT_LT(rel_err(nw.attention_weights(Q), P, 1e-6), 1e-11) << d << " " << h;
    }
  }
}

TEST(LocalFit, LocalLinearReproducesLinearFunctionsExactly) {
  arma::arma_rng::set_seed(12);
  for (const std::string kernel : {"gaussian", "epanechnikov", "tricube", "uniform"}) {
    for (arma::uword d : {1u, 2u, 3u}) {
      const arma::mat X = 4.0 * arma::randu(150, d) - 2.0;
      const arma::vec beta = arma::randn(d);
      const arma::mat Y = arma::join_horiz(3.0 + X * beta, -1.0 + 2.0 * X * beta);
      LocalPolynomial ll(options(1, kernel));
      ll.fit(X, Y, arma::vec(d, arma::fill::value(1.5 * d)));
      const arma::mat Xq = arma::randn(20, d);
      const arma::mat truth = arma::join_horiz(3.0 + Xq * beta, -1.0 + 2.0 * Xq * beta);
      EXPECT_LT(rel_err(ll.predict(Xq), truth, 1.0), 1e-11) << kernel << d;
      EXPECT_LT(rel_err(ll.fitted(), Y, 1.0), 1e-11) << kernel << d;
      const arma::cube G = ll.gradient(Xq);
      for (arma::uword j = 0; j < d; ++j) {
        EXPECT_LT(arma::abs(G.slice(0).col(j) - beta(j)).max(), 1e-10);
        EXPECT_LT(arma::abs(G.slice(1).col(j) - 2.0 * beta(j)).max(), 1e-10);
      }
    }
  }
  // Degree p reproduces polynomials of degree p.
  const arma::vec x = arma::linspace(-2, 2, 60);
  for (int p : {2, 3}) {
    const arma::vec y = 1.0 - 0.5 * x + 0.25 * arma::pow(x, 2) + (p == 3 ? 0.1 : 0.0) * arma::pow(x, 3);
    LocalPolynomial lp(options(p, "biweight"));
    lp.fit(arma::mat(x), arma::mat(y), arma::vec{0.6});
    const arma::vec xq = {-1.9, -0.33, 0.0, 1.234};
    const arma::vec truth = 1.0 - 0.5 * xq + 0.25 * arma::pow(xq, 2) + (p == 3 ? 0.1 : 0.0) * arma::pow(xq, 3);
    EXPECT_LT(rel_err(lp.predict(arma::mat(xq)), arma::mat(truth), 1.0), 1e-11) << p;
    const arma::vec dtruth = -0.5 + 0.5 * xq + (p == 3 ? 0.3 : 0.0) * arma::pow(xq, 2);
    EXPECT_LT(rel_err(lp.gradient(arma::mat(xq)).slice(0), arma::mat(dtruth), 1.0), 1e-9) << p;
  }
}

TEST(LocalFit, AttentionWeightRows) {
  arma::arma_rng::set_seed(13);
  const arma::mat X = arma::randn(120, 2);
  const arma::mat Y = arma::randn(120, 2);
  const arma::mat Xq = arma::randn(30, 2) * 1.5;
  for (const std::string kernel : {"gaussian", "epanechnikov", "triangular"}) {
    LocalPolynomial nw(options(0, kernel)), ll(options(1, kernel)), llr(options(1, kernel, "", 2.0));
    const double hh = kernel == "gaussian" ? 1.5 : 4.0;
    const arma::vec h = {hh, hh};
    nw.fit(X, Y, h);
    ll.fit(X, Y, h);
    llr.fit(X, Y, h);
    const arma::mat Wn = nw.attention_weights(Xq), Wl = ll.attention_weights(Xq),
                    Wr = llr.attention_weights(Xq);
    EXPECT_GE(Wn.min(), 0.0) << kernel;
    EXPECT_LT(arma::abs(arma::sum(Wn, 1) - 1.0).max(), 1e-14) << kernel;
    EXPECT_LT(arma::abs(arma::sum(Wl, 1) - 1.0).max(), 1e-12) << kernel;
    EXPECT_LT(arma::abs(arma::sum(Wr, 1) - 1.0).max(), 1e-12) << kernel;
    EXPECT_LT(Wl.min(), 0.0) << kernel;  // local linear weights can be negative (extrapolation)
    EXPECT_LT(rel_err(Wn * Y, nw.predict(Xq), 1.0), 1e-13) << kernel;
    EXPECT_LT(rel_err(Wl * Y, ll.predict(Xq), 1.0), 1e-12) << kernel;
    EXPECT_LT(rel_err(Wr * Y, llr.predict(Xq), 1.0), 1e-12) << kernel;
    // Leverages are the diagonal of the weights at the training rows; tr(L) in (1, n).
    const arma::mat L = ll.attention_weights(X);
    EXPECT_LT(arma::abs(L.diag() - ll.leverage()).max(), 1e-12) << kernel;
    EXPECT_NEAR(ll.effective_df(), arma::trace(L), 1e-10);
    EXPECT_GT(nw.effective_df(), 1.0);
    EXPECT_LT(nw.effective_df(), 120.0);
    EXPECT_GE(nw.leverage().min(), 0.0);
    EXPECT_LE(nw.leverage().max(), 1.0);
  }
}

TEST(LocalFit, LeaveOneOutEqualsRefittingWithoutTheRow) {
  arma::arma_rng::set_seed(14);
  const arma::uword n = 40;
  arma::mat X(n, 2);
  X.col(0) = arma::randn(n);
  X.col(1) = arma::floor(3 * arma::randu(n));
  X(7, 0) = X(8, 0);  // a tie
  const arma::mat Y = arma::randn(n, 2);
  const arma::vec sw = arma::randu(n) + 0.5;
  struct Setup {
    int degree;
    std::string kernel;
    double ridge;
  };
  for (const Setup& s : {Setup{0, "gaussian", 0.0}, Setup{1, "gaussian", 0.0},
                         Setup{1, "epanechnikov", 0.0}, Setup{1, "gaussian", 0.8},
                         Setup{2, "gaussian", 0.0}}) {
    LocalPolynomial full(options(s.degree, s.kernel, "cu", s.ridge));
    const arma::vec h = {s.kernel == "gaussian" ? 0.5 : 1.4, 0.3};
    full.fit(X, Y, h, sw);
    const arma::mat loo = full.loo_fitted();
    const arma::mat fit = full.fitted();
    const arma::vec lev = full.leverage();
    for (arma::uword i = 0; i < n; ++i) {
      arma::mat Xi = X, Yi = Y;
      arma::vec swi = sw;
      Xi.shed_row(i);
      Yi.shed_row(i);
      swi.shed_row(i);
      LocalPolynomial refit(options(s.degree, s.kernel, "cu", s.ridge));
      refit.fit(Xi, Yi, h, swi);
      const arma::mat direct = refit.predict(X.row(i));
      const std::string tag = s.kernel + " deg " + std::to_string(s.degree) + " ridge " +
                              std::to_string(s.ridge) + " row " + std::to_string(i);
      EXPECT_LT(rel_err(loo.row(i), direct, 1.0), 1e-10) << tag;
      // The shortcut (m_i - L_ii y_i) / (1 - L_ii) is exact when the penalty does not depend on
      // the data (ridge = 0).
      const arma::rowvec shortcut = (fit.row(i) - lev(i) * Y.row(i)) / (1.0 - lev(i));
      if (s.ridge == 0.0) {
        EXPECT_LT(rel_err(shortcut, direct, 1.0), 1e-9) << tag;
      }
    }
    if (s.ridge > 0.0) {  // and is not exact otherwise: the omega-scaled ridge changes
      arma::uword i = 3;
      const arma::rowvec shortcut = (fit.row(i) - lev(i) * Y.row(i)) / (1.0 - lev(i));
      EXPECT_GT(rel_err(shortcut, loo.row(i), 1.0), 1e-8);
    }
  }
}

TEST(LocalFit, LeaveOneOutOfAnIsolatedPointIsAnError) {
  const arma::mat X = colmat({0.0, 0.1, 0.2, 0.3, 5.0});
  const arma::mat Y = colmat({1.0, 2.0, 3.0, 4.0, 5.0});
  LocalPolynomial m(options(0, "epanechnikov"));
  m.fit(X, Y, arma::vec{0.5});
  EXPECT_DOUBLE_EQ(m.fitted()(4, 0), 5.0);
  const std::string msg = error_message([&] { m.loo_fitted(); });
  EXPECT_NE(msg.find("leave-one-out fit at training row 5"), std::string::npos) << msg;
  EXPECT_THROW(m.loo_fitted(), NumericalError);
}

TEST(LocalFit, GradientEqualsFiniteDifferencesOfTheFit) {
  // The marginal effect is the local slope B(x) (core/README.md, "Conventions"). It equals the derivative of the
  // fitted curve m(x) exactly when the local fit is a global one (h -> infinity), and up to the
  // smoothing bias of the slope otherwise; the exact value of B(x) is checked against the
  // oracle in MatchesOracleOnRandomDataAllKernelsAndShapes.
  arma::arma_rng::set_seed(15);
  arma::mat X(4000, 3);
  X.cols(0, 1) = arma::randn(4000, 2);
  X.col(2) = arma::floor(4 * arma::randu(4000));
  const arma::mat Y = arma::sin(X.col(0)) + 0.5 * X.col(1) % X.col(1) + 0.3 * X.col(2);
  arma::mat Xq = X.rows(0, 11);
  Xq.cols(0, 1) *= 0.5;
  const double e = 1e-5;
  {
    const double ridge = 0.0;  // a ridge shrinks the slope on purpose (Zuo et al. 2025, arXiv:2510.01450, eq. 6)
    for (const std::string kernel : {"gaussian", "biweight"}) {
      LocalFitOptions o = options(1, kernel, "cco", ridge);
      o.compute_fitted = false;  // sparse corners are irrelevant here: queries are central
      LocalPolynomial ll(o);
      const double hc = kernel == "gaussian" ? 0.25 : 0.7;
      ll.fit(X, Y, arma::vec{hc, hc, 0.0});  // lambda 0: levels fitted apart
      const arma::cube G = ll.gradient(Xq);
      // The slope's smoothing bias is O(h^2 mu2) (Fan and Gijbels 1996, Local Polynomial
      // Modelling, Theorem 3.1): its leading terms are the third derivative times mu4 / (6 mu2)
      // and the second derivative times f'/f (the normal design's f'/f = -x), times h^2; here
      // both derivatives are at most 1 and |x| <= 1.5 at the queries, which keeps them below
      // 3 h^2 mu2 (mu2 = 1 for the Gaussian kernel, 1/7 for the biweight).
      const double mu2 = kernel == "gaussian" ? 1.0 : 1.0 / 7.0;
      const double bias_bound = 3.0 * hc * hc * mu2;
      for (arma::uword j = 0; j < 2; ++j) {
        arma::mat Xp = Xq, Xm = Xq;
        Xp.col(j) += e;
        Xm.col(j) -= e;
        const arma::vec fd = arma::mat(ll.predict(Xp) - ll.predict(Xm)).col(0) / (2 * e);
        const arma::vec truth = j == 0 ? arma::vec(arma::cos(Xq.col(0))) : arma::vec(Xq.col(1));
        EXPECT_LT(arma::abs(G.slice(0).col(j) - fd).max(), 0.1) << kernel << j << " " << ridge;
        ASSERT_LT(arma::abs(Xq.col(j)).max(), 1.5);  // the bound's premise
        EXPECT_LT(arma::abs(G.slice(0).col(j) - truth).max(), bias_bound)
            << kernel << j << " " << ridge;
      }
      EXPECT_TRUE(G.slice(0).col(2).has_nan());  // categorical column: no derivative
    }
  }
  // Global limit: the slope is the exact derivative of the fit; finite differences agree.
  for (double ridge : {0.0, 0.3}) {
    LocalPolynomial big(options(1, "gaussian", "cc", ridge));
    const arma::mat X2 = X.cols(0, 1);
    big.fit(X2, Y, arma::vec{1e4, 1e4});
    const arma::mat Xg = X2.rows(0, 5);
    const arma::cube G = big.gradient(Xg);
    for (arma::uword j = 0; j < 2; ++j) {
      arma::mat Xp = Xg, Xm = Xg;
      Xp.col(j) += 1e-3;
      Xm.col(j) -= 1e-3;
      const arma::vec fd = arma::mat(big.predict(Xp) - big.predict(Xm)).col(0) / 2e-3;
      EXPECT_LT(arma::abs(G.slice(0).col(j) - fd).max(), 1e-6) << ridge;
    }
  }
}

TEST(LocalFit, OneAndTwoThreadsGiveIdenticalResults) {
  arma::arma_rng::set_seed(17);
  for (PairAlgorithm alg : {PairAlgorithm::all_pairs, PairAlgorithm::neighbors}) {
    for (int degree : {0, 1}) {
      const arma::mat X = arma::randn(3000, 2);
      const arma::mat Y = arma::randn(3000, 2);
      // m * n above the engine's single-thread cut-off (2e6 pairs), so two threads really run.
      const arma::mat Xq = arma::randn(1000, 2);
      LocalPolynomial a(options(degree, "gaussian", "", 0.0, alg, 1)),
          b(options(degree, "gaussian", "", 0.0, alg, 2));
      a.fit(X, Y, arma::vec{0.2, 0.3});
      b.fit(X, Y, arma::vec{0.2, 0.3});
      EXPECT_TRUE(arma::approx_equal(a.predict(Xq), b.predict(Xq), "absdiff", 0.0));
      EXPECT_TRUE(arma::approx_equal(a.fitted(), b.fitted(), "absdiff", 0.0));
      EXPECT_TRUE(arma::approx_equal(a.loo_fitted(), b.loo_fitted(), "absdiff", 0.0));
      EXPECT_TRUE(arma::approx_equal(a.leverage(), b.leverage(), "absdiff", 0.0));
      if (degree == 1) {
        const arma::cube ga = a.gradient(Xq), gb = b.gradient(Xq);
        EXPECT_TRUE(arma::approx_equal(ga, gb, "absdiff", 0.0));
      }
    }
  }
}

TEST(LocalFit, NeighbourPathWithin1e12OfAllPairs) {
  arma::arma_rng::set_seed(18);
  for (arma::uword d : {1u, 2u, 3u}) {
    const arma::uword n = 5000;
    const arma::mat Y = arma::randn(n, 1) + 5.0;
    const arma::vec sw = arma::randu(n) + 0.1;
    for (const std::string kernel : {"gaussian", "epanechnikov", "tricube"}) {
      // Bounded data (every row has neighbours for a local linear and a leave-one-out fit) and
      // bandwidths small enough that most pairs fall outside the support or the truncation
      // ball of radius ~8.6 h.
      const bool gauss = kernel == std::string("gaussian");
      arma::mat X = 2.0 * arma::randu(n, d) - 1.0;
      X.rows(0, 99).zeros();  // a pile of ties
      const arma::mat Xq = 1.8 * arma::randu(300, d) - 0.9;
      const double hc = gauss ? (d == 1 ? 0.02 : (d == 2 ? 0.05 : 0.1))
                              : (d == 1 ? 0.05 : (d == 2 ? 0.2 : 0.4));
      for (int degree : {0, 1}) {
        const arma::vec h(d, arma::fill::value(hc));
        LocalPolynomial exact(options(degree, kernel, "", 0.0, PairAlgorithm::all_pairs)),
            nb(options(degree, kernel, "", 0.0, PairAlgorithm::neighbors));
        exact.fit(X, Y, h, sw);
        nb.fit(X, Y, h, sw);
        EXPECT_TRUE(nb.space().uses_neighbors());
        const std::string tag = kernel + " d=" + std::to_string(d) + " deg " + std::to_string(degree);
        EXPECT_LT(rel_err(nb.predict(Xq), exact.predict(Xq), 0.0), 1e-12) << tag;
        EXPECT_LT(rel_err(nb.fitted(), exact.fitted(), 0.0), 1e-12) << tag;
        EXPECT_LT(rel_err(nb.loo_fitted(), exact.loo_fitted(), 0.0), 1e-12) << tag;
        EXPECT_LT(rel_err(nb.leverage(), exact.leverage(), 0.0), 1e-12) << tag;
      }
    }
  }
}

TEST(LocalFit, MixedDataEqualsHandComputation) {
  // x1 continuous (Gaussian, h = 1), x2 unordered with 2 levels (Aitchison-Aitken,
  // lambda = 0.2: weight 0.8 for the same level, 0.2 for the other), x3 ordered with levels
  // 0, 1, 2 (Li-Racine, lambda = 0.5: 0.5^|distance|).
  const arma::mat X = {{0.0, 0, 0}, {1.0, 0, 1}, {0.0, 1, 2}, {2.0, 1, 0}};
  const arma::mat Y = colmat({1.0, 2.0, 4.0, 8.0});
  LocalPolynomial nw(options(0, "gaussian", "cuo"));
  nw.fit(X, Y, arma::vec{1.0, 0.2, 0.5});
  // Query (0.5, level 0, level 1):
  const double w1 = std::exp(-0.125) * 0.8 * 0.5;  // (0, 0, 0)
  const double w2 = std::exp(-0.125) * 0.8 * 1.0;  // (1, 0, 1)
  const double w3 = std::exp(-0.125) * 0.2 * 0.5;  // (0, 1, 2)
  const double w4 = std::exp(-1.125) * 0.2 * 0.5;  // (2, 1, 0)
  const double expect = (w1 * 1 + w2 * 2 + w3 * 4 + w4 * 8) / (w1 + w2 + w3 + w4);
  EXPECT_NEAR(nw.predict(arma::mat{{0.5, 0, 1}})(0, 0), expect, 1e-15);
  // Local linear: the categorical columns stay out of the design, so the local line in x1 is
  // the weighted least-squares line through (x1_i, y_i) with the weights above.
  LocalPolynomial ll(options(1, "gaussian", "cuo"));
  ll.fit(X, Y, arma::vec{1.0, 0.2, 0.5});
  const double w[4] = {w1, w2, w3, w4};
  const double x[4] = {0.0, 1.0, 0.0, 2.0}, y[4] = {1, 2, 4, 8};
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (int i = 0; i < 4; ++i) {
    const double z = x[i] - 0.5;
    sw += w[i];
    sx += w[i] * z;
    sy += w[i] * y[i];
    sxx += w[i] * z * z;
    sxy += w[i] * z * y[i];
  }
  const double slope = (sw * sxy - sx * sy) / (sw * sxx - sx * sx);
  const double intercept = (sy - slope * sx) / sw;
  EXPECT_NEAR(ll.predict(arma::mat{{0.5, 0, 1}})(0, 0), intercept, 1e-13);
  EXPECT_NEAR(ll.gradient(arma::mat{{0.5, 0, 1}})(0, 0, 0), slope, 1e-13);
  // An unseen level is an error, not an extrapolation.
  const std::string msg = error_message([&] { ll.predict(arma::mat{{0.5, 3, 1}}); });
  EXPECT_NE(msg.find("never seen in training"), std::string::npos) << msg;
  // lambda = 0 for the unordered column splits the data by level.
  LocalPolynomial split(options(0, "gaussian", "cuo"));
  split.fit(X, Y, arma::vec{1.0, 0.0, 1.0});
  const double a1 = std::exp(-0.125), a2 = std::exp(-0.125);
  EXPECT_NEAR(split.predict(arma::mat{{0.5, 0, 1}})(0, 0), (a1 * 1 + a2 * 2) / (a1 + a2), 1e-15);
  // Out-of-range categorical bandwidths are rejected.
  LocalPolynomial bad(options(0, "gaussian", "cuo"));
  EXPECT_NE(error_message([&] { bad.fit(X, Y, arma::vec{1.0, 0.7, 0.5}); }).find("bandwidth[2]"),
            std::string::npos);
  EXPECT_NE(error_message([&] { bad.fit(X, Y, arma::vec{1.0, 0.2, 1.5}); }).find("bandwidth[3]"),
            std::string::npos);
}

TEST(LocalFit, MultiOutputEqualsColumnwiseFits) {
  arma::arma_rng::set_seed(19);
  const arma::mat X = arma::randn(100, 2);
  const arma::mat Y = arma::randn(100, 3);
  const arma::mat Xq = arma::randn(10, 2);
  LocalPolynomial all(options(1, "gaussian", "", 0.3));
  all.fit(X, Y, arma::vec{0.8, 0.8});
  const arma::mat P = all.predict(Xq);
  for (arma::uword c = 0; c < 3; ++c) {
    LocalPolynomial one(options(1, "gaussian", "", 0.3));
    one.fit(X, Y.col(c), arma::vec{0.8, 0.8});
    EXPECT_LT(rel_err(P.col(c), one.predict(Xq), 1.0), 1e-13);
    EXPECT_LT(rel_err(all.loo_fitted().col(c), one.loo_fitted(), 1.0), 1e-13);
  }
}

TEST(LocalFit, RidgeMatchesLlaEquation8AndIsScaleInvariant) {
  // Seed 002 eq. 8 with Sigma = sum w z z' + lambda * omega * I: s_j = w_j (1 - z_j' rho) /
  // (omega - mu' rho), rho = Sigma^{-1} mu. Multiplying every weight by a constant (sample
  // weights times 1000) leaves the estimator unchanged.
  arma::arma_rng::set_seed(20);
  const arma::mat X = arma::randn(60, 2);
  const arma::mat Y = arma::randn(60, 1);
  const double lambda = 0.4;
  const arma::vec h = {0.9, 1.1};
  const arma::rowvec x = {0.3, -0.2};
  arma::vec w(60);
  arma::mat Z(60, 2);
  for (arma::uword j = 0; j < 60; ++j) {
    Z.row(j) = X.row(j) - x;
    w(j) = std::exp(-0.5 * (std::pow(Z(j, 0) / h(0), 2) + std::pow(Z(j, 1) / h(1), 2)));
  }
  const double omega = arma::accu(w);
  const arma::vec mu = Z.t() * w;
  const arma::mat Sigma = Z.t() * (Z.each_col() % w) + lambda * omega * arma::eye(2, 2);
  const arma::vec rho = arma::solve(Sigma, mu);
  const arma::vec s = w % (1.0 - Z * rho) / (omega - arma::dot(mu, rho));
  LocalPolynomial lla(options(1, "gaussian", "", lambda));
  lla.fit(X, Y, h);
  EXPECT_LT(rel_err(lla.attention_weights(x), s.t(), 1e-6), 1e-12);
  LocalPolynomial scaled(options(1, "gaussian", "", lambda));
  scaled.fit(X, Y, h, arma::vec(60, arma::fill::value(1000.0)));
  EXPECT_LT(rel_err(scaled.predict(x), lla.predict(x), 1.0), 1e-14);
}

TEST(LocalFit, StateRoundTrip) {
  arma::arma_rng::set_seed(21);
  arma::mat X = arma::randn(80, 2);
  X.col(1) = arma::floor(3 * arma::randu(80));
  const arma::mat Y = arma::randn(80, 2);
  LocalPolynomial m(options(1, "epanechnikov", "cu", 0.2));
  m.fit(X, Y, arma::vec{1.5, 0.3}, arma::randu(80) + 0.5);
  const LocalFitState s = m.state();
  EXPECT_EQ(s.var_types, "cu");
  EXPECT_EQ(s.kernel, "epanechnikov");
  const LocalPolynomial r = LocalPolynomial::from_state(s);
  const arma::mat Xq = X.rows(0, 9);
  EXPECT_TRUE(arma::approx_equal(r.predict(Xq), m.predict(Xq), "absdiff", 0.0));
  EXPECT_TRUE(arma::approx_equal(r.fitted(), m.fitted(), "absdiff", 0.0));
  EXPECT_TRUE(arma::approx_equal(r.loo_fitted(), m.loo_fitted(), "absdiff", 0.0));
  EXPECT_DOUBLE_EQ(r.effective_df(), m.effective_df());
}

TEST(LocalFit, EvalReportsStatusesWithoutThrowing) {
  // The reusable pass (bandwidth selection scores failures instead of throwing).
  const arma::mat X = colmat({0.0, 0.1, 0.2, 3.0});
  const arma::mat Y = colmat({1.0, 2.0, 3.0, 4.0});
  KernelSpec spec;
  spec.kernel = Kernel(KernelType::epanechnikov);
  KernelSpace ks(X, arma::vec{0.5}, spec);
  arma::mat Yi(4, 1);
  for (std::size_t k = 0; k < 4; ++k) Yi.row(k) = Y.row(ks.order()[k]);
  LocalEvalRequest req;
  req.loo = true;
  const LocalEvalResult r =
      local_polynomial_eval(ks, Yi, LocalPolySpec{1, 0.0}, ks.training_queries(), req, 1);
  EXPECT_EQ(r.status[0], QueryStatus::ok);
  EXPECT_EQ(r.status[3], QueryStatus::singular);  // only itself within reach
  EXPECT_EQ(r.loo_status[3], QueryStatus::no_weight);
  EXPECT_TRUE(std::isnan(r.fit(3, 0)));
  EXPECT_EQ(r.loo_status[1], QueryStatus::ok);
}

// cv_score() is the criterion cv_ls minimises: with sample weights the weighted mean
// sum_i w_i (y_i - m_{-i}(x_i))^2 / sum_i w_i (rows of weight 0 not counted), equal to the
// weighted bandwidth objective at the same bandwidth, and to a direct sum of the refits.
TEST(LocalFitCvScore, WeightedMeanEqualsTheSelectionObjective) {
  arma::arma_rng::set_seed(21);
  for (const int degree : {0, 1}) {
    for (const arma::uword d : {1u, 2u}) {
      const arma::uword n = 60;
      const arma::mat X = arma::randu(n, d);
      const arma::vec y = arma::sin(5.0 * X.col(0)) + 0.3 * arma::randn(n);
      arma::vec w = 0.1 + 2.9 * arma::randu(n);
      w.head(3).zeros();
      const arma::vec h(d, arma::fill::value(0.2));
      attnreg::LocalFitOptions fo;
      fo.degree = degree;
      attnreg::LocalPolynomial m(fo);
      m.fit(X, arma::mat(y), h, w);
      attnreg::BandwidthSelectOptions so;
      so.degree = degree;
      so.weights = w.tail(n - 3);
      const attnreg::BandwidthObjective obj(X.tail_rows(n - 3), y.tail(n - 3), so);
      EXPECT_NEAR(m.cv_score() / obj(h), 1.0, 1e-12) << degree << " " << d;
      const arma::mat loo = m.loo_fitted();
      double num = 0.0;
      for (arma::uword i = 3; i < n; ++i) num += w(i) * std::pow(y(i) - loo(i, 0), 2);
      EXPECT_NEAR(m.cv_score() / (num / arma::accu(w)), 1.0, 1e-12);
      attnreg::LocalPolynomial u(fo);
      u.fit(X, arma::mat(y), h);
      EXPECT_NEAR(u.cv_score() / arma::mean(arma::square(y - u.loo_fitted().col(0))), 1.0, 1e-12);
    }
  }
}
