#!/usr/bin/env bash
# The main job: installs what is missing, builds, and runs the db_bench-style
# comparison of no filter, RocksDB's Bloom and Ribbon filters and the cuckoo
# filter on one DB (bench/filter_compare.cc). Extra arguments go to the
# driver, e.g. --num=5000000 --bits_per_key=8,10,12,16,20.
#
# usage: scripts/compare.sh [filter_compare flags...]
#   results: the Markdown table on standard output (also build/compare.md),
#   build/compare.csv, build/compare.json, and the charts
#   build/compare-fpr.png and build/compare-throughput.png
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${BUILD_DIR:-$repo_root/build}

rocksdb_source=$("$repo_root/scripts/setup.sh" "$repo_root/build" | tail -n 1)
cmake -S "$repo_root" -B "$build_dir" -DROCKSDB_SOURCE_DIR="$rocksdb_source" >&2
cmake --build "$build_dir" -j2 --target filter_compare >&2
"$build_dir/bench/filter_compare" --csv="$build_dir/compare.csv" \
  --json="$build_dir/compare.json" "$@" | tee "$build_dir/compare.md"
gnuplot -e "csv='$build_dir/compare.csv'; out='$build_dir/compare'" \
  "$repo_root/bench/plots.gnuplot"
echo "wrote $build_dir/compare.{md,csv,json} and $build_dir/compare-{fpr,throughput}.png" >&2
