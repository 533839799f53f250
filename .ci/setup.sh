#!/usr/bin/env bash
# Install everything attnreg needs on a fresh Debian bookworm machine, then build and install
# the C++ core + tests, the Python package and the R package. Used by the README's two commands
# (.ci/main-job.sh, .ci/test.sh) and by CI. Each step prints its name and its time.
# Re-running does not redo work: apt and pip skip what is installed, the C++ build and the
# Python build (a persistent scikit-build-core build dir, build/py-<tag>) are incremental, the
# Python package is reinstalled only when its sources changed (a hash of them), the R package
# only when its staged tarball changed, and ccache (when installed) serves recompiles.
#   ATTNREG_CUDA=AUTO|ON|OFF  CUDA backend (AUTO: when nvcc is found; .ci/main-job.sh passes OFF
#                             when no GPU is visible)      ATTNREG_JOBS=N  parallel compile jobs
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
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

step "system packages (apt)"
APT_PACKAGES=(
  build-essential cmake pkg-config git ccache
  libarmadillo-dev libopenblas-dev liblapack-dev libgtest-dev
  r-base-dev r-cran-rcpp r-cran-rcpparmadillo r-cran-testthat r-cran-roxygen2
  r-cran-knitr r-cran-rmarkdown pandoc r-cran-kernsmooth r-cran-locfit r-cran-sandwich
  r-cran-pkgdown
  libfftw3-dev
  libhwy-dev
  libboost-math-dev r-cran-bh
  libnanoflann-dev
)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "all ${#APT_PACKAGES[@]} installed"
fi

PY=${PYTHON:-python3}
step "Python dependencies (pip)"
$PY -m pip install -q --disable-pip-version-check \
  "numpy>=1.23" "scipy>=1.10" "pandas>=1.5" "scikit-learn>=1.6" "statsmodels>=0.14" \
  "matplotlib>=3.6" "pytest>=7" "scikit-build-core>=0.11" "pybind11>=2.12" "dask[distributed,dataframe]" 2>&1 | quiet_pip
# optional: progress bars (attnreg.show_progress falls back to stderr lines without it)
$PY -m pip install -q --disable-pip-version-check "tqdm>=4.60" 2>&1 | quiet_pip
# optional: the formula interface (attnreg.ols("y ~ x | fe", data)) parses formulas with formulaic
$PY -m pip install -q --disable-pip-version-check "formulaic>=1.0" 2>&1 | quiet_pip
# the code-size limits of the C++ core (python-package/tests/test_code_limits.py)
$PY -m pip install -q --disable-pip-version-check "lizard>=1.17" 2>&1 | quiet_pip
$PY -m pip install -q --disable-pip-version-check "torch==2.13.0" 2>&1 | quiet_pip  # optional: attnreg.torch tests (CPU wheel on the machine: ~30 s)
# the Python reference site (tools/build-docs.sh; the R site uses Debian's r-cran-pkgdown)
# (docutils < 0.20: the version other tools on the Debian image pin; Sphinx 7.3 works with it)
$PY -m pip install -q --disable-pip-version-check "sphinx>=7.2" "docutils>=0.18.1,<0.20" 2>&1 | quiet_pip

jobs=${ATTNREG_JOBS:-$(nproc)}
cuda=${ATTNREG_CUDA:-AUTO}
# AUTO is resolved here as CMakeLists.txt resolves it (nvcc on PATH, $CUDACXX, /usr/local/cuda*),
# so AUTO without nvcc is the same build, and the same source hash below, as OFF (the main job's
# choice without a GPU): .ci/test.sh after .ci/main-job.sh reuses the build instead of redoing it.
if [ "$cuda" = AUTO ] && ! command -v nvcc >/dev/null && [ -z "${CUDACXX:-}" ] &&
   [ ! -e /usr/local/cuda/bin/nvcc ] && [ ! -e /usr/local/cuda-13/bin/nvcc ]; then
  cuda=OFF
  echo "no CUDA compiler (nvcc) found: building without the CUDA backend"
