import argparse
import io
import logging

import fixtures
import testtools

from osc_placement.resources import common


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
