#!/usr/bin/python3
"""Lists the third-party Python modules that Orrery's scripts, tests and docs import.

scripts/setup must install a Debian package for each of them; tests/python_imports_test.cc runs
this scan at test time and fails when a module cannot be imported or has no line in scripts/setup,
so a new `import` without a package breaks the tests on every machine, not only on fresh ones.

Scanned: every Python file in scripts/ (*.py and files whose first line names python), and the
Python that tests/*.cc run: raw string literals written out as scripts, and `python3 -c '...'`
one-liners; and the ```python examples of README.md and docs/*.md, which users copy.
Imports are read with the ast module, so the word "import" in a docstring or comment
does not count; imports inside functions and try blocks do (they run on some path).

Standard-library modules, the scripts' own modules (scripts/NAME.py, scripts/validate) and
Orrery's own Python package (python/orrery, built with the project) are left out. Output, one line per module, sorted:

    MODULE<TAB>FILE[,FILE...]

    scripts/python_imports.py [--root DIR]    (default: the repository holding this script)
"""

import argparse
import ast
import glob
import os
import re
import sys

DOC_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
RAW_STRING = re.compile(r'R"([^(\s]{0,16})\((.*?)\)\1"', re.S)
ONE_LINER = re.compile(r"python3?\s+-c\s+'([^']*)'")


def top_level_imports(source):
    """Top-level package names imported anywhere in source; None if it is not Python."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def python_files(scripts_dir):
    for path in sorted(glob.glob(os.path.join(scripts_dir, "*"))):
        if not os.path.isfile(path):
            continue
        if path.endswith(".py"):
            yield path
            continue
        with open(path, "rb") as f:
            first = f.readline()
        if first.startswith(b"#!") and b"python" in first:
            yield path


def snippets_in_test(text):
    """Python source embedded in a C++ test: raw strings and `python3 -c '...'` arguments."""
    for m in RAW_STRING.finditer(text):
        yield m.group(2)
    for m in ONE_LINER.finditer(text):
        yield m.group(1)


def scan(root):
    """Maps each third-party module to the files (relative to root) that import it."""
    scripts_dir = os.path.join(root, "scripts")
    local = {os.path.splitext(os.path.basename(p))[0] for p in python_files(scripts_dir)}
    local.update(os.path.basename(os.path.dirname(p))
                 for p in glob.glob(os.path.join(root, "python", "*", "__init__.py")))
    found = {}

    def note(names, path):
        for name in names or ():
            if name in sys.stdlib_module_names or name in local or name == "__future__":
                continue
            found.setdefault(name, set()).add(os.path.relpath(path, root))

    for path in python_files(scripts_dir):
        with open(path, encoding="utf-8") as f:
            note(top_level_imports(f.read()), path)
    for path in sorted(glob.glob(os.path.join(root, "tests", "*.cc"))):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for snippet in snippets_in_test(text):
            note(top_level_imports(snippet), path)
    docs = sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    for path in [os.path.join(root, "README.md")] + docs:
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8") as f:
            for m in DOC_BLOCK.finditer(f.read()):
                note(top_level_imports(m.group(1)), path)
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                    help="repository root to scan (default: this script's repository)")
    args = ap.parse_args()
    for name, files in sorted(scan(args.root).items()):
        print("%s\t%s" % (name, ",".join(sorted(files))))


if __name__ == "__main__":
    main()
