#!/usr/bin/env bash
# Builds and runs the micro-benchmarks (bench/filter_micro_bench.cc), writes
# their JSON and prints a Markdown summary with ratios to Bloom.
#
# usage: scripts/micro-bench.sh [--release] [google benchmark or --max_keys flags]
#   --release  runs against the Release librocksdb of
#              scripts/build-rocksdb.sh --release instead of Debian's
#   output: build/micro-bench[-release].json and .md
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${BUILD_DIR:-$repo_root/build}
suffix=""
library_path=""
if [ "${1:-}" = "--release" ]; then
  shift
  suffix="-release"
  library_path=$("$repo_root/scripts/build-rocksdb.sh" --release)
fi

rocksdb_source=$("$repo_root/scripts/setup.sh" "$repo_root/build" | tail -n 1)
cmake -S "$repo_root" -B "$build_dir" -DROCKSDB_SOURCE_DIR="$rocksdb_source" >&2
cmake --build "$build_dir" -j2 --target filter_micro_bench >&2
json="$build_dir/micro-bench$suffix.json"
LD_LIBRARY_PATH="$library_path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  "$build_dir/bench/filter_micro_bench" --benchmark_out="$json" \
  --benchmark_out_format=json "$@" >&2
python3 "$repo_root/bench/summarize_micro.py" "$json" | tee "$build_dir/micro-bench$suffix.md"
