#!/usr/bin/env bash
# Run every test suite: C++ (ctest, GoogleTest), Python (pytest), the binary wheel in a bare
# Debian root, the Python bad-input tests under the sanitizers, the main job and the vignettes
# (each checks its own claims), the docs sites, R (testthat inside R CMD check). Does the set-up
# first (.ci/setup.sh all) unless ATTNREG_SKIP_SETUP=1. Prints each step's time and a table of
# them at the end; exits non-zero when any suite fails or runs no test.
#
# Compiles (a fresh 2-core machine; times in README.md): the core once for ctest and the Python
# module (one build tree, build/py), the R package once (R CMD INSTALL; R CMD check's compile of
# the same sources is served by ccache), the wheel from the sdist (served by ccache from the
# first: same sources, same flags), and one sanitized build of the Python module. Where nvcc is
# present and no GPU is visible, the CUDA sources are compiled on their own (nvcc only).
# Opt-in, each one more compile: ATTNREG_SANITIZE_TESTS=1 (the C++ tests under ASan+UBSan, a
# Debug build) and ATTNREG_SANITIZE_R=1 (the R package's testthat suite under ASan+UBSan).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
t_all=$(date +%s)
PY=${PYTHON:-python3}
status=0
steps=()
t_step=0; name_step=""
begin() { name_step=$1; t_step=$(date +%s); printf '\n== %s [%d s into the run] ==\n' "$1" $(( t_step - t_all )); }
# end RC: record the step's time and result (RC 0: ok)
end() {
  local rc=$1 secs=$(( $(date +%s) - t_step ))
  if [ "$rc" -ne 0 ]; then status=1; steps+=("$(printf '%-62s FAILED %5d s' "$name_step" "$secs")")
  else steps+=("$(printf '%-62s ok     %5d s' "$name_step" "$secs")"); fi
  printf -- '-- %s: %s in %d s\n' "$name_step" "$([ "$rc" -eq 0 ] && echo ok || echo FAILED)" "$secs"
}

if [ "${ATTNREG_SKIP_SETUP:-0}" != "1" ]; then
  begin "set-up (.ci/setup.sh all)"
  rc=0; bash .ci/setup.sh all || rc=$?
  end $rc
  [ $rc -eq 0 ] || { printf '%s\n' "${steps[@]}"; exit 1; }
fi
jobs=${ATTNREG_JOBS:-$(nproc)}
# The later compiles reach the same compiler cache as the set-up's (see .ci/setup.sh).
if command -v ccache >/dev/null; then
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_NOHASHDIR=1 CCACHE_BASEDIR=$root \
    CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
fi
# R compiles the package here too (R CMD check): the set-up's R_MAKEVARS_USER (ccache, R's
# flags) must reach it, which an export inside .ci/setup.sh cannot do.
[ -f build/r/Makevars.ci ] && export R_MAKEVARS_USER=$root/build/r/Makevars.ci

begin "C++: ctest (the GoogleTest suite, build tree build/py)"
rc=0; (cd build/py && ctest --output-on-failure -j 2) || rc=$?
end $rc

# The main build is CPU-only where no GPU is visible (.ci/setup.sh); the CUDA backend's sources
# must still compile: nvcc on its own tree, the objects of the backend's target attnreg_cuda only
# (cuda/src: the kernels and the adapter to the core; nothing could run them here).
nvcc_bin=$(command -v nvcc || ls /usr/local/cuda/bin/nvcc /usr/local/cuda-13/bin/nvcc 2>/dev/null | head -1 || true)
if [ -n "$nvcc_bin" ] && ! command -v nvidia-smi >/dev/null 2>&1; then
  begin "CUDA: the backend's sources compile (nvcc; no GPU here to run them)"
  rc=0
  { CMAKE_CUDA_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER:-} \
      cmake -S . -B build/cuda-check -G Ninja -DCMAKE_BUILD_TYPE=Release -DATTNREG_CUDA=ON \
      -DCMAKE_CUDA_COMPILER="$nvcc_bin" -DBUILD_TESTING=OFF -DATTNREG_BENCH=OFF \
      >build/cuda-check-configure.log 2>&1 &&
    objs=$(ninja -C build/cuda-check -t targets all | grep -oE '^CMakeFiles/attnreg_cuda\.dir/[^:]+\.o' | sort -u) &&
    [ -n "$objs" ] && echo "$(echo "$objs" | wc -l) objects of the CUDA backend, cuda/src (log: build/cuda-check-build.log)" &&
    ninja -C build/cuda-check -j "$jobs" $objs >build/cuda-check-build.log 2>&1; } ||
    { tail -30 build/cuda-check-build.log 2>/dev/null || tail -30 build/cuda-check-configure.log; rc=1; }
  end $rc
fi

