#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# MyRocks end to end with the preload, in Debian's mariadbd on a socket of
# its own: the engine comes up with filter_policy=cuckoofilter:10; a table's
# SST file gets the plugin's filter block; every stored row is found by a
# full count and by per-row primary-key lookups, and the absent rows' lookups
# are answered by the filter (Rocksdb_bloom_filter_useful); so again after a
# restart, which reads the policy back from the OPTIONS file; a
# malformed cuckoofilter option keeps the engine out and says why in the
# error log; without the preload the option keeps the engine out; from the
# OPTIONS file that names the cuckoo filter, without both the rows read,
# without a filter, and (on a copy of the data) bloomfilter without the
# preload takes over once the files are compacted; with the preload,
# bloomfilter goes to MyRocks' own parser.
#
# usage: tests/myrocks/myrocks_test.sh PRELOAD [ROWS]
#   PRELOAD  librocksdb_cuckoo_myrocks.so (build-myrocks/)
#   ROWS     rows inserted, half of them deleted again (default 20000)
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/common.sh"
source "$cuckoo_repo_root/scripts/lib/mariadb.sh"
preload=$(readlink -f "${1:?usage: myrocks_test.sh PRELOAD [ROWS]}")
rows=${2:-20000}
[ -f "$preload" ] || die "no preload $preload"
command -v mariadbd >/dev/null && [ -f "$mariadb_plugin_dir/ha_rocksdb.so" ] ||
  die "needs Debian's mariadb-server and mariadb-plugin-rocksdb" \
    "(scripts/test.sh --myrocks installs them)"

# Two server folders: the second starts from a copy of the first's data.
work=$(mktemp -d)
trap 'mariadb_stop "$work/a"; mariadb_stop "$work/b"; rm -rf "$work"' EXIT
dir=$work/a
cuckoo=block_based_table_factory={filter_policy=cuckoofilter:10}
bloom=block_based_table_factory={filter_policy=bloomfilter:10:false}
failures=0
check() {  # what expected actual
  if [ "$2" = "$3" ]; then
    echo "ok: $1 ($3)"
  else
    echo "FAILED: $1: expected $2, got $3"
    failures=$((failures + 1))
  fi
}
start() {  # cf_options preload
  mariadb_start "$dir" "$1" "$2" "rocksdb_block_cache_size=8M" ||
    die "mariadbd did not start: $(tail -n 5 "$dir/err.log")"
}
useful() { mariadb_sql "$dir" "show global status like 'rocksdb_bloom_filter_useful'" | cut -f2; }
policy() {
  mariadb_sql "$dir" "select value from information_schema.ROCKSDB_CF_OPTIONS \
    where cf_name = 'default' and option_type = 'TABLE_FACTORY::FILTER_POLICY'"
}
# Stored rows by a full count, and by one primary-key lookup per id in
# 1..rows (straight_join: the ids drive, each looks up its row); the
# filter's "no" answers during those lookups.
rows_found() {
  local before after found
  before=$(useful)
  found=$(mariadb_sql "$dir" "select count(*) from test.seq_1_to_$rows s \
    straight_join test.t on t.id = s.seq")
  after=$(useful)
  echo "$(mariadb_sql "$dir" "select count(*) from test.t") $found $((after - before))"
}
# Checks rows_found: every row counted and found, and the filter's answers
# for the absent ones: "all" (at least 9 in 10, as a false-positive rate of
# 1% or less at 10 bits per key gives) or "none".
check_rows() {  # when, filter answers
  local count found filtered answered
  read -r count found filtered <<<"$(rows_found)"
  check "rows counted$1" $((rows / 2)) "$count"
  check "rows found one by one$1" $((rows / 2)) "$found"
  if [ "$2" = all ]; then
    answered=$([ "$filtered" -ge $((rows / 2 * 9 / 10)) ] && echo all || echo "$filtered")
  else
    answered=$([ "$filtered" -eq 0 ] && echo none || echo "$filtered")
  fi
  check "absent rows the filter answered$1" "$2" "$answered"
}

mariadb_init "$dir"
start "$cuckoo" "$preload"
check "the policy MyRocks reports" rocksdb_cuckoo.Cuckoo "$(policy)"
mariadb_sql "$dir" "create database if not exists test;
  create table test.t (id int primary key, v varchar(32)) engine=rocksdb;
  insert into test.t select seq, concat('value-', seq) from test.seq_1_to_$rows;
  delete from test.t where id % 2 = 0;
  set global rocksdb_force_flush_memtable_now = 1;
  set global rocksdb_compact_cf = 'default';"
check "the SST files' filter policy" rocksdb_cuckoo.Cuckoo \
  "$(mariadb_sql "$dir" "select distinct filter_policy from \
    information_schema.ROCKSDB_SST_PROPS where column_family = 0 and \
    filter_block_size > 0")"
check "the filter block's key in the SST file" yes \
  "$(grep -aqs 'fullfilter\.rocksdb_cuckoo\.Cuckoo' "$dir"/data/\#rocksdb/*.sst && echo yes || echo no)"
check_rows "" all

mariadb_stop "$dir"
start "$cuckoo" "$preload"
check_rows " after a restart" all

mariadb_stop "$dir"
start "block_based_table_factory={filter_policy=cuckoofilter:ten}" "$preload"
check "the engine with a malformed cuckoofilter option" no \
  "$(mariadb_rocksdb_loaded "$dir" && echo yes || echo no)"
check "the preload's reason in the error log" yes \
  "$(grep -q "rocksdb-cuckoo (MyRocks preload): cuckoofilter: bits_per_key 'ten' is not a number" \
    "$dir/err.log" && echo yes || echo no)"

mariadb_stop "$dir"
start "$cuckoo" ""
check "the engine with the option and without the preload" no \
  "$(mariadb_rocksdb_loaded "$dir" && echo yes || echo no)"

# The newest OPTIONS file still names rocksdb_cuckoo.Cuckoo: each way out
# starts from it.
mariadb_stop "$dir"
# (Their numbers are zero-padded: the last name is the newest.)
newest_options=$(ls "$dir"/data/\#rocksdb/OPTIONS-* | tail -n 1)
check "the policy in the newest OPTIONS file" yes \
  "$(grep -q 'filter_policy=rocksdb_cuckoo\.Cuckoo' "$newest_options" && echo yes || echo no)"
mkdir -p "$work/b"
cp -a "$work/a/data" "$work/b/data"
start "" ""
check_rows " without the preload and the option" none

mariadb_stop "$dir"
dir=$work/b
start "$bloom" ""
mariadb_sql "$dir" "set global rocksdb_compact_cf = 'default'"
check "the SST files' filter policy back on Bloom without the preload" \
  rocksdb.BuiltinBloomFilter "$(mariadb_sql "$dir" "select distinct filter_policy \
    from information_schema.ROCKSDB_SST_PROPS where column_family = 0 and \
    filter_block_size > 0")"
check_rows " back on Bloom, compacted" all

mariadb_stop "$dir"
start "$bloom" "$preload"
check "MyRocks' own policy through the preload" rocksdb.BuiltinBloomFilter "$(policy)"
check_rows " on Bloom through the preload" all

if [ "$failures" -ne 0 ]; then
  tail -n 20 "$dir/err.log" >&2
  die "$failures checks failed (the last server's log above)"
fi
echo "passed"
