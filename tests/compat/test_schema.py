# SPDX-License-Identifier: Apache-2.0
"""The schema our ``db sync`` creates is upstream Placement 16.0.0's
schema plus our additions, and ``db hand-back`` leaves upstream's alone.

Upstream builds one database with its own ``placement-manage db sync``;
ours builds another; both are described by reflection (tables, columns
with types, nullability, defaults and autoincrement, primary keys, unique
constraints, foreign keys and indexes with their names) and must be equal
but for the tables we add. On the database OSC_PLACEMENT_TEST_DB_URL
names (SQLite when unset).
"""

import sqlalchemy as sa
import testtools

from osc_placement.server.db import engine as db_engine
from tests.compat import upstream
from tests.server import schema_compare

# What this server adds to upstream's schema.
OUR_TABLES = {'usage_totals', 'provider_structure', 'osc_placement_version'}


def _described(test, db_url):
    engine = db_engine.create_engine(db_url)
    test.addCleanup(engine.dispose)
    return schema_compare.describe(engine), engine


class TestSchemaIsUpstreams(testtools.TestCase):

    def setUp(self):
        super().setUp()
        theirs_url = upstream.new_database(self)
        ours_url = upstream.new_database(self)
        upstream.Upstream(theirs_url).db_sync()
        self.ours_side = upstream.Ours(ours_url)
        self.addCleanup(self.ours_side.remove_state)
        self.ours_side.db_sync()
        self.theirs, self.their_engine = _described(self, theirs_url)
        self.ours, self.our_engine = _described(self, ours_url)

    def test_upstream_tables_equal(self):
        ours = {name: table for name, table in self.ours.items()
                if name not in OUR_TABLES}
        self.assertEqual([], schema_compare.differences(self.theirs, ours))

    def test_only_our_tables_added(self):
        self.assertEqual(OUR_TABLES, set(self.ours) - set(self.theirs))

    def test_hand_back_leaves_exactly_upstreams_schema(self):
        self.ours_side.hand_back()
        handed_back = schema_compare.describe(self.our_engine)
        self.assertEqual(
            [], schema_compare.differences(self.theirs, handed_back))
        self.assertEqual(schema_compare.trigger_names(self.their_engine),
                         schema_compare.trigger_names(self.our_engine))
        # And it can be taken over again.
        self.ours_side.db_sync()
        self.assertEqual(self.ours, schema_compare.describe(self.our_engine))

    def test_upstream_revision_recorded(self):
        with self.our_engine.connect() as conn:
            self.assertEqual('a082b8bb98d0', conn.execute(sa.text(
                'SELECT version_num FROM alembic_version')).scalar())
