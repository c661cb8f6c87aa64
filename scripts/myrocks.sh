#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# MyRocks, as Debian 12 ships it, with the cuckoo filter against its own
# Bloom filter at the same bits per key: sysbench's oltp_point_select on a
# table of which half the ids are absent, in mariadbd with the MyRocks
# preload (myrocks/). Installs mariadb-server, mariadb-plugin-rocksdb and
# sysbench from Debian, and builds the preload (cmake -S myrocks).
#
# Each filter gets a database of its own: sysbench prepares ROWS rows, every
# even id is deleted, and the memtable is flushed and the column family
# compacted, so that the table is one sorted run whose filters hold the odd
# ids; a point select of an even id is then a lookup of an absent key inside
# the files' key range, which only the filter can answer without reading a
# data block. Each repetition starts a fresh mariadbd for each filter, in
# alternating order, with an 8 MiB block cache (so that data blocks are read
# from the file system; filters and indexes stay in memory) and runs `sysbench oltp_point_select --rand-type=uniform` over all
# ROWS ids. Then it checks that every stored row is found, by a full count
# and by a primary-key lookup of every id.
#
# usage: scripts/myrocks.sh [--rows N] [--repetitions R] [--time SECONDS]
#                           [--threads T] [--bits-per-key B] [--out FILE]
#   defaults: 1000000 rows, 5 repetitions, 20 s a run, 2 threads, 10 bits
#   --out FILE also writes the tables to FILE, and each run's counters to
#              FILE.runs
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "$cuckoo_repo_root/scripts/lib/mariadb.sh"
repo_root=$cuckoo_repo_root
usage="usage: scripts/myrocks.sh [--rows N] [--repetitions R] [--time SECONDS] [--threads T] [--bits-per-key B] [--out FILE]"
rows=1000000
repetitions=5
seconds=20
threads=2
bits=10
out=""
while (($#)); do
  case "$1" in
    --rows) rows=${2:?$usage} ;;
    --repetitions) repetitions=${2:?$usage} ;;
    --time) seconds=${2:?$usage} ;;
    --threads) threads=${2:?$usage} ;;
    --bits-per-key) bits=${2:?$usage} ;;
    --out) out=${2:?$usage} ;;
    *) die "$usage" ;;
  esac
  shift 2
done
for value in "$rows" "$repetitions" "$seconds" "$threads" "$bits"; do
  [[ "$value" =~ ^[1-9][0-9]*$ ]] || die "'$value' is not a positive integer; $usage"
done

mariadb_install_packages myrocks sysbench cmake g++ pkgconf libxxhash-dev
build_dir=$repo_root/build-myrocks
log "building the MyRocks preload in $build_dir"
cmake -S "$repo_root/myrocks" -B "$build_dir" \
  ${cuckoo_ccache:+-DCMAKE_CXX_COMPILER_LAUNCHER=$cuckoo_ccache} >&2
cmake --build "$build_dir" -j2 >&2
preload=$build_dir/librocksdb_cuckoo_myrocks.so

work=$(mktemp -d)
trap 'for f in cuckoo bloom; do mariadb_stop "$work/$f"; done; rm -rf "$work"' EXIT
declare -A cf_options=(
  [cuckoo]="block_based_table_factory={filter_policy=cuckoofilter:$bits}"
  [bloom]="block_based_table_factory={filter_policy=bloomfilter:$bits:false}")
# Filters and indexes held by their files' readers, not in the 8 MiB block
# cache (MyRocks' default puts them there): in so small a cache every
# filter block would be evicted by the data blocks and read again, and the
# run would time those reads, not the filters.
server_options=(rocksdb_block_cache_size=8M rocksdb_cache_index_and_filter_blocks=0
  max_connections=64)
sysbench_args=(oltp_point_select --db-driver=mysql --mysql-user=root
  --mysql-db=sbtest --mysql_storage_engine=rocksdb --tables=1
  --table-size="$rows" --rand-type=uniform)

