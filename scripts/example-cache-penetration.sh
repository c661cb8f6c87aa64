#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# The cache-penetration example (examples/cache_penetration): installs what is
# missing, builds, runs the catalogue service with its three gates (the
# dynamic cuckoo filter, a Bloom filter, a counting Bloom filter) on the same
# traffic, and draws the gates' false-positive rate over time. Under 2
# minutes on 2 cores. Extra arguments go to the program (--items, --requests,
# --windows).
#
# usage: scripts/example-cache-penetration.sh [cache_penetration flags...]
#   results: the table on standard output, build/cache-penetration.csv and
#   the chart build/cache-penetration.png. The database goes to a fresh
#   folder under build, removed at the end.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
repo_root=$cuckoo_repo_root
build_dir=${BUILD_DIR:-$repo_root/build}

cuckoo_configure_and_build "$build_dir" --targets cache_penetration
work=$(mktemp -d "$build_dir/cache-penetration-work.XXXXXX")
trap 'rm -rf "$work"' EXIT
csv=$build_dir/cache-penetration.csv
"$build_dir/examples/cache_penetration/cache_penetration" --db "$work/db" \
  --csv "$csv" "$@"
gnuplot -e "csv='$csv'; out='$build_dir/cache-penetration.png'" \
  "$repo_root/examples/cache_penetration/plot.gnuplot"
echo "wrote $csv and $build_dir/cache-penetration.png" >&2
