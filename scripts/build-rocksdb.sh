#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# Builds RocksDB from source as a shared library, with that tree's db_bench,
# ldb, sst_dump and db_stress, and caches the result outside the repository,
# keyed by version, variant and flags: on two cores a build takes 15 to 30
# minutes, and a second call returns at once. The build has the compression
# libraries of Debian's own (Snappy, LZ4, Zstd, zlib, bzip2), so it opens DBs
# that Debian's RocksDB wrote with RocksDB's default compression. The tools
# find the library next to them ($ORIGIN), so a copied folder works on its
# own.
#
# RTTI: the build of the installed Debian version keeps RTTI on, like
# Debian's library, so that it can stand in for it (it also answers to
# Debian's soname:
#   LD_LIBRARY_PATH=$(scripts/build-rocksdb.sh) build/bench/...
# runs any of the project's programs against it). Other versions keep
# RocksDB's own default, which for a Release build is -fno-rtti; the plugin's
# CMake detects which one it links against.
#
# Variants:
#   --release  (default) NDEBUG, -O3, PORTABLE: the build the project tests
#              other versions against, and a fair baseline for benchmarks
#              (Debian's own library has assertions on).
#   --in-tree  the release build with this repository compiled in
#              (-DROCKSDB_PLUGINS=cuckoo, the repository copied to
#              plugin/cuckoo of the source tree): librocksdb and tools that
#              know "cuckoofilter" without a preload. It reconfigures the
#              release build's own folder, and Ninja recompiles only what the
#              plugin changes (its sources and build_version.cc) and relinks,
#              so it costs minutes once the release build exists. Each call
#              brings the copy up to date with the repository's files.
#   --tsan     ThreadSanitizer-instrumented library only, for the DB stress
#              test: against an uninstrumented library TSan cannot see how
#              RocksDB hands a filter reader built by a flush thread to the
#              reading threads, and reports that hand-over as a race.
#
# usage: scripts/build-rocksdb.sh [--release | --in-tree | --tsan] [VERSION | TARBALL | TREE]
#   VERSION  7.8.3, 9.10.0, 9.11.2, 10.10.1 or 11.8.1 (see
#            scripts/fetch-rocksdb-source.sh); default: the installed
#            librocksdb-dev's version
#   TARBALL, TREE  a release tarball or extracted source tree of your own
#            (--in-tree writes the plugin's copy into plugin/cuckoo of it)
#   ROCKSDB_CACHE  the cache folder (default ${XDG_CACHE_HOME:-~/.cache}/rocksdb-cuckoo)
#   prints the folder holding librocksdb.so*, the tools, and `source`, a link
#   to the source tree (whose internal headers the plugin compiles against).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
repo_root=$cuckoo_repo_root
usage="usage: scripts/build-rocksdb.sh [--release | --in-tree | --tsan] [VERSION | TARBALL | TREE]"
variant=release
source_arg=""
while (($#)); do
  case "$1" in
    --release) variant=release ;;
    --in-tree) variant=in-tree ;;
    --tsan) variant=tsan ;;
    -*) echo "$usage" >&2; exit 2 ;;
    *) source_arg=$1 ;;
  esac
  shift
done
cache=$cuckoo_cache_root

mkdir -p "$cache"
if [ -n "$source_arg" ] && [ -d "$source_arg" ]; then
  tree=$(cd "$source_arg" && pwd -P)
  [ -f "$tree/include/rocksdb/version.h" ] && [ -f "$tree/CMakeLists.txt" ] ||
    die "$source_arg is not a RocksDB source tree (no include/rocksdb/version.h or CMakeLists.txt)"
else
  tree=$("$repo_root/scripts/fetch-rocksdb-source.sh" "$cache/source" --full $source_arg)
fi
version=$(awk '/^#define ROCKSDB_(MAJOR|MINOR|PATCH) / { v = v (v == "" ? "" : ".") $3 }
  END { print v }' "$tree/include/rocksdb/version.h")
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] ||
  die "cannot read the version from $tree/include/rocksdb/version.h"
