#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (unit, integration,
# fault) with ctest, as many at once as there are CPUs
# (PARADNN_TEST_JOBS=N to choose). Tests that must not share the CPU or a
# resource say so in their ctest properties (PROCESSORS, RESOURCE_LOCK,
# RUN_SERIAL; docs/extending.md "Tests, and the fast loop"). Extra arguments go to ctest.
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
exec ctest --output-on-failure --timeout 900 -j "${PARADNN_TEST_JOBS:-$(nproc)}" "$@"
