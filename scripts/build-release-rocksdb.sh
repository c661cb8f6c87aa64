#!/usr/bin/env bash
# Builds a Release (NDEBUG, -O2) shared librocksdb and db_bench from Debian's
# source package of the installed version, for a fair baseline: Debian's own
# library has assertions on, which slows the built-in filters' code paths but
# not the plugin's. Takes long on two cores, so the result is cached outside
# the repository and reused. RTTI stays on (the plugin derives from RocksDB
# classes), and the library also answers to Debian's soname, so
#   LD_LIBRARY_PATH=$(scripts/build-release-rocksdb.sh) build/bench/...
# runs any of the project's programs against it.
#
# usage: scripts/build-release-rocksdb.sh [CACHE_DIR]
#   default CACHE_DIR: ${XDG_CACHE_HOME:-~/.cache}/rocksdb-cuckoo
#   prints the folder holding librocksdb.so.* and db_bench.
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/rocksdb-cuckoo}
mkdir -p "$cache"
out="$cache/release"
if [ -f "$out/.complete" ]; then
  echo "$out"
  exit 0
fi

tree=$("$repo_root/scripts/fetch-rocksdb-source.sh" "$cache/source" --full)
debian_soname=$(basename "$(readlink -f /usr/lib/x86_64-linux-gnu/librocksdb.so)" |
  sed -E 's/^(librocksdb\.so\.[0-9]+\.[0-9]+).*/\1/')
cmake -S "$tree" -B "$cache/build" -DCMAKE_BUILD_TYPE=Release -DUSE_RTTI=ON \
  -DPORTABLE=ON -DWITH_SNAPPY=ON -DWITH_LZ4=ON -DWITH_ZLIB=ON -DWITH_ZSTD=ON \
  -DWITH_BZ2=ON -DWITH_GFLAGS=ON -DWITH_TESTS=OFF -DWITH_TOOLS=OFF \
  -DWITH_CORE_TOOLS=OFF -DWITH_BENCHMARK_TOOLS=ON -DFAIL_ON_WARNINGS=OFF >&2
cmake --build "$cache/build" -j2 --target rocksdb-shared db_bench >&2

mkdir -p "$out"
cp -a "$cache"/build/librocksdb.so* "$out/"
cp "$cache/build/db_bench" "$out/db_bench"
real=$(ls "$out"/librocksdb.so.*.*.* | head -n 1)
ln -sf "$(basename "$real")" "$out/$debian_soname"
touch "$out/.complete"
echo "$out"
