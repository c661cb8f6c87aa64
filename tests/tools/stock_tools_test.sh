#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# RocksDB's stock db_bench, ldb and sst_dump use the cuckoo filter through an
# OPTIONS file: Debian's tools with librocksdb_cuckoo.so in LD_PRELOAD, or
# (--builtin) tools of an in-tree build (-DROCKSDB_PLUGINS=cuckoo) that know
# the policy themselves. This test asserts from the persisted OPTIONS, the SST
# properties, the SST bytes and the filter tickers that the filter was really
# written and used. With the preload it also checks that without it the same
# OPTIONS file silently loses the filter (so the checks can tell).
#
# usage: stock_tools_test.sh PATH/TO/librocksdb_cuckoo.so
#        stock_tools_test.sh --builtin TOOLS_DIR
#   TOOLS_DIR holds db_bench, ldb and sst_dump; otherwise they come from PATH.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/common.sh"

usage="usage: stock_tools_test.sh librocksdb_cuckoo.so | --builtin TOOLS_DIR"
plugin=""
if [ "${1:-}" = --builtin ]; then
  tools_dir=${2:?$usage}
  export PATH="$tools_dir:$PATH"
  unset LD_PRELOAD
  [ -x "$tools_dir/db_bench" ] || { echo "no db_bench in $tools_dir"; exit 2; }
else
  plugin=${1:?$usage}
fi
# The environment each tool runs with: the preload, or nothing.
with_plugin=()
if [ -n "$plugin" ]; then with_plugin=(LD_PRELOAD="$plugin"); fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
pass() { echo "ok: $*"; }
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }

num=20000
# An OPTIONS file as db_bench writes it, with only the filter line changed.
db_bench --benchmarks=fillseq --num=10 --db="$work/seed" >/dev/null 2>&1
sed 's/^\([[:space:]]*\)filter_policy=.*/\1filter_policy=cuckoofilter:12/' \
  "$work"/seed/OPTIONS-* >"$work/cuckoo.ini"
grep -q 'filter_policy=cuckoofilter:12' "$work/cuckoo.ini" ||
  { echo "could not prepare the OPTIONS file"; exit 1; }

run_db_bench() {  # db_path [env...]
  local db=$1
  shift
  env "$@" db_bench --options_file="$work/cuckoo.ini" --db="$db" \
    --benchmarks=fillrandom,compact,readmissing --num=$num --seed=1 \
    --statistics --bloom_bits=0 2>&1
}

output=$(run_db_bench "$work/db" "${with_plugin[@]}" ROCKSDB_CUCKOO_VERBOSE=1)
if [ -n "$plugin" ]; then
  if grep -q 'rocksdb-cuckoo: registered cuckoofilter' <<<"$output"; then
    pass "the preloaded plugin registered itself"
  else
    fail "no registration message from the preloaded plugin"
  fi
elif [ "$(ldd "$(command -v db_bench)" | grep -c rocksdb_cuckoo)" -eq 0 ] &&
  nm -D --defined-only "$(ldd "$(command -v db_bench)" |
    awk '$1 ~ /^librocksdb\.so/ { print $3 }')" | grep -c ' cuckoo_filter_register$' >/dev/null; then
  pass "db_bench has no preload and its librocksdb defines cuckoo_filter_register"
else
  fail "db_bench of the in-tree build does not carry the plugin in its librocksdb"
fi

# The policy's properties come in no fixed order.
stored_policy=$(grep -h 'filter_policy=' "$work"/db/OPTIONS-* || true)
if [[ "$stored_policy" == *"filter_policy={id=cuckoofilter:12;"* &&
  "$stored_policy" == *";bits_per_key=12;"* ]]; then
  pass "db_bench persisted the cuckoo policy in OPTIONS"
else
  fail "OPTIONS does not name the cuckoo policy: $(grep filter_policy "$work"/db/OPTIONS-*)"
fi

properties=$(env "${with_plugin[@]}" sst_dump --file="$work/db" --show_properties 2>&1)
ssts=$(ls "$work"/db/*.sst | wc -l)
cuckoo_ssts=$(grep -c 'filter policy name: cuckoofilter' <<<"$properties" || true)
if [ "$ssts" -gt 0 ] && [ "$cuckoo_ssts" -eq "$ssts" ]; then
  pass "all $ssts SSTs were written with the cuckoo filter"
else
  fail "$cuckoo_ssts of $ssts SSTs name the cuckoo filter"
fi
if grep -aq 'fullfilter.rocksdb_cuckoo.Cuckoo' "$work"/db/*.sst; then
  pass "the SST holds the block fullfilter.rocksdb_cuckoo.Cuckoo"
else
  fail "no fullfilter.rocksdb_cuckoo.Cuckoo block in the SST"
fi

ticker() { cuckoo_ticker "bloom.filter.$1" "$output"; }
useful=$(ticker useful)
positive=$(ticker full.positive)
if [ "${useful:-0}" -gt $((num * 95 / 100)) ] && [ "${positive:-$num}" -lt $((num / 100)) ]; then
  pass "readmissing: the filter answered no for $useful of $num absent keys ($positive false positives)"
else
  fail "the filter was not used: useful=${useful:-?} full.positive=${positive:-?}"
fi
grep -q '(0 of [0-9]* found)' <<<"$output" ||
  fail "readmissing found keys it should not have"

# ldb under the preload rewrites the SSTs with the cuckoo filter and keeps it.
before=$(ls "$work"/db/*.sst)
env "${with_plugin[@]}" ldb --db="$work/db" compact >/dev/null 2>&1
after=$(ls "$work"/db/*.sst)
if [ "$before" != "$after" ] &&
  [ "$(env "${with_plugin[@]}" sst_dump --file="$work/db" --show_properties 2>&1 |
    grep -c 'filter policy name: cuckoofilter')" -eq "$(ls "$work"/db/*.sst | wc -l)" ]; then
  pass "ldb compact rewrote the SSTs with the cuckoo filter"
else
  fail "ldb compact did not rewrite the SSTs with the cuckoo filter"
fi
latest_options=$(ls "$work"/db/OPTIONS-* | sort | tail -n 1)
if grep -q 'filter_policy={id=cuckoofilter' "$latest_options"; then
  pass "ldb kept the policy in $(basename "$latest_options")"
else
  fail "ldb rewrote OPTIONS without the policy"
fi
count=$(env "${with_plugin[@]}" ldb --db="$work/db" scan 2>/dev/null | wc -l)
if [ "$count" -gt $((num / 2)) ]; then
  pass "ldb scan reads $count keys"
else
  fail "ldb scan read $count keys"
fi

# Control: without the preload the same OPTIONS file silently means no filter.
if [ -n "$plugin" ]; then
  run_db_bench "$work/plain" >/dev/null
  if grep -q 'filter_policy=nullptr' "$work"/plain/OPTIONS-*; then
    pass "control: without the plugin db_bench silently ran without a filter"
  else
    fail "control: expected the silent fallback to filter_policy=nullptr"
  fi
fi

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all stock-tool checks passed"
