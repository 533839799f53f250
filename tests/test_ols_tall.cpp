// The tall least-squares path (ols_tall: TSQR by row panels, corrected semi-normal equations,
// leverages and HC meat by panels) against OLS::fit + std_errors on random designs of several
// shapes and seeds: coefficients and standard errors to 1e-12 relative, with and without an
// intercept, weights (analytic and frequency), a near-collinear column, an exactly collinear
// column (the same aliased coefficient), a shifted origin, and X read row-major or column-major
// (identical results).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "attnreg/base/arma.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/least_squares/least_squares.hpp"
#include "attnreg/least_squares/ols_tall.hpp"

using attnreg::CovOptions;
using attnreg::CovType;
using attnreg::OLS;
using attnreg::OLSOptions;
using attnreg::StridedMatrix;
using attnreg::TallOLS;

namespace {

StridedMatrix col_major(const arma::mat& X) { return {X.memptr(), X.n_rows, X.n_cols, 1, X.n_rows}; }
// Xt = X' (p x n, column-major) holds X row-major.
StridedMatrix row_major(const arma::mat& Xt) { return {Xt.memptr(), Xt.n_cols, Xt.n_rows, Xt.n_rows, 1}; }

struct Data {
  arma::mat X;
  arma::vec y;
};

Data make(arma::uword n, arma::uword p, unsigned seed, double shift = 0.0) {
  arma::arma_rng::set_seed(seed);
  Data d;
  d.X = arma::randn(n, p) + shift;
  if (p > 1) d.X.col(1) = 0.5 * d.X.col(0) + arma::randu(n) + shift;  // correlated, skewed
  arma::vec beta(p);
  for (arma::uword j = 0; j < p; ++j) beta(j) = 1.0 + static_cast<double>(j) / (p + 1.0);
  const arma::vec noise = arma::randn(n) % (0.5 + arma::abs(d.X.col(0) - shift));  // heteroskedastic
  d.y = 2.0 + (d.X - shift) * beta + noise;
  return d;
}

void expect_rel(const arma::vec& a, const arma::vec& b, double tol, const std::string& what) {
  ASSERT_EQ(a.n_elem, b.n_elem) << what;
  for (arma::uword j = 0; j < a.n_elem; ++j) {
    if (std::isnan(b(j))) {
      EXPECT_TRUE(std::isnan(a(j))) << what << " [" << j << "]";
      continue;
    }
    EXPECT_LE(std::abs(a(j) - b(j)), tol * std::abs(b(j))) << what << " [" << j << "] " << a(j)
                                                           << " vs " << b(j);
  }
}

// ols_tall against OLS::fit for every classical/HC covariance; returns the tall fit of HC3.
void compare(const Data& d, const arma::vec& w, OLSOptions o, const std::string& what,
             double tol = 1e-12) {
  // Designs small enough that OLS's automatic precision always refines in extended precision:
  // compare the double paths.
  const double q = static_cast<double>(d.X.n_cols + (o.fit_intercept ? 1 : 0));
  if (static_cast<double>(d.X.n_rows) * q * q <= 2e6) o.precision = attnreg::Precision::Double;
  OLS ref(o);
  ref.fit(d.X, d.y, w);
  const arma::mat Xt = d.X.t();
  for (CovType t : {CovType::Classical, CovType::HC0, CovType::HC1, CovType::HC2, CovType::HC3}) {
    CovOptions c;
    c.type = t;
    const std::string tag = what + " cov " + attnreg::cov_type_name(t);
    ASSERT_TRUE(attnreg::ols_tall_applies(d.X.n_rows, ref.n_coef(), o, c)) << tag;
    const TallOLS a = attnreg::ols_tall(col_major(d.X), d.y, w, o, c);
    ASSERT_TRUE(a.done) << tag;
    EXPECT_EQ(a.rank, ref.rank()) << tag;
    expect_rel(a.coef, arma::vec(ref.coefficients().col(0)), tol, tag + " coef");
    expect_rel(a.std_errors, arma::vec(ref.std_errors(c).col(0)), tol, tag + " SE");
    // The coefficient table and fit statistics of OLS::inference.
    const attnreg::Inference ri = ref.inference(c);
    expect_rel(arma::vec(a.inf.t_value.col(0)), arma::vec(ri.t_value.col(0)), tol, tag + " t");
    expect_rel(arma::vec(a.inf.std_error.col(0)), arma::vec(ri.std_error.col(0)), tol, tag + " SE");
    expect_rel(arma::vec{a.inf.r_squared(0), a.inf.adj_r_squared(0), a.inf.sigma(0)},
               arma::vec{ri.r_squared(0), ri.adj_r_squared(0), ri.sigma(0)}, tol, tag + " R2");
    EXPECT_EQ(a.inf.df_residual, ri.df_residual) << tag;
    EXPECT_EQ(a.inf.df_inference, ri.df_inference) << tag;
    EXPECT_EQ(a.inf.cov_type, ri.cov_type) << tag;
    // Residuals: both accurate to a few ulps of y.
    const double ymax = arma::abs(d.y).max();
    EXPECT_LE(arma::abs(a.residuals - ref.residuals().col(0)).max(), 1e-13 * ymax) << tag;
    // Row-major input reads the same values in the same order: identical results.
    const TallOLS b = attnreg::ols_tall(row_major(Xt), d.y, w, o, c);
    ASSERT_TRUE(b.done) << tag;
    for (arma::uword j = 0; j < a.coef.n_elem; ++j) {
      if (!std::isnan(a.coef(j))) {
        EXPECT_EQ(a.coef(j), b.coef(j)) << tag;
        EXPECT_EQ(a.std_errors(j), b.std_errors(j)) << tag;
      }
    }
  }
}

}  // namespace

