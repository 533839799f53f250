// attnreg: case-insensitive option names (the faces pass "HC3", "hc3", "Gaussian" alike) and
// the one way the core parses a name into its enum, with the error every such parser gives.
#pragma once

#include <cctype>
#include <initializer_list>
#include <string>
#include <utility>

#include "attnreg/base/error.hpp"

namespace attnreg::detail {

/// `name` in lower case (ASCII letters; other bytes unchanged).
inline std::string lower_case(const std::string& name) {
  std::string s;
  s.reserve(name.size());
  for (char ch : name) s += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

/// The value whose spelling in `table` equals `name` ignoring case; otherwise InvalidArgument
/// "<arg>: unknown <what> '<name>'; use <hint>".
template <class E>
E option_from_name(const std::string& name,
                   std::initializer_list<std::pair<const char*, E>> table, const std::string& arg,
                   const std::string& what, const std::string& hint) {
  const std::string s = lower_case(name);
  for (const auto& entry : table)
    if (s == entry.first) return entry.second;
  throw InvalidArgument(arg + ": unknown " + what + " '" + name + "'; use " + hint);
}

}  // namespace attnreg::detail
