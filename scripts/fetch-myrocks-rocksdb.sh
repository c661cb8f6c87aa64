#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# Fetches the headers of the RocksDB inside MariaDB's MyRocks (6.29), for
# the MyRocks preload (myrocks/). They come from Debian's source package of
# mariadb, whose tarball is checked against the checksum pinned in
# scripts/mariadb-source.sha256, as the RocksDB and Redis sources are; only
# the headers of its storage/rocksdb/rocksdb are kept. Debian 12's archive
# keeps the tarball of 10.11.18 (its security archive does not keep that of
# the newer 10.11.19); both bundle the same RocksDB 6.29.5, and the preload
# checks the version of the RocksDB it meets at run time.
#
# usage: scripts/fetch-myrocks-rocksdb.sh DEST [VERSION]
#   VERSION  MariaDB's upstream version (default: 10.11.18)
#   prints the folder of the RocksDB headers (include/ and the internal
#   ones) on standard output.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
repo_root=$cuckoo_repo_root
source "$repo_root/scripts/lib/debian-source.sh"
usage="usage: fetch-myrocks-rocksdb.sh DEST [VERSION]"
dest=${1:?$usage}
version=${2:-10.11.18}

tarball=$(debian_pinned_tarball mariadb "$version" "mariadb_${version}.orig.tar.gz" \
  "$repo_root/scripts/mariadb-source.sha256")
mkdir -p "$dest"
debian_extract "$tarball" "$(cd "$dest" && pwd)/mariadb-$version-rocksdb" \
  include/rocksdb/version.h --strip-components=4 \
  --wildcards "mariadb-$version/storage/rocksdb/rocksdb/*.h"
