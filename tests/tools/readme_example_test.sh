#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# The README's dynamic-filter example compiles against the core as written
# and prints what its comments say: the C++ block after the line
# "<!-- readme_example_test -->" is built with the project's warnings, run,
# and each printed line compared with the "// value" comment of the printf
# that wrote it.
#
# usage: readme_example_test.sh README CXX INCLUDE_DIR
set -euo pipefail
readme=${1:?usage: readme_example_test.sh README CXX INCLUDE_DIR}
cxx=${2:?usage: readme_example_test.sh README CXX INCLUDE_DIR}
include_dir=${3:?usage: readme_example_test.sh README CXX INCLUDE_DIR}
fail() {
  echo "readme_example_test: $*" >&2
  exit 1
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
awk '/^<!-- readme_example_test -->$/ { marked = 1; next }
     marked && /^```cpp$/ { inside = 1; next }
     inside && /^```$/ { exit }
     inside { print }' "$readme" >"$work/example.cc"
[ -s "$work/example.cc" ] || fail "no C++ block after the marker in $readme"
grep -q 'int main' "$work/example.cc" || fail "the marked block has no main()"

"$cxx" -std=c++17 -O1 -Wall -Wextra -Wshadow -Werror -I"$include_dir" \
  $(pkg-config --cflags libxxhash) "$work/example.cc" -o "$work/example" \
  $(pkg-config --libs libxxhash) || fail "the example does not compile"
"$work/example" >"$work/printed" || fail "the example exits with an error"
sed -n 's|.*std::printf(.*// *\([^ ].*\)$|\1|p' "$work/example.cc" >"$work/expected"
[ -s "$work/expected" ] || fail "no printf with a // value comment"
diff -u "$work/expected" "$work/printed" ||
  fail "the example prints other values than its comments say"
echo "readme_example_test: the example prints $(paste -sd' ' "$work/printed"), as its comments say"
