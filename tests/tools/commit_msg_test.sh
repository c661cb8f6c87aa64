#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# scripts/check-commit-msg.sh accepts a message that keeps the habits and
# refuses each rule broken, naming it.
set -euo pipefail
check=${1:?usage: commit_msg_test.sh CHECK_COMMIT_MSG_SCRIPT}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
expect() {  # expect accept|refuse TEXT_IN_OUTPUT MESSAGE
  local want=$1 text=$2 output status=0
  printf '%b' "$3" >"$work/message"
  output=$("$check" "$work/message" 2>&1) || status=$?
  if [ "$want" = accept ] && [ "$status" -eq 0 ]; then
    echo "ok: accepted: $(head -n 1 "$work/message")"
  elif [ "$want" = refuse ] && [ "$status" -eq 1 ] && [[ "$output" == *"$text"* ]]; then
    echo "ok: refused ($text)"
  else
    echo "FAILED: wanted $want with '$text', got status $status: $output"
    failures=$((failures + 1))
  fi
}
expect accept "" 'Add a filter policy option\n\nWhy, and the figures.\n'
expect accept "" 'Fix a subject of exactly seventy-two characters, which is still fine, ok\n'
expect accept "" '# a comment git strips\nSubject only\n'
expect refuse "more than 72" 'Fix a subject of exactly seventy-three characters, which is one too many!\n'
expect refuse "ends with a period" 'Add a thing.\n'
expect refuse "not followed by a blank line" 'Add a thing\nwith the body glued on\n'
expect refuse "subject is empty" '\n\nBody without a subject\n'
[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
