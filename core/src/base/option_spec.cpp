// The option tables of option_spec.hpp as rows at run time (for the faces' drift tests).
#include "attnreg/base/option_spec.hpp"

#include <cmath>

namespace attnreg {
namespace {

OptionSpec row(const char* family, const char* name, bool none_ok, const char* allowed,
               const char* doc) {
  OptionSpec r;
  r.family = family;
  r.name = name;
  r.none_ok = none_ok;
  r.allowed = allowed;
  r.doc = doc;
  r.python = name;
  r.r = name;
  return r;
}

void set_default(OptionSpec& r, spec::Int v) {
  r.type = "int";
  r.number = static_cast<double>(v);
}
void set_default(OptionSpec& r, spec::Real v) {
  r.type = "double";
  r.is_none = std::isnan(v);
  r.number = v;
}
void set_default(OptionSpec& r, spec::Flag v) {
  r.type = "bool";
  r.flag = v;
}
void set_default(OptionSpec& r, spec::Text v) {
  r.type = "string";
  r.text = v;
}

}  // namespace

std::vector<OptionSpec> option_spec() {
  std::vector<OptionSpec> out;
#define ATTNREG_SPEC_ROW(name, type, value, none_ok, allowed, doc) \
  out.push_back(row(family_name, #name, none_ok, allowed, doc));   \
  set_default(out.back(), spec::type(value));
#define ATTNREG_SPEC_FAMILY(family, table)  \
  {                                         \
    const char* family_name = #family;      \
    using spec::kNone;                      \
    table(ATTNREG_SPEC_ROW)                 \
  }
  ATTNREG_OPTION_FAMILIES(ATTNREG_SPEC_FAMILY)
#undef ATTNREG_SPEC_FAMILY
#undef ATTNREG_SPEC_ROW
#define ATTNREG_SPEC_SPELLING(fam, key, python_name, r_name) \
  for (OptionSpec & row_ : out) {                            \
    if (row_.family == #fam && row_.name == #key) {          \
      row_.python = python_name;                             \
      row_.r = r_name;                                       \
    }                                                        \
  }
  ATTNREG_FACE_SPELLINGS(ATTNREG_SPEC_SPELLING)
#undef ATTNREG_SPEC_SPELLING
  return out;
}

}  // namespace attnreg