start() {  # filter
  mariadb_start "$work/$1" "${cf_options[$1]}" "$preload" "${server_options[@]}" ||
    die "mariadbd ($1) did not start: $(tail -n 5 "$work/$1/err.log")"
  mariadb_rocksdb_loaded "$work/$1" ||
    die "the ROCKSDB engine did not load ($1): $(tail -n 5 "$work/$1/err.log")"
}
counters() {  # filter: the tickers a run reads, as name=value
  mariadb_sql "$work/$1" "show global status where variable_name in
    ('Rocksdb_bloom_filter_useful', 'Rocksdb_bloom_filter_full_positive',
     'Rocksdb_bloom_filter_full_true_positive',
     'Rocksdb_block_cache_data_miss', 'Rocksdb_block_cache_filter_miss',
     'Rocksdb_block_cache_index_miss')" |
    awk '{ printf "%s=%s ", $1, $2 } END { print "" }'
}

for filter in cuckoo bloom; do
  log "preparing $rows rows with ${cf_options[$filter]}"
  mariadb_init "$work/$filter"
  start "$filter"
  mariadb_sql "$work/$filter" "create database sbtest"
  sysbench "${sysbench_args[@]}" --mysql-socket="$work/$filter/sock" prepare >/dev/null
  mariadb_sql "$work/$filter" "set session rocksdb_max_row_locks = 1073741824;
    delete from sbtest.sbtest1 where id % 2 = 0;
    set global rocksdb_force_flush_memtable_now = 1;
    set global rocksdb_compact_cf = 'default';"
  echo "$filter filter_bytes=$(mariadb_sql "$work/$filter" "select sum(filter_block_size) \
    from information_schema.ROCKSDB_SST_PROPS where column_family = 0") \
    entries=$(mariadb_sql "$work/$filter" "select sum(entries) \
    from information_schema.ROCKSDB_SST_PROPS where column_family = 0") \
    policy=$(mariadb_sql "$work/$filter" "select group_concat(distinct filter_policy) \
    from information_schema.ROCKSDB_SST_PROPS where column_family = 0")" >>"$work/files"
  mariadb_stop "$work/$filter"
done

for repetition in $(seq "$repetitions"); do
  order=(cuckoo bloom)
  ((repetition % 2)) || order=(bloom cuckoo)
  for filter in "${order[@]}"; do
    log "repetition $repetition: $filter"
    start "$filter"
    before=$(counters "$filter")
    qps=$(sysbench "${sysbench_args[@]}" --mysql-socket="$work/$filter/sock" \
      --threads="$threads" --time="$seconds" run |
      sed -n 's/^ *queries: *[0-9]* *(\([0-9.]*\) per sec.)/\1/p')
    after=$(counters "$filter")
    echo "$repetition $filter qps=$qps before: $before after: $after" >>"$work/runs"
    mariadb_stop "$work/$filter"
  done
done

for filter in cuckoo bloom; do
  start "$filter"
  echo "$filter count=$(mariadb_sql "$work/$filter" "select count(*) from sbtest.sbtest1") \
    found=$(mariadb_sql "$work/$filter" "select count(*) from sbtest.seq_1_to_$rows s \
      straight_join sbtest.sbtest1 t on t.id = s.seq")" >>"$work/checks"
  mariadb_stop "$work/$filter"
done

