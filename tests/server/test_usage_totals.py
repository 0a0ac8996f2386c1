"""The usage totals kept beside the allocations
(server/objects/usage_totals.py)."""

import fixtures
import sqlalchemy as sa
import testtools

from osc_placement.server.db import migration
from osc_placement.server.db import tables


class TestUsageTotals(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.tmp = self.useFixture(fixtures.TempDir()).path

    def test_usage_totals_rebuild_recounts_from_allocations(self):
        url = 'sqlite:///%s/rebuild.db' % self.tmp
        from osc_placement.server.db import engine
        from osc_placement.server.objects import usage_totals
        eng = engine.create_engine(url)
        migration.upgrade(eng)
        with eng.begin() as conn:
            # Rows written behind the totals' back, and a stale total.
            conn.execute(tables.allocations.insert(), [
                {'resource_provider_id': 7, 'consumer_id': 'a',
                 'resource_class_id': 0, 'used': 4},
                {'resource_provider_id': 7, 'consumer_id': 'b',
                 'resource_class_id': 0, 'used': 2}])
            conn.execute(tables.usage_totals.insert(), [
                {'resource_provider_id': 9, 'resource_class_id': 1,
                 'used': 5}])
            usage_totals.rebuild(conn)
            got = set(conn.execute(sa.select(
                tables.usage_totals.c.resource_provider_id,
                tables.usage_totals.c.resource_class_id,
                tables.usage_totals.c.used)).all())
        self.assertEqual({(7, 0, 6)}, got)
