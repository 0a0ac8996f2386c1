# SPDX-License-Identifier: Apache-2.0
"""placement-server's entry point (server/launcher.py) where the extra is
installed; tests/packaging runs it in a client-only install."""

import contextlib
import importlib.metadata
import io

import testtools

from osc_placement.server import launcher


class TestExtraRequirements(testtools.TestCase):

    def test_the_server_extra_of_this_install(self):
        names = launcher.extra_requirements(
            importlib.metadata.requires(launcher.DISTRIBUTION))
        for name in ('SQLAlchemy', 'oslo.config', 'granian', 'psycopg'):
            self.assertIn(name, names)
        # The client's own requirements and other extras are not asked.
        for name in ('cliff', 'keystoneauth1', 'fixtures'):
            self.assertNotIn(name, names)

    def test_markers_as_pip_writes_them(self):
        self.assertEqual(['a', 'b.c'], launcher.extra_requirements([
            'a>=1; extra == "server"',
            "b.c[x]>=2; python_version >= '3.11' and extra == 'server'",
            'd; extra == "server-tools"',
            'e',
        ]))

    def test_nothing_missing_here(self):
        self.assertEqual([], launcher.missing_requirements())


class TestMain(testtools.TestCase):

    def test_help_is_the_server_help_when_installed(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exit_code = self.assertRaises(
                SystemExit, launcher.main, ['--help']).code
        self.assertEqual(0, exit_code)
        self.assertIn('--database-connection', out.getvalue())
        self.assertNotIn(launcher.INSTALL_EXTRA, out.getvalue())


class TestExplainMissing(testtools.TestCase):

    def test_help_names_the_extra_and_the_usage(self):
        text = launcher.explain_missing(['granian', 'orjson'], True)
        self.assertTrue(text.startswith(launcher.USAGE + '\n'))
        self.assertIn('(missing: granian, orjson)', text)
        self.assertIn('\n    ' + launcher.INSTALL_EXTRA + '\n', text)

    def test_a_command_says_what_to_install(self):
        text = launcher.explain_missing(['granian'], False)
        self.assertTrue(text.startswith('placement-server: The server '
                                        'needs the [server] extra'))
        self.assertIn(launcher.INSTALL_EXTRA, text)
        self.assertNotIn('usage:', text)
