#!/usr/bin/env bash
# R package under AddressSanitizer + UndefinedBehaviorSanitizer: install the staged tarball
# (build/r/attnreg_*.tar.gz, made by .ci/setup.sh) compiled with -fsanitize=address,undefined
# into build/r-asan/lib, then run the whole testthat suite (the bad-input and degenerate-design
# files included) with the sanitizer runtimes preloaded. Any sanitizer report aborts R
# (-fno-sanitize-recover=all, halt_on_error) and fails the step. Prints its wall time.
# Cost (measured 2026-11-24 on the shared 2-core dev machine at load 11-17): the cold
# sanitized compile took 7.4 CPU-minutes (about 4 min of wall on an idle 2-core runner with
# -j2; a re-run with warm ccache installs in 5 s), the whole suite 19 s at load 2 (65 s at
# load 17).
#   bash .ci/r-sanitize.sh [TARBALL]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
t0=$(date +%s)
tarball=${1:-$(ls build/r/attnreg_*.tar.gz | head -1)}
out=build/r-asan
rm -rf "$out/lib" && mkdir -p "$out/lib"
cxx=$(R CMD config CXX17)
launcher=""
if command -v ccache >/dev/null && [ "${cxx#ccache}" = "$cxx" ]; then launcher="ccache "; fi
san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
# -O1 -g: usable stacks at a fraction of -O0's run time; R's default -O2 flags are replaced.
cat > "$out/Makevars" <<MAKEVARS
CXX17 = $launcher$cxx
CXX17FLAGS = -g -O1 $san
LDFLAGS = $san
MAKEVARS
if ! R_MAKEVARS_USER="$root/$out/Makevars" MAKEFLAGS="-j${ATTNREG_JOBS:-$(nproc)}" \
    R CMD INSTALL --no-test-load --no-multiarch -l "$out/lib" "$tarball" >"$out/install.log" 2>&1; then
  tail -40 "$out/install.log"; exit 1
fi
t1=$(date +%s)
echo "sanitized R package installed in $(( t1 - t0 )) s (log: $out/install.log)"
# Guard: the package's C++ standard must be the one whose flags were set above.
# (nm's output is read whole: grep -q would close the pipe early, and under pipefail nm's
# SIGPIPE would fail the check of an instrumented library.)
syms=$(nm -D "$out/lib/attnreg/libs/attnreg.so")
if ! grep -q "__ubsan_handle\|__asan_report" <<<"$syms"; then
  echo "build/r-asan: attnreg.so is not instrumented (does the package still use CXX_STD = CXX17?)"
  exit 1
fi
asan=$(gcc -print-file-name=libasan.so)
ubsan=$(gcc -print-file-name=libubsan.so)
status=0
(cd R-package/tests &&
  LD_PRELOAD="$asan $ubsan" ASAN_OPTIONS=detect_leaks=0:halt_on_error=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 R_LIBS="$root/$out/lib" \
  Rscript -e '
    lib <- Sys.getenv("R_LIBS")
    library(attnreg, lib.loc = lib)
    stopifnot(startsWith(find.package("attnreg"), lib))
    cat("sanitized package:", find.package("attnreg"), "\n")
    res <- testthat::test_dir("testthat", reporter = "summary", stop_on_failure = TRUE)
  ') 2>&1 | tee "$root/$out/tests.log" | tail -30 || status=1
if grep -q "runtime error:\|ERROR: AddressSanitizer" "$out/tests.log"; then
  echo "the sanitizers reported an error (see $out/tests.log)"; status=1
fi
echo "R sanitizer step: $(( $(date +%s) - t0 )) s (install $(( t1 - t0 )) s, tests $(( $(date +%s) - t1 )) s)"
exit $status
