#!/usr/bin/python3
"""What the scripts that check Orrery against published runs share: each row's scenario run
through `orrery run`, its printed figures read back, and the command line that prints the table
or writes it into a Markdown file's generated block (doc_block.py)."""

import argparse
import os
import subprocess
import sys
import tempfile

import doc_block

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_ORRERY = os.path.join(ROOT, "build", "orrery")


def run_scenario(orrery, text, tmp, label):
    """`orrery run` of a scenario's text in the folder `tmp`; its standard output. Exits naming
    `label` when the run fails."""
    path = os.path.join(tmp, "s.yaml")
    with open(path, "w") as f:
        f.write(text)
    out = subprocess.run([orrery, "run", path, "--no-timeline", "-o", os.path.join(tmp, "r.h5"),
                          "--force"], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("%s: orrery run failed:\n%s%s" % (label, out.stdout, out.stderr))
    return out.stdout


def main(description, rows, simulate, table, begin, end, progress):
    """The command line: simulate(orrery, row, tmp) for every row (progress(row, result) printed
    to stderr as it goes), then table(results) printed and, with --update-doc, written between
    `begin` and `end` of a Markdown file."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--update-doc", help="replace the table block in this Markdown file")
    ap.add_argument("--orrery", default=DEFAULT_ORRERY,
                    help="the orrery binary (default: build/orrery)")
    args = ap.parse_args()
    if not os.path.exists(args.orrery):
        sys.exit("%s: not built (scripts/build)" % args.orrery)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for row in rows:
            results.append((row, simulate(args.orrery, row, tmp)))
            print(progress(row, results[-1][1]), file=sys.stderr, flush=True)
    text = table(results)
    print(text, end="")
    if args.update_doc:
        doc_block.update_doc(args.update_doc, text, begin, end)
