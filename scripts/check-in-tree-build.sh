#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# Checks the in-tree build, with this repository at rocksdb/plugin/cuckoo of a
# RocksDB source tree, both ways RocksDB offers:
#
#   objects (always): in a fresh copy of the tree, RocksDB's CMake with
#     -DROCKSDB_PLUGINS=cuckoo and its defaults otherwise (PORTABLE=0, so
#     -march=native; Release, so -fno-rtti; warnings as errors) compiles the
#     plugin's sources and build_version.cc, which must register
#     cuckoo_filter_register as a builtin. RocksDB's Makefile
#     (make ROCKSDB_PLUGINS=cuckoo, its default debug level, -Werror) then
#     compiles the plugin's sources too and must list the same builtin and
#     the plugin's objects among librocksdb's.
#   --tools: the whole in-tree build (scripts/build-rocksdb.sh --in-tree:
#     librocksdb, db_bench, ldb, sst_dump, db_stress), whose stock tools must
#     use the filter from an OPTIONS file without any preload
#     (tests/tools/stock_tools_test.sh --builtin).
#
# Building all of RocksDB twice more would take an hour on two cores, so the
# objects check compiles only the objects the plugin changes; --tools reuses
# the cached release build (minutes once it exists).
#
# usage: scripts/check-in-tree-build.sh [--clang] [--tools] [VERSION | TARBALL]
#          (default: the installed librocksdb-dev's version)
#   --clang    the objects check with clang and clang++ as RocksDB's
#              compilers (an engine built with clang compiles the plugin
#              with it), instead of the default cc and c++
#   BUILD_DIR  the work folder's parent (default: build)
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
repo_root=$cuckoo_repo_root
build_dir=${BUILD_DIR:-$repo_root/build}
cache=$cuckoo_cache_root
# RocksDB's Makefile takes its compilers by name: Debian's ccache folder of
# same-named links puts the compiler cache before them (CMake takes it as its
# launcher, lib/common.sh).
make_path=$PATH
if [ -n "$cuckoo_ccache" ] && [ -d /usr/lib/ccache ]; then
  make_path=/usr/lib/ccache:$PATH
fi
tools=0
compilers=()
compiler_name=$(basename "$(readlink -f "$(command -v c++)")")
while [ $# -gt 0 ]; do
  case "$1" in
    --tools) tools=1 ;;
    --clang)
      compilers=(CC=clang CXX=clang++)
      compiler_name=$(clang++ --version | head -n 1)
      ;;
    *) break ;;
  esac
  shift
done

# Downloads (once) and verifies the source tarball, then copies the tree.
source_tree=$("$repo_root/scripts/fetch-rocksdb-source.sh" "$cache/source" --full ${1:-})
# A folder per compiler, so that the GCC and clang checks can run at once.
work="$build_dir/in-tree${compilers[*]:+-clang}"
rm -rf "$work"
mkdir -p "$work"
cp -a "$source_tree" "$work/"
tree="$work/$(basename "$source_tree")"
rm -rf "$tree/_build" "$tree/plugin/cuckoo"
mkdir -p "$tree/plugin/cuckoo"
(cd "$repo_root" && git ls-files -z | tar --null -cf - -T -) |
  tar -xf - -C "$tree/plugin/cuckoo"
sources=$(sed -n 's/^cuckoo_SOURCES = //p' "$repo_root/cuckoo.mk")

env ${compilers[@]+"${compilers[@]}"} \
  cmake -S "$tree" -B "$tree/_build" -DROCKSDB_PLUGINS=cuckoo \
  -DCMAKE_BUILD_TYPE=Release -DFAIL_ON_WARNINGS=ON -DWITH_GFLAGS=OFF \
  -DWITH_TESTS=OFF -DWITH_BENCHMARK_TOOLS=OFF -DWITH_TOOLS=OFF >/dev/null
cmake_compiler=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$tree/_build/CMakeCache.txt")
if [ ${#compilers[@]} -gt 0 ] && [[ "$cmake_compiler" != *clang++ ]]; then
  echo "in-tree build (CMake): configured with $cmake_compiler, not clang++" >&2
  exit 1
fi
objects=(build_version.o)
for source in $sources; do objects+=("plugin/cuckoo/${source%.cc}.o"); done
make -C "$tree/_build" "${objects[@]}"
if grep -q '{"cuckoo", cuckoo_filter_register}' "$tree/_build/build_version.cc"; then
  echo "in-tree build (CMake, $compiler_name): plugin compiled with RocksDB $(basename "$tree")'s flags and registered as a builtin"
else
  echo "in-tree build (CMake): cuckoo_filter_register is not among RocksDB's builtins" >&2
  exit 1
fi

# RocksDB's Makefile: the plugin's objects with its flags, and what it would
# put in build_version.cc and librocksdb (read with --eval, since generating
# build_version.cc needs every library object first).
make_objects=()
for source in $sources; do make_objects+=("plugin/cuckoo/${source%.cc}.o"); done
# SKIP_DEPENDS: the Makefile would first run the compiler with -MM over every
# source of RocksDB, for dependency files that a fresh tree does not need.
PATH=$make_path make -C "$tree" -j2 ROCKSDB_PLUGINS=cuckoo SKIP_DEPENDS=1 \
  ${compilers[@]+"${compilers[@]}"} "${make_objects[@]}"
listed=$(make -s -C "$tree" ROCKSDB_PLUGINS=cuckoo SKIP_DEPENDS=1 ${compilers[@]+"${compilers[@]}"} \
  --eval='show-plugin: ; @echo compiler: $(CXX) builtins: $(ROCKSDB_PLUGIN_BUILTINS) objects: $(LIB_OBJECTS)' \
  show-plugin)
missing=0
if [ ${#compilers[@]} -gt 0 ]; then
  grep -c '^compiler: clang++ ' <<<"$listed" >/dev/null || missing=1
fi
grep -c '{"cuckoo", cuckoo_filter_register}' <<<"$listed" >/dev/null || missing=1
for object in "${make_objects[@]}"; do
  grep -c -- "$object" <<<"$listed" >/dev/null || missing=1
done
if [ "$missing" -eq 0 ]; then
  echo "in-tree build (make, $compiler_name): plugin compiled with the Makefile's flags; librocksdb would register it as a builtin"
else
  echo "in-tree build (make): the Makefile does not list the plugin: $listed" | cut -c1-400 >&2
  exit 1
fi
rm -rf "$work"

if [ "$tools" -eq 1 ]; then
  rocksdb=$("$repo_root/scripts/build-rocksdb.sh" --in-tree ${1:-})
  "$repo_root/tests/tools/stock_tools_test.sh" --builtin "$rocksdb"
  echo "in-tree build (CMake, whole): $rocksdb has librocksdb, db_bench, ldb, sst_dump and db_stress with the filter built in"
fi
