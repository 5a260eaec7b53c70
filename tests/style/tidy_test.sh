#!/usr/bin/env bash
# clang-tidy's bugprone-* and performance-* checks (.clang-tidy) over every
# project source that does not include LibTorch, with the build's own
# compile commands. Any finding fails the test and is printed with its
# check's name. The LibTorch translation units (worker/runner/ beyond its
# torch-free core) take about 30 s each to parse and are left out to keep
# CI well under its budget; bench/ and tests/ are left out as well (gtest's
# macros are findings of their own).
#
#   tidy_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
source_dir=$1
build_dir=$2
if [[ ! -f "$build_dir/compile_commands.json" ]]; then
  echo "no $build_dir/compile_commands.json (CMakeLists.txt turns CMAKE_EXPORT_COMPILE_COMMANDS on)"
  exit 1
fi
cd "$source_dir"
mapfile -t files < <(git ls-files -- 'client/*.cc' 'common/*.cc' 'db/*.cc' 'model/*.cc' \
  'server/*.cc' 'worker/*.cc' | while read -r f; do
    grep -qE '#include [<"](torch/|ATen/|c10/)|"worker/runner/(model_builder|trainer|models/)' "$f" \
      || echo "$f"
  done)
echo "clang-tidy over ${#files[@]} files"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# One clang-tidy per file, as many at once as there are CPUs; a file's
# findings make its clang-tidy exit non-zero (WarningsAsErrors).
status=0
printf '%s\n' "${files[@]}" \
  | xargs -P "$(nproc)" -n 1 clang-tidy -p "$build_dir" --quiet > "$log" 2>&1 || status=$?
# Only our findings: "file:line:col: error|warning: ... [check]".
if grep -E '^[^ ]+:[0-9]+:[0-9]+: (error|warning): .*\[[a-z0-9.,-]+\]$' "$log"; then
  echo
  echo "clang-tidy found the above (fix them, or say why in a NOLINT(check): reason)"
  exit 1
fi
if [[ $status -ne 0 ]]; then
  tail -50 "$log"
  echo "clang-tidy failed (status $status) without a finding of ours"
  exit 1
fi
echo "no findings"
