// attnreg: the few LAPACK routines the core calls directly (Armadillo does not expose pivoted
// QR in economy form, nor the compact-Q products). Declared here once; linked from the system
// LAPACK (CMake) or R's $(LAPACK_LIBS) (R package).
#pragma once

#include "attnreg/base/arma.hpp"
#include <vector>

namespace attnreg {

using lapack_int = int;

namespace lapack {

/// Householder QR with column pivoting of A (overwritten: R above the diagonal, reflectors
/// below). jpvt: on entry 0 = free column; on exit 1-based pivots. tau: min(m, n) scalars.
void geqp3(arma::mat& A, std::vector<lapack_int>& jpvt, arma::vec& tau,
           bool keep_order = false);  ///< keep_order: no pivoting (plain Householder QR)

/// C <- Q' C (transpose = true) or Q C, with Q = H_1 ... H_k the product of the first k
/// reflectors stored below the diagonal of `qr` (as geqp3 leaves them) and their scalars `tau`.
/// C must have qr.n_rows rows. Blocked (LAPACK dormqr), so it runs at BLAS-3 speed.
void ormqr(const arma::mat& qr, const arma::vec& tau, arma::uword k, arma::mat& C,
           bool transpose);

/// The first k columns of Q (n x k, orthonormal) from the compact factor (LAPACK dorgqr).
arma::mat orgqr(const arma::mat& qr, const arma::vec& tau, arma::uword k);

/// C = G B' + add (every entry), with G m x r, B n x r and C m x n already sized. Computed in
/// column blocks of C small enough to stay in cache (each block one dgemm), so the m x n output
/// is written once: this product has a small inner dimension r and is bound by memory traffic,
/// which a single large dgemm multiplies. Blocks run in parallel over `n_threads` (0 = default);
/// each entry depends on one block only, so results do not depend on the thread count.
void gemm_nt_streamed(const arma::mat& G, const arma::mat& B, arma::mat& C, double add,
                      int n_threads);

}  // namespace lapack
}  // namespace attnreg
