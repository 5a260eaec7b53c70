#!/usr/bin/env bash
# Builds the sweep fuzzers (clang, ASan + UBSan + libFuzzer) in ./build-fuzz
# and runs one of them: ./scripts/fuzz.sh [SECONDS] [sweep_file|sweep_spec]
# (default: 600 seconds of sweep_file).
#
# The run starts from the kept corpus (tests/fuzz/corpus/NAME) and the
# regression inputs (tests/fuzz/regressions/NAME); new inputs go to
# build-fuzz/fuzz/NAME/new, crashes to build-fuzz/fuzz/NAME/artifacts. With
# PARADNN_FUZZ_KEEP=1 the new inputs are then minimized with the kept corpus
# (-merge=1 -use_counters=0) into tests/fuzz/corpus/NAME, for committing.
# Extra libFuzzer flags: PARADNN_FUZZ_FLAGS="-jobs=1 ...".
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
name=${2:-sweep_file}
case "$name" in
  sweep_file | sweep_spec) ;;
  *) echo "fuzz.sh: unknown fuzzer '$name'; sweep_file or sweep_spec" >&2; exit 2 ;;
esac
build=build-fuzz
jobs=$(nproc 2>/dev/null || echo 2)

if [ ! -f "$build/CMakeCache.txt" ]; then
  CC=${CC:-clang} CXX=${CXX:-clang++} cmake -S . -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPARADNN_FUZZ=ON -DPARADNN_BUILD_TESTS=OFF \
    -DPARADNN_BUILD_RUNNER=OFF -DPARADNN_MODULES="common;worker/runner"
fi
cmake --build "$build" --target "paradnn_${name}_fuzzer" -j "$jobs"

work=$build/fuzz/$name
mkdir -p "$work/new" "$work/artifacts" "tests/fuzz/corpus/$name" "tests/fuzz/regressions/$name"
fuzzer=$build/bin/paradnn_${name}_fuzzer
flags=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -max_len=4096
       -print_final_stats=1 -artifact_prefix="$work/artifacts/")
[ "$name" = sweep_file ] && flags+=(-dict=tests/fuzz/sweep_file.dict)
# shellcheck disable=SC2086
"$fuzzer" "${flags[@]}" ${PARADNN_FUZZ_FLAGS:-} "$work/new" "tests/fuzz/corpus/$name" \
  "tests/fuzz/regressions/$name"

if [ "${PARADNN_FUZZ_KEEP:-0}" = 1 ]; then
  merged=$work/merged
  rm -rf "$merged" && mkdir -p "$merged"
  # -use_counters=0: keep an input for the edges it reaches, not for how
  # often; the corpus stays a few hundred small files.
  "$fuzzer" -merge=1 -use_counters=0 -max_len=4096 -timeout=10 "$merged" \
    "tests/fuzz/corpus/$name" "$work/new"
  rm -f "tests/fuzz/corpus/$name"/*
  cp "$merged"/* "tests/fuzz/corpus/$name"/
  echo "fuzz.sh: tests/fuzz/corpus/$name holds $(ls "tests/fuzz/corpus/$name" | wc -l) inputs"
fi
