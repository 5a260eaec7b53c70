#!/usr/bin/env bash
# One GPU host visit in one command (issue 22, docs/backends.md): builds
# paradnn-runner against the host's CUDA LibTorch (-DPARADNN_RUNNER_ONLY=ON,
# headers and libraries from the carried .debs unpacked into a prefix), then
# with the carried coordinator, worker and CLI (scripts/device-pack.sh):
# calibrates the GPU (matmul roofs of float32/tf32/bfloat16/float16, HBM
# bandwidth, fingerprint, theoretical peaks), measures the FC, CNN and LSTM
# sweeps of scripts/device-sweeps/ on LibTorch, checks data parallelism
# (params.devices: 1 runs, more than the host's GPUs is refused or held),
# then FC and CNN on JAX, and
# compares with the CPU results measured here (the pack's cpu.db). Without
# a GPU (or with --cpu) it runs the same path on the CPU with the cpu-*
# sweeps: what CI and a session without a device check.
#
#   scripts/device-visit.sh OUT [--cpu] [--runner PATH] [--pack DIR] [--sweeps DIR]
#
# OUT receives at most 8 files: paradnn.db, results.csv, platforms.json,
# speedup.txt, summary.txt, visit.log, logs.txt and tune.txt (paradnn tune
# on the host's CPU cores, on the GPU host or with PARADNN_VISIT_TUNE=1). Every stage checks the time
# left of PARADNN_VISIT_SECONDS (default 450) and is skipped, said so, when
# it would not fit. --runner uses a built runner instead of building one;
# --sweeps takes the {gpu,cpu}-{fc,cnn,lstm}.yaml files from another folder.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=""
pack=$root/.device
runner=""
sweeps=$root/scripts/device-sweeps
force_cpu=false
while (($#)); do
  case $1 in
    --cpu) force_cpu=true; shift ;;
    --runner) runner=$2; shift 2 ;;
    --pack) pack=$2; shift 2 ;;
    --sweeps) sweeps=$2; shift 2 ;;
    -*) echo "device-visit: unknown flag '$1' (--cpu, --runner PATH, --pack DIR, --sweeps DIR)" >&2
        exit 2 ;;
    *) out=$1; shift ;;
  esac
