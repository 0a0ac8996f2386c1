# SPDX-License-Identifier: Apache-2.0
"""The private names of cliff, argparse and osc-lib that
osc_placement/library_seams.py relies on still mean, in the installed
versions, what it takes them to mean. A failure here after an upgrade
points at the one function to mend."""

import io

from cliff import app as cliff_app
from cliff import command as cliff_command
from cliff import commandmanager
import fixtures
from openstack.config import cloud_region
from osc_lib import clientmanager
from stevedore import extension
import testtools

from osc_placement import library_seams
from osc_placement.resources import resource_provider
from osc_placement import shell


class TestRequestedApiVersions(testtools.TestCase):

    def test_osc_libs_client_manager(self):
        region = cloud_region.CloudRegion(config={
            'auth_type': 'none',
            'auth': {'endpoint': 'http://127.0.0.1:1'}})
        manager = clientmanager.ClientManager(
            cli_options=region, api_version={'placement': '1.5'})
        self.assertEqual({'placement': '1.5'},
                         library_seams.requested_api_versions(manager))

    def test_the_placement_shells_client_manager(self):
        manager = shell.ClientManager({'placement': '1.39'})
        self.assertEqual({'placement': '1.39'},
                         library_seams.requested_api_versions(manager))


class TestVersionText(testtools.TestCase):

    def test_version_prints_the_text_set(self):
        parser = cliff_app.App(
            'description', '9.9', commandmanager.CommandManager('none')
        ).parser
        library_seams.set_version_text(parser, 'placement 9.9')
        out = self.useFixture(fixtures.MonkeyPatch('sys.stdout',
                                                   io.StringIO())).new_value
        self.assertRaises(SystemExit, parser.parse_args, ['--version'])
        self.assertEqual('placement 9.9\n', out.getvalue())


def _no_scan():
    raise AssertionError('cliff read every distribution')


class _OtherApp:
    """An application from outside osc_placement (``openstack``'s)."""


class TestDistributionMap(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.MonkeyPatch(
            'cliff.command._dists_by_mods', None))
        self.useFixture(fixtures.MonkeyPatch(
            'cliff.command.packages_distributions', _no_scan))

    def test_cliff_names_our_distribution_without_a_scan(self):
        library_seams.name_distribution_up_front('osc_placement',
                                                 'osc-placement')
        command = resource_provider.ListResourceProvider(_OtherApp(), None)
        self.assertEqual(
            'This command is provided by the osc-placement plugin.',
            cliff_command.Command.get_epilog(command).strip())

    def test_a_map_cliff_has_is_kept(self):
        kept = {'x': 'y'}
        self.useFixture(fixtures.MonkeyPatch(
            'cliff.command._dists_by_mods', kept))
        library_seams.name_distribution_up_front('osc_placement',
                                                 'osc-placement')
        self.assertIs(kept, cliff_command._dists_by_mods)


class _Hook:
    def __init__(self, epilog):
        self.epilog = epilog

    def get_epilog(self):
        return self.epilog


class TestCommandEpilog(testtools.TestCase):
    """The seam's epilog is cliff's, with the command's own epilog and
    its hooks' (a hook without one, or not loaded, adds nothing)."""

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.MonkeyPatch(
            'cliff.command._dists_by_mods',
            {'osc_placement': 'osc-placement'}))
        self.command = resource_provider.ListResourceProvider(
            _OtherApp(), None)
        self.command._epilog = 'Its own.'
        self.command._hooks = extension.ExtensionManager.make_test_instance(
            [extension.Extension(name, None, None, obj) for name, obj in (
                ('a', _Hook('From a hook.')), ('b', _Hook(None)),
                ('c', None))])

    def test_same_as_cliffs(self):
        expected = cliff_command.Command.get_epilog(self.command)
        self.assertEqual(
            'Its own.\n\nFrom a hook.\n\n'
            'This command is provided by the osc-placement plugin.',
            expected)
        self.assertEqual(expected, library_seams.command_epilog(
            self.command, provided_by='osc-placement'))

    def test_without_the_plugin_line(self):
        self.assertEqual('Its own.\n\nFrom a hook.',
                         library_seams.command_epilog(self.command))
