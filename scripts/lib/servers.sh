# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# Servers for the CF module's tests that Debian 12 does not install, built
# from Debian's source packages (sourced, not run; it sources common.sh and
# debian-source.sh):
#   valkey          Valkey 8.1.1 from trixie's source package
#                   (8.1.1+dfsg1-3+deb13u2: the upstream tarball, then
#                   Debian's patches in their series order), built against
#                   the system's jemalloc as Debian builds it
#   valkey-jemalloc the same source with its own jemalloc, as upstream
#                   builds it (without Debian's patch for the system's)
#   redis-jemalloc  Redis 7.0.15 from the upstream tarball of bookworm's
#                   source package, with its own jemalloc, as upstream
#                   builds it
# Active defragmentation needs a server's own jemalloc: Debian's builds, on
# the system's, refuse `CONFIG SET activedefrag yes`.
#
# The files come from the pool of the Debian archive that the machine's apt
# uses (debian_mirror) and are checked against the checksums pinned in
# scripts/redis-source.sha256. (deb13u3, which trixie's index lists, was
# not in the archive's pool when this was written.) Each server is built
# once, about 2 minutes, and cached outside the tree.
#
# usage: source "$(dirname "${BASH_SOURCE[0]}")/lib/servers.sh"
#        cf_server_build KIND   prints the server binary's path
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/debian-source.sh"

# cf_server_pool_file PACKAGE NAME: the pinned file NAME of Debian's source
# package PACKAGE, downloaded from the archive's pool unless the download
# cache holds a copy that matches; prints its path.
cf_server_pool_file() {
  local package=$1 name=$2 sha downloads mirror
  sha=$(awk -v name="$name" '$2 == name { print $1 }' \
    "$cuckoo_repo_root/scripts/redis-source.sha256")
  [ -n "$sha" ] || die "no pinned checksum for $name"
  downloads=$cuckoo_cache_root/downloads
  mkdir -p "$downloads"
  if ! (cd "$downloads" && echo "$sha  $name" | sha256sum --check --quiet - >/dev/null 2>&1); then
    mirror=$(debian_mirror) || die "no Debian archive in this machine's apt sources"
    log "downloading $name"
    /usr/lib/apt/apt-helper -o "APT::Sandbox::User=$(id -un)" download-file \
      "$mirror/pool/main/${package:0:1}/$package/${name//+/%2b}" \
      "$downloads/$name.partial" >&2
    mv "$downloads/$name.partial" "$downloads/$name"
    (cd "$downloads" && echo "$sha  $name" | sha256sum --check --quiet - >/dev/null 2>&1) ||
      { rm -f "$downloads/$name"; die "$name does not match its pinned sha256"; }
  fi
  echo "$downloads/$name"
}

cf_server_build() {
  local kind=$1 source_tar debian_tar="" name make_args
  case "$kind" in
    valkey | valkey-jemalloc)
      source_tar=$(cf_server_pool_file valkey valkey_8.1.1+dfsg1.orig.tar.xz)
      debian_tar=$(cf_server_pool_file valkey valkey_8.1.1+dfsg1-3+deb13u2.debian.tar.xz)
      name=valkey-8.1.1+dfsg1-3+deb13u2
      make_args=(USE_JEMALLOC=yes valkey-server valkey-cli)
      if [ "$kind" = valkey ]; then
        make_args=(USE_SYSTEM_JEMALLOC=yes "${make_args[@]}")
      else
        name+=-jemalloc
        skip_patch=0004-Add-support-for-USE_SYSTEM_JEMALLOC-flag.patch
      fi
      ;;
    redis-jemalloc)
      source_tar=$(cf_server_pool_file redis redis_7.0.15.orig.tar.gz)
      name=redis-7.0.15-jemalloc
      make_args=(USE_JEMALLOC=yes redis-server redis-cli)
      ;;
    *) die "no server kind $kind (valkey, valkey-jemalloc, redis-jemalloc)" ;;
  esac
  local prefix=$cuckoo_cache_root/$name server=${make_args[-2]}
  if [ ! -x "$prefix/bin/$server" ]; then
    cuckoo_install_packages "$kind server" libjemalloc-dev xz-utils patch make gcc
    local work source_dir patch_name
    work=$(mktemp -d "$cuckoo_cache_root/.server.XXXXXX")
    tar -xf "$source_tar" -C "$work"
    source_dir=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -n 1)
    [ -f "$source_dir/src/server.c" ] || die "$source_tar holds no server tree"
    if [ -n "$debian_tar" ]; then
      tar -xf "$debian_tar" -C "$source_dir"
      while read -r patch_name _; do
        case "$patch_name" in '' | '#'* | "$skip_patch") continue ;; esac
        patch -d "$source_dir" -p1 -s -N -i "$source_dir/debian/patches/$patch_name" >&2 ||
          die "Debian's patch $patch_name does not apply"
      done <"$source_dir/debian/patches/series"
    fi
    log "building $name"
    (unset MAKEFLAGS MFLAGS MAKELEVEL
      make -C "$source_dir/src" -j2 BUILD_TLS=no USE_SYSTEMD=no "${make_args[@]}" \
        >"$work/build.log" 2>&1) ||
      { tail -n 40 "$work/build.log" >&2; die "the $name build failed"; }
    mkdir -p "$work/bin"
    cp "$source_dir/src/$server" "$source_dir/src/${make_args[-1]}" "$work/bin/"
    rm -rf "$source_dir"
    rm -rf "$prefix"
    mv -T "$work" "$prefix"
  fi
  echo "$prefix/bin/$server"
}
