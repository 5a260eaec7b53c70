#!/usr/bin/env bash
# The main job from a fresh Debian 12 machine: install what is missing,
# build, then run the quick sweep through an embedded coordinator and one
# local worker. Results stay in ./paradnn.db.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
./scripts/install-deps.sh
installed=$(date +%s)
# Only the four programs `paradnn local` runs (the CLI, the coordinator, the
# worker and the LibTorch runner), not the test suite: scripts/test.sh builds
# the rest.
PARADNN_BUILD_TARGETS="paradnn paradnn-coordinator paradnn-worker paradnn-runner" ./scripts/build.sh
built=$(date +%s)
# bench/ci_time.sh reads this line.
echo "quickstart.sh: install-deps $((installed - started)) s, build $((built - installed)) s"
exec build/bin/paradnn local examples/quick.yaml "$@"
