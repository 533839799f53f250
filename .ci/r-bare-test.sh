#!/usr/bin/env bash
# The R source package installs on a bare Debian bookworm with nothing but R's own Debian
# packages (r-base-dev, r-cran-rcpp, r-cran-rcpparmadillo, r-cran-bh) plus the two
# SystemRequirements of R-package/DESCRIPTION (FFTW 3: libfftw3-dev; Google Highway:
# libhwy-dev), and without those two its configure script (R-package/configure) stops the
# install, before anything of the package is compiled, naming the Debian packages to install.
#   1. the source tarball: argument 1, or R-package/build-package.sh build/r-bare/pkg (on the
#      host: R and roxygen2)
#   2. a bare root: debootstrap --variant=minbase bookworm + apt-get install
#      --no-install-recommends r-base-dev r-cran-rcpp r-cran-rcpparmadillo r-cran-bh; asserted:
#      no libfftw3-dev, no libhwy-dev, no /usr/include/fftw3.h, no /usr/include/hwy
#   3. R CMD INSTALL there must FAIL, in configure, naming libfftw3-dev and libhwy-dev, with no
#      compile of the package's sources
#   4. apt-get install --no-install-recommends libfftw3-dev libhwy-dev, R CMD INSTALL (timed)
#   5. a smoke test with Rscript (ols_attention = lm, kreg + predict, attnreg_build_info())
# Usage (as root): .ci/r-bare-test.sh [TARBALL]
#   ATTNREG_R_BARE_ROOT=DIR  the root (default build/r-bare/root; reused when complete, so reruns
#                            skip debootstrap; step 4's two -dev packages are purged again first)
#   ATTNREG_JOBS=N           make's parallel jobs for the compile (default 2: MAKEFLAGS=-j2)
# Logs: build/r-bare/*.log (the last lines are printed when a step fails). Needs network access
# to deb.debian.org; installs debootstrap with apt when missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[ "$(id -u)" -eq 0 ] || { echo "run as root (debootstrap, chroot and mount need it)" >&2; exit 1; }
out=$root/build/r-bare
logs=$out
mkdir -p "$logs"
bare=${ATTNREG_R_BARE_ROOT:-build/r-bare/root}
mkdir -p "$(dirname "$bare")"
bare=$(cd "$(dirname "$bare")" && pwd)/$(basename "$bare")
done_mark=$bare/.attnreg-r-bare-root-complete
base_pkgs=$bare/.attnreg-r-bare-root-packages   # dpkg's list of the bare state (before step 4)
mirror=http://deb.debian.org/debian
jobs=${ATTNREG_JOBS:-2}
r_pkgs=(r-base-dev r-cran-rcpp r-cran-rcpparmadillo r-cran-bh)
sys_pkgs=(libfftw3-dev libhwy-dev)
work=/opt/attnreg-r          # inside the root: the tarball, the private library, the smoke test
rlib=$work/lib

t_start=$(date +%s); step_name=""; step_t=$t_start
step_names=(); step_secs=()
step_end() {
  [ -n "$step_name" ] || return 0
  local s=$(( $(date +%s) - step_t ))
  step_names+=("$step_name"); step_secs+=("$s")
  printf '   done: %s (%d s)\n' "$step_name" "$s"
  step_name=""
}
step() { step_end; step_name=$1; step_t=$(date +%s); printf '== %s\n' "$1"; }
. "$root/.ci/bare-root-lib.sh"   # fail, run, the mounts (undone on exit), copy_host_files

# The chroot runs with a clean environment: nothing of the host's R, compiler or library set-up
# (no R_LIBS, R_MAKEVARS_USER, CCACHE_*, CPATH, LIBRARY_PATH...). apt fetches over plain http
# (the Release files are signed); for an https mirror the host's CA bundle goes along as
# /etc/ssl/host-ca.crt (a minbase root has no ca-certificates).
in_root() {
  chroot "$bare" /usr/bin/env -i HOME=/root LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    DEBIAN_FRONTEND=noninteractive "$@"
}
apt_root() {
  local o=()
  case "$mirror" in https:*) [ ! -s "$bare/etc/ssl/host-ca.crt" ] || o=(-o Acquire::https::CaInfo=/etc/ssl/host-ca.crt) ;; esac
  in_root apt-get "${o[@]}" "$@"
}
# installed PKG...: those of PKG... that are installed (dpkg-query fails on names it never saw)
installed() { { chroot "$bare" dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "$@" 2>/dev/null || true; } | awk '$2 ~ /^.i/ {print $1}'; }
pkg_list() { chroot "$bare" dpkg-query -W -f='${Package}:${Architecture} ${Version}\n' | sort; }
# r_install LOG: R CMD INSTALL of the tarball into the private library, timed (real user sys
# seconds, children included) into LOG.time; returns R CMD INSTALL's status
r_install() {
  local log=$1 rc=0
  rm -rf --one-file-system "${bare:?}$rlib"; mkdir -p "$bare$rlib"
  : >"$log"
  local TIMEFORMAT='%R %U %S'
  { time in_root env MAKEFLAGS="-j$jobs" R CMD INSTALL --no-multiarch -l "$rlib" "$work/$(basename "$tarball")" >>"$log" 2>&1; } 2>"$log.time" || rc=$?
  return $rc
}

