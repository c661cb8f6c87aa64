#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# The version matrix: runs the whole suite (scripts/test.sh) against each
# RocksDB release given, Debian's installed library for its own version and
# a build from source (scripts/build-rocksdb.sh, cached) for the others, and
# prints one Markdown table of versions against results. A release that does
# not build or pass is a row that says so; the exit status is then 1.
#
# usage: scripts/test-rocksdb-versions.sh [VERSION...]
#   default: 7.8.3 9.10.0 10.10.1 11.8.1
#   output: the table on standard output and in build/rocksdb-versions.md,
#   each run's log in build/rocksdb-versions-<version>.log
set -uo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
repo_root=$cuckoo_repo_root
versions=("$@")
((${#versions[@]})) || versions=(7.8.3 9.10.0 10.10.1 11.8.1)
mkdir -p "$repo_root/build"
installed=$(dpkg-query -W -f='${Version}' librocksdb-dev 2>/dev/null || true)
installed=${installed#*:}
installed=${installed%-*}

table="$repo_root/build/rocksdb-versions.md"
{
  echo "| RocksDB | library | C++ | RTTI | suite (unit, real-DB, stock tools, package) | minutes |"
  echo "|---|---|---|---|---|---|"
} >"$table"
status=0
for version in "${versions[@]}"; do
  log="$repo_root/build/rocksdb-versions-$version.log"
  started=$(date +%s)
  if [ "$version" = "$installed" ]; then
    library="Debian's librocksdb-dev"
    build_dir="$repo_root/build"
    "$repo_root/scripts/test.sh" >"$log" 2>&1
  else
    library="built from source (Release)"
    build_dir="$repo_root/build-rocksdb-$version"
    "$repo_root/scripts/test.sh" --rocksdb "$version" >"$log" 2>&1
  fi
  result=$?
  minutes=$((($(date +%s) - started + 30) / 60))
  summary=$(grep -E '^[0-9]+% tests passed' "$log" | tail -n 1)
  [ -n "$summary" ] || summary="did not build (see $(basename "$log"))"
  [ "$result" -eq 0 ] || status=1
  standard=17
  if [ "$(printf '%s\n' 10.7.0 "$version" | sort -V | head -n 1)" = 10.7.0 ]; then
    standard=20
  fi
  rtti="?"
  plugin_library=$(ldd "$build_dir/tests/plugin_tests" 2>/dev/null | awk '/librocksdb/ {print $3}')
  if [ -n "$plugin_library" ]; then
    # grep -c reads all of nm's output (grep -q would end nm with SIGPIPE).
    typeinfo=$(nm -D --defined-only "$plugin_library" | grep -c _ZTIN7rocksdb12FilterPolicyE)
    rtti=no
    [ "$typeinfo" -gt 0 ] && rtti=yes
  fi
  echo "| $version | $library | $standard | $rtti | $summary | $minutes |" >>"$table"
  echo "test-rocksdb-versions: $version: $summary" >&2
done
cat "$table"
exit "$status"
