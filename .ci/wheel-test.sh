#!/usr/bin/env bash
# The binary wheel installs and runs where nothing can be compiled: a bare Debian bookworm root
# (debootstrap minbase + python3 + python3-venv: no compiler, no -dev package, no Armadillo,
# OpenBLAS, FFTW or Highway), a fresh venv there, `pip install --only-binary=:all:` of the wheel
# (numpy, pandas, scikit-learn and the README tour's optional formulaic, matplotlib, dask,
# tqdm come from PyPI), then the README's "## Python tour" snippets, run as pasted from a
# directory holding data/ (as python-package/tests/test_readme.py runs them from the checkout).
# Usage (as root): .ci/wheel-test.sh [WHEEL]   (default: the one attnreg-*.whl in build/wheel,
#   which tools/build-wheel.sh writes)
#   ATTNREG_BARE_ROOT=DIR  the root (default build/bare-root; reused when complete, so reruns
#                          skip debootstrap; the wheels pip downloaded are kept in it too)
# Logs: build/wheel-test/*.log (the last lines are printed when a step fails). Needs network
# access to deb.debian.org and PyPI; installs debootstrap with apt when missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[ "$(id -u)" -eq 0 ] || { echo "run as root (debootstrap, chroot and mount need it)" >&2; exit 1; }
logs=$root/build/wheel-test
mkdir -p "$logs"
bare=${ATTNREG_BARE_ROOT:-build/bare-root}
mkdir -p "$(dirname "$bare")"
bare=$(cd "$(dirname "$bare")" && pwd)/$(basename "$bare")
done_mark=$bare/.attnreg-bare-root-complete
mirror=http://deb.debian.org/debian

