#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# Makes a release: checks that the tree is clean and that HISTORY.md and
# CMakeLists.txt both name VERSION, runs the pre-release checks the README
# lists (the license check, the README's two commands on a fresh Debian 12,
# the whole suite against every supported RocksDB release, with clang, and
# on arm64, the Java library against each rocksdbjni release), and writes a
# source tarball of HEAD, the CF module built from it on its own (with the
# MODULE LOAD line that loads it), and one Java jar per rocksdbjni release
# (scripts/test-java-versions.sh builds them), each with its SHA-256.
#
# usage: scripts/release.sh [--skip-checks] VERSION
#   VERSION        MAJOR.MINOR.PATCH, as in CMakeLists.txt's project() and a
#                  "## VERSION (date)" heading of HISTORY.md
#   --skip-checks  only the tree and version checks, the tarball and the CF
#                  module (for trying the script; not for a release)
#   output: build/release/rocksdb-cuckoo-VERSION.tar.gz,
#   rocksdb-cuckoo-VERSION-cf-module-linux-<arch>.so (Redis 7 and Valkey 8),
#   and rocksdb-cuckoo-VERSION-java-<release>.jar for rocksdbjni 10.1.3,
#   9.7.3 and FRocksDB 8.10.0, each with a .sha256
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
repo_root=$cuckoo_repo_root
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
java_releases=(10.1.3 9.7.3 frocksdb-8.10.0)
if [ -z "$skip_checks" ]; then
  scripts/test-java-versions.sh "${java_releases[@]}"
fi

out=$repo_root/build/release
mkdir -p "$out"
name=rocksdb-cuckoo-$version
git archive --format=tar.gz --prefix="$name/" -o "$out/$name.tar.gz" HEAD
(cd "$out" && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")
echo "release: wrote $out/$name.tar.gz and $name.tar.gz.sha256"
cat "$out/$name.tar.gz.sha256"
# The CF module, from the tarball's sources alone (module/ builds without
# RocksDB), as a Redis operator builds it.
module_src=$out/module-source
rm -rf "$module_src" "$out/module-build"
mkdir -p "$module_src"
tar -xzf "$out/$name.tar.gz" -C "$module_src" --strip-components=1
{ cmake -S "$module_src/module" -B "$out/module-build" -DCMAKE_BUILD_TYPE=Release &&
  cmake --build "$out/module-build" -j2; } >"$out/module-build.log" 2>&1 ||
  die "the CF module did not build from the tarball (log: $out/module-build.log)"
module=$name-cf-module-linux-$(uname -m).so
cp "$out/module-build/librocksdb_cuckoo_cf.so" "$out/$module"
rm -rf "$module_src" "$out/module-build"
(cd "$out" && sha256sum "$module" >"$module.sha256")
cat "$out/$module.sha256"
echo "release: load it with: MODULE LOAD /path/to/$module (or loadmodule in redis.conf)"
# The jars, as the Java checks built and tested them (build-java-<release>).
# Without the checks a missing jar is only reported; a release needs all.
shopt -s nullglob
for release in "${java_releases[@]}"; do
  jars=(build-java-"$release"/rocksdb-cuckoo-*.jar)
  if ((${#jars[@]} == 0)); then
    [ -n "$skip_checks" ] || die "no jar for rocksdbjni $release in build-java-$release"
    echo "release: no jar for rocksdbjni $release (scripts/test.sh --java $release)" >&2
    continue
  fi
  jar=${jars[0]}
  cp "$jar" "$out/$name-java-$release.jar"
  (cd "$out" && sha256sum "$name-java-$release.jar" >"$name-java-$release.jar.sha256")
  cat "$out/$name-java-$release.jar.sha256"
done
