#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# The README's two commands on a fresh Debian 12: builds a minimal bookworm
# root file system (mmdebstrap --variant=minbase: no compiler, no make, no
# pkgconf), copies a clean clone of this repository (HEAD, committed files
# only) into it, and runs, as root in a chroot, exactly the two commands the
# README leads with. Each must install what it needs, configure, build and
# succeed. Prints one line per command with its time.
#
# usage: sudo scripts/check-fresh-machine.sh
#   BUILD_DIR  the work folder's parent (default: build); needs about 2 GB
#   MIRROR     the Debian mirror (default: the one this machine's apt uses)
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/debian-source.sh"
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=${BUILD_DIR:-$repo_root/build}/fresh-machine
log() { echo "check-fresh-machine: $*" >&2; }
mirror=${MIRROR:-$(debian_mirror)} ||
  { log "no Debian archive in this machine's apt sources: set MIRROR"; exit 1; }

[ "$(id -u)" -eq 0 ] || { log "run as root: it builds and enters a chroot"; exit 1; }
if ! command -v mmdebstrap >/dev/null; then
  log "installing mmdebstrap"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    mmdebstrap >&2
fi

# The README's two commands: the first two lines of its first sh block,
# without their comments.
mapfile -t commands < <(awk '/^```sh$/ { inside = 1; next }
  inside && /^```/ { exit }
  inside { sub(/[[:space:]]*#.*/, ""); if ($0 != "") print }' "$repo_root/README.md" | head -n 2)
[ "${#commands[@]}" -eq 2 ] || { log "cannot find the README's two commands"; exit 1; }

rootfs="$work/rootfs"
cleanup() {
  for mount_point in "$rootfs/sys" "$rootfs/proc" "$rootfs/dev/pts" "$rootfs/dev"; do
    if mountpoint -q "$mount_point" 2>/dev/null; then umount -l "$mount_point"; fi
  done
}
trap cleanup EXIT
cleanup
rm -rf "$work"
mkdir -p "$work"
started=$(date +%s)
log "building a minimal Debian 12 root file system in $rootfs"
mmdebstrap --quiet --variant=minbase bookworm "$rootfs" "$mirror" >"$work/mmdebstrap.log" 2>&1 || {
  tail -n 20 "$work/mmdebstrap.log" >&2
  log "mmdebstrap failed (log: $work/mmdebstrap.log)"
  exit 1
}
log "root file system ready in $(($(date +%s) - started)) s"
git clone --quiet --no-local "$repo_root" "$rootfs/root/rocksdb-cuckoo"
rm -rf "$rootfs/root/rocksdb-cuckoo/.git"
cp /etc/resolv.conf "$rootfs/etc/resolv.conf"
mount --bind /dev "$rootfs/dev"
mount --bind /dev/pts "$rootfs/dev/pts"
mount -t proc proc "$rootfs/proc"
mount -t sysfs sysfs "$rootfs/sys"

failures=0
for command in "${commands[@]}"; do
  started=$(date +%s)
  name=$(basename "${command%% *}" .sh)
  if chroot "$rootfs" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 /bin/bash -c "cd /root/rocksdb-cuckoo && $command" >"$work/$name.log" 2>&1; then
    echo "fresh Debian 12: '$command' passed ($(($(date +%s) - started)) s)"
  else
    tail -n 30 "$work/$name.log"
    echo "fresh Debian 12: '$command' FAILED (log: $work/$name.log)"
    failures=$((failures + 1))
  fi
done
exit $((failures != 0))
