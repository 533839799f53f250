// Marginal effects (marginal_effects.hpp) against direct float64 oracles: the NW gradient
// against central differences of the fit, the derivative weights of the NW estimator written
// out, local-linear slopes against a direct weighted least-squares fit, categorical level
// differences against predictions at the changed rows, and the standard errors against
// sum_i g_i^2 e_i^2 with the weights from finite differences of the attention weights.
#include <gtest/gtest.h>

#include <cmath>

#include "attnreg/base/error.hpp"
#include "attnreg/solve/local_fit.hpp"
#include "attnreg/inference/marginal_effects.hpp"

using namespace attnreg;

namespace {

struct Data {
  arma::mat X;
  arma::vec y;
};

Data make_data(int seed, arma::uword n, arma::uword dc, bool with_cat) {
  arma::arma_rng::set_seed(seed);
  Data D;
  D.X = arma::randu<arma::mat>(n, dc + (with_cat ? 1 : 0));
  D.y = arma::sin(4.0 * D.X.col(0)) + 0.2 * arma::randn<arma::vec>(n);
  if (dc > 1) D.y += arma::square(D.X.col(1));
  if (with_cat) {
    D.X.col(dc) = arma::floor(3.0 * D.X.col(dc));  // codes 0, 1, 2
    D.y += 0.5 * D.X.col(dc);
  }
  return D;
}

LocalPolynomial fit(const Data& D, int degree, const std::string& vt, KernelType k,
                    const arma::vec& h, const arma::vec& sw = arma::vec()) {
  LocalFitOptions o;
  o.degree = degree;
  o.kernel.var_types = vt;
  o.kernel.kernel = Kernel(k);
  LocalPolynomial m(o);
  m.fit(D.X, arma::mat(D.y), h, sw);
  return m;
}

}  // namespace

TEST(MarginalEffects, NadarayaWatsonGradientIsTheDerivativeOfTheFit) {
  for (KernelType k : {KernelType::gaussian, KernelType::epanechnikov, KernelType::biweight})
    for (int seed : {1, 2, 3})
      for (arma::uword dc : {1u, 2u}) {
        const Data D = make_data(seed, 40 + 30 * seed, dc, seed == 3);
        std::string vt(dc, 'c');
        arma::vec h(dc, arma::fill::value(k == KernelType::gaussian ? 0.15 : 0.45));
        if (seed == 3) {
          vt += "u";
          h = arma::join_cols(h, arma::vec{0.3});
        }
        arma::vec sw;
        if (seed == 2) sw = 0.5 + arma::randu<arma::vec>(D.X.n_rows);
        const LocalPolynomial m = fit(D, 0, vt, k, h, sw);
        arma::mat Q = 0.2 + 0.6 * arma::randu<arma::mat>(7, D.X.n_cols);
        if (seed == 3) Q.col(dc) = arma::vec{0, 1, 2, 0, 1, 2, 1};
        const GradientResult r = local_gradient(m, Q, GradientOptions{});
        for (arma::uword a = 0; a < dc; ++a) {
          const double e = 1e-5;
          arma::mat Qp = Q, Qm = Q;
          Qp.col(a) += e;
          Qm.col(a) -= e;
          const arma::vec fd = (m.predict(Qp) - m.predict(Qm)) / (2.0 * e);
          for (arma::uword q = 0; q < Q.n_rows; ++q)
            EXPECT_NEAR(r.gradient(q, a), fd(q), 1e-7 * (1.0 + std::fabs(fd(q))))
                << static_cast<int>(k) << " " << seed << " " << dc;
        }
      }
}

