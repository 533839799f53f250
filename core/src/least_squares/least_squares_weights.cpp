// Observation weights of the least-squares fits: their kind (analytic or frequency, as Stata's
// aweight and fweight) and the checks every path applies before a fit.
#include <cctype>
#include <cmath>
#include <sstream>

#include "attnreg/base/error.hpp"
#include "attnreg/least_squares/least_squares.hpp"
#include "attnreg/base/names.hpp"

namespace attnreg {

WeightType parse_weight_type(const std::string& name) {
  const std::string s = detail::lower_case(name);
  if (s == "analytic" || s == "aweight") return WeightType::Analytic;
  if (s == "frequency" || s == "fweight") return WeightType::Frequency;
  throw InvalidArgument("weight_type: must be \"analytic\" (Stata's aweight) or \"frequency\" "
                        "(Stata's fweight), got '" + name + "'");
}

void check_frequency_weights(const arma::vec& w, const std::string& arg) {
  for (arma::uword i = 0; i < w.n_elem; ++i) {
    if (std::isfinite(w(i)) && w(i) != std::floor(w(i))) {
      std::ostringstream msg;
      msg << arg << ": weight " << (i + 1) << " is " << w(i)
          << "; frequency weights count copies of a row and must be whole numbers (as Stata's "
             "fweight). For non-integer weights use analytic weights (weight_type = "
             "\"analytic\", Stata's aweight), or round them if they are counts";
      throw InvalidArgument(msg.str());
    }
  }
}

void check_weights(const arma::vec& w, arma::uword n, const std::string& arg) {
  if (w.n_elem != n) {
    std::ostringstream msg;
    msg << arg << ": has length " << w.n_elem << " but there are " << n
        << " rows (pass one weight per row)";
    throw InvalidArgument(msg.str());
  }
  bool any_positive = false;
  for (arma::uword i = 0; i < n; ++i) {
    const double v = w(i);
    if (!std::isfinite(v) || v < 0.0) {
      std::ostringstream msg;
      msg << arg << ": weight " << (i + 1) << " is " << v
          << "; weights must be finite and >= 0 (drop or fix that row)";
      throw InvalidArgument(msg.str());
    }
    any_positive = any_positive || v > 0.0;
  }
  if (!any_positive) {
    throw InvalidArgument(arg + ": all weights are zero; at least one row needs a positive weight");
  }
}

}  // namespace attnreg
