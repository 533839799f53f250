// attnreg: attention::Options from a face's keyword set (option_values.hpp). The keywords are
// the rows of the attention family of option_spec.hpp (method, causal, window, scale, ...);
// a keyword not given keeps the Options default, which comes from the same table. The ridge is
// not among them: a scalar or a per-query array, the faces set it on the result.
#pragma once

#include "attnreg/attention/attention.hpp"
#include "attnreg/base/option_values.hpp"

namespace attnreg {
namespace attention {

/// Parse and check the keywords; an unknown keyword or a value of the wrong type is an
/// InvalidArgument naming it. `algorithm_arg`: the faces' name of the LLA algorithm (their lla()
/// calls it `method`), used in its error message.
Options options_from(const OptionValues& kw, const std::string& algorithm_arg = "method");

}  // namespace attention
}  // namespace attnreg
