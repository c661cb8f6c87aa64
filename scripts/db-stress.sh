#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# RocksDB's own stress test with the cuckoo filter: the db_stress of a RocksDB
# release built from source with the plugin in-tree
# (scripts/build-rocksdb.sh --in-tree, so no preload), and OPTIONS files that
# name cuckoofilter (db_stress takes a custom policy only through
# --options_file). db_stress checks every read against its expected state, so
# a false negative of the filter is a verification failure. Four variants:
# full filters, partitioned filters, a prefix extractor with whole-key
# filtering, and prefixes only. Each runs with verification on, then in a
# crash-recovery loop: killed (SIGKILL) at random points, reopened, verified.
#
# usage: scripts/db-stress.sh [--short] [VERSION]    (default 11.8.1)
#   default: 10^6 operations per variant and 5 kills;
#   --short: 10^5 operations and 2 kills (what CI runs).
#   Prints one line per variant and phase; exit status 1 on any failure.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

repo_root=$cuckoo_repo_root
ops=1000000
kills=5
if [ "${1:-}" = "--short" ]; then
  ops=100000
  kills=2
  shift
fi
version=${1:-11.8.1}
threads=4

rocksdb=$("$repo_root/scripts/build-rocksdb.sh" --in-tree "$version")
[ -x "$rocksdb/db_stress" ] || { log "no db_stress in $rocksdb"; exit 1; }

work=$(mktemp -d)
trap 'pkill -KILL -P $$ db_stress 2>/dev/null || true; rm -rf "$work"' EXIT
unset LD_PRELOAD

# Flags every run shares: no fault injection (a Release db_stress refuses
# it), no column-family clearing (db_stress's expected state cannot follow
# it), frequent flushes and compactions so that reads meet many filters.
common=(--threads=$threads --max_key=100000 --column_families=1
  --read_fault_one_in=0 --write_fault_one_in=0 --metadata_read_fault_one_in=0
  --metadata_write_fault_one_in=0 --open_metadata_read_fault_one_in=0
  --open_metadata_write_fault_one_in=0 --open_read_fault_one_in=0
  --open_write_fault_one_in=0 --secondary_cache_fault_one_in=0
  --clear_column_family_one_in=0 --flush_one_in=1000 --compact_range_one_in=5000
  --readpercent=45 --prefixpercent=10 --writepercent=30 --delpercent=5
  --iterpercent=10 --delrangepercent=0 --nooverwritepercent=20
  --verify_db_one_in=20000 --reopen=0 --write_buffer_size=262144
  --target_file_size_base=262144 --max_bytes_for_level_base=1048576)

# The OPTIONS file db_stress writes for these flags, with the filter changed.
"$rocksdb/db_stress" "${common[@]}" --ops_per_thread=10 --db="$work/seed" \
  --expected_values_dir="$work/seed-expected" >"$work/seed.log" 2>&1 || {
  tail -n 20 "$work/seed.log" >&2
  log "db_stress failed to write its OPTIONS file"
  exit 1
}
seed_options=$(ls "$work"/seed/OPTIONS-* | sort | tail -n 1)
variants=(full partitioned prefix-and-whole-keys prefixes-only)
for variant in "${variants[@]}"; do
  edits=(-e 's/^\([[:space:]]*\)filter_policy=.*/\1filter_policy=cuckoofilter:10/')
  case "$variant" in
    partitioned)
      edits+=(-e 's/^\([[:space:]]*\)partition_filters=.*/\1partition_filters=true/'
        -e 's/^\([[:space:]]*\)index_type=.*/\1index_type=kTwoLevelIndexSearch/')
      ;;
    prefix-and-whole-keys | prefixes-only)
      # db_stress's prefix scans use --prefix_size, 7 by default.
      edits+=(-e 's/^\([[:space:]]*\)prefix_extractor=.*/\1prefix_extractor=rocksdb.FixedPrefix.7/')
      if [ "$variant" = prefixes-only ]; then
        edits+=(-e 's/^\([[:space:]]*\)whole_key_filtering=.*/\1whole_key_filtering=false/')
      fi
      ;;
  esac
  sed "${edits[@]}" "$seed_options" >"$work/$variant.ini"
  grep -q 'filter_policy=cuckoofilter:10' "$work/$variant.ini" ||
    { log "could not write $variant.ini"; exit 1; }
done

stress() {  # variant db expected_dir [flags...]: runs db_stress in place
  local variant=$1 db=$2 expected=$3
  shift 3
  exec "$rocksdb/db_stress" "${common[@]}" \
    --options_file="$work/$variant.ini" --db="$db" \
    --expected_values_dir="$expected" "$@"
}

