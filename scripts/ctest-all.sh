#!/usr/bin/env bash
# Runs the whole ctest suite of the build folder it is started in, as
# scripts/test.sh does: PARADNN_TEST_JOBS (default: the CPUs) tests that use
# a CPU at once, each taking one of that many "cpus" slots, and up
# to as many again of the tests labelled "waits", which take none.
# Extra arguments go to ctest.
set -euo pipefail
cpus=${PARADNN_TEST_JOBS:-$(nproc)}
spec=$(mktemp)
trap 'rm -f "$spec"' EXIT
printf '{"version": {"major": 1, "minor": 0}, "local": [{"cpus": [{"id": "0", "slots": %d}]}]}\n' \
  "$cpus" > "$spec"
ctest --output-on-failure --timeout 900 -j "$((2 * cpus))" --resource-spec-file "$spec" "$@"
