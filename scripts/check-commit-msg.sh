#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# Checks commit messages against the project's habits (CONTRIBUTING.md): a
# subject of at most 72 characters, without a trailing period, then a blank
# line before any body. As a git commit-msg hook it checks the message being
# committed:
#   ln -s ../../scripts/check-commit-msg.sh .git/hooks/commit-msg
#
# usage: scripts/check-commit-msg.sh MESSAGE_FILE
#        scripts/check-commit-msg.sh --range REVISIONS   (e.g. origin/main..HEAD)
#   exits 1 naming each message that breaks a rule.
set -euo pipefail

max_subject=72
usage="usage: scripts/check-commit-msg.sh MESSAGE_FILE | --range REVISIONS"

# check NAME: the message on standard input; prints what is wrong.
check() {
  local name=$1 subject second problems=0
  # Comment lines are what git strips from an edited message.
  local message
  message=$(grep -v '^#' || true)
  subject=$(sed -n 1p <<<"$message")
  second=$(sed -n 2p <<<"$message")
  if [ -z "$subject" ]; then
    echo "$name: the subject is empty"
    return 1
  fi
  if [ "${#subject}" -gt "$max_subject" ]; then
    echo "$name: the subject has ${#subject} characters, more than $max_subject: $subject"
    problems=1
  fi
  if [[ "$subject" == *. ]]; then
    echo "$name: the subject ends with a period: $subject"
    problems=1
  fi
  if [ -n "$second" ]; then
    echo "$name: the subject is not followed by a blank line (put the detail in the body)"
    problems=1
  fi
  return "$problems"
}

if [ "${1:-}" = "--range" ]; then
  range=${2:?$usage}
  status=0
  for commit in $(git rev-list --no-merges "$range"); do
    git log -1 --format=%B "$commit" | check "commit ${commit:0:12}" || status=1
  done
  exit "$status"
fi
[ $# -eq 1 ] && [ -f "$1" ] || { echo "$usage" >&2; exit 2; }
check "commit message" <"$1"
