// OptionValues: typed reads of a face's keyword set, with errors that name the keyword.
#include "attnreg/base/option_values.hpp"

#include <cmath>
#include <sstream>

#include "attnreg/base/error.hpp"
#include "attnreg/base/option_spec.hpp"

namespace attnreg {
namespace {

const char* kind(const OptionValue& v) {
  switch (v.index()) {
    case 0: return "an integer";
    case 1: return "a number";
    case 2: return "a logical";
    default: return "a string";
  }
}

[[noreturn]] void wrong_type(const std::string& name, const OptionValue& v, const char* want) {
  throw InvalidArgument(name + ": must be " + want + ", got " + kind(v));
}

}  // namespace

long long OptionValues::integer(const std::string& name, long long fallback) const {
  const auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  if (const auto* i = std::get_if<long long>(&it->second)) return *i;
  if (const auto* d = std::get_if<double>(&it->second)) {
    if (std::isfinite(*d) && *d == std::floor(*d) && std::fabs(*d) < 9.0e15)
      return static_cast<long long>(*d);
    throw InvalidArgument(name + ": must be a whole number, got " + std::to_string(*d));
  }
  wrong_type(name, it->second, "an integer");
}

double OptionValues::real(const std::string& name, double fallback) const {
  const auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  if (const auto* d = std::get_if<double>(&it->second)) return *d;
  if (const auto* i = std::get_if<long long>(&it->second)) return static_cast<double>(*i);
  wrong_type(name, it->second, "a number");
}

bool OptionValues::flag(const std::string& name, bool fallback) const {
  const auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  if (const auto* b = std::get_if<bool>(&it->second)) return *b;
  // 0 and 1 as integers too (Python's causal=1 was accepted as True before options went
  // through this set).
  if (const auto* i = std::get_if<long long>(&it->second)) {
    if (*i == 0 || *i == 1) return *i == 1;
  }
  wrong_type(name, it->second, "TRUE/FALSE (True/False)");
}

std::string OptionValues::text(const std::string& name, const std::string& fallback) const {
  const auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  if (const auto* s = std::get_if<std::string>(&it->second)) return *s;
  wrong_type(name, it->second, "a string");
}

void OptionValues::require_known(const std::string& family, const std::string& extra) const {
  const std::vector<OptionSpec> rows = option_spec();
  std::ostringstream known;
  for (const auto& r : rows)
    if (r.family == family) known << (known.tellp() > 0 ? ", " : "") << r.name;
  for (const auto& kv : values_) {
    bool found = (" " + extra + " ").find(" " + kv.first + " ") != std::string::npos;
    for (const auto& r : rows) found = found || (r.family == family && r.name == kv.first);
    if (!found)
      throw InvalidArgument(kv.first + ": not an option of " + family + " (options: " +
                            known.str() + ")");
  }
}

}  // namespace attnreg
