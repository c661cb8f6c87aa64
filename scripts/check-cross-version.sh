#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# Cross-version reads: SST files with cuckoo filters written under one RocksDB
# release are ingested and read under another, both ways, with every key
# found, the filter in effect, and the same false positives key for key (the
# on-disk format is the same). Uses tests/tools/cross_version_sst from two
# build folders of the project, each built against one release.
#
# usage: scripts/check-cross-version.sh [OLD_BUILD NEW_BUILD [NUM_KEYS]]
#   defaults: build (Debian's 7.8.3) and build-rocksdb-11.8.1, as
#   scripts/test.sh and scripts/test.sh --rocksdb 11.8.1 leave them
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
repo_root=$cuckoo_repo_root
old_build=${1:-$repo_root/build}
new_build=${2:-$repo_root/build-rocksdb-11.8.1}
num_keys=${3:-200000}
for build in "$old_build" "$new_build"; do
  [ -x "$build/tests/cross_version_sst" ] ||
    die "no $build/tests/cross_version_sst; build it first" \
      "(scripts/test.sh, scripts/test.sh --rocksdb 11.8.1)"
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

digest() { sed -n 's/.*digest \([0-9a-f]*\)$/\1/p' <<<"$1"; }
failures=0
for direction in "$old_build $new_build" "$new_build $old_build"; do
  read -r writer reader <<<"$direction"
  file="$work/$(basename "$writer").sst"
  "$writer/tests/cross_version_sst" write "$file" "$num_keys"
  own=$("$writer/tests/cross_version_sst" read "$file" "$num_keys") || {
    echo "$own"; failures=$((failures + 1)); continue; }
  other=$("$reader/tests/cross_version_sst" read "$file" "$num_keys") || {
    echo "$other"; failures=$((failures + 1)); continue; }
  echo "  writer: $own"
  echo "  reader: $other"
  if [ "$(digest "$own")" != "$(digest "$other")" ]; then
    echo "FAILED: the two releases let different absent keys through"
    failures=$((failures + 1))
  fi
done
[ "$failures" -eq 0 ] || die "$failures direction(s) failed"
echo "check-cross-version: both directions read every key, with the filter in effect and the same false positives"
