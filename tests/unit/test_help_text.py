# SPDX-License-Identifier: Apache-2.0
"""Command help: plain text on a terminal, reStructuredText for the docs
(osc_placement/resources/help_text.py, PlacementCommand.get_parser)."""

import importlib.metadata

from cliff import command as cliff_command
import fixtures
import testtools

from osc_placement.resources import candidate_explain
from osc_placement.resources import common
from osc_placement.resources import help_text
from osc_placement import shell

EXAMPLE = ('    placement sample --resource-provider compute-1 \\\n'
           '        --all-checks\n')


class Sample(common.PlacementCommand, cliff_command.Command):
    """Check providers named with ``--resource-provider``.

    A second paragraph with a ``literal`` in it, long enough to be wrapped
    on an eighty-column terminal into more than one line of help.

    Examples::

        placement sample --resource-provider compute-1 \\
            --all-checks
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            '--all-checks', action='store_true',
            help='List the ``passed`` checks too (needs at least '
                 '``--os-placement-api-version 1.18``).')
        return parser

    def take_action(self, parsed_args):
        return 0


def _parser(command_class, prog):
    return command_class(None, None).get_parser(prog)


class TestPlainHelp(testtools.TestCase):

    def setUp(self):
        super().setUp()
        # argparse wraps to $COLUMNS.
        self.useFixture(fixtures.EnvironmentVariable('COLUMNS', '80'))
        self.help = _parser(Sample, 'sample').format_help()

    def test_no_double_backquotes(self):
        self.assertNotIn('``', self.help)
        self.assertIn('Check providers named with --resource-provider.',
                      self.help)

    def test_paragraphs_stay_apart_and_wrap(self):
        self.assertIn('\n\nA second paragraph with a literal in it, long '
                      'enough to be wrapped on an\neighty-column terminal '
                      'into more than one line of help.\n\n', self.help)

    def test_examples_are_kept_line_for_line(self):
        self.assertIn('\n\nExamples:\n\n' + EXAMPLE, self.help)

    def test_option_help_is_plain_and_names_stay_whole(self):
        self.assertIn('List the passed checks too (needs at least',
                      self.help)
        self.assertIn('--os-placement-api-version 1.18).', self.help)

    def test_the_parser_keeps_the_restructuredtext(self):
        # cliff's Sphinx extension reads these for doc/source/cli.
        parser = _parser(Sample, 'sample')
        self.assertIn('with a ``literal`` in it', parser.description)
        self.assertIn('Examples::\n\n' + EXAMPLE.rstrip(),
                      parser.description)
        option = [action for action in parser._actions
                  if '--all-checks' in action.option_strings][0]
        self.assertIn('``passed``', option.help)


class TestEveryCommand(testtools.TestCase):

    def test_no_command_help_shows_double_backquotes(self):
        self.useFixture(fixtures.EnvironmentVariable('COLUMNS', '80'))
        names = []
        for entry in importlib.metadata.entry_points(
                group=shell.COMMAND_GROUP):
            help_shown = _parser(entry.load(), entry.name).format_help()
            if '``' in help_shown:
                names.append(entry.name)
        self.assertEqual([], names)

    def test_explain_help_is_plain(self):
        parser = _parser(candidate_explain.ExplainAllocationCandidate,
                         'allocation candidate explain')
        self.assertIn('``', parser.description)
        shown = parser.format_help()
        self.assertNotIn('``', shown)
        self.assertIn('Takes the request options of allocation candidate '
                      'list.', ' '.join(shown.split()))


class TestBlocks(testtools.TestCase):

    def test_double_colon_as_restructuredtext_reads_it(self):
        text = 'Example::\n\n    a\n\nTrailing ::\n\n    b\n\n::\n\n    c'
        self.assertEqual(
            [('paragraph', 'Example:'), ('literal', 'a'),
             ('paragraph', 'Trailing'), ('literal', 'b'), ('literal', 'c')],
            list(help_text.blocks(text)))

    def test_bullet_list_keeps_one_item_a_line(self):
        shown = help_text.plain_text(
            'Rows:\n\n- one ``a`` item that wraps past the width\n- two',
            24)
        self.assertEqual('Rows:\n\n- one a item that wraps\n'
                         '  past the width\n- two', shown)

    def test_literal_blocks_keep_their_markup(self):
        shown = help_text.plain_text('Run::\n\n    echo ``x``', 40)
        self.assertEqual('Run:\n\n    echo ``x``', shown)
