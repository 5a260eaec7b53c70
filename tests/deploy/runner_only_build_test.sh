#!/usr/bin/env bash
# The runner-only build (-DPARADNN_RUNNER_ONLY=ON, for a GPU host whose
# LibTorch is not Debian's; scripts/device-visit.sh) configures with only
# what paradnn-runner needs: gRPC, Boost, yaml-cpp, Eigen, pkg-config
# (SQLite) and GoogleTest are disabled outright, so configuring fails if any
# of them is still looked for, and cmake reports each as never asked for.
# Then the build graph must hold paradnn-runner and none of the other
# programs. Configure only (a few seconds): the build itself is the same
# runner sources every full build compiles.
#   runner_only_build_test.sh SOURCE_DIR
set -euo pipefail
source_dir=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
disabled=(gRPC Boost yaml-cpp Eigen3 PkgConfig GTest)
args=()
for package in "${disabled[@]}"; do args+=("-DCMAKE_DISABLE_FIND_PACKAGE_${package}=ON"); done
if ! cmake -S "$source_dir" -B "$work/build" -G Ninja -DPARADNN_RUNNER_ONLY=ON "${args[@]}" \
    > "$work/configure.log" 2>&1; then
  cat "$work/configure.log"
  echo "FAIL: the runner-only build does not configure without ${disabled[*]}"
  exit 1
fi
for package in "${disabled[@]}"; do
  if ! grep -q "CMAKE_DISABLE_FIND_PACKAGE_${package}$" "$work/configure.log"; then
    cat "$work/configure.log"
    echo "FAIL: the runner-only build still looks for ${package}"
    exit 1
  fi
done
targets=$(ninja -C "$work/build" -t targets all | cut -d: -f1)
grep -qx "paradnn-runner" <<< "$targets" || { echo "FAIL: no paradnn-runner target"; exit 1; }
for program in paradnn paradnn-coordinator paradnn-worker; do
  if grep -qx "$program" <<< "$targets"; then
    echo "FAIL: the runner-only build has a $program target"
    exit 1
  fi
done
if grep -q "grpc" <<< "$(ninja -C "$work/build" -t commands paradnn-runner)"; then
  echo "FAIL: the runner's build commands mention grpc"
  exit 1
fi
ninja -C "$work/build" -n paradnn-runner > /dev/null
echo "runner-only build: configures without ${disabled[*]}; paradnn-runner alone, no grpc"
