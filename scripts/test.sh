#!/usr/bin/env bash
# The test command: installs what is missing, configures, builds and runs the
# whole test suite with ctest.
#
# usage: scripts/test.sh [--sanitize | --tsan]
#   --sanitize  builds in build-asan with AddressSanitizer and
#               UndefinedBehaviorSanitizer instead of the Release build.
#   --tsan      builds in build-tsan with ThreadSanitizer and runs the
#               thread-safe filter's concurrency tests. (The DB stress test
#               cannot run under TSan against Debian's uninstrumented
#               librocksdb: TSan does not see how RocksDB publishes a filter
#               reader to other threads and reports that as a race.)
#   BUILD_DIR   overrides the build folder.
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${BUILD_DIR:-$repo_root/build}
cmake_args=()
ctest_args=()
if [ "${1:-}" = "--sanitize" ]; then
  build_dir=${BUILD_DIR:-$repo_root/build-asan}
  cmake_args+=(-DCUCKOO_SANITIZE=address,undefined
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUCKOO_BUILD_BENCH=OFF)
elif [ "${1:-}" = "--tsan" ]; then
  build_dir=${BUILD_DIR:-$repo_root/build-tsan}
  cmake_args+=(-DCUCKOO_SANITIZE=thread -DCMAKE_BUILD_TYPE=RelWithDebInfo
    -DCUCKOO_BUILD_BENCH=OFF)
  ctest_args+=(-R "Concurrent")
elif [ -n "${1:-}" ]; then
  echo "usage: scripts/test.sh [--sanitize | --tsan]" >&2
  exit 2
fi

rocksdb_source=$("$repo_root/scripts/setup.sh" "$repo_root/build" | tail -n 1)
cmake -S "$repo_root" -B "$build_dir" -DROCKSDB_SOURCE_DIR="$rocksdb_source" \
  "${cmake_args[@]}"
cmake --build "$build_dir" -j2
ctest --test-dir "$build_dir" --output-on-failure -j2 "${ctest_args[@]}"
