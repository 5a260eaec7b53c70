# Sourced by systemd_units_test.sh (which defines fail): the settings each
# paradnn-worker@ instance starts with. systemd-analyze verify does not read
# environment files, so the environment of an instance is put together here
# as systemd does (the unit's Environment= with %I, %i and %H replaced, then
# each EnvironmentFile= that exists, a later assignment winning; no
# specifiers inside the files) and the installed paradnn-worker reads it back
# with --print-config.

# instance_env UNIT INSTANCE [ENV_FILE]: NAME=VALUE lines, one per variable.
instance_env() {
  local unit=$1 instance=$2 file=${3:-} host
  host=$(hostname)
  {
    sed -n 's/^Environment=//p' "$unit" | tr ' ' '\n' |
      sed -e "s/%I/$instance/g" -e "s/%i/$instance/g" -e "s/%H/$host/g"
    if [ -n "$file" ]; then grep -E '^[A-Z_][A-Z0-9_]*=' "$file"; fi
  } | awk '{ name = substr($0, 1, index($0, "=") - 1)
             if (!(name in value)) order[++n] = name
             value[name] = $0 }
           END { for (i = 1; i <= n; i++) print value[order[i]] }'
}

# setting_of WORKER ENV_LINES KEY: the worker's --KEY under exactly that
# environment, quotes removed.
setting_of() {
  local worker=$1 lines=$2 key=$3
  local -a vars
  mapfile -t vars <<<"$lines"
  env -i "${vars[@]}" "$worker" --print-config | sed -n "s/^$key=//p" | tr -d '"'
}

# expect_settings WORKER ENV_LINES KEY=VALUE...
expect_settings() {
  local worker=$1 lines=$2 pair got
  shift 2
  for pair in "$@"; do
    got=$(setting_of "$worker" "$lines" "${pair%%=*}")
    [ "$got" = "${pair#*=}" ] || fail "${pair%%=*} is '$got', expected '${pair#*=}' from: $lines"
  done
}

# check_worker_instances UNIT INSTANCE_ENV_EXAMPLE WORKER
check_worker_instances() {
  local unit=$1 example=$2 worker=$3 host
  host=$(hostname)
  # Both files optional ('-'), the instance's last so that it wins.
  [ "$(sed -n 's/^EnvironmentFile=//p' "$unit" | tr '\n' ' ')" = \
    "-/etc/paradnn/worker.env -/etc/paradnn/worker-%i.env " ] ||
    fail "the worker unit's EnvironmentFile= lines are not the two optional files, the instance's last: $(grep EnvironmentFile= "$unit")"
  grep -q '^RestartPreventExitStatus=2$' "$unit" ||
    fail "the worker unit restarts a worker that refused its settings (exit 2)"

  # paradnn-worker@cpu without an env file: the instance is the device.
  expect_settings "$worker" "$(instance_env "$unit" cpu)" device=cpu "worker-id=$host-cpu" \
    state-dir=/var/lib/paradnn-worker/cpu cpus= rendezvous-port=0 advertise-address=

  # paradnn-worker@cpu0 and @cpu1: two workers of one host, each with its
  # own id, state, CPUs and rendezvous port from its env file.
  local second=$tmp/worker-cpu1.env
  sed -e 's/^PARADNN_CPUS=0-7$/PARADNN_CPUS=8-15/' \
    -e 's/^PARADNN_RENDEZVOUS_PORT=29500$/PARADNN_RENDEZVOUS_PORT=29501/' "$example" >"$second"
  grep -q '^PARADNN_CPUS=8-15$' "$second" && grep -q '^PARADNN_RENDEZVOUS_PORT=29501$' "$second" ||
    fail "worker-instance.env.example no longer sets PARADNN_CPUS=0-7 and PARADNN_RENDEZVOUS_PORT=29500"
  expect_settings "$worker" "$(instance_env "$unit" cpu0 "$example")" device=cpu \
    "worker-id=$host-cpu0" state-dir=/var/lib/paradnn-worker/cpu0 cpus=0-7 rendezvous-port=29500
  expect_settings "$worker" "$(instance_env "$unit" cpu1 "$second")" device=cpu \
    "worker-id=$host-cpu1" state-dir=/var/lib/paradnn-worker/cpu1 cpus=8-15 rendezvous-port=29501
  local -a vars
  mapfile -t vars <<<"$(instance_env "$unit" cpu0 "$example")"
  vars+=("PARADNN_ADVERTISE_ADDRESS=10.0.0.5")
  [ "$(env -i "${vars[@]}" "$worker" --print-config | sed -n 's/^advertise-address=//p')" = \
    '"10.0.0.5"' ] || fail "PARADNN_ADVERTISE_ADDRESS is not the worker's --advertise-address"

  # paradnn-worker@cpu0 without its file: no such device, refused at once
  # with exit status 2 (not restarted), naming the setting.
  local out rc=0
  mapfile -t vars <<<"$(instance_env "$unit" cpu0)"
  out=$(env -i "${vars[@]}" timeout 60 "$worker" 2>&1) || rc=$?
  [ "$rc" -eq 2 ] || fail "an instance named cpu0 without its env file exited $rc, not 2: $out"
  grep -q -- "--device: 'cpu0' is not one of" <<<"$out" ||
    fail "an instance named cpu0 without its env file: the refusal does not name --device: $out"
}
