# SPDX-License-Identifier: Apache-2.0
"""A rolling upgrade: upstream Placement 16.0.0 and ours serving one
database at the same time, with writers on both sides.

Afterwards no provider is over capacity (read with SQL) and every read of
ours -- provider usages, provider allocations, allocation candidates with
a limit -- agrees with the rows, whoever wrote them. On the database
OSC_PLACEMENT_TEST_DB_URL names (SQLite when unset), each test in a
database of its own that upstream created and ours then took over.
"""

import random
import threading
import uuid

import sqlalchemy as sa
from testtools import content

from tests.compat import populate
from tests.compat import upstream

PROVIDERS = 3
VCPU_PER_PROVIDER = 4
OPERATIONS_PER_WRITER = 25
OUR_WRITERS = 3
# Upstream over-allocates under concurrency: its retry after losing a
# provider's generation race runs inside the same transaction, which on
# PostgreSQL counts its own failed insert as usage and on MySQL/MariaDB
# checks capacity against the REPEATABLE READ snapshot taken before the
# winner committed, with the winner's fresh generation (read apart) -- so
# it passes, whoever won, ours included. Upstream here never retries
# (UPSTREAM_RETRIES: a lost race is its 409) and has ONE writer, so a
# provider over capacity means ours let a claim through.
UPSTREAM_WRITERS = 1
UPSTREAM_RETRIES = 1
DELETE_SHARE = 0.25
CANDIDATE_LIMIT = 10

CAPACITY_SQL = """
SELECT rp.uuid, rc.name, i.total, i.reserved, i.allocation_ratio,
       i.min_unit, i.max_unit,
       (SELECT COALESCE(SUM(a.used), 0) FROM allocations a
         WHERE a.resource_provider_id = i.resource_provider_id
           AND a.resource_class_id = i.resource_class_id) AS used
  FROM inventories i
  JOIN resource_providers rp ON rp.id = i.resource_provider_id
  JOIN resource_classes rc ON rc.id = i.resource_class_id
"""
ALLOCATIONS_SQL = """
SELECT rp.uuid, a.consumer_id, rc.name, a.used
  FROM allocations a
  JOIN resource_providers rp ON rp.id = a.resource_provider_id
  JOIN resource_classes rc ON rc.id = a.resource_class_id
"""


class Inventory:
    """One provider's inventory of one class and what the rows use of
    it."""

    def __init__(self, row):
        (self.provider, self.resource_class, self.total, self.reserved,
         ratio, self.min_unit, self.max_unit, used) = row
        self.ratio = float(ratio)
        self.used = int(used)

    @property
    def capacity(self):
        return int((self.total - self.reserved) * self.ratio)

    def fits(self, amount):
        return (self.min_unit <= amount <= self.max_unit
                and self.used + amount <= self.capacity)


def inventories(db_url):
    """Every inventory with its usage summed from the allocation rows."""
    return [Inventory(row) for row in _query(db_url, CAPACITY_SQL)]


def allocations_by_provider(db_url):
    """{provider: {consumer: {class: used}}} from the allocation rows."""
    found = {}
    for provider, consumer, resource_class, used in _query(
            db_url, ALLOCATIONS_SQL):
        found.setdefault(provider, {}).setdefault(
            consumer, {})[resource_class] = used
    return found


def _query(db_url, sql):
    engine = sa.create_engine(db_url)
    try:
        with engine.connect() as conn:
            return [tuple(row) for row in conn.exec_driver_sql(sql)]
    finally:
        engine.dispose()


class ConsumerPool:
    """The consumers written so far, by either side; any writer may
    delete any of them, so each side deletes what the other wrote."""

    def __init__(self):
        self._lock = threading.Lock()
        self._consumers = []

    def add(self, consumer):
        with self._lock:
            self._consumers.append(consumer)

    def take(self, rng):
        with self._lock:
            if not self._consumers:
                return None
            return self._consumers.pop(rng.randrange(len(self._consumers)))


