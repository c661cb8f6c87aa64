#!/usr/bin/env bash
# Builds a shared librocksdb (and, for the Release variant, db_bench) from
# Debian's source package of the installed version. Takes long on two cores,
# so the result is cached outside the repository and reused. RTTI stays on
# (the plugin derives from RocksDB classes), and the library also answers to
# Debian's soname, so
#   LD_LIBRARY_PATH=$(scripts/build-rocksdb.sh --release) build/bench/...
# runs any of the project's programs against it.
#
# Variants:
#   --release  NDEBUG, -O3, with db_bench: a fair baseline, since Debian's own
#              library has assertions on, which slows the built-in filters'
#              code paths but not the plugin's.
#   --tsan     ThreadSanitizer-instrumented library, for the DB stress test:
#              against Debian's uninstrumented library TSan cannot see how
#              RocksDB hands a filter reader built by a flush thread to the
#              reading threads, and reports that hand-over as a race.
#
# usage: scripts/build-rocksdb.sh --release|--tsan [CACHE_DIR]
#   default CACHE_DIR: ${XDG_CACHE_HOME:-~/.cache}/rocksdb-cuckoo
#   prints the folder holding librocksdb.so.* (and db_bench).
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
variant=${1:-}
cache=${2:-${XDG_CACHE_HOME:-$HOME/.cache}/rocksdb-cuckoo}
common_args=(-DUSE_RTTI=ON -DPORTABLE=ON -DWITH_SNAPPY=ON -DWITH_LZ4=ON
  -DWITH_ZLIB=ON -DWITH_ZSTD=ON -DWITH_BZ2=ON -DWITH_TESTS=OFF
  -DWITH_TOOLS=OFF -DWITH_CORE_TOOLS=OFF -DFAIL_ON_WARNINGS=OFF)
case "$variant" in
  --release)
    out="$cache/release"
    build="$cache/build"
    variant_args=(-DCMAKE_BUILD_TYPE=Release -DWITH_GFLAGS=ON
      -DWITH_BENCHMARK_TOOLS=ON)
    targets=(rocksdb-shared db_bench)
    ;;
  --tsan)
    # -O1 and line tables only: enough for TSan's stacks, and quicker to build.
    out="$cache/tsan"
    build="$cache/build-tsan"
    variant_args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DWITH_TSAN=ON
      "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
      "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
      -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread -DWITH_GFLAGS=OFF
      -DWITH_BENCHMARK_TOOLS=OFF)
    targets=(rocksdb-shared)
    ;;
  *)
    echo "usage: scripts/build-rocksdb.sh --release|--tsan [CACHE_DIR]" >&2
    exit 2
    ;;
esac

mkdir -p "$cache"
if [ -f "$out/.complete" ]; then
  echo "$out"
  exit 0
fi

tree=$("$repo_root/scripts/fetch-rocksdb-source.sh" "$cache/source" --full)
debian_soname=$(basename "$(readlink -f /usr/lib/x86_64-linux-gnu/librocksdb.so)" |
  sed -E 's/^(librocksdb\.so\.[0-9]+\.[0-9]+).*/\1/')
cmake -S "$tree" -B "$build" "${common_args[@]}" "${variant_args[@]}" >&2
cmake --build "$build" -j2 --target "${targets[@]}" >&2

mkdir -p "$out"
cp -a "$build"/librocksdb.so* "$out/"
if [ -f "$build/db_bench" ]; then cp "$build/db_bench" "$out/db_bench"; fi
real=$(ls "$out"/librocksdb.so.*.*.* | head -n 1)
ln -sf "$(basename "$real")" "$out/$debian_soname"
touch "$out/.complete"
echo "$out"