if [ "${ATTNREG_SANITIZE_TESTS:-0}" = "1" ]; then
  begin "C++: ctest under AddressSanitizer + UndefinedBehaviorSanitizer (opt-in)"
  rc=0
  { cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DATTNREG_CUDA=OFF -DATTNREG_BENCH=OFF \
      -DATTNREG_SANITIZE=address,undefined >/dev/null &&
    cmake --build build-asan -j "$jobs" >/dev/null &&
    (cd build-asan && ASAN_OPTIONS=detect_leaks=0 ctest --output-on-failure -j 2); } || rc=$?
  end $rc
fi

begin "Python: pytest"
rc=0; (cd python-package && $PY -m pytest -q -p no:cacheprovider tests) || rc=$?
end $rc

begin "Python: a binary wheel from the sdist (tools/build-wheel.sh), installed in a bare Debian root"
# The wheel is built from the source distribution (so this also proves the sdist carries the
# core); its compile has the main build's flags, so ccache serves it.
rc=0
{ bash tools/build-wheel.sh build/wheel && bash .ci/wheel-test.sh; } || rc=$?
end $rc

begin "Python: bad-input tests on a module built under AddressSanitizer + UndefinedBehaviorSanitizer"
# ctest does not reach the bindings nor the inputs only the faces pass (e.g. a design without
# variation). The one sanitized compile of the run: -O1 with line tables (-g1), enough for
# symbolized reports, no tests or benchmarks; python itself is not instrumented, hence
# LD_PRELOAD of the runtimes.
rc=0
{ cmake -S . -B build-asan-py -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DATTNREG_SANITIZE=address,undefined \
    -DATTNREG_CUDA=OFF -DATTNREG_BENCH=OFF -DBUILD_TESTING=OFF -DATTNREG_PYTHON=ON \
    -Dpybind11_DIR="$($PY -m pybind11 --cmakedir)" >build/asan-py-configure.log 2>&1 &&
  cmake --build build-asan-py -j "$jobs" >build/asan-py-build.log 2>&1; } ||
  { tail -30 build/asan-py-build.log 2>/dev/null || tail -30 build/asan-py-configure.log; rc=1; }
if [ $rc -eq 0 ]; then
  rm -rf build-asan-py/pkg && mkdir -p build-asan-py/pkg
  cp -r python-package/src/attnreg build-asan-py/pkg/ && rm -f build-asan-py/pkg/attnreg/_core*.so
  cp build-asan-py/_core*.so build-asan-py/pkg/attnreg/
  san_env=(PYTHONPATH="$root/build-asan-py/pkg"
           LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
           ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1)
  (cd python-package &&
    env "${san_env[@]}" $PY -c "import attnreg, sys; f = attnreg._core.__file__; print('sanitized module:', f); sys.exit('build-asan-py' not in f)" &&
    env "${san_env[@]}" $PY -m pytest -q -p no:cacheprovider tests/test_errors.py tests/test_scale_equivariance_ls.py \
      tests/test_errors_families.py) || rc=$?
fi
end $rc

if [ "${ATTNREG_SANITIZE_R:-0}" = "1" ]; then
  begin "R: the testthat suite on the package built under ASan + UBSan (opt-in)"
  rc=0; bash .ci/r-sanitize.sh || rc=$?
  end $rc
fi

begin "Main job (the README's first command) runs end to end"
rc=0; $PY vignettes/main_job.py --out build/main-job-check || rc=$?
end $rc

begin "Vignettes: render every one (each checks its own numerical claims)"
rc=0; ATTNREG_VIGNETTE_OUT=build/vignettes bash .ci/vignettes.sh || rc=$?
end $rc

begin "Docs: the Python (Sphinx) and R (pkgdown) reference sites build offline, without warnings"
# From the installed packages' docstrings and help pages into docs/_site/; the R vignettes are
# the renderings of the step above. Fails on a missing docstring, an unresolved cross-reference,
# an export without a help page, or an internal note cited in the built pages.
rc=0; ATTNREG_VIGNETTE_OUT=build/vignettes bash tools/build-docs.sh || rc=$?
end $rc

begin "R: R CMD check (runs the testthat suite)"
rc=0
tarball=$(ls build/r/attnreg_*.tar.gz)
(cd build/r && MAKEFLAGS="-j$jobs" _R_CHECK_FORCE_SUGGESTS_=false \
  R CMD check --no-manual "$(basename "$tarball")" >check.log 2>&1) || true
tail -25 build/r/check.log
if grep -qE "^Status: .*(ERROR|WARNING)" build/r/check.log || ! grep -q "^Status:" build/r/check.log; then
  echo "R CMD check reported an ERROR or WARNING (see build/r/attnreg.Rcheck)"; rc=1
fi
testlog=build/r/attnreg.Rcheck/tests/testthat.Rout
if [ -f "$testlog" ] && grep -q "\[ FAIL 0 " "$testlog"; then
  grep -E "^\[ FAIL" "$testlog"
elif [ -f "$testlog.fail" ]; then
  tail -40 "$testlog.fail"; rc=1
else
  echo "R tests did not run"; rc=1
fi
end $rc

printf '\n== test run: %d s in all ==\n' $(( $(date +%s) - t_all ))
printf '%s\n' "${steps[@]}"
exit $status
