#include "attnreg/kernels/kernel.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "attnreg/base/error.hpp"
#include "attnreg/base/names.hpp"

namespace attnreg {

double Kernel::mu2() const {
  return dispatch_kernel(type, [](auto k) { return decltype(k)::mu2(); });
}

double Kernel::roughness() const {
  return dispatch_kernel(type, [](auto k) { return decltype(k)::roughness(); });
}

bool Kernel::compact() const {
  return dispatch_kernel(type, [](auto k) { return decltype(k)::compact; });
}

int Kernel::order() const {
  return dispatch_kernel(type, [](auto k) { return decltype(k)::order; });
}

bool Kernel::nonnegative() const {
  return dispatch_kernel(type, [](auto k) { return decltype(k)::nonnegative; });
}

const char* Kernel::name() const {
  return dispatch_kernel(type, [](auto k) { return decltype(k)::name; });
}

void Kernel::require_nonnegative(const std::string& what, const std::string& arg) const {
  if (nonnegative()) return;
  throw InvalidArgument(arg + ": " + what + " needs a nonnegative kernel, and '" + name() +
                        "' (order " + std::to_string(order()) +
                        ") takes negative values; use a second-order kernel such as 'gaussian' "
                        "or 'epanechnikov'");
}

void Kernel::require_second_order(const std::string& what, const std::string& arg) const {
  if (order() == 2) return;
  throw InvalidArgument(arg + ": " + what + " needs a second-order kernel (its constants divide "
                        "by mu2(K)), and '" + name() + "' is of order " +
                        std::to_string(order()) +
                        " (mu2 = 0); use cv_ls, or a second-order kernel such as 'gaussian'");
}

std::vector<std::string> Kernel::names() {
  std::vector<std::string> out;
#define ATTNREG_KERNEL_NAME(id, T) out.emplace_back(kernels::T::name);
  ATTNREG_KERNEL_LIST(ATTNREG_KERNEL_NAME)
#undef ATTNREG_KERNEL_NAME
  return out;
}

Kernel Kernel::from_name(const std::string& name, const std::string& arg) {
  const std::string s = detail::lower_case(name);
  std::size_t index = 0;
  for (const std::string& n : names()) {
    const KernelType t = static_cast<KernelType>(index++);
    if (s == n) return Kernel(t);
    std::istringstream aliases(dispatch_kernel(t, [](auto k) { return decltype(k)::aliases; }));
    std::string a;
    while (aliases >> a)
      if (s == a) return Kernel(t);
  }
  std::ostringstream msg;
  msg << "unknown kernel '" << name << "' (choose one of";
  for (const auto& n : names()) msg << ' ' << n;
  msg << ')';
  throw InvalidArgument(arg + ": " + msg.str());
}

std::vector<VarType> parse_var_types(const std::string& s, std::size_t n_cols,
                                     const std::string& arg) {
  std::vector<VarType> out;
  if (s.empty()) return std::vector<VarType>(n_cols, VarType::continuous);
  for (std::size_t k = 0; k < s.size(); ++k) {
    const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(s[k])));
    if (c == ' ' || c == '\t') continue;
    if (c == 'c') {
      out.push_back(VarType::continuous);
    } else if (c == 'u') {
      out.push_back(VarType::unordered);
    } else if (c == 'o') {
      out.push_back(VarType::ordered);
    } else {
      std::ostringstream msg;
      msg << "character '" << s[k] << "' at position " << (k + 1) << " of \"" << s
          << "\" is not a column type (use c = continuous, u = unordered, o = ordered)";
      throw InvalidArgument(arg + ": " + msg.str());
    }
  }
  if (n_cols != 0 && out.size() != n_cols) {
    std::ostringstream msg;
    msg << "\"" << s << "\" describes " << out.size() << " columns but X has " << n_cols
        << " (give one of c/u/o per column)";
    throw InvalidArgument(arg + ": " + msg.str());
  }
  return out;
}

std::string format_var_types(const std::vector<VarType>& types) {
  std::string s;
  for (VarType t : types) s.push_back(static_cast<char>(t));
  return s;
}

void CategoricalKernel::check_bandwidth(double lambda, int n_levels,
                                        const std::string& arg) const {
  const double hi = max_bandwidth(n_levels);
  // Wang-van Ryzin and the normalised Li-Racine kernel are identically 0 at lambda = 1, so
  // their range is open there.
  const bool open_top = this->open_top();
  if (std::isfinite(lambda) && lambda >= 0.0 && (open_top ? lambda < hi : lambda <= hi)) return;
  std::ostringstream msg;
  msg << arg << ": the " << name() << " kernel needs a bandwidth in [0, " << hi
      << (open_top ? ")" : "]");
  if (type == CategoricalKernelType::aitchison_aitken)
    msg << " ((c-1)/c with c = " << n_levels << " levels)";
  msg << ", got " << lambda << " (0 = no smoothing across levels"
      << (open_top ? "" : ", the upper end smooths the column away") << ")";
  throw InvalidArgument(msg.str());
}

const char* CategoricalKernel::name() const {
  switch (type) {
    case CategoricalKernelType::aitchison_aitken: return "aitchison_aitken";
    case CategoricalKernelType::li_racine_unordered: return "li_racine";
    case CategoricalKernelType::wang_van_ryzin: return "wang_van_ryzin";
    case CategoricalKernelType::li_racine_ordered: return "li_racine";
    case CategoricalKernelType::li_racine_normalized: return "li_racine_normalized";
  }
  return "?";
}

CategoricalKernel CategoricalKernel::from_name(const std::string& name, bool ordered,
                                               const std::string& arg) {
  std::string s = detail::lower_case(name);
  s.erase(std::remove(s.begin(), s.end(), '_'), s.end());
  s.erase(std::remove(s.begin(), s.end(), '-'), s.end());
  if (s == "liracine")
    return CategoricalKernel(ordered ? CategoricalKernelType::li_racine_ordered
                                     : CategoricalKernelType::li_racine_unordered);
  if (!ordered && s == "aitchisonaitken")
    return CategoricalKernel(CategoricalKernelType::aitchison_aitken);
  if (ordered && (s == "wangvanryzin" || s == "wangryzin"))
    return CategoricalKernel(CategoricalKernelType::wang_van_ryzin);
  if (ordered && (s == "liracinenormalized" || s == "liracinenormalised" || s == "nliracine"))
    return CategoricalKernel(CategoricalKernelType::li_racine_normalized);
  throw InvalidArgument(arg + ": unknown " + (ordered ? "ordered" : "unordered") +
                        " categorical kernel '" + name + "' (choose " +
                        (ordered ? "li_racine, li_racine_normalized or wang_van_ryzin"
                                 : "aitchison_aitken or li_racine") +
                        ")");
}

}  // namespace attnreg
