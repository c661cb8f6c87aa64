# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# Shared by the project's scripts (sourced, not run): their messages,
# installing packages, the set-up, configure and build prologue, and the
# parser of db_bench's --statistics tickers. A fix
# here, such as another package a fresh machine needs, reaches every script.
#
# usage: source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

cuckoo_repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# Messages on stderr, named after the script that runs: log says what it
# does; die says why it stops, and exits 1.
cuckoo_script_name=$(basename "$0" .sh)
log() { echo "$cuckoo_script_name: $*" >&2; }
die() {
  log "error: $*"
  exit 1
}
# Where builds outside the tree are kept: RocksDB's builds, downloads and the
# compiler cache.
cuckoo_cache_root=${ROCKSDB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rocksdb-cuckoo}

# The compiler cache (Debian's ccache, which scripts/setup.sh installs): every
# CMake build a script configures takes it as its compiler launcher, and
# scripts that call a compiler themselves put $cuckoo_ccache before it. A
# machine without ccache, or CUCKOO_CCACHE=0, builds without it.
#   CCACHE_BASEDIR  the checkout: paths inside it are rewritten relative to
#                   the build folder, so that a clone in another folder (CI's)
#                   hits what this one compiled. Paths outside it (RocksDB's
#                   trees in the cache, /usr) are the same in every clone.
#   CCACHE_NOHASHDIR  the build folder's path is left out of the key even for
#                   objects with debug information (the sanitizer builds'),
#                   whose DW_AT_comp_dir may then name another clone.
# ccache hashes the compiler, the flags and the preprocessed source with
# every header it includes: a change to any of them is a miss, and a
# compilation that failed is never cached. Called when this file is sourced,
# and again by cuckoo_setup once it has installed ccache.
cuckoo_ccache=""
cuckoo_use_ccache() {
  if [ "${CUCKOO_CCACHE:-1}" != 0 ] && command -v ccache >/dev/null; then
    cuckoo_ccache=ccache
    export CCACHE_DIR=$cuckoo_cache_root/ccache
    export CCACHE_BASEDIR=$cuckoo_repo_root
    export CCACHE_NOHASHDIR=true
    # The project in each configuration, the in-tree RocksDB builds and the
    # cross builds, with room to spare (zstd-compressed).
    export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-16G}
    export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
  fi
}
cuckoo_use_ccache

# cuckoo_each_two_at_a_time COMMAND... -- ARGUMENT...: runs COMMAND...
# ARGUMENT for each ARGUMENT, two at a time (the machines have two cores),
# the next as soon as one ends; fails if any fails, after all have run. The
# caller must have no other background jobs: it waits for any.
cuckoo_each_two_at_a_time() {
  local command=()
  while [ "$1" != "--" ]; do
    command+=("$1")
    shift
  done
  shift
  local running=0 argument status=0
  for argument in "$@"; do
    if ((running == 2)); then
      wait -n || status=1
      running=$((running - 1))
    fi
    "${command[@]}" "$argument" &
    running=$((running + 1))
  done
  while ((running > 0)); do
    wait -n || status=1
    running=$((running - 1))
  done
  return "$status"
}

