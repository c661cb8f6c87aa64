#!/usr/bin/env bash
# Checks the in-tree build: puts this repository at rocksdb/plugin/cuckoo in a
# fresh copy of a RocksDB source tree, configures RocksDB's CMake with
# -DROCKSDB_PLUGINS=cuckoo (its defaults otherwise: PORTABLE=0, so
# -march=native; Release, so -fno-rtti; warnings as errors), compiles the
# plugin's sources with RocksDB's flags, and checks that the generated
# build_version.cc registers cuckoo_filter_register as a builtin. Building all
# of RocksDB takes long on two cores, so only those objects are compiled.
#
# usage: scripts/check-in-tree-build.sh [VERSION | TARBALL]   (default: the
#        installed librocksdb-dev's version)
#   BUILD_DIR  the work folder's parent (default: build)
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${BUILD_DIR:-$repo_root/build}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/rocksdb-cuckoo

# Downloads (once) and verifies the source tarball, then copies the tree.
source_tree=$("$repo_root/scripts/fetch-rocksdb-source.sh" "$cache/source" --full ${1:-})
work="$build_dir/in-tree"
rm -rf "$work"
mkdir -p "$work"
cp -a "$source_tree" "$work/"
tree="$work/$(basename "$source_tree")"
rm -rf "$tree/_build"
mkdir -p "$tree/plugin/cuckoo"
(cd "$repo_root" && git ls-files -z | tar --null -cf - -T -) |
  tar -xf - -C "$tree/plugin/cuckoo"

cmake -S "$tree" -B "$tree/_build" -DROCKSDB_PLUGINS=cuckoo \
  -DCMAKE_BUILD_TYPE=Release -DFAIL_ON_WARNINGS=ON -DWITH_GFLAGS=OFF \
  -DWITH_TESTS=OFF -DWITH_BENCHMARK_TOOLS=OFF -DWITH_TOOLS=OFF >/dev/null
sources=$(sed -n 's/^cuckoo_SOURCES = //p' "$repo_root/cuckoo.mk")
objects=(build_version.o)
for source in $sources; do objects+=("plugin/cuckoo/${source%.cc}.o"); done
make -C "$tree/_build" "${objects[@]}"
if grep -q '{"cuckoo", cuckoo_filter_register}' "$tree/_build/build_version.cc"; then
  echo "in-tree build: plugin compiled with RocksDB $(basename "$tree")'s flags and registered as a builtin"
else
  echo "in-tree build: cuckoo_filter_register is not among RocksDB's builtins" >&2
  exit 1
fi
