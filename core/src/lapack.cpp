#include "attnreg/lapack.hpp"

#include <algorithm>
#include <sstream>

#include "attnreg/error.hpp"

extern "C" {
void dgeqp3_(const int* m, const int* n, double* a, const int* lda, int* jpvt, double* tau,
             double* work, const int* lwork, int* info);
}

namespace attnreg {
namespace lapack {

void geqp3(arma::mat& A, std::vector<lapack_int>& jpvt, arma::vec& tau) {
  const int m = static_cast<int>(A.n_rows), n = static_cast<int>(A.n_cols);
  const int lda = std::max(1, m);
  jpvt.assign(static_cast<std::size_t>(n), 0);
  tau.set_size(static_cast<arma::uword>(std::min(m, n)));
  if (m == 0 || n == 0) return;
  int info = 0, lwork = -1;
  double wsize = 0.0;
  dgeqp3_(&m, &n, A.memptr(), &lda, jpvt.data(), tau.memptr(), &wsize, &lwork, &info);
  lwork = std::max(static_cast<int>(wsize), 3 * n + 1);
  std::vector<double> work(static_cast<std::size_t>(lwork));
  dgeqp3_(&m, &n, A.memptr(), &lda, jpvt.data(), tau.memptr(), work.data(), &lwork, &info);
  if (info != 0) {
    std::ostringstream msg;
    msg << "LAPACK dgeqp3 failed with info = " << info;
    throw NumericalError(msg.str());
  }
}

}  // namespace lapack
}  // namespace attnreg
