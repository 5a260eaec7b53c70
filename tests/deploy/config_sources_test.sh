#!/usr/bin/env bash
# Settings of the real binaries from a --config file, overridden by PARADNN_*
# variables, overridden by flags, read back with --print-config; and each
# --help names the variables and --config.
# Usage: config_sources_test.sh BIN_DIR
set -euo pipefail
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# Only the variables this test sets.
for v in $(env | sed -n 's/^\(PARADNN_[A-Z_]*\)=.*/\1/p'); do
  case $v in PARADNN_BIN_DIR|PARADNN_SOURCE_DIR) ;; *) unset "$v" ;; esac
done

expect() {  # expect OUTPUT KEY=VALUE
  printf '%s\n' "$1" | grep -qx -- "$2" || { printf '%s\n' "$1" >&2; fail "expected $2"; }
}

cat >"$tmp/coordinator.toml" <<'TOML'
# coordinator settings
log-level = "warn"
max-attempts = 7
shutdown-grace-seconds = 11
TOML
out=$("$bin/paradnn-coordinator" --config "$tmp/coordinator.toml" --print-config)
expect "$out" 'log-level="warn"'
expect "$out" 'max-attempts=7'
out=$(PARADNN_LOG_LEVEL=error PARADNN_MAX_ATTEMPTS=8 \
      "$bin/paradnn-coordinator" --config "$tmp/coordinator.toml" --print-config)
expect "$out" 'log-level="error"'
expect "$out" 'max-attempts=8'
expect "$out" 'shutdown-grace-seconds=11'
out=$(PARADNN_LOG_LEVEL=error PARADNN_MAX_ATTEMPTS=8 \
      "$bin/paradnn-coordinator" --config "$tmp/coordinator.toml" --max-attempts 9 --print-config)
expect "$out" 'log-level="error"'
expect "$out" 'max-attempts=9'
# A value from the environment is checked like a flag's.
if PARADNN_MAX_ATTEMPTS=1000 "$bin/paradnn-coordinator" --print-config >"$tmp/out" 2>&1; then
  fail "PARADNN_MAX_ATTEMPTS=1000 was accepted (allowed: 1..100)"
fi
# A misspelt key in the file is refused, naming it.
printf 'max-attempt = 3\n' >"$tmp/typo.toml"
if "$bin/paradnn-coordinator" --config "$tmp/typo.toml" --print-config >"$tmp/out" 2>&1; then
  fail "a config key no option has was accepted"
fi
grep -q 'max-attempt' "$tmp/out" || { cat "$tmp/out"; fail "the error does not name the key"; }

printf 'drain-seconds = 3\ndevice = "cpu"\n' >"$tmp/worker.toml"
out=$(PARADNN_DRAIN_SECONDS=4 "$bin/paradnn-worker" --config "$tmp/worker.toml" --print-config)
expect "$out" 'drain-seconds=4'
out=$(PARADNN_DRAIN_SECONDS=4 "$bin/paradnn-worker" --config "$tmp/worker.toml" --drain-seconds 5 \
      --print-config)
expect "$out" 'drain-seconds=5'

printf 'timeout = 12\n' >"$tmp/cli.toml"
out=$(PARADNN_COORDINATOR=example:1 "$bin/paradnn" --config "$tmp/cli.toml" --print-config)
expect "$out" 'timeout=12'
expect "$out" 'coordinator="example:1"'
out=$(PARADNN_TIMEOUT=13 "$bin/paradnn" --config "$tmp/cli.toml" --print-config)
expect "$out" 'timeout=13'

for b in paradnn-coordinator paradnn-worker paradnn; do
  help=$("$bin/$b" --help)
  for needle in '--config' '--print-config' 'PARADNN_LOG_LEVEL'; do
    printf '%s\n' "$help" | grep -q -- "$needle" || fail "$b --help does not mention $needle"
  done
done
echo "config sources: file < environment < flags for coordinator, worker and CLI"
