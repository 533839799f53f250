#!/usr/bin/env bash
# Run every test suite: C++ (ctest, GoogleTest), Python (pytest), the main job and the
# vignettes (each checks its own claims), the docs sites (tools/build-docs.sh), R (testthat inside
# R CMD check). Does the set-up first (.ci/setup.sh) unless ATTNREG_SKIP_SETUP=1.
# Exits non-zero when any suite fails or runs no test.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[ "${ATTNREG_SKIP_SETUP:-0}" = "1" ] || bash .ci/setup.sh
PY=${PYTHON:-python3}
status=0
log() { printf '\n== %s ==\n' "$*"; }

log "C++: ctest"
(cd build && ctest --output-on-failure -j 2) || status=1

# Opt-in (ATTNREG_SANITIZE_TESTS=1): a Debug ASan+UBSan build of the whole suite takes longer
# than the rest of CI together on 2 cores (the CUDA-emulation tests dominate).
if [ "${ATTNREG_SANITIZE_TESTS:-0}" = "1" ]; then
  log "C++: ctest under AddressSanitizer + UndefinedBehaviorSanitizer"
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DATTNREG_CUDA=OFF -DATTNREG_BENCH=OFF \
    -DATTNREG_SANITIZE=address,undefined >/dev/null
  cmake --build build-asan -j "${ATTNREG_JOBS:-$(nproc)}" >/dev/null
  (cd build-asan && ASAN_OPTIONS=detect_leaks=0 ctest --output-on-failure -j 2) || status=1
fi

log "Python: the source distribution builds, installs and runs in a fresh virtual environment"
# The sdist must carry the C++ core (pip wheel attnreg-<v>.tar.gz on a machine without the
# checkout). Build dependencies are installed into the venv and the build is not isolated, so
# the step costs one CPU-only compile of the core (CUDA is covered by the main build); with
# ccache, TMPDIR and CCACHE_BASEDIR make the unpacked sdist's paths stable, so re-runs hit.
t_sdist=$(date +%s)
rm -rf build/sdist build/venv-sdist build/pip-tmp && mkdir -p build/sdist build/pip-tmp
sdist=$($PY -c "from scikit_build_core.build import build_sdist; print(build_sdist('build/sdist'))" | tail -1)
$PY -m venv build/venv-sdist
build/venv-sdist/bin/pip install -q --disable-pip-version-check "scikit-build-core>=0.11" "pybind11>=2.12" \
  "numpy>=1.23" "pandas>=1.5" "scikit-learn>=1.6" || status=1
launcher=""; command -v ccache >/dev/null && launcher=ccache
env TMPDIR=$root/build/pip-tmp CCACHE_BASEDIR=$root/build/pip-tmp CCACHE_NOHASHDIR=1 \
  ${launcher:+CMAKE_CXX_COMPILER_LAUNCHER=$launcher} ATTNREG_CUDA=OFF CMAKE_BUILD_PARALLEL_LEVEL=${ATTNREG_JOBS:-$(nproc)} \
  build/venv-sdist/bin/pip install -q --disable-pip-version-check --no-build-isolation "build/sdist/$sdist" \
  >build/sdist/install.log 2>&1 || { tail -40 build/sdist/install.log; status=1; }
(cd build/venv-sdist && bin/python "$root/.ci/sdist_smoke.py" "$root/VERSION") || status=1
echo "sdist step: $(( $(date +%s) - t_sdist )) s ($sdist)"

log "Python: pytest"
(cd python-package && $PY -m pytest -q -p no:cacheprovider tests) || status=1

log "Python: bad-input tests on a module built under AddressSanitizer + UndefinedBehaviorSanitizer"
# ctest under the sanitizers does not reach the bindings nor the inputs only the faces pass
# (e.g. a design without variation). A RelWithDebInfo module, no tests or benchmarks, run over
# the bad-input and extreme-scale tests; python itself is not instrumented, hence LD_PRELOAD.
cmake -S . -B build-asan-py ${launcher:+-DCMAKE_CXX_COMPILER_LAUNCHER=$launcher} -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNREG_SANITIZE=address,undefined \
  -DATTNREG_CUDA=OFF -DATTNREG_BENCH=OFF -DBUILD_TESTING=OFF -DATTNREG_PYTHON=ON \
  -Dpybind11_DIR="$($PY -m pybind11 --cmakedir)" >/dev/null
cmake --build build-asan-py -j "${ATTNREG_JOBS:-$(nproc)}" >/dev/null
rm -rf build-asan-py/pkg && mkdir -p build-asan-py/pkg
cp -r python-package/src/attnreg build-asan-py/pkg/ && rm -f build-asan-py/pkg/attnreg/_core*.so
cp build-asan-py/_core*.so build-asan-py/pkg/attnreg/
(cd python-package && PYTHONPATH="$root/build-asan-py/pkg" \
  LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)" \
  ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
  $PY -c "import attnreg, sys; f = attnreg._core.__file__; print('sanitized module:', f); sys.exit('build-asan-py' not in f)" &&
  PYTHONPATH="$root/build-asan-py/pkg" \
  LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)" \
  ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
  $PY -m pytest -q -p no:cacheprovider tests/test_errors.py tests/test_scale_equivariance_ls.py) || status=1

log "R: bad-input tests on the package built under AddressSanitizer + UndefinedBehaviorSanitizer"
# The testthat suite (bad-input and degenerate-design files included) over a separate install of the package
# compiled with -fsanitize=address,undefined (R's own Makevars flags plus ours, via a
# R_MAKEVARS_USER file; ccache serves re-runs). R itself is not instrumented, hence LD_PRELOAD
# of the runtimes, and --no-test-load (the install's own load test runs without them).
bash .ci/r-sanitize.sh || status=1

log "Main job (the README's first command) runs end to end"
$PY vignettes/main_job.py --out build/main-job-check || status=1

log "Vignettes: render every one (each checks its own numerical claims)"
ATTNREG_VIGNETTE_OUT=build/vignettes bash .ci/vignettes.sh || status=1

log "Docs: the Python (Sphinx) and R (pkgdown) reference sites build offline, without warnings"
# From the installed packages' docstrings and help pages into docs/_site/; the R vignettes are
# the renderings of the step above. Fails on a missing docstring, an unresolved cross-reference,
# an export without a help page, or an internal note cited in the built pages.
ATTNREG_VIGNETTE_OUT=build/vignettes bash tools/build-docs.sh || status=1

log "R: R CMD check (runs the testthat suite)"
tarball=$(ls build/r/attnreg_*.tar.gz)
(cd build/r && MAKEFLAGS="-j${ATTNREG_JOBS:-$(nproc)}" _R_CHECK_FORCE_SUGGESTS_=false \
  R CMD check --no-manual "$(basename "$tarball")" >check.log 2>&1) || true
cat build/r/check.log | tail -25
if grep -qE "^Status: .*(ERROR|WARNING)" build/r/check.log || ! grep -q "^Status:" build/r/check.log; then
  echo "R CMD check reported an ERROR or WARNING (see build/r/attnreg.Rcheck)"; status=1
fi
testlog=build/r/attnreg.Rcheck/tests/testthat.Rout
if [ -f "$testlog" ] && grep -q "\[ FAIL 0 " "$testlog"; then
  grep -E "^\[ FAIL" "$testlog"
elif [ -f "$testlog.fail" ]; then
  tail -40 "$testlog.fail"; status=1
else
  echo "R tests did not run"; status=1
fi

exit $status
