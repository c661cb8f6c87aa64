#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# Regenerates bench/RESULTS.md from one full run of the project's benchmarks
# on this machine: the DB comparison's --full preset (both regimes, the
# equal-FPR view), the micro-benchmarks (5 interleaved repetitions), stock
# db_bench in the I/O-bound regime, a soak run, RocksDB's own filter_bench
# (scripts/filter-bench.sh, 7.8.3 and 11.8.1), the dynamic filter against
# its peers (scripts/peers-bench.sh), the CF module against RedisBloom
# (scripts/redis-bench.sh), and the Java library against RocksJava's Bloom
# filter (scripts/java-bench.sh). Every table in the file is the
# verbatim output of a command it names, and the charts are copied next to
# it (bench/results/). About 75 minutes on 2 cores; run it on a quiet
# machine.
#
# usage: scripts/results.sh [--release [VERSION]] [--peers-dir DIR] [OUTPUT]
#   --release    every benchmark against the Release RocksDB of VERSION
#                (scripts/build-rocksdb.sh --release; default: the installed
#                version) instead of Debian's library, which has assertions
#                on. bench/RESULTS.md is written with --release 11.8.1.
#   --peers-dir  where scripts/peers-bench.sh and scripts/redis-bench.sh
#                find the peers' git repositories (default: they clone them
#                from GitHub)
#   OUTPUT       default: bench/RESULTS.md
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
repo_root=$cuckoo_repo_root
build_dir=${BUILD_DIR:-$repo_root/build}
release_flags=()
if cuckoo_release_flag "$@"; then
  release_flags=("${@:1:cuckoo_flag_words}")
  shift "$cuckoo_flag_words"
fi
peers_flags=()
if [ "${1:-}" = "--peers-dir" ]; then
  peers_flags=(--peers-dir "${2:?usage: scripts/results.sh [--release [VERSION]] [--peers-dir DIR] [OUTPUT]}")
  shift 2
fi
output=${1:-$repo_root/bench/RESULTS.md}
charts_dir=$(dirname "$output")/results
cuckoo_setup
cuckoo_build_for_run "$build_dir" "$cuckoo_release" "$cuckoo_release_version" \
  filter_compare filter_micro_bench soak rocksdb_cuckoo
run_build_dir=$cuckoo_run_build_dir
rocksdb_build=$(cuckoo_describe_rocksdb "$run_build_dir/bench/filter_compare" \
  scripts/results.sh)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
step() {  # name command...: runs a command, keeps its standard output
  local name=$1
  shift
  echo "== $name: $*" >&2
  local start=$SECONDS
  "$@" >"$work/$name.md"
  echo "$name: $((SECONDS - start)) s" >>"$work/durations"
}

step compare "$repo_root/scripts/compare.sh" ${release_flags[@]+"${release_flags[@]}"} --full
step micro "$repo_root/scripts/micro-bench.sh" ${release_flags[@]+"${release_flags[@]}"}
step stock "$repo_root/scripts/stock-db-bench-compare.sh" \
  ${release_flags[@]+"${release_flags[@]}"} --io 500000 50000
step soak "$run_build_dir/bench/soak" --total_keys=20000000 \
  --keys_per_filter=10000000 --bits_per_key=10,16
step filterbench "$repo_root/scripts/filter-bench.sh"
step peers "$repo_root/scripts/peers-bench.sh" ${peers_flags[@]+"${peers_flags[@]}"}
step redis "$repo_root/scripts/redis-bench.sh" ${peers_flags[@]+"${peers_flags[@]}"}
java_bench() {  # each release the jar is built for, against Bloom and A/A
  local release control
  for release in 10.1.3 frocksdb-8.10.0; do
    for control in "" --control; do
      "$repo_root/scripts/java-bench.sh" "$release" --reps 11 --lookups 1000000 $control
      echo
    done
  done
}
step java java_bench

mkdir -p "$charts_dir"
for chart in fpr storage-reads throughput-memory throughput-io; do
  cp "$run_build_dir/compare-$chart.png" "$charts_dir/compare-$chart.png"
