# SPDX-License-Identifier: Apache-2.0
"""Comments and docstrings of osc_placement say why, briefly.

A measured figure (milliseconds, claims a second, "3x faster", the date
of a run) goes stale in code the day the code changes; it belongs in
doc/source/contributor/benchmarks.rst, dated, and in the commit that
made it true. A docstring of ``LONGEST`` lines or more is an essay that
wants to be shorter or to be in the docs. A command's docstring is its
help text (cliff prints it, the docs render it), so it may be long; it
may not quote figures either. A function's docstring is no longer than
its code, which says what it does; the docstring adds why, briefly.
"""

import ast
import io
import pathlib
import re
import tokenize

import testtools

ROOT = pathlib.Path(__file__).resolve().parents[2]
LONGEST = 15

_UNIT = (r'ms|µs|us|ns|s|secs?|seconds?|minutes?|hours?|claims/s|req/s'
         r'|requests/s|KiB|MiB|GiB|kB|KB|MB|GB|%')
_MONTH = (r'January|February|March|April|May|June|July|August|September'
          r'|October|November|December')
FIGURE = re.compile(
    r'(?<![\w.])\d+(?:\.\d+)?\s*(?:%s)(?![\w/])' % _UNIT
    + r'|(?<![\w.])\d+(?:\.\d+)?[x×](?!\w)'
    + r'|(?<![\w.])\d+(?:\.\d+)?\s*(?:times|x|×)\s+'
      r'(?:faster|slower|more|less|fewer|as)\b'
    + r'|\b\d{1,2}\s+(?:%s)\s+\d{4}\b' % _MONTH)
# "the 409s", "its 400s": HTTP statuses in the plural, not seconds.
_STATUSES = re.compile(r'\b[1-5]\d\ds\b')

_DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef,
               ast.AsyncFunctionDef)


def figures(text):
    """The measured figures ``text`` quotes."""
    return [match.group(0) for match in FIGURE.finditer(
        _STATUSES.sub('', text))]


def _docstring_node(node):
    body = getattr(node, 'body', None)
    if (body and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)):
        return body[0]
    return None


def _is_command(node):
    """A cliff command class, whose docstring is its help text."""
    return isinstance(node, ast.ClassDef) and any(
        ast.unparse(base).endswith(('Command', 'Lister', 'ShowOne'))
        for base in node.bases)


def findings(source):
    """[(line, what)] of every figure in a comment or docstring of
    ``source``, and of every docstring too long."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, _DOCUMENTED):
            continue
        doc = _docstring_node(node)
        if doc is None:
            continue
        for offset, line in enumerate(doc.value.value.splitlines()):
            found += [(doc.lineno + offset, 'figure %r' % figure)
                      for figure in figures(line)]
        length = doc.end_lineno - doc.lineno + 1
        if length >= LONGEST and not _is_command(node):
            found.append((doc.lineno, 'docstring of %d lines' % length))
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            found += [(token.start[0], 'figure %r' % figure)
                      for figure in figures(token.string)]
    return sorted(found)


def longer_than_code(source):
    """[(line, what)] of every function of ``source`` whose docstring has
    more lines than the statements after it (a bare docstring aside)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        doc, code = _docstring_node(node), node.body[1:]
        if doc is None or not code:
            continue
        doc_lines = doc.end_lineno - doc.lineno + 1
        code_lines = code[-1].end_lineno - code[0].lineno + 1
        if doc_lines > code_lines:
            found.append((node.lineno, '%s: docstring of %d lines for %d of '
                          'code' % (node.name, doc_lines, code_lines)))
    return found


def product_files(root=ROOT):
    for path in sorted((root / 'osc_placement').rglob('*.py')):
        yield path.relative_to(root).as_posix(), path


class TestFigures(testtools.TestCase):

    def test_units_and_ratios_are_figures(self):
        for text, expected in (
                ('took 20 ms, then 0.4 ms', ['20 ms', '0.4 ms']),
                ('about 5 µs a series', ['5 µs']),
                ('a 26 s scan', ['26 s']),
                ('at 300 claims/s', ['300 claims/s']),
                ('280 kB each, 1.2 GiB in all', ['280 kB', '1.2 GiB']),
                ('a 30% drop', ['30%']),
                ('3x the work; 2.5 times faster',
                 ['3x', '2.5 times faster']),
                ('measured on 5 December 2026', ['5 December 2026'])):
            self.assertEqual(expected, figures(text), text)

    def test_other_numbers_are_not(self):
        for text in (
                'microversion 1.39 and up', 'answered 409, 503 or 204',
                'the 400s it raises, its 409s', 'RFC 7231, section 6.5',
                'at most 65,535 parameters', 'pages of 1,000',
                'psycopg prepares on the 5th execution',
                'a 2 x 2 grid', 'SHA-256', 'utf-8 and base64',
                'thirty seconds by default'):
            self.assertEqual([], figures(text), text)


class TestFindings(testtools.TestCase):

    def test_a_figure_in_a_comment_or_docstring(self):
        source = ('"""Module."""\n'
                  '# the read took 12 ms\n'
                  'def f():\n'
                  '    """Twice as fast: 2x."""\n')
        self.assertEqual([(2, "figure '12 ms'"), (4, "figure '2x'")],
                         findings(source))

    def test_a_figure_in_code_is_not_a_finding(self):
        self.assertEqual([], findings('TIMEOUT = "30 s"\n'))

    def test_a_long_docstring(self):
        body = '\n'.join(['    """Why.'] + ['    more'] * (LONGEST - 2)
                         + ['    """'])
        self.assertEqual([(2, 'docstring of %d lines' % LONGEST)],
                         findings('def f():\n%s\n    return 1\n' % body))
        short = body.replace('    more\n', '', 1)
        self.assertEqual([], findings('def f():\n%s\n' % short))

    def test_a_commands_help_may_be_long(self):
        body = '\n'.join(['    """Help.'] + ['    more'] * LONGEST
                         + ['    """'])
        self.assertEqual([], findings(
            'class C(common.PlacementCommand, lister.Lister):\n%s\n'
            % body))


class TestLongerThanCode(testtools.TestCase):

    def test_a_docstring_longer_than_its_code(self):
        source = ('def f():\n'
                  '    """Why,\n'
                  '    at length."""\n'
                  '    return 1\n')
        self.assertEqual([(1, 'f: docstring of 2 lines for 1 of code')],
                         longer_than_code(source))

    def test_as_long_or_shorter_passes(self):
        self.assertEqual([], longer_than_code(
            'class C:\n'
            '    def m(self):\n'
            '        """Why,\n'
            '        briefly."""\n'
            '        if self:\n'
            '            return 1\n'))

    def test_a_bare_docstring_or_none_passes(self):
        self.assertEqual([], longer_than_code(
            'def f():\n    """Only\n    this."""\n'
            'def g():\n    return 1\n'))


class TestProductCode(testtools.TestCase):

    def test_no_figures_and_no_long_docstrings(self):
        found = ['%s:%d: %s' % (relative, line, what)
                 for relative, path in product_files()
                 for line, what in findings(path.read_text())]
        self.assertEqual([], found, '\n'.join(found))

    def test_no_docstring_longer_than_its_code(self):
        found = ['%s:%d: %s' % (relative, line, what)
                 for relative, path in product_files()
                 for line, what in longer_than_code(path.read_text())]
        self.assertEqual([], found, '\n'.join(found))
