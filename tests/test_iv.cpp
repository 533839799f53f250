// Instrumental variables (attnreg::IVRegression) against the k-class estimator written out
// directly: fixed effects as dummy columns, P_Z by the pseudo-inverse (oracle only; fine for
// these small, well-conditioned designs, condition numbers below 1e3, so 1e-8 relative is a
// bound with margin), LIML's kappa from the generalized eigenvalue problem.
#include <gtest/gtest.h>

#include "attnreg/base/arma.hpp"
#include <string>

#include "attnreg/base/error.hpp"
#include "attnreg/least_squares/iv.hpp"

using attnreg::CovOptions;
using attnreg::CovType;
using attnreg::IVEstimator;
using attnreg::IVOptions;
using attnreg::IVRegression;

namespace {

struct Data {
  arma::mat X1, X2, Z2;
  arma::vec y;
  arma::umat codes;
  arma::mat D;  // dummies of codes (all levels)
};

Data make(arma::uword n, arma::uword levels, unsigned seed) {
  arma::arma_rng::set_seed(seed);
  Data d;
  d.X1 = arma::randn(n, 1);
  d.Z2 = arma::randn(n, 2);
  const arma::vec u = arma::randn(n);
  d.codes.set_size(n, levels > 0 ? 1 : 0);
  d.D.set_size(n, levels);
  d.D.zeros();
  arma::vec fe(n, arma::fill::zeros);
  for (arma::uword i = 0; i < n && levels > 0; ++i) {
    d.codes(i, 0) = i % levels;
    d.D(i, i % levels) = 1.0;
    fe(i) = std::sin(static_cast<double>(i % levels));
  }
  d.X2 = d.Z2 * arma::vec{1.0, 0.6} + 0.3 * d.X1 + 0.8 * u + arma::randn(n) + arma::cos(fe);
  d.y = 1.0 + 0.5 * d.X1 + 2.0 * d.X2 + fe + u;
  return d;
}

// k-class coefficients on [exo, X2] with exo = [D, X1] or [1, X1].
arma::vec oracle(const Data& d, bool liml) {
  const arma::uword n = d.y.n_elem;
  const arma::mat exo = d.D.n_cols > 0 ? arma::mat(arma::join_rows(d.D, d.X1))
                                       : arma::mat(arma::join_rows(arma::ones(n), d.X1));
  const arma::mat X = arma::join_rows(exo, d.X2), Z = arma::join_rows(exo, d.Z2);
  const arma::mat Pz = Z * arma::pinv(Z);
  const arma::mat Mz = arma::eye(n, n) - Pz;
  double k = 1.0;
  if (liml) {
    const arma::mat Y = arma::join_rows(d.y, d.X2);
    const arma::mat Me = arma::eye(n, n) - exo * arma::pinv(exo);
    const arma::cx_vec ev = arma::eig_gen(arma::solve(Y.t() * Mz * Y, Y.t() * Me * Y));
    k = arma::min(arma::real(ev));
  }
  const arma::mat A = X.t() * (arma::eye(n, n) - k * Mz);
  return arma::solve(A * X, A * d.y);
}

}  // namespace

TEST(IVRegression, TwoStageAndLimlMatchTheDummyOracle) {
  for (const arma::uword levels : {0u, 7u}) {
    const Data d = make(150, levels, 3 + levels);
    for (const bool liml : {false, true}) {
      IVOptions o;
      o.estimator = liml ? IVEstimator::LIML : IVEstimator::TSLS;
      IVRegression m(o);
      m.fit(d.X1, d.X2, d.Z2, d.y, d.codes);
      const arma::vec b = oracle(d, liml);
      const arma::vec slopes = b.tail(2), ours = m.coefficients().tail(2);
      for (arma::uword j = 0; j < 2; ++j) {
        EXPECT_NEAR(ours(j), slopes(j), 1e-8 * std::abs(slopes(j))) << levels << liml;
      }
    }
  }
}

TEST(IVRegression, AttentionWeightsReproducePredictions) {
  const Data d = make(120, 6, 11);
  IVRegression m;
  m.fit(d.X1, d.X2, d.Z2, d.y, d.codes);
  const arma::mat A = m.attention_weights(d.X1, d.X2, d.codes);
  const arma::vec p = m.predict(d.X1, d.X2, d.codes);
  EXPECT_LT(arma::abs(A * d.y - p).max(), 1e-9 * arma::abs(d.y).max());
  EXPECT_LT(arma::abs(p - m.fitted()).max(), 1e-9 * arma::abs(d.y).max());
}

TEST(IVRegression, BadInputIsNamed) {
  const Data d = make(100, 5, 2);
  IVRegression m;
  EXPECT_THROW(m.fit(d.X1, arma::join_rows(d.X2, d.X1 * 0.5 + d.Z2.col(0)), d.Z2.col(0), d.y),
               attnreg::InvalidArgument);
  arma::mat Zbad = d.Z2;
  for (arma::uword i = 0; i < Zbad.n_rows; ++i) Zbad(i, 1) = static_cast<double>(d.codes(i, 0));
  try {
    m.fit(d.X1, d.X2, Zbad, d.y, d.codes, arma::vec(), {"x1", "x2", "z1", "zfe"});
    FAIL() << "an instrument constant within the levels was accepted";
  } catch (const attnreg::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("instrument zfe: is collinear with the fixed effects"),
              std::string::npos)
        << e.what();
  }
  m.fit(d.X1, d.X2, d.Z2, d.y);
  CovOptions hac;
  hac.type = CovType::HAC;
  EXPECT_THROW(m.covariance(hac), attnreg::InvalidArgument);
}
