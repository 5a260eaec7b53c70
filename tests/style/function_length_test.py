"""No function over 80 lines without a reason (issue 18, docs/style.md): every
C++ function definition in the project's sources whose body runs past 80
lines carries, on the line above its signature,

    // NOLINTNEXTLINE(readability-function-size): <why it is long>

(clang-tidy's own marker, so its readability-function-size check agrees).
The sources are clang-formatted (style_format_test), so a definition at
namespace scope starts at column 0 and its body ends at the next "}" at
column 0; lambdas count toward the function that holds them. Prints each
long function with its length; exits 1 if any lacks a reason.

With --list, prints every function over the limit, marked or not."""
import os
import re
import subprocess
import sys

LIMIT = 80
MARKER = re.compile(r"NOLINTNEXTLINE\(readability-function-size\):\s*\S")
# Column-0 lines that open a body but are not functions.
NOT_FUNCTION = re.compile(
    r"^(namespace|class|struct|union|enum|extern|template\s*<[^>]*>\s*(class|struct))\b|"
    r"^(static\s+)?(const|constexpr|inline)?\s*[\w:<>,\s*&]+\s+k[A-Z]\w*(\[\])?\s*=|=\s*\{$|^#")
SOURCE_FOLDERS = ("bench", "client", "common", "db", "model", "server", "tests", "worker")


def functions(path):
    """(signature line number, signature text, body length, marked) for each
    column-0 definition in `path`."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    found = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line or line[0] in " \t}/#" or NOT_FUNCTION.search(line) or ";" in line:
            i += 1
            continue
        # The signature may wrap: find the line that opens the body.
        j = i
        while j < len(lines) and j < i + 12:
            text = lines[j].rstrip()
            if text.endswith(";") or (j > i and lines[j][:1] not in (" ", "\t", "")):
                break
            if text.endswith("{") or text.endswith("{}"):
                break
            j += 1
        text = lines[j].rstrip() if j < len(lines) else ""
        if "(" not in " ".join(lines[i:j + 1]) or not text.endswith("{"):
            i += 1
            continue
        if re.search(r"=\s*\{$", text):
            i += 1
            continue
        end = j + 1
        while end < len(lines) and not lines[end].startswith("}"):
            end += 1
        if end >= len(lines):
            break
        length = end - j - 1
        above = lines[i - 1] if i > 0 else ""
        found.append((i + 1, line.strip(), length, bool(MARKER.search(above))))
        i = end + 1
    return found


def main():
    root = sys.argv[1]
    listing = "--list" in sys.argv
    files = subprocess.run(["git", "-C", root, "ls-files", "--", "*.cc", "*.h"],
                           check=True, capture_output=True, text=True).stdout.split()
    unmarked = 0
    for path in files:
        if not path.startswith(SOURCE_FOLDERS) or "/generated/" in path:
            continue
        for line, signature, length, marked in functions(os.path.join(root, path)):
            if length <= LIMIT:
                continue
            if not marked:
                unmarked += 1
            if listing or not marked:
                print(f"{path}:{line}: {length} lines{'' if marked else ' (no reason given)'}: "
                      f"{signature[:90]}")
    if unmarked:
        print(f"\n{unmarked} function(s) over {LIMIT} lines without a reason: split them, or "
              "put '// NOLINTNEXTLINE(readability-function-size): <why>' above the signature")
        return 1
    print(f"every function over {LIMIT} lines says why")
    return 0


if __name__ == "__main__":
    sys.exit(main())