done
[ -n "$out" ] || { echo "usage: device-visit.sh OUT [--cpu] [--runner PATH] [--pack DIR]" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
budget=${PARADNN_VISIT_SECONDS:-450}
start=$SECONDS
work=$(mktemp -d /tmp/paradnn-visit-XXXXXX)
pids=()

log() { echo "[$(date +%T) +$((SECONDS - start))s] $*" | tee -a "$out/visit.log" >&2; }
left() { echo $((budget - (SECONDS - start))); }
# fits SECONDS WHAT: true when SECONDS fit in what is left, else says so.
fits() {
  if (($(left) > $1)); then return 0; fi
  log "skipped: $2 (needs ~$1 s, $(left) s left)"
  return 1
}
finish() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  wait 2>/dev/null
  # The coordinator's lock file is not a result: it would take one of the 8.
  rm -f "$out/paradnn.db.lock"
  for f in "$work"/*.log; do
    [ -f "$f" ] && { echo "==> $(basename "$f")"; tail -n 200 "$f"; }
  done > "$out/logs.txt"
  rm -rf "$work"
  log "done in $((SECONDS - start)) s; files in $out: $(ls "$out" | tr '\n' ' ')"
}
trap finish EXIT

# ---- what this host has -------------------------------------------------------
device=cpu
if ! $force_cpu && command -v nvidia-smi > /dev/null && nvidia-smi -L > "$work/gpus.txt" 2>&1; then
  device=cuda
  log "GPU: $(head -1 "$work/gpus.txt"); driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
else
  log "no GPU (or --cpu): the CPU fallback, with the cpu-*.yaml sweeps of $sweeps"
fi
python=${PARADNN_TORCH_PYTHON:-/opt/torch/.venv/bin/python}
[ -x "$python" ] || python=$(command -v python3)
torch_prefix=$("$python" -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null || true)
log "python $python; torch cmake prefix '${torch_prefix:-none (Debian LibTorch)}'"

# ---- the carried packages, unpacked into a prefix (never into /) ----------------
prefix=$work/prefix
mkdir -p "$prefix"
for deb in "$pack"/debs/*.deb; do
  [ -f "$deb" ] || continue
  if command -v dpkg > /dev/null; then
    dpkg -x "$deb" "$prefix"
  else  # a .deb is an ar archive holding data.tar.*
    "$python" - "$deb" "$prefix" <<'PY'
import io, sys, tarfile
data = open(sys.argv[1], "rb").read()
pos = 8
while pos < len(data):
    name = data[pos:pos + 16].decode().strip().rstrip("/")
    size = int(data[pos + 48:pos + 58].decode().strip())
    body = data[pos + 60:pos + 60 + size]
    if name.startswith("data.tar"):
        tarfile.open(fileobj=io.BytesIO(body)).extractall(sys.argv[2])
    pos += 60 + size + (size & 1)
PY
  fi
done
multiarch=$prefix/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH="$pack/lib:$multiarch${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# ---- paradnn-runner against this host's LibTorch -------------------------------
if [ -z "$runner" ]; then
  fits 240 "building paradnn-runner" || exit 1
  # ProcessGroupNCCL's header needs nccl.h: the wheel's nvidia-nccl package has it.
  nccl_include=""
  if [ -n "$torch_prefix" ]; then
    nccl_h=$(find "$torch_prefix/../../../nvidia" -name nccl.h 2>/dev/null | head -1)
    [ -n "$nccl_h" ] && nccl_include=$(dirname "$nccl_h")
  fi
  log "building paradnn-runner (runner-only, -j$(nproc)); nccl.h in '${nccl_include:-none found}'"
  if ! cmake -S "$root" -B "$work/runner-build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DPARADNN_RUNNER_ONLY=ON -DPARADNN_WERROR=OFF ${nccl_include:+-DPARADNN_NCCL_INCLUDE_DIR="$nccl_include"} \
      -DCMAKE_PREFIX_PATH="$prefix/usr;$multiarch/cmake;${torch_prefix}" \
      -DProtobuf_PROTOC_EXECUTABLE="$prefix/usr/bin/protoc" > "$work/runner-build.log" 2>&1 ||
     ! cmake --build "$work/runner-build" -j "$(nproc)" --target paradnn-runner \
      >> "$work/runner-build.log" 2>&1; then
    # The NCCL replica group is the part least certain to compile against
    # this LibTorch: without it the runner still measures one GPU per job.
    log "the runner build failed; again without NCCL replicas. Its log ends:"
    tail -n 40 "$work/runner-build.log" >&2
    cp "$work/runner-build.log" "$work/runner-build-nccl.log"
    if ! cmake "$work/runner-build" -DPARADNN_NCCL=OFF >> "$work/runner-build.log" 2>&1 ||
       ! cmake --build "$work/runner-build" -j "$(nproc)" --target paradnn-runner \
        >> "$work/runner-build.log" 2>&1; then
      log "FAILED: the runner build; its log ends:"; tail -n 40 "$work/runner-build.log" >&2
      exit 1
    fi
  fi
  runner=$work/runner-build/bin/paradnn-runner
fi
bin=$work/bin
mkdir -p "$bin"
cp -r "$pack/bin/." "$bin/"
[ -d "$pack/python" ] && cp -r "$pack/python" "$work/python"
cp "$runner" "$bin/paradnn-runner"
log "runner: $("$bin/paradnn-runner" --version 2>&1 | head -1)"

# ---- coordinator and the sweeps ----------------------------------------------------
[ -f "$pack/cpu.db" ] && cp "$pack/cpu.db" "$out/paradnn.db"
socket=unix:$work/coordinator.sock
"$bin/paradnn-coordinator" --db "$out/paradnn.db" --listen "$socket" \
  --address-file "$work/address" > "$work/coordinator.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -s "$work/address" ] && break; sleep 0.1; done
cli() { "$bin/paradnn" --coordinator "$socket" "$@"; }
cli status > /dev/null || { log "FAILED: the coordinator did not start"; exit 1; }

# start_worker NAME ARGS...: a worker of this device; waits until it is connected.
start_worker() {
  local name=$1; shift
  "$bin/paradnn-worker" --coordinator "$socket" --worker-id "$name" --device "$device" \
    --state-dir "$work/state" "$@" > "$work/$name.log" 2>&1 &
  pids+=($!)
  worker_pid=$!
  for _ in $(seq 600); do
    cli workers --format csv 2>/dev/null | grep -q "^$name,.*\(idle\|busy\)" && return 0
    kill -0 "$worker_pid" 2>/dev/null || break
    sleep 0.5
  done
  log "FAILED: worker $name did not connect; its log ends:"; tail -n 20 "$work/$name.log" >&2
  return 1
}
# measure FILE...: submits each sweep and waits for it within the time left.
sweep_ids=()
measure() {
  for file in "$@"; do
    fits 60 "$(basename "$file")" || continue
    local id
    id=$(cli submit "$file" -q) || { log "FAILED: submit $file"; continue; }
    sweep_ids+=("$id")
    if timeout $(($(left) - 45)) "$bin/paradnn" --coordinator "$socket" watch "$id" > /dev/null 2>&1; then
      log "sweep $id ($(basename "$file")): $(cli status "$id" --format csv | tail -1)"
    else
      cli cancel "$id" > /dev/null 2>&1
      log "sweep $id ($(basename "$file")) cut short: $(cli status "$id" --format csv | tail -1)"
    fi
  done
}

# data_parallel: params.devices on this host's GPUs. The runner refuses more
# replicas than visible GPUs; the coordinator holds a job of more devices
# than the worker lends (Platform.cuda_device_count) and runs the rest.
data_parallel() {
  local gpus id
  gpus=$(grep -c '^GPU' "$work/gpus.txt")
  "$bin/paradnn-runner" --family fc --layer 4 --node 4096 --input 2000 --output 1000 \
    --batch 4096 --precision bfloat16 --devices $((gpus + 1)) --device cuda --max-seconds 1 \
    > "$work/ddp-runner.log" 2>&1
  log "runner, devices $((gpus + 1)) on $gpus GPU(s): $(grep -m1 -E 'outcome|error' "$work/ddp-runner.log" | tr -s ' ') / $(grep -m1 -i 'devices' "$work/ddp-runner.log")"
  id=$(cli submit "$sweeps/gpu-ddp.yaml" -q) || { log "FAILED: submit gpu-ddp.yaml"; return; }
  sweep_ids+=("$id")
  for _ in $(seq 90); do
    [ "$(cli results "$id" --format csv | grep -c ',OK,')" -ge 1 ] && break
    sleep 1
  done
  sleep 3  # the worker asks again: the devices=2 job must stay pending
  log "sweep $id (gpu-ddp.yaml, devices [1, 2] on a worker lending $gpus GPU(s)): $(cli status "$id" --format csv | tail -1)"
  cli cancel "$id" > /dev/null 2>&1
}

kind=$([ "$device" = cuda ] && echo gpu || echo cpu)
if fits 120 "the LibTorch worker (calibration and sweeps)" &&
   start_worker "$kind-libtorch" --runner "$bin/paradnn-runner" --calibrate always; then
  log "calibrated: $(grep -m1 'calibrated roofs' "$work/$kind-libtorch.log" | sed 's/.*calibrated roofs/roofs/')"
  measure "$sweeps/$kind-fc.yaml" "$sweeps/$kind-cnn.yaml" "$sweeps/$kind-lstm.yaml"
  if [ "$device" = cuda ] && fits 100 "data parallelism (gpu-ddp.yaml)"; then data_parallel; fi
  kill "$worker_pid" 2>/dev/null; wait "$worker_pid" 2>/dev/null
fi
if "$python" -c 'import jax' 2> /dev/null; then
  export PARADNN_JAX_PYTHON=$python
  # Debian's python3-protobuf (carried), pure Python, where the venv has none.
  if ! "$python" -c 'import google.protobuf' 2> /dev/null; then
    export PYTHONPATH=$prefix/usr/lib/python3/dist-packages PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python
  fi
  if fits 90 "the JAX worker" &&
     start_worker "$kind-jax" --backend jax --runner "$bin/paradnn_jax_runner.py" --calibrate always; then
    measure "$sweeps/$kind-fc.yaml" "$sweeps/$kind-cnn.yaml"
    kill "$worker_pid" 2>/dev/null; wait "$worker_pid" 2>/dev/null
  fi
else
  log "skipped: the JAX stage ($python has no jax)"
fi

# tune: the framework-tuning benchmark's FC on this host's CPU cores (issue
# 40's 16-core run), last, in what time is left; on the GPU host, or where
# PARADNN_VISIT_TUNE=1 asks for it on the CPU path.
if [ "$device" = cuda ] || [ "${PARADNN_VISIT_TUNE:-0}" = 1 ]; then
  if fits 150 "paradnn tune on $(nproc) CPUs ($sweeps/tune-fc.yaml)"; then
    "$bin/paradnn" tune "$sweeps/tune-fc.yaml" --db "$work/tune.db" --search-rounds 1 \
      --confirm-rounds 2 > "$out/tune.txt" 2> "$work/tune.log"
    log "paradnn tune (exit $?): $(grep -m1 -A1 '^geometric mean' "$out/tune.txt" | tail -1 | tr -s ' ')"
  fi
fi

# ---- what comes back ----------------------------------------------------------------
if ((${#sweep_ids[@]})); then
  cli results "${sweep_ids[@]}" --format csv > "$out/results.csv" 2>> "$work/cli.log"
  cli workers --format json > "$out/platforms.json" 2>> "$work/cli.log"
  {
    echo "# paradnn device visit: $device, $((SECONDS - start)) s"
    cli workers
    cli results "${sweep_ids[@]}"
  } > "$out/summary.txt" 2>> "$work/cli.log"
  if [ "$device" = cuda ] && [ -f "$pack/cpu.db" ]; then
    cpu_ids=$(cli status --format csv | awk -F, 'NR > 1 && $4 == "cpu" {print $1}' | tr '\n' ' ')
    # shellcheck disable=SC2086
    cli analyze speedup ${cpu_ids} "${sweep_ids[@]}" --field device_kind --baseline cpu \
      --candidate cuda > "$out/speedup.txt" 2>&1
  fi
  cat "$out/summary.txt" >&2
fi
