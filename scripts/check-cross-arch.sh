#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# Other architectures: builds the core's unit tests and the golden-format
# tests with Debian's cross compiler for ARCH (GoogleTest compiled from
# /usr/src/googletest), and runs them under qemu-user.
#   s390x    big-endian: the golden tests build the committed blocks (written
#            on a little-endian host) from their keys and must get the same
#            bytes, and must read them back, so a filter written on either
#            byte order is readable on the other.
#   aarch64  arm64 (Graviton, Ampere): char is unsigned, XXH3 takes its NEON
#            path (the golden blocks pin its hashes), loads may be unaligned.
# qemu-user cannot show weak memory ordering: ConcurrentCuckooFilter's
# protocol is argued from the C++ memory model in its header and runs under
# ThreadSanitizer.
#
# usage: scripts/check-cross-arch.sh [ARCH...]   (default: s390x aarch64;
#        installs its packages when run as root)
#   BUILD_DIR  the work folders' parent (default: build)
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/cross.sh"
repo_root=$cuckoo_repo_root
# The tests find the golden blocks at tests/format/golden, relative to the
# checkout: a flag that names no clone keeps the compiler cache's objects
# good for every clone.
cd "$repo_root"
archs=("$@")
((${#archs[@]})) || archs=(s390x aarch64)

packages=(qemu-user libgtest-dev libxxhash-dev)
for arch in "${archs[@]}"; do
  case "$arch" in
    s390x | aarch64) packages+=("g++-$arch-linux-gnu") ;;
    *) log "unknown architecture $arch (s390x, aarch64)"; exit 2 ;;
  esac
done
cuckoo_install_packages check-cross-arch "${packages[@]}"

# check_arch ARCH: builds and runs the tests for one architecture.
check_arch() {
  local arch=$1
  local work=${BUILD_DIR:-$repo_root/build}/$arch
  local cxx=$arch-linux-gnu-g++
  local gtest=/usr/src/googletest/googletest
  # xxhash.h is header-only here (XXH_INLINE_ALL), so the host's copy serves.
  local flags=(-std=c++17 -O2 -Wall -Wextra -Wshadow -Werror -pthread
    -I"$repo_root/include" -I"$repo_root/plugin" -I"$repo_root/counting_bloom" -I"$repo_root/tests"
    -I"$repo_root/tests/format" -isystem "$gtest/include" -isystem /usr/include
    '-DCUCKOO_GOLDEN_DIR="tests/format/golden"')
  mkdir -p "$work"
  # What each architecture is here to check must hold for its compiler.
  local defines
  defines=$(echo | $cxx -dM -E -)
  case "$arch" in
    s390x) grep -q '__BYTE_ORDER__ __ORDER_BIG_ENDIAN__' <<<"$defines" ||
      { log "$cxx does not target a big-endian machine"; return 1; } ;;
    aarch64) grep -q '__CHAR_UNSIGNED__ 1' <<<"$defines" &&
      grep -q '__ARM_NEON 1' <<<"$defines" ||
      { log "$cxx does not target arm64 with unsigned char and NEON"; return 1; } ;;
  esac

  # GoogleTest once; the project's sources every time, two at a time.
  log "compiling GoogleTest for $arch (once)"
  cuckoo_cross_gtest "$cxx" "$arch-linux-gnu-ar" "$work"
  local core_sources=("$repo_root"/tests/*_test.cc "$repo_root"/tests/counting_bloom/*_test.cc
    "$repo_root"/tests/plugin/monkey_budgets_test.cc)
  local format_sources=("$repo_root"/tests/format/golden_format_test.cc)
  log "compiling ${#core_sources[@]} core test files and the format test for $arch"
  cuckoo_compile_each "$work" "$cxx" "${flags[@]}" -- \
    "${core_sources[@]}" "${format_sources[@]}"

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

local failures=0 program started
for program in core_tests format_tests; do
  started=$(date +%s)
  if "qemu-$arch" "$work/$program" --gtest_brief=1 >"$work/$program.log" 2>&1; then
    log "$program on $arch (qemu-user): $(grep -E '^\[  PASSED  \]' "$work/$program.log") ($(($(date +%s) - started)) s)"
  else
    tail -n 40 "$work/$program.log" >&2
    log "$program on $arch: FAILED (log: $work/$program.log)"
    failures=$((failures + 1))
  fi
done
return $((failures != 0))
}

status=0
for arch in "${archs[@]}"; do
  check_arch "$arch" || status=1
done
exit "$status"