TEST(MarginalEffects, NadarayaWatsonDerivativeWeightsWrittenOut) {
  // Gaussian NW: g_i(x) = l_i (s_i - sum_k l_k s_k), l_i = w_i / sum w, s_i = (X_i - x) / h^2.
  const Data D = make_data(4, 50, 1, false);
  const double h = 0.2;
  const LocalPolynomial m = fit(D, 0, "c", KernelType::gaussian, arma::vec{h});
  const arma::mat Q = arma::vec{0.3, 0.7};
  const arma::mat G = gradient_weights(m, Q, 0);
  for (arma::uword q = 0; q < Q.n_rows; ++q) {
    const arma::vec u = (D.X.col(0) - Q(q, 0)) / h;
    const arma::vec w = arma::exp(-0.5 * arma::square(u));
    const arma::vec l = w / arma::accu(w);
    const arma::vec s = u / h;
    const arma::vec g = l % (s - arma::dot(l, s));
    EXPECT_LT(arma::abs(G.row(q).t() - g).max(), 1e-13 * arma::abs(g).max());
  }
}

TEST(MarginalEffects, LocalLinearSlopesMatchWeightedLeastSquares) {
  for (int seed : {1, 2})
    for (arma::uword dc : {1u, 2u}) {
      const Data D = make_data(10 + seed, 60 + 20 * seed, dc, seed == 2);
      std::string vt(dc, 'c');
      arma::vec h(dc, arma::fill::value(0.25));
      if (seed == 2) {
        vt += "u";
        h = arma::join_cols(h, arma::vec{0.2});
      }
      const LocalPolynomial m = fit(D, 1, vt, KernelType::gaussian, h);
      arma::mat Q = 0.2 + 0.6 * arma::randu<arma::mat>(5, D.X.n_cols);
      if (seed == 2) Q.col(dc) = arma::vec{0, 1, 2, 2, 0};
      GradientOptions go;
      go.se = GradientSE::asymptotic;
      const GradientResult r = local_gradient(m, Q, go);
      const arma::cube ref = m.gradient(Q);
      for (arma::uword q = 0; q < Q.n_rows; ++q) {
        // Direct weighted least squares with the product kernel.
        arma::vec w(D.X.n_rows);
        arma::mat Z(D.X.n_rows, dc + 1, arma::fill::ones);
        for (arma::uword i = 0; i < D.X.n_rows; ++i) {
          double s = 0.0;
          for (arma::uword a = 0; a < dc; ++a) {
            const double u = (D.X(i, a) - Q(q, a)) / h(a);
            s += u * u;
            Z(i, 1 + a) = D.X(i, a) - Q(q, a);
          }
          w(i) = std::exp(-0.5 * s);
          if (seed == 2) w(i) *= D.X(i, dc) == Q(q, dc) ? 1.0 - 0.2 : 0.2 / 2.0;
        }
        const arma::vec beta = arma::solve(Z.t() * (Z.each_col() % w), Z.t() * (w % D.y));
        for (arma::uword a = 0; a < dc; ++a) {
          EXPECT_NEAR(r.gradient(q, a), beta(1 + a), 1e-9 * (1.0 + std::fabs(beta(1 + a))));
          EXPECT_NEAR(r.gradient(q, a), ref(q, a, 0), 1e-10 * (1.0 + std::fabs(beta(1 + a))));
        }
      }
    }
}

TEST(MarginalEffects, CategoricalColumnsAreLevelDifferences) {
  const Data D = make_data(21, 90, 1, true);
  for (int degree : {0, 1})
    for (char t : {'u', 'o'}) {
      const std::string vt = std::string("c") + t;
      const LocalPolynomial m = fit(D, degree, vt, KernelType::gaussian, arma::vec{0.2, 0.3});
      const arma::mat Q{{0.4, 0}, {0.4, 1}, {0.6, 2}};
      const GradientResult r = local_gradient(m, Q, GradientOptions{});
      const arma::vec f = m.predict(Q);
      auto at = [&](arma::uword q, double lev) {
        arma::mat R = Q.row(q);
        R(0, 1) = lev;
        return arma::as_scalar(m.predict(R));
      };
      if (t == 'u') {  // vs the first level
        EXPECT_EQ(r.gradient(0, 1), 0.0);
        EXPECT_NEAR(r.gradient(1, 1), f(1) - at(1, 0), 1e-12);
        EXPECT_NEAR(r.gradient(2, 1), f(2) - at(2, 0), 1e-12);
      } else {  // vs the previous level; forward at the first
        EXPECT_NEAR(r.gradient(0, 1), at(0, 1) - f(0), 1e-12);
        EXPECT_NEAR(r.gradient(1, 1), f(1) - at(1, 0), 1e-12);
        EXPECT_NEAR(r.gradient(2, 1), f(2) - at(2, 1), 1e-12);
      }
    }
}

