#!/usr/bin/env bash
# Build the documentation sites, offline, from the packages' own documentation:
#   docs/_site/python  Sphinx (autodoc/autosummary + napoleon) from the docstrings of the
#                      installed attnreg (docs/python/conf.py; ATTNREG_DOCS_SRC=python-package/src
#                      documents a checkout instead, with the extension module built there)
#   docs/_site/r       pkgdown from the roxygen help pages (R-package/man), NEWS.md and the R
#                      Markdown vignettes (R-package/_pkgdown.yml); the vignettes rendered by
#                      .ci/vignettes.sh ($ATTNREG_VIGNETTE_OUT) are reused, missing ones rendered
# Fails on: a public object without a docstring, an unresolved reference to an attnreg object
# (or a docstring's name_ or |x| read as a link), a pkgdown warning, an R export without a help
# page, a vignette missing from the site's menu, and "seed 00x", "DESIGN.md" or "the issue" in
# the built pages. No network: no intersphinx, and pkgdown.internet = FALSE (no CRAN look-up).
#   bash tools/build-docs.sh [python|r]     (default: both)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
PY=${PYTHON:-python3}
site=$root/docs/_site
work=$root/build/docs
which=${1:-all}
mkdir -p "$site" "$work"
status=0
t_all=$(date +%s)

if [ "$which" = all ] || [ "$which" = python ]; then
  t0=$(date +%s)
  # A fresh environment each time: Sphinx does not see docstring changes, nor repeats the
  # warnings of pages it does not re-read.
  rm -rf "$site/python" "$work/doctrees" docs/python/api docs/python/generated
  # Warnings that matter fail the build: a public object without a docstring, a reference that
  # does not resolve (an attnreg object, or a name_ / |x| that docutils reads as a link or a
  # substitution), an object autodoc cannot import, one documented twice. Other markup warnings
  # (a field list without a blank line, ...) are printed and counted.
  warn=$work/sphinx-warnings.log; : >"$warn"
  if ! $PY -m sphinx -b html --keep-going -q -w "$warn" -d "$work/doctrees" docs/python "$site/python" \
      >"$work/sphinx.log" 2>&1; then
    cat "$work/sphinx.log"; echo "docs: Sphinx failed (above)"; status=1
  fi
  fatal='has no docstring|reference target not found|Unknown target name|Undefined substitution|failed to import|duplicate object description|toctree'
  if grep -qE "$fatal" "$warn"; then
    grep -E "$fatal" "$warn"; echo "docs: the Python reference has broken or missing documentation (above)"; status=1
  fi
  if grep -vqE "$fatal" "$warn"; then
    echo "docs: $(grep -vE "$fatal" "$warn" | grep -cE 'WARNING|ERROR') markup warning(s), not fatal:"
    grep -vE "$fatal" "$warn" | head -20
  fi
  echo "docs: Python site $site/python ($(find "$site/python" -name '*.html' | wc -l) pages, $(( $(date +%s) - t0 )) s)"
fi

if [ "$which" = all ] || [ "$which" = r ]; then
  t0=$(date +%s)
  # Every export has a help page (R CMD check says so too, later and slower).
  Rscript -e '
    ex <- unlist(regmatches(readLines("R-package/NAMESPACE"),
                            gregexpr("(?<=^export\\()[^)]+", readLines("R-package/NAMESPACE"), perl = TRUE)))
    ex <- trimws(unlist(strsplit(ex, ",")))
    al <- unlist(lapply(list.files("R-package/man", "\\.Rd$", full.names = TRUE), function(f)
      sub("^\\\\alias\\{(.*)\\}$", "\\1", grep("^\\\\alias\\{", readLines(f), value = TRUE))))
    miss <- setdiff(ex, al)
    if (length(miss)) { cat("docs: exported without a help page:", miss, "\n"); quit(status = 1) }' || status=1
  # Every R Markdown vignette is in the site menu and the menu names no missing one.
  for f in vignettes/*.Rmd; do
    n=$(basename "$f" .Rmd)
    grep -q "href: articles/$n.html" R-package/_pkgdown.yml ||
      { echo "docs: vignette $n is not in R-package/_pkgdown.yml's Articles menu"; status=1; }
  done
  for n in $(sed -n 's/.*href: articles\/\(.*\)\.html/\1/p' R-package/_pkgdown.yml); do
    [ -f "vignettes/$n.Rmd" ] || { echo "docs: R-package/_pkgdown.yml names a missing vignette $n"; status=1; }
  done
  R-package/build-package.sh "$work/r" >/dev/null
  rm -rf "$site/r"
  if ! Rscript -e '
    options(pkgdown.internet = FALSE, warn = 1)
    warned <- character()
    withCallingHandlers(
      pkgdown::build_site(commandArgs(TRUE)[1], install = FALSE, new_process = FALSE,
                          preview = FALSE, override = list(destination = commandArgs(TRUE)[2])),
      warning = function(w) { warned <<- c(warned, conditionMessage(w)) })
    if (length(warned)) { cat("docs: pkgdown warnings:\n", paste0("  ", warned, "\n")); quit(status = 1) }
  ' "$work/r/attnreg" "$site/r" >"$work/pkgdown.log" 2>&1; then
    cat "$work/pkgdown.log"; echo "docs: the R site failed (above)"; status=1
  fi
  # The vignettes: copies of this run's renderings, else rendered here.
  vout=${ATTNREG_VIGNETTE_OUT:-$root/vignettes/out}
  mkdir -p "$site/r/articles"
  for f in vignettes/*.Rmd; do
    n=$(basename "$f" .Rmd)
    if [ ! -f "$vout/$n/index.html" ]; then
      echo "docs: rendering vignette $n (no rendering in $vout)"
      tmp=$(mktemp -d)
      Rscript -e "rmarkdown::render('$f', output_dir = '$vout/$n', output_file = 'index.html',
                  intermediates_dir = '$tmp', knit_root_dir = '$root', quiet = TRUE)" \
        >"$work/vignette-$n.log" 2>&1 || { tail -20 "$work/vignette-$n.log"; status=1; }
      rm -rf "$tmp"
    fi
    [ -f "$vout/$n/index.html" ] && cp "$vout/$n/index.html" "$site/r/articles/$n.html"
  done
  echo "docs: R site $site/r ($(find "$site/r" -name '*.html' | wc -l) pages, $(( $(date +%s) - t0 )) s)"
fi

# User-facing text stands alone: no internal notes cited in the built pages.
if hits=$(grep -rliE "seed 0[0-9]|DESIGN\.md|the issue" "$site" --include='*.html'); then
  echo "docs: internal references in the built pages:"; echo "$hits"; status=1
fi
echo "docs: done in $(( $(date +%s) - t_all )) s (status $status)"
exit $status