done
flags_text=${release_flags[*]+"${release_flags[*]} "}

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
memory=$(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)
avx512=$(grep -c -m 1 avx512f /proc/cpuinfo || true)
{
  cat <<EOF
# Results

Written by \`scripts/results.sh\` on $(date -u +%Y-%m-%d), from one run of the commands below on one
machine. Every figure of a filter is a ratio to the built-in Bloom filter measured in the same run; the
machine is shared, so read the ratios and their intervals, not the absolute numbers.

## The machine

- $(nproc) CPUs: $cpu$([ "$avx512" -gt 0 ] && echo ", with AVX-512"); $memory of memory;
  kernel $(uname -r); $(. /etc/os-release && echo "$PRETTY_NAME").
- RocksDB: $rocksdb_build. The plugin and the benchmarks: \`Release\`, $(g++ --version | head -n 1).
- Durations of this run: $(paste -sd ';' "$work/durations" | sed 's/;/; /g').

## Commands

\`\`\`sh
scripts/compare.sh ${flags_text}--full
scripts/micro-bench.sh${flags_text:+ ${flags_text% }}
scripts/stock-db-bench-compare.sh ${flags_text}--io 500000 50000
${run_build_dir#"$repo_root"/}/bench/soak --total_keys=20000000 --keys_per_filter=10000000 --bits_per_key=10,16
scripts/filter-bench.sh
scripts/peers-bench.sh
scripts/redis-bench.sh
scripts/java-bench.sh RELEASE --reps 11 --lookups 1000000 [--control]   # 10.1.3, frocksdb-8.10.0
\`\`\`

## The DB comparison (\`scripts/compare.sh ${flags_text}--full\`)

How to read it: each policy has its own DB with the same LSM shape (verified), and both regimes read
all of them round-robin, in a shuffled order per workload and repetition. "× Bloom" is the median of
the ratios paired by repetition, with their range; with 7 repetitions the range covers the true median
ratio with 98% probability. "within noise" marks a range that holds 1.0. Storage reads count the data
blocks read from storage (direct I/O): in the I/O-bound regime they are what a false positive costs.

![FPR against bits per key](results/compare-fpr.png)
![storage reads per 1000 absent lookups](results/compare-storage-reads.png)
![throughput in memory](results/compare-throughput-memory.png)
![throughput, I/O-bound](results/compare-throughput-io.png)

EOF
  cat "$work/compare.md"
  cat <<EOF

## Micro-benchmarks (\`scripts/micro-bench.sh${flags_text:+ ${flags_text% }}\`)

The filters through RocksDB's FilterBitsBuilder/FilterBitsReader, without a DB. Times are nanoseconds
per key. \`construct_verified\` builds under \`detect_filter_construct_corruption\`, post-verification
included.

EOF
  cat "$work/micro.md"
  cat <<EOF

## Stock db_bench, I/O-bound (\`scripts/stock-db-bench-compare.sh ${flags_text}--io 500000 50000\`)

The stock db_bench of the RocksDB above with the plugin preloaded, one OPTIONS file per filter, direct
reads and a 4 MiB block cache, on one fully compacted level. Single runs: its ops/s are noisier than
the comparison's.

EOF
  cat "$work/stock.md"
  cat <<'EOF'

## Soak (`bench/soak`)

Every added key probed (a false negative fails the run); absent keys measure the FPR.

EOF
  cat "$work/soak.md"
  cat <<'EOF'

## RocksDB's own filter benchmark (`scripts/filter-bench.sh`)

RocksDB's `util/filter_bench` of each version, with the project's `-filter_policy` flag
(`scripts/lib/filter-bench-policy.pl`), built against that version's Release library; every run a fresh
process with the plugin preloaded, under glibc's malloc as it comes (no tunables, nothing settled) and
under jemalloc (preloaded). Build times include filter_bench's own key generation and reader set-up,
the same for every policy. Query times are filter_bench's net ns/op of its mixed queries (half
present).

EOF
  cat "$work/filterbench.md"
  cat <<'EOF'

## The dynamic filter and its peers (`scripts/peers-bench.sh`)

The dynamic filter against efficient/cuckoofilter (the paper's reference), fastfilter_cpp and
RedisBloom's cuckoo.c, built outside the repository at pinned commits with the same flags, on the same
keys, table sizes and loads in one process. Here the ratios are to each peer, not to Bloom: above 1,
ours is faster.

No RocksDB is involved: the dynamic filter is the core library alone, compiled with the peers into one
binary at -O3 -DNDEBUG. The figures are throughput only; no memory figure depends on the allocator
here (each table is one allocation of the same size on both sides, the KiB column).

EOF
  cat "$work/peers.md"
  cat <<'EOF'

## The CF module against RedisBloom (`scripts/redis-bench.sh`)

The CF module (`module/`) and RedisBloom, built outside the repository at a pinned release, each
loaded into a fresh Debian 12 redis-server of the same binary on 127.0.0.1: `CF.ADD`, `CF.EXISTS`
and `CF.MEXISTS` of 100 items on a filter of 10^8 under `redis-benchmark`, and the memory and false
positives of `CF.RESERVE key 1000000` empty, half full, full and after RedisBloom's expansions.
Ratios are ours / RedisBloom.

EOF
  cat "$work/redis.md"
  cat <<'EOF'

## From Java: CuckooFilter against BloomFilter (`scripts/java-bench.sh`)

The Java library's `CuckooFilter` and RocksJava's `BloomFilter` at 10 bits per key, each in a DB of its
own in one JVM, against the stock rocksdbjni of the release built as Maven's is (Kafka 4.1's 10.1.3,
Flink 2.x's FRocksDB 8.10.0): a Release build (`-O2 -DNDEBUG`, no RTTI), under glibc's malloc as the
JVM process has it. Each DB holds the same million keys in one compacted file, with a block
cache that holds all of it, so that the figures are the read path's CPU cost. Each repetition times
both DBs in alternating order on the same keys, by the measuring thread's CPU time. The control runs
put a `BloomFilter` in both DBs: what their ratios show is the bias between the two DBs, not a filter.

EOF
  cat "$work/java.md"
} >"$output"
echo "wrote $output and $charts_dir/" >&2
