#!/usr/bin/env bash
# Install everything attnreg needs on a fresh Debian bookworm machine, then build and install
# the C++ core + tests, the Python package and the R package. Idempotent: re-running rebuilds
# incrementally. Used by the README's two commands (.ci/main-job.sh, .ci/test.sh) and by CI.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
log() { printf '\n== %s ==\n' "$*"; }
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"

APT_PACKAGES=(
  build-essential cmake pkg-config git
  libarmadillo-dev libopenblas-dev liblapack-dev libgtest-dev
  r-base-dev r-cran-rcpp r-cran-rcpparmadillo r-cran-testthat r-cran-roxygen2
  r-cran-knitr r-cran-rmarkdown pandoc r-cran-kernsmooth r-cran-locfit r-cran-sandwich
)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "apt-get install ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
log "Python dependencies"
$PY -m pip install -q --disable-pip-version-check \
  "numpy>=1.23" "scipy>=1.10" "pandas>=1.5" "scikit-learn>=1.6" "statsmodels>=0.14" \
  "matplotlib>=3.6" "pytest>=7" "scikit-build-core>=0.10" "pybind11>=2.12" "dask[distributed,dataframe]" 2>&1 | grep -v "Running pip as the 'root'" || true
# optional: progress bars (attnreg.show_progress falls back to stderr lines without it)
$PY -m pip install -q --disable-pip-version-check "tqdm>=4.60" 2>&1 | grep -v "Running pip as the 'root'" || true
$PY -m pip install -q --disable-pip-version-check "torch==2.13.0" 2>&1 | grep -v "Running pip as the 'root'" || true  # optional: attnreg.torch tests (CPU wheel on the machine: ~30 s)

jobs=${ATTNREG_JOBS:-$(nproc)}
log "C++ core, tests and benchmarks (build/)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DATTNREG_CUDA="${ATTNREG_CUDA:-AUTO}" >/dev/null
cmake --build build -j "$jobs"

log "Python package: wheel, then install"
rm -rf build/wheel
CMAKE_BUILD_PARALLEL_LEVEL=$jobs $PY -m pip wheel -q --no-deps --disable-pip-version-check \
  -w build/wheel ./python-package 2>&1 | grep -v "Running pip as the 'root'" || true
$PY -m pip install -q --force-reinstall --no-deps --disable-pip-version-check build/wheel/attnreg-*.whl \
  2>&1 | grep -v "Running pip as the 'root'" || true

log "R package: assemble, build, install"
tarball=$(R-package/build-package.sh "$root/build/r")
MAKEFLAGS="-j$jobs" R CMD INSTALL --no-multiarch "$tarball" >build/r/install.log 2>&1 ||
  { tail -40 build/r/install.log; exit 1; }
echo "setup done: $(date -u +%FT%TZ)"
