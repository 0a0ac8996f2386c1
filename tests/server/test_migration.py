"""The schema migrations (server/db/migration.py and db/migrations)."""

import fixtures
import sqlalchemy as sa
import testtools

from osc_placement.server.db import migration
from osc_placement.server.db import tables

# The newest schema revision.
HEAD_REVISION = '0004_usage_totals_bigint'


class TestMigration(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.tmp = self.useFixture(fixtures.TempDir()).path

    def test_usage_totals_migration_sums_existing_allocations(self):
        """A database written before usage_totals existed gets them
        from its allocations when upgraded."""
        url = 'sqlite:///%s/old.db' % self.tmp
        from osc_placement.server.db import engine
        eng = engine.create_engine(url)
        migration.upgrade(eng, '0001_initial')
        rows = [(1, 'a', 0, 2), (1, 'b', 0, 3), (1, 'a', 2, 10),
                (2, 'c', 0, 1)]
        with eng.begin() as conn:
            conn.execute(tables.allocations.insert(), [
                {'resource_provider_id': rp, 'consumer_id': consumer,
                 'resource_class_id': rc, 'used': used}
                for rp, consumer, rc, used in rows])
        migration.upgrade(eng)
        totals = tables.usage_totals
        with eng.connect() as conn:
            got = set(conn.execute(sa.select(
                totals.c.resource_provider_id, totals.c.resource_class_id,
                totals.c.used)).all())
        self.assertEqual({(1, 0, 5), (1, 2, 10), (2, 0, 1)}, got)
