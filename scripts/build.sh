#!/usr/bin/env bash
# Configures and builds paradnn into ./build (Release with debug info).
# Extra arguments go to cmake's configure step. PARADNN_BUILD_TARGETS (space
# separated) builds only those targets; unset, everything (tests included).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
if [[ -n "${PARADNN_BUILD_TARGETS:-}" ]]; then
  read -r -a targets <<< "$PARADNN_BUILD_TARGETS"
  cmake --build build -j "$jobs" --target "${targets[@]}"
else
  cmake --build build -j "$jobs"
fi
