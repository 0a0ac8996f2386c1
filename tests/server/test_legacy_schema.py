# SPDX-License-Identifier: Apache-2.0
"""A database of this server's releases before upstream's schema
(db/legacy_schema.py) upgraded in place by ``migration.upgrade``.

The legacy database is built from the frozen old schema
(tests/server/data/legacy_schema_0004.py) with rows in every table, on
the database OSC_PLACEMENT_TEST_DB_URL names (SQLite without it).
"""

import datetime

import sqlalchemy as sa
import testtools

from osc_placement.server.db import engine as db_engine
from osc_placement.server.db import legacy_schema
from osc_placement.server.db import migration
from osc_placement.server.db import tables
from osc_placement.server.objects import allocation
from tests.server.data import legacy_schema_0004 as legacy
from tests.server import fixtures as server_fixtures
from tests.server import schema_compare

T0 = datetime.datetime(2026, 11, 30, 8, 0, 0)
T1 = datetime.datetime(2026, 12, 1, 9, 30, 0)
CN1 = 'c0c0c0c0-0000-4000-8000-000000000001'
NUMA0 = 'c0c0c0c0-0000-4000-8000-000000000002'
SHARED = 'c0c0c0c0-0000-4000-8000-000000000003'
AGG1 = 'a9a9a9a9-0000-4000-8000-000000000001'
AGG2 = 'a9a9a9a9-0000-4000-8000-000000000002'
CONSUMER_A = 'cccccccc-0000-4000-8000-00000000000a'
CONSUMER_B = 'cccccccc-0000-4000-8000-00000000000b'
CONSUMER_C = 'cccccccc-0000-4000-8000-00000000000c'
CONSUMER_NEW = 'cccccccc-0000-4000-8000-00000000000d'

# Rows for every table of the legacy schema, parents first. Ids are given
# and not contiguous, so a conversion that renumbered would show.
LEGACY_ROWS = [
    (legacy.resource_classes, [
        {'id': 0, 'name': 'VCPU', 'created_at': T0},
        {'id': 1, 'name': 'MEMORY_MB', 'created_at': T0},
        {'id': 2, 'name': 'DISK_GB', 'created_at': T0},
        {'id': 10000, 'name': 'CUSTOM_GPU', 'created_at': T1,
         'updated_at': T1}]),
    (legacy.resource_providers, [
        {'id': 4, 'uuid': CN1, 'name': 'cn1', 'generation': 7,
         'created_at': T0, 'updated_at': T1},
        {'id': 9, 'uuid': SHARED, 'name': None, 'generation': 0,
         'created_at': T1}]),
    # After its parent, which it refers to.
    (legacy.resource_providers, [
        {'id': 6, 'uuid': NUMA0, 'name': 'cn1_numa0', 'generation': 2,
         'root_provider_id': 4, 'parent_provider_id': 4, 'created_at': T0}]),
    (legacy.inventories, [
        {'id': 11, 'resource_provider_id': 4, 'resource_class_id': 0,
         'total': 16, 'reserved': 2, 'min_unit': 1, 'max_unit': 8,
         'step_size': 1, 'allocation_ratio': 4.0, 'created_at': T0},
        {'id': 12, 'resource_provider_id': 4, 'resource_class_id': 1,
         'total': 65536, 'reserved': 512, 'min_unit': 256,
         'max_unit': 65536, 'step_size': 256, 'allocation_ratio': 1.5,
         'created_at': T0, 'updated_at': T1},
        {'id': 15, 'resource_provider_id': 6, 'resource_class_id': 10000,
         'total': 2, 'reserved': 0, 'min_unit': 1, 'max_unit': 1,
         'step_size': 1, 'allocation_ratio': 1.0, 'created_at': T1},
        {'id': 16, 'resource_provider_id': 9, 'resource_class_id': 2,
         'total': 2000, 'reserved': 0, 'min_unit': 10, 'max_unit': 1000,
         'step_size': 10, 'allocation_ratio': 1.0, 'created_at': T1}]),
    (legacy.projects, [
        {'id': 3, 'external_id': 'project-1', 'created_at': T0}]),
    (legacy.users, [
        {'id': 5, 'external_id': 'user-1', 'created_at': T0},
        {'id': 8, 'external_id': 'user-2', 'created_at': T1}]),
    (legacy.consumer_types, [
        {'id': 2, 'name': 'INSTANCE', 'created_at': T0}]),
    (legacy.consumers, [
        {'id': 21, 'uuid': CONSUMER_A, 'project_id': 3, 'user_id': 5,
         'generation': 1, 'consumer_type_id': 2, 'created_at': T0},
        {'id': 22, 'uuid': CONSUMER_B, 'project_id': 3, 'user_id': 8,
         'generation': 4, 'consumer_type_id': None, 'created_at': T0,
         'updated_at': T1},
        {'id': 25, 'uuid': CONSUMER_C, 'project_id': 3, 'user_id': 8,
         'generation': 0, 'consumer_type_id': None, 'created_at': T1}]),
    (legacy.allocations, [
        {'id': 31, 'resource_provider_id': 4, 'consumer_id': CONSUMER_A,
         'resource_class_id': 0, 'used': 2, 'created_at': T0},
        {'id': 32, 'resource_provider_id': 4, 'consumer_id': CONSUMER_A,
         'resource_class_id': 1, 'used': 2048, 'created_at': T0},
        {'id': 35, 'resource_provider_id': 4, 'consumer_id': CONSUMER_B,
         'resource_class_id': 0, 'used': 4, 'created_at': T1},
        {'id': 36, 'resource_provider_id': 6, 'consumer_id': CONSUMER_B,
         'resource_class_id': 10000, 'used': 1, 'created_at': T1},
        {'id': 40, 'resource_provider_id': 9, 'consumer_id': CONSUMER_C,
         'resource_class_id': 2, 'used': 100, 'created_at': T1}]),
    # Wrong on purpose: the totals after the upgrade must come from the
    # allocations, not from the old table.
    (legacy.usage_totals, [
        {'resource_provider_id': 4, 'resource_class_id': 0, 'used': 999}]),
    (legacy.provider_structure, [{'id': 1, 'version': 'f' * 32}]),
    (legacy.placement_aggregates, [
        {'id': 1, 'uuid': AGG1, 'created_at': T0},
        {'id': 3, 'uuid': AGG2, 'created_at': T1}]),
    (legacy.resource_provider_aggregates, [
        {'resource_provider_id': 4, 'aggregate_id': 1, 'created_at': T0},
        {'resource_provider_id': 9, 'aggregate_id': 1, 'created_at': T0},
        {'resource_provider_id': 6, 'aggregate_id': 3, 'created_at': T1}]),
    (legacy.traits, [
        {'id': 1, 'name': 'HW_CPU_X86_AVX2', 'created_at': T0},
        {'id': 7, 'name': 'CUSTOM_FAST', 'created_at': T1}]),
    (legacy.resource_provider_traits, [
        {'trait_id': 1, 'resource_provider_id': 4, 'created_at': T0},
        {'trait_id': 7, 'resource_provider_id': 4, 'created_at': T1},
        {'trait_id': 7, 'resource_provider_id': 9, 'created_at': T1}]),
]


