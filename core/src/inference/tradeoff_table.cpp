// The trade-off curve's matrix as named fields: the one place that knows its column order.
#include "attnreg/inference/tradeoff_table.hpp"

namespace attnreg {

std::vector<std::pair<std::string, const arma::vec*>> TradeoffTable::fields() const {
  return {{"bandwidth", &bandwidth}, {"bias2", &bias2}, {"variance", &variance}, {"mse", &mse},
          {"cv", &cv},               {"gcv", &gcv},     {"df", &df}};
}

TradeoffTable tradeoff_table(const arma::mat& X, const arma::vec& y, const arma::vec& bandwidths,
                             const LocalFitOptions& fit_options, const arma::mat& X_eval,
                             VarianceKind kind, int pilot_degree, double pilot_bandwidth) {
  const arma::mat t = tradeoff_curve(X, y, bandwidths, fit_options, X_eval, kind, pilot_degree,
                                     pilot_bandwidth);
  TradeoffTable r;
  arma::vec* cols[] = {&r.bandwidth, &r.bias2, &r.variance, &r.mse, &r.cv, &r.gcv, &r.df};
  for (arma::uword j = 0; j < 7; ++j) *cols[j] = t.col(j);
  return r;
}

}  // namespace attnreg
