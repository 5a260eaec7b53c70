"""The source layout's one-way dependencies (docs/design.md "Source
layout") hold in the code: every #include of a project header from a source
folder names a folder that folder may use. Prints each forbidden include with
what is allowed; exits 1 if there is any.

    client ─┐
    server ─┼─► db ──────────┐
    worker ─┘   │            ▼
       │        ▼         platform ─► proto
       └──────► model ──────►┘
    model, db ─► common ─► proto
    worker, worker/runner ─► hostfacts
    worker/runner ─► model (and LibTorch, only here)

db uses common's small pieces too (common is below everything but proto);
platform (the platform's tables) and hostfacts (what the host says of
itself) use nothing of ours but proto. tests/ and bench/ may include
anything."""
import os
import re
import subprocess
import sys

from style_report import report

# folder -> the project folders its files may include (besides itself and
# the generated protos, "paradnn/v1/...").
ALLOWED = {
    "common": set(),
    "platform": set(),
    "hostfacts": set(),
    "model": {"platform", "common"},
    "db": {"platform", "common"},
    "server": {"db", "model", "platform", "common"},
    "client": {"db", "model", "platform", "common"},
    "worker": {"db", "model", "platform", "hostfacts", "common"},
    "worker/runner": {"model", "platform", "hostfacts", "common"},
}
PROJECT = set(ALLOWED) | {"proto", "bench", "tests"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def folder_of(path):
    if path.startswith("worker/runner/"):
        return "worker/runner"
    return path.split("/", 1)[0]


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    files = subprocess.run(["git", "-C", root, "ls-files", "*.cc", "*.h"], check=True,
                           capture_output=True, text=True).stdout.split()
    checked = 0
    violations = []
    for path in files:
        source = folder_of(path)
        if source not in ALLOWED:
            continue
        checked += 1
        with open(os.path.join(root, path), encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m or "/" not in m.group(1):
                    continue
                target = folder_of(m.group(1))
                if target not in PROJECT or target == source:
                    continue
                if target not in ALLOWED[source]:
                    allowed = ", ".join(sorted(ALLOWED[source] | {"proto"}))
                    violations.append("%s:%d includes %s: %s may include only %s" %
                                      (path, number, m.group(1), source, allowed))
    summary = "checked the includes of %d files in %s" % (checked, ", ".join(sorted(ALLOWED)))
    return report(summary, violations, checked, "no source files found (not a git checkout?)")


if __name__ == "__main__":
    sys.exit(main())
