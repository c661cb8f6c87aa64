#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# Makes a release: checks that the tree is clean and that HISTORY.md and
# CMakeLists.txt both name VERSION, runs the pre-release checks the README
# lists (the license check, the README's two commands on a fresh Debian 12,
# the whole suite against every supported RocksDB release, with clang, and
# on arm64), and writes a source tarball of HEAD with its SHA-256.
#
# usage: scripts/release.sh [--skip-checks] VERSION
#   VERSION        MAJOR.MINOR.PATCH, as in CMakeLists.txt's project() and a
#                  "## VERSION (date)" heading of HISTORY.md
#   --skip-checks  only the tree and version checks and the tarball (for
#                  trying the script; not for a release)
#   output: build/release/rocksdb-cuckoo-VERSION.tar.gz and .sha256
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage="usage: scripts/release.sh [--skip-checks] VERSION"
skip_checks=""
version=""
while (($#)); do
  case "$1" in
    --skip-checks) skip_checks=1 ;;
    -*) echo "$usage" >&2; exit 2 ;;
    *) version=$1 ;;
  esac
  shift
done
die() { echo "release: $*" >&2; exit 1; }
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "$usage" >&2; exit 2; }
cd "$repo_root"

git rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
  die "$repo_root is not a git checkout"
[ -z "$(git status --porcelain)" ] ||
  die "the tree has uncommitted changes; a release is made from a commit"
project_version=$(sed -n 's/^project(rocksdb_cuckoo VERSION \([0-9.]*\) .*/\1/p' CMakeLists.txt)
[ "$project_version" = "$version" ] ||
  die "CMakeLists.txt says version ${project_version:-(none)}, not $version"
grep -qE "^## $version \([0-9]{4}-[0-9]{2}-[0-9]{2}\)$" HISTORY.md ||
  die "HISTORY.md has no '## $version (YYYY-MM-DD)' section"

if [ -z "$skip_checks" ]; then
  scripts/check-license.sh
  scripts/check-fresh-machine.sh
  scripts/test-rocksdb-versions.sh
  scripts/test.sh --clang
  scripts/check-arm64-db.sh
fi

out=$repo_root/build/release
mkdir -p "$out"
name=rocksdb-cuckoo-$version
git archive --format=tar.gz --prefix="$name/" -o "$out/$name.tar.gz" HEAD
(cd "$out" && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")
echo "release: wrote $out/$name.tar.gz and $name.tar.gz.sha256"
cat "$out/$name.tar.gz.sha256"
