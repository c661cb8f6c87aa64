#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# Builds and runs the micro-benchmarks (bench/filter_micro_bench.cc), writes
# their JSON and prints a Markdown summary with ratios to Bloom. Each
# benchmark runs 5 times, interleaved at random with the others, and the
# summary gives medians with the min-max range of the repetitions.
#
# usage: scripts/micro-bench.sh [--release [VERSION]] [google benchmark or --max_keys flags]
#   --release  runs against the Release librocksdb of
#              scripts/build-rocksdb.sh --release of VERSION (default: the
#              installed one) instead of Debian's, which has assertions on;
#              the summary names the build either way
#   output: build/micro-bench[-release].json and .md
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
repo_root=$cuckoo_repo_root
build_dir=${BUILD_DIR:-$repo_root/build}
suffix=""
if cuckoo_release_flag "$@"; then
  shift "$cuckoo_flag_words"
  suffix="-release"
fi
cuckoo_setup
cuckoo_build_for_run "$build_dir" "$cuckoo_release" \
  "$cuckoo_release_version" filter_micro_bench
build_dir=$cuckoo_run_build_dir
rocksdb_build=$(cuckoo_describe_rocksdb "$build_dir/bench/filter_micro_bench" scripts/micro-bench.sh)
json="$build_dir/micro-bench$suffix.json"
"$build_dir/bench/filter_micro_bench" --benchmark_out="$json" \
  --benchmark_out_format=json --benchmark_repetitions=5 \
  --benchmark_enable_random_interleaving=true "$@" >&2
{
  echo "RocksDB build: $rocksdb_build"
  echo
  python3 "$repo_root/bench/summarize_micro.py" "$json"
} | tee "$build_dir/micro-bench$suffix.md"