# The filter in effect: every SST of the DB names the cuckoo policy.
check_filter() {  # variant db
  local properties ssts named
  properties=$("$rocksdb/sst_dump" --file="$2" \
    --show_properties 2>/dev/null || true)
  ssts=$(ls "$2"/*.sst 2>/dev/null | wc -l)
  named=$(grep -c 'filter policy name: cuckoofilter' <<<"$properties" || true)
  if [ "$ssts" -eq 0 ] || [ "$named" -ne "$ssts" ]; then
    log "$1: $named of $ssts SSTs carry the cuckoo filter"
    return 1
  fi
  echo "$ssts"
}

# Lookups and seeks the filters answered "no", from db_stress's statistics.
filter_answers() {
  awk '/^rocksdb\.(bloom\.filter\.useful|bloom\.filter\.prefix\.useful|last\.level\.seek\.filtered|non\.last\.level\.seek\.filtered) COUNT/ { n += $NF }
       END { print n + 0 }' <(tr '\r' '\n' <"$1")
}

# The end of a db_stress log, without its carriage-return progress counter.
show_log() { tr '\r' '\n' <"$1" | grep -v '^ *\.\.\. finished [0-9]* ops *$' | tail -n 30; }

failures=0
for variant in "${variants[@]}"; do
  db="$work/db-$variant"
  expected="$work/expected-$variant"
  mkdir -p "$expected"
  started=$(date +%s)
  if (stress "$variant" "$db" "$expected" --ops_per_thread=$((ops / threads)) \
    --statistics=1) >"$work/$variant.log" 2>&1 &&
    grep -q 'Verification successful' "$work/$variant.log" &&
    ssts=$(check_filter "$variant" "$db") &&
    filtered=$(filter_answers "$work/$variant.log") && [ "$filtered" -gt 0 ]; then
    echo "db_stress $variant: $ops operations, verification successful; the filter answered $filtered lookups; $ssts SSTs with cuckoo filters ($(($(date +%s) - started)) s)"
  else
    show_log "$work/$variant.log"
    echo "db_stress $variant: FAILED (log above)"
    failures=$((failures + 1))
    continue
  fi

  # Crash recovery: kill at a random point, reopen on the same DB and
  # expected state (db_stress verifies the whole DB when it opens), repeat.
  crash_failures=0
  verified_reopens=0
  for kill_round in $(seq 1 "$kills"); do
    # The subshell becomes db_stress itself (exec), so $! is its pid.
    (stress "$variant" "$db" "$expected" --destroy_db_initially=0 \
      --ops_per_thread=100000000) >"$work/$variant-crash.log" 2>&1 &
    pid=$!
    sleep $((3 + RANDOM % 6))
    if ! kill -0 "$pid" 2>/dev/null; then
      show_log "$work/$variant-crash.log"
      echo "db_stress $variant: ended before the kill in round $kill_round"
      crash_failures=$((crash_failures + 1))
      break
    fi
    kill -KILL "$pid"
    wait "$pid" 2>/dev/null || true
    if grep -q 'Verification failed\|verification failed\|Corruption' "$work/$variant-crash.log"; then
      show_log "$work/$variant-crash.log"
      crash_failures=$((crash_failures + 1))
      break
    fi
    # Each reopen after the first kill starts by verifying the whole DB.
    if [ "$kill_round" -gt 1 ] &&
      grep -q 'Crash-recovery verification passed' "$work/$variant-crash.log"; then
      verified_reopens=$((verified_reopens + 1))
    fi
  done
  # After the last kill: reopen, verify, run a few operations, verify.
  if [ "$crash_failures" -eq 0 ] &&
    (stress "$variant" "$db" "$expected" --destroy_db_initially=0 \
      --ops_per_thread=10000) >"$work/$variant-final.log" 2>&1 &&
    grep -q 'Crash-recovery verification passed' "$work/$variant-final.log" &&
    grep -q 'Verification successful' "$work/$variant-final.log"; then
    verified_reopens=$((verified_reopens + 1))
    echo "db_stress $variant: $kills kills at random points; $verified_reopens of $kills reopens verified the whole DB (passed), then verification successful"
  else
    [ -f "$work/$variant-final.log" ] && show_log "$work/$variant-final.log"
    echo "db_stress $variant: crash recovery FAILED"
    failures=$((failures + 1))
  fi
done
[ "$failures" -eq 0 ] || die "$failures variant(s) failed"
echo "db-stress: all ${#variants[@]} variants passed with zero verification failures"
