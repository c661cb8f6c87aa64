#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# The CF module under active defragmentation, which Debian's redis-server
# and Valkey refuse (they are built on the system's jemalloc): builds Redis
# 7.0.15 and Valkey 8.1.1 from Debian's source packages with their own
# jemalloc (lib/servers.sh, cached outside the tree) and runs the module's
# defragmentation tests (tests/module/test_cf_defrag.py) in each, where
# they may not skip. About 4 minutes the first time, then under 1.
#
# usage: scripts/check-defrag.sh [PYTEST_ARG...]
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/servers.sh"

cuckoo_setup
cuckoo_configure_and_build "$cuckoo_repo_root/build" --targets cuckoo_cf_module
for kind in redis-jemalloc valkey-jemalloc; do
  server=$(cf_server_build "$kind")
  log "$("$server" --version)"
  CUCKOO_CF_MODULE=$cuckoo_repo_root/build/module/librocksdb_cuckoo_cf.so \
    CUCKOO_CF_SERVER=$server CUCKOO_CF_REQUIRE_DEFRAG=1 \
    /usr/bin/python3 -m pytest -q -p no:cacheprovider \
    "$cuckoo_repo_root/tests/module/test_cf_defrag.py" "$@"
done
