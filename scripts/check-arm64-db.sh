#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# The plugin's real-DB tests on arm64, against Debian's arm64 RocksDB, under
# qemu-user. Debian's arm64 librocksdb-dev cannot be installed beside the
# amd64 one (its packages are not Multi-Arch), so its packages and their
# dependencies are extracted into an arm64 root file system (mmdebstrap
# --variant=extract: nothing runs in it), cached outside the tree. The
# plugin and its tests (tests/plugin, as plugin_tests, with GoogleTest from
# /usr/src/googletest) are cross-compiled with Debian's aarch64 compiler
# against that root's librocksdb, and run with qemu-aarch64 taking its
# libraries from the root. The tests then write, flush, compact and read real
# DBs with the filter on arm64: unsigned char, XXH3's NEON path, unaligned
# filter blocks read in place, and RocksDB's arm64 build (its own cache line
# and CRC32 code). qemu on an x86 host cannot show arm64's weak memory
# ordering (see ConcurrentCuckooFilter's header).
#
# usage: scripts/check-arm64-db.sh [GTEST_FILTER]   (installs its packages
#        when run as root; about 10 minutes, the first time with the root)
#   BUILD_DIR  the work folder's parent (default: build)
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/cross.sh"
repo_root=$cuckoo_repo_root
# The tests find the golden blocks at tests/format/golden, relative to the
# checkout: a flag that names no clone keeps the compiler cache's objects
# good for every clone.
cd "$repo_root"
cache=$cuckoo_cache_root
root=$cache/arm64-bookworm-rocksdb-root
work=${BUILD_DIR:-$repo_root/build}/arm64-db
cxx=aarch64-linux-gnu-g++
gtest_filter=${1:-*}

packages=(qemu-user mmdebstrap g++-aarch64-linux-gnu libgtest-dev
  libxxhash-dev librocksdb-dev)
cuckoo_install_packages check-arm64-db "${packages[@]}"

# The arm64 root: the same librocksdb-dev version as the host's, and the
# libraries it links (extracted, not installed).
version=$(dpkg-query -W -f='${Version}' librocksdb-dev)
if [ ! -f "$root/.complete" ] || [ "$(cat "$root/.complete")" != "$version" ]; then
  log "extracting Debian's arm64 librocksdb-dev $version and its dependencies into $root"
  rm -rf "$root"
  mkdir -p "$(dirname "$root")"
  mmdebstrap --quiet --arch=arm64 --variant=extract --mode=root \
    --include="librocksdb-dev=$version,libc6,libstdc++6,libgcc-s1" \
    bookworm "$root" >&2
  echo "$version" >"$root/.complete"
fi
library_dir=$root/usr/lib/aarch64-linux-gnu
[ -f "$library_dir/librocksdb.so" ] ||
  { log "no librocksdb.so in $library_dir"; exit 1; }