TEST(OLSTall, MatchesOLSFitOnRandomShapes) {
  struct Shape {
    arma::uword n, p;
  };
  for (const Shape s : {Shape{20000, 1}, Shape{25000, 8}, Shape{60000, 20}, Shape{50000, 40},
                        Shape{200000, 3}}) {
    for (unsigned seed : {1u, 2u}) {
      const Data d = make(s.n, s.p, seed);
      const std::string what = "n=" + std::to_string(s.n) + " p=" + std::to_string(s.p) +
                               " seed=" + std::to_string(seed);
      OLSOptions o;
      compare(d, arma::vec(), o, what + " intercept");
      o.fit_intercept = false;
      compare(d, arma::vec(), o, what + " no intercept");
    }
  }
}

TEST(OLSTall, MatchesOLSFitWithWeights) {
  const Data d = make(40000, 6, 7);
  arma::arma_rng::set_seed(8);
  arma::vec wa = 0.2 + 3.0 * arma::randu(d.X.n_rows);
  wa.head(50).zeros();  // rows of weight 0
  OLSOptions o;
  compare(d, wa, o, "analytic weights");
  arma::vec wf = arma::floor(1.0 + 4.0 * arma::randu(d.X.n_rows));
  wf.head(20).zeros();
  o.weight_type = attnreg::WeightType::Frequency;
  compare(d, wf, o, "frequency weights");
}

TEST(OLSTall, NearCollinearColumnAndShiftedOrigin) {
  Data d = make(30000, 5, 11);
  arma::arma_rng::set_seed(12);
  d.X.col(4) = d.X.col(2) + 1e-3 * arma::randn(d.X.n_rows);  // near-collinear
  OLSOptions o;
  o.precision = attnreg::Precision::Double;
  compare(d, arma::vec(), o, "near-collinear", 1e-12);
  // x + 1e3: the intercept and the slopes nearly collinear after scaling.
  const Data s = make(100000, 4, 13, 1e3);
  compare(s, arma::vec(), o, "shifted origin");
}

TEST(OLSTall, ExactlyCollinearColumnIsAliasedAsOLS) {
  Data d = make(30000, 6, 21);
  d.X.col(3) = d.X.col(0) - 2.0 * d.X.col(1);
  OLSOptions o;
  OLS ref(o);
  ref.fit(d.X, d.y);
  ASSERT_EQ(ref.rank(), 6u);
  compare(d, arma::vec(), o, "exactly collinear");
  CovOptions c;
  c.type = CovType::HC3;
  o.precision = attnreg::Precision::Double;
  const TallOLS a = attnreg::ols_tall(col_major(d.X), d.y, arma::vec(), o, c);
  ASSERT_TRUE(a.done);
  EXPECT_TRUE(std::isnan(a.coef(4)));  // column 3 of X, after the intercept: aliased as lm
  EXPECT_EQ(arma::uvec(arma::find_nonfinite(a.coef)).n_elem, 1u);
}

TEST(OLSTall, CoverageAndBadInput) {
  OLSOptions o;
  CovOptions c;
  c.type = CovType::HC3;
  EXPECT_FALSE(attnreg::ols_tall_applies(10000, 5, o, c));     // too few rows
  EXPECT_FALSE(attnreg::ols_tall_applies(20000, 5, o, c));     // n q^2 small: OLS goes extended
  EXPECT_TRUE(attnreg::ols_tall_applies(100000, 21, o, c));
  EXPECT_FALSE(attnreg::ols_tall_applies(100000, 2001, o, c)); // n < 50 q
  c.type = CovType::HAC;
  EXPECT_FALSE(attnreg::ols_tall_applies(100000, 21, o, c));
  c.type = CovType::CR1;
  EXPECT_FALSE(attnreg::ols_tall_applies(100000, 21, o, c));
  o.precision = attnreg::Precision::Extended;
  c.type = CovType::HC3;
  EXPECT_FALSE(attnreg::ols_tall_applies(100000, 21, o, c));

  o = OLSOptions{};
  Data d = make(40000, 8, 31);
  d.X(123, 4) = std::nan("");
  try {
    attnreg::ols_tall(col_major(d.X), d.y, arma::vec(), o, c);
    FAIL() << "no error";
  } catch (const attnreg::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("X"), std::string::npos);
  }
  d = make(40000, 8, 31);
  // Ill-conditioned with n q^2 small enough that OLS's automatic precision refines in
  // extended precision: the tall path declines.
  d.X.col(5) = d.X.col(2) + 1e-7 * arma::randn(d.X.n_rows);
  const TallOLS a = attnreg::ols_tall(col_major(d.X), d.y, arma::vec(), o, c);
  EXPECT_FALSE(a.done);
}
