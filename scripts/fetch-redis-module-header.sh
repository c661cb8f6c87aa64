#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# Fetches redismodule.h, the module API header, for the CF module (module/).
# No Debian package ships it: it comes from Debian's source package of the
# installed redis-server, whose tarball is checked against the checksum
# pinned in scripts/redis-source.sha256, as the RocksDB source is. The header
# of the oldest server the module supports is the one to build with: the
# module probes the newer API functions at load time.
#
# usage: scripts/fetch-redis-module-header.sh DEST [VERSION]
#   VERSION  Redis's upstream version (default: the installed redis-server's)
#   prints the folder holding redismodule.h on standard output.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$repo_root/scripts/lib/debian-source.sh"
usage="usage: fetch-redis-module-header.sh DEST [VERSION]"
dest=${1:?$usage}
version=${2:-}


if [ -z "$version" ]; then
  installed=$(dpkg-query -W -f='${Version}' redis-server 2>/dev/null) ||
    die "redis-server is not installed (run scripts/setup.sh first)"
  installed=${installed#*:}
  version=${installed%-*}
fi
name="redis_${version}.orig.tar.gz"
sha=$(sed -n "s/^\([0-9a-f]\{64\}\)  $name\$/\1/p" "$repo_root/scripts/redis-source.sha256")
[ -n "$sha" ] || die "Redis $version is not a release this project pins" \
  "(scripts/redis-source.sha256)"

downloads=${XDG_CACHE_HOME:-$HOME/.cache}/rocksdb-cuckoo/downloads
mkdir -p "$dest" "$downloads"
dest=$(cd "$dest" && pwd)
tarball="$downloads/$name"
matches() { (cd "$downloads" && echo "$sha  $name" | sha256sum --check --quiet - >/dev/null 2>&1); }
for attempt in 1 2; do
  matches && break
  rm -f "$tarball"
  debian_source_download redis "$version" "" "$tarball" "$downloads/apt" ||
    die "no Redis $version source from Debian"
  matches && break
  log "$name does not match its pinned sha256 $sha: deleted"
  rm -f "$tarball"
  [ "$attempt" = 1 ] || die "the downloaded $name does not match its pinned sha256"
done

out="$dest/redis-$version"
if [ ! -f "$out/redismodule.h" ]; then
  mkdir -p "$out"
  tar -xzf "$tarball" -C "$out" --strip-components=2 --wildcards '*/src/redismodule.h' ||
    die "$name holds no src/redismodule.h"
fi
echo "$out"
