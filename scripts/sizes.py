#!/usr/bin/env python3
"""Sizes of the crate's code: the longest non-test functions and the largest files, in lines.

    scripts/sizes.py            # the 15 longest functions and files
    scripts/sizes.py --max-fn 120 --max-file 700   # exit 1 naming what is over

A function is measured from its `fn` line to its closing brace (comments and blank lines
count); code inside `#[cfg(test)]` modules and files named `tests.rs` is left out of the
function list, and test modules are not counted in a file's size.
"""
import argparse
import re
import sys
from pathlib import Path

FN = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?fn\s+(\w+)")


def strip(line):
    """The line without string/char literals and // comments (enough for brace counting)."""
    out, i, n = [], 0, len(line)
    while i < n:
        c = line[i]
        if line.startswith("//", i):
            break
        if c == '"':
            i += 1
            while i < n and line[i] != '"':
                i += 2 if line[i] == "\\" else 1
            i += 1
            continue
        if c == "'" and i + 2 < n and (line[i + 2] == "'" or line[i + 1] == "\\"):
            j = line.find("'", i + 2)
            i = j + 1 if j > 0 else i + 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


def is_test_file(path):
    return path.name == "tests.rs" or path.name.endswith("_tests.rs")


def measure(path):
    lines = path.read_text().splitlines()
    fns, test_lines = [], 0
    depth, test_depth = 0, None
    stack = []  # (name, start line, depth at start)
    pending_test = False
    for no, raw in enumerate(lines, 1):
        line = strip(raw)
        if "#[cfg(test)]" in raw:
            pending_test = True
        m = FN.match(line)
        if m and test_depth is None and not is_test_file(path):
            stack.append((m.group(6), no, depth))
        opens, closes = line.count("{"), line.count("}")
        if pending_test and opens and test_depth is None and re.match(r"\s*(pub\s+)?mod\s+\w+", line):
            test_depth = depth
            pending_test = False
        elif pending_test and opens:
            pending_test = False
        if test_depth is not None:
            test_lines += 1
        depth += opens - closes
        while stack and depth <= stack[-1][2] and (opens or closes or line.rstrip().endswith(";")):
            name, start, d = stack.pop()
            if no > start or "{" in line:
                fns.append((no - start + 1, f"{path.relative_to(ROOT)}:{start}", name))
        if test_depth is not None and depth <= test_depth:
            test_depth = None
    return fns, len(lines) - test_lines


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", default=str(Path(__file__).resolve().parent.parent / "src"))
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--max-fn", type=int)
    ap.add_argument("--max-file", type=int)
    a = ap.parse_args()
    global ROOT
    root = Path(a.src)
    ROOT = root.parent
    all_fns, files = [], []
    for p in sorted(root.rglob("*.rs")):
        fns, size = measure(p)
        all_fns += fns
        if not is_test_file(p):
            files.append((size, str(p.relative_to(root.parent))))
    all_fns.sort(reverse=True)
    files.sort(reverse=True)
    print(f"longest non-test functions (lines), of {len(all_fns)}:")
    for n, where, name in all_fns[: a.top]:
        print(f"  {n:5}  {name}  {where}")
    print(f"largest files (lines without test modules), of {len(files)}:")
    for n, where in files[: a.top]:
        print(f"  {n:5}  {where}")
    over = []
    if a.max_fn:
        over += [f"{where} fn {name}: {n} lines > {a.max_fn}" for n, where, name in all_fns if n > a.max_fn]
    if a.max_file:
        over += [f"{where}: {n} lines > {a.max_file}" for n, where in files if n > a.max_file]
    if over:
        print("over the limits:\n  " + "\n  ".join(over))
        sys.exit(1)


if __name__ == "__main__":
    main()
