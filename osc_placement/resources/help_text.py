# SPDX-License-Identifier: Apache-2.0
"""Command help as plain text on a terminal, reStructuredText in the docs.

Help texts are reStructuredText, because cliff's Sphinx extension renders
them from the parser into doc/source/cli. On a terminal this formatter
prints them as plain text: a literal loses its double backquotes;
paragraphs stay apart, each wrapped to the terminal, an option's name
never broken at its hyphens, a bullet list one item a line; a paragraph
ending in ``::`` ends in ``:`` (a lone ``::`` goes), and the indented
block after it (commands, output) is printed line for line. So a
docstring's examples are an ``Examples::`` paragraph and an indented
block.
"""

import re
import textwrap

from cliff import _argparse

_LITERAL = re.compile(r'``(.+?)``', re.S)
_BLANK_LINES = re.compile(r'\n[ \t]*\n')
_BULLET = re.compile(r'^[-*] ', re.M)
LITERAL_BLOCK_INDENT = '    '


def inline_plain(text):
    """Inline markup to plain text: ````x```` to ``x``."""
    return _LITERAL.sub(r'\1', text)


def _is_indented(block):
    return all(line[:1] in (' ', '\t') for line in block.splitlines()
               if line.strip())


def _end_of_paragraph(paragraph):
    """The text a paragraph ends with, ``::`` read as rST reads it."""
    if not paragraph.endswith('::'):
        return paragraph
    body = paragraph[:-2]
    if not body.strip():
        return ''
    if body[-1:].isspace():
        return body.rstrip()
    return body + ':'


def blocks(text):
    """(kind, text) of each block of a help text: 'paragraph' (inline
    markup made plain, ``::`` read) or 'literal' (dedented, as written)."""
    for block in _BLANK_LINES.split(text.strip('\n')):
        if not block.strip():
            continue
        if _is_indented(block):
            yield 'literal', textwrap.dedent(block).rstrip()
        else:
            paragraph = _end_of_paragraph(block.strip())
            if paragraph:
                yield 'paragraph', inline_plain(paragraph)


def plain_text(text, width, indent=''):
    """A help text as a terminal shows it: each paragraph wrapped to
    ``width``, literal blocks kept line for line."""
    shown = []
    for kind, block in blocks(text):
        if kind == 'literal':
            shown.append(textwrap.indent(
                block, indent + LITERAL_BLOCK_INDENT))
        else:
            shown.append('\n'.join(
                _wrap(item, width, indent, hanging)
                for item, hanging in _items(block)))
    return '\n\n'.join(shown)


def _items(paragraph):
    """(text, hanging indent) of a paragraph, or of each item of a
    bullet list ("- " or "* " at the start of its lines)."""
    if not _BULLET.match(paragraph):
        return [(paragraph, '')]
    return [(item, '  ') for item in _BULLET.split(paragraph) if item.strip()]


def _wrap(text, width, indent, hanging):
    first = indent + ('- ' if hanging else '')
    return textwrap.fill(' '.join(text.split()), width,
                         initial_indent=first,
                         subsequent_indent=indent + hanging,
                         break_on_hyphens=False)


class PlainTextHelpFormatter(_argparse.SmartHelpFormatter):
    """cliff's help formatter, printing the help's markup as plain text;
    the parser keeps the reStructuredText for the docs."""

    def _fill_text(self, text, width, indent):
        return plain_text(text, width, indent)

    def _split_lines(self, text, width):
        lines = text.splitlines() if '\n' in text else [text]
        wrapped = []
        for line in lines:
            wrapped.extend(textwrap.wrap(' '.join(line.split()), width,
                                         break_on_hyphens=False))
        return wrapped

    def _get_help_string(self, action):
        return inline_plain(super()._get_help_string(action))
