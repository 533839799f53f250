// attnreg: the floating-point constants the core uses everywhere (one definition, so that the
// translation units can also be compiled together, as a unity build does).
#pragma once

#include <limits>

namespace attnreg {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace attnreg
