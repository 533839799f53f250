// attnreg: the multi-indices of a multivariate polynomial basis (core/include/attnreg/detail/
// monomials.hpp).
#include "attnreg/detail/monomials.hpp"

namespace attnreg::detail {

std::vector<std::vector<int>> monomials(std::size_t dc, int q) {
  std::vector<std::vector<int>> out;
  std::vector<int> a(dc, 0);
  struct Rec {
    std::vector<std::vector<int>>& out;
    std::vector<int>& a;
    std::size_t dc;
    void operator()(std::size_t c, int left) const {
      if (c + 1 == dc) {
        a[c] = left;
        out.push_back(a);
        return;
      }
      for (int e = left; e >= 0; --e) {
        a[c] = e;
        (*this)(c + 1, left - e);
      }
    }
  };
  const Rec rec{out, a, dc};
  for (int deg = 0; deg <= q; ++deg) rec(0, deg);
  return out;
}

std::size_t count_up_to(const std::vector<std::vector<int>>& mon, int p) {
  std::size_t k = 0;
  for (const auto& a : mon) {
    int s = 0;
    for (int e : a) s += e;
    if (s <= p) ++k;
  }
  return k;
}

}  // namespace attnreg::detail