TEST(MarginalEffects, StandardErrorsAndAverageFromTheDerivativeWeights) {
  for (int degree : {0, 1}) {
    const Data D = make_data(31, 70, 2, false);
    const LocalPolynomial m = fit(D, degree, "cc", KernelType::gaussian, arma::vec{0.2, 0.3});
    const arma::mat Q = 0.2 + 0.6 * arma::randu<arma::mat>(6, 2);
    GradientOptions go;
    go.se = GradientSE::asymptotic;
    go.average = true;
    const GradientResult r = local_gradient(m, Q, go);
    const arma::vec e = D.y - m.fitted().col(0);
    for (arma::uword j = 0; j < 2; ++j) {
      // The weights: for NW from central differences of the attention weights (the fit's
      // derivative), for LL written out above; both through gradient_weights.
      const arma::mat G = gradient_weights(m, Q, j);
      if (degree == 0) {
        const double eps = 1e-5;
        arma::mat Qp = Q, Qm = Q;
        Qp.col(j) += eps;
        Qm.col(j) -= eps;
        const arma::mat Gfd = (m.attention_weights(Qp) - m.attention_weights(Qm)) / (2 * eps);
        EXPECT_LT(arma::abs(G - Gfd).max(), 1e-6 * arma::abs(G).max());
      }
      const arma::vec se = arma::sqrt(arma::square(G) * arma::square(e));
      for (arma::uword q = 0; q < Q.n_rows; ++q)
        EXPECT_NEAR(r.se(q, j), se(q), 1e-12 * se(q));
      const arma::rowvec a = arma::mean(G, 0);
      EXPECT_NEAR(r.average(j), arma::mean(r.gradient.col(j)), 1e-13);
      EXPECT_NEAR(r.average(j), arma::dot(a, D.y), 1e-12);
      const double ase = std::sqrt(arma::dot(arma::square(a), arma::square(e)));
      EXPECT_NEAR(r.average_se(j), ase, 1e-12 * ase);
      // Averaging correlated estimates: not the mean of the pointwise standard errors.
      EXPECT_GT(std::fabs(r.average_se(j) - arma::mean(r.se.col(j))), 1e-6);
    }
  }
}

TEST(MarginalEffects, WildBootstrapAgreesWithTheLinearFormAndIsReproducible) {
  const Data D = make_data(41, 80, 1, false);
  const LocalPolynomial m = fit(D, 1, "c", KernelType::gaussian, arma::vec{0.15});
  const arma::mat Q = arma::vec{0.3, 0.5, 0.8};
  GradientOptions go;
  go.se = GradientSE::asymptotic;
  go.average = true;
  const GradientResult a = local_gradient(m, Q, go);
  go.se = GradientSE::bootstrap;
  go.n_boot = 4000;
  go.seed = 7;
  const GradientResult b = local_gradient(m, Q, go);
  for (arma::uword q = 0; q < Q.n_rows; ++q) {
    EXPECT_EQ(b.gradient(q, 0), a.gradient(q, 0));
    EXPECT_NEAR(b.se(q, 0), a.se(q, 0), 0.06 * a.se(q, 0));  // E v^2 = 1: same variance
  }
  EXPECT_NEAR(b.average_se(0), a.average_se(0), 0.06 * a.average_se(0));
  const GradientResult b2 = local_gradient(m, Q, go);
  EXPECT_TRUE(arma::approx_equal(b.se, b2.se, "absdiff", 0.0));
}

