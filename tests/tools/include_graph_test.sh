#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# The core's headers include each other one way only: the graph of their
# "cuckoo/..." includes has no cycle. With #pragma once a cycle still
# compiles, but then which definitions a file sees depends on which header
# was included first.
#
# usage: include_graph_test.sh INCLUDE_DIR   (the directory holding cuckoo/)
set -euo pipefail
include_dir=${1:?usage: include_graph_test.sh INCLUDE_DIR}
declare -A includes state
for header in "$include_dir"/cuckoo/*.h; do
  name=cuckoo/$(basename "$header")
  includes[$name]=$(sed -n 's|^#include "\(cuckoo/[^"]*\)".*|\1|p' "$header" |
    tr '\n' ' ')
done
# Depth-first search; state is "open" while a header is on the path.
path=()
visit() {
  local name=$1 next
  case "${state[$name]:-}" in
    done) return 0 ;;
    open)
      echo "include cycle: ${path[*]} $name" >&2
      return 1
      ;;
  esac
  state[$name]=open
  path+=("$name")
  for next in ${includes[$name]:-}; do
    visit "$next" || return 1
  done
  unset 'path[${#path[@]}-1]'
  state[$name]=done
}
for name in "${!includes[@]}"; do
  visit "$name"
done
echo "${#includes[@]} headers, no include cycle"
