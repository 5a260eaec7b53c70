"""Every repository path named in a comment or a doc exists (issue 38): a
newcomer who follows "see server/scheduler.cc" finds server/scheduler.cc.

Scans the comments of C++, proto and JavaScript sources (// and /* */),
CMake, Python (comments and docstrings), shell, YAML and the other
#-commented files, and every line of the Markdown files, for tokens that
start with one of the repository's top-level folders and end in a file
extension or a "/":

    server/scheduler.cc, server/scheduler.cc:120, worker/runner/models/,
    server/scheduler.{h,cc} (each expansion must exist),
    examples/presets/paper-*.yaml (a glob: at least one file must match).

A file the reader is to create is marked "(new" after it, in the same
table cell or line: "`model/families/vit.h`, `vit.cc` (new)". Placeholders
in angle brackets end a path: deploy/containers/<name>.Dockerfile checks
deploy/containers/.

A Markdown link to a relative target ("[x](../server/foo.h)") is checked
from the Markdown file's folder. Paths under build/ (generated files) are
not repository paths and URLs are not paths; both are skipped. Prints each
file:line that names a missing path; exits 1 if there is any."""
import fnmatch
import io
import os
import re
import subprocess
import sys
import tokenize

from style_report import report

C_STYLE = (".h", ".cc", ".cpp", ".proto", ".js", ".cjs")
HASH_STYLE = (".txt", ".cmake", ".sh", ".yaml", ".yml", ".in", ".example", ".toml", ".sysusers",
              ".gitignore", "Dockerfile")
MARKDOWN = (".md",)
PYTHON = (".py",)
URL = re.compile(r"\b[a-zA-Z][\w+.-]*://\S+|\bwww\.\S+")
# A path's characters; braces and "*" are expanded afterwards.
PATH_CHARS = r"[\w.{},*+/-]"
EXTENSION = re.compile(r"\.[A-Za-z][\w-]*$")
NEW_FILE = re.compile(r"\(new\b")
MARKDOWN_LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")


def repository_files(root):
    """Tracked files plus the untracked ones git does not ignore."""
    out = subprocess.run(["git", "-C", root, "ls-files", "--cached", "--others",
                          "--exclude-standard"], check=True, capture_output=True,
                         text=True).stdout.split("\n")
    return sorted({f for f in out if f and os.path.isfile(os.path.join(root, f))})


def c_comments(text):
    """(line number, comment text) for each // and /* */ comment, skipping
    string and character literals (raw strings included)."""
    found = []
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            found.append((line, text[i + 2:end]))
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end
            for k, part in enumerate(text[i + 2:end].split("\n")):
                found.append((line + k, part))
            line += text.count("\n", i, end)
            i = end + 2
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not text[i - 1].isalnum()):
            open_paren = text.find("(", i + 2)
            delimiter = text[i + 2:open_paren]
            end = text.find(")" + delimiter + '"', open_paren)
            end = n if end < 0 else end + len(delimiter) + 2
            line += text.count("\n", i, end)
            i = end
        elif c in "\"'" and not (c == "'" and i > 0 and text[i - 1].isalnum()):
            # A ' between digits is a C++14 digit separator, not a literal.
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        else:
            i += 1
    return found


def hash_comments(text):
    """(line number, comment text) for each # comment: a # at the start of a
    line or after a space, outside quotes (the shell's $# and ${#x} are not
    comments)."""
    found = []
    for number, line in enumerate(text.split("\n"), 1):
        quote = None
        for k, c in enumerate(line):
            if quote:
                if c == quote:
                    quote = None
            elif c in "\"'":
                quote = c
            elif c == "#" and (k == 0 or line[k - 1] in " \t"):
                found.append((number, line[k + 1:]))
                break
    return found


def python_comments(text):
    """(line number, text) for each comment and docstring line."""
    found = []
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return hash_comments(text)
    statement_start = True
    for tok in tokens:
        if tok.type == tokenize.COMMENT:
            found.append((tok.start[0], tok.string[1:]))
            continue
        if tok.type == tokenize.STRING and statement_start:
            for k, part in enumerate(tok.string.split("\n")):
                found.append((tok.start[0] + k, part))
        if tok.type in (tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT,
                        tokenize.ENCODING):
            statement_start = True
        elif tok.type != tokenize.COMMENT:
            statement_start = False
    return found


