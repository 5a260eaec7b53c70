#!/usr/bin/env bash
# The GPU visit's script without a GPU (issue 22): scripts/device-pack.sh
# packs the stripped coordinator, worker and CLI with their library closure
# and the .debs, then scripts/device-visit.sh --cpu runs on that pack (the
# carried binaries on LD_LIBRARY_PATH, the built runner given with --runner:
# the runner-only build is deploy_runner_only_build_test's) with tiny CPU
# sweeps: coordinator, worker with calibration, three sweeps, results,
# platforms and summary in OUT, at most 8 files.
#   device_visit_test.sh SOURCE_DIR BIN_DIR
set -euo pipefail
source_dir=$1
bin_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$source_dir/scripts/device-pack.sh" --out "$work/pack" > "$work/pack.log" 2>&1 ||
  { cat "$work/pack.log"; fail "device-pack.sh"; }
for f in bin/paradnn bin/paradnn-coordinator bin/paradnn-worker bin/paradnn_jax_runner.py; do
  [ -f "$work/pack/$f" ] || fail "the pack has no $f"
done
ls "$work/pack/lib/"libgrpc++*.so* > /dev/null 2>&1 || fail "the pack's lib/ lacks gRPC"
ls "$work/pack/debs/"libprotobuf-dev_*.deb > /dev/null 2>&1 || fail "the pack lacks libprotobuf-dev"

mkdir -p "$work/sweeps"
# A tiny CPU sweep for the visit: sweeps/cpu-FILE.yaml, named visit-FILE,
# of FAMILY with PARAMS, each configuration measured for half a second.
cpu_sweep() {
  local file=$1 family=$2 params=$3
  printf 'name: visit-%s\nfamily: %s\ndevice: cpu\nparams: {%s}\n%s\n' "$file" "$family" "$params" \
    'run: {max_seconds: 0.5, warmup_steps: 1}' > "$work/sweeps/cpu-$file.yaml"
}
cpu_sweep fc fc 'layer: 2, node: {values: [64, 128]}, input: 100, output: 10, batch: 32'
cpu_sweep cnn cnn 'block: 1, filter: 16, image: 200, output: 10, batch: 2, block_fn: residual'
cpu_sweep lstm rnn 'layer: 1, embed: 32, length: 8, vocab: 100, batch: 4, cell: lstm'
PARADNN_VISIT_SECONDS=400 "$source_dir/scripts/device-visit.sh" "$work/out" --cpu \
  --runner "$bin_dir/paradnn-runner" --pack "$work/pack" --sweeps "$work/sweeps" \
  > "$work/visit.out" 2>&1 || { cat "$work/visit.out"; fail "device-visit.sh --cpu"; }
for f in paradnn.db results.csv platforms.json summary.txt visit.log logs.txt; do
  [ -s "$work/out/$f" ] || { cat "$work/visit.out"; fail "OUT has no $f"; }
done
[ -e "$work/out/paradnn.db.lock" ] && fail "OUT kept the coordinator's lock file"
files=$(ls "$work/out" | wc -l)
((files <= 8)) || fail "OUT holds $files files; the device tool brings back 8"
# CSV fields may hold line breaks (quoted): count rows with a CSV reader.
read -r rows ok < <(python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
print(len(rows), sum(r["outcome"] == "OK" for r in rows))' "$work/out/results.csv")
((rows == 4)) || { cat "$work/out/results.csv"; fail "results.csv has $rows jobs, not 4"; }
((ok == rows)) || { cat "$work/out/results.csv"; fail "$((rows - ok)) job(s) did not measure OK"; }
grep -q '"matmul_roofs"' "$work/out/platforms.json" || fail "platforms.json has no calibrated roofs"
grep -q "CPU fallback" "$work/out/visit.log" || fail "visit.log does not say it ran the CPU fallback"
grep -q "skipped: the JAX stage" "$work/out/visit.log" || grep -q "cpu-jax" "$work/out/visit.log" ||
  fail "visit.log says nothing of the JAX stage"
echo "device visit (CPU fallback): $rows jobs OK, $files files, $(tail -1 "$work/out/visit.log")"
