# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# The peers' sources for the benchmarks that compare with them (sourced, not
# run): a pinned commit of a GitHub repository, extracted once into
# ${XDG_CACHE_HOME:-~/.cache}/rocksdb-cuckoo/peers/<name>-<commit>, from a
# local git directory or checkout if one holds the commit, or else by git
# clone from GitHub. They stay out of the repository.
#
# usage: source "$(dirname "${BASH_SOURCE[0]}")/lib/peers.sh"
#        cuckoo_peer_source OWNER/NAME COMMIT [PEERS_DIR]
#   PEERS_DIR  a folder holding DIR/<owner>+<name>/repo, DIR/<owner>+<name>
#              or DIR/<name>, a git directory or checkout with the commit
#   prints the folder of the extracted tree; fails with a reason.
#        cuckoo_peer_bench_flag "$@"
#   applies the first argument if it is one of the flags the benchmarks
#   against peers share (see below).

cuckoo_peers_cache=${XDG_CACHE_HOME:-$HOME/.cache}/rocksdb-cuckoo/peers

# The git directory or checkout under PEERS_DIR that holds the commit.
cuckoo_peer_local_repo() {  # owner/name commit peers_dir
  local candidate
  [ -n "$3" ] || return 1
  for candidate in "$3/${1/\//+}/repo" "$3/${1/\//+}" "$3/${1#*/}"; do
    [ -d "$candidate" ] || continue
    if git -C "$candidate" cat-file -e "$2^{commit}" 2>/dev/null; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

cuckoo_peer_source() {  # owner/name commit [peers_dir]
  local repo=$1 commit=$2 peers_dir=${3:-} name=${1#*/} dest tmp origin
  mkdir -p "$cuckoo_peers_cache"
  dest="$cuckoo_peers_cache/$name-${commit:0:12}"
  if [ -d "$dest" ]; then
    echo "$dest"
    return
  fi
  tmp=$(mktemp -d "$cuckoo_peers_cache/.$name.XXXXXX")
  if origin=$(cuckoo_peer_local_repo "$repo" "$commit" "$peers_dir"); then
    echo "peers: $repo $commit from $origin" >&2
  else
    [ -z "$peers_dir" ] || echo "peers: no git directory with $repo $commit under $peers_dir" >&2
    echo "peers: cloning https://github.com/$repo" >&2
    origin="$tmp/clone"
    if ! git clone --quiet --no-checkout "https://github.com/$repo" "$origin" >&2 ||
      ! git -C "$origin" cat-file -e "$commit^{commit}" 2>/dev/null; then
      rm -rf "$tmp"
      echo "peers: cannot get $repo at $commit: give --peers-dir DIR with DIR/${repo/\//+}/repo, DIR/${repo/\//+} or DIR/${repo#*/} a git directory or checkout that has it, or network access to GitHub" >&2
      return 1
    fi
  fi
  mkdir "$tmp/tree"
  git -C "$origin" archive "$commit" | tar -x -C "$tmp/tree"
  # The finished tree appears under its final name at once (or another
  # run's did first).
  mv -T "$tmp/tree" "$dest" 2>/dev/null || [ -d "$dest" ]
  rm -rf "$tmp"
  echo "$dest"
}

# The flags scripts/peers-bench.sh and scripts/redis-bench.sh share:
# --peers-dir DIR, --quick, --repetitions N and --out FILE, set into the
# caller's peers_dir, bench_args and out. Takes the caller's arguments;
# applies the first when it is one of them, setting cuckoo_flag_words to
# the words it took (1 or 2), and returns 1 otherwise. A flag without its
# value calls the caller's die.
cuckoo_peer_bench_flag() {
  cuckoo_flag_words=2
  case "$1" in
    --peers-dir)
      [ $# -ge 2 ] || die "--peers-dir needs a folder"
      peers_dir=$2
      ;;
    --quick)
      bench_args+=(--quick)
      cuckoo_flag_words=1
      ;;
    --repetitions)
      [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || die "--repetitions needs a count >= 1"
      bench_args+=(--repetitions "$2")
      ;;
    --out)
      [ $# -ge 2 ] || die "--out needs a file"
      out=$2
      ;;
    *) return 1 ;;
  esac
}
