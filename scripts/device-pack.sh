#!/usr/bin/env bash
# Packs what a GPU host's visit needs (scripts/device-visit.sh) into one
# folder, .device/ by default (git-ignored; the device tool carries it):
#   bin/   paradnn, paradnn-coordinator, paradnn-worker built here, stripped
#          (no LibTorch: the GPU host builds its own paradnn-runner), and
#          paradnn_jax_runner.py (python/: its package and protobuf modules)
#   lib/   their shared-library closure beyond glibc (gRPC, protobuf, abseil,
#          SQLite, ...), found with ldd
#   debs/  the Debian packages of the headers and libraries the runner-only
#          build needs (protobuf, abseil, spdlog, fmt, CLI11, nlohmann-json)
#          and python3-protobuf for the JAX runner, fetched with apt-get
#          download; the visit unpacks them with dpkg -x into a prefix
#   cpu.db the same sweeps measured on this host's CPU (--cpu-db FILE, or
#          measured now with --measure-cpu), for analyze speedup
# Usage: scripts/device-pack.sh [--out DIR] [--cpu-db FILE | --measure-cpu]
# Needs a full build in build/ (scripts/build.sh). Prints the folder's size,
# which must stay under the device tool's 64 MiB.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.device
cpu_db=""
measure_cpu=false
while (($#)); do
  case $1 in
    --out) out=$2; shift 2 ;;
    --cpu-db) cpu_db=$2; shift 2 ;;
    --measure-cpu) measure_cpu=true; shift ;;
    *) echo "device-pack: unknown argument '$1' (--out DIR, --cpu-db FILE, --measure-cpu)" >&2; exit 2 ;;
  esac
done
for binary in paradnn paradnn-coordinator paradnn-worker paradnn_jax_runner.py; do
  [ -e "build/bin/$binary" ] || { echo "device-pack: build/bin/$binary is missing: run scripts/build.sh" >&2; exit 1; }
done
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/debs"

for binary in paradnn paradnn-coordinator paradnn-worker; do
  strip -o "$out/bin/$binary" "build/bin/$binary"
done
# The JAX runner finds its package and protobuf modules in ../python/.
cp build/bin/paradnn_jax_runner.py "$out/bin/"
cp -r build/python "$out/python"

# The closure beyond what every glibc host has (libc, libm, ld.so, ...):
# libstdc++ and libgcc_s travel too (Debian 12's, GCC 12).
ldd "$out/bin/paradnn" "$out/bin/paradnn-coordinator" "$out/bin/paradnn-worker" \
  | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u \
  | grep -vE '/(libc|libm|libdl|librt|libpthread|libresolv|ld-linux[^/]*)\.so' \
  | while read -r library; do cp -L "$library" "$out/lib/"; done

packages=(libprotobuf-dev libprotobuf32 libprotoc32 protobuf-compiler libabsl-dev libabsl20220623
          libspdlog-dev libspdlog1.10 libfmt-dev libfmt9 libcli11-dev nlohmann-json3-dev zlib1g-dev
          python3-protobuf)
(cd "$out/debs" && apt-get download "${packages[@]}" 2>&1 | grep -v "unsandboxed" || true)
for package in "${packages[@]}"; do
  ls "$out/debs/${package}_"*.deb > /dev/null 2>&1 || { echo "device-pack: apt-get download $package failed" >&2; exit 1; }
done

if [ -n "$cpu_db" ]; then
  cp "$cpu_db" "$out/cpu.db"
elif $measure_cpu; then
  # The device's sweeps at CPU-sized extents: speedup pairs configurations
  # measured on both (scripts/device-sweeps/*.yaml, device: cpu).
  for sweep in scripts/device-sweeps/cpu-*.yaml; do
    build/bin/paradnn local --db "$out/cpu.db" "$sweep" --format csv > /dev/null
  done
  rm -f "$out/cpu.db.lock"
fi
du -sh "$out"
size=$(du -sm "$out" | cut -f1)
if ((size > 60)); then
  echo "device-pack: $out is $size MiB; the device tool carries at most 64 MiB in all" >&2
  exit 1
fi
