"""A forbidden include fails to build: every source folder's targets compile
with an include view (CMakeLists.txt, paradnn_include_view) that holds only
the folders docs/design.md's arrows let it use. For each folder this takes the
real compile command of one of its files (compile_commands.json) and
preprocesses a probe that includes one header of every project folder: the
allowed ones must be found, the forbidden ones must fail with "No such file".
The arrows are layering_test.py's ALLOWED table."""
import os
import shlex
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compile_commands import source_entries  # noqa: E402
from layering_test import ALLOWED, folder_of  # noqa: E402
from style_report import report  # noqa: E402


def tracked_headers(root):
    return subprocess.run(["git", "-C", root, "ls-files", "*.h"], check=True, capture_output=True,
                          text=True).stdout.split()


def probe_header(root, headers, folder):
    """A header of `folder` that needs no LibTorch (the probe has no torch include path)."""
    for path in sorted(headers):
        if folder_of(path) != folder:
            continue
        with open(os.path.join(root, path), encoding="utf-8") as f:
            if "<torch/" not in f.read():
                return path
    return None


def compile_command(root, entries, folder):
    """The argument list and directory of one torch-free file of `folder`."""
    for entry in entries:
        rel = os.path.relpath(entry["file"], root)
        if rel.startswith("..") or folder_of(rel) != folder:
            continue
        args = entry.get("arguments") or shlex.split(entry["command"])
        if any("torch" in a for a in args if a.startswith("-I") or a.startswith("-isystem")):
            continue
        return args, entry["directory"], entry["file"]
    return None


def preprocess_args(args, directory, source, probe):
    """`args` with the source replaced by `probe`, preprocessing only, and no
    object or dependency file written (the build's own must stay intact)."""
    out = []
    skip = False
    for a in args:
        if skip:
            skip = False
        elif a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
        elif a in ("-c", "-MD", "-MMD") or os.path.abspath(os.path.join(directory, a)) == source:
            continue
        else:
            out.append(a)
    return out + ["-E", "-o", os.devnull, probe]


def verdict(allowed, header, run):
    """None when the include behaved as the arrows say, else what went wrong."""
    if allowed:
        return None if run.returncode == 0 else "does not build:\n" + run.stderr[-2000:]
    if run.returncode == 0:
        return "was found"
    if "No such file" in run.stderr and header in run.stderr:
        return None
    return "failed otherwise:\n" + run.stderr[-2000:]


def main():
    root = os.path.abspath(sys.argv[1])
    build = os.path.abspath(sys.argv[2])
    entries = source_entries(build)
    headers = tracked_headers(root)
    failures = []
    checked = 0
    with tempfile.TemporaryDirectory() as tmp:
        probe = os.path.join(tmp, "probe.cc")
        for folder in sorted(ALLOWED):
            found = compile_command(root, entries, folder)
            if found is None:
                print("%s: no compile command (folder not built); skipped" % folder)
                continue
            args, directory, source = found
            for target in sorted(ALLOWED):
                header = probe_header(root, headers, target)
                if header is None:
                    continue
                allowed = target == folder or target in ALLOWED[folder]
                with open(probe, "w", encoding="utf-8") as f:
                    f.write('#include "%s"\n' % header)
                run = subprocess.run(preprocess_args(args, directory, source, probe),
                                     cwd=directory, capture_output=True, text=True)
                checked += 1
                wrong = verdict(allowed, header, run)
                kind = "may use" if allowed else "must not use"
                print("%-14s %-12s %-14s %s" % (folder, kind, target, "WRONG" if wrong else "ok"))
                if wrong:
                    failures.append("%s %s %s: including %s %s" % (folder, kind, target, header,
                                                                   wrong))
    return report("checked %d folder pairs" % checked, failures, checked,
                  "nothing checked (no compile_commands.json entries?)")


if __name__ == "__main__":
    sys.exit(main())
