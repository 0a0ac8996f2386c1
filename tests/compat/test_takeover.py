# SPDX-License-Identifier: Apache-2.0
"""Moving a cloud from upstream Placement 16.0.0 onto ours and back.

Upstream builds the schema with its own ``placement-manage db sync`` and
writes a row in every table through its API; our ``db sync`` takes the
database over with no row lost or changed; ours serves it and answers as
upstream did; ours writes more; upstream's ``db sync`` and ``db version``
still succeed and its API answers with what ours wrote. And our ``db
sync`` refuses, changing nothing, a database it cannot take over.

On the database OSC_PLACEMENT_TEST_DB_URL names (SQLite when unset),
each test in a database of its own; upstream comes from
tools/upstream-venv.sh's virtualenv.
"""

import sqlalchemy as sa

from tests.compat import populate
from tests.compat import upstream

# The revision before upstream 16.0.0's head (consumer types added, the
# redundant indexes not yet dropped): an upstream database not yet
# upgraded.
OLDER_UPSTREAM_REVISION = '422ece571366'
# Tables our db sync fills with the standard names it knows.
STANDARD_NAME_TABLES = ('traits', 'resource_classes')


class TestTakeover(upstream.BothSidesTestCase):

    def _upstream_cloud(self):
        """Upstream's schema and rows; returns its API snapshot."""
        self.upstream.db_sync()
        with self.upstream.serve() as base:
            populate.populate(base)
            return populate.snapshot(base)

    def test_round_trip(self):
        upstream_view = self._upstream_cloud()
        rows_before = populate.table_rows(self.db_url)

        self.ours.db_sync()
        # Deployment tools run db sync on every upgrade: the second must
        # keep everything too.
        self.ours.db_sync()
        rows_after = populate.table_rows(
            self.db_url, populate.columns_of(rows_before))
        for table in populate.UPSTREAM_TABLES:
            self.assert_rows_kept(table, rows_before[table],
                                  rows_after[table])

        with self.ours.serve() as base:
            self.assertEqual(upstream_view, populate.snapshot(base))
            populate.write_more(base)
            ours_view = populate.snapshot(base)

        self.upstream.db_sync()
        self.assertEqual(upstream.UPSTREAM_HEAD, self.upstream.db_version())
        with self.upstream.serve() as base:
            self.assertEqual(ours_view, populate.snapshot(base))

    def assert_rows_kept(self, table, before, after):
        """Every row as it was. Only standard trait and class names may be
        added: our os-traits or os-resource-classes may know newer ones
        than upstream's did."""
        names, rows = before
        self.assertEqual(names, after[0])
        kept = [row for row in after[1] if row in rows]
        self.assertEqual(rows, kept, 'our db sync lost or changed rows '
                         'of %s' % table)
        added = [row for row in after[1] if row not in rows]
        if table in STANDARD_NAME_TABLES:
            name = names.index('name')
            added = [row for row in added
                     if row[name].startswith('CUSTOM_')]
        self.assertEqual([], added, 'our db sync added rows to %s' % table)

    def _assert_refused_unchanged(self, rows_before):
        code, output = self.ours.manage('db', 'sync')
        self.assertNotEqual(0, code, output)
        # A sentence for the operator, not a traceback.
        self.assertNotIn('Traceback', output)
        self.assertEqual(
            rows_before, populate.table_rows(
                self.db_url, populate.columns_of(rows_before)))
        return output

    def test_refuses_an_older_upstream_revision(self):
        self.upstream.upgrade_to(OLDER_UPSTREAM_REVISION)
        self.assertEqual(OLDER_UPSTREAM_REVISION,
                         self.upstream.db_version())
        rows_before = populate.table_rows(self.db_url)

        output = self._assert_refused_unchanged(rows_before)

        self.assertIn(OLDER_UPSTREAM_REVISION, output)
        # Still where it was: upstream's own tool can finish the upgrade.
        self.assertEqual(OLDER_UPSTREAM_REVISION,
                         self.upstream.db_version())

    def test_refuses_unknown_tables_without_a_version(self):
        engine = sa.create_engine(self.db_url)
        try:
            with engine.begin() as conn:
                conn.exec_driver_sql(
                    'CREATE TABLE compat_stranger '
                    '(id INTEGER PRIMARY KEY, note VARCHAR(20))')
                conn.exec_driver_sql(
                    "INSERT INTO compat_stranger VALUES (1, 'keep me')")
        finally:
            engine.dispose()

        code, output = self.ours.manage('db', 'sync')

        self.assertNotEqual(0, code, output)
        self.assertNotIn('Traceback', output)
        self.assertEqual(['compat_stranger'], _table_names(self.db_url))
        self.assertEqual([(1, 'keep me')], _rows(self.db_url,
                                                 'compat_stranger'))


def _table_names(db_url):
    engine = sa.create_engine(db_url)
    try:
        return sorted(sa.inspect(engine).get_table_names())
    finally:
        engine.dispose()


def _rows(db_url, table):
    engine = sa.create_engine(db_url)
    try:
        with engine.connect() as conn:
            return [tuple(row) for row in conn.exec_driver_sql(
                'SELECT * FROM %s ORDER BY 1' % table)]
    finally:
        engine.dispose()