# cuckoo_install_packages WHO PACKAGE...: installs the Debian packages that
# are missing when run as root; otherwise, if any is missing, prints the
# apt-get line to run, prefixed with WHO, and exits 1.
cuckoo_install_packages() {
  local who=$1 pkg status
  shift
  local missing=()
  for pkg in "$@"; do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    [ "$status" = "install ok installed" ] || missing+=("$pkg")
  done
  ((${#missing[@]})) || return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "$who: missing Debian packages. Install them with:" >&2
    echo "  sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  echo "$who: installing ${missing[*]}" >&2
  DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    "${missing[@]}" >&2
}

# cuckoo_setup: installs what is missing (scripts/setup.sh), once per script,
# and sets cuckoo_rocksdb_source to the source tree of Debian's RocksDB 7.8.3.
# Call it before anything else that needs the packages, scripts/build-rocksdb.sh
# for example.
cuckoo_rocksdb_source=""
cuckoo_setup() {
  if [ -z "$cuckoo_rocksdb_source" ]; then
    cuckoo_rocksdb_source=$("$cuckoo_repo_root/scripts/setup.sh" \
      "$cuckoo_repo_root/build" | tail -n 1)
    cuckoo_use_ccache
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

# cuckoo_build_java RELEASE BUILD_DIR: builds the Java library (java/) for
# the rocksdbjni RELEASE in BUILD_DIR, against the stock jar that
# scripts/build-rocksdbjni.sh builds (cached); sets cuckoo_rocksdbjni to
# that jar's folder.
cuckoo_build_java() {
  cuckoo_rocksdbjni=$("$cuckoo_repo_root/scripts/build-rocksdbjni.sh" "$1")
  cmake -S "$cuckoo_repo_root/java" -B "$2" \
    -DROCKSDB_SOURCE_DIR="$(readlink -f "$cuckoo_rocksdbjni/source")" \
    -DROCKSDBJNI_JAR="$cuckoo_rocksdbjni/rocksdbjni.jar" >&2
  cmake --build "$2" -j2 >&2
}

# cuckoo_ticker NAME OUTPUT: the COUNT of the ticker rocksdb.NAME in db_bench
# --statistics OUTPUT (empty when it is absent).
cuckoo_ticker() {
  sed -n "s/^rocksdb\.${1//./\\.} COUNT : \([0-9]*\).*/\1/p" <<<"$2"
}

# cuckoo_release_flag ARG...: takes the benchmarks' --release [VERSION] when
# it is the first of ARGs: sets cuckoo_release to 1, cuckoo_release_version
# to VERSION (x.y.z; "" when none follows) and cuckoo_flag_words to the words
# it took (1 or 2). Returns 1, setting nothing, for any other first word.
cuckoo_release=""
cuckoo_release_version=""
cuckoo_release_flag() {
  [ "${1:-}" = --release ] || return 1
  cuckoo_release=1
  cuckoo_flag_words=1
  if [[ "${2:-}" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
    cuckoo_release_version=$2
    cuckoo_flag_words=2
  fi
}

# cuckoo_build_for_run BUILD_DIR RELEASE VERSION TARGET...: after
# cuckoo_setup, builds TARGETs against Debian's RocksDB in BUILD_DIR or, with
# RELEASE non-empty, against the Release librocksdb of VERSION ("" for the
# installed librocksdb-dev's), which scripts/build-rocksdb.sh --release
# builds once (cached) and which goes first on LD_LIBRARY_PATH. Sets
# cuckoo_run_build_dir to the folder built: BUILD_DIR (the installed
# version's Release build stands in for Debian's library, RTTI and all), or
# BUILD_DIR-release-VERSION for another version.
cuckoo_build_for_run() {
  local build_dir=$1 release=$2 version=$3 installed library_dir
  shift 3
  cuckoo_run_build_dir=$build_dir
  if [ -z "$release" ]; then
    cuckoo_configure_and_build "$build_dir" --targets "$@"
    return
  fi
  installed=$(dpkg-query -W -f='${Version}' librocksdb-dev 2>/dev/null || true)
  installed=${installed#*:}
  installed=${installed%-*}
  library_dir=$("$cuckoo_repo_root/scripts/build-rocksdb.sh" --release \
    ${version:+"$version"})
  export LD_LIBRARY_PATH="$library_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  if [ -z "$version" ] || [ "$version" = "$installed" ]; then
    cuckoo_configure_and_build "$build_dir" --targets "$@"
    return
  fi
  cuckoo_run_build_dir=$build_dir-release-$version
  cuckoo_configure_and_build "$cuckoo_run_build_dir" \
    --rocksdb-source "$(readlink -f "$library_dir/source")" \
    -DROCKSDB_LIBRARY="$library_dir/librocksdb.so" --targets "$@"
}

# cuckoo_describe_rocksdb BINARY COMMAND: one line naming the librocksdb that
# BINARY loads (with the current LD_LIBRARY_PATH) and whether it was built
# with assertions, as Debian's is: it then calls __assert_fail, and RocksDB's
# own filters pay for assertions that the cuckoo filter's code does not have.
# For such a build the line gives COMMAND with --release, for a fair baseline.
cuckoo_describe_rocksdb() {
  local library
  library=$(ldd "$1" | awk '/librocksdb/ { print $3; exit }')
  library=$(readlink -f "$library")
  # awk reads all of nm's output: grep -q would stop early, and pipefail
  # would then take nm's SIGPIPE for a failure.
  local asserts
  asserts=$(nm -D --undefined-only "$library" 2>/dev/null |
    awk '/ __assert_fail/ { n++ } END { print n + 0 }')
  if [ "$asserts" -gt 0 ]; then
    echo "$(basename "$library") ($(dirname "$library")), built with assertions on (Debian's build): RocksDB's Bloom and Ribbon run their assertions and the cuckoo filter does not, so its ratios favour cuckoo; run \`$2 --release\` for a Release baseline"
  else
    echo "$(basename "$library") ($(dirname "$library")), a Release build without assertions"
  fi
}
