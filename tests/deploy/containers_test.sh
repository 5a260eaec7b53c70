#!/usr/bin/env bash
# Lints deploy/containers/*.Dockerfile offline (no Docker here): every COPY
# source exists in the repository, the build stage copies the whole tree (a
# list of folders missed every folder added after it) and installs the
# dashboard's npm packages before CMake needs them, .dockerignore keeps
# build trees and installed packages out, every --target built is an
# executable the CMake files define, the ENTRYPOINT is a binary the file
# installs, and the coordinator's runtime image has no LibTorch. Broken
# copies prove the COPY checks.
# Usage: containers_test.sh SOURCE_DIR
set -euo pipefail
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

lint() {  # lint DOCKERFILE: prints problems, returns 1 if any
  local f=$1 bad=0 s t e
  for s in $(sed -n 's/^COPY \([^-][^ ]*\) .*/\1/p' "$f"); do
    [ -e "$src/$s" ] || { echo "$f: COPY source $s does not exist"; bad=1; }
  done
  for t in $(sed -n 's/.*--target \(.*\)/\1/p' "$f" | sed 's/\\$//; s/&&.*//'); do
    grep -rqs --include=CMakeLists.txt "add_executable($t " "$src" \
      || { echo "$f: --target $t is not an executable in the CMake files"; bad=1; }
  done
  grep -qx 'COPY \. \.' "$f" || { echo "$f: the build stage does not copy the whole tree (COPY . .)"; bad=1; }
  awk '/npm ci/{n=NR} /cmake -S/{c=NR} END{exit !(n && c && n < c)}' "$f" \
    || { echo "$f: no 'npm ci' in dashboard/ before cmake configures (the server embeds Vega)"; bad=1; }
  e=$(sed -n 's/^ENTRYPOINT \["\([^"]*\)".*/\1/p' "$f")
  [ -n "$e" ] || { echo "$f: no ENTRYPOINT"; bad=1; }
  grep -q "/out$e" "$f" || { echo "$f: ENTRYPOINT $e is not installed by this file"; bad=1; }
  [ "$(grep -c '^FROM ' "$f")" -ge 2 ] || { echo "$f: not a multi-stage build"; bad=1; }
  return $bad
}

files=$(ls "$src"/deploy/containers/*.Dockerfile)
for f in coordinator worker-cpu worker-cuda; do
  [ -f "$src/deploy/containers/$f.Dockerfile" ] || fail "$f.Dockerfile missing"
done
for f in $files; do lint "$f" || fail "$f"; done
for ignored in build '**/node_modules' .git; do
  grep -qxF "$ignored" "$src/.dockerignore" || fail ".dockerignore does not leave out $ignored"
done

# The coordinator's runtime stage (after the last FROM) links no LibTorch.
runtime=$(awk '/^FROM /{n++} n>=2' "$src/deploy/containers/coordinator.Dockerfile")
if printf '%s\n' "$runtime" | grep -qi torch; then fail "coordinator runtime image mentions torch"; fi
grep -q 'PARADNN_BUILD_RUNNER=OFF' "$src/deploy/containers/coordinator.Dockerfile" \
  || fail "coordinator image must build without the runner"
grep -q 'cmake_prefix_path' "$src/deploy/containers/worker-cuda.Dockerfile" \
  || fail "CUDA worker must build against the wheel's LibTorch"

# Negative cases: a COPY of a missing folder, and a build stage that copies
# a list of folders instead of the tree, are caught and named.
sed 's/^COPY \. \.$/COPY no-such-folder server/' \
  "$src/deploy/containers/coordinator.Dockerfile" >"$tmp/bad.Dockerfile"
cmp -s "$tmp/bad.Dockerfile" "$src/deploy/containers/coordinator.Dockerfile" && fail "negative case changed nothing"
if lint "$tmp/bad.Dockerfile" >"$tmp/bad.log"; then fail "a COPY of a missing folder passed"; fi
grep -q no-such-folder "$tmp/bad.log" || fail "the COPY problem is not named"
grep -q "does not copy the whole tree" "$tmp/bad.log" || fail "a partial copy is not named"
echo "containers: $(echo "$files" | wc -l) Dockerfiles linted"
