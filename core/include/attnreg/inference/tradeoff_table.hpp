// attnreg: the bias-variance trade-off over a bandwidth grid as a named record (the columns of
// tradeoff_curve, diagnostics.hpp, by name), so the faces read fields by name and no face
// relabels a matrix by column position.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "attnreg/base/arma.hpp"
#include "attnreg/inference/diagnostics.hpp"

namespace attnreg {

struct TradeoffTable {
  arma::vec bandwidth;  ///< the grid
  arma::vec bias2;      ///< integrated squared bias (mean over the eval points)
  arma::vec variance;   ///< integrated variance
  arma::vec mse;        ///< bias2 + variance
  arma::vec cv;         ///< leave-one-out CV score
  arma::vec gcv;        ///< generalised CV score
  arma::vec df;         ///< tr L, effective degrees of freedom

  /// (name, column) in the table's order, for the faces' data frames.
  std::vector<std::pair<std::string, const arma::vec*>> fields() const;
};

/// tradeoff_curve() as a TradeoffTable (same arguments, same numbers).
TradeoffTable tradeoff_table(const arma::mat& X, const arma::vec& y, const arma::vec& bandwidths,
                             const LocalFitOptions& fit_options, const arma::mat& X_eval,
                             VarianceKind kind, int pilot_degree, double pilot_bandwidth);

}  // namespace attnreg
