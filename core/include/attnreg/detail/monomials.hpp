// attnreg: the multi-indices of a multivariate polynomial basis and its design at a point
// (internal; used by the local polynomial fits of the RBC marginal effects,
// core/src/inference/rbc_marginal_effects.cpp, and the local residual variance,
// core/src/inference/local_variance.cpp).
#pragma once

#include <cstddef>
#include <vector>

#include "attnreg/base/arma.hpp"

namespace attnreg::detail {

// Exponent vectors (one entry per variable) of every monomial in dc variables of total degree
// <= q, graded: all of degree 0, then 1, ..., so the first count_up_to(., p) are those of
// degree <= p.
std::vector<std::vector<int>> monomials(std::size_t dc, int q);

// How many of the exponent vectors have total degree <= p.
std::size_t count_up_to(const std::vector<std::vector<int>>& mon, int p);

// The design of the first k monomials of `mon` at the rows idx of Xc (the continuous columns),
// in units u_c = (Xc(i, c) - x0(c)) / scale(c): Z(r, t) = prod_c u_c^{mon[t][c]} at row idx(r).
arma::mat monomial_design(const arma::mat& Xc, const arma::uvec& idx, const arma::rowvec& x0,
                          const arma::vec& scale, const std::vector<std::vector<int>>& mon,
                          std::size_t k);

}  // namespace attnreg::detail
