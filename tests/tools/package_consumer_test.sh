#!/usr/bin/env bash
# Installs the build into a temporary prefix, then configures, builds and runs
# tests/package, a separate CMake project that finds the package with
# find_package(rocksdb_cuckoo) and links rocksdb_cuckoo::plugin.
#
# usage: package_consumer_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build_dir=${1:?usage: package_consumer_test.sh BUILD_DIR SOURCE_DIR}
source_dir=${2:?usage: package_consumer_test.sh BUILD_DIR SOURCE_DIR}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
test -f "$work/prefix/lib/cmake/rocksdb_cuckoo/rocksdb_cuckooConfig.cmake"
test -f "$work/prefix/include/cuckoo/cuckoo_filter.h"
test -f "$work/prefix/include/rocksdb_cuckoo/cuckoo_filter_policy.h"
cmake -S "$source_dir/tests/package" -B "$work/consumer" \
  -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/consumer" >/dev/null
"$work/consumer/consumer"
