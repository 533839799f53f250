// attnreg: the few LAPACK routines the core calls directly (Armadillo does not expose pivoted
// QR in economy form). Declared here once; linked from the system LAPACK (CMake) or R's
// $(LAPACK_LIBS) (R package).
#pragma once

#include "attnreg/arma.hpp"
#include <vector>

namespace attnreg {

using lapack_int = int;

namespace lapack {

/// Householder QR with column pivoting of A (overwritten: R above the diagonal, reflectors
/// below). jpvt: on entry 0 = free column; on exit 1-based pivots. tau: min(m, n) scalars.
void geqp3(arma::mat& A, std::vector<lapack_int>& jpvt, arma::vec& tau);

}  // namespace lapack
}  // namespace attnreg
