// attnreg R face: a named list of options -> the core's OptionValues (option_values.hpp), the
// one conversion of a keyword set that the Rcpp functions taking options use; the core maps
// the keywords onto its option struct (e.g. attention::options_from). Defined in r_options.cpp.
#pragma once

#include <RcppArmadillo.h>

#include "attnreg/base/option_values.hpp"

namespace attnreg_r {

/// NULL means "not given" (the core's default); one logical, integer, finite number or string
/// each otherwise. NA, NaN, Inf or any other entry is an error naming it.
attnreg::OptionValues option_values(const Rcpp::List& options);

}  // namespace attnreg_r
