#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# The CF module in Valkey 8: builds valkey-server and valkey-cli from
# Debian trixie's source package (8.1.1+dfsg1-3+deb13u2: the upstream
# tarball, then Debian's patches in their series order, built against the
# system's jemalloc as Debian builds it), cached outside the tree, and runs
# the module's tests (tests/module) against it: the same binary module that
# Redis 7.0 loads. About 3 minutes the first time, then 2.
#
# The files are downloaded from the pool of the Debian archive that the
# machine's apt uses (lib/debian-source.sh's debian_mirror) and checked against the
# checksums pinned in scripts/redis-source.sha256. (deb13u3, which trixie's
# index lists, was not in the archive's pool when this was written.)
#
# usage: scripts/check-valkey.sh [PYTEST_ARG...]
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/debian-source.sh"
repo_root=$cuckoo_repo_root

upstream=8.1.1+dfsg1
revision=3+deb13u2
files=("valkey_${upstream}.orig.tar.xz" "valkey_${upstream}-${revision}.debian.tar.xz")
mirror=$(debian_mirror) || die "no Debian archive in this machine's apt sources"
pool=$mirror/pool/main/v/valkey

cuckoo_setup
cuckoo_install_packages check-valkey libjemalloc-dev xz-utils patch
cache=$cuckoo_cache_root
downloads=$cache/downloads
mkdir -p "$downloads"
for name in "${files[@]}"; do
  sha=$(awk -v name="$name" '$2 == name { print $1 }' "$repo_root/scripts/redis-source.sha256")
  [ -n "$sha" ] || die "no pinned checksum for $name"
  matches() { (cd "$downloads" && echo "$sha  $name" | sha256sum --check --quiet - >/dev/null 2>&1); }
  if ! matches; then
    log "downloading $name"
    /usr/lib/apt/apt-helper -o "APT::Sandbox::User=$(id -un)" download-file \
      "$pool/${name//+/%2b}" "$downloads/$name.partial" >&2
    mv "$downloads/$name.partial" "$downloads/$name"
    matches || { rm -f "$downloads/$name"; die "$name does not match its pinned sha256"; }
  fi
done

prefix=$cache/valkey-$upstream-$revision
if [ ! -x "$prefix/bin/valkey-server" ]; then
  work=$(mktemp -d "$cache/.valkey.XXXXXX")
  tar -xJf "$downloads/${files[0]}" -C "$work"
  source_dir=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -n 1)
  [ -f "$source_dir/src/server.c" ] || die "${files[0]} holds no Valkey tree"
  tar -xJf "$downloads/${files[1]}" -C "$source_dir"
  while read -r patch_name _; do
    case "$patch_name" in '' | '#'*) continue ;; esac
    patch -d "$source_dir" -p1 -s -N -i "$source_dir/debian/patches/$patch_name" >&2 ||
      die "Debian's patch $patch_name does not apply"
  done <"$source_dir/debian/patches/series"
  log "building Valkey $upstream-$revision"
  (unset MAKEFLAGS MFLAGS MAKELEVEL
    make -C "$source_dir/src" -j2 BUILD_TLS=no USE_SYSTEMD=no USE_JEMALLOC=yes \
      USE_SYSTEM_JEMALLOC=yes valkey-server valkey-cli >"$work/build.log" 2>&1) ||
    { tail -n 40 "$work/build.log" >&2; die "the Valkey build failed"; }
  mkdir -p "$work/bin"
  cp "$source_dir/src/valkey-server" "$source_dir/src/valkey-cli" "$work/bin/"
  rm -rf "$source_dir"
  mv -T "$work" "$prefix"
fi
"$prefix/bin/valkey-server" --version >&2

cuckoo_configure_and_build "$repo_root/build" --targets cuckoo_cf_module
CUCKOO_CF_MODULE=$repo_root/build/module/librocksdb_cuckoo_cf.so \
  CUCKOO_CF_SERVER=$prefix/bin/valkey-server \
  /usr/bin/python3 -m pytest -q -p no:cacheprovider "$repo_root/tests/module" "$@"
