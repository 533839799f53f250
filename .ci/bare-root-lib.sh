# Shared by .ci/wheel-test.sh and .ci/r-bare-test.sh (sourced, not run): failing a step with its
# log, the bind mounts of a bare Debian root (always undone), and the host files the root needs.
# The caller sets $bare (the root's absolute path) and keeps $step_name current.

fail() { printf 'FAILED (%s): %s\n' "$step_name" "$1" >&2; [ -z "${2:-}" ] || { echo "   log: $2 (last lines below)" >&2; tail -40 "$2" >&2; }; exit 1; }
# run LOG CMD...: output to LOG (appended); on failure, name the command and its log
run() { local log=$1; shift; "$@" >>"$log" 2>&1 || fail "$*" "$log"; }

# --- mounts: /proc, /dev (with /dev/shm for multiprocessing's semaphores), /sys; always undone
unmount_all() {
  local m
  for m in "$bare/sys" "$bare/dev" "$bare/proc"; do
    if mountpoint -q "$m" 2>/dev/null; then umount -R "$m" 2>/dev/null || umount -lR "$m" || true; fi
  done
}
mount_all() {
  mountpoint -q "$bare/proc" || mount -t proc proc "$bare/proc"
  if ! mountpoint -q "$bare/dev"; then mount --rbind /dev "$bare/dev"; mount --make-rslave "$bare/dev"; fi
  if ! mountpoint -q "$bare/sys"; then mount --bind /sys "$bare/sys"; fi
}
trap 'unmount_all' EXIT
trap 'echo "interrupted" >&2; exit 130' INT
trap 'exit 143' TERM
# nothing may stay mounted under the root when it is removed (rm would follow into /dev)
has_mounts() { findmnt -rn -o TARGET | grep -q "^$bare/"; }

# The root's resolver, and the host's CA bundle as /etc/ssl/host-ca.crt (a minbase root has no
# ca-certificates; needed where HTTPS passes a TLS-inspecting proxy). CA: the bundle to copy.
copy_host_files() {
  local ca=$1
  cp -L /etc/resolv.conf "$bare/etc/resolv.conf"
  mkdir -p "$bare/etc/ssl"
  # an empty bundle would make every certificate fail: none then (pip falls back to certifi)
  if [ -s "$ca" ]; then cp -L "$ca" "$bare/etc/ssl/host-ca.crt"; else rm -f "$bare/etc/ssl/host-ca.crt"; fi
}

# debootstrap_root LOGDIR MIRROR CA: a fresh minbase bookworm root at $bare (an incomplete one is
# removed first; debootstrap is installed on the host when missing), the host files copied in
# and the mounts made. The caller installs what the root needs and marks it complete.
debootstrap_root() {
  local logs=$1 mirror=$2 ca=$3 t0
  if [ -e "$bare" ]; then
    unmount_all
    has_mounts && fail "something is still mounted under $bare: unmount it first"
    echo "   removing an incomplete root"
    rm -rf --one-file-system "$bare"
  fi
  if ! command -v debootstrap >/dev/null; then
    echo "   installing debootstrap (apt)"
    : >"$logs/apt-host.log"
    run "$logs/apt-host.log" apt-get update -qq
    run "$logs/apt-host.log" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap
  fi
  : >"$logs/debootstrap.log"
  t0=$(date +%s)
  run "$logs/debootstrap.log" debootstrap --variant=minbase bookworm "$bare" "$mirror"
  echo "   debootstrap --variant=minbase: $(( $(date +%s) - t0 )) s"
  copy_host_files "$ca"
  mount_all
}
