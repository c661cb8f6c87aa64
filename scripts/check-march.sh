#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# Checks that the build does not depend on the CPU it runs on: compiles the
# whole project (core, plugin, tests, benchmarks) warning-free for two fixed
# x86-64 targets, x86-64-v2 (SSE4.2) and x86-64-v4 (AVX-512), and the plugin's
# sources also with RocksDB's own in-tree flags at -O2 and -O3. RocksDB's
# in-tree build uses -march=native with -Werror, so without this check what
# passes depends on the CPU that CI happens to get. Nothing is run: the
# binaries need not execute on this machine.
#
# usage: scripts/check-march.sh [--march TARGET] [BUILD_DIR_PREFIX]
#   --march    only this target (CI checks x86-64-v4, whose AVX-512 paths are
#              the ones that broke the build before; both are checked
#              without it)
#   BUILD_DIR_PREFIX  default: build-march
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
repo_root=$cuckoo_repo_root
marches=(x86-64-v2 x86-64-v4)
if [ "${1:-}" = "--march" ]; then
  marches=("${2:?usage: scripts/check-march.sh [--march TARGET] [BUILD_DIR_PREFIX]}")
  shift 2
fi
prefix=${1:-$repo_root/build-march}
cuckoo_setup
rocksdb_source=$cuckoo_rocksdb_source

# The warning and code-generation flags RocksDB's CMake gives in-tree plugin
# sources (Release, FAIL_ON_WARNINGS=ON), without -march.
rocksdb_flags=(-W -Wextra -Wall -pthread -Wsign-compare -Wshadow
  -Wno-unused-parameter -Wno-unused-variable -Woverloaded-virtual
  -Wnon-virtual-dtor -Wno-missing-field-initializers -Wno-strict-aliasing
  -Wno-invalid-offsetof -fno-omit-frame-pointer -momit-leaf-frame-pointer
  -Werror -fno-builtin-memcmp -DNDEBUG -fno-rtti -std=gnu++17 -DOS_LINUX
  -DROCKSDB_PLATFORM_POSIX -DROCKSDB_LIB_IO_POSIX)
sources=$(sed -n 's/^cuckoo_SOURCES = //p' "$repo_root/cuckoo.mk")

for march in "${marches[@]}"; do
  build="$prefix-$march"
  echo "== -march=$march: the whole project" >&2
  mkdir -p "$build"
  cuckoo_configure_and_build "$build" -DCMAKE_CXX_FLAGS="-march=$march" \
    2>"$build/build.log" || { cat "$build/build.log" >&2; exit 1; }
  # The two levels at once, one per core.
  compile_with_rocksdb_flags() {  # LEVEL
    local source
    for source in $sources; do
      $cuckoo_ccache g++ "${rocksdb_flags[@]}" "$1" -march="$march" -I"$rocksdb_source" \
        -I"$rocksdb_source/include" -I"$repo_root/include" \
        -I"$repo_root/plugin" -c "$repo_root/$source" \
        -o "$build/in-tree-flags$1-$(basename "$source" .cc).o"
    done
  }
  cuckoo_each_two_at_a_time compile_with_rocksdb_flags -- -O2 -O3
  echo "check-march: -march=$march compiles warning-free (project; plugin with RocksDB's flags at -O2 and -O3)"
done
