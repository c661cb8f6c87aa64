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

repo_root=$cuckoo_repo_root
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

# Two binaries, each with one flag set for ours and the peers alike: the
# project's Release flags (-O3 -DNDEBUG, no -march), and the same with
# -march=native, whose ratios the table shows in columns of their own.
# cuckoo.c's CuckooFilter_ValidateIntegrity reads the module's
# configuration (rm_config), which is not linked in; the harness does not
# call it, and --gc-sections drops it with its reference
# (-ffunction-sections gives it a section of its own).
release_flags=(-O3 -DNDEBUG)
warning_flags=(-Wall -Wextra -Wshadow -Werror)

build() {  # binary flags...: builds the harness and the peers with flags
  local binary=$1
  shift
  local c_flags=("$@" -ffunction-sections) cxx_flags=("$@" -std=c++17)
  local recipe="$cc ${c_flags[*]}; $cxx ${cxx_flags[*]} ${warning_flags[*]}"
  # Rebuilt when the compilers or flags, this script, the harness or the
  # library's headers changed.
  if [ -x "$binary" ] && [ "$(cat "$binary.recipe" 2>/dev/null)" = "$recipe" ] &&
    [ -z "$(find "$repo_root/include" "$repo_root/bench/peers" \
      "${BASH_SOURCE[0]}" -newer "$binary" -print -quit)" ]; then
    log "$binary is up to date"
    return
  fi
  log "compiling RedisBloom's cuckoo.c and MurmurHash2.c ($*)"
  "$cc" "${c_flags[@]}" -w -I "$repo_root/bench/peers" -I "$redisbloom/deps" \
    -c "$redisbloom/src/cuckoo.c" -o "$binary.cuckoo.o"
  "$cc" "${c_flags[@]}" -w -c "$redisbloom/deps/murmur2/MurmurHash2.c" \
    -o "$binary.murmur2.o"
  log "compiling $binary"
  "$cxx" "${cxx_flags[@]}" "${warning_flags[@]}" -I "$repo_root/include" \
    -isystem "$build_dir/include" \
    -isystem "${source_of[fastfilter_cpp]}/src" \
    -isystem "$redisbloom/deps" \
    "$repo_root/bench/peers/peers_bench.cc" \
    "$binary.cuckoo.o" "$binary.murmur2.o" \
    -Wl,--gc-sections -o "$binary"
  echo "$recipe" >"$binary.recipe"
}
build "$build_dir/peers_bench" "${release_flags[@]}"
build "$build_dir/peers_bench_native" "${release_flags[@]}" -march=native

# The release binary's tables, with the ratio table's rows given the
# native binary's ratio and interval for the same size, comparison and
# operation.
merge_native() {  # release_output native_output
  awk -F' [|] ' '
    NR == FNR {
      if ($0 ~ /^[|] 2\^/ && NF == 7) {
        interval = $7
        sub(/ [|]$/, "", interval)
        native[$1 FS $2 FS $3] = $6 " | " interval
      }
      next
    }
    /ratio \(median\)/ { in_ratios = 1; sub(/ [|]$/, " | -march=native ratio | interval |"); print; next }
    in_ratios && /^[|]---/ { print $0 "---:|---|"; next }
    in_ratios && /^[|] 2\^/ {
      key = $1 FS $2 FS $3
      line = $0
      sub(/ [|]$/, "", line)
      print line " | " (key in native ? native[key] : "| ") " |"
      next
    }
    /^$/ { in_ratios = 0 }
    { print }
  ' "$2" "$1"
}

report() {
  local native_output=$build_dir/native.md
  log "running the -march=native binary"
  "$build_dir/peers_bench_native" ${bench_args[@]+"${bench_args[@]}"} >"$native_output"
  log "running the release binary"
  echo "Peers: efficient/cuckoofilter ${peers[0]##* }, FastFilter/fastfilter_cpp ${peers[1]##* }, RedisBloom/RedisBloom ${peers[2]##* }."
  echo "Compiled with $("$cxx" --version | head -n 1) and $("$cc" --version | head -n 1), ours and the peers alike: ${release_flags[*]} (the project's Release flags; C++17, RedisBloom's C as C), and again with -march=native on $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//') for the -march=native columns. Timed on each thread's CPU clock."
  echo
  "$build_dir/peers_bench" ${bench_args[@]+"${bench_args[@]}"} >"$build_dir/release.md"
  merge_native "$build_dir/release.md" "$native_output"
}
if [ -n "$out" ]; then
  report | tee "$out"
else
  report
fi