if [ $# -ge 1 ]; then
  wheel=$1
else
  shopt -s nullglob; wheels=(build/wheel/attnreg-*.whl); shopt -u nullglob
  [ ${#wheels[@]} -eq 1 ] || { echo "expected one build/wheel/attnreg-*.whl (found ${#wheels[@]}): run tools/build-wheel.sh or name the wheel" >&2; exit 1; }
  wheel=${wheels[0]}
fi
[ -f "$wheel" ] || { echo "no wheel at $wheel" >&2; exit 1; }
wheel=$(cd "$(dirname "$wheel")" && pwd)/$(basename "$wheel")

t_start=$(date +%s); step_name=""; step_t=$t_start
step_end() { [ -z "$step_name" ] || printf '   done: %s (%d s)\n' "$step_name" $(( $(date +%s) - step_t )); }
step() { step_end; step_name=$1; step_t=$(date +%s); printf '== %s\n' "$1"; }
. "$root/.ci/bare-root-lib.sh"   # fail, run, the mounts (undone on exit), copy_host_files

# The chroot runs with a clean environment: nothing of the host's Python, pip or compiler set-up.
# The host's CA bundle goes along (as /etc/ssl/host-ca.crt) for machines whose HTTPS to PyPI
# passes a TLS-inspecting proxy; apt fetches over plain http (Release files are signed).
in_root() {
  local ca=()
  [ ! -s "$bare/etc/ssl/host-ca.crt" ] || ca=(PIP_CERT=/etc/ssl/host-ca.crt)
  chroot "$bare" /usr/bin/env -i HOME=/root LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    DEBIAN_FRONTEND=noninteractive PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_DEFAULT_TIMEOUT=120 \
    MPLBACKEND=Agg "${ca[@]}" "$@"
}
step "bare Debian bookworm root ($bare)"
if [ -f "$done_mark" ]; then
  echo "   reusing it (complete since $(cat "$done_mark"))"
else
  debootstrap_root "$logs" "$mirror" "${PIP_CERT:-${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}}"
  : >"$logs/apt-root.log"
  t0=$(date +%s)
  run "$logs/apt-root.log" in_root apt-get update -qq
  run "$logs/apt-root.log" in_root apt-get install -y -qq --no-install-recommends python3 python3-venv
  run "$logs/apt-root.log" in_root apt-get clean
  echo "   apt-get install python3 python3-venv: $(( $(date +%s) - t0 )) s"
  unmount_all
  date -u +%FT%TZ >"$done_mark"
  echo "   $(du -sh --one-file-system "$bare" | cut -f1), $(chroot "$bare" dpkg-query -W | wc -l) packages"
fi

step "the root has no compiler, no -dev package, none of the libraries the wheel bundles"
found=$(chroot "$bare" /bin/sh -c 'for c in gcc cc c++ g++ cpp clang clang++ x86_64-linux-gnu-gcc-12 x86_64-linux-gnu-g++-12 ld as nvcc; do command -v $c; done' || true)
[ -z "$found" ] || fail "compiler tools in the root: $found"
for d in /usr/include/armadillo /usr/include/armadillo_bits /usr/include/fftw3.h /usr/include/hwy /usr/include/boost /usr/include/python3.11; do
  [ ! -e "$bare$d" ] || fail "$d exists in the root"
done
dev=$(chroot "$bare" dpkg-query -W -f='${Package}\n' | grep -E -- '-dev(:|$)' || true)
[ -z "$dev" ] || fail "-dev packages in the root: $(echo $dev)"
libs=$(chroot "$bare" /sbin/ldconfig -p | grep -oE 'lib(armadillo|openblas|blas|lapack|fftw3|hwy|gomp|gfortran|quadmath|arpack|superlu)[^ ]*' | sort -u || true)
[ -z "$libs" ] || fail "libraries the wheel must bundle are installed in the root: $(echo $libs)"
echo "   none of gcc, cc, c++, g++, cpp, clang, ld, as, nvcc; no /usr/include/{armadillo,fftw3.h,hwy,boost,python3.11}; no -dev package; no BLAS/LAPACK/Armadillo/FFTW/Highway/libgomp/libgfortran"

step "venv and pip install of $(basename "$wheel") (binary wheels only)"
work=/opt/attnreg-test          # inside the root
rm -rf --one-file-system "${bare:?}$work"
mkdir -p "$bare$work/run"
cp "$wheel" "$bare$work/"
cp -r data "$bare$work/run/data"
cp README.md "$bare$work/run/README.md"
copy_host_files "${PIP_CERT:-${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}}"
py_root=$(chroot "$bare" /usr/bin/python3 -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')
case "$(basename "$wheel")" in
  *-"$py_root"-*) ;;
  *) fail "$(basename "$wheel") is not for the root's python3 ($py_root): build it with PYTHON=python3.${py_root#cp3}" ;;
esac
mount_all
: >"$logs/pip.log"
t0=$(date +%s)
run "$logs/pip.log" in_root /usr/bin/python3 -m venv $work/venv
t1=$(date +%s)
# pip download resolves against PyPI every run but keeps the files it fetched in a wheelhouse
# inside the root (pip's HTTP cache stores nothing behind proxies that send no cache headers);
# the install then takes only those files and this wheel, all binary.
whl_in=$work/$(basename "$wheel")
house=/var/cache/attnreg-wheelhouse
extras=("formulaic>=1.0" "matplotlib>=3.6" "dask[dataframe]" "tqdm>=4.60")
run "$logs/pip.log" in_root $work/venv/bin/pip download --only-binary=:all: -d $house "$whl_in" "${extras[@]}"
rm -f "$bare$house"/attnreg-*.whl   # never an older attnreg from an earlier run
t2=$(date +%s)
run "$logs/pip.log" in_root $work/venv/bin/pip install --only-binary=:all: --no-index --find-links $house \
  "$whl_in" "${extras[@]}"
echo "   venv $(( t1 - t0 )) s, pip download $(( t2 - t1 )) s ($(grep -c 'already downloaded' "$logs/pip.log" || true) files already there), pip install $(( $(date +%s) - t2 )) s"
in_root $work/venv/bin/pip list --format=freeze 2>/dev/null | grep -iE '^(attnreg|numpy|pandas|scikit-learn|scipy|formulaic|matplotlib|dask|tqdm)==' |
  tr '\n' ' ' | sed 's/^/   /'; echo
# every shared library of the extension resolves inside the root (the wheel's own attnreg.libs)
: >"$logs/ldd.log"
run "$logs/ldd.log" in_root /bin/sh -c "ldd $work/venv/lib/python3*/site-packages/attnreg/_core*.so"
if grep -q 'not found' "$logs/ldd.log"; then fail "unresolved libraries of _core" "$logs/ldd.log"; fi
echo "   _core's libraries: $(grep -c 'attnreg\.libs' "$logs/ldd.log") from attnreg.libs, the rest from the root's libc/libstdc++/libgcc (log: $logs/ldd.log)"

step "attnreg.build_info() in the root"
: >"$logs/build-info.log"
run "$logs/build-info.log" in_root /bin/sh -c "cd $work/run && $work/venv/bin/python -c 'import attnreg; print(attnreg.__file__); print(attnreg.build_info())'"
sed 's/^/   /' "$logs/build-info.log"
grep -q "$work/venv/lib/python3.*/site-packages/attnreg/" "$logs/build-info.log" || fail "attnreg was not imported from the venv" "$logs/build-info.log"

step "metadata, version and a few fits (.ci/wheel_smoke.py) in the root"
cp .ci/wheel_smoke.py VERSION "$bare$work/run/"
: >"$logs/smoke.log"
run "$logs/smoke.log" in_root /bin/sh -c "cd $work/run && $work/venv/bin/python wheel_smoke.py VERSION"
sed 's/^/   /' "$logs/smoke.log" | cut -c1-200

step "the README's Python tour in the root"
# the ```python blocks of the "## Python tour" section, in order, in one interpreter (as
# python-package/tests/test_readme.py joins them), run from the directory that holds data/
python3 - README.md "$bare$work/run/tour.py" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"^## Python tour\n(.*?)(?=^## |\Z)", text, flags=re.M | re.S)
assert m, "README.md has no '## Python tour' section"
blocks = re.findall(r"^```python\n(.*?)^```", m.group(1), flags=re.M | re.S)
assert len(blocks) >= 2, f"only {len(blocks)} python block(s) in the tour"
open(sys.argv[2], "w").write("\n".join(blocks))
print(f"   {len(blocks)} blocks, {sum(b.count(chr(10)) for b in blocks)} lines")
EOF
: >"$logs/tour.log"
t0=$(date +%s)
run "$logs/tour.log" in_root /bin/sh -c "cd $work/run && timeout 1800 $work/venv/bin/python tour.py"
echo "   ran in $(( $(date +%s) - t0 )) s (output: $logs/tour.log)"

step "the root still has no compiler"
found=$(chroot "$bare" /bin/sh -c "for c in gcc cc c++ g++ cpp clang; do command -v \$c; done; ls $work/venv/bin | grep -E '^(gcc|g\\+\\+|cc|c\\+\\+|clang|cmake|ninja)\$' || true" || true)
[ -z "$found" ] || fail "after the install, compiler tools in the root: $found"
unmount_all
step_end
echo "wheel test passed in $(( $(date +%s) - t_start )) s: $(basename "$wheel") in a bare bookworm root"
