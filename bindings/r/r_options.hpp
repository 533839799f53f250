// attnreg R face: a named list of options -> the core's OptionValues (option_values.hpp), the
// one conversion of a keyword set that the Rcpp functions taking options use; the core maps
// the keywords onto its option struct (e.g. attention::options_from). The kernel arguments ->
// the core's KernelSpec, the one conversion every kernel estimator's Rcpp function uses.
// Defined in r_options.cpp.
#pragma once

#include <RcppArmadillo.h>

#include <string>

#include "attnreg/base/option_spec.hpp"
#include "attnreg/base/option_values.hpp"
#include "attnreg/kernels/kernel_pairs.hpp"

namespace attnreg_r {

/// NULL means "not given" (the core's default); one logical, integer, finite number or string
/// each otherwise. NA, NaN, Inf or any other entry is an error naming it.
attnreg::OptionValues option_values(const Rcpp::List& options);

/// The kernel arguments of the R functions (kernel, var_types, ukertype, okertype, n_threads,
/// algorithm, truncation) as the core's KernelSpec (attnreg/kernels/kernel_pairs.hpp), which
/// the option structs hold whole. Names are parsed here (an unknown one is an error naming its
/// argument); var_types and the ranges are checked against the data by the core. algorithm and
/// truncation default to the option table's.
attnreg::KernelSpec kernel_spec(const std::string& kernel, const std::string& var_types,
                                const std::string& ukertype, const std::string& okertype,
                                int n_threads,
                                const std::string& algorithm = attnreg::spec::local_fit::algorithm,
                                double truncation = attnreg::spec::local_fit::truncation);

}  // namespace attnreg_r
