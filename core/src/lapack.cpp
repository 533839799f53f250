#include "attnreg/lapack.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <sstream>

#include "attnreg/error.hpp"

extern "C" {
void dgeqp3_(const int* m, const int* n, double* a, const int* lda, int* jpvt, double* tau,
             double* work, const int* lwork, int* info);
void dormqr_(const char* side, const char* trans, const int* m, const int* n, const int* k,
             const double* a, const int* lda, const double* tau, double* c, const int* ldc,
             double* work, const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda,
             const double* tau, double* work, const int* lwork, int* info);
}

namespace attnreg {
namespace lapack {

namespace {
void check_info(const char* routine, int info) {
  if (info != 0) {
    std::ostringstream msg;
    msg << "LAPACK " << routine << " failed with info = " << info;
    throw NumericalError(msg.str());
  }
}

int as_int(arma::uword v, const char* what) {
  if (v > static_cast<arma::uword>(std::numeric_limits<int>::max())) {
    throw InvalidArgument(std::string(what) +
                          ": too large for the 32-bit LAPACK interface (split the problem)");
  }
  return static_cast<int>(v);
}
}  // namespace

void geqp3(arma::mat& A, std::vector<lapack_int>& jpvt, arma::vec& tau) {
  const int m = as_int(A.n_rows, "X"), n = as_int(A.n_cols, "X");
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
  check_info("dgeqp3", info);
}

void ormqr(const arma::mat& qr, const arma::vec& tau, arma::uword k, arma::mat& C,
           bool transpose) {
  if (k == 0 || C.n_elem == 0) return;
  const int m = as_int(C.n_rows, "X"), n = as_int(C.n_cols, "y"), kk = as_int(k, "rank");
  const int lda = std::max(1, as_int(qr.n_rows, "X")), ldc = std::max(1, m);
  const char side = 'L', trans = transpose ? 'T' : 'N';
  int info = 0, lwork = -1;
  double wsize = 0.0;
  dormqr_(&side, &trans, &m, &n, &kk, qr.memptr(), &lda, tau.memptr(), C.memptr(), &ldc, &wsize,
          &lwork, &info);
  lwork = std::max(static_cast<int>(wsize), std::max(1, n));
  std::vector<double> work(static_cast<std::size_t>(lwork));
  dormqr_(&side, &trans, &m, &n, &kk, qr.memptr(), &lda, tau.memptr(), C.memptr(), &ldc,
          work.data(), &lwork, &info);
  check_info("dormqr", info);
}

arma::mat orgqr(const arma::mat& qr, const arma::vec& tau, arma::uword k) {
  if (k == 0) return arma::mat(qr.n_rows, 0);
  arma::mat Q = qr.cols(0, k - 1);
  const int m = as_int(Q.n_rows, "X"), n = as_int(k, "rank");
  const int lda = std::max(1, m);
  int info = 0, lwork = -1;
  double wsize = 0.0;
  dorgqr_(&m, &n, &n, Q.memptr(), &lda, tau.memptr(), &wsize, &lwork, &info);
  lwork = std::max(static_cast<int>(wsize), std::max(1, n));
  std::vector<double> work(static_cast<std::size_t>(lwork));
  dorgqr_(&m, &n, &n, Q.memptr(), &lda, tau.memptr(), work.data(), &lwork, &info);
  check_info("dorgqr", info);
  return Q;
}

}  // namespace lapack
}  // namespace attnreg
