#include "attnreg/solve/lapack.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <sstream>

#include "attnreg/base/error.hpp"
#include "attnreg/base/runtime.hpp"

extern "C" {
void dgeqp3_(const int* m, const int* n, double* a, const int* lda, int* jpvt, double* tau,
             double* work, const int* lwork, int* info);
void dormqr_(const char* side, const char* trans, const int* m, const int* n, const int* k,
             const double* a, const int* lda, const double* tau, double* c, const int* ldc,
             double* work, const int* lwork, int* info);
void dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
            const double* alpha, const double* a, const int* lda, const double* b, const int* ldb,
            const double* beta, double* c, const int* ldc);
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

void geqp3(arma::mat& A, std::vector<lapack_int>& jpvt, arma::vec& tau, bool keep_order) {
  const int m = as_int(A.n_rows, "X"), n = as_int(A.n_cols, "X");
  const int lda = std::max(1, m);
  // dgeqp3 moves columns with jpvt != 0 to the front in their order and never pivots them.
  jpvt.assign(static_cast<std::size_t>(n), keep_order ? 1 : 0);
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

void gemm_nt_streamed(const arma::mat& G, const arma::mat& B, arma::mat& C, double add,
                      int n_threads) {
  check::require(G.n_cols == B.n_cols && C.n_rows == G.n_rows && C.n_cols == B.n_rows, "C",
                 "internal: gemm_nt_streamed shapes do not match");
  const int m = as_int(G.n_rows, "X"), n = as_int(B.n_rows, "X"), r = as_int(G.n_cols, "rank");
  if (m == 0 || n == 0) return;
  if (r == 0) {
    C.fill(add);
    return;
  }
  const int threads = resolve_threads(n_threads);
  constexpr int kCols = 64;
  const int nblocks = (n + kCols - 1) / kCols;
  const int ldg = std::max(1, m), ldb = std::max(1, n), ldc = std::max(1, m);
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(threads) if (nblocks > 1)
#endif
  for (int blk = 0; blk < nblocks; ++blk) {
    const int j0 = blk * kCols, w = std::min(kCols, n - j0);
    const double one = 1.0, zero = 0.0;
    double* c = C.colptr(static_cast<arma::uword>(j0));
    dgemm_("N", "T", &m, &w, &r, &one, G.memptr(), &ldg, B.memptr() + j0, &ldb, &zero, c, &ldc);
    if (add != 0.0) {
      for (long long i = 0; i < static_cast<long long>(m) * w; ++i) c[i] += add;
    }
  }
  (void)threads;
}

}  // namespace lapack
}  // namespace attnreg
