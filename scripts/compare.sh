#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# The main job: installs what is missing, builds, and runs the db_bench-style
# comparison of no filter, RocksDB's Bloom and Ribbon filters and the cuckoo
# filter (bench/filter_compare.cc): one multi-level LSM of the same shape per
# policy, read in memory and I/O-bound (direct reads), with paired ratios to
# Bloom and their intervals, and the equal-FPR view. About 3 minutes on 2
# cores; --full is the preset of bench/RESULTS.md. Extra arguments go to the
# driver (filter_compare --help lists them).
#
# usage: scripts/compare.sh [--full] [filter_compare flags...]
#   results: the Markdown tables on standard output (also build/compare.md),
#   build/compare.csv, build/compare-fpr.csv, build/compare.json, and the
#   charts build/compare-{fpr,storage-reads,throughput-memory,throughput-io}.png
#   The DBs go to a fresh folder under build (direct I/O needs a disk, and
#   /tmp may be tmpfs), removed at the end unless --keep is given.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
repo_root=$cuckoo_repo_root
build_dir=${BUILD_DIR:-$repo_root/build}

cuckoo_configure_and_build "$build_dir" --targets filter_compare
work=$(mktemp -d "$build_dir/compare-work.XXXXXX")
case " $* " in
  *" --keep "*) ;;
  *) trap 'rm -rf "$work"' EXIT ;;  # also when the driver stops early
esac
"$build_dir/bench/filter_compare" --db="$work" --csv="$build_dir/compare.csv" \
  --fpr_csv="$build_dir/compare-fpr.csv" --json="$build_dir/compare.json" "$@" |
  tee "$build_dir/compare.md"
gnuplot -e "csv='$build_dir/compare.csv'; fpr_csv='$build_dir/compare-fpr.csv'; out='$build_dir/compare'" \
  "$repo_root/bench/plots.gnuplot"
echo "wrote $build_dir/compare.{md,csv,json}, $build_dir/compare-fpr.csv and" \
  "$build_dir/compare-{fpr,storage-reads,throughput-memory,throughput-io}.png" >&2
