#!/usr/bin/env python3
"""Checks that every test of a GoogleTest executable shared by several ctest
entries (paradnn_add_test RUNS ... FILTER ...) runs under exactly one entry's
filter, and that no filter is stale: a test file added to the executable
without a filter of its own would otherwise never run, and one matched twice
would run twice.

usage: filter_coverage.py EXECUTABLE FILTER...   (positive patterns only,
':'-separated, '*' and '?' as GoogleTest reads them)"""
import fnmatch
import subprocess
import sys


def listed_tests(executable):
    listing = subprocess.run([executable, "--gtest_list_tests"], capture_output=True, text=True,
                             check=True).stdout
    tests, suite = [], ""
    for line in listing.splitlines():
        name = line.split("#")[0].strip()
        if not name:
            continue
        if line.startswith(" "):
            tests.append(suite + name)
        else:
            suite = name
    return tests


def main():
    executable, filters = sys.argv[1], sys.argv[2:]
    if not filters or any(f.startswith("-") or ":-" in f for f in filters):
        sys.exit("filter_coverage.py: give the positive filters of every ctest entry")
    tests = listed_tests(executable)
    matches = {f: [t for t in tests if any(fnmatch.fnmatchcase(t, p) for p in f.split(":"))]
               for f in filters}
    failures = []
    for test in tests:
        under = [f for f in filters if test in matches[f]]
        if len(under) != 1:
            failures.append(f"{test}: under {len(under)} ctest filters {under} (exactly 1 allowed)")
    failures += [f"filter {f!r} matches no test" for f in filters if not matches[f]]
    for failure in failures:
        print(failure)
    print(f"{len(tests)} tests of {executable} under {len(filters)} filters, "
          f"{len(failures)} problems")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