# The RocksDB source tree of the same version, for the internal filter
# interfaces (scripts/fetch-rocksdb-source.sh, cached).
upstream=${version#*:}
upstream=${upstream%%-*}
rocksdb_source=$("$repo_root/scripts/fetch-rocksdb-source.sh" "$cache/source" "$upstream")

mkdir -p "$work/include"
# Headers only from here, so that no host header of another architecture
# comes along: RocksDB's public headers from the root, xxhash.h (used header
# only, XXH_INLINE_ALL) and GoogleTest's from the host's sources.
ln -sfn "$root/usr/include/rocksdb" "$work/include/rocksdb"
ln -sfn /usr/include/xxhash.h "$work/include/xxhash.h"
gtest=/usr/src/googletest/googletest
flags=(-std=c++17 -O2 -Wall -Wextra -Wshadow -Werror -pthread
  -DROCKSDB_PLATFORM_POSIX
  '-DCUCKOO_GOLDEN_DIR="tests/format/golden"'
  -I"$repo_root/include" -I"$repo_root/plugin" -I"$repo_root/tests"
  -I"$repo_root/tests/format" -I"$rocksdb_source"
  -isystem "$work/include" -isystem "$gtest/include")

defines=$(echo | $cxx -dM -E -)
grep -q '__CHAR_UNSIGNED__ 1' <<<"$defines" && grep -q '__ARM_NEON 1' <<<"$defines" ||
  { log "$cxx does not target arm64 with unsigned char and NEON"; exit 1; }

log "compiling GoogleTest for arm64 (once)"
cuckoo_cross_gtest "$cxx" aarch64-linux-gnu-ar "$work"
sources=()
for source in "$repo_root"/plugin/*.cc; do
  # The shared library's load-time registration; the tests register.
  [ "$(basename "$source")" = cuckoo_autoregister.cc ] || sources+=("$source")
done
for source in "$repo_root"/tests/plugin/*_test.cc; do
  # Its own program on the host (it replaces operator new).
  [ "$(basename "$source")" = allocation_failure_test.cc ] || sources+=("$source")
done
log "compiling the plugin and ${#sources[@]} files of plugin_tests for arm64"
cuckoo_compile_each "$work" "$cxx" "${flags[@]}" -- "${sources[@]}"
objects=()
for source in "${sources[@]}"; do objects+=("$work/$(basename "$source" .cc).o"); done
# The library by its path: with the root's folder on -L, the linker would
# take the root's libc.so, whose absolute paths name the host's folders.
$cxx -pthread "${objects[@]}" "$work/gtest.a" "$library_dir/librocksdb.so" \
  -Wl,-rpath-link,"$library_dir" -Wl,-rpath-link,"$root/lib/aarch64-linux-gnu" \
  -o "$work/plugin_tests"

# Each test in its own process, two at a time, one per core: qemu-user runs
# a program on one host thread, and the tests' times differ too much for
# fixed shards to balance.
started=$(date +%s)
log "running plugin_tests on arm64 (qemu-user, two tests at a time)"
run_arm64() {
  qemu-aarch64 -L "$root" \
    -E LD_LIBRARY_PATH="/usr/lib/aarch64-linux-gnu:/lib/aarch64-linux-gnu" \
    "$work/plugin_tests" "$@"
}
mapfile -t tests < <(run_arm64 --gtest_list_tests --gtest_filter="$gtest_filter" |
  awk '/^[^ ]/ { suite = $1 } /^  / { print suite $1 }')
[ "${#tests[@]}" -gt 0 ] || { log "plugin_tests on arm64: no test matches $gtest_filter"; exit 1; }
logs="$work/plugin_tests.logs"
rm -rf "$logs"
mkdir -p "$logs"
run_one() {
  run_arm64 --gtest_brief=1 --gtest_filter="$1" >"$logs/$(tr / _ <<<"$1").log" 2>&1
}
failed=0
cuckoo_each_two_at_a_time run_one -- "${tests[@]}" || failed=1
# A test passes, or skips itself where Debian's arm64 RocksDB lacks what it
# tests (AddKeyAndAlt before 9.6): either way its log ends with one line.
ended='^\[  (PASSED|SKIPPED) +\] 1 test\.$'
passed=$(grep -l '^\[  PASSED  \] 1 test\.$' "$logs"/*.log | wc -l)
skipped=$(grep -l '^\[  SKIPPED \] 1 test\.$' "$logs"/*.log | wc -l)
if [ "$failed" = 1 ] || [ "$((passed + skipped))" != "${#tests[@]}" ]; then
  for test_log in "$logs"/*.log; do
    grep -Eq "$ended" "$test_log" || tail -n 40 "$test_log" >&2
  done
  log "plugin_tests on arm64: FAILED, $passed of ${#tests[@]} passed, $skipped skipped (logs: $logs)"
  exit 1
fi
log "plugin_tests on arm64 against Debian's arm64 RocksDB $version: [  PASSED  ] $passed tests, $skipped skipped. ($(($(date +%s) - started)) s)"
