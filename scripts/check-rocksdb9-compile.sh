#!/usr/bin/env bash
# Compile-only check against RocksDB 9.x: fetches the headers of Debian
# trixie's rocksdb 9.10 source package (pinned sha256) and compiles the
# plugin's sources and its builder/reader tests against them, with the
# project's warnings. Nothing is linked: Debian 12 has no 9.x library.
#
# usage: scripts/check-rocksdb9-compile.sh [BUILD_DIR]    (default: build)
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${1:-$repo_root/build}
tree=$("$repo_root/scripts/fetch-rocksdb-source.sh" "$build_dir/rocksdb-source-9" \
  --suite trixie --version 9.10.0-1)

cd "$repo_root"
for source in plugin/*.cc tests/plugin/filter_bits_test.cc; do
  g++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror -Wshadow \
    -Woverloaded-virtual -I"$tree" -I"$tree/include" -Iinclude -Iplugin \
    "$source"
  echo "compiles against RocksDB 9.10: $source"
done
