#!/bin/bash
# Every C++ file git tracks is formatted as .clang-format says (Google style,
# 100 columns). Prints each file that is not, with the command that fixes it,
# and a sample of the difference; fails if any is not.
set -u
source_dir="$1"
cd "$source_dir" || exit 2
if ! command -v clang-format >/dev/null; then
  echo "clang-format is missing: apt-get install clang-format (scripts/install-deps.sh --test does)"
  exit 1
fi
mapfile -t files < <(git ls-files '*.cc' '*.h')
if [ "${#files[@]}" -eq 0 ]; then
  echo "no C++ files found under $source_dir (not a git checkout?)"
  exit 1
fi
bad=()
for f in "${files[@]}"; do
  [ -f "$f" ] || continue
  if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then bad+=("$f"); fi
done
echo "checked ${#files[@]} files with $(clang-format --version)"
if [ "${#bad[@]}" -ne 0 ]; then
  echo "${#bad[@]} not formatted; fix with: clang-format -i ${bad[*]}"
  for f in "${bad[@]:0:3}"; do
    diff -u "$f" <(clang-format "$f") | head -20
  done
  exit 1
fi
echo "all formatted"
