#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# The Java library against each rocksdbjni release it is built for: for each,
# the stock jar built as Maven's is (scripts/build-rocksdbjni.sh, cached),
# the library built for it and its JUnit tests (scripts/test.sh --java); then
# each release's jar loaded beside another release's rocksdbjni, which must
# be refused with IncompatibleRocksDBException naming both, and no crash.
# One Markdown table; exit status 1 if any row failed.
#
# usage: scripts/test-java-versions.sh [RELEASE...]
#   default: 10.1.3 9.7.3 frocksdb-8.10.0 (Kafka 4.1, Kafka 4.0, Flink 2.x);
#   about an hour the first time (three rocksdbjni builds), minutes after.
#   Logs: build/java-versions-<release>.log
set -uo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
repo_root=$cuckoo_repo_root
releases=("$@")
((${#releases[@]})) || releases=(10.1.3 9.7.3 frocksdb-8.10.0)
mkdir -p "$repo_root/build"
status=0
echo "| rocksdbjni | JUnit (ctest) | minutes |"
echo "|---|---|---|"
for release in "${releases[@]}"; do
  log=$repo_root/build/java-versions-$release.log
  started=$(date +%s)
  "$repo_root/scripts/test.sh" --java "$release" >"$log" 2>&1 || status=1
  summary=$(grep -E '^[0-9]+% tests passed' "$log" | tail -n 1)
  echo "| $release | ${summary:-did not build (see $(basename "$log"))} |" \
    "$((($(date +%s) - started + 30) / 60)) |"
done

# Each jar with the next release's rocksdbjni.
echo
echo "| rocksdb-cuckoo jar for | loaded with rocksdbjni | result |"
echo "|---|---|---|"
count=${#releases[@]}
for ((i = 0; i < count && count > 1; ++i)); do
  built=${releases[i]}
  other=${releases[(i + 1) % count]}
  jar=$(ls "$repo_root/build-java-$built"/rocksdb-cuckoo-*.jar 2>/dev/null | head -n 1)
  other_jar=$("$repo_root/scripts/build-rocksdbjni.sh" "$other" 2>/dev/null)/rocksdbjni.jar
  if [ -z "$jar" ] || [ ! -f "$other_jar" ]; then
    echo "| $built | $other | not built |"
    status=1
    continue
  fi
  output=$(java -cp "$jar:$other_jar:$repo_root/build-java-$built/test-classes" \
    io.github.rocksdbcuckoo.LoadAndReportMain --real 2>&1)
  if grep -q '^refused: .*built for .* but this process runs' <<<"$output" &&
    ! grep -q '^mapped: ' <<<"$output"; then
    echo "| $built | $other | refused: $(sed -n 's/^refused: rocksdb-cuckoo.s native library was //p' <<<"$output" | cut -c1-120) |"
  else
    echo "| $built | $other | NOT REFUSED: $(head -c 300 <<<"$output" | tr '\n' ' ') |"
    status=1
  fi
done
exit "$status"