if [ "$(printf '%s\n' 7.8.0 "$version" | sort -V | head -n 1)" != 7.8.0 ]; then
  die "RocksDB $version is older than 7.8, the oldest release the plugin supports"
fi

installed=$(dpkg-query -W -f='${Version}' librocksdb-dev 2>/dev/null || true)
installed=${installed#*:}
installed=${installed%-*}
command -v ninja >/dev/null ||
  die "ninja is missing: run scripts/setup.sh (as root) first, or apt-get install ninja-build"
# Ninja, because it tracks each object's own command: --in-tree adds the
# plugin's sources with their own flags, and only those are recompiled.
# RPATH $ORIGIN: the tools load the librocksdb.so copied next to them.
# The compiler cache (lib/common.sh) is CMake's launcher: a build whose
# folder was removed, or an in-tree build after the plugin changed, takes
# what an earlier build compiled.
args=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DPORTABLE=ON -DWITH_SNAPPY=ON
  -DWITH_LZ4=ON -DWITH_ZLIB=ON -DWITH_ZSTD=ON -DWITH_BZ2=ON -DWITH_TESTS=OFF
  -DFAIL_ON_WARNINGS=OFF -DROCKSDB_BUILD_SHARED=ON -DCMAKE_BUILD_WITH_INSTALL_RPATH=ON
  '-DCMAKE_INSTALL_RPATH=$ORIGIN')
if [ "$version" = "$installed" ]; then
  args+=(-DUSE_RTTI=ON)
fi
case "$variant" in
  release | in-tree)
    args+=(-DWITH_GFLAGS=ON -DWITH_BENCHMARK_TOOLS=ON -DWITH_CORE_TOOLS=ON
      -DWITH_TOOLS=ON)
    targets=(rocksdb-shared db_bench ldb sst_dump db_stress)
    ;;
  tsan)
    # -O1 and line tables only: enough for TSan's stacks, and quicker to build.
    args+=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DWITH_TSAN=ON
      "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
      "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
      -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread -DWITH_GFLAGS=OFF
      -DWITH_BENCHMARK_TOOLS=OFF -DWITH_CORE_TOOLS=OFF -DWITH_TOOLS=OFF)
    targets=(rocksdb-shared)
    ;;
esac

# The key: version, variant, a digest of the flags and of the tree's path.
# The in-tree variant shares the release build's folder and key.
build_variant=$variant
[ "$variant" = in-tree ] && build_variant=release
digest=$(printf '%s\n' "$tree" "${args[@]}" "${targets[@]}" | sha256sum | cut -c1-10)
release_out="$cache/rocksdb-$version-$build_variant-$digest"
build="$release_out.build"
out="$cache/rocksdb-$version-$variant-$digest"
if [ "$variant" != in-tree ] && [ -f "$out/.complete" ]; then
  echo "$out"
  exit 0
fi

# The compression and gflags headers the build needs.
for header in snappy.h lz4.h zstd.h zlib.h bzlib.h gflags/gflags.h; do
  [ -f "/usr/include/$header" ] || [ "$variant" = tsan -a "$header" = gflags/gflags.h ] ||
    die "/usr/include/$header is missing: run scripts/setup.sh (as root) first"
done

# Where CMake leaves each target: the library and db_bench at the top, the
# other tools in their own folders (tools/, db_stress_tool/).
built() {  # target -> path
  local name=$1
  [ "$name" = rocksdb-shared ] && name=librocksdb.so
  find "$build" -maxdepth 2 -name "$name" \( -type f -o -type l \) | head -n 1
}

