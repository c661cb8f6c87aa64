# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# Shared by the cross-architecture checks (sourced, not run): GoogleTest for
# a target, and compiling a set of sources two at a time, as on the host.
#
# usage: source "$(dirname "${BASH_SOURCE[0]}")/lib/cross.sh", after lib/common.sh

# cuckoo_cross_gtest CXX AR WORK: gives WORK/gtest.a (GoogleTest and its
# main, from the host's /usr/src/googletest) built with the cross compiler
# CXX and archiver AR, once per compiler: the library is built in
# gtest-CXX beside WORK, which the checks of one target (check-cross-arch.sh
# for aarch64, check-arm64-db.sh) share.
cuckoo_cross_gtest() {
  local cxx=$1 ar=$2 work=$3
  local gtest=/usr/src/googletest/googletest
  local shared
  shared="$(dirname "$work")/gtest-$(basename "$cxx")"
  if [ ! -f "$shared/gtest.a" ]; then
    mkdir -p "$shared"
    $cuckoo_ccache $cxx -std=c++17 -O1 -pthread -isystem "$gtest/include" -I"$gtest" \
      -c "$gtest/src/gtest-all.cc" -o "$shared/gtest-all.o"
    $cuckoo_ccache $cxx -std=c++17 -O1 -pthread -isystem "$gtest/include" \
      -c "$gtest/src/gtest_main.cc" -o "$shared/gtest_main.o"
    "$ar" rcs "$shared/gtest.a.tmp" "$shared/gtest-all.o" "$shared/gtest_main.o"
    mv "$shared/gtest.a.tmp" "$shared/gtest.a"
  fi
  ln -sfn "$shared/gtest.a" "$work/gtest.a"
}

# cuckoo_compile_each WORK CXX FLAGS... -- SOURCE...: compiles each SOURCE to
# WORK/<its name>.o, two at a time, through the compiler cache; fails if any
# fails.
cuckoo_compile_each() {
  local work=$1 cxx=$2
  shift 2
  local flags=()
  while [ "$1" != "--" ]; do
    flags+=("$1")
    shift
  done
  shift
  cuckoo_compile_into_work() {
    $cuckoo_ccache $cxx "${flags[@]}" -c "$1" -o "$work/$(basename "$1" .cc).o"
  }
  cuckoo_each_two_at_a_time cuckoo_compile_into_work -- "$@"
}
