#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# The CF module against RedisBloom in the same redis-server binary
# (bench/redis/cf_server_bench.py): CF.ADD and CF.EXISTS throughput and
# latency with redis-benchmark, pipelined and not, the server and the
# client each on a core of its own, CF.EXISTS on a filter RedisBloom has
# expanded 4 times, and CF.MEXISTS of 100 items on a filter of 10^8; and
# for CF.RESERVE key 1000000, MEMORY USAGE and the false-positive rate
# empty, half full, full and after 1, 2 and 4 of RedisBloom's expansions,
# at its defaults and ours with the options a user would try. Prints
# Markdown tables with paired ratios (ours / RedisBloom) and their ranges.
#
# RedisBloom is built from its own source, outside the tree, at a pinned
# release: the newest whose module API calls all exist in Debian 12's
# redis-server 7.0 (today's RedisBloom calls ACL functions that 7.0 lacks).
# Its sources come as scripts/peers-bench.sh's do (scripts/lib/peers.sh):
# --peers-dir DIR, or git clone from GitHub; its build uses its release
# flags and no network.
#
# usage: scripts/redis-bench.sh [--peers-dir DIR] [--quick] [--repetitions N] [--parts LIST] [--control] [--out FILE]
#   --quick        smaller runs, 2 repetitions: a smoke test
#   --repetitions  N paired repetitions of the throughput runs (default 5)
#   --parts        throughput, memory or both (the default), comma-separated
#   --control      after the throughput table, its single-item rows with
#                  ours in both servers: what the method reads where the
#                  modules are the same
#   --out FILE     also writes the tables to FILE
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/peers.sh"
repo_root=$cuckoo_repo_root
usage="usage: scripts/redis-bench.sh [--peers-dir DIR] [--quick] [--repetitions N] [--parts LIST] [--control] [--out FILE]"

peers_dir=""
out=""
bench_args=()
while (($#)); do
  if [ "$1" = --parts ]; then
    [[ "${2:-}" =~ ^(throughput|memory)(,(throughput|memory))*$ ]] ||
      die "--parts needs throughput, memory or both, comma-separated"
    bench_args+=(--parts "$2")
    shift 2
    continue
  fi
  if [ "$1" = --control ]; then
    bench_args+=(--control)
    shift
    continue
  fi
  cuckoo_peer_bench_flag "$@" || die "$usage"
  shift "$cuckoo_flag_words"
done

# RedisBloom v2.6.28 and the submodules its build needs, at the commits
# the tag records; readies' recorded commit is gone from GitHub's history,
# and the build takes one unchanged header from it.
redisbloom_tag=v2.6.28
redisbloom=(RedisBloom/RedisBloom 4b14af75ca01c1977e96d54f8d0cc1b5c635f0be)
submodules=(
  "deps/RedisModulesSDK RedisLabsModules/RedisModulesSDK 6a62be4aa73f0429ae470a48ad35ee22bcdaee6a"
  "deps/t-digest-c RedisBloom/t-digest-c 5b89d70a08b7ea9ff8d4b9e90ccf84fbd59ab50c"
  "deps/readies RedisLabsModules/readies 220afe8a56a6f99c43ce0ce71173862f2d3c8721"
)

cuckoo_setup
cuckoo_configure_and_build "$repo_root/build" --targets cuckoo_cf_module
ours=$repo_root/build/module/librocksdb_cuckoo_cf.so

# RedisBloom's module, built once per commit with its release flags
# (-O3 -std=gnu99, src/common.h force-included, -Bsymbolic).
build_redisbloom() {  # source_tree output
  local tree=$1 output=$2 objects=() source object
  local flags=(-fPIC -pthread -fno-strict-aliasing -O3 -g -fcommon -std=gnu99 -w
    -include src/common.h -D_GNU_SOURCE -DREDIS_MODULE_TARGET -DREDISMODULE_SDK_RLEC
    "-DREDISBLOOM_GIT_SHA=\"${redisbloom[1]:0:8}\"" -I. -Isrc -Ideps/RedisModulesSDK
    -Ideps -Ideps/murmur2 -Ideps/t-digest-c/src)
  local work
  work=$(mktemp -d)
  for source in deps/bloom/bloom.c deps/murmur2/MurmurHash2.c deps/rmutil/util.c \
    src/rebloom.c src/sb.c src/cf.c src/rm_topk.c src/rm_tdigest.c src/topk.c \
    src/rm_cms.c src/cms.c; do
    object=$work/$(echo "$source" | tr / _).o
    (cd "$tree" && cc "${flags[@]}" -c "$source" -o "$object")
    objects+=("$object")
  done
  (cd "$tree" && cc -fPIC -O2 -g -DNDEBUG -std=c99 -w -c deps/t-digest-c/src/tdigest.c \
    -o "$work/tdigest.o")
  cc -shared -pthread -Wl,-Bsymbolic,-Bsymbolic-functions -o "$output.partial" \
    "${objects[@]}" "$work/tdigest.o" -lm -ldl -lpthread -lrt
  mv "$output.partial" "$output"
  rm -rf "$work"
}

tree=$(cuckoo_peer_source "${redisbloom[@]}" "$peers_dir") || die "no RedisBloom source"
peer_module=$tree/redisbloom.so
if [ ! -f "$peer_module" ]; then
  for submodule in "${submodules[@]}"; do
    read -r path repo commit <<<"$submodule"
    source_dir=$(cuckoo_peer_source "$repo" "$commit" "$peers_dir") ||
      die "no source of $repo"
    rm -rf "${tree:?}/$path"
    cp -r "$source_dir" "$tree/$path"
  done
  log "building RedisBloom $redisbloom_tag"
  build_redisbloom "$tree" "$peer_module"
fi

report() {
  echo "RedisBloom $redisbloom_tag (${redisbloom[1]:0:12}), built with $(cc --version | head -n 1) at -O3;"
  echo "the CF module from this tree ($(git -C "$repo_root" rev-parse --short HEAD 2>/dev/null || echo "no git")), Release;"
  echo "both in $(redis-server --version | cut -d' ' -f1-3), its jemalloc, on 127.0.0.1."
  echo
  /usr/bin/python3 "$repo_root/bench/redis/cf_server_bench.py" --ours "$ours" \
    --redisbloom "$peer_module" ${bench_args[@]+"${bench_args[@]}"}
}
if [ -n "$out" ]; then
  report | tee "$out"
else
  report
fi
