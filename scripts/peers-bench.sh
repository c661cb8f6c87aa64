#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# Builds and runs bench/peers/peers_bench.cc, the side-by-side benchmark of
# the dynamic cuckoo filter and three peer implementations, and prints its
# Markdown table of throughput ratios (ours / peer). The peers' sources are
# fetched at pinned commits into
# ${XDG_CACHE_HOME:-~/.cache}/rocksdb-cuckoo/peers/<name>-<commit>, once,
# from --peers-dir (DIR/<owner>+<name>/repo, DIR/<owner>+<name> or
# DIR/<name>, a git directory or checkout holding the commit) or else by
# git clone from GitHub; they stay out of the repository. One binary,
# build/peers/peers_bench, is compiled with the same compiler and flags for
# ours and the peers, outside CMake; the warnings that fail the build are
# for our file only (the peers' headers come in with -isystem). RedisBloom's
# cuckoo.c and MurmurHash2.c are compiled with cc as plain C, with
# bench/peers/redismodule.h in place of Redis's header.
#
# usage: scripts/peers-bench.sh [--peers-dir DIR] [--quick] [--repetitions N] [--log2-buckets K[,K...]] [--out FILE]
#   --quick        2^16 buckets only, 2 repetitions, short lookups: a smoke
#                  test; otherwise 2^18 and 2^24 buckets, 5 repetitions
#   --repetitions  N repetitions instead
#   --log2-buckets only these sizes, 2^K buckets of 4 (e.g. 18: at 2^24 one
#                  repetition takes about 10 minutes here)
#   --out FILE     also writes the table to FILE
#   needs: a C and a C++ compiler (CC, CXX; default cc and g++), git, the
#   headers of xxHash and OpenSSL (efficient/cuckoofilter's hashutil.h
#   includes <openssl/evp.h>); no root.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$repo_root/scripts/lib/peers.sh"
usage="usage: scripts/peers-bench.sh [--peers-dir DIR] [--quick] [--repetitions N] [--log2-buckets K[,K...]] [--out FILE]"


peers_dir=""
out=""
bench_args=()
while (($#)); do
  if cuckoo_peer_bench_flag "$@"; then
    shift "$cuckoo_flag_words"
    continue
  fi
  case "$1" in
    --log2-buckets)
      [[ "${2:-}" =~ ^[0-9]+(,[0-9]+)*$ ]] || die "--log2-buckets needs sizes like 18 or 18,24"
      bench_args+=(--log2-buckets "$2")
      shift
      ;;
    *) die "$usage" ;;
  esac
  shift
done

# The peers: the name the harness includes them by, GitHub owner/name, and
# the pinned commit.
peers=(
  "efficient_cuckoofilter efficient/cuckoofilter 917583d6abef692dfa8e14453bd77d6e0b61eef3"
  "fastfilter_cpp FastFilter/fastfilter_cpp 924e5608fb15566bc15913f7cddfeb4a095445b2"
  "RedisBloom RedisBloom/RedisBloom b28c29451ad4f6931fb42fe5b3d1e03a3270175f"
)

cc=${CC:-cc}
cxx=${CXX:-g++}
missing=()
command -v "$cxx" >/dev/null || missing+=("g++ (or set CXX)")
command -v "$cc" >/dev/null || missing+=("gcc (or set CC)")
command -v git >/dev/null || missing+=(git)
# Headers: asked of the compiler, wherever they are installed.
has_header() { echo "#include <$1>" | "$cxx" -E -x c++ - >/dev/null 2>&1; }
if command -v "$cxx" >/dev/null; then
  has_header xxhash.h || missing+=("libxxhash-dev (xxhash.h)")
  has_header openssl/evp.h || missing+=("libssl-dev (openssl/evp.h)")
fi
if ((${#missing[@]})); then
  log "missing: ${missing[*]}"
  log "on Debian: sudo apt-get install -y g++ git libxxhash-dev libssl-dev"
  exit 1
fi

build_dir=$repo_root/build/peers
mkdir -p "$build_dir/include"
declare -A source_of
for peer in "${peers[@]}"; do
  read -r name repo commit <<<"$peer"
  source_of[$name]=$(cuckoo_peer_source "$repo" "$commit" "$peers_dir") ||
    die "no source of $repo"
  # The harness includes <name/...>: one include folder for all the peers,
  # whose headers share file names.
  ln -sfn "${source_of[$name]}" "$build_dir/include/$name"
done
redisbloom=${source_of[RedisBloom]}

# The same optimization flags for ours and the peers; no -march, as the
# project's Release builds. cuckoo.c's CuckooFilter_ValidateIntegrity reads
# the module's configuration (rm_config), which is not linked in; the
# harness does not call it, and --gc-sections drops it with its reference
# (-ffunction-sections gives it a section of its own).
common_flags=(-O3 -DNDEBUG)
c_flags=("${common_flags[@]}" -ffunction-sections)
cxx_flags=("${common_flags[@]}" -std=c++17)
warning_flags=(-Wall -Wextra -Wshadow -Werror)
binary=$build_dir/peers_bench
recipe="$cc ${c_flags[*]}; $cxx ${cxx_flags[*]} ${warning_flags[*]}"

build() {
  log "compiling RedisBloom's cuckoo.c and MurmurHash2.c"
  "$cc" "${c_flags[@]}" -w -I "$repo_root/bench/peers" -I "$redisbloom/deps" \
    -c "$redisbloom/src/cuckoo.c" -o "$build_dir/redisbloom_cuckoo.o"
  "$cc" "${c_flags[@]}" -w -c "$redisbloom/deps/murmur2/MurmurHash2.c" \
    -o "$build_dir/redisbloom_murmur2.o"
  log "compiling $binary"
  "$cxx" "${cxx_flags[@]}" "${warning_flags[@]}" -I "$repo_root/include" \
    -isystem "$build_dir/include" \
    -isystem "${source_of[fastfilter_cpp]}/src" \
    -isystem "$redisbloom/deps" \
    "$repo_root/bench/peers/peers_bench.cc" \
    "$build_dir/redisbloom_cuckoo.o" "$build_dir/redisbloom_murmur2.o" \
    -Wl,--gc-sections -o "$binary"
  echo "$recipe" >"$binary.recipe"
}

# Rebuilt when the compilers or flags, this script, the harness or the
# library's headers changed.
if [ -x "$binary" ] && [ "$(cat "$binary.recipe" 2>/dev/null)" = "$recipe" ] &&
  [ -z "$(find "$repo_root/include" "$repo_root/bench/peers" \
    "${BASH_SOURCE[0]}" -newer "$binary" -print -quit)" ]; then
  log "$binary is up to date"
else
  build
fi

report() {
  echo "Peers: efficient/cuckoofilter ${peers[0]##* }, FastFilter/fastfilter_cpp ${peers[1]##* }, RedisBloom/RedisBloom ${peers[2]##* }."
  echo "Compiled with $("$cxx" --version | head -n 1): ${cxx_flags[*]}, no -march (RedisBloom's C: $cc ${c_flags[*]})."
  echo
  "$binary" ${bench_args[@]+"${bench_args[@]}"}
}
if [ -n "$out" ]; then
  report | tee "$out"
else
  report
fi
