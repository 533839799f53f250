// attnreg R face: package-wide glue (interrupts, build info). Thin: no numerics here.
// [[Rcpp::depends(RcppArmadillo)]]
#include <RcppArmadillo.h>
#include <R_ext/Utils.h>

#include "attnreg/build_info.hpp"
#include "attnreg/runtime.hpp"

namespace {
// R_CheckUserInterrupt longjmps on Ctrl-C; running it under R_ToplevelExec turns that into a
// return value, so no C++ frame is skipped. The core calls this on the main thread only.
void check_interrupt_fn(void*) { R_CheckUserInterrupt(); }
bool r_interrupt_pending() { return R_ToplevelExec(check_interrupt_fn, nullptr) == FALSE; }
}  // namespace

// [[Rcpp::export(name = ".attnreg_init")]]
void attnreg_init() { attnreg::set_interrupt_checker(&r_interrupt_pending); }

//' Describe this attnreg build
//'
//' @return A list: version, OpenMP, threads, BLAS, whether the CUDA backend is compiled in, its
//'   architectures, the number of visible GPUs and, when none is usable, why.
//' @examples
//' attnreg_build_info()
//' @export
// [[Rcpp::export]]
Rcpp::List attnreg_build_info() {
  const attnreg::BuildInfo b = attnreg::build_info();
  return Rcpp::List::create(
      Rcpp::Named("version") = b.version, Rcpp::Named("openmp") = b.openmp,
      Rcpp::Named("max_threads") = b.max_threads, Rcpp::Named("blas") = b.blas,
      Rcpp::Named("cuda_compiled") = b.cuda_compiled, Rcpp::Named("cuda_archs") = b.cuda_archs,
      Rcpp::Named("gpu_count") = b.gpu_count, Rcpp::Named("gpu_name") = b.gpu_name,
      Rcpp::Named("cuda_error") = b.cuda_error);
}
