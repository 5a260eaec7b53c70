#!/usr/bin/env bash
# How long the README's two commands take from a fresh clone, beside their
# targets (issue 35): clones the repository into a temporary folder, then
# times scripts/quickstart.sh and, after it, scripts/test.sh, each as a
# whole and by phase (install-deps, build, the sweep or ctest). Packages are
# expected to be installed already (install-deps then only checks; its time
# is printed apart). Also prints the slowest build steps and tests, the
# biggest remaining costs.
#
#   bench/ci_time.sh [--ref REV] [--ci] [--suite-runs N] [--keep]
#     --ref REV        what to clone (default HEAD; commit what you measure)
#     --ci             also time .ci/run alone in a second fresh clone (the
#                      CI case: test.sh building everything from nothing)
#     --suite-runs N   then run the whole ctest suite N more times in the
#                      first clone, as test.sh runs it, and count failures
#     --keep           keep the clones (printed) instead of removing them
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ref=HEAD
ci=0
suite_runs=0
keep=0
while (($#)); do
  case $1 in
    --ref) ref=$2; shift 2 ;;
    --ci) ci=1; shift ;;
    --suite-runs) suite_runs=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h | --help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "ci_time.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

# Targets, seconds (issue 35).
readonly quickstart_target=360 test_target=720 ci_target=1200

work=$(mktemp -d /tmp/paradnn-ci-time.XXXXXX)
if ((keep)); then
  echo "ci_time.sh: clones kept under $work"
else
  trap 'rm -rf "$work"' EXIT
fi

fresh_clone() {  # fresh_clone DIR
  git clone -q --no-local "$root" "$1"
  git -C "$1" checkout -q --detach "$(git -C "$root" rev-parse "$ref")"
}

# timed LOG COMMAND...: runs COMMAND, its output to LOG; sets elapsed (s)
# and status.
timed() {
  local log=$1
  shift
  local start
  start=$(date +%s.%N)
  status=0
  "$@" > "$log" 2>&1 || status=$?
  elapsed=$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { printf "%.1f", a - b }')
}

phase() {  # phase LOG SCRIPT KEY: a number from "SCRIPT: install-deps A s, build B s"
  sed -n "s/^$2: install-deps \([0-9]*\) s, build \([0-9]*\) s$/\1 \2/p" "$1" | tail -1 \
    | cut -d' ' -f"$3"
}

ctest_seconds() {  # ctest_seconds LOG: ctest's own "Total Test time (real)"
  sed -n 's/^Total Test time (real) = *\([0-9.]*\) sec$/\1/p' "$1" | tail -1
}

row() {  # row WHAT SECONDS [TARGET]
  if [[ -n ${3:-} ]]; then
    local verdict=met
    awk -v a="$2" -v b="$3" 'BEGIN { exit !(a > b) }' && verdict=MISSED
    printf '  %-40s %8.0f s   target <= %4d s  %s\n' "$1" "$2" "$3" "$verdict"
  else
    printf '  %-40s %8.0f s\n' "$1" "$2"
  fi
}

# (sed, not head: head's early exit would fail the pipeline under pipefail.)
slowest_steps() {  # slowest_steps BUILD_DIR: the build's 10 longest steps
  awk 'NR > 1 { printf "%8.1f s  %s\n", ($2 - $1) / 1000, $4 }' "$1/.ninja_log" | sort -rn | sed -n 1,10p
}

slowest_tests() {  # slowest_tests LOG: ctest's 10 longest tests
  grep -E '^ *[0-9]+/[0-9]+ Test +#[0-9]+: ' "$1" \
    | sed -E 's/^.*Test +#[0-9]+: ([^ ]+) .* ([0-9.]+) sec$/\2 \1/' | sort -rn | sed -n 1,10p \
    | awk '{ printf "%8.1f s  %s\n", $1, $2 }'
}

cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
echo "ci_time.sh: $(git -C "$root" rev-parse --short "$ref") on $cpu, $(nproc) CPUs, $(free -g | awk '/^Mem/ {print $2}') GiB"

clone=$work/paradnn
fresh_clone "$clone"
timed "$work/quickstart.log" "$clone/scripts/quickstart.sh"
((status == 0)) || { tail -40 "$work/quickstart.log"; echo "ci_time.sh: quickstart.sh failed ($status)"; exit 1; }
quick_total=$elapsed
quick_deps=$(phase "$work/quickstart.log" quickstart.sh 1)
quick_build=$(phase "$work/quickstart.log" quickstart.sh 2)

timed "$work/test.log" "$clone/scripts/test.sh"
test_status=$status
test_total=$elapsed
test_deps=$(phase "$work/test.log" test.sh 1)
test_build=$(phase "$work/test.log" test.sh 2)
test_ctest=$(ctest_seconds "$work/test.log")

echo
echo "scripts/quickstart.sh after a fresh clone (packages installed):"
row "install-deps (apt satisfied, npm)" "$quick_deps"
row "build (4 programs)" "$quick_build"
row "the quick sweep" "$(awk -v t="$quick_total" -v d="$quick_deps" -v b="$quick_build" 'BEGIN { print t - d - b }')"
row "total" "$quick_total" "$quickstart_target"
echo "scripts/test.sh after it:"
row "install-deps" "$test_deps"
row "build (the rest: tests, benchmarks)" "$test_build"
row "ctest (scripts/ctest-all.sh)" "${test_ctest:-0}"
row "total" "$test_total" "$test_target"
grep -E '^[0-9]+% tests passed' "$work/test.log" | sed 's/^/  /'
grep -E '^\s+[0-9]+ - .*\((Failed|Timeout|Subprocess|Exception)' "$work/test.log" | sed 's/^/  failed: /' || true

if ((ci)); then
  ci_clone=$work/paradnn-ci
  fresh_clone "$ci_clone"
  timed "$work/ci.log" bash "$ci_clone/.ci/run"
  echo ".ci/run alone on a fresh clone:"
  row "install-deps" "$(phase "$work/ci.log" test.sh 1)"
  row "build (everything)" "$(phase "$work/ci.log" test.sh 2)"
  row "ctest (scripts/ctest-all.sh)" "$(ctest_seconds "$work/ci.log")"
  row "total" "$elapsed" "$ci_target"
  grep -E '^[0-9]+% tests passed' "$work/ci.log" | sed 's/^/  /'
  echo "  slowest build steps (everything from nothing):"
  slowest_steps "$ci_clone/build" | sed 's/^/  /'
fi

echo
echo "biggest remaining costs"
echo "  slowest build steps (quickstart's and test.sh's):"
slowest_steps "$clone/build" | sed 's/^/  /'
echo "  slowest tests:"
slowest_tests "$work/test.log" | sed 's/^/  /'

failed_runs=0
for ((run = 1; run <= suite_runs; run++)); do
  timed "$work/suite-$run.log" \
    bash -c 'cd "$1/build" && ../scripts/ctest-all.sh' _ "$clone"
  ((status == 0)) || failed_runs=$((failed_runs + 1))
  printf '  suite run %d: %4.0f s  %s\n' "$run" "$elapsed" \
    "$(grep -E '^[0-9]+% tests passed' "$work/suite-$run.log")"
  grep -E '^\s+[0-9]+ - ' "$work/suite-$run.log" | sed 's/^/    failed: /' || true
done
((suite_runs == 0)) || echo "  $failed_runs of $suite_runs suite runs had a failure"
((test_status == 0 && failed_runs == 0))
