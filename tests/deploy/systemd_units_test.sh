#!/usr/bin/env bash
# Installs the build into a temporary prefix (cmake --install) and checks what
# lands there: the binaries, the systemd units with ExecStart= naming the
# prefix, and `systemd-analyze verify` of the coordinator unit and three
# instances of the worker template (cpu, cuda:0, and cpu0, a name that is no
# device: one of several workers of a host), with no warning at all. Two
# broken copies (an unknown key, a missing binary) prove that verify catches
# them. The worker's settings come from the unit's Environment= and two
# optional env files: the environment a unit instance gets is put together
# here as systemd would and read back by the installed paradnn-worker.
# Usage: systemd_units_test.sh BUILD_DIR
set -euo pipefail
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; fail "cmake --install"; }

for b in paradnn paradnn-coordinator paradnn-worker; do
  [ -x "$prefix/bin/$b" ] || fail "$b not installed in $prefix/bin"
done
if [ -x "$build/bin/paradnn-runner" ]; then
  [ -x "$prefix/bin/paradnn-runner" ] || fail "paradnn-runner was built but not installed"
fi
units=$prefix/lib/systemd/system
for f in "$units/paradnn-coordinator.service" "$units/paradnn-worker@.service" \
         "$prefix/lib/sysusers.d/paradnn.conf" \
         "$prefix/share/doc/paradnn/coordinator.env.example" \
         "$prefix/share/doc/paradnn/worker.env.example" \
         "$prefix/share/doc/paradnn/worker-instance.env.example" \
         "$prefix/share/doc/paradnn/deployment.md"; do
  [ -s "$f" ] || fail "$f not installed"
done
grep -q "^ExecStart=$prefix/bin/paradnn-coordinator\$" "$units/paradnn-coordinator.service" \
  || fail "coordinator ExecStart does not name $prefix/bin: $(grep ExecStart "$units/paradnn-coordinator.service")"
grep -q "^ExecStart=$prefix/bin/paradnn-worker\$" "$units/paradnn-worker@.service" \
  || fail "worker ExecStart does not name $prefix/bin: $(grep ExecStart "$units/paradnn-worker@.service")"
if grep -n "@[A-Z_]*@" "$units"/*.service; then fail "unreplaced @VARIABLE@ in a unit"; fi

# verify UNIT... in DIR: prints what systemd-analyze said; returns its status,
# or 1 when it exited 0 but warned (unknown keys are only warnings).
verify() {
  local dir=$1; shift
  local out rc=0
  out=$(cd "$tmp" && SYSTEMD_UNIT_PATH="$dir:" systemd-analyze verify "$@" 2>&1) || rc=$?
  # Lines about units outside ours (the host's own) are not ours to judge.
  out=$(printf '%s\n' "$out" | grep -v '^$' | grep -E 'paradnn|Unknown|not executable|Failed|rror' || true)
  printf '%s\n' "$out"
  [ "$rc" -eq 0 ] && [ -z "$out" ]
}

# (cuda:0 escaped: systemd-analyze verify 252 takes a ':' in a name for a
# path; systemctl takes either spelling, and %I unescapes both to cuda:0.)
verify "$units" paradnn-coordinator.service paradnn-worker@cpu.service \
  'paradnn-worker@cuda\x3a0.service' paradnn-worker@cpu0.service >"$tmp/verify.log" \
  || { cat "$tmp/verify.log"; fail "systemd-analyze verify found problems in the installed units"; }

# Negative cases: verify must notice a misspelt key and a missing binary.
bad=$tmp/bad && mkdir -p "$bad"
sed 's/^ProtectHome=yes/ProtectHom=yes/' "$units/paradnn-worker@.service" >"$bad/paradnn-worker@.service"
grep -q '^ProtectHom=' "$bad/paradnn-worker@.service" || fail "negative case not made"
if verify "$bad" paradnn-worker@cpu.service >"$tmp/bad.log"; then
  fail "systemd-analyze verify accepted a unit with an unknown key"
fi
grep -q "ProtectHom" "$tmp/bad.log" || { cat "$tmp/bad.log"; fail "the warning does not name the key"; }
rm -f "$bad"/*
sed "s#^ExecStart=.*#ExecStart=$tmp/no-such-binary#" "$units/paradnn-coordinator.service" \
  >"$bad/paradnn-coordinator.service"
if verify "$bad" paradnn-coordinator.service >"$tmp/bad.log"; then
  fail "systemd-analyze verify accepted a unit whose binary is missing"
fi

# systemd must wait longer than the binaries' own shutdown: the coordinator's
# --shutdown-grace-seconds and the worker's --drain-seconds (their defaults,
# read back from the installed binaries).
seconds() { sed -n "s/^$1=\([0-9.]*\)\$/\1/p"; }
timeout_of() { sed -n 's/^TimeoutStopSec=\([0-9]*\)s$/\1/p' "$1"; }
grace=$("$prefix/bin/paradnn-coordinator" --print-config | seconds shutdown-grace-seconds)
drain=$("$prefix/bin/paradnn-worker" --print-config | seconds drain-seconds)
[ -n "$grace" ] && [ -n "$drain" ] || fail "could not read the grace/drain defaults"
ct=$(timeout_of "$units/paradnn-coordinator.service")
wt=$(timeout_of "$units/paradnn-worker@.service")
awk -v t="$ct" -v g="$grace" 'BEGIN { exit !(t > g) }' || fail "coordinator TimeoutStopSec=$ct <= grace $grace"
awk -v t="$wt" -v d="$drain" 'BEGIN { exit !(t > d) }' || fail "worker TimeoutStopSec=$wt <= drain $drain"
grep -q '^KillMode=mixed$' "$units/paradnn-worker@.service" \
  || fail "worker unit must signal only the worker (KillMode=mixed) so that it can drain its runner"

. "$(dirname "$0")/systemd_worker_env.sh"
check_worker_instances "$units/paradnn-worker@.service" \
  "$prefix/share/doc/paradnn/worker-instance.env.example" "$prefix/bin/paradnn-worker"

echo "systemd units: installed to $prefix, verified ($(systemd-analyze --version | head -1))"
