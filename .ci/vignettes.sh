#!/usr/bin/env bash
# Render every vignette so that none can rot: vignettes/*.Rmd with rmarkdown (Debian's pandoc,
# r-cran-knitr, r-cran-rmarkdown) to vignettes/out/<name>/index.html, and vignettes/*.py
# (except main_job.py, run by .ci/test.sh, and _*.py helpers) with python3 to
# vignettes/out/<name>/index.md + PNGs. Each vignette checks its own numerical claims and fails
# when one does not hold. Prints the wall time of each; exits non-zero when any fails.
#
#   bash .ci/vignettes.sh            # CI: smaller replication counts
#   bash .ci/vignettes.sh --full     # the full runs (passed through to every vignette)
#   bash .ci/vignettes.sh --full ols-is-attention   # only the vignettes named
#
# Uses the installed attnreg (R library / Python package); set R_LIBS / PYTHONPATH to test a
# build tree instead. Output root: $ATTNREG_VIGNETTE_OUT (default vignettes/out).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
PY=${PYTHON:-python3}
full=0
only=()
for arg in "$@"; do
  case "$arg" in
    --full) full=1 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    -*) echo "vignettes.sh: unknown option $arg (use --full)" >&2; exit 2 ;;
    *) only+=("$arg") ;;
  esac
done
out=${ATTNREG_VIGNETTE_OUT:-$root/vignettes/out}
mkdir -p "$out"
out=$(cd "$out" && pwd)

wanted() {
  [ ${#only[@]} -eq 0 ] && return 0
  local x
  for x in "${only[@]}"; do [ "$x" = "$1" ] && return 0; done
  return 1
}

status=0
summary=()
n_run=0
shopt -s nullglob
for f in vignettes/*.Rmd vignettes/*.py; do
  base=$(basename "$f")
  name=${base%.*}
  case "$base" in main_job.py|_*) continue ;; esac
  wanted "$name" || continue
  n_run=$((n_run + 1))
  printf '\n== vignette %s%s ==\n' "$f" "$([ $full = 1 ] && echo ' (--full)')"
  mkdir -p "$out/$name"
  log="$out/$name/render-${base##*.}.log"   # an Rmd and a py vignette may share a name
  t0=$(date +%s.%N)
  if [[ "$f" == *.Rmd ]]; then
    rfull=$([ $full = 1 ] && echo TRUE || echo FALSE)
    tmp=$(mktemp -d)
    Rscript -e "rmarkdown::render('$f', output_dir = '$out/$name', output_file = 'index.html',
                 intermediates_dir = '$tmp', knit_root_dir = '$root', quiet = TRUE,
                 params = list(full = $rfull))" >"$log" 2>&1
    rc=$?
    rm -rf "$tmp"
  else
    args=(--out "$out")
    [ $full = 1 ] && args+=(--full)
    "$PY" "$f" "${args[@]}" >"$log" 2>&1
    rc=$?
  fi
  t1=$(date +%s.%N)
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  grep -E "check[: ].*(OK|FAILED)" "$log" | sed 's/^#> //; s/^ *//' | tail -n 60
  if [ $rc -ne 0 ]; then
    echo "FAILED (exit $rc) after ${secs} s; last lines of $log:"
    tail -n 30 "$log"
    status=1
    summary+=("$(printf '%-40s FAILED  %7s s' "$base" "$secs")")
  else
    echo "ok: ${secs} s -> $out/$name/"
    summary+=("$(printf '%-40s ok      %7s s' "$base" "$secs")")
  fi
done

if [ $n_run -eq 0 ]; then
  echo "vignettes.sh: no vignette rendered (names given: ${only[*]:-none})" >&2
  exit 1
fi
printf '\n== vignettes: wall time ==\n'
printf '%s\n' "${summary[@]}"
exit $status
