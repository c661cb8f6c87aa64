#!/usr/bin/env bash
# The test command: installs what is missing, configures, builds and runs the
# whole test suite with ctest.
#
# usage: scripts/test.sh [--sanitize | --tsan]
#   --sanitize  builds in build-asan with AddressSanitizer and
#               UndefinedBehaviorSanitizer instead of the Release build.
#   --tsan      builds in build-tsan with ThreadSanitizer and runs the suite
#               against a TSan-instrumented librocksdb of the same version
#               (scripts/build-rocksdb.sh --tsan, cached outside the tree).
#               Debian's uninstrumented library will not do: TSan would not
#               see how RocksDB hands a filter reader built by a flush thread
#               to the reading threads, and would report that as a race.
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
  with_tsan_rocksdb=1
elif [ -n "${1:-}" ]; then
  echo "usage: scripts/test.sh [--sanitize | --tsan]" >&2
  exit 2
fi

rocksdb_source=$("$repo_root/scripts/setup.sh" "$repo_root/build" | tail -n 1)
if [ -n "${with_tsan_rocksdb:-}" ]; then
  tsan_rocksdb=$("$repo_root/scripts/build-rocksdb.sh" --tsan)
  export LD_LIBRARY_PATH="$tsan_rocksdb${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
fi
cmake -S "$repo_root" -B "$build_dir" -DROCKSDB_SOURCE_DIR="$rocksdb_source" \
  "${cmake_args[@]}"
cmake --build "$build_dir" -j2
if [ -n "${tsan_rocksdb:-}" ]; then
  # The tests must really run against the instrumented library.
  loaded=$(ldd "$build_dir/tests/plugin_tests" | awk '/librocksdb/ {print $3}')
  if [ "$(dirname "$(readlink -f "$loaded")")" != "$(readlink -f "$tsan_rocksdb")" ]; then
    echo "test.sh: plugin_tests would load $loaded, not the TSan librocksdb" >&2
    exit 1
  fi
fi
ctest --test-dir "$build_dir" --output-on-failure -j2 "${ctest_args[@]}"
