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

arma::mat monomial_design(const arma::mat& Xc, const arma::uvec& idx, const arma::rowvec& x0,
                          const arma::vec& scale, const std::vector<std::vector<int>>& mon,
                          std::size_t k) {
  const std::size_t dc = Xc.n_cols;
  arma::mat U(idx.n_elem, dc), Z(idx.n_elem, k);
  for (std::size_t c = 0; c < dc; ++c)
    for (arma::uword i = 0; i < idx.n_elem; ++i) U(i, c) = (Xc(idx(i), c) - x0(c)) / scale(c);
  for (std::size_t t = 0; t < k; ++t)
    for (arma::uword i = 0; i < idx.n_elem; ++i) {
      double z = 1.0;
      for (std::size_t c = 0; c < dc; ++c)
        for (int e = 0; e < mon[t][c]; ++e) z *= U(i, c);
      Z(i, t) = z;
    }
  return Z;
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
