# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# Shared by the project's scripts (sourced, not run): the set-up, configure and
# build prologue, and the parser of db_bench's --statistics tickers. A fix
# here, such as another package a fresh machine needs, reaches every script.
#
# usage: source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

cuckoo_repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# cuckoo_setup: installs what is missing (scripts/setup.sh), once per script,
# and sets cuckoo_rocksdb_source to the source tree of Debian's RocksDB 7.8.3.
# Call it before anything else that needs the packages, scripts/build-rocksdb.sh
# for example.
cuckoo_rocksdb_source=""
cuckoo_setup() {
  if [ -z "$cuckoo_rocksdb_source" ]; then
    cuckoo_rocksdb_source=$("$cuckoo_repo_root/scripts/setup.sh" \
      "$cuckoo_repo_root/build" | tail -n 1)
  fi
}

# cuckoo_configure_and_build BUILD_DIR [--rocksdb-source DIR] [CMAKE_ARG...]
#                            [--targets TARGET...]
# After cuckoo_setup, configures BUILD_DIR against Debian's RocksDB source tree
# or against DIR, and builds TARGETS (all when none are given). Progress goes
# to standard error, so that a script's standard output stays its result.
cuckoo_configure_and_build() {
  local build_dir=$1 rocksdb_source=""
  shift
  local cmake_args=() targets=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --rocksdb-source)
        rocksdb_source=$2
        shift 2
        ;;
      --targets)
        shift
        targets=("$@")
        break
        ;;
      *)
        cmake_args+=("$1")
        shift
        ;;
    esac
  done
  cuckoo_setup
  cmake -S "$cuckoo_repo_root" -B "$build_dir" \
    -DROCKSDB_SOURCE_DIR="${rocksdb_source:-$cuckoo_rocksdb_source}" \
    "${cmake_args[@]}" >&2
  if [ ${#targets[@]} -gt 0 ]; then
    cmake --build "$build_dir" -j2 --target "${targets[@]}" >&2
  else
    cmake --build "$build_dir" -j2 >&2
  fi
}

# cuckoo_ticker NAME OUTPUT: the COUNT of the ticker rocksdb.NAME in db_bench
# --statistics OUTPUT (empty when it is absent).
cuckoo_ticker() {
  sed -n "s/^rocksdb\.${1//./\\.} COUNT : \([0-9]*\).*/\1/p" <<<"$2"
}
