#!/usr/bin/env bash
# Fetches Debian's source package of the installed librocksdb-dev, checks the
# upstream tarball against the checksum pinned in scripts/rocksdb-source.sha256,
# and extracts the parts of the tree the build needs. The system's apt
# configuration is left alone: the deb-src entries, lists and cache live under
# the destination folder.
#
# usage: scripts/fetch-rocksdb-source.sh DEST [--full]
#   prints the path of the extracted tree root on standard output.
#   --full extracts the whole tree (needed to build RocksDB itself).
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dest=${1:?usage: fetch-rocksdb-source.sh DEST [--full]}
full=${2:-}
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)

log() { echo "fetch-rocksdb-source: $*" >&2; }
die() { log "error: $*"; exit 1; }

deb_version=$(dpkg-query -W -f='${Version}' librocksdb-dev 2>/dev/null) ||
  die "librocksdb-dev is not installed (run scripts/setup.sh first)"
upstream=${deb_version#*:}
upstream=${upstream%-*}
tarball="rocksdb_${upstream}.orig.tar.gz"
tree="$dest/rocksdb-$upstream"
marker="$tree/.extracted${full:+-full}"

if [ -f "$marker" ]; then
  echo "$tree"
  exit 0
fi

pinned_line=$(grep -F " $tarball" "$repo_root/scripts/rocksdb-source.sha256" || true)
[ -n "$pinned_line" ] ||
  die "no pinned sha256 for $tarball in scripts/rocksdb-source.sha256 (installed librocksdb-dev is $deb_version)"

if [ ! -f "$dest/$tarball" ]; then
  log "downloading Debian's source package rocksdb=$deb_version"
  apt_dir="$dest/apt"
  mkdir -p "$apt_dir/sources.list.d" "$apt_dir/state/lists/partial" \
    "$apt_dir/cache/archives/partial"
  # Turn the system's binary-package entries into deb-src entries, in a
  # private sources folder.
  : >"$apt_dir/sources.list"
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk 'BEGIN { RS = ""; FS = OFS = "\n"; ORS = "\n\n" }
         {
           binary = 0
           for (i = 1; i <= NF; i++)
             if ($i ~ /^Types:/ && (" " $i " ") ~ / deb /) { binary = 1; $i = "Types: deb-src" }
           if (binary) print
         }' "$f" \
      >>"$apt_dir/sources.list.d/system-as-src.sources"
  done
  if [ -f /etc/apt/sources.list ]; then
    sed -n 's/^[[:space:]]*deb[[:space:]]/deb-src /p' /etc/apt/sources.list \
      >>"$apt_dir/sources.list"
  fi
  apt_opts=(-q -o "Dir::Etc::SourceList=$apt_dir/sources.list"
    -o "Dir::Etc::SourceParts=$apt_dir/sources.list.d"
    -o "Dir::State=$apt_dir/state" -o "Dir::Cache=$apt_dir/cache"
    -o "APT::Sandbox::User=$(id -un)")
  apt-get "${apt_opts[@]}" update >&2
  (cd "$dest" && apt-get "${apt_opts[@]}" source --download-only \
    "rocksdb=$deb_version" >&2)
fi

(cd "$dest" && echo "$pinned_line" | sha256sum --check --quiet -) ||
  die "$dest/$tarball does not match the sha256 pinned in scripts/rocksdb-source.sha256"

log "extracting $tarball"
members=()
if [ -z "$full" ]; then
  members=("rocksdb-$upstream/include/rocksdb/version.h"
    "rocksdb-$upstream/table/block_based/filter_policy_internal.h")
fi
tar -xzf "$dest/$tarball" -C "$dest" "${members[@]}"
touch "$marker"
echo "$tree"
