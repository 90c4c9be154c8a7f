#!/usr/bin/python3
"""The generated blocks of the docs: a script's table between a begin and an end comment line of a
Markdown file, replaced in place when the script runs with --update-doc."""

import os
import sys


def update_doc(path, text, begin, end):
    """Replaces the text between the `begin` and `end` lines of the Markdown file `path`."""
    try:
        with open(path) as f:
            doc = f.read()
    except OSError as e:
        sys.exit("%s: %s: %s" % (os.path.basename(sys.argv[0]), path, e.strerror))
    if begin not in doc or end not in doc:
        sys.exit("%s: %s has no %s ... %s block" % (os.path.basename(sys.argv[0]), path, begin, end))
    head, rest = doc.split(begin, 1)
    _, tail = rest.split(end, 1)
    with open(path, "w") as f:
        f.write(head + begin + "\n" + text + end + tail)
