#pragma once
// Private to core/src/solve/local_fit*.cpp: what the files of the local polynomial fit share.
//   local_fit_tiles.cpp  tile reductions of the local moments (dense and fused) and the basis;
//   local_fit_eval.cpp   the moments, weights and fast-sum sinks, local_polynomial_eval/solve
//                        and the failed-query messages;
//   local_fit.cpp        the LocalPolynomial class (fit, statistics, traces, state).
#include "attnreg/base/constants.hpp"
#include <cstddef>
#include <limits>
#include <memory>
#include <vector>

#include "attnreg/base/arma.hpp"
#include "attnreg/kernels/kernel_pairs.hpp"  // ATTNREG_SIMD_CLONES, KernelSpace, TileSink
#include "attnreg/solve/local_fit.hpp"

namespace attnreg {
namespace local_fit_detail {


// One tile of local moments: with design columns D_0 = 1, D_{1+a} = basis[a],
//   A[r][c] += sum_i w_i D_r D_c (upper triangle, row-major q x q),
//   T[r][o] += sum_i w_i D_r y_o (row-major q x k).
struct MomentTile {
  const double* w = nullptr;
  std::size_t len = 0;
  const double* const* basis = nullptr;  // p columns
  std::size_t p = 0;
  const double* const* y = nullptr;  // k columns
  std::size_t k = 0;
  const double* ones = nullptr;   // len ones
  const double* zeros = nullptr;  // len zeros
  double* A = nullptr;
  double* T = nullptr;
  double* wb = nullptr;              // scratch p x len
  const double** cols = nullptr;     // scratch, 2 (p + k) + 8 pointers
};

// The three functions below are defined once, with external linkage, in local_fit_tiles.cpp,
// where each calls its function-multiversioned body (ATTNREG_SIMD_CLONES): target_clones
// functions keep their clones local to the defining file, so they are not declared here.

/// Adds one tile's sums to t.A (upper triangle) and t.T (local_fit_tiles.cpp).
void accumulate_moments(const MomentTile& t);

/// Local-linear moments with P continuous columns (0..3) and K outputs (1..2) in one fused
/// pass; false for other shapes (the caller then uses accumulate_moments).
bool fused_linear_dispatch(std::size_t P, std::size_t K, const double* w, const double* const* x,
                           const double* q, const double* const* y, std::size_t len, double* A,
                           double* T);

/// The basis columns of query qi over rows [first, first + len) in bandwidth units, written
/// to buf (len each) with their pointers in ptrs.
void build_basis(const KernelSpace& space, const PreparedQueries& Q, std::size_t qi, int degree,
                 std::size_t first, std::size_t len, double* buf, const double** ptrs);

/// Equivalent-kernel weights l_i(x) = w_i (c_0 + sum_a c_a z_ia), c = coef.col(query), written
/// to W(query, original row) (local_fit_eval.cpp).
std::unique_ptr<TileSink> make_weight_sink(const KernelSpace& space, const PreparedQueries& Q,
                                           int degree, const arma::mat& coef, arma::mat& W);

/// The same weights' weighted squares, out(query) += sum_i f(row_i) l_i(x)^2, without forming
/// W (out must be zeroed by the caller; local_fit_eval.cpp).
std::unique_ptr<TileSink> make_squared_weight_sink(const KernelSpace& space,
                                                   const PreparedQueries& Q, int degree,
                                                   const arma::mat& coef, const arma::vec& f,
                                                   arma::vec& out);

/// Ridge penalty scales of the space's continuous columns (local_penalty_scales).
std::vector<double> penalty_scales(const KernelSpace& space, int degree);

/// "local constant", "local linear", ... for messages.
const char* degree_name(int degree);

}  // namespace local_fit_detail
}  // namespace attnreg