# Configures $build with the given extra flags, builds the targets, and
# copies them to the folder $1 (the log line names the build $2). Progress
# goes to standard error: each 10% of Ninja's steps, and any error.
build_into() {  # destination label [cmake flags...]
  local dest=$1 label=$2 started last line
  shift 2
  started=$(date +%s)
  cmake -S "$tree" -B "$build" "${args[@]}" "$@" >"$dest.configure.log" 2>&1 || {
    tail -n 30 "$dest.configure.log" >&2
    die "configuring RocksDB $version failed (log: $dest.configure.log)"
  }
  last=-10
  cmake --build "$build" -j2 --target "${targets[@]}" 2>&1 | tee "$dest.build.log" |
    while IFS= read -r line; do
      if [[ "$line" =~ ^\[([0-9]+)/([0-9]+)\] ]] &&
        ((BASH_REMATCH[1] * 100 / BASH_REMATCH[2] >= last + 10)); then
        last=$((BASH_REMATCH[1] * 100 / BASH_REMATCH[2] / 10 * 10))
        log "$last% of ${BASH_REMATCH[2]} steps ($((($(date +%s) - started) / 60)) minutes)"
      fi
      if [[ "$line" == *" error"* || "$line" == FAILED:* ]]; then echo "$line" >&2; fi
    done
  for target in "${targets[@]}"; do
    [ -n "$(built "$target")" ] ||
      die "building RocksDB $version failed: no $target in $build (log: $dest.build.log)"
  done
  rm -rf "$dest"
  mkdir -p "$dest"
  cp -a "$build"/librocksdb.so* "$dest/"
  for target in "${targets[@]}"; do
    [ "$target" = rocksdb-shared ] || cp "$(built "$target")" "$dest/$target"
  done
  ln -sfn "$tree" "$dest/source"
  log "RocksDB $version ($label) built in $((($(date +%s) - started) / 60)) minutes: $dest"
}

if [ ! -f "$release_out/.complete" ]; then
  log "building RocksDB $version ($build_variant: ${targets[*]}) in $build;" \
    "this takes 15 to 30 minutes on two cores"
  build_into "$release_out" "$build_variant" -DROCKSDB_PLUGINS=
  if [ "$version" = "$installed" ]; then
    multiarch=$(g++ -print-multiarch)
    debian_soname=$(basename "$(readlink -f "/usr/lib/$multiarch/librocksdb.so")" |
      sed -E 's/^(librocksdb\.so\.[0-9]+\.[0-9]+).*/\1/')
    real=$(ls "$release_out"/librocksdb.so.*.*.* | head -n 1)
    ln -sf "$(basename "$real")" "$release_out/$debian_soname"
  fi
  touch "$release_out/.complete"
fi
if [ "$variant" != in-tree ]; then
  echo "$out"
  exit 0
fi

# In-tree: the repository's files at plugin/cuckoo. When they differ from the
# copy there, the copy is replaced with fresh modification times, so that
# Ninja recompiles it whatever the times of the repository's files.
plugin_dir="$tree/plugin/cuckoo"
files_digest=$(cd "$repo_root" && git ls-files -z | tar --null -cf - -T - --mtime=@0 \
  --owner=0 --group=0 --sort=name | sha256sum | cut -c1-16)
if [ "$(cat "$plugin_dir/.rocksdb-cuckoo-files" 2>/dev/null)" != "$files_digest" ]; then
  rm -rf "$plugin_dir"
  mkdir -p "$plugin_dir"
  (cd "$repo_root" && git ls-files -z | tar --null -cf - -T -) | tar -xmf - -C "$plugin_dir"
  echo "$files_digest" >"$plugin_dir/.rocksdb-cuckoo-files"
fi
rm -f "$out/.complete"
log "building RocksDB $version with the plugin in-tree (-DROCKSDB_PLUGINS=cuckoo)"
build_into "$out" in-tree -DROCKSDB_PLUGINS=cuckoo
nm -D --defined-only "$(readlink -f "$out/librocksdb.so")" | grep -c ' cuckoo_filter_register$' >/dev/null ||
  die "the in-tree librocksdb does not define cuckoo_filter_register"
touch "$out/.complete"
echo "$out"
