#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# The cache-penetration example (examples/cache_penetration): installs what is
# missing, builds, runs the catalogue service and draws its gates'
# false-positive rate over time. Under 2 minutes on 2 cores.
#   (default)      three gates in the service's process (the dynamic cuckoo
#                  filter, a Bloom filter, a counting Bloom filter) on the
#                  same traffic;
#   --shared-gate  one gate, the CF module in a redis-server on a loopback
#                  port, shared by client processes (--clients N, default 4)
#                  that each check it over the network; the table adds the
#                  gate check's latency.
# Other arguments go to the program (--items, --requests, --windows).
#
# usage: scripts/example-cache-penetration.sh [--shared-gate] [flags...]
#   results: the table on standard output, build/cache-penetration.csv and
#   the chart build/cache-penetration.png. The database goes to a fresh
#   folder under build, removed at the end.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
repo_root=$cuckoo_repo_root
build_dir=${BUILD_DIR:-$repo_root/build}
example=$repo_root/examples/cache_penetration

shared=""
if [ "${1:-}" = "--shared-gate" ]; then
  shared=1
  shift
fi
work=$(mktemp -d "$build_dir/cache-penetration-work.XXXXXX")
trap 'rm -rf "$work"' EXIT
csv=$build_dir/cache-penetration.csv
if [ -z "$shared" ]; then
  cuckoo_configure_and_build "$build_dir" --targets cache_penetration
  "$build_dir/examples/cache_penetration/cache_penetration" --db "$work/db" \
    --csv "$csv" "$@"
  plot_flags=""
else
  cuckoo_configure_and_build "$build_dir" --targets shared_gate cuckoo_cf_module
  "$example/with_redis.sh" "$build_dir/module/librocksdb_cuckoo_cf.so" \
    "$build_dir/examples/cache_penetration/shared_gate" --db "$work/db" \
    --port @PORT@ --csv "$csv" "$@"
  plot_flags="; gates=1; titles='CF_module_in_Redis,_shared'"
fi
gnuplot -e "csv='$csv'; out='$build_dir/cache-penetration.png'$plot_flags" \
  "$example/plot.gnuplot"
echo "wrote $csv and $build_dir/cache-penetration.png" >&2
