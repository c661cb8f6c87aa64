#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# Builds and runs the micro-benchmarks (bench/filter_micro_bench.cc), writes
# their JSON and prints a Markdown summary with ratios to Bloom. Each
# benchmark runs 5 times, interleaved at random with the others, and the
# summary gives medians with the min-max range of the repetitions.
#
# usage: scripts/micro-bench.sh [--release] [google benchmark or --max_keys flags]
#   --release  runs against the Release librocksdb of
#              scripts/build-rocksdb.sh --release instead of Debian's
#   output: build/micro-bench[-release].json and .md
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
repo_root=$cuckoo_repo_root
build_dir=${BUILD_DIR:-$repo_root/build}
suffix=""
library_path=""
cuckoo_setup
if [ "${1:-}" = "--release" ]; then
  shift
  suffix="-release"
  library_path=$("$repo_root/scripts/build-rocksdb.sh" --release)
fi

cuckoo_configure_and_build "$build_dir" --targets filter_micro_bench
json="$build_dir/micro-bench$suffix.json"
LD_LIBRARY_PATH="$library_path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  "$build_dir/bench/filter_micro_bench" --benchmark_out="$json" \
  --benchmark_out_format=json --benchmark_repetitions=5 \
  --benchmark_enable_random_interleaving=true "$@" >&2
python3 "$repo_root/bench/summarize_micro.py" "$json" | tee "$build_dir/micro-bench$suffix.md"