echo "   load at start: $(cat /proc/loadavg)"

step "source tarball"
if [ $# -ge 1 ]; then
  tarball=$1
  [ -f "$tarball" ] || fail "no tarball at $tarball"
else
  : >"$logs/build-package.log"
  run "$logs/build-package.log" bash -c 'set -o pipefail; R-package/build-package.sh "$1" | tee "$2"' _ "$out/pkg" "$logs/build-package.out"
  tarball=$(tail -n 1 "$logs/build-package.out")
  [ -f "$tarball" ] || fail "build-package.sh printed '$tarball', which is not a file" "$logs/build-package.log"
fi
tarball=$(cd "$(dirname "$tarball")" && pwd)/$(basename "$tarball")
echo "   $tarball ($(du -h "$tarball" | cut -f1))"

step "bare Debian bookworm root with R ($bare)"
if [ -f "$done_mark" ]; then
  echo "   reusing it (complete since $(cat "$done_mark"))"
  copy_host_files "${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}"
  mount_all
  # step 4 of the last run installed FFTW and Highway: back to the bare state
  prev=$(installed "${sys_pkgs[@]}")
  if [ -n "$prev" ]; then
    : >"$logs/apt-purge.log"
    run "$logs/apt-purge.log" apt_root purge -y -qq --autoremove "${sys_pkgs[@]}"
    echo "   purged $(echo $prev) (and what only they needed) of an earlier run"
  fi
  if [ -f "$base_pkgs" ] && ! diff -q "$base_pkgs" <(pkg_list) >/dev/null; then
    diff "$base_pkgs" <(pkg_list) >"$logs/root-drift.log" || true
    unmount_all
    echo "   the root's packages differ from its bare state (log: $logs/root-drift.log): building it again"
    rm -f "$done_mark"
  fi
  unmount_all
fi
if [ ! -f "$done_mark" ]; then
  debootstrap_root "$logs" "$mirror" "${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}"
  : >"$logs/apt-root.log"
  t0=$(date +%s)
  run "$logs/apt-root.log" apt_root update -qq
  run "$logs/apt-root.log" apt_root install -y -qq --no-install-recommends "${r_pkgs[@]}"
  run "$logs/apt-root.log" apt_root clean
  echo "   apt-get install --no-install-recommends ${r_pkgs[*]}: $(( $(date +%s) - t0 )) s"
  pkg_list >"$base_pkgs"
  unmount_all
  date -u +%FT%TZ >"$done_mark"
fi
echo "   $(du -sh --one-file-system "$bare" | cut -f1), $(chroot "$bare" dpkg -l | wc -l) lines of dpkg -l ($(chroot "$bare" dpkg-query -W | wc -l) packages)"
echo "   $(in_root R --version | head -n 1); $(in_root g++ --version | head -n 1)"
echo "   $(chroot "$bare" dpkg-query -W -f='${Package} ${Version}, ' r-cran-rcpp r-cran-rcpparmadillo r-cran-bh | sed 's/, $//')"

step "the root has neither FFTW nor Highway"
bad=$(installed "${sys_pkgs[@]}")
[ -z "$bad" ] || fail "installed in the root: $(echo $bad)"
for d in /usr/include/fftw3.h /usr/include/hwy; do
  [ ! -e "$bare$d" ] || fail "$d exists in the root"
done
libs=$(chroot "$bare" /sbin/ldconfig -p | grep -oE 'lib(fftw3|hwy)[^ ]*' | sort -u || true)
echo "   ${sys_pkgs[*]} not installed; no /usr/include/fftw3.h, no /usr/include/hwy${libs:+ (runtime libraries present: $(echo $libs))}"

step "R CMD INSTALL without FFTW and Highway must stop in configure"
rm -rf --one-file-system "${bare:?}$work"
mkdir -p "$bare$work"
cp "$tarball" "$bare$work/"
mount_all
log=$logs/install-missing.log
if r_install "$log"; then fail "R CMD INSTALL succeeded without libfftw3-dev and libhwy-dev" "$log"; fi
grep -q 'ERROR: configuration failed' "$log" || fail "R CMD INSTALL failed, but not in configure" "$log"
for p in "${sys_pkgs[@]}"; do
  grep -qF -- "$p" "$log" || fail "configure's output does not name $p" "$log"
done
if grep -qE -- ' -c core_' "$log"; then fail "a core_*.cpp compile ran before configure stopped the install" "$log"; fi
if grep -qE -- ' -c [^ ]+\.(cpp|cc|c)( |$)' "$log"; then fail "a source of the package was compiled before configure stopped the install" "$log"; fi
[ ! -e "$bare$rlib/attnreg" ] || fail "a failed install left $rlib/attnreg behind" "$log"
read -r real _ <"$log.time"
echo "   failed as it must, in ${real} s, before any compile of the package's sources; configure said:"
grep -E '^(configure:|  Install it:)|^ERROR:' "$log" | sed 's/^/   | /'

step "apt-get install --no-install-recommends ${sys_pkgs[*]} in the root"
: >"$logs/apt-sys.log"
t0=$(date +%s)
run "$logs/apt-sys.log" apt_root update -qq
run "$logs/apt-sys.log" apt_root install -y -qq --no-install-recommends "${sys_pkgs[@]}"
echo "   $(( $(date +%s) - t0 )) s: $(chroot "$bare" dpkg-query -W -f='${Package} ${Version}, ' "${sys_pkgs[@]}" | sed 's/, $//'); dpkg -l: $(chroot "$bare" dpkg -l | wc -l) lines"

step "R CMD INSTALL with FFTW and Highway (MAKEFLAGS=-j$jobs)"
log=$logs/install.log
echo "   load before: $(cat /proc/loadavg)"
r_install "$log" || fail "R CMD INSTALL failed" "$log"
read -r real user sys <"$log.time"
echo "   load after:  $(cat /proc/loadavg)"
grep -q '^configure: found FFTW 3' "$log" || fail "configure did not report FFTW 3" "$log"
grep -q '^configure: found Google Highway' "$log" || fail "configure did not report Highway" "$log"
grep -q 'DONE (attnreg)' "$log" || fail "no 'DONE (attnreg)' in R CMD INSTALL's output" "$log"
ncomp=$(grep -cE -- ' -c [^ ]+\.cpp( |$)' "$log" || true)
echo "   installed in ${real} s of wall, $(awk -v u="$user" -v s="$sys" 'BEGIN{printf "%.0f", u+s}') CPU-s ($ncomp compiles, log: $log)"
grep -E '^configure:' "$log" | sed 's/^/   | /'

step "smoke test with Rscript in the root"
cat >"$bare$work/smoke.R" <<EOF
lib <- "$rlib"
library(attnreg, lib.loc = lib)
where <- dirname(find.package("attnreg"))
if (normalizePath(where) != normalizePath(lib)) stop("attnreg was loaded from ", where, ", not ", lib)
cat("attnreg", format(packageVersion("attnreg", lib.loc = lib)), "from", where, "\n")
f <- ols_attention(mpg ~ wt + hp, data = mtcars)
ref <- coef(lm(mpg ~ wt + hp, mtcars))
cf <- coef(f)
if (length(cf) != length(ref) || !identical(names(cf), names(ref))) stop("coef(ols_attention): ", paste(names(cf), collapse = " "))
d <- max(abs(cf - ref))
cat(sprintf("ols_attention(mpg ~ wt + hp): %s; max |coef - coef(lm)| = %.2g\n",
            paste(sprintf("%s %.8g", names(cf), cf), collapse = ", "), d))
if (!(d <= 1e-10)) stop("ols_attention's coefficients differ from lm's by ", d)
k <- kreg(mpg ~ wt, data = mtcars, bw = 0.5)
p <- predict(k, mtcars[1:3, ])
cat(sprintf("kreg(mpg ~ wt, bw = 0.5), predict(rows 1:3): %s\n", paste(format(p, digits = 6), collapse = " ")))
if (length(p) != 3L || !all(is.finite(p))) stop("predict(kreg) is not 3 finite values")
print(attnreg_build_info())
EOF
: >"$logs/smoke.log"
run "$logs/smoke.log" in_root Rscript "$work/smoke.R"
sed 's/^/   /' "$logs/smoke.log" | cut -c1-200
unmount_all
step_end

total=$(( $(date +%s) - t_start ))
echo "== times"
for i in "${!step_names[@]}"; do printf '   %5d s  %s\n' "${step_secs[$i]}" "${step_names[$i]}"; done
printf '   %5d s  total\n' "$total"
echo "   load at end: $(cat /proc/loadavg)"
echo "R bare-root test passed in $total s: $(basename "$tarball") on bookworm with ${r_pkgs[*]} (+ ${sys_pkgs[*]})"
