#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# Installs the Debian packages the project builds against and fetches the
# matching RocksDB source tree (for its internal filter header). Idempotent:
# a second run changes nothing.
#
# usage: scripts/setup.sh [BUILD_DIR]    (default: build)
#   prints the RocksDB source tree root on its last line.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
repo_root=$cuckoo_repo_root
build_dir=${1:-$repo_root/build}

# git is for the release test (scripts/release.sh clones the checkout); a
# tree copied onto a minimal Debian has a .git folder but no git.
# The compression libraries and Ninja are for RocksDB's own builds from
# source (scripts/build-rocksdb.sh); jemalloc is the allocator the filter
# memory tests and benchmarks preload besides glibc's; ccache is the
# compiler cache of every build (scripts/lib/common.sh).
required_packages=(make pkgconf git librocksdb-dev rocksdb-tools libxxhash-dev libgtest-dev
  libbenchmark-dev libgflags-dev cmake g++ clang libclang-rt-14-dev gnuplot-nox
  python3 ninja-build libsnappy-dev liblz4-dev libzstd-dev zlib1g-dev libbz2-dev
  libjemalloc2 ccache redis-server redis-tools python3-redis python3-pytest)

cuckoo_install_packages setup "${required_packages[@]}"

"$repo_root/scripts/fetch-rocksdb-source.sh" "$build_dir/rocksdb-source"
