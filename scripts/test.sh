#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# The test command: installs what is missing, configures, builds and runs the
# whole test suite with ctest.
#
# usage: scripts/test.sh [--clang | --sanitize | --tsan | --rocksdb VERSION|TARBALL|TREE |
#                        --java [VERSION] | --myrocks]
#   (none)      the Release build against Debian's RocksDB, in build.
#   --clang     the same with clang and clang++ (Debian's clang 14 on
#               bookworm), in build-clang.
#   --sanitize  builds in build-asan with AddressSanitizer and
#               UndefinedBehaviorSanitizer instead of the Release build.
#   --tsan      builds in build-tsan with ThreadSanitizer and runs the suite
#               against a TSan-instrumented librocksdb of the same version
#               (scripts/build-rocksdb.sh --tsan, cached outside the tree).
#               Debian's uninstrumented library will not do: TSan would not
#               see how RocksDB hands a filter reader built by a flush thread
#               to the reading threads, and would report that as a race.
#               Eight volume tests are left out: they repeat, single-threaded
#               or with more keys, what the other tests run across threads,
#               and take over half the suite's time under TSan. The CF
#               module, single-threaded in its server, is left out.
#   --rocksdb   builds in build-rocksdb-<version> against another RocksDB:
#               a release (7.8.3, 9.10.0, 9.11.2, 10.10.1, 11.8.1), a
#               release tarball or a source tree, which
#               scripts/build-rocksdb.sh builds once (cached outside the tree)
#               with its db_bench, ldb and sst_dump; the whole suite runs
#               against that library and those tools, but for the install
#               into /usr, which is a distribution's layout for Debian's
#               library and runs in the suite against it, and the CF module,
#               which has no RocksDB in it.
#   --java      the Java library (java/) built for a rocksdbjni release
#               (10.1.3 by default; 9.7.3, frocksdb-8.10.0), in
#               build-java-<release>, and its JUnit tests against the stock
#               rocksdbjni jar of that release, which
#               scripts/build-rocksdbjni.sh builds once as Maven's is built
#               (cached outside the tree; 15 to 25 minutes the first time).
#   --myrocks   the MyRocks preload (myrocks/), built in build-myrocks against
#               the RocksDB 6.29 headers of Debian's mariadb source package,
#               and its tests: the golden blocks through the 6.29 builder
#               and reader, its CreateFromString against stand-ins of 6.29
#               and 7.8, and MyRocks end to end in Debian's mariadbd
#               (mariadb-server and mariadb-plugin-rocksdb, installed if
#               missing).
#   BUILD_DIR   overrides the build folder.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
repo_root=$cuckoo_repo_root
build_dir=${BUILD_DIR:-$repo_root/build}
cmake_args=()
ctest_args=()
# The sanitizer builds: -O1 (the sanitizers' own advice) and line tables
# only, enough for their stacks and quicker to compile than -O2 -g.
sanitizer_flags=("-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG")
if [ "${1:-}" = "--clang" ]; then
  build_dir=${BUILD_DIR:-$repo_root/build-clang}
  cmake_args+=(-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++)
elif [ "${1:-}" = "--sanitize" ]; then
  build_dir=${BUILD_DIR:-$repo_root/build-asan}
  cmake_args+=(-DCUCKOO_SANITIZE=address,undefined
    -DCMAKE_BUILD_TYPE=RelWithDebInfo "${sanitizer_flags[@]}"
    -DCUCKOO_BUILD_BENCH=OFF)
elif [ "${1:-}" = "--tsan" ]; then
  build_dir=${BUILD_DIR:-$repo_root/build-tsan}
  cmake_args+=(-DCUCKOO_SANITIZE=thread -DCMAKE_BUILD_TYPE=RelWithDebInfo
    "${sanitizer_flags[@]}" -DCUCKOO_BUILD_BENCH=OFF -DCUCKOO_BUILD_MODULE=OFF)
  with_tsan_rocksdb=1
  ctest_args+=(-E "^(DbTest\.AMillionKeysWithoutAFalseNegative|DbTest\.NoFalseNegativesAndFalsePositiveRatesAgainstBloom|CuckooFilterTest\.InsertsNearTheLoadLimitMoveFewFingerprints|CuckooFilterTest\.TinyTablesFilledPastFullLoseNoKey|StaticBuilderTest\.MeasuredFalsePositiveRateMatchesTheFormula|FilterBitsTest\.SpaceEstimateIsNeverBelowTheFinishedBlock|CuckooFilterApiTest\.BatchedInsertsGiveWhatOneByOneInsertsGive|FilterChargeDbTest\.ACacheTooSmallForTheBuildLosesNoKey)$")