def _fill_legacy(conn):
    legacy.create(conn)
    for table, rows in LEGACY_ROWS:
        # Every column in every row: one statement for all of them.
        conn.execute(table.insert(), [
            {c.name: row.get(c.name) for c in table.columns}
            for row in rows])
    # Roots last: the self-reference needs the row to exist first.
    conn.execute(legacy.resource_providers.update().where(
        legacy.resource_providers.c.root_provider_id.is_(None)).values(
        root_provider_id=legacy.resource_providers.c.id))


def _all_rows(conn, table):
    """Every row of an upstream table, by primary key, as dicts."""
    reflected = sa.Table(table.name, sa.MetaData(), autoload_with=conn)
    order = [reflected.c[c.name] for c in table.primary_key.columns]
    return [dict(row) for row in
            conn.execute(sa.select(reflected).order_by(*order)).mappings()]


def _upstream_rows(engine):
    with engine.connect() as conn:
        return {table.name: _all_rows(conn, table)
                for table in tables.UPSTREAM_TABLES}


def _totals_and_sums(engine):
    """(usage_totals, sums of allocations), both {(provider, class):
    used}, zero totals left out (a trigger may leave one at zero)."""
    alloc = tables.allocations
    with engine.connect() as conn:
        totals = {(r.resource_provider_id, r.resource_class_id): r.used
                  for r in conn.execute(sa.select(tables.usage_totals))
                  if r.used}
        sums = {(r[0], r[1]): r[2] for r in conn.execute(
            sa.select(alloc.c.resource_provider_id,
                      alloc.c.resource_class_id, sa.func.sum(alloc.c.used))
            .group_by(alloc.c.resource_provider_id,
                      alloc.c.resource_class_id))}
    return totals, sums


