#include "attnreg/base/error.hpp"

#include <sstream>

namespace attnreg {
namespace check {

void all_finite(const arma::mat& a, const std::string& arg) {
  if (a.is_finite()) return;
  for (arma::uword j = 0; j < a.n_cols; ++j) {
    for (arma::uword i = 0; i < a.n_rows; ++i) {
      if (!std::isfinite(a(i, j))) {
        std::ostringstream msg;
        msg << arg << ": contains " << (std::isnan(a(i, j)) ? "NaN" : "Inf") << " at row "
            << (i + 1) << ", column " << (j + 1)
            << " (remove or impute missing/infinite values first)";
        throw InvalidArgument(msg.str());
      }
    }
  }
}

void all_finite(const arma::vec& a, const std::string& arg) {
  if (a.is_finite()) return;
  for (arma::uword i = 0; i < a.n_elem; ++i) {
    if (!std::isfinite(a(i))) {
      std::ostringstream msg;
      msg << arg << ": contains " << (std::isnan(a(i)) ? "NaN" : "Inf") << " at position "
          << (i + 1) << " (remove or impute missing/infinite values first)";
      throw InvalidArgument(msg.str());
    }
  }
}

void rows_match(const arma::mat& a, arma::uword n, const std::string& arg,
                const std::string& other) {
  if (a.n_rows == n) return;
  std::ostringstream msg;
  msg << arg << ": has " << a.n_rows << " rows but " << other << " has " << n
      << " (pass one row per observation in both)";
  throw InvalidArgument(msg.str());
}

}  // namespace check
}  // namespace attnreg
