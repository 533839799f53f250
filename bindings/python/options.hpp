// attnreg Python face: keywords -> the core's OptionValues (attnreg/base/option_values.hpp), the
// one conversion of a keyword set that every binding taking options uses; the core maps the
// keywords onto its option struct (e.g. attention::options_from). The kernel keywords -> the
// core's KernelSpec, the one conversion every kernel estimator's binding uses. Defined in
// py_options.cpp.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "attnreg/base/option_spec.hpp"
#include "attnreg/base/option_values.hpp"
#include "attnreg/kernels/kernel_pairs.hpp"

namespace attnreg_py {

/// None means "not given" (the core's default); True/False, integers (numpy's too), finite
/// floats and strings pass through. A NaN or infinite float, or another type, is an error
/// naming the keyword.
attnreg::OptionValues option_values(const pybind11::kwargs& kw);

/// The kernel keywords of the Python estimators (kernel, var_types, unordered_kernel,
/// ordered_kernel, n_threads, algorithm, truncation) as the core's KernelSpec
/// (attnreg/kernels/kernel_pairs.hpp), which the option structs hold whole. Names are parsed
/// here (an unknown one is an error naming its keyword); var_types and the ranges are checked
/// against the data by the core. algorithm and truncation default to the option table's.
attnreg::KernelSpec kernel_spec(const std::string& kernel, const std::string& var_types,
                                const std::string& unordered_kernel,
                                const std::string& ordered_kernel, int n_threads,
                                const std::string& algorithm = attnreg::spec::local_fit::algorithm,
                                double truncation = attnreg::spec::local_fit::truncation);
/// The same for the estimators of continuous columns only (the column types and categorical
/// kernels at the option table's defaults).
attnreg::KernelSpec continuous_kernel_spec(
    const std::string& kernel, int n_threads,
    const std::string& algorithm = attnreg::spec::local_fit::algorithm,
    double truncation = attnreg::spec::local_fit::truncation);

}  // namespace attnreg_py
