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

repo_root=$cuckoo_repo_root
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
tarball=$(debian_pinned_tarball redis "$version" "redis_${version}.orig.tar.gz" \
  "$repo_root/scripts/redis-source.sha256")
mkdir -p "$dest"
debian_extract "$tarball" "$(cd "$dest" && pwd)/redis-$version" redismodule.h \
  --strip-components=2 --wildcards '*/src/redismodule.h'
