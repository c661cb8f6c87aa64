#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# CuckooFilter against RocksJava's BloomFilter from Java, in one JVM
# (java/src/bench/.../FilterBench.java): absent-key and present-key get
# throughput with the DB in the block cache, false positives per absent get,
# and the filters' bytes from the table properties; paired repetitions in
# alternating order, median ratios with distribution-free intervals. Runs
# against the stock rocksdbjni of RELEASE as Maven's is built
# (scripts/build-rocksdbjni.sh).
#
# usage: scripts/java-bench.sh [RELEASE] [--keys N] [--lookups N] [--reps N] [--bits B] [--control]
#   RELEASE    10.1.3 (default), 9.7.3 or frocksdb-8.10.0
#   --control  Bloom in both DBs: the bias between them besides the filter
#   prints a Markdown table on standard output, each repetition on standard
#   error
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
release=10.1.3
if [ $# -gt 0 ] && [[ "$1" != --* ]]; then
  release=$1
  shift
fi
build_dir=${BUILD_DIR:-$cuckoo_repo_root/build-java-$release}
cuckoo_build_java "$release" "$build_dir" >&2
jar=$(ls "$build_dir"/rocksdb-cuckoo-*.jar | head -n 1)
echo "$(java -version 2>&1 | head -n 1), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), glibc malloc, rocksdbjni $release (built as Maven's: Release, -O2 -DNDEBUG, no RTTI)."
exec java -cp "$build_dir/bench-classes:$jar:$cuckoo_rocksdbjni/rocksdbjni.jar" \
  io.github.rocksdbcuckoo.bench.FilterBench --dir "$build_dir" "$@"