class TestLegacySchemaUpgrade(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.engine = self.useFixture(
            schema_compare.ScratchDatabase('legacy')).engine
        with self.engine.begin() as conn:
            _fill_legacy(conn)
        self.before = _upstream_rows(self.engine)

    def fresh_engine(self):
        """A database made by migration.upgrade from nothing."""
        engine = self.useFixture(
            schema_compare.ScratchDatabase('fresh')).engine
        migration.upgrade(engine)
        return engine

    def assert_same_schema(self, expected_engine):
        self.assertEqual([], schema_compare.differences(
            schema_compare.describe(expected_engine),
            schema_compare.describe(self.engine)))
        self.assertEqual(schema_compare.trigger_names(expected_engine),
                         schema_compare.trigger_names(self.engine))

    def test_every_row_is_kept(self):
        migration.upgrade(self.engine)
        after = _upstream_rows(self.engine)
        for table in tables.UPSTREAM_TABLES:
            self.assertEqual(self.before[table.name], after[table.name],
                             table.name)
        # The rows are really there: an empty table would compare equal.
        self.assertEqual(
            {'resource_classes': 4, 'resource_providers': 3,
             'inventories': 4, 'allocations': 5, 'placement_aggregates': 2,
             'resource_provider_aggregates': 3, 'traits': 2,
             'resource_provider_traits': 3, 'projects': 1, 'users': 2,
             'consumer_types': 1, 'consumers': 3},
            {name: len(rows) for name, rows in after.items()})

    def test_schema_is_that_of_a_fresh_database(self):
        migration.upgrade(self.engine)
        # Made after the conversion, which must leave the definitions in
        # db/tables.py as they were for any CREATE TABLE that follows.
        self.assert_same_schema(self.fresh_engine())

    def test_the_versions_are_upstreams_head_and_ours(self):
        migration.upgrade(self.engine)
        self.assertEqual(migration.UPSTREAM_HEAD,
                         migration.current_version(self.engine))
        self.assertEqual('a082b8bb98d0',
                         migration.current_version(self.engine))
        # Our own history, in its own table, at the head a fresh
        # database reaches.
        self.assertEqual(migration.our_version(self.fresh_engine()),
                         migration.our_version(self.engine))

    def test_usage_totals_are_summed_and_kept_by_writes(self):
        migration.upgrade(self.engine)
        totals, sums = _totals_and_sums(self.engine)
        self.assertEqual(sums, totals)
        self.assertEqual(6, totals[(4, 0)])
        db = db_engine.Database(self.engine)
        allocation.write_or_409(db, allocation.replace, [
            allocation.ConsumerWrite(
                uuid=CONSUMER_NEW, project_id='project-1',
                user_id='user-1', allocations={CN1: {'VCPU': 3}},
                generation=None),
            allocation.ConsumerWrite(
                uuid=CONSUMER_A, project_id='project-1', user_id='user-1',
                allocations={}, generation=1)])
        totals, sums = _totals_and_sums(self.engine)
        self.assertEqual(sums, totals)
        # B's 4 and the new consumer's 3; A's 2 gone with its memory.
        self.assertEqual(7, totals[(4, 0)])
        self.assertNotIn((4, 1), totals)

    def test_an_autoincrement_class_id_follows_the_largest(self):
        """resource_classes.id numbers new rows as upstream's column does
        (the old one did not), after the ids already there."""
        migration.upgrade(self.engine)
        with self.engine.begin() as conn:
            new_id = conn.execute(tables.resource_classes.insert().values(
                name='CUSTOM_NEW')).inserted_primary_key[0]
        self.assertEqual(10001, new_id)

    def test_nullable_columns_take_null(self):
        """resource_providers.generation and placement_aggregates.uuid
        accept NULL as upstream's do (the old ones refused)."""
        migration.upgrade(self.engine)
        with self.engine.begin() as conn:
            conn.execute(tables.placement_aggregates.insert().values(
                id=50, uuid=None))
            conn.execute(tables.resource_providers.update().where(
                tables.resource_providers.c.id == 9).values(
                generation=None))
            # The default upstream's consumers.generation has in the
            # database, for writers that leave it out.
            conn.execute(sa.text(
                "INSERT INTO consumers (id, uuid, project_id, user_id) "
                "VALUES (60, 'cccccccc-0000-4000-8000-000000000060', 3, 5)"))
            generation = conn.execute(sa.text(
                'SELECT generation FROM consumers WHERE id = 60')).scalar()
        self.assertEqual(0, generation)

    def test_finishes_a_conversion_stopped_half_way(self):
        """MySQL commits each DDL statement: a conversion that failed
        part way leaves some tables converted under the old revision.
        The next upgrade converts the rest and leaves those alone."""
        with self.engine.begin() as conn:
            legacy_schema.convert_table(conn, tables.resource_providers)
            legacy_schema.convert_table(conn, tables.consumers)
            sa.Table('usage_totals', sa.MetaData()).drop(conn)
        migration.upgrade(self.engine)
        self.assertEqual(self.before, _upstream_rows(self.engine))
        self.assert_same_schema(self.fresh_engine())

    def test_a_converted_table_is_left_alone(self):
        migration.upgrade(self.engine)
        with server_fixtures.recorded_statements(self.engine) as statements:
            with self.engine.begin() as conn:
                for table in tables.UPSTREAM_TABLES:
                    legacy_schema.convert_table(conn, table)
        ddl = [s for s in statements
               if s.split()[0].upper() in ('ALTER', 'DROP', 'CREATE')]
        self.assertEqual([], ddl)

    def test_a_database_missing_a_table_is_refused(self):
        with self.engine.begin() as conn:
            legacy.resource_provider_traits.drop(conn)
        error = self.assertRaises(migration.UnknownDatabase,
                                  migration.upgrade, self.engine)
        self.assertIn('resource_provider_traits', str(error))
        # Refused before any change, even on MySQL, which cannot roll
        # DDL back.
        self.assertEqual(legacy.REVISION,
                         migration.current_version(self.engine))
        with self.engine.connect() as conn:
            self.assertTrue(sa.inspect(conn).has_table('usage_totals'))
