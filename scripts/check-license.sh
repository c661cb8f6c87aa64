#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# The license check: both license texts are at the top of the tree, and every
# source, header, script and build file carries the project's SPDX line in its
# first five lines. Names each file that does not, and exits 1 if any.
#
# usage: scripts/check-license.sh [TREE]   (default: this repository)
#   In a git checkout it checks the files git tracks; elsewhere (a release
#   tarball) every file below TREE.
set -euo pipefail

tree=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
cd "$tree"
spdx='SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only'
# What counts as code: C and C++ sources and headers, shell, Python and
# gnuplot scripts, CMake and make files, and CI's entry point.
code_files='\.(c|cc|h|sh|py|java|map|gnuplot|cmake|cmake\.in|mk)$|(^|/)CMakeLists\.txt$|^\.ci/run$'

status=0
for license in COPYING LICENSE.Apache; do
  if [ ! -s "$license" ]; then
    echo "check-license: $license is missing" >&2
    status=1
  fi
done

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  files=$(git ls-files)
else
  files=$(find . -type f -not -path './build*' | sed 's|^\./||')
fi
missing=0
checked=0
while IFS= read -r file; do
  [ -f "$file" ] || continue
  checked=$((checked + 1))
  if ! head -n 5 "$file" | grep -qF "$spdx"; then
    echo "check-license: no '$spdx' line in $file" >&2
    missing=$((missing + 1))
  fi
done < <(grep -E "$code_files" <<<"$files")

if [ "$checked" -eq 0 ]; then
  echo "check-license: found no source files under $tree" >&2
  exit 1
fi
echo "check-license: $checked files checked, $missing without the SPDX line"
[ "$missing" -eq 0 ] || status=1
exit "$status"
