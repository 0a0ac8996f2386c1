"""The planner settings of the server's PostgreSQL sessions
(db/engine.py): a write's generic plans read a small cloud's rows
through their indexes. Needs a PostgreSQL server
(OSC_PLACEMENT_TEST_DB_URL)."""

import os
import unittest

import sqlalchemy as sa
import testtools

from osc_placement.server.db import tables
from tests.server import fixtures as api_fixtures

# The form of consumer._ids_statement's part for projects: a list
# parameter, of which a generic plan assumes ten values.
PROJECT_IDS = ('SELECT id FROM projects '
               'WHERE external_id = ANY($1::VARCHAR[])')
PROJECTS = 1000  # a 1,000-node cloud's, as benchmarks.cloud makes it


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

    def plan(self):
        with self.db.read() as conn:
            conn.exec_driver_sql('PREPARE project_ids(VARCHAR[]) AS '
                                 + PROJECT_IDS)
            try:
                return '\n'.join(conn.exec_driver_sql(
                    "EXPLAIN EXECUTE project_ids('{project-7}')"
                ).scalars())
            finally:
                conn.exec_driver_sql('DEALLOCATE project_ids')

    def test_a_list_of_names_is_read_through_the_index(self):
        plan = self.plan()
        self.assertIn('uniq_projects0external_id', plan)
        self.assertNotIn('Seq Scan', plan)

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
    url = os.environ.get('OSC_PLACEMENT_TEST_DB_URL', '') or 'sqlite://'
    if sa.engine.make_url(url).get_backend_name() == 'postgresql':
        return standard_tests
    return unittest.TestSuite()
