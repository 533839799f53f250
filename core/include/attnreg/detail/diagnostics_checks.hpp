// attnreg: the argument checks shared by the pointwise diagnostics (diagnostics.cpp) and the
// bootstrap bands (bootstrap_bands.cpp).
#pragma once

#include <cmath>
#include <string>


#include "attnreg/base/arma.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/solve/local_fit.hpp"

namespace attnreg::detail {

// One regressor, continuous: the case of the univariate pilot (nprobust's lprobust).
inline bool one_continuous(const LocalPolynomial& model) {
  return model.space().var_types().size() == 1 && model.space().n_continuous() == 1;
}

inline arma::vec output_column(const arma::mat& Y, arma::uword output, const char* what) {
  check::require(output < Y.n_cols, "output",
                 std::string("is ") + std::to_string(output) + " but the model has " +
                     std::to_string(Y.n_cols) + " output column(s) (" + what + ")");
  return Y.col(output);
}

// "evaluation row j+1 x = (x_1, ..., x_d)": how error messages name a point of X_eval.
inline std::string evaluation_point(const arma::mat& X_eval, arma::uword j) {
  std::string s = "evaluation row " + std::to_string(j + 1) + " x = (";
  for (arma::uword c = 0; c < X_eval.n_cols; ++c)
    s += (c ? ", " : "") + std::to_string(X_eval(j, c));
  return s + ")";
}

inline void check_level(double level) {
  check::require(std::isfinite(level) && level > 0 && level < 1, "level",
                 "must be in (0, 1), e.g. 0.95");
}

}  // namespace attnreg::detail
