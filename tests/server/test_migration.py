# SPDX-License-Identifier: Apache-2.0
"""The schema migrations (server/db/migration.py and db/migrations):
what ``db sync`` does with each kind of database it may meet.

Upstream Placement's own tool building the upstream schema is
tests/compat's; here the upstream-shaped database is built from
db/tables.py, which tests/compat proves equal to upstream's.
"""

import fixtures
import sqlalchemy as sa
import testtools

from osc_placement.server.db import engine as db_engine
from osc_placement.server.db import migration
from osc_placement.server.db import tables
from tests.server import schema_compare

# Upstream Placement 16.0.0's head: what ``db version`` prints.
HEAD_REVISION = 'a082b8bb98d0'
OUR_HEAD = '1002_usage_changes'


class TestMigration(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.tmp = self.useFixture(fixtures.TempDir()).path
        self.engine = db_engine.create_engine(
            'sqlite:///%s/placement.db' % self.tmp)
        self.addCleanup(self.engine.dispose)

    def table_names(self):
        return set(sa.inspect(self.engine).get_table_names())

    def upstream_database(self, revision=HEAD_REVISION):
        """Upstream's tables at ``revision``, as upstream would leave
        them: no table of ours."""
        with self.engine.begin() as conn:
            tables.metadata.create_all(conn, tables=list(
                tables.UPSTREAM_TABLES) + [tables.upstream_version])
            conn.execute(tables.upstream_version.insert().values(
                version_num=revision))

    def test_empty_database_gets_both_histories(self):
        migration.upgrade(self.engine)
        self.assertEqual(HEAD_REVISION,
                         migration.current_version(self.engine))
        self.assertEqual(OUR_HEAD, migration.our_version(self.engine))
        self.assertLessEqual({'usage_totals', 'provider_structure',
                              'alembic_version', 'osc_placement_version'},
                             self.table_names())

    def test_upgrade_twice_changes_nothing(self):
        migration.upgrade(self.engine)
        migration.upgrade(self.engine)
        self.assertEqual(OUR_HEAD, migration.our_version(self.engine))

    def test_upstream_database_taken_over_with_its_usage(self):
        """Our additions are built from the rows upstream wrote."""
        self.upstream_database()
        rows = [(1, 'a', 0, 2), (1, 'b', 0, 3), (1, 'a', 2, 10),
                (2, 'c', 0, 1)]
        with self.engine.begin() as conn:
            conn.execute(tables.allocations.insert(), [
                {'resource_provider_id': rp, 'consumer_id': consumer,
                 'resource_class_id': rc, 'used': used}
                for rp, consumer, rc, used in rows])
        migration.upgrade(self.engine)
        totals = tables.usage_totals
        with self.engine.connect() as conn:
            got = set(conn.execute(sa.select(
                totals.c.resource_provider_id, totals.c.resource_class_id,
                totals.c.used)).all())
        self.assertEqual({(1, 0, 5), (1, 2, 10), (2, 0, 1)}, got)
        self.assertEqual(HEAD_REVISION,
                         migration.current_version(self.engine))

    def assert_refused(self, message):
        before = self.table_names()
        error = self.assertRaises(migration.UnknownDatabase,
                                  migration.upgrade, self.engine)
        self.assertIn(message, str(error))
        self.assertEqual(before, self.table_names())

    def test_older_upstream_database_refused(self):
        self.upstream_database(revision='422ece571366')
        self.assert_refused('Bring it to 16.0.0 with upstream Placement '
                            '16.0.0\'s "placement-manage db sync" first')

    def test_newer_upstream_database_refused(self):
        self.upstream_database(revision='0123456789ab')
        self.assert_refused('at revision 0123456789ab, which is neither')

    def test_database_of_something_else_refused(self):
        with self.engine.begin() as conn:
            conn.exec_driver_sql('CREATE TABLE invoices (id INTEGER)')
        self.assert_refused('holds tables (invoices) but no Placement '
                            'schema version')

    def test_stamp_writes_upstream_revision(self):
        migration.upgrade(self.engine)
        migration.stamp(self.engine, '611cd6dffd7b')
        self.assertEqual('611cd6dffd7b',
                         migration.current_version(self.engine))
        migration.stamp(self.engine, 'head')
        self.assertEqual(HEAD_REVISION,
                         migration.current_version(self.engine))

    def test_stamp_refuses_unknown_revision(self):
        migration.upgrade(self.engine)
        self.assertRaises(migration.UnknownDatabase, migration.stamp,
                          self.engine, '0001_initial')
        self.assertEqual(HEAD_REVISION,
                         migration.current_version(self.engine))


class TestRunsAgain(testtools.TestCase):
    """MySQL commits each DDL statement: a db sync or hand-back that
    failed half way leaves part of its work, and the next run must finish
    it. On the database OSC_PLACEMENT_TEST_DB_URL names."""

    def setUp(self):
        super().setUp()
        self.engine = self.useFixture(
            schema_compare.ScratchDatabase('runs_again')).engine
        migration.upgrade(self.engine)
        self.complete = (schema_compare.describe(self.engine),
                         schema_compare.trigger_names(self.engine))

    def half_done(self):
        """As if the run stopped after the tables and one trigger, before
        recording its revision."""
        with self.engine.begin() as conn:
            conn.execute(sa.text('DELETE FROM osc_placement_version'))
            name = schema_compare.trigger_names(self.engine)[-1]
            table = ''
            if conn.dialect.name == 'postgresql':
                table = ' ON %s' % conn.exec_driver_sql(
                    "SELECT tgrelid::regclass FROM pg_trigger "
                    "WHERE tgname = '%s' LIMIT 1" % name).scalar()
            conn.exec_driver_sql('DROP TRIGGER %s%s' % (name, table))

    def test_sync_finishes_a_half_done_sync(self):
        self.half_done()
        migration.upgrade(self.engine)
        self.assertEqual(self.complete,
                         (schema_compare.describe(self.engine),
                          schema_compare.trigger_names(self.engine)))
        self.assertEqual(OUR_HEAD, migration.our_version(self.engine))

    def test_hand_back_finishes_a_half_done_hand_back(self):
        with self.engine.begin() as conn:
            conn.exec_driver_sql('DROP TABLE provider_structure')
        migration.hand_back(self.engine)
        self.assertEqual([], schema_compare.trigger_names(self.engine))
        self.assertFalse({'usage_totals', 'osc_placement_version'}
                         & set(sa.inspect(self.engine).get_table_names()))
        self.assertRaises(migration.NotCurrent, migration.require_current,
                          self.engine)
        migration.upgrade(self.engine)
        migration.require_current(self.engine)
