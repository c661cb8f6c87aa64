#!/usr/bin/env bash
# Fetches the upstream tarball of a Debian rocksdb source package, checks it
# against the checksum pinned in scripts/rocksdb-source.sha256, and extracts
# the parts of the tree a build needs. By default the package is the one of
# the installed librocksdb-dev; --suite and --version pick another (e.g. the
# 9.10 of Debian trixie, for a compile check). The system's apt configuration
# is left alone: deb-src entries, lists and cache live under DEST.
#
# usage: scripts/fetch-rocksdb-source.sh DEST [--full] [--suite S --version V]
#   prints the path of the extracted tree root on standard output.
#   --full     extracts the whole tree (needed to build RocksDB itself)
#   --suite S  Debian suite to take the source from (default: the system's)
#   --version V  Debian version of the source package, e.g. 9.10.0-1
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage="usage: fetch-rocksdb-source.sh DEST [--full] [--suite S --version V]"
dest=${1:?$usage}
shift
full=""
suite=""
deb_version=""
while (($#)); do
  case "$1" in
    --full) full=1 ;;
    --suite) suite=${2:?$usage}; shift ;;
    --version) deb_version=${2:?$usage}; shift ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)

log() { echo "fetch-rocksdb-source: $*" >&2; }
die() { log "error: $*"; exit 1; }

if [ -z "$deb_version" ]; then
  deb_version=$(dpkg-query -W -f='${Version}' librocksdb-dev 2>/dev/null) ||
    die "librocksdb-dev is not installed (run scripts/setup.sh first)"
fi
upstream=${deb_version#*:}
upstream=${upstream%-*}
tarball="rocksdb_${upstream}.orig.tar.gz"
tree="$dest/rocksdb-$upstream"
marker="$tree/.extracted${full:+-full}"

if [ -f "$marker" ]; then
  echo "$tree"
  exit 0
fi

pinned_sha=$(sed -n "s/^\([0-9a-f]\{64\}\)  $tarball\$/\1/p" \
  "$repo_root/scripts/rocksdb-source.sha256")
[ -n "$pinned_sha" ] ||
  die "no pinned sha256 for $tarball in scripts/rocksdb-source.sha256"

if [ ! -f "$dest/$tarball" ]; then
  log "downloading $tarball (Debian source package rocksdb=$deb_version)"
  apt_dir="$dest/apt"
  mkdir -p "$apt_dir/sources.list.d" "$apt_dir/state/lists/partial" \
    "$apt_dir/cache/archives/partial"
  # The system's binary-package entries, turned into deb-src entries (and
  # moved to another suite if asked), in a private sources folder.
  : >"$apt_dir/sources.list"
  : >"$apt_dir/sources.list.d/system-as-src.sources"
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk -v suite="$suite" 'BEGIN { RS = ""; FS = OFS = "\n"; ORS = "\n\n" }
         {
           binary = 0
           release = 0  # lists a release suite, not only -updates/-security
           for (i = 1; i <= NF; i++) {
             if ($i ~ /^Types:/ && (" " $i " ") ~ / deb /) { binary = 1; $i = "Types: deb-src" }
             if ($i ~ /^Suites:/) {
               n = split(substr($i, 8), names, " ")
               for (j = 1; j <= n; j++) if (names[j] !~ /-/) release = 1
               if (suite != "") $i = "Suites: " suite
             }
           }
           if (binary && (suite == "" || release)) print
         }' "$f" >>"$apt_dir/sources.list.d/system-as-src.sources"
  done
  if [ -f /etc/apt/sources.list ]; then
    awk -v suite="$suite" '$1 == "deb" && (suite == "" || $0 !~ /-(security|updates|backports)/) {
        $1 = "deb-src"
        if (suite != "") {
          # deb [options] URI suite components...
          for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i !~ /\]$/) break
          $(i + 1) = suite
        }
        print
      }' /etc/apt/sources.list >>"$apt_dir/sources.list"
  fi
  apt_opts=(-q -o "Dir::Etc::SourceList=$apt_dir/sources.list"
    -o "Dir::Etc::SourceParts=$apt_dir/sources.list.d"
    -o "Dir::State=$apt_dir/state" -o "Dir::Cache=$apt_dir/cache"
    -o "APT::Sandbox::User=$(id -un)")
  apt-get "${apt_opts[@]}" update >&2
  # Only the upstream tarball is needed; apt says where it is.
  uri=$(apt-get "${apt_opts[@]}" source --print-uris "rocksdb=$deb_version" |
    awk -v name="$tarball" '$2 == name { gsub("\047", "", $1); print $1 }')
  [ -n "$uri" ] || die "apt knows no $tarball for rocksdb=$deb_version"
  /usr/lib/apt/apt-helper -o "APT::Sandbox::User=$(id -un)" download-file \
    "$uri" "$dest/$tarball" "SHA256:$pinned_sha" >&2
fi

(cd "$dest" && echo "$pinned_sha  $tarball" | sha256sum --check --quiet -) ||
  die "$dest/$tarball does not match the sha256 pinned in scripts/rocksdb-source.sha256"

log "extracting $tarball"
members=()
if [ -z "$full" ]; then
  members=("rocksdb-$upstream/include"
    "rocksdb-$upstream/table/block_based/filter_policy_internal.h")
fi
tar -xzf "$dest/$tarball" -C "$dest" "${members[@]}"
touch "$marker"
echo "$tree"
