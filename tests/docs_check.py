"""The documentation stands alone: every Markdown file and committed SVG of the source tree
refers to nothing a reader of the repository doesn't have, and every relative link resolves.

    python3 tests/docs_check.py SOURCE_DIR

Refused: paths into the project's working notes outside the repository (shared/..., "the
project's shared notes"), issues of a tracker the reader can't see ("issue 12", "the issue's
targets", "the brief"), how it
was built ("the lent machine", "run by the lead"), and temporary paths (/tmp/...) printed into
committed SVGs. Links: [text](target) with a relative target must name a file or folder of the
tree, and an #anchor a heading of the Markdown file it names (as GitHub makes them). A file of
the tree named in the prose (`docs/run.md`, bench/results/bench.txt) must exist too, outside
code blocks (a command's output file) and but for placeholders (elastic-TRACE.svg). No table
cell is longer than MAX_CELL characters. And the first screens a newcomer reads are there (first_screens).
"""
import os
import re
import subprocess
import sys

OUTSIDE = [
    (re.compile(r"(?<![\w-])(\.\./)?shared/(measurements|docs|audits|DESIGN)"),
     "a path outside the repository"),
    (re.compile(r"shared notes|\bDESIGN\.md\b", re.I),
     "the project's notes, outside the repository"),
    (re.compile(r"\bissues? #?\d+|\bthe issue'?s?\b(?! of\b)|\bthe brief\b", re.I),
     "an issue of a tracker readers can't see"),
    (re.compile(r"\blent machine|\bby the lead\b|nvidia-h200-x\d", re.I),
     "how the project was built, not what it is"),
    (re.compile(r"pip install greenctx(?![\w./*-])"),
     "greenctx is not on PyPI: a checkout or a wheel is installed"),
    (re.compile(r"greenctx-\d+\.\d+\.\d+-py3"), "a wheel named with a version that will go stale"),
]
SVG_OUTSIDE = [(re.compile(r"/tmp/"), "a temporary path")]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
SKIP_DIRS = {".git", "node_modules", "__pycache__"}
# A path into one of the tree's folders, as prose names files (not <slurm/spank.h>, a system
# header); a word in capitals in it is a placeholder.
TREE_PATH = re.compile(r"(?<![\w./<-])((?:docs|bench|tests|tools|scripts|examples|python|sim|src|"
                       r"include|slurm|preload|common|cmake)/[\w./-]*\w\.[a-z]+)\b")
PLACEHOLDER = re.compile(r"[A-Z]{3,}")
# A table cell longer than this is a page in a cell: a list reads better (tests/README.md's
# index of test files, for the project's developers, is left as it is).
MAX_CELL = 800


def files(root):
    """The tree's Markdown and SVG files: git's (tracked, and new ones it does not ignore),
    else every one outside build folders (an unpacked sdist)."""
    git = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others",
                          "--exclude-standard", "*.md", "*.svg"], capture_output=True)
    if git.returncode == 0:
        names = sorted(set(git.stdout.decode().split("\0")) - {""})
        return [os.path.join(root, n) for n in names if os.path.exists(os.path.join(root, n))]
    found = []
    for top, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("build")
                         and not d.startswith(".") and d != "_native")
        found += [os.path.join(top, n) for n in sorted(names) if n.endswith((".md", ".svg"))]
    return found


def anchors(path, cache={}):
    """The #anchors GitHub gives a Markdown file's headings (lower case, punctuation dropped,
    spaces to hyphens, -1, -2 ... after repeats)."""
    if path not in cache:
        seen, found, fence = {}, set(), False
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                fence ^= line.startswith("```")
                m = None if fence else re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
                if m:
                    slug = re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-")
                    n = seen.get(slug, 0)
                    seen[slug] = n + 1
                    found.add(slug if n == 0 else f"{slug}-{n}")
        cache[path] = found
    return cache[path]


def link_problem(path, target):
    if re.match(r"[a-z]+:", target):
        return None
    name, _, anchor = target.partition("#")
    where = os.path.normpath(os.path.join(os.path.dirname(path), name)) if name else path
    if not os.path.exists(where):
        return f"the link {target!r} leads nowhere"
    if anchor and where.endswith(".md") and anchor not in anchors(where):
        return f"the link {target!r} names no heading there"
    return None


