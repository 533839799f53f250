// attnreg Python face: keywords -> the core's OptionValues (attnreg/base/option_values.hpp), the
// one conversion of a keyword set that every binding taking options uses; the core maps the
// keywords onto its option struct (e.g. attention::options_from). Defined in py_options.cpp.
#pragma once

#include <pybind11/pybind11.h>

#include "attnreg/base/option_values.hpp"

namespace attnreg_py {

/// None means "not given" (the core's default); True/False, integers (numpy's too), finite
/// floats and strings pass through. A NaN or infinite float, or another type, is an error
/// naming the keyword.
attnreg::OptionValues option_values(const pybind11::kwargs& kw);

}  // namespace attnreg_py
