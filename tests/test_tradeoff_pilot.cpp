// tradeoff_curve computes the pilot fit once per call and reuses it across its bandwidth grid:
// every row must equal, bit for bit, pointwise_diagnostics / global_diagnostics of a model fitted
// at that bandwidth alone (which computes its own pilot).
#include <gtest/gtest.h>

#include "attnreg/bandwidth/dpi_bandwidth.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/inference/diagnostics.hpp"

using namespace attnreg;

namespace {

// One row of the trade-off table computed without any sharing between bandwidths.
arma::rowvec direct_row(const arma::mat& X, const arma::vec& y, double h,
                        const LocalFitOptions& fit_options, const arma::mat& Xe, VarianceKind kind,
                        int pilot_degree, double b) {
  LocalFitOptions fo = fit_options;
  fo.compute_fitted = true;
  LocalPolynomial m(fo);
  m.fit(X, arma::mat(y), arma::vec(X.n_cols, arma::fill::value(h)));
  PointwiseOptions po;
  po.kind = kind;
  po.pilot_degree = pilot_degree;
  po.pilot_bandwidth = b;
  const PointwiseDiagnostics d = pointwise_diagnostics(m, Xe, po);
  const GlobalDiagnostics g = global_diagnostics(m);
  const double b2 = arma::mean(arma::square(d.bias)), v = arma::mean(arma::square(d.se));
  return arma::rowvec{h, b2, v, b2 + v, g.cv, g.gcv, g.trace_L};
}

}  // namespace

TEST(TradeoffPilot, GridRowsEqualSeparateFitsExactly) {
  struct Case {
    arma::uword n;
    int degree, pilot_degree;
    VarianceKind kind;
    double pilot_bandwidth;  // 0: twice the rule of thumb
    bool ties;
    unsigned seed;
  };
  const Case cases[] = {
      {60, 0, -1, VarianceKind::homoskedastic, 0.0, false, 1},
      {90, 1, -1, VarianceKind::hc3, 0.0, true, 2},
      {75, 1, 4, VarianceKind::hc0, 0.3, true, 3},
      {120, 2, -1, VarianceKind::homoskedastic, 0.0, false, 4},
  };
  for (const Case& c : cases) {
    arma::arma_rng::set_seed(c.seed);
    arma::vec x = arma::randu<arma::vec>(c.n) + 1e3;  // shifted origin
    if (c.ties) x = arma::round(x * 16) / 16;          // tied training values
    const arma::mat X(x);
    const arma::vec y = arma::sin(6 * x) + 0.2 * arma::randn<arma::vec>(c.n);
    // Eval rows with repeats (the distinct-row path) and in no particular order.
    arma::mat Xe = arma::join_cols(arma::linspace<arma::mat>(x.min(), x.max(), 9),
                                   arma::mat(x.head(4)));
    Xe = arma::join_cols(Xe, arma::mat(x.head(2)));
    const arma::vec hs = {0.2, 0.08, 0.4, 0.08, 0.12};  // not sorted, one repeat
    LocalFitOptions fo;
    fo.degree = c.degree;
    const arma::mat t =
        tradeoff_curve(X, y, hs, fo, Xe, c.kind, c.pilot_degree, c.pilot_bandwidth);
    const double b =
        c.pilot_bandwidth > 0 ? c.pilot_bandwidth
                              : 2 * rule_of_thumb_bandwidth(x, fo.kernel.kernel);
    ASSERT_EQ(t.n_rows, hs.n_elem);
    for (arma::uword k = 0; k < hs.n_elem; ++k) {
      const arma::rowvec want = direct_row(X, y, hs(k), fo, Xe, c.kind, c.pilot_degree, b);
      for (arma::uword j = 0; j < t.n_cols; ++j)
        EXPECT_EQ(t(k, j), want(j)) << "seed " << c.seed << " h " << hs(k) << " col " << j;
    }
    // A second call with other eval rows gets its own pilot, not the first call's.
    const arma::mat Xe2 = arma::linspace<arma::mat>(x.min() + 0.1, x.max() - 0.1, 7);
    const arma::mat t2 = tradeoff_curve(X, y, hs.head(2), fo, Xe2, c.kind, c.pilot_degree,
                                        c.pilot_bandwidth);
    for (arma::uword k = 0; k < 2; ++k) {
      const arma::rowvec want = direct_row(X, y, hs(k), fo, Xe2, c.kind, c.pilot_degree, b);
      for (arma::uword j = 0; j < t2.n_cols; ++j) EXPECT_EQ(t2(k, j), want(j));
    }
  }
}

TEST(TradeoffPilot, PilotErrorStillNamesTheArgument) {
  // A pilot bandwidth too small for any training point: the first bandwidth's pilot refuses.
  const arma::vec x = {0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0};
  const arma::vec y = arma::square(x);
  const arma::mat Xe(arma::vec{0.5, 3.5});
  LocalFitOptions fo;
  fo.kernel.kernel = Kernel(KernelType::epanechnikov);
  try {
    tradeoff_curve(arma::mat(x), y, arma::vec{1.5, 3.0}, fo, Xe, VarianceKind::homoskedastic, -1,
                   0.1);
    FAIL() << "expected NumericalError";
  } catch (const NumericalError& e) {
    EXPECT_NE(std::string(e.what()).find("pilot_bandwidth"), std::string::npos) << e.what();
  }
}