class Writer(threading.Thread):
    """Claims one or two VCPU on a random provider, or deletes a random
    consumer from the pool, recording each answer's status."""

    def __init__(self, name, base, providers, pool, seed):
        super().__init__(name=name, daemon=True)
        self.client = upstream.Client(base)
        self.providers = providers
        self.pool = pool
        self.rng = random.Random(seed)
        self.statuses = []   # (operation, status, body)
        self.error = None

    def run(self):
        try:
            for _ in range(OPERATIONS_PER_WRITER):
                if self.rng.random() < DELETE_SHARE and self._delete():
                    continue
                self._claim()
        except Exception as exc:  # reported by the test, not lost
            self.error = exc

    def _claim(self):
        consumer = str(uuid.uuid4())
        body = populate.allocation_body(
            {self.rng.choice(self.providers):
             {'VCPU': self.rng.choice((1, 2))}},
            'rolling', self.name, 'INSTANCE')
        status, answer = self.client.request(
            'PUT', '/allocations/%s' % consumer, body)
        self.statuses.append(('claim', status, answer))
        if status == 204:
            self.pool.add(consumer)

    def _delete(self):
        consumer = self.pool.take(self.rng)
        if consumer is None:
            return False
        status, answer = self.client.request(
            'DELETE', '/allocations/%s' % consumer)
        self.statuses.append(('delete', status, answer))
        return True

    def unexpected(self):
        """Answers other than a claim's 204 or 409 and a delete's 204."""
        allowed = {'claim': (204, 409), 'delete': (204,)}
        return [(op, status, answer) for op, status, answer in self.statuses
                if status not in allowed[op]]