TEST(MarginalEffects, SameResultsForOneAndTwoThreads) {
  const Data D = make_data(51, 400, 2, true);
  const LocalPolynomial m = fit(D, 0, "ccu", KernelType::gaussian, arma::vec{0.2, 0.3, 0.4});
  GradientOptions go;
  go.se = GradientSE::bootstrap;
  go.n_boot = 50;
  go.average = true;
  go.n_threads = 1;
  const GradientResult a = local_gradient(m, D.X, go);
  go.n_threads = 2;
  const GradientResult b = local_gradient(m, D.X, go);
  EXPECT_TRUE(arma::approx_equal(a.gradient, b.gradient, "absdiff", 0.0));
  EXPECT_TRUE(arma::approx_equal(a.se, b.se, "absdiff", 0.0));
  EXPECT_TRUE(arma::approx_equal(a.average, b.average, "absdiff", 0.0));
  EXPECT_TRUE(arma::approx_equal(a.average_se, b.average_se, "absdiff", 0.0));
}

TEST(MarginalEffects, BadInputIsRejected) {
  const Data D = make_data(61, 40, 1, false);
  const LocalPolynomial m = fit(D, 0, "c", KernelType::gaussian, arma::vec{0.2});
  GradientOptions go;
  go.se = GradientSE::bootstrap;
  go.n_boot = 1;
  EXPECT_THROW(local_gradient(m, D.X, go), InvalidArgument);
  EXPECT_THROW(gradient_se_from_name("jackknife"), InvalidArgument);
  EXPECT_THROW(local_gradient(m, arma::mat(2, 2, arma::fill::zeros), GradientOptions{}),
               InvalidArgument);
  LocalFitOptions o;
  o.degree = 2;
  LocalPolynomial m2(o);
  m2.fit(D.X, arma::mat(D.y), arma::vec{0.3});
  EXPECT_THROW(local_gradient(m2, D.X, GradientOptions{}), InvalidArgument);
  LocalPolynomial m3;
  m3.fit(D.X, arma::join_rows(D.y, D.y), arma::vec{0.3});
  EXPECT_THROW(local_gradient(m3, D.X, GradientOptions{}), InvalidArgument);
  // A query far outside the data: every Gaussian weight underflows.
  EXPECT_THROW(local_gradient(m, arma::mat(1, 1, arma::fill::value(1e6)), GradientOptions{}), NumericalError);
}

TEST(MarginalEffects, RepeatedQueryRowsAreEvaluatedOnce) {
  // Integer-valued regressor: each distinct query row is evaluated once and copied back; the
  // results are those of the rows one by one, and the average's weights count every row.
  arma::arma_rng::set_seed(71);
  const arma::uword n = 200;
  Data D;
  D.X = arma::floor(10.0 * arma::randu<arma::mat>(n, 1));
  D.y = arma::sqrt(D.X.col(0)) + 0.2 * arma::randn<arma::vec>(n);
  const LocalPolynomial m = fit(D, 1, "c", KernelType::gaussian, arma::vec{1.5});
  GradientOptions go;
  go.se = GradientSE::asymptotic;
  go.average = true;
  const GradientResult r = local_gradient(m, D.X, go);
  for (arma::uword i = 0; i < 12; ++i) {
    const GradientResult ri = local_gradient(m, D.X.row(i), go);
    EXPECT_EQ(r.gradient(i, 0), ri.gradient(0, 0));
    EXPECT_EQ(r.se(i, 0), ri.se(0, 0));
  }
  const arma::mat G = gradient_weights(m, D.X, 0);
  const arma::rowvec a = arma::mean(G, 0);
  const arma::vec e = D.y - m.fitted().col(0);
  EXPECT_NEAR(r.average(0), arma::mean(r.gradient.col(0)), 1e-13);
  const double ase = std::sqrt(arma::dot(arma::square(a), arma::square(e)));
  EXPECT_NEAR(r.average_se(0), ase, 1e-12 * ase);
}
