#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# Big-endian hosts: builds the core's unit tests and the golden-format tests
# for s390x with Debian's cross compiler (GoogleTest compiled from
# /usr/src/googletest), and runs them under qemu-user. The golden tests build
# the committed blocks (written on a little-endian host) from their keys and
# must get the same bytes, and must read them back; so a filter written on
# either byte order is readable on the other.
#
# usage: scripts/check-big-endian.sh     (installs its packages when run as root)
#   BUILD_DIR  the work folder's parent (default: build)
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=${BUILD_DIR:-$repo_root/build}/s390x
log() { echo "check-big-endian: $*" >&2; }

packages=(g++-s390x-linux-gnu qemu-user libgtest-dev libxxhash-dev)
missing=()
for pkg in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || missing+=("$pkg")
done
if ((${#missing[@]})); then
  if [ "$(id -u)" -ne 0 ]; then
    log "missing Debian packages; install them with: sudo apt-get install -y ${missing[*]}"
    exit 1
  fi
  log "installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    "${missing[@]}" >&2
fi

cxx=s390x-linux-gnu-g++
gtest=/usr/src/googletest/googletest
# xxhash.h is header-only here (XXH_INLINE_ALL), so the host's copy serves.
flags=(-std=c++17 -O2 -Wall -Wextra -Wshadow -Werror -pthread
  -I"$repo_root/include" -I"$repo_root/plugin" -I"$repo_root/tests"
  -I"$repo_root/tests/format" -isystem "$gtest/include" -isystem /usr/include
  "-DCUCKOO_GOLDEN_DIR=\"$repo_root/tests/format/golden\"")
mkdir -p "$work"
[ "$(echo | $cxx -dM -E - | grep -c '__BYTE_ORDER__ __ORDER_BIG_ENDIAN__')" -eq 1 ] ||
  { log "$cxx does not target a big-endian machine"; exit 1; }

# GoogleTest once; the project's sources every time, two at a time.
if [ ! -f "$work/gtest.a" ]; then
  log "compiling GoogleTest for s390x"
  $cxx -std=c++17 -O1 -pthread -isystem "$gtest/include" -I"$gtest" \
    -c "$gtest/src/gtest-all.cc" -o "$work/gtest-all.o"
  $cxx -std=c++17 -O1 -pthread -isystem "$gtest/include" \
    -c "$gtest/src/gtest_main.cc" -o "$work/gtest_main.o"
  s390x-linux-gnu-ar rcs "$work/gtest.a" "$work/gtest-all.o" "$work/gtest_main.o"
fi
core_sources=("$repo_root"/tests/*_test.cc)
format_sources=("$repo_root"/tests/format/golden_format_test.cc)
log "compiling ${#core_sources[@]} core test files and the format test for s390x"
compile() { $cxx "${flags[@]}" -c "$1" -o "$work/$(basename "$1" .cc).o"; }
running=()
for source in "${core_sources[@]}" "${format_sources[@]}"; do
  compile "$source" &
  running+=($!)
  if ((${#running[@]} == 2)); then
    wait "${running[0]}"
    running=("${running[@]:1}")
  fi
done
for pid in "${running[@]}"; do wait "$pid"; done

objects() { for source in "$@"; do echo "$work/$(basename "$source" .cc).o"; done; }
# Static, for qemu-user; the linker's note that GoogleTest's unused
# streaming listener calls getaddrinfo is left out.
link() {  # output objects...
  local output=$1
  shift
  $cxx -static -pthread "$@" "$work/gtest.a" -o "$work/$output" 2>&1 |
    { grep -v -e getaddrinfo -e 'SocketWriter::MakeConnection' >&2 || true; }
}
link core_tests $(objects "${core_sources[@]}")
link format_tests $(objects "${format_sources[@]}")

failures=0
for program in core_tests format_tests; do
  started=$(date +%s)
  if qemu-s390x "$work/$program" --gtest_brief=1 >"$work/$program.log" 2>&1; then
    log "$program on s390x (big-endian, qemu-user): $(grep -E '^\[  PASSED  \]' "$work/$program.log") ($(($(date +%s) - started)) s)"
  else
    tail -n 40 "$work/$program.log" >&2
    log "$program on s390x: FAILED (log: $work/$program.log)"
    failures=$((failures + 1))
  fi
done
exit $((failures != 0))
