#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# The comparison with the field's own tool: Debian's stock db_bench (or the
# Release one of scripts/build-rocksdb.sh --release), the cuckoo policy loaded
# with LD_PRELOAD, and one OPTIONS file per filter that differs from the
# others only in its filter_policy line. One DB is filled once and copied per
# filter; each copy's filters are rewritten by db_bench's "compact", and the
# script checks from the persisted OPTIONS and sst_dump that the intended
# filter is really there before reading.
#
# With --io the OPTIONS files also set the I/O-bound regime of
# scripts/compare.sh: direct reads (and direct I/O for flush and
# compaction), every table reader open with its filter and index
# (max_open_files=-1), and a block cache of 4 MiB (db_bench's --cache_size),
# much smaller than the data. The table then also gives the data blocks
# read from storage per 1000 lookups (db_bench's statistics ticker
# rocksdb.block.cache.data.miss), which is what a lower FPR saves. The DB
# here is one fully compacted level; scripts/compare.sh measures a
# multi-level LSM.
#
# usage: scripts/stock-db-bench-compare.sh [--release [VERSION]] [--io] [NUM [READS]]
#   --release  the db_bench and sst_dump of scripts/build-rocksdb.sh --release
#              of VERSION (default: the installed one), with the plugin built
#              against that version
#   defaults: NUM=1000000 keys, READS=NUM; prints a Markdown table.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
repo_root=$cuckoo_repo_root
build_dir=${BUILD_DIR:-$repo_root/build}
db_bench=db_bench
sst_dump=sst_dump
library_path=""
cuckoo_setup
if cuckoo_release_flag "$@"; then
  shift "$cuckoo_flag_words"
  library_path=$("$repo_root/scripts/build-rocksdb.sh" --release \
    ${cuckoo_release_version:+"$cuckoo_release_version"})
  db_bench="$library_path/db_bench"
  sst_dump="$library_path/sst_dump"
fi
io=""
if [ "${1:-}" = "--io" ]; then
  shift
  io=1
fi
num=${1:-1000000}
reads=${2:-$num}

cuckoo_build_for_run "$build_dir" "$cuckoo_release" "$cuckoo_release_version" \
  rocksdb_cuckoo
plugin="$cuckoo_run_build_dir/plugin/librocksdb_cuckoo.so"