def named_file_problem(root, path, name):
    if PLACEHOLDER.search(name) or any(os.path.exists(os.path.join(base, name)) for base in
                                       (root, os.path.dirname(path))):
        return None
    return f"{name!r} is no file of the tree"


def check(root):
    problems = []
    for path in files(root):
        rel = os.path.relpath(path, root)
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        rules = SVG_OUTSIDE if path.endswith(".svg") else OUTSIDE
        fence, header = False, 0
        for n, line in enumerate(text.splitlines(), 1):
            fence ^= line.lstrip().startswith("```")
            # A row of another number of cells than its table's header: a '|' left unescaped
            # in it (in code too: `a | b` splits the row on GitHub).
            cells = (len(re.split(r"(?<!\\)\|", line.strip()))
                     if path.endswith(".md") and line.startswith("|") else 0)
            header = (header or cells) if cells and not fence else 0
            if cells and not fence and cells != header:
                problems.append(f"{rel}:{n}: a table row of {cells - 2} cells under a header of "
                                f"{header - 2}: escape its '|' as '\\|'")
            if path.endswith(".md") and not fence and line.startswith("|") and \
                    not rel.startswith("tests" + os.sep):
                longest = max(len(cell) for cell in line.split("|"))
                if longest > MAX_CELL:
                    problems.append(f"{rel}:{n}: a table cell of {longest} characters (at most "
                                    f"{MAX_CELL}): write it as a list")
            if path.endswith(".md") and not fence:
                for name in TREE_PATH.findall(line):
                    problem = named_file_problem(root, path, name)
                    if problem:
                        problems.append(f"{rel}:{n}: {problem}")
            for pattern, why in rules:
                m = pattern.search(line)
                if m:
                    problems.append(f"{rel}:{n}: {m.group(0)!r}: {why}")
            if path.endswith(".md"):
                for target in LINK.findall(line):
                    problem = link_problem(path, target)
                    if problem:
                        problems.append(f"{rel}:{n}: {problem}")
    return problems


def first_screens(root):
    """What a newcomer sees first: the README's first screen (40 lines) has a picture that is
    in the tree and the table of why greenctx over MPS, MIG and PyTorch's green contexts;
    BENCHMARKS.md opens with its summary; CHANGELOG.md goes from 0.1.0 to this version."""
    def head(name, lines=40):
        path = os.path.join(root, name)
        if not os.path.exists(path):
            return None
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read().splitlines()[:lines] if lines else f.read().splitlines()
    problems = []
    readme = head("README.md")
    if readme is not None:
        pictures = [t for line in readme for t in re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", line)
                    if t.endswith((".svg", ".png")) and os.path.exists(os.path.join(root, t))]
        if not pictures:
            problems.append("README.md: no picture of the tree in its first 40 lines")
        if not any(all(w in line for w in ("greenctx", "MPS", "MIG", "PyTorch"))
                   for line in readme if line.startswith("|")):
            problems.append("README.md: no table of greenctx against MPS, MIG and PyTorch in "
                            "its first 40 lines")
    bench = head("BENCHMARKS.md", 15)
    if bench is not None and "## Summary" not in bench:
        problems.append("BENCHMARKS.md: does not open with '## Summary'")
    changes, header = head("CHANGELOG.md", 0), head(os.path.join("include", "greenctx.h"), 0)
    if changes is not None and header is not None:
        version = ".".join(re.search(rf"#define GCTX_VERSION_{p} (\d+)", "\n".join(header)).group(1)
                           for p in ("MAJOR", "MINOR", "PATCH"))
        for wanted in (version, "0.1.0"):
            if not any(line.startswith(f"## {wanted} ") for line in changes):
                problems.append(f"CHANGELOG.md: no '## {wanted}' section")
    return problems


def main(root):
    problems = check(root) + first_screens(root)
    for p in problems:
        print(p)
    print(f"docs: {len(problems)} problems" if problems else "docs: they stand alone")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
