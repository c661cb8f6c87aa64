#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# The README's two commands on a fresh Debian 12: builds a minimal bookworm
# root file system (mmdebstrap --variant=minbase: no compiler, no make, no
# pkgconf), copies a clean clone of this repository (HEAD, committed files
# only) into it, and runs, as root in a chroot, exactly the two commands the
# README leads with. Each must install what it needs, configure, build and
# succeed. Then, in another copy of the fresh root, the README's quick start
# of the CF module ("The CF commands in Redis"): it installs only the server
# and a compiler, builds module/ alone, and each redis-cli line must print
# what its comment says. And in the first root, after the two commands, a
# small run of scripts/myrocks.sh (MyRocks from Debian's packages, the
# preload, sysbench), which must print its table. Prints one line per
# command with its time.
#
# usage: sudo scripts/check-fresh-machine.sh
#   BUILD_DIR  the work folder's parent (default: build); needs about 2 GB
#   MIRROR     the Debian mirror (default: the one this machine's apt uses)
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/debian-source.sh"
repo_root=$cuckoo_repo_root
work=${BUILD_DIR:-$repo_root/build}/fresh-machine
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
# The module's quick start, as a script: continued lines joined, comments
# dropped, and each "redis-cli ... # ANSWER" line checked against the first
# word of its comment.
module_script=$(awk '/^## The CF commands in Redis/ { section = 1 }
  section && /^```sh$/ { inside = 1; next }
  inside && /^```/ { exit }
  inside {
    if (sub(/\\$/, "")) { pending = pending $0; next }
    line = pending $0; pending = ""
    answer = ""
    if (line ~ /^redis-cli .*#[[:space:]]*[^[:space:]]/) {
      answer = line; sub(/.*#[[:space:]]*/, "", answer); sub(/[[:space:]].*/, "", answer)
    }
    sub(/[[:space:]]*#.*/, "", line)
    if (line == "") next
    if (answer == "") { print line; next }
    printf "got=$(%s); [ \"$got\" = %s ] || { echo \"%s printed $got, not %s\" >&2; exit 1; }\n", line, answer, line, answer
  }' "$repo_root/README.md")
grep -q "^got=.*redis-cli" <<<"$module_script" ||
  { log "cannot find the README's module quick start"; exit 1; }

rootfs="$work/rootfs"
module_rootfs="$work/rootfs-module"
cleanup() {
  local root pid
  for root in "$rootfs" "$module_rootfs"; do
    # A server the quick start left running, if it stopped half way.
    for pid in $(ls /proc | grep -E '^[0-9]+$'); do
      [ "$(readlink "/proc/$pid/root" 2>/dev/null)" = "$root" ] && kill "$pid" 2>/dev/null
    done
    for mount_point in "$root/sys" "$root/proc" "$root/dev/pts" "$root/dev"; do
      if mountpoint -q "$mount_point" 2>/dev/null; then umount -l "$mount_point"; fi
    done
  done
  return 0
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
# The module's root is a copy of the fresh one, made before anything is
# mounted in it.
cp -a "$rootfs" "$module_rootfs"
for root in "$rootfs" "$module_rootfs"; do
  git clone --quiet --no-local "$repo_root" "$root/root/rocksdb-cuckoo"
  rm -rf "$root/root/rocksdb-cuckoo/.git"
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  # No package's service starts inside the chroot (it would share this
  # machine's network): the quick start starts its own server.
  printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
  chmod +x "$root/usr/sbin/policy-rc.d"
  mount --bind /dev "$root/dev"
  mount --bind /dev/pts "$root/dev/pts"
  mount -t proc proc "$root/proc"
  mount -t sysfs sysfs "$root/sys"
done

failures=0
run() {  # ROOT LOG LABEL SCRIPT: runs SCRIPT in the chroot, in the checkout
  local root=$1 log=$work/$2.log name=$3 script=$4 started
  started=$(date +%s)
  if chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive /bin/bash -euo pipefail \
    -c "cd /root/rocksdb-cuckoo && $script" >"$log" 2>&1; then
    echo "fresh Debian 12: $name passed ($(($(date +%s) - started)) s)"
  else
    tail -n 30 "$log"
    echo "fresh Debian 12: $name FAILED (log: $log)"
    failures=$((failures + 1))
  fi
}
for command in "${commands[@]}"; do
  run "$rootfs" "$(basename "${command%% *}" .sh)" "'$command'" "$command"
done
run "$rootfs" myrocks "'scripts/myrocks.sh', small" \
  "scripts/myrocks.sh --rows 20000 --repetitions 1 --time 2 --out /root/myrocks.md &&
   grep -q '^| point selects/s |' /root/myrocks.md"
run "$module_rootfs" module-quick-start "the CF module's quick start" "$module_script"
exit $((failures != 0))