# Under build, not /tmp: direct I/O needs a file system on storage.
work=$(mktemp -d "$build_dir/stock-db-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
io_flags=()
[ -n "$io" ] && io_flags=(--cache_size=$((4 << 20)))
run() {  # options_file db benchmarks [flags...]
  local options=$1 db=$2 benchmarks=$3
  shift 3
  env LD_PRELOAD="$plugin" \
    LD_LIBRARY_PATH="$library_path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    "$db_bench" --options_file="$options" --db="$db" --benchmarks="$benchmarks" \
    --num="$num" --bloom_bits=0 --statistics "${io_flags[@]}" "$@" 2>&1
}

# OPTIONS files identical but for the filter line.
"$db_bench" --benchmarks=fillseq --num=10 --db="$work/seed" >/dev/null 2>&1 ||
  env LD_LIBRARY_PATH="$library_path" "$db_bench" --benchmarks=fillseq --num=10 \
    --db="$work/seed" >/dev/null
filters=(nullptr bloomfilter:10:false ribbonfilter:10:-1 cuckoofilter:10
  bloomfilter:16:false ribbonfilter:16:-1 cuckoofilter:16)
for filter in "${filters[@]}"; do
  sed "s/^\([[:space:]]*\)filter_policy=.*/\1filter_policy=$filter/" \
    "$work"/seed/OPTIONS-* >"$work/$filter.ini"
  if [ -n "$io" ]; then
    sed -i -e 's/^\([[:space:]]*\)use_direct_reads=.*/\1use_direct_reads=true/' \
      -e 's/^\([[:space:]]*\)use_direct_io_for_flush_and_compaction=.*/\1use_direct_io_for_flush_and_compaction=true/' \
      -e 's/^\([[:space:]]*\)max_open_files=.*/\1max_open_files=-1/' \
      -e 's/^\([[:space:]]*\)cache_index_and_filter_blocks=.*/\1cache_index_and_filter_blocks=false/' \
      "$work/$filter.ini"
    for setting in use_direct_reads=true use_direct_io_for_flush_and_compaction=true \
      max_open_files=-1 cache_index_and_filter_blocks=false; do
      grep -c "^[[:space:]]*$setting\$" "$work/$filter.ini" >/dev/null ||
        { echo "could not set $setting in the OPTIONS file" >&2; exit 1; }
    done
  fi
done

echo "filling $num keys..." >&2
run "$work/nullptr.ini" "$work/base" fillrandom --seed=1 >/dev/null

ticker() { cuckoo_ticker "bloom.filter.$1" "$2"; }
# Data blocks read from storage per 1000 lookups of a run.
reads_per_1000() {
  local misses
  misses=$(cuckoo_ticker block.cache.data.miss "$1")
  awk -v m="${misses:-0}" -v n="$reads" 'BEGIN { printf "%.1f", 1000 * m / n }'
}
ops() { sed -n "s/^$1 *:.* \([0-9]*\) ops\/sec.*/\1/p" <<<"$2"; }

if [ -n "$io" ]; then
  echo "| filter | SST bits/key | readrandom ops/s | readmissing ops/s | multireadrandom ops/s | FPR readmissing | storage reads /1000: readrandom | readmissing | multireadrandom |"
  echo "|---|---|---|---|---|---|---|---|---|"
else
  echo "| filter | SST bits/key | readrandom ops/s | readmissing ops/s | multireadrandom ops/s | FPR readmissing |"
  echo "|---|---|---|---|---|---|"
fi
for filter in "${filters[@]}"; do
  echo "[$filter]..." >&2
  db="$work/db-$filter"
  cp -a "$work/base" "$db"
  run "$work/$filter.ini" "$db" compact --use_existing_db >/dev/null
  # The intended filter, really: OPTIONS and every SST's properties.
  name=${filter%%:*}
  [ "$name" = nullptr ] && name=""
  grep -q "filter_policy=.*${filter%%:*}" "$db"/OPTIONS-* ||
    { echo "OPTIONS of $filter do not name it" >&2; exit 1; }
  props=$(env LD_LIBRARY_PATH="$library_path" "$sst_dump" --file="$db" --show_properties 2>/dev/null)
  written=$(grep -c "filter policy name: $name\$" <<<"$props" || true)
  ssts=$(ls "$db"/*.sst | wc -l)
  if [ -n "$name" ] && [ "$written" -ne "$ssts" ]; then
    echo "only $written of $ssts SSTs carry $name" >&2
    exit 1
  fi
  bits=$(awk '/filter block size:/ { bytes += $NF } /^ *# entries:/ { keys += $NF }
    END { printf "%.2f", keys ? 8 * bytes / keys : 0 }' <<<"$props")
  present=$(run "$work/$filter.ini" "$db" readrandom --use_existing_db --seed=2 --reads="$reads")
  missing=$(run "$work/$filter.ini" "$db" readmissing --use_existing_db --seed=3 --reads="$reads")
  multi=$(run "$work/$filter.ini" "$db" multireadrandom --use_existing_db --seed=4 \
    --reads="$reads" --batch_size=32 --multiread_batched=true)
  useful=$(ticker useful "$missing")
  positive=$(ticker full.positive "$missing")
  fpr="n/a"
  if [ -n "$name" ] && [ $((useful + positive)) -gt 0 ]; then
    fpr=$(awk -v p="$positive" -v u="$useful" 'BEGIN { printf "%.4f%%", 100 * p / (u + p) }')
  fi
  row="| $filter | $bits | $(ops readrandom "$present") | $(ops readmissing "$missing") | $(ops multireadrandom "$multi") | $fpr |"
  if [ -n "$io" ]; then
    row+=" $(reads_per_1000 "$present") | $(reads_per_1000 "$missing") | $(reads_per_1000 "$multi") |"
  fi
  echo "$row"
done
