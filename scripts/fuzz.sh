#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# Builds the libFuzzer targets (clang, AddressSanitizer, UndefinedBehavior-
# Sanitizer) in build-fuzz and runs each for a bounded time, starting from the
# seed corpora in tests/fuzz/corpus, two targets at a time. A crash, a
# sanitizer report or a failed check stops the run with the reproducer saved
# in build-fuzz/artifacts.
#
# usage: scripts/fuzz.sh [SECONDS_PER_TARGET]    (default 60)
#        scripts/fuzz.sh --seed-corpus           (rewrites tests/fuzz/corpus)
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
repo_root=$cuckoo_repo_root
build_dir=${BUILD_DIR:-$repo_root/build-fuzz}
seconds=60
seed_corpus=""
case "${1:-}" in
  --seed-corpus) seed_corpus=1 ;;
  "") ;;
  *) seconds=$1 ;;
esac

targets=(filter_block_reader filter_builder cuckoo_filter_ops deserialize cf_record)
cuckoo_configure_and_build "$build_dir" -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUCKOO_BUILD_FUZZERS=ON \
  -DCUCKOO_BUILD_TESTS=OFF -DCUCKOO_BUILD_BENCH=OFF \
  -DCUCKOO_SANITIZE=address,undefined \
  --targets make_seed_corpus "${targets[@]/%/_fuzzer}"

if [ -n "$seed_corpus" ]; then
  rm -rf "$repo_root/tests/fuzz/corpus"
  "$build_dir/tests/fuzz/make_seed_corpus" "$repo_root/tests/fuzz/corpus"
  echo "wrote tests/fuzz/corpus"
  exit 0
fi

mkdir -p "$build_dir/artifacts"
# One target: its log, and 0 when it ran the time out with no finding.
run_target() {
  local target=$1 corpus="$build_dir/corpus/$1"
  mkdir -p "$corpus"
  ASAN_OPTIONS=detect_leaks=1 "$build_dir/tests/fuzz/${target}_fuzzer" \
    -max_total_time="$seconds" -print_final_stats=1 -rss_limit_mb=4096 \
    -artifact_prefix="$build_dir/artifacts/$target-" \
    "$corpus" "$repo_root/tests/fuzz/corpus/$target" >"$build_dir/$target.log" 2>&1
}
# Two targets at a time, one per core: each fuzzer is one process.
failed=0
for ((first = 0; first < ${#targets[@]}; first += 2)); do
  pair=("${targets[@]:first:2}")
  pids=()
  for target in "${pair[@]}"; do
    run_target "$target" &
    pids+=($!)
  done
  for i in "${!pair[@]}"; do
    target=${pair[$i]}
    log="$build_dir/$target.log"
    if ! wait "${pids[$i]}"; then
      tail -n 40 "$log"
      echo "fuzz: $target FAILED (log: $log)"
      failed=1
      continue
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    coverage=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
    echo "fuzz: $target passed: $runs executions in ${seconds}s, $coverage"
  done
  [ "$failed" = 0 ] || exit 1
done
