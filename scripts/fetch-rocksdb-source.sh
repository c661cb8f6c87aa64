#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# Fetches a RocksDB source tarball, checks it against the checksum pinned in
# scripts/rocksdb-source.sha256, and extracts the parts of the tree a build
# needs. Where each release comes from:
#   7.8.3    Debian 12 (bookworm) source package, the installed librocksdb-dev
#   9.10.0   Debian 13 (trixie) source package
#   9.11.2   Debian unstable (sid) source package
#   10.10.1, 11.8.1  upstream release tarballs, from $ROCKSDB_TARBALLS or
#            ../shared/rocksdb next to this repository
# A Debian package is matched on its upstream version, so a newer Debian
# revision of the same release (a stable update) still works. Downloads are
# kept once in ${XDG_CACHE_HOME:-~/.cache}/rocksdb-cuckoo/downloads; a
# download goes to a temporary name first, and one that does not match its
# checksum is deleted and tried once more. The system's apt configuration is
# left alone (scripts/lib/debian-source.sh).
#
# usage: scripts/fetch-rocksdb-source.sh DEST [--full] [VERSION | TARBALL]
#   VERSION  e.g. 9.10.0 (default: the version of the installed librocksdb-dev)
#   TARBALL  a release tarball of the user's own; verified when its version
#            is one the project pins
#   --full   extracts the whole tree (needed to build RocksDB itself)
#   prints the path of the extracted tree root on standard output.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

repo_root=$cuckoo_repo_root
source "$repo_root/scripts/lib/debian-source.sh"
usage="usage: fetch-rocksdb-source.sh DEST [--full] [VERSION | TARBALL]"
dest=${1:?$usage}
shift
full=""
source_arg=""
while (($#)); do
  case "$1" in
    --full) full=1 ;;
    -*) echo "$usage" >&2; exit 2 ;;
    *) source_arg=$1 ;;
  esac
  shift
done


downloads=${XDG_CACHE_HOME:-$HOME/.cache}/rocksdb-cuckoo/downloads
mkdir -p "$dest" "$downloads"
dest=$(cd "$dest" && pwd)

pinned_sha() {  # tarball name -> pinned sha256, or nothing
  sed -n "s/^\([0-9a-f]\{64\}\)  $1\$/\1/p" "$repo_root/scripts/rocksdb-source.sha256"
}

# Checks a file against a sha256; on a mismatch deletes it and says so.
verified() {  # file sha
  if (cd "$(dirname "$1")" && echo "$2  $(basename "$1")" | sha256sum --check --quiet - >/dev/null 2>&1); then
    return 0
  fi
  log "$1 does not match its pinned sha256 $2: deleted"
  rm -f "$1"
  return 1
}

# The upstream tarballs of releases Debian does not carry.
upstream_tarball_dirs=(${ROCKSDB_TARBALLS:+"$ROCKSDB_TARBALLS"}
  "$repo_root/../shared/rocksdb")

