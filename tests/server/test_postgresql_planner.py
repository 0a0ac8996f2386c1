# SPDX-License-Identifier: Apache-2.0
"""The planner settings of the server's PostgreSQL sessions
(db/engine.py): a write's generic plans read a small cloud's rows
through their indexes. Needs a PostgreSQL server
(OSC_PLACEMENT_TEST_DB_URL)."""


import testtools

from osc_placement.server.db import tables
from osc_placement.server.objects import consumer
from tests.server import fixtures as api_fixtures

PROJECTS = 1000  # a 1,000-node cloud's, as benchmarks.cloud makes it
# psycopg prepares a statement on its fifth execution on a connection;
# the executions after it run PostgreSQL's generic plan.
EXECUTIONS = 10


class TestGenericPlansUseIndexes(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.db = api_fixtures.database()
        api_fixtures.reset_database(self.db)
        self.addCleanup(api_fixtures.reset_database, self.db)
        now = tables.utcnow()
        with self.db.write() as conn:
            conn.execute(tables.projects.insert(), [
                {'external_id': 'project-%d' % i, 'created_at': now}
                for i in range(PROJECTS)])
            conn.exec_driver_sql('ANALYZE projects')

    def test_a_write_reads_a_project_through_the_index(self):
        """The statement every allocation write runs to find its
        project's id (consumer._ids_statement), in a write's
        transaction, reads through the index, never the whole table."""
        statement = consumer._ids_statement('postgresql', ('project',))
        with self.db.write() as conn:
            before = self.scans(conn)
            for _ in range(EXECUTIONS):
                rows = conn.execute(statement,
                                    {'project': ['project-7']}).all()
                self.assertEqual(1, len(rows))
            after = self.scans(conn)
        self.assertEqual((0, EXECUTIONS),
                         tuple(b - a for a, b in zip(before, after)))

    @staticmethod
    def scans(conn):
        """(whole-table scans, index scans) of projects that this
        session has not yet reported (within a transaction, they only
        grow)."""
        return conn.exec_driver_sql(
            'SELECT seq_scan, idx_scan FROM pg_stat_xact_user_tables '
            "WHERE relname = 'projects'").one()

    def test_the_sessions_settings(self):
        with self.db.read() as conn:
            settings = {name: conn.exec_driver_sql('SHOW ' + name).scalar()
                        for name in ('jit', 'plan_cache_mode',
                                     'random_page_cost')}
        self.assertEqual({'jit': 'off',
                          'plan_cache_mode': 'force_generic_plan',
                          'random_page_cost': '1.1'}, settings)


def load_tests(loader, standard_tests, pattern):
    """PostgreSQL only: the settings are PostgreSQL's."""
    return api_fixtures.on_postgresql_only(standard_tests)