elif [ "${1:-}" = "--rocksdb" ]; then
  other_rocksdb=${2:?usage: scripts/test.sh --rocksdb VERSION|TARBALL|TREE}
  cmake_args+=(-DCUCKOO_BUILD_MODULE=OFF)
  ctest_args+=(-E "^Package\.InstalledToTheSystemPrefixWithMultiarchLibdir$")
elif [ "${1:-}" = "--java" ]; then
  java_release=${2:-10.1.3}
elif [ "${1:-}" = "--myrocks" ]; then
  with_myrocks=1
elif [ -n "${1:-}" ]; then
  echo "usage: scripts/test.sh [--clang | --sanitize | --tsan | --rocksdb VERSION|TARBALL|TREE | --java [VERSION] | --myrocks]" >&2
  exit 2
fi

cuckoo_setup
if [ -n "${java_release:-}" ]; then
  build_dir=${BUILD_DIR:-$repo_root/build-java-$java_release}
  cuckoo_build_java "$java_release" "$build_dir"
  exec ctest --test-dir "$build_dir" --output-on-failure -j2
fi
if [ -n "${with_myrocks:-}" ]; then
  source "$repo_root/scripts/lib/mariadb.sh"
  mariadb_install_packages test
  build_dir=${BUILD_DIR:-$repo_root/build-myrocks}
  cmake -S "$repo_root/myrocks" -B "$build_dir" -DCUCKOO_BUILD_TESTS=ON \
    ${cuckoo_ccache:+-DCMAKE_CXX_COMPILER_LAUNCHER=$cuckoo_ccache} >&2
  cmake --build "$build_dir" -j2 >&2
  exec ctest --test-dir "$build_dir" --output-on-failure --no-tests=error -j2
fi
if [ -n "${with_tsan_rocksdb:-}" ]; then
  tsan_rocksdb=$("$repo_root/scripts/build-rocksdb.sh" --tsan)
  export LD_LIBRARY_PATH="$tsan_rocksdb${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
fi
if [ -n "${other_rocksdb:-}" ]; then
  # The library, its source tree, and its tools first on the PATH.
  rocksdb_build=$("$repo_root/scripts/build-rocksdb.sh" "$other_rocksdb")
  cmake_args+=(--rocksdb-source "$(readlink -f "$rocksdb_build/source")")
  version=$(basename "$(readlink -f "$rocksdb_build/librocksdb.so")")
  build_dir=${BUILD_DIR:-$repo_root/build-rocksdb-${version#librocksdb.so.}}
  cmake_args+=(-DROCKSDB_LIBRARY="$rocksdb_build/librocksdb.so")
  export PATH="$rocksdb_build:$PATH"
  export LD_LIBRARY_PATH="$rocksdb_build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
cuckoo_configure_and_build "$build_dir" "${cmake_args[@]}"
expected_library_dir=${tsan_rocksdb:-${rocksdb_build:-}}
if [ -n "$expected_library_dir" ]; then
  # The tests must really run against the library asked for.
  loaded=$(ldd "$build_dir/tests/plugin_tests" | awk '/librocksdb/ {print $3}')
  if [ "$(dirname "$(readlink -f "$loaded")")" != "$(readlink -f "$expected_library_dir")" ]; then
    echo "test.sh: plugin_tests would load $loaded, not $expected_library_dir/librocksdb.so" >&2
    exit 1
  fi
fi
ctest --test-dir "$build_dir" --output-on-failure -j2 "${ctest_args[@]}"
