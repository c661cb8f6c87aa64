#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# filter_compare's I/O-bound regime reads storage with direct I/O. In a
# folder on tmpfs (memory, which accepts O_DIRECT since Linux 6.6) it must
# stop before building anything, name the file system, and leave no work
# folder behind. Skipped (77) where /dev/shm is not a tmpfs.
#
# usage: compare_storage_test.sh PATH/TO/filter_compare
set -euo pipefail
filter_compare=${1:?usage: compare_storage_test.sh PATH/TO/filter_compare}
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" != tmpfs ]; then
  echo "skipped: /dev/shm is not a tmpfs here"
  exit 77
fi
folder=$(mktemp -d /dev/shm/compare_storage_test.XXXXXX)
trap 'rm -rf "$folder"' EXIT
status=0
message=$("$filter_compare" --db="$folder/work" --num=1000 2>&1) || status=$?
if [ "$status" -ne 1 ]; then
  echo "FAILED: exit status $status, not 1: $message"
  exit 1
fi
if ! grep -c 'is on tmpfs, which is memory' <<<"$message" >/dev/null; then
  echo "FAILED: the message does not name tmpfs: $message"
  exit 1
fi
if [ -e "$folder/work" ]; then
  echo "FAILED: the work folder was left behind"
  exit 1
fi
echo "ok: $message"
# The memory regime alone needs no direct I/O.
"$filter_compare" --db="$folder/memory" --num=1000 --regimes=memory \
  --repetitions=1 --reads=100 --fpr_budgets=10 --fpr_keys=1000 \
  --fpr_probes=1000 >/dev/null 2>&1
echo "ok: --regimes=memory runs there"
