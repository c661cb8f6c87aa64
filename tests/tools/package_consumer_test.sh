#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# Installs rocksdb-cuckoo, then configures, builds and runs tests/package, a
# separate CMake project that finds the package with
# find_package(rocksdb_cuckoo) and links rocksdb_cuckoo::plugin.
#
# usage: package_consumer_test.sh BUILD_DIR SOURCE_DIR
#          installs BUILD_DIR as it is configured (its CMAKE_INSTALL_LIBDIR).
#        package_consumer_test.sh --system-prefix BUILD_DIR SOURCE_DIR
#          configures a fresh plugin-only build of SOURCE_DIR with the same
#          RocksDB as BUILD_DIR and the prefix /usr, where GNUInstallDirs picks
#          Debian's lib/<multiarch>, and installs it under a DESTDIR.
set -euo pipefail
system_prefix=
if [ "${1:-}" = --system-prefix ]; then
  system_prefix=1
  shift
fi
build_dir=${1:?usage: package_consumer_test.sh [--system-prefix] BUILD_DIR SOURCE_DIR}
source_dir=${2:?usage: package_consumer_test.sh [--system-prefix] BUILD_DIR SOURCE_DIR}
# Inside the build folder, so that the plugin-only build's compilations, like
# the checkout's own, hit the compiler cache from any clone
# (scripts/lib/common.sh).
work=$(mktemp -d "$build_dir/package-test.XXXXXX")
trap 'rm -rf "$work"' EXIT

cache_value() {
  sed -n "s/^$1:[A-Z]*=//p" "$2/CMakeCache.txt"
}

if [ -n "$system_prefix" ]; then
  cmake -S "$source_dir" -B "$work/build" -DCMAKE_INSTALL_PREFIX=/usr \
    -DCUCKOO_BUILD_TESTS=OFF -DCUCKOO_BUILD_BENCH=OFF \
    -DCMAKE_BUILD_TYPE="$(cache_value CMAKE_BUILD_TYPE "$build_dir")" \
    -DROCKSDB_SOURCE_DIR="$(cache_value ROCKSDB_SOURCE_DIR "$build_dir")" \
    -DROCKSDB_LIBRARY="$(cache_value ROCKSDB_LIBRARY "$build_dir")" >/dev/null
  cmake --build "$work/build" -j2 >/dev/null
  DESTDIR="$work/root" cmake --install "$work/build" >/dev/null
  prefix="$work/root/usr"
  libdir=$(cache_value CMAKE_INSTALL_LIBDIR "$work/build")
  multiarch=$(${CXX:-c++} -print-multiarch 2>/dev/null || true)
  if [ -n "$multiarch" ] && [ "$libdir" != "lib/$multiarch" ]; then
    echo "package_consumer_test: with the prefix /usr, GNUInstallDirs chose" \
      "'$libdir', not lib/$multiarch; this check tests nothing here" >&2
    exit 1
  fi
else
  prefix="$work/prefix"
  cmake --install "$build_dir" --prefix "$prefix" >/dev/null
  libdir=$(cache_value CMAKE_INSTALL_LIBDIR "$build_dir")
fi

for installed in "$libdir/cmake/rocksdb_cuckoo/rocksdb_cuckooConfig.cmake" \
  "$libdir/librocksdb_cuckoo.so" include/cuckoo/cuckoo_filter.h \
  include/rocksdb_cuckoo/cuckoo_filter_policy.h; do
  if [ ! -f "$prefix/$installed" ]; then
    echo "package_consumer_test: $installed is not installed" >&2
    exit 1
  fi
done
cmake -S "$source_dir/tests/package" -B "$work/consumer" \
  -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/consumer" >/dev/null
"$work/consumer/consumer"
