// attnreg: the multi-indices of a multivariate polynomial basis (internal; used by the local
// polynomial pilots of the RBC marginal effects, core/src/inference/rbc_marginal_effects.cpp).
#pragma once

#include <cstddef>
#include <vector>

namespace attnreg::detail {

// Exponent vectors (one entry per variable) of every monomial in dc variables of total degree
// <= q, graded: all of degree 0, then 1, ..., so the first count_up_to(., p) are those of
// degree <= p.
std::vector<std::vector<int>> monomials(std::size_t dc, int q);

// How many of the exponent vectors have total degree <= p.
std::size_t count_up_to(const std::vector<std::vector<int>>& mon, int p);

}  // namespace attnreg::detail
