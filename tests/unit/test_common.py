# SPDX-License-Identifier: Apache-2.0
import argparse
import io
import logging

from cliff import command as cliff_command
import fixtures
from osc_lib import exceptions
import testtools

from osc_placement.resources import common
from tests.unit import commands
from tests.unit import shell


class TestRequiredQuery(testtools.TestCase):

    def test_upstream_example(self):
        self.assertEqual(['in:A,B', 'C,!D'],
                         common.required_query(['A,B', 'C'], ['D']))

    def test_nothing_gives_nothing(self):
        self.assertEqual([], common.required_query([], []))
        self.assertEqual([], common.required_query(None, None))

    def test_only_forbidden(self):
        self.assertEqual(['!X,!Y'], common.required_query([], ['X', 'Y']))

    def test_any_of_detection(self):
        self.assertTrue(common.required_needs_any_of(['A', 'B,C']))
        self.assertFalse(common.required_needs_any_of(['A', 'B']))


class TestMemberOf(testtools.TestCase):

    def parse(self, *argv):
        parser = argparse.ArgumentParser()
        common.add_member_of_options(parser)
        return parser.parse_args(list(argv))

    def test_each_member_of_is_its_own_in_list(self):
        args = self.parse('--member-of', 'a,b', '--member-of', 'c')
        self.assertEqual(['in:a,b', 'in:c'], common.member_of_query(
            args.member_of, args.aggregate_uuid, logging.getLogger()))

    def test_forbidden_aggregates(self):
        self.assertEqual(['!a', '!in:b,c', 'in:d'], common.member_of_query(
            ['!a', '!b,c', 'd'], [], logging.getLogger()))
        self.assertTrue(common.forbids_aggregates(['x', '!y']))
        self.assertFalse(common.forbids_aggregates(['x']))

    def test_aggregate_uuid_is_one_list_and_warns(self):
        logs = self.useFixture(fixtures.FakeLogger())
        args = self.parse('--aggregate-uuid', 'a', '--aggregate-uuid', 'b')
        self.assertEqual(['in:a,b'], common.member_of_query(
            args.member_of, args.aggregate_uuid, logging.getLogger('x')))
        self.assertIn(common.AGGREGATE_UUID_DEPRECATION, logs.output)

    def test_options_are_mutually_exclusive(self):
        self.useFixture(fixtures.MonkeyPatch('sys.stderr', io.StringIO()))
        self.assertRaises(SystemExit, self.parse, '--member-of', 'a',
                          '--aggregate-uuid', 'b')


class TestEpilog(testtools.TestCase):
    """Our epilog is cliff's text, got without cliff's package scan."""

    def command(self, app):
        from osc_placement.resources import resource_provider
        return resource_provider.ListResourceProvider(app, None)

    def assertSameAsCliffs(self, app):
        cmd = self.command(app)
        self.assertEqual(cliff_command.Command.get_epilog(cmd),
                         cmd.get_epilog())

    def test_under_openstack_names_the_plugin(self):
        from openstackclient import shell as osc_shell
        app = osc_shell.OpenStackShell()
        self.assertSameAsCliffs(app)
        self.assertEqual(
            'This command is provided by the osc-placement plugin.',
            self.command(app).get_epilog().strip())

    def test_under_placement_names_nothing(self):
        from osc_placement import shell as placement_shell
        app = placement_shell.PlacementShell()
        self.assertSameAsCliffs(app)
        self.assertEqual('', self.command(app).get_epilog())

    def test_building_the_parser_scans_no_packages(self):
        # cliff caches its package -> distribution map in this global;
        # None means the scan has not run.
        self.useFixture(fixtures.MonkeyPatch(
            'cliff.command._dists_by_mods', None))
        from openstackclient import shell as osc_shell
        self.command(osc_shell.OpenStackShell()).get_parser('list')
        self.assertIsNone(cliff_command._dists_by_mods)


class CountingRaw(io.RawIOBase):
    """A binary sink that counts the writes it is handed."""

    def __init__(self):
        super().__init__()
        self.writes = 0
        self.data = bytearray()

    def writable(self):
        return True

    def write(self, chunk):
        self.writes += 1
        self.data += chunk
        return len(chunk)


class TestOutputToAFlushingStream(commands.CommandTestCase):
    """An unbuffered stdout (PYTHONUNBUFFERED) gets a list in one write."""

    def given_providers(self, count):
        providers = [commands.provider('%08d-1111-1111-1111-111111111111'
                                       % index, 'rp%d' % index)
                     for index in range(count)]
        self.transport.get(commands.url('/resource_providers'),
                           json={'resource_providers': providers})

    def list_to(self, stream, fmt):
        return shell.run_openstack(self, '--os-placement-api-version',
                                   '1.39', 'resource', 'provider', 'list',
                                   '-f', fmt, stdout=stream)

    def test_json_is_one_write_and_the_same_text(self):
        self.given_providers(50)
        raw = CountingRaw()
        unbuffered = io.TextIOWrapper(raw, encoding='utf-8',
                                      write_through=True)
        self.assertEqual(0, self.list_to(unbuffered, 'json').code)
        buffered = self.run_cmd('resource', 'provider', 'list', '-f', 'json')
        self.assertEqual(buffered.stdout, raw.data.decode())
        self.assertEqual(1, raw.writes)

    def test_every_format_prints_what_a_buffered_stream_gets(self):
        self.given_providers(3)
        for fmt in ('table', 'json', 'value', 'csv', 'yaml'):
            raw = CountingRaw()
            stream = io.TextIOWrapper(raw, encoding='utf-8',
                                      line_buffering=True)
            self.assertEqual(0, self.list_to(stream, fmt).code)
            buffered = self.run_cmd('resource', 'provider', 'list', '-f',
                                    fmt)
            self.assertEqual(buffered.stdout, raw.data.decode(), fmt)

    def test_a_buffered_stream_is_left_alone(self):
        stream = io.StringIO()
        self.assertFalse(common.flushes_often(stream))
        self.assertTrue(common.flushes_often(
            io.TextIOWrapper(CountingRaw(), write_through=True)))


class TestConcurrency(testtools.TestCase):
    """OSC_PLACEMENT_CONCURRENCY bounds the requests in flight."""

    def in_flight(self, value):
        import threading
        import time
        self.useFixture(fixtures.EnvironmentVariable(
            common.CONCURRENCY_ENV, value))
        lock = threading.Lock()
        state = {'now': 0, 'most': 0}

        def call(item):
            with lock:
                state['now'] += 1
                state['most'] = max(state['most'], state['now'])
            time.sleep(0.01)
            with lock:
                state['now'] -= 1
            return item

        self.assertEqual(list(range(30)),
                         common.run_concurrently(call, range(30)))
        return state['most']

    def test_one_at_a_time(self):
        self.assertEqual(1, self.in_flight('1'))

    def test_default_and_bounds(self):
        self.assertLessEqual(self.in_flight(None), common.WORKERS)
        self.assertGreater(self.in_flight(None), 1)
        for bad in ('0', '11', 'many'):
            self.useFixture(fixtures.EnvironmentVariable(
                common.CONCURRENCY_ENV, bad))
            self.assertRaises(exceptions.CommandError, common.concurrency)
