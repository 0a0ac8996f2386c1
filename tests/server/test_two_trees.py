# SPDX-License-Identifier: Apache-2.0
"""benchmarks.two_trees, the whole command on a cloud of 20 nodes with
this tree as its own baseline: needs a PostgreSQL server
(OSC_PLACEMENT_TEST_DB_URL)."""

import io
import os

import fixtures
import sqlalchemy as sa
import testtools

from benchmarks import databases
from benchmarks import two_trees
from tests.server import fixtures as server_fixtures


class TestWholeRun(testtools.TestCase):

    def test_prints_each_request_and_drops_its_database(self):
        server = os.environ.get('OSC_PLACEMENT_TEST_DB_URL', '')
        admin = databases.admin_engine(server)
        self.addCleanup(admin.dispose)
        query = sa.text(
            'SELECT datname FROM pg_database WHERE datname LIKE :name')
        mine = {'name': 'ocp_two_trees_%d_%%' % os.getpid()}
        output = io.StringIO()
        with fixtures.MonkeyPatch('sys.stdout', output):
            self.assertEqual(0, two_trees.main([
                '--baseline', two_trees.TOP, '--nodes', '20',
                '--database-url', server, '--samples', '3',
                '--pause', '0', '--requests', 'GET /,member_of']))
        lines = output.getvalue().splitlines()
        self.assertIn('20 nodes', lines[0])
        rows = {line.split()[0]: line for line in lines[2:]}
        self.assertEqual({'GET', 'member_of'}, set(rows))
        # Latency and CPU of each tree, and the ratio.
        self.assertEqual(6, len(rows['member_of'].split()))
        with admin.connect() as conn:
            self.assertEqual([], conn.execute(query, mine).all())


class TestRequestNames(testtools.TestCase):

    PATHS = dict.fromkeys(['GET /', 'member_of', 'plain, no limit'])

    def test_names_holding_a_comma(self):
        self.assertEqual(
            ['GET /', 'plain, no limit', 'member_of'],
            two_trees.request_names('GET /,plain, no limit, member_of',
                                    self.PATHS))

    def test_an_unknown_name(self):
        self.assertRaises(SystemExit, two_trees.request_names,
                          'GET /,nope', self.PATHS)


def load_tests(loader, standard_tests, pattern):
    """PostgreSQL only: the benchmark runs on PostgreSQL alone."""
    return server_fixtures.on_postgresql_only(standard_tests)
