// attnreg R face: package-wide glue (interrupts, build info). Thin: no numerics here.
// [[Rcpp::depends(RcppArmadillo)]]
#include <RcppArmadillo.h>
#include <R_ext/Print.h>
#include <R_ext/Utils.h>

#include <cstddef>
#include <string>

#include "attnreg/base/build_info.hpp"
#include "attnreg/base/runtime.hpp"

namespace {
// R_CheckUserInterrupt longjmps on Ctrl-C; running it under R_ToplevelExec turns that into a
// return value, so no C++ frame is skipped. The core calls this on the main thread only.
void check_interrupt_fn(void*) { R_CheckUserInterrupt(); }
bool r_interrupt_pending() { return R_ToplevelExec(check_interrupt_fn, nullptr) == FALSE; }

// A text progress bar on stderr, like utils::txtProgressBar(style = 3): one line per label,
// redrawn in place when the whole percentage changes. The core calls it on the main thread.
struct TextBar {
  std::string label;
  int percent = -1;
  bool open = false;
  void operator()(std::size_t done, std::size_t total, const std::string& what) {
    if (total == 0) return;
    const int pct = static_cast<int>((100.0 * static_cast<double>(done)) / total);
    if (what != label || pct < percent) {  // a new phase: start a fresh line
      if (open) REprintf("\n");
      label = what;
      percent = -1;
    }
    if (pct == percent) return;
    percent = pct;
    const int width = 40, filled = (pct * width) / 100;
    std::string bar(static_cast<std::size_t>(filled), '=');
    bar.append(static_cast<std::size_t>(width - filled), ' ');
    REprintf("\r%s |%s| %3d%%", label.c_str(), bar.c_str(), pct);
    open = done < total;
    if (!open) {
      REprintf("\n");
      percent = -1;
      label.clear();
    }
  }
};
TextBar g_bar;
}  // namespace

// Switch the core's progress reporter (a text bar on stderr) on or off; the R functions with
// `progress = TRUE` switch it on for the duration of one call (on.exit switches it off).
// `complete`: the call succeeded, so draw the bar at 100% before closing it (only the master
// thread reports, and it need not be the one that finishes the last block).
// [[Rcpp::export(name = ".attnreg_progress")]]
void attnreg_progress(bool enable, bool complete = false) {
  if (!enable && complete && g_bar.open) g_bar(1, 1, g_bar.label);
  if (enable) {
    g_bar = TextBar();
    attnreg::set_progress_reporter(
        [](std::size_t done, std::size_t total, const std::string& label) {
          g_bar(done, total, label);
        });
  } else {
    if (g_bar.open) REprintf("\n");
    g_bar = TextBar();
    attnreg::set_progress_reporter(nullptr);
  }
}

// [[Rcpp::export(name = ".attnreg_init")]]
void attnreg_init() { attnreg::set_interrupt_checker(&r_interrupt_pending); }

//' Describe this attnreg build
//'
//' @return A list: version, OpenMP, threads, BLAS, whether the CUDA backend is compiled in, its
//'   architectures, the number of visible GPUs and, when none is usable, why; `cuda` says all
//'   of it in one line, worded as Python's `attnreg.build_info()["cuda"]`; `simd`, the SIMD
//'   instruction set the kernel sums run on with this CPU ("AVX3" for AVX-512, "AVX2", "SSE4").
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
      Rcpp::Named("cuda_error") = b.cuda_error, Rcpp::Named("cuda") = b.cuda,
      Rcpp::Named("simd") = b.simd);
}
