#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (unit, integration,
# fault) with ctest: as many tests that use a CPU at once as there are CPUs
# (PARADNN_TEST_JOBS=N to choose), and beside them the tests labelled
# "waits", which mostly wait and take no CPU slot (ctest's resource
# allocation, scripts/ctest-all.sh; docs/extending.md "Tests, and the fast
# loop"). Extra arguments go to ctest.
# Prints how long each phase took (bench/ci_time.sh reads these lines).
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
./scripts/install-deps.sh
installed=$(date +%s)
./scripts/build.sh
built=$(date +%s)
echo "test.sh: install-deps $((installed - started)) s, build $((built - installed)) s"
cd build
exec ../scripts/ctest-all.sh "$@"
