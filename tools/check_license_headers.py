#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fail when a Python file lacks the SPDX license line at its top.

The line is the file's first, or its second after a shebang. An empty
file (a package's __init__.py) holds nothing to license, and hacking's
H104 refuses a file of comments alone, so it stays empty. With ``--fix``
the line is added where it is missing instead.
"""

import os
import sys

HEADER = '# SPDX-License-Identifier: Apache-2.0\n'
CHECKED_DIRS = ('osc_placement', 'tests', 'benchmarks', 'tools')


def python_files(top, dirs=CHECKED_DIRS):
    """Every .py file under ``dirs`` of ``top``, sorted, relative to it."""
    found = []
    for name in dirs:
        for root, _subdirs, files in os.walk(os.path.join(top, name)):
            found.extend(os.path.relpath(os.path.join(root, f), top)
                         for f in files if f.endswith('.py'))
    return sorted(found)


def header_index(lines):
    """Where the header belongs: after a shebang line, else first."""
    return 1 if lines and lines[0].startswith('#!') else 0


def has_header(text):
    """True for an empty file too: see the module's docstring."""
    if not text:
        return True
    lines = text.splitlines(keepends=True)
    index = header_index(lines)
    return len(lines) > index and lines[index] == HEADER


def with_header(text):
    """``text`` with the header inserted where it belongs."""
    lines = text.splitlines(keepends=True)
    index = header_index(lines)
    if index and not lines[0].endswith('\n'):
        lines[0] += '\n'
    lines.insert(index, HEADER)
    return ''.join(lines)


def missing(top):
    """The files under ``top`` without the header."""
    result = []
    for path in python_files(top):
        with open(os.path.join(top, path), encoding='utf-8') as f:
            if not has_header(f.read()):
                result.append(path)
    return result


def fix(top, paths):
    for path in paths:
        full = os.path.join(top, path)
        with open(full, encoding='utf-8') as f:
            text = f.read()
        with open(full, 'w', encoding='utf-8') as f:
            f.write(with_header(text))


def main(argv=None, top=None):
    argv = sys.argv[1:] if argv is None else argv
    top = top or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    paths = missing(top)
    if '--fix' in argv:
        fix(top, paths)
        return 0
    for path in paths:
        print('%s: no "%s" line at the top' % (path, HEADER.strip()))
    return 1 if paths else 0


if __name__ == '__main__':
    sys.exit(main())
