#!/usr/bin/env bash
# clang-tidy's bugprone-* and performance-* checks and clang's thread-safety
# analysis (-Wthread-safety, .clang-tidy) over every project source that
# does not include LibTorch, with the build's own compile commands. Any
# finding fails the test and is printed with its check's name. The LibTorch
# translation units (worker/runner/ beyond its torch-free core) take about
# 30 s each to parse and are left out to keep CI well under its budget;
# bench/ and tests/ are left out as well (gtest's macros are findings of
# their own). Their locking is annotated all the same (docs/style.md,
# "Locking"); only these runs do not check it.
#
# clang-tidy 22 (Debian's clang-tidy-22; CLANG_TIDY=... for another):
# clang-tidy 14's checks walked every declaration of the gRPC, protobuf and
# Abseil headers a file includes, four fifths of its time; 22 skips system
# headers, a third of 14's CPU time over the same files. What is left is
# mostly parsing those headers, so the files of one target (same compile
# command) are still checked together, as unity translation units of up to
# kUnitFiles files that include them, and the headers are parsed once per
# unit instead of once per file. Findings are reported in the file and line
# they are in, as before. Two files of one target therefore may not define
# the same internal name (a second ToGrpc in an anonymous namespace):
# clang-tidy then reports the redefinition; share the one or name them
# apart (the unity build asks the same, CMakeLists.txt PARADNN_UNITY).
#
# SHARD and SHARDS split the units: this run takes every SHARDS-th unit
# from the SHARD-th (0-based), one clang-tidy at a time, so that ctest runs
# the shards beside other tests (tests/style/CMakeLists.txt). Without them,
# every unit, as many at once as there are CPUs.
#
#   tidy_test.sh SOURCE_DIR BUILD_DIR [SHARD SHARDS]
set -euo pipefail
source_dir=$1
build_dir=$2
shard=${3:-0}
shards=${4:-1}
parallel=1
clang_tidy=${CLANG_TIDY:-clang-tidy-22}
((shards > 1)) || parallel=$(nproc)
if [[ ! -f "$build_dir/compile_commands.json" ]]; then
  echo "no $build_dir/compile_commands.json (CMakeLists.txt turns CMAKE_EXPORT_COMPILE_COMMANDS on)"
  exit 1
fi
cd "$source_dir"
mapfile -t files < <(git ls-files -- 'client/*.cc' 'common/*.cc' 'db/*.cc' 'model/*.cc' \
  'server/*.cc' 'worker/*.cc' | sort | while read -r f; do
    grep -qE '#include [<"](torch/|ATen/|c10/)|"worker/runner/(model_builder|trainer|models/)' "$f" \
      || echo "$f"
  done)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The units and their compile commands: the build's command of the group
# less its precompiled header (CMake's "-include .../cmake_pch.hxx"; clang
# would take g++'s .gch beside it for its own and stop), g++'s
# -Wno-subobject-linkage (clang does not know it) and -Werror (g++ already
# holds our code to its warnings; under it clang 22 reports libstdc++ 12's
# own use of its deprecated get_temporary_buffer as an error of ours). In a unity build the
# build's units are taken apart into their files (compile_commands.py).
mapfile -t units < <(python3 - "$(dirname "$(readlink -f "$0")")" "$build_dir" "$work" \
  "$source_dir" "$shard" "$shards" "${files[@]}" <<'PY'
import json, os, re, sys
script_dir, build_dir, work, source_dir, shard, shards = sys.argv[1:7]
sys.path.insert(0, script_dir)
from compile_commands import source_entries
wanted = {os.path.join(source_dir, f) for f in sys.argv[7:]}
kUnitFiles = 64
groups = {}
for entry in source_entries(build_dir):
    path = entry["file"]
    if path not in wanted:
        continue
    command = re.sub(r" -Werror| -Winvalid-pch| -Wno-subobject-linkage| -include \S*/cmake_pch\.hxx",
                     "", entry["command"])
    key = re.sub(r" -o \S+| -c \S+", "", command)
    groups.setdefault((entry["directory"], key), []).append(path)
missing = wanted - {p for paths in groups.values() for p in paths}
if missing:
    sys.exit("tidy_test: not in the build's compile commands: " + " ".join(sorted(missing)))
units = []
for (directory, key), paths in sorted(groups.items(), key=lambda g: sorted(g[1])[0]):
    paths.sort()
    for start in range(0, len(paths), kUnitFiles):
        units.append((directory, key, paths[start:start + kUnitFiles]))
commands = []
for index, (directory, key, paths) in enumerate(units):
    if index % int(shards) != int(shard):
        continue
    unit = os.path.join(work, f"unit{index}.cc")
    with open(unit, "w") as out:
        for path in paths:
            out.write(f'#include "{path}"  // NOLINT(bugprone-suspicious-include)\n')
    commands.append({"directory": directory, "file": unit, "command": f"{key} -c {unit}"})
    print(unit, " ".join(os.path.relpath(p, source_dir) for p in paths), file=sys.stderr)
    print(unit)
json.dump(commands, open(os.path.join(work, "compile_commands.json"), "w"))
PY
)
echo "clang-tidy over ${#files[@]} files in ${#units[@]} units (shard $shard of $shards)"
# A failed script above gives no units rather than a failed test.
if ((${#units[@]} == 0 && ${#files[@]} >= shards)); then
  echo "tidy_test: no units made (see the error above)"
  exit 1
fi
log=$work/tidy.log
# One clang-tidy per unit; a unit's findings make its clang-tidy exit
# non-zero (WarningsAsErrors). The units live outside the tree, where no
# .clang-tidy would be found: the configuration is named. The included .cc
# files count as headers, so the filter names them beside .clang-tidy's.
# -Wthread-safety is not in the build's flags (g++ has no such analysis):
# it is added here, and .clang-tidy's clang-diagnostic-thread-safety* turns
# its warnings into findings.
status=0
printf '%s\n' "${units[@]}" \
  | xargs -r -P "$parallel" -n 1 "$clang_tidy" -p "$work" --quiet --config-file="$source_dir/.clang-tidy" \
      --extra-arg=-Wthread-safety \
      --header-filter='^.*/(bench|client|common|db|model|server|tests|worker)/.*\.(h|cc)$' \
      > "$log" 2>&1 || status=$?
# Only our findings: "file:line:col: error|warning: ... [check]".
if grep -E '^[^ ]+:[0-9]+:[0-9]+: (error|warning): .*\[[a-z0-9.,-]+\]$' "$log"; then
  echo
  echo "clang-tidy found the above (fix them, or say why in a NOLINT(check): reason)"
  exit 1
fi
if [[ $status -ne 0 ]]; then
  tail -50 "$log"
  echo "clang-tidy failed (status $status) without a finding of ours"
  exit 1
fi
echo "no findings"
