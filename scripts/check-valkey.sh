#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# The CF module in Valkey 8: builds valkey-server and valkey-cli from
# Debian trixie's source package as Debian builds them (lib/servers.sh,
# cached outside the tree), and runs the module's tests (tests/module)
# against it: the same binary module that Redis 7.0 loads. About 3 minutes
# the first time, then 2.
#
# usage: scripts/check-valkey.sh [PYTEST_ARG...]
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/servers.sh"

cuckoo_setup
server=$(cf_server_build valkey)
"$server" --version >&2

cuckoo_configure_and_build "$cuckoo_repo_root/build" --targets cuckoo_cf_module
CUCKOO_CF_MODULE=$cuckoo_repo_root/build/module/librocksdb_cuckoo_cf.so \
  CUCKOO_CF_SERVER=$server \
  /usr/bin/python3 -m pytest -q -p no:cacheprovider "$cuckoo_repo_root/tests/module" "$@"
