# SPDX-License-Identifier: Apache-2.0
"""benchmarks/claim_cost.py: its count of round trips from libpq's
trace, and one run of the command on a small SQLite cloud."""

import io
import json
import logging
import os

import fixtures
import testtools

from benchmarks import claim_cost
from benchmarks import sql_cloud

# Two round trips: BEGIN alone, then a prepared statement and COMMIT
# sent in one burst (as a pipeline sends them) and answered together.
TRACE = '\n'.join([
    'F\t10\tQuery\t "BEGIN"',
    'B\t10\tCommandComplete\t "BEGIN"',
    'B\t5\tReadyForQuery\t T',
    'F\t22\tBind\t "" "_pg3_4" 1 1 1 2',
    'F\t9\tExecute\t "" 0',
    'F\t11\tQuery\t "COMMIT"',
    'B\t4\tBindComplete',
    'B\t13\tCommandComplete\t "SELECT 1"',
    'B\t11\tCommandComplete\t "COMMIT"',
    'B\t5\tReadyForQuery\t I',
])


class TestWireCount(testtools.TestCase):

    def test_round_trips_transactions_and_statements(self):
        claims = claim_cost.Claims(client=None)
        wire = claim_cost.Wire(claims)
        wire._count('PUT', TRACE, {'_pg3_4': 'SELECT 1 FROM usage_totals'})
        self.assertEqual(2, wire.trips['PUT'])
        self.assertEqual(1, wire.begins['PUT'])
        self.assertEqual(1, wire.commits['PUT'])
        self.assertEqual(
            {('PUT', 'BEGIN'): 1,
             ('PUT', 'SELECT 1 FROM usage_totals + COMMIT'): 1},
            dict(wire.sent))


class TestRun(testtools.TestCase):

    def setUp(self):
        super().setUp()
        # The run sets up the server's logging to a file in a directory
        # it removes: the handlers it adds must go with it, or the next
        # test of this process logs into a missing file.
        root = logging.getLogger()
        before, level = list(root.handlers), root.level
        self.addCleanup(root.setLevel, level)
        self.addCleanup(lambda: [root.removeHandler(handler)
                                 for handler in list(root.handlers)
                                 if handler not in before])

    def test_a_run_on_sqlite_times_every_part_of_a_claim(self):
        tmp = self.useFixture(fixtures.TempDir()).path
        connection = 'sqlite:///' + os.path.join(tmp, 'cloud.sqlite')
        with fixtures.MonkeyPatch('sys.stdout', io.StringIO()):
            self.assertEqual(0, sql_cloud.main([
                '--database-connection', connection, '--nodes', '20',
                '--state', os.path.join(tmp, 'cloud.json')]))
            output = os.path.join(tmp, 'figures.json')
            self.assertEqual(0, claim_cost.main([
                '--database-connection', connection, '--claims', '5',
                '--warm', '1', '--top', '5', '--json', output]))
        with open(output) as f:
            figures = json.load(f)
        self.assertEqual({'claimed': 5}, figures['plain']['claims'])
        phases = figures['phases']['phases']
        claim = {row['phase'] for row in phases[claim_cost.CLAIM]['rows']}
        self.assertIn('write transaction', claim)
        self.assertIn('COMMIT', claim)
        search = {row['phase']
                  for row in phases[claim_cost.CANDIDATES]['rows']}
        self.assertIn('candidate search', search)
        self.assertTrue(figures['phases']['statements'][claim_cost.CLAIM])
        self.assertEqual(5, len(figures['profile']['cumulative']))
        # No psycopg: no trace of the wire.
        self.assertNotIn('wire', figures)

    def test_the_http_pass_measures_a_baseline_tree_beside_this_one(self):
        tmp = self.useFixture(fixtures.TempDir()).path
        connection = 'sqlite:///' + os.path.join(tmp, 'cloud.sqlite')
        tree = os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.abspath(claim_cost.__file__))))
        output = os.path.join(tmp, 'figures.json')
        with fixtures.MonkeyPatch('sys.stdout', io.StringIO()):
            self.assertEqual(0, sql_cloud.main([
                '--database-connection', connection, '--nodes', '20',
                '--state', os.path.join(tmp, 'cloud.json')]))
            self.assertEqual(0, claim_cost.main([
                '--database-connection', connection, '--claims', '2',
                '--warm', '1', '--no-profile', '--http-threads', '1',
                '--http-seconds', '0.5', '--workers', '1',
                '--baseline-tree', tree, '--json', output]))
        with open(output) as f:
            figures = json.load(f)
        for side in ('http', 'http_baseline'):
            [run] = figures[side]
            self.assertEqual(1, run['client_threads'])
            self.assertGreater(run['outcomes'].get('claimed', 0), 0, run)