def markdown_lines(text):
    return list(enumerate(text.split("\n"), 1))


def comments_of(path, text):
    name = os.path.basename(path)
    if name.endswith(C_STYLE):
        return c_comments(text)
    if name.endswith(PYTHON):
        return python_comments(text)
    if name.endswith(MARKDOWN):
        return markdown_lines(text)
    if name.endswith(HASH_STYLE) or name == "CMakeLists.txt" or path.startswith(".ci/"):
        return hash_comments(text)
    return []


def expand_braces(token):
    """server/scheduler.{h,cc} -> [server/scheduler.h, server/scheduler.cc];
    nested braces expand too."""
    m = re.search(r"\{([^{}]*)\}", token)
    if not m:
        return [token]
    out = []
    for choice in m.group(1).split(","):
        out.extend(expand_braces(token[:m.start()] + choice + token[m.end():]))
    return out


class Repository:

    def __init__(self, root):
        self.root = root
        self.files = repository_files(root)
        self.file_set = set(self.files)
        self.folders = set()
        for f in self.files:
            parts = f.split("/")[:-1]
            for k in range(1, len(parts) + 1):
                self.folders.add("/".join(parts[:k]))
        top = sorted({f.split("/", 1)[0] for f in self.files if "/" in f} - {"build"})
        # A path starts a token: not after a letter, a dot, a slash or a dash
        # (which would make it the tail of a longer path, an URL or a flag).
        self.token = re.compile(r"(?<![\w./~$@-])(?:%s)/%s*" %
                                ("|".join(re.escape(t) for t in top), PATH_CHARS))

    def exists(self, path):
        path = path.rstrip("/") if path.endswith("/") else path
        if "*" in path or "?" in path:
            pattern = path
            return any(fnmatch.fnmatchcase(f, pattern) for f in self.files) or any(
                fnmatch.fnmatchcase(d, pattern) for d in self.folders)
        return path in self.file_set or path in self.folders

    def missing_in(self, text):
        """The path tokens of `text` that name nothing in the repository."""
        missing = []
        text = URL.sub(" ", text)
        for m in self.token.finditer(text):
            token = m.group(0)
            # Sentence punctuation and a dangling brace are not the path's.
            token = token.rstrip(".,")
            if token.count("{") != token.count("}"):
                continue
            cell_end = text.find("|", m.end())
            if NEW_FILE.search(text, m.end(), cell_end if cell_end >= 0 else len(text)):
                continue
            for path in expand_braces(token):
                if not (path.endswith("/") or EXTENSION.search(path)):
                    continue
                if not self.exists(path):
                    missing.append(path)
        return missing

    def missing_links(self, path, text):
        """Relative Markdown link targets, from the Markdown file's folder."""
        missing = []
        folder = os.path.dirname(path)
        for m in MARKDOWN_LINK.finditer(text):
            target = m.group(1)
            if URL.match(target) or target.startswith(("mailto:", "/")) or ":" in target:
                continue
            resolved = os.path.normpath(os.path.join(folder, target))
            if resolved.startswith(("..", "build/")):
                continue
            if not self.exists(resolved):
                missing.append(target)
        return missing


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    repo = Repository(root)
    scanned = 0
    problems = []
    for path in repo.files:
        if path.startswith("build/"):
            continue
        try:
            with open(os.path.join(root, path), encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, OSError):
            continue
        lines = comments_of(path, text)
        if not lines:
            continue
        scanned += 1
        for number, comment in lines:
            for missing in repo.missing_in(comment):
                problems.append("%s:%d names %s, which does not exist" % (path, number, missing))
            if path.endswith(MARKDOWN):
                for missing in repo.missing_links(path, comment):
                    problems.append("%s:%d links to %s, which does not exist" %
                                    (path, number, missing))
    return report("checked the paths named in the comments and docs of %d files" % scanned,
                  problems, scanned, "no files found (not a git checkout?)")


if __name__ == "__main__":
    sys.exit(main())