fetch_release() {  # upstream version -> path of the verified tarball
  local upstream=$1 suite name sha dir
  case "$upstream" in
    7.8.3) suite="bookworm" ;;
    9.10.0) suite="trixie" ;;
    9.11.2) suite="sid" ;;
    *) suite="" ;;
  esac
  if [ -n "$suite" ]; then
    name="rocksdb_${upstream}.orig.tar.gz"
  else
    name="rocksdb-${upstream}.tar.gz"
  fi
  sha=$(pinned_sha "$name")
  [ -n "$sha" ] || die "RocksDB $upstream is not a release this project pins" \
    "(scripts/rocksdb-source.sha256 lists 7.8.3, 9.10.0, 9.11.2, 10.10.1," \
    "11.8.1); pass the tarball or the extracted tree of your own instead"
  local cached="$downloads/$name"
  if [ -f "$cached" ] && verified "$cached" "$sha"; then
    echo "$cached"
    return
  fi
  if [ -z "$suite" ]; then
    for dir in "${upstream_tarball_dirs[@]}"; do
      if [ -f "$dir/$name" ]; then
        cp "$dir/$name" "$cached.partial"
        mv "$cached.partial" "$cached"
        verified "$cached" "$sha" || die "$dir/$name is not the pinned RocksDB $upstream tarball"
        echo "$cached"
        return
      fi
    done
    die "no $name in ${upstream_tarball_dirs[*]}: Debian carries no RocksDB" \
      "$upstream; put the upstream release tarball there or set ROCKSDB_TARBALLS"
  fi
  # Debian's own suite for the installed version, so that mirrors and
  # security updates of the system's sources apply.
  local installed
  installed=$(dpkg-query -W -f='${Version}' librocksdb-dev 2>/dev/null || true)
  installed=${installed#*:}
  [ "${installed%-*}" = "$upstream" ] && suite=""
  for attempt in 1 2; do
    debian_source_download rocksdb "$upstream" "$suite" "$cached" \
      "$downloads/apt${suite:+-$suite}" || die "no RocksDB $upstream from Debian"
    if verified "$cached" "$sha"; then
      echo "$cached"
      return
    fi
    [ "$attempt" = 1 ] && log "retrying the download once"
  done
  die "the downloaded $name does not match the sha256 pinned in scripts/rocksdb-source.sha256"
}

if [ -z "$source_arg" ]; then
  installed=$(dpkg-query -W -f='${Version}' librocksdb-dev 2>/dev/null) ||
    die "librocksdb-dev is not installed (run scripts/setup.sh first)"
  installed=${installed#*:}
  source_arg=${installed%-*}
fi

if [ -f "$source_arg" ]; then
  tarball=$(cd "$(dirname "$source_arg")" && pwd)/$(basename "$source_arg")
  # A tarball of the user's own: verified if its release is a pinned one.
  name=$(basename "$tarball")
  sha=$(pinned_sha "$name")
  if [ -n "$sha" ]; then
    (cd "$(dirname "$tarball")" && echo "$sha  $name" | sha256sum --check --quiet -) ||
      die "$tarball does not match the sha256 pinned for $name"
  fi
elif [[ "$source_arg" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  tarball=$(fetch_release "$source_arg")
else
  die "$source_arg is neither a file nor a version like 11.8.1"
fi

# One extraction per tarball content.
key=$(sha256sum "$tarball" | cut -c1-16)
root="$dest/$key"
# The partial extraction's marker names what it holds, so that a tree
# extracted before the cache headers were needed is completed.
marker="$root/.extracted-${full:+full}"
[ -n "$full" ] || marker="$root/.extracted-with-cache"
# One extraction at a time: two scripts may ask for the same tree at once
# (CI runs the GCC and clang in-tree checks together).
exec {extraction_lock}>"$root.lock"
flock "$extraction_lock"
if [ ! -f "$marker" ]; then
  log "extracting $(basename "$tarball")"
  # tar ends on SIGPIPE once head has its line.
  top=$(tar -tzf "$tarball" 2>/dev/null | head -n 1 || true)
  top=${top%%/*}
  [ -n "$top" ] || die "$tarball is not a tar.gz archive"
  members=()
  if [ -z "$full" ]; then
    # The public headers, the filter interfaces, and the block cache's
    # reservation manager with the headers it includes (the builder charges
    # its memory through it, as RocksDB's own builders do).
    members=("$top/include" "$top/table/block_based/filter_policy_internal.h"
      "$top/table/unique_id_impl.h" "$top/cache" "$top/util" "$top/port")
  fi
  mkdir -p "$root"
  tar -xzf "$tarball" -C "$root" "${members[@]}" ||
    die "$tarball holds no RocksDB source tree (include/, table/block_based/filter_policy_internal.h, cache/, util/, port/)"
  ln -sfn "$top" "$root/tree"
  touch "$marker"
fi
flock -u "$extraction_lock"
tree=$(cd "$root/tree" && pwd -P)
[ -f "$tree/include/rocksdb/version.h" ] || die "$tarball holds no include/rocksdb/version.h"
echo "$tree"
