#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# Compile-only check against RocksDB releases that CI does not build: the
# plugin's sources, the tests, the benchmarks and the examples against each
# release's headers (public and internal), with the C++ standard that
# release needs and with RocksDB's own -Woverloaded-virtual, warnings as
# errors, two sources at a time. Nothing is linked;
# scripts/test-rocksdb-versions.sh builds and tests them for real.
#
# usage: scripts/check-compile-versions.sh [VERSION...]
#   default: 9.10.0 9.11.2 10.10.1 (CI tests 7.8.3 and 11.8.1 in full)
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
repo_root=$cuckoo_repo_root
versions=("$@")
((${#versions[@]})) || versions=(9.10.0 9.11.2 10.10.1)
cache=$cuckoo_cache_root

cd "$repo_root"
sources=(plugin/*.cc tests/plugin/*.cc tests/format/*.cc bench/*.cc bench/compare/*.cc
  tests/bench/*.cc tests/fuzz/*.cc examples/*/*.cc)
for version in "${versions[@]}"; do
  tree=$("$repo_root/scripts/fetch-rocksdb-source.sh" "$cache/headers" "$version")
  standard=c++17
  if [ "$(printf '%s\n' 10.7.0 "$version" | sort -V | head -n 1)" = 10.7.0 ]; then
    standard=c++20
  fi
  cuckoo_each_two_at_a_time g++ -std="$standard" -fsyntax-only -Wall -Wextra \
    -Werror -Wshadow -Woverloaded-virtual -fno-rtti -DROCKSDB_PLATFORM_POSIX \
    -I"$tree" -I"$tree/include" -Iinclude \
    -Iplugin -Icounting_bloom -Ibench -Itests/plugin -Itests/format -Imodule \
    '-DCUCKOO_GOLDEN_DIR="tests/format/golden"' -- "${sources[@]}"
  echo "compiles against RocksDB $version ($standard): ${#sources[@]} sources"
done
