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

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
repo_root=$cuckoo_repo_root
build_dir=${BUILD_DIR:-$repo_root/build}

cuckoo_configure_and_build "$build_dir" --targets filter_compare
"$build_dir/bench/filter_compare" --csv="$build_dir/compare.csv" \
  --json="$build_dir/compare.json" "$@" | tee "$build_dir/compare.md"
gnuplot -e "csv='$build_dir/compare.csv'; out='$build_dir/compare'" \
  "$repo_root/bench/plots.gnuplot"
echo "wrote $build_dir/compare.{md,csv,json} and $build_dir/compare-{fpr,throughput}.png" >&2
