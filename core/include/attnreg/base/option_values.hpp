// attnreg: a keyword set from a face (Python keywords, an R named list) on its way to a C++
// option struct. Each face converts its keywords into OptionValues with one helper
// (bindings/python/py_options.cpp, bindings/r/r_options.cpp); the core turns them into the
// struct (e.g. attention::options_from), taking every default it is not given from the option
// tables (option_spec.hpp) and refusing a keyword the family does not have.
#pragma once

#include <map>
#include <string>
#include <variant>

namespace attnreg {

using OptionValue = std::variant<long long, double, bool, std::string>;

class OptionValues {
 public:
  /// Set `name`; a later set replaces an earlier one.
  void set(const std::string& name, OptionValue value) { values_[name] = std::move(value); }
  bool has(const std::string& name) const { return values_.count(name) != 0; }

  /// The value of `name` as the type asked for, or `fallback` when it was not given. A value
  /// of another type is an InvalidArgument naming the keyword (an integer-valued double is
  /// accepted as an integer, an integer as a double: R's 64 and 64L are the same option).
  long long integer(const std::string& name, long long fallback) const;
  double real(const std::string& name, double fallback) const;
  bool flag(const std::string& name, bool fallback) const;
  std::string text(const std::string& name, const std::string& fallback) const;

  /// Throw InvalidArgument naming the first keyword that is not a row of `family`
  /// (option_spec()) and not in `extra`, listing the family's keywords.
  void require_known(const std::string& family, const std::string& extra = "") const;

 private:
  std::map<std::string, OptionValue> values_;
};

}  // namespace attnreg