report() {
  echo "MariaDB $(mariadbd --version | awk '{print $3}') (Debian's mariadbd and ha_rocksdb.so, RocksDB 6.29.5 inside), sysbench $(sysbench --version | awk '{print $2}'), the preload from this tree ($(git -C "$repo_root" rev-parse --short HEAD 2>/dev/null || echo "no git")), Release; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores; glibc malloc."
  echo
  /usr/bin/python3 - "$work" "$rows" "$repetitions" "$seconds" "$threads" "$bits" <<'PYEOF'
import statistics, sys
work, rows, reps, seconds, threads, bits = sys.argv[1], *map(int, sys.argv[2:])
def fields(text):
    return {k: float(v) for k, v in (f.split("=") for f in text.split())}
files = {}
for line in open(f"{work}/files"):
    name, rest = line.split(" ", 1)
    files[name] = dict(f.split("=") for f in rest.split())
checks = {}
for line in open(f"{work}/checks"):
    name, rest = line.split(" ", 1)
    checks[name] = {k: int(v) for k, v in (f.split("=") for f in rest.split())}
runs = {"cuckoo": {}, "bloom": {}}
for line in open(f"{work}/runs"):
    head, rest = line.split(" before: ")
    before, after = rest.split(" after: ")
    rep, name, qps = head.split()
    b, a = fields(before), fields(after)
    d = {k: a[k] - b[k] for k in a}
    queries = float(qps.split("=")[1]) * seconds
    absent = d["Rocksdb_bloom_filter_useful"] + d["Rocksdb_bloom_filter_full_positive"] - d["Rocksdb_bloom_filter_full_true_positive"]
    runs[name][int(rep)] = {
        "qps": float(qps.split("=")[1]),
        "fp": (d["Rocksdb_bloom_filter_full_positive"] - d["Rocksdb_bloom_filter_full_true_positive"]) / absent * 1000,
        "reads": d["Rocksdb_block_cache_data_miss"] / queries * 1000,
    }
def cell(values, fmt):
    return fmt.format(statistics.median(values))
def ratio(key):
    r = sorted(runs["cuckoo"][i][key] / runs["bloom"][i][key] for i in runs["cuckoo"] if runs["bloom"][i][key] > 0)
    return f"{statistics.median(r):.2f} [{r[0]:.2f}–{r[-1]:.2f}]" if r else "–"
print(f"{rows:,} rows prepared, the even ids deleted ({rows // 2:,} rows stored), one compacted run; "
      f"{reps} paired repetitions of {seconds} s, {threads} sysbench threads, a fresh mariadbd for each run "
      f"with an 8 MiB block cache for data blocks (filters and indexes held outside it: "
      f"rocksdb_cache_index_and_filter_blocks=0); medians, and ratios cuckoo / bloom as median [range].")
print()
print(f"| | cuckoofilter:{bits} | bloomfilter:{bits}:false | cuckoo / bloom |")
print("|---|---|---|---|")
fb = {n: int(files[n]["filter_bytes"]) for n in files}
ent = {n: int(files[n]["entries"]) for n in files}
print(f"| filter bytes (bits per entry) | {fb['cuckoo']:,} ({fb['cuckoo']*8/ent['cuckoo']:.2f}) | {fb['bloom']:,} ({fb['bloom']*8/ent['bloom']:.2f}) | {fb['cuckoo']/fb['bloom']:.3f} |")
print(f"| SST filter policy | {files['cuckoo']['policy']} | {files['bloom']['policy']} | |")
print(f"| point selects/s | {cell([r['qps'] for r in runs['cuckoo'].values()], '{:,.0f}')} | {cell([r['qps'] for r in runs['bloom'].values()], '{:,.0f}')} | {ratio('qps')} |")
print(f"| absent-key lookups the filter passed, per 1,000 | {cell([r['fp'] for r in runs['cuckoo'].values()], '{:.2f}')} | {cell([r['fp'] for r in runs['bloom'].values()], '{:.2f}')} | {ratio('fp')} |")
print(f"| data blocks read from storage, per 1,000 selects | {cell([r['reads'] for r in runs['cuckoo'].values()], '{:.1f}')} | {cell([r['reads'] for r in runs['bloom'].values()], '{:.1f}')} | {ratio('reads')} |")
missing = {n: rows // 2 - checks[n]["found"] for n in checks}
print(f"| rows stored / counted / found one by one | {rows//2:,} / {checks['cuckoo']['count']:,} / {checks['cuckoo']['found']:,} | {rows//2:,} / {checks['bloom']['count']:,} / {checks['bloom']['found']:,} | missing: {missing['cuckoo']} / {missing['bloom']} |")
if any(checks[n]["count"] != rows // 2 or checks[n]["found"] != rows // 2 for n in checks):
    print("\nROWS ARE MISSING", file=sys.stderr)
    sys.exit(1)
PYEOF
}
if [ -n "$out" ]; then
  report | tee "$out"
  cat "$work/files" "$work/runs" "$work/checks" >"$out.runs"
else
  report
fi
