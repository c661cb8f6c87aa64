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
# usage: scripts/compare.sh [--release [VERSION]] [--full] [filter_compare flags...]
#   --release  measures against a Release librocksdb (scripts/build-rocksdb.sh
#              --release, built once and cached: 15 to 30 minutes) of
#              VERSION (default: the installed one) instead of Debian's,
#              which has assertions on; the report names the build either way
#   results: the Markdown tables on standard output (also build/compare.md),
#   build/compare.csv, build/compare-fpr.csv, build/compare.json, and the
#   charts build/compare-{fpr,storage-reads,throughput-memory,throughput-io}.png
#   The DBs go to a fresh folder under build (direct I/O needs a disk, and
#   /tmp may be tmpfs), removed at the end unless --keep is given.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
repo_root=$cuckoo_repo_root
build_dir=${BUILD_DIR:-$repo_root/build}

args=()
while (($#)); do
  if cuckoo_release_flag "$@"; then
    shift "$cuckoo_flag_words"
  else
    args+=("$1")
    shift
  fi
done
set -- ${args[@]+"${args[@]}"}
cuckoo_setup
cuckoo_build_for_run "$build_dir" "$cuckoo_release" \
  "$cuckoo_release_version" filter_compare
build_dir=$cuckoo_run_build_dir
rocksdb_build=$(cuckoo_describe_rocksdb "$build_dir/bench/filter_compare" scripts/compare.sh)
echo "compare: RocksDB build: $rocksdb_build" >&2
work=$(mktemp -d "$build_dir/compare-work.XXXXXX")
case " $* " in
  *" --keep "*) ;;
  *) trap 'rm -rf "$work"' EXIT ;;  # also when the driver stops early
esac
"$build_dir/bench/filter_compare" --db="$work" --csv="$build_dir/compare.csv" \
  --fpr_csv="$build_dir/compare-fpr.csv" --json="$build_dir/compare.json" \
  --rocksdb_build="$rocksdb_build" "$@" |
  tee "$build_dir/compare.md"
# The charts of the regimes that ran; those of an earlier run go first.
regimes=$(awk -F, 'NR > 1 && !seen[$1]++ { printf "%s ", $1 }' "$build_dir/compare.csv")
rm -f "$build_dir"/compare-{storage-reads,throughput-memory,throughput-io}.png
gnuplot -e "csv='$build_dir/compare.csv'; fpr_csv='$build_dir/compare-fpr.csv'; out='$build_dir/compare'; regimes='$regimes'" \
  "$repo_root/bench/plots.gnuplot"
echo "wrote $build_dir/compare.{md,csv,json}, $build_dir/compare-fpr.csv and" \
  "the charts:" "$build_dir"/compare-*.png >&2
