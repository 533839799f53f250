#!/usr/bin/env bash
# Assemble a buildable R source package from R-package/ + core/ + bindings/r/ (as the R
# packages of LightGBM and xgboost do), then `R CMD build` it.
#   R-package/build-package.sh [--update-man] [OUTDIR]
#     -> OUTDIR/attnreg_<version>.tar.gz (default build/r); --update-man: see "Help pages" below
# The staged tree is OUTDIR/attnreg; nothing is generated inside R-package/ itself.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
update_man=0
if [ "${1:-}" = "--update-man" ]; then update_man=1; shift; fi
out=${1:-$root/build/r}
stage=$out/attnreg
rm -rf "$stage"
mkdir -p "$stage/src/include"
# Package skeleton (DESCRIPTION, NAMESPACE, R/, tests/, man/ ...), without build leftovers.
tar -C "$here" --exclude=./src --exclude=./build-package.sh --exclude='*.tar.gz' -cf - . | tar -C "$stage" -xf -
# The change log is shared with the Python package (news(package = "attnreg") reads it).
cp "$root/NEWS.md" "$stage/NEWS.md"
# The C++ core and the Rcpp glue. Core sources get a prefix so names cannot clash.
cp -r "$root/core/include/attnreg" "$stage/src/include/"
# R compiles the sources of src/ only, not of its subfolders: core/src/<stage>/<name>.cpp becomes
# src/core_<stage>_<name>.cpp.
for f in "$root"/core/src/*/*.cpp; do
  d=$(basename "$(dirname "$f")")
  cp "$f" "$stage/src/core_${d}_$(basename "$f")"
done
# Armadillo comes only through attnreg/base/arma.hpp (RcppArmadillo's 32-bit uword here): a source
# or header reaching <armadillo> first gets 64-bit uword, so arma::mat's layout differs between
# the objects of one library; it links silently and crashes at run time.
if grep -rln '^[[:space:]]*#[[:space:]]*include[[:space:]]*<armadillo>' "$stage/src" | grep -v '/attnreg/base/arma\.hpp$' >&2; then
  echo "these files include <armadillo> directly; include \"attnreg/base/arma.hpp\" instead" >&2
  exit 1
fi
# R CMD check --as-cran warns about pragmas that silence diagnostics; the R build drops them
# (they only hide GCC's -Wpsabi notes on 64-byte vector types, which are notes, not warnings).
sed -i '/#pragma GCC diagnostic ignored/d' "$stage"/src/include/attnreg/detail/*.hpp
cp "$root"/bindings/r/*.cpp "$stage/src/"
# Private headers of the glue go beside the core headers (src/include, on the include path): R CMD
# check warns about .hpp files directly in src/.
cp "$root"/bindings/r/*.hpp "$stage/src/include/" 2>/dev/null || true
# The bundled real data sets (data/*.csv, data/nist) travel as inst/extdata.
mkdir -p "$stage/inst/extdata"
cp "$root"/data/*.csv "$stage/inst/extdata/"
cp -r "$root/data/nist" "$stage/inst/extdata/"
# One version for every build: the repository's VERSION file (CMake and the Python wheel read
# it too). R-package/DESCRIPTION has no Version field; the staged copy gets it here.
version=$(head -n 1 "$root/VERSION" | tr -d '[:space:]')
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "VERSION: '$version' is not X.Y.Z" >&2; exit 1; }
grep -q '^Version:' "$stage/DESCRIPTION" && { echo "R-package/DESCRIPTION must not carry a Version field (it comes from VERSION)" >&2; exit 1; }
# Date (staging day, or SOURCE_DATE_EPOCH for a reproducible build): citation() and CRAN read it.
date=$(date -u -d "@${SOURCE_DATE_EPOCH:-$(date +%s)}" +%F)
sed -i "s/^Title: .*/&\nVersion: $version\nDate: $date/" "$stage/DESCRIPTION"
# Boost.Math headers (distributions.cpp) come from BH, named in DESCRIPTION's LinkingTo.
cat > "$stage/src/Makevars" <<MAKEVARS
CXX_STD = CXX17
PKG_CPPFLAGS = -Iinclude -DATTNREG_R_BUILD -DARMA_WARN_LEVEL=1 -DATTNREG_VERSION=\\"$version\\" -DHWY_SHARED_DEFINE
PKG_CXXFLAGS = \$(SHLIB_OPENMP_CXXFLAGS)
PKG_LIBS = \$(SHLIB_OPENMP_CXXFLAGS) -lfftw3 -lhwy \$(LAPACK_LIBS) \$(BLAS_LIBS) \$(FLIBS)
MAKEVARS
# R/RcppExports.R and src/RcppExports.cpp from the // [[Rcpp::export]] tags.
Rscript -e "Rcpp::compileAttributes('$stage')" >/dev/null
# Help pages: R-package/man is committed (the roxygen2 output of R/*.R and of the //' comments
# in bindings/r), so the package builds with its help where roxygen2 is missing. Where roxygen2
# is installed the pages are regenerated here and compared with the committed ones: a stale
# man/ fails under CI (CI=true) and otherwise warns; `build-package.sh --update-man [OUTDIR]`
# copies the regenerated pages back into R-package/man. NAMESPACE is maintained by hand.
if Rscript -e 'quit(status = !requireNamespace("roxygen2", quietly = TRUE))'; then
  rm -rf "$stage/man"
  Rscript -e "suppressMessages(roxygen2::roxygenise('$stage', roclets = 'rd', load_code = roxygen2::load_source))" >/dev/null
  if [ "$update_man" = 1 ]; then
    rm -rf "$here/man" && cp -r "$stage/man" "$here/man"
    echo "R-package/man updated from the roxygen comments" >&2
  elif ! diff -r -q "$here/man" "$stage/man" >&2; then
    echo "R-package/man is stale (it differs from the roxygen comments): run R-package/build-package.sh --update-man and commit R-package/man" >&2
    [ "${CI:-false}" != "true" ] || exit 1
  fi
else
  echo "roxygen2 not installed: using the committed R-package/man" >&2
fi
(cd "$out" && R CMD build --no-build-vignettes attnreg >/dev/null)
echo "$out/attnreg_${version}.tar.gz"
