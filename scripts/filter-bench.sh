#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# RocksDB's own filter benchmark, util/filter_bench, with the cuckoo filter
# beside Bloom and Ribbon: the comparison as a RocksDB engineer runs it.
#
# For each RocksDB version it builds the Release library
# (scripts/build-rocksdb.sh, cached), the plugin against it, and that
# version's filter_bench.cc with one change of the project's
# (scripts/lib/filter-bench-policy.pl): a -filter_policy flag that creates
# the policy from a string, as an options string would. Each run is a fresh
# process with the plugin preloaded, under glibc's malloc as it comes (no
# tunables, nothing settled first) and under jemalloc (preloaded). The runs
# of one repetition go Bloom, Ribbon, cuckoo back to back, so that each
# ratio to Bloom is paired; the summary gives medians with the min-max of
# the repetitions.
#
# usage: scripts/filter-bench.sh [--versions V,V] [--keys N,N]
#          [--allocators glibc,jemalloc] [--repetitions R] [--bits-per-key B]
#          [--working-mem-mb M] [--m-queries Q] [--out DIR]
#   --versions     RocksDB releases (default 7.8.3,11.8.1)
#   --keys         average keys per filter (default 10000,100000,1000000)
#   --repetitions  runs of each row (default 3)
#   --working-mem-mb  filter memory built per run (default 64)
#   --m-queries    millions of queries per query test (default 2)
#   output: a Markdown table on standard output; raw logs in DIR (default
#   build/filter-bench)
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
repo_root=$cuckoo_repo_root
versions=7.8.3,11.8.1
keys=10000,100000,1000000
allocators=glibc,jemalloc
repetitions=3
bits_per_key=10
working_mem_mb=64
m_queries=2
out=$repo_root/build/filter-bench
usage="usage: scripts/filter-bench.sh [--versions V,V] [--keys N,N] [--allocators glibc,jemalloc] [--repetitions R] [--bits-per-key B] [--working-mem-mb M] [--m-queries Q] [--out DIR]"
while (($#)); do
  case "$1" in
    --versions) versions=$2 ;;
    --keys) keys=$2 ;;
    --allocators) allocators=$2 ;;
    --repetitions) repetitions=$2 ;;
    --bits-per-key) bits_per_key=$2 ;;
    --working-mem-mb) working_mem_mb=$2 ;;
    --m-queries) m_queries=$2 ;;
    --out) out=$2 ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
  shift 2 || { echo "$usage" >&2; exit 2; }
done

cuckoo_setup
jemalloc=$(ls /usr/lib/"$(g++ -print-multiarch)"/libjemalloc.so.2 2>/dev/null || true)
mkdir -p "$out"

# build_filter_bench VERSION: sets library_dir, plugin and bench for VERSION.
build_filter_bench() {
  local version=$1 build compile
  cuckoo_build_for_run "$repo_root/build" 1 "$version" rocksdb_cuckoo
  library_dir=${LD_LIBRARY_PATH%%:*}
  plugin=$cuckoo_run_build_dir/plugin/librocksdb_cuckoo.so
  bench=$out/filter_bench-$version
  # RocksDB's own compile line for filter_bench, from its Release build, with
  # the changed copy of the source in place of the original.
  build="$library_dir.build"
  # awk reads all of ninja's output: grep -m1 would stop early, and
  # pipefail would take ninja's SIGPIPE for a failure.
  compile=$(ninja -C "$build" -t commands filter_bench |
    awk '/ -c .*util\/filter_bench\.cc$/ && !found { print; found = 1 }')
  [ -n "$compile" ] || { log "no compile line for filter_bench in $build"; exit 1; }
  cp "$library_dir/source/util/filter_bench.cc" "$bench.cc"
  perl "$repo_root/scripts/lib/filter-bench-policy.pl" "$bench.cc"
  compile=${compile%% -MD *}
  # RocksDB's CMake puts ccache in front of the compiler when it finds it.
  compile=${compile#ccache }
  compile=${compile#/usr/bin/c++ }
  # shellcheck disable=SC2086
  g++ $compile -o "$bench.o" -c "$bench.cc"
  g++ -pthread -o "$bench" "$bench.o" -Wl,-rpath,"$library_dir" \
    "$library_dir/librocksdb.so" -lgflags
}

# run_one VERSION ALLOCATOR KEYS POLICY REPETITION: one fresh process.
run_one() {
  local version=$1 allocator=$2 n=$3 policy=$4 rep=$5 preload=$plugin
  [ "$allocator" = jemalloc ] && preload="$jemalloc:$plugin"
  local args=(-average_keys_per_filter="$n" -working_mem_size_mb="$working_mem_mb"
    -m_queries="$m_queries" -bits_per_key="$bits_per_key" -allow_bad_fp_rate)
  case "$policy" in
    bloom) args+=(-impl=1) ;;
    ribbon) args+=(-impl=2) ;;
    # -impl=1 only picks the 64-bit hash for the dry runs that queries'
    # net times subtract, as for Bloom and Ribbon.
    cuckoo) args+=(-impl=1 -filter_policy="cuckoofilter:$bits_per_key") ;;
  esac
  LD_PRELOAD=$preload "$bench" "${args[@]}" \
    >"$out/$version-$allocator-$n-$policy-$rep.log" 2>&1 ||
    { log "failed: $out/$version-$allocator-$n-$policy-$rep.log"; tail -5 "$out/$version-$allocator-$n-$policy-$rep.log" >&2; exit 1; }
}

for version in ${versions//,/ }; do
  build_filter_bench "$version"
  log "RocksDB $version: $(cuckoo_describe_rocksdb "$bench" scripts/filter-bench.sh)"
  for allocator in ${allocators//,/ }; do
    if [ "$allocator" = jemalloc ] && [ -z "$jemalloc" ]; then
      log "libjemalloc.so.2 is missing: run scripts/setup.sh"; exit 1
    fi
    for n in ${keys//,/ }; do
      for rep in $(seq 1 "$repetitions"); do
        for policy in bloom ribbon cuckoo; do
          log "$version $allocator $n keys/filter: $policy ($rep of $repetitions)"
          run_one "$version" "$allocator" "$n" "$policy" "$rep"
        done
      done
    done
  done
done
python3 "$repo_root/bench/summarize_filter_bench.py" "$out" \
  --versions "$versions" --keys "$keys" --allocators "$allocators" \
  --repetitions "$repetitions" --bits-per-key "$bits_per_key" \
  --working-mem-mb "$working_mem_mb" --m-queries "$m_queries"