fi
# ccache is optional: a fresh machine without it builds the same, only without the cache.
if command -v ccache >/dev/null && [ -z "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ]; then
  # NOHASHDIR: the same sources compiled from another directory (R CMD check's copy) still hit.
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_CUDA_COMPILER_LAUNCHER=ccache CCACHE_NOHASHDIR=1
fi
echo "compile jobs: $jobs, CUDA backend: $cuda, compiler launcher: ${CMAKE_CXX_COMPILER_LAUNCHER:-none}"

step "C++ core, tests and benchmarks (build/)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DATTNREG_CUDA="$cuda" >build/cmake-configure.log 2>&1 ||
  { tail -40 build/cmake-configure.log; exit 1; }
grep "attnreg: CUDA backend" build/cmake-configure.log || true
cmake --build build -j "$jobs" 2>&1 | progress build/cmake-build.log || { tail -60 build/cmake-build.log; exit 1; }
echo "$(grep -c 'Building' build/cmake-build.log || true) objects compiled (log: build/cmake-build.log)"

step "Python package: build and install (pip install . --no-build-isolation)"
# The build reuses the installed scikit-build-core/pybind11 (no isolated environment that
# recompiles everything) and the persistent build dir build/py-<tag>; the install is skipped
# when neither the sources nor the CUDA choice changed since the last one.
py_inputs=(CMakeLists.txt VERSION pyproject.toml LICENSE core cuda bindings/python python-package/src python-package/README.md)
src_hash=$( { echo "cuda=$cuda python=$(command -v "$PY")"; git ls-files -co --exclude-standard -z -- "${py_inputs[@]}" 2>/dev/null |
  sort -z | xargs -0 sha256sum; } | sha256sum | cut -c1-16)
stamp=build/python-installed.hash
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$src_hash" ] && \
   $PY -c "import attnreg, sys; sys.exit(attnreg.__version__ != open('VERSION').read().strip())" 2>/dev/null; then
  echo "sources unchanged since the last install (hash $src_hash): nothing to do"
else
  rm -f "$stamp"
  # -v: the compile's lines reach the log, and its progress the console
  CMAKE_BUILD_PARALLEL_LEVEL=$jobs $PY -m pip install -v --no-deps --no-build-isolation --force-reinstall \
    --disable-pip-version-check -C cmake.define.ATTNREG_CUDA="$cuda" . 2>&1 | progress build/python-build.log ||
    { tail -60 build/python-build.log; exit 1; }
  echo "$src_hash" > "$stamp"
  echo "installed attnreg $($PY -c 'import attnreg; print(attnreg.__version__)') (log: build/python-build.log)"
fi

step "R package: assemble, build, install"
tarball=$(R-package/build-package.sh "$root/build/r")
r_hash=$( { tar -xOzf "$tarball" --exclude='*/DESCRIPTION'; tar -xOzf "$tarball" attnreg/DESCRIPTION |
  grep -v '^Packaged:\|^Date:'; } | sha256sum | cut -c1-16)
r_cxx=$(R CMD config CXX17)
if [ "${CMAKE_CXX_COMPILER_LAUNCHER:-}" = ccache ] && [ "${r_cxx#ccache}" = "$r_cxx" ]; then
  # R compiles the package itself (here and again in R CMD check): let ccache serve it too.
  printf 'CXX17 = ccache %s\n' "$r_cxx" > build/r/Makevars.ccache
  export R_MAKEVARS_USER=$root/build/r/Makevars.ccache
fi
r_stamp=build/r/installed.hash
if [ -f "$r_stamp" ] && [ "$(cat "$r_stamp")" = "$r_hash" ] && Rscript -e 'quit(status = !requireNamespace("attnreg", quietly = TRUE))'; then
  echo "R package unchanged since the last install: nothing to do"
else
  n_src=$(tar -tzf "$tarball" | grep -cE '^attnreg/src/[^/]+\.cpp$' || true)
  MAKEFLAGS="-j$jobs" R CMD INSTALL --no-multiarch "$tarball" 2>&1 | progress build/r/install.log "$n_src" ||
    { tail -40 build/r/install.log; exit 1; }
  echo "$r_hash" > "$r_stamp"
  echo "installed $(basename "$tarball") (log: build/r/install.log)"
fi
step_end
echo "set-up done in $(( $(date +%s) - t_start )) s: $(date -u +%FT%TZ)"