class TestRollingUpgrade(upstream.BothSidesTestCase):

    def setUp(self):
        super().setUp()
        self._prepare_database()

    def _prepare_database(self):
        # As an upgrade starts: upstream's database, taken over by ours.
        self.upstream.db_sync()
        self.ours.db_sync()
        self.upstream.set_placement_options(
            allocation_conflict_retry_count=UPSTREAM_RETRIES)

    def _small_providers(self, client, count, vcpu):
        providers = []
        for index in range(count):
            rp = str(uuid.uuid4())
            populate.create_provider(client, 'rolling-%d' % index, rp)
            populate.set_inventories(client, rp, {'VCPU': {'total': vcpu}})
            providers.append(rp)
        return providers

    def test_writers_on_both_sides(self):
        pool = ConsumerPool()
        with self.upstream.serve() as upstream_base, \
                self.ours.serve() as our_base:
            ours = upstream.Client(our_base)
            providers = self._small_providers(ours, PROVIDERS,
                                              VCPU_PER_PROVIDER)
            our_writers = [Writer('ours-%d' % n, our_base, providers, pool,
                                  seed=n) for n in range(OUR_WRITERS)]
            upstream_writers = [
                Writer('upstream-%d' % n, upstream_base, providers, pool,
                       seed=100 + n) for n in range(UPSTREAM_WRITERS)]
            writers = our_writers + upstream_writers
            for writer in writers:
                writer.start()
            for writer in writers:
                writer.join()
            for writer in writers:
                self.assertIsNone(writer.error, writer.name)
            self._report_statuses(writers)
            for writer in our_writers:
                self.assertEqual([], writer.unexpected(), writer.name)
            if not self.db_url.startswith('sqlite'):
                # Ours and upstream's writers lock a provider's row and its
                # usage_totals rows in opposite orders, so they may
                # deadlock; upstream retries its allocation writes on
                # deadlock as ours does, so no answer may be a 500.
                for writer in upstream_writers:
                    self.assertEqual([], writer.unexpected(), writer.name)

            self.assert_within_capacity()
            self.assert_reads_agree(ours, providers)

    def _report_statuses(self, writers):
        # Upstream's own failures on SQLite ("database is locked") are
        # its own and do not fail the test; they are shown with it.
        for writer in writers:
            counts = {}
            for op, status, _answer in writer.statuses:
                key = '%s %d' % (op, status)
                counts[key] = counts.get(key, 0) + 1
            self.addDetail('%s answers' % writer.name, content.text_content(
                repr(sorted(counts.items()))))

    def assert_within_capacity(self):
        over = ['%s %s: %d used of %d' % (
            inv.provider, inv.resource_class, inv.used, inv.capacity)
            for inv in inventories(self.db_url) if inv.used > inv.capacity]
        self.assertEqual([], over, 'providers over capacity')

    def assert_reads_agree(self, client, providers):
        rows = {(inv.provider, inv.resource_class): inv
                for inv in inventories(self.db_url)}
        held = allocations_by_provider(self.db_url)
        for rp in providers:
            path = '/resource_providers/%s' % rp
            self.assertEqual(
                {'VCPU': rows[(rp, 'VCPU')].used},
                client.get(path + '/usages')['usages'], 'usages of %s' % rp)
            answer = client.get(path + '/allocations')['allocations']
            self.assertEqual(
                held.get(rp, {}),
                {consumer: alloc['resources']
                 for consumer, alloc in answer.items()},
                'allocations of %s' % rp)
        self.assert_candidates_agree(client, providers, rows)

    def assert_candidates_agree(self, client, providers, rows):
        answer = client.get(
            '/allocation_candidates?resources=VCPU:1&limit=%d'
            % CANDIDATE_LIMIT)
        offered = {rp for request in answer['allocation_requests']
                   for rp in request['allocations']}
        with_room = {rp for rp in providers if rows[(rp, 'VCPU')].fits(1)}
        self.assertEqual(with_room, offered & set(providers),
                         'candidates against the rows')
        for rp in offered & set(providers):
            self.assertEqual(
                rows[(rp, 'VCPU')].used,
                answer['provider_summaries'][rp]['resources']['VCPU']
                ['used'], 'candidate usage of %s' % rp)
        # A limit below the providers with room: some of them, none full.
        first = self._candidates(client, 1, limit=1)
        self.assertLessEqual(first, with_room, 'limit=1 offered a full one')
        self.assertEqual(min(1, len(with_room)), len(first),
                         'limit=1 against the rows')

    def test_each_side_sees_the_others_writes(self):
        """The issue's cases, one at a time: ours must answer from the
        rows upstream just wrote, never from what it kept."""
        with self.upstream.serve() as upstream_base, \
                self.ours.serve() as our_base:
            ours = upstream.Client(our_base)
            theirs = upstream.Client(upstream_base)
            # Ours reads first, so anything it keeps is warm.
            ours.get('/allocation_candidates?resources=VCPU:1&limit=10')
            # A provider upstream adds.
            rp, = self._small_providers(theirs, 1, 8)
            self.assertIn(rp, self._candidates(ours, 8))
            # Upstream fills it: ours must see it full.
            first = self._claim(theirs, rp, {'VCPU': 8})
            self.assertEqual({'VCPU': 8}, self._usages(ours, rp))
            self.assertNotIn(rp, self._candidates(ours, 1))
            self.assertEqual(409, self._try_claim(ours, rp, {'VCPU': 1}))
            # Upstream frees it: ours must see the room again.
            theirs.call('DELETE', '/allocations/%s' % first)
            self.assertEqual({'VCPU': 0}, self._usages(ours, rp))
            self.assertIn(rp, self._candidates(ours, 8))
            second = self._claim(ours, rp, {'VCPU': 8})
            # Upstream deletes what ours wrote: the capacity comes back.
            theirs.call('DELETE', '/allocations/%s' % second)
            self.assertEqual({'VCPU': 0}, self._usages(ours, rp))
            self._claim(ours, rp, {'VCPU': 8})
        self.assert_within_capacity()

    def test_structure_written_by_upstream_reaches_ours(self):
        """Inventory totals and child providers upstream writes change
        ours' candidates and claims at once."""
        with self.upstream.serve() as upstream_base, \
                self.ours.serve() as our_base:
            ours = upstream.Client(our_base)
            theirs = upstream.Client(upstream_base)
            rp, = self._small_providers(ours, 1, 8)
            self.assertIn(rp, self._candidates(ours, 8))
            # Upstream shrinks the total: ours must stop offering 8.
            populate.set_inventories(theirs, rp, {'VCPU': {'total': 4}})
            self.assertNotIn(rp, self._candidates(ours, 8))
            self.assertEqual(409, self._try_claim(ours, rp, {'VCPU': 8}))
            # Upstream adds a child with inventory: ours must offer it.
            child = str(uuid.uuid4())
            populate.create_provider(theirs, 'rolling-child', child,
                                     parent=rp)
            populate.set_inventories(theirs, child,
                                     {'MEMORY_MB': {'total': 1024}})
            self.assertIn(child, self._candidates(
                ours, 1, extra=',MEMORY_MB:512'))
            self._claim(ours, child, {'MEMORY_MB': 512})
        self.assert_within_capacity()

    def _candidates(self, client, vcpu, limit=CANDIDATE_LIMIT, extra=''):
        answer = client.get('/allocation_candidates?resources=VCPU:%d%s'
                            '&limit=%d' % (vcpu, extra, limit))
        return {rp for request in answer['allocation_requests']
                for rp in request['allocations']}

    def _usages(self, client, rp):
        return client.get('/resource_providers/%s/usages' % rp)['usages']

    def _try_claim(self, client, rp, resources):
        status, _answer = client.request(
            'PUT', '/allocations/%s' % uuid.uuid4(),
            populate.allocation_body({rp: resources}, 'rolling',
                                     'one-at-a-time', 'INSTANCE'))
        return status

    def _claim(self, client, rp, resources):
        consumer = str(uuid.uuid4())
        client.call('PUT', '/allocations/%s' % consumer,
                    populate.allocation_body({rp: resources}, 'rolling',
                                             'one-at-a-time', 'INSTANCE'))
        return consumer


class TestRollingUpgradeOnOurDatabase(TestRollingUpgrade):
    """The same on a database ours created: upstream must be able to
    join it (its db sync and db version succeed), as when an upgrade is
    rolled back."""

    def _prepare_database(self):
        self.ours.db_sync()
        self.upstream.db_sync()
        self.assertEqual(upstream.UPSTREAM_HEAD, self.upstream.db_version())
