#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# scripts/release.sh on a clone of the repository's HEAD: it packages a
# version that CMakeLists.txt and HISTORY.md both name (a tarball and a CF
# module whose SHA-256 files check), and refuses another version, a version
# HISTORY.md does not name, and a tree with uncommitted changes.
#
# usage: release_test.sh SOURCE_DIR
set -euo pipefail
source_dir=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone --quiet --no-hardlinks "$source_dir" "$work/repo"
cd "$work/repo"
git config user.email test@example.invalid
git config user.name test
version=$(sed -n 's/^project(rocksdb_cuckoo VERSION \([0-9.]*\) .*/\1/p' CMakeLists.txt)

fail() { echo "release_test: $*" >&2; exit 1; }
expect_refusal() {  # WHAT ARGS...: release.sh must fail, saying WHAT
  local what=$1 output
  shift
  if output=$(scripts/release.sh --skip-checks "$@" 2>&1); then
    fail "release.sh $* succeeded; expected a refusal ($what)"
  fi
  grep -q "$what" <<<"$output" || fail "release.sh $* said '$output', not '$what'"
}

if grep -qE "^## $version \(" HISTORY.md; then
  scripts/release.sh --skip-checks "$version" >/dev/null
  (cd build/release && sha256sum --check --quiet "rocksdb-cuckoo-$version.tar.gz.sha256") ||
    fail "the tarball does not match its SHA-256 file"
  listing=$(tar -tzf "build/release/rocksdb-cuckoo-$version.tar.gz")
  for file in HISTORY.md COPYING LICENSE.Apache CMakeLists.txt; do
    grep -qx "rocksdb-cuckoo-$version/$file" <<<"$listing" ||
      fail "the tarball lacks $file"
  done
  module=rocksdb-cuckoo-$version-cf-module-linux-$(uname -m).so
  (cd build/release && sha256sum --check --quiet "$module.sha256") ||
    fail "the CF module does not match its SHA-256 file"
  nm -D --defined-only "build/release/$module" | grep -q ' RedisModule_OnLoad$' ||
    fail "the CF module has no RedisModule_OnLoad"
fi
expect_refusal "CMakeLists.txt says version" 99.0.0
sed -i "s/^project(rocksdb_cuckoo VERSION [0-9.]* /project(rocksdb_cuckoo VERSION 99.0.0 /" CMakeLists.txt
git commit --quiet -am "a version HISTORY.md does not name"
expect_refusal "HISTORY.md has no '## 99.0.0" 99.0.0
echo "# a change" >>README.md
expect_refusal "uncommitted changes" 99.0.0
echo "release_test: release.sh packages $version and refuses the three bad cases"
