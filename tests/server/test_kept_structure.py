# SPDX-License-Identifier: Apache-2.0
"""The structure a worker keeps between reads of every tree
(candidates/kept.py) and the stamp that tells it when to read
it again (db/structure.py); which writes change the stamp is
test_structure_stamp.py's.

Every change goes through the API, as a client's would, and each answer
given from a kept structure must equal the answer of a worker that keeps
nothing. Runs on whichever database OSC_PLACEMENT_TEST_DB_URL names
(SQLite by default).
"""

import logging
import uuid as uuidlib

import fixtures as fixtures_lib
import orjson
import sqlalchemy as sa
import testtools
import webob

from benchmarks import client as http_client
from benchmarks import local_server
from osc_placement.server import app as app_mod
from osc_placement.server.candidates import door
from osc_placement.server.candidates import groups
from osc_placement.server.candidates import memo
from osc_placement.server.candidates import policy
from osc_placement.server.candidates import read
from osc_placement.server.candidates import request as cq
from osc_placement.server.candidates import search
from osc_placement.server import conf as conf_mod
from osc_placement.server.db import engine as db_engine
from osc_placement.server.db import structure
from osc_placement.server.db import tables
from tests.server import candidate_cloud as http
from tests.server import fixtures

SHARING = 'MISC_SHARES_VIA_AGGREGATE'
AGG = str(uuidlib.uuid4())
# No limit: every tree is read, the read whose structure is kept.
QUERY = [('resources', 'VCPU:1,DISK_GB:10')]
CANDIDATES_PATH = '/allocation_candidates?resources=VCPU:1,DISK_GB:10'


def call(app, method, path, body=None, version='1.39'):
    req = webob.Request.blank(
        path, method=method,
        headers={'x-auth-token': 'admin',
                 'openstack-api-version': 'placement ' + version})
    if body is not None:
        req.body = orjson.dumps(body)
        req.content_type = 'application/json'
    resp = req.get_response(app)
    return resp.status_int, (orjson.loads(resp.body) if resp.body else None)


class CloudTestCase(http.AppTestCase):
    """Two compute nodes and a shared disk: cn1 and the disk in one
    aggregate, cn2 with its own disk, cn3 with none (no candidate)."""

    def setUp(self):
        super().setUp()
        # Legacy policy defaults: the reshaper is then the admin's too.
        self.app = app_mod.make_app(conf_mod.make_conf(
            fixtures._state['url'], sync_on_startup=False,
            enforce_new_defaults=False), db=self.db,
            candidates=self.candidate_engine)
        fixtures.reset_database(self.db)
        self.uuids = {}
        for name, inventory in (('cn1', {'VCPU': 4}),
                                ('cn2', {'VCPU': 4, 'DISK_GB': 100}),
                                ('cn3', {'VCPU': 4}),
                                ('disk', {'DISK_GB': 1000})):
            self.uuids[name] = self.provider(name, inventory)
        self.ok(call(self.app, 'PUT', self.traits_path('disk'), {
            'traits': [SHARING], 'resource_provider_generation':
                self.generation('disk')}))
        for name in ('cn1', 'disk'):
            self.set_aggregates(name, [AGG])
        self.reads = http.calls_of(self, read, 'read_every_tree')

    def ok(self, response, expected=200):
        status, body = response
        self.assertEqual(expected, status, body)
        return body

    def provider(self, name, inventory, parent=None):
        uuid = str(uuidlib.uuid4())
        body = {'name': name, 'uuid': uuid}
        if parent:
            body['parent_provider_uuid'] = self.uuids[parent]
        self.ok(call(self.app, 'POST', '/resource_providers', body))
        self.uuids[name] = uuid
        self.set_inventory(name, inventory)
        return uuid

    def generation(self, name):
        return self.ok(call(self.app, 'GET', '/resource_providers/%s'
                            % self.uuids[name]))['generation']

    def set_inventory(self, name, totals):
        self.ok(call(self.app, 'PUT', '/resource_providers/%s/inventories'
                     % self.uuids[name], {
                         'resource_provider_generation':
                             self.generation(name),
                         'inventories': {rc: {'total': total}
                                         for rc, total in totals.items()}}))

    def set_aggregates(self, name, aggregates):
        self.ok(call(self.app, 'PUT', '/resource_providers/%s/aggregates'
                     % self.uuids[name], {
                         'aggregates': aggregates,
                         'resource_provider_generation':
                             self.generation(name)}))

    def traits_path(self, name):
        return '/resource_providers/%s/traits' % self.uuids[name]

    def claim(self, name, resources):
        consumer = str(uuidlib.uuid4())
        self.ok(call(self.app, 'PUT', '/allocations/' + consumer, {
            'allocations': {self.uuids[name]: {'resources': resources}},
            'project_id': str(uuidlib.uuid4()),
            'user_id': str(uuidlib.uuid4()),
            'consumer_generation': None, 'consumer_type': 'INSTANCE'}), 204)
        return consumer

    def answer(self):
        status, body = http.get_candidates(self.app, (1, 39), QUERY)
        self.assertEqual(200, status, body)
        return body

    def answer_keeping_nothing(self):
        self.candidate_engine.forget()
        return self.answer()

    def hosts(self, body):
        """The compute nodes the candidates use, by name."""
        names = {uuid: name for name, uuid in self.uuids.items()}
        return sorted({names[uuid] for request in body['allocation_requests']
                       for uuid in request['allocations']} - {'disk'})

    def stamp(self):
        with self.db.read() as conn:
            return structure.read_stamp(conn)


class TestKeptStructure(CloudTestCase):

    def test_the_structure_is_read_once_while_it_stands(self):
        first = self.answer()
        self.assertEqual(['cn1', 'cn2'], self.hosts(first))
        self.assertEqual(first, self.answer())
        self.assertEqual(1, len(self.reads))

    def test_claims_are_seen_without_reading_the_structure_again(self):
        self.answer()
        self.claim('cn1', {'VCPU': 3})
        after = self.answer()
        summary = after['provider_summaries'][self.uuids['cn1']]
        self.assertEqual({'capacity': 4, 'used': 3},
                         summary['resources']['VCPU'])
        self.assertEqual(self.answer_keeping_nothing(), after)
        self.claim('cn1', {'VCPU': 1})
        self.assertEqual(['cn2'], self.hosts(self.answer()))
        self.assertEqual(2, len(self.reads))  # one of them keeping nothing

    def test_a_claim_removed_is_seen(self):
        consumer = self.claim('cn2', {'VCPU': 4})
        self.assertEqual(['cn1'], self.hosts(self.answer()))
        self.ok(call(self.app, 'DELETE', '/allocations/' + consumer), 204)
        self.assertEqual(['cn1', 'cn2'], self.hosts(self.answer()))
        self.assertEqual(1, len(self.reads))

    def test_only_trees_whose_usage_changed_are_walked_again(self):
        """What a request's walk found under each anchor is remembered
        with the structure, and walked again only for an anchor one of
        whose providers' usage changed (memo.AnchorMemo)."""
        # Answers not remembered whole, so that each request searches.
        self.patch(memo, 'REMEMBERED_CANDIDATES', -1)
        walked = http.calls_of(self, groups.SpreadSearch,
                               'providers_at')
        first = self.answer()
        self.assertEqual({self.uuids['cn1'], self.uuids['cn2']},
                         {anchor for _, anchor, _ in walked})
        del walked[:]
        self.assertEqual(first, self.answer())
        self.assertEqual([], walked)
        self.claim('cn2', {'VCPU': 4})
        self.assertEqual(['cn1'], self.hosts(self.answer()))
        self.assertEqual([self.uuids['cn2']],
                         [anchor for _, anchor, _ in walked])

    def test_a_claim_on_a_sharing_provider_is_seen(self):
        """A sharing provider's usage is one of those the remembered
        candidates of the trees it serves depend on."""
        self.assertEqual(['cn1', 'cn2'], self.hosts(self.answer()))
        self.claim('disk', {'DISK_GB': 995})
        after = self.answer()
        self.assertEqual(['cn2'], self.hosts(after))
        self.assertEqual(1, len(self.reads))
        self.assertEqual(self.answer_keeping_nothing(), after)

    def test_a_small_cloud_answers_limited_requests_from_it(self):
        """A scheduler's limited request in a cloud of few trees reads
        every tree, kept, rather than choosing a window of them (however
        small a share of the cloud the window would be)."""
        self.patch(policy, 'WHOLE_READ_SHARE', float('inf'))
        chosen = http.calls_of(self, read.SliceReader, '_choose')
        for _ in range(2):
            status, body = http.get_candidates(self.app, (1, 39),
                                               QUERY + [('limit', '1')])
            self.assertEqual(200, status, body)
            self.assertEqual(1, len(body['allocation_requests']))
        self.assertEqual([], chosen)
        self.assertEqual(1, len(self.reads))

    def test_claims_keep_the_stamp(self):
        before = self.stamp()
        self.claim('cn1', {'VCPU': 1})
        self.claim('disk', {'DISK_GB': 10})
        self.assertEqual(before, self.stamp())

    def test_a_failed_structure_write_keeps_the_stamp(self):
        before = self.stamp()
        self.ok(call(self.app, 'PUT', '/resource_providers/%s/inventories'
                     % self.uuids['cn3'], {
                         'resource_provider_generation': 99,
                         'inventories': {'VCPU': {'total': 8}}}), 409)
        self.assertEqual(before, self.stamp())
        self.set_inventory('cn3', {'VCPU': 8})
        self.assertNotEqual(before, self.stamp())


class TestRememberedAnswers(CloudTestCase):
    """The same request under the same usage is answered as written the
    last time, without a search (memo.RememberedAnswers);
    any usage change, through this worker or another, is searched
    again."""

    def setUp(self):
        super().setUp()
        self.searched = http.calls_of(self, search, 'search')

    def test_answered_as_written(self):
        first = self.answer()
        self.assertEqual(first, self.answer())
        self.assertEqual(1, len(self.searched))

    def test_a_claim_is_searched_again(self):
        self.answer()
        self.claim('cn2', {'VCPU': 4})
        self.assertEqual(['cn1'], self.hosts(self.answer()))
        self.assertEqual(['cn1'], self.hosts(self.answer()))
        self.assertEqual(2, len(self.searched))

    def test_a_claim_through_another_worker_is_searched_again(self):
        other_engine = db_engine.create_engine(fixtures._state['url'])
        self.addCleanup(other_engine.dispose)
        other = app_mod.make_app(conf_mod.make_conf(
            fixtures._state['url'], sync_on_startup=False),
            db=db_engine.Database(other_engine))
        self.answer()
        self.ok(call(other, 'PUT', '/allocations/' + str(uuidlib.uuid4()), {
            'allocations': {self.uuids['cn2']: {'resources': {'VCPU': 4}}},
            'project_id': str(uuidlib.uuid4()),
            'user_id': str(uuidlib.uuid4()),
            'consumer_generation': None, 'consumer_type': 'INSTANCE'}), 204)
        self.assertEqual(['cn1'], self.hosts(self.answer()))

    def test_names_are_checked_every_time(self):
        """A trait deleted since is upstream's 400, not the answer
        remembered when it existed (the deletion also changes the
        structure stamp; the names are checked before either is
        read)."""
        self.ok(call(self.app, 'PUT', '/traits/CUSTOM_GONE'), 201)
        query = QUERY + [('required', 'CUSTOM_GONE')]
        for _ in range(2):
            status, body = http.get_candidates(self.app, (1, 39), query)
            self.assertEqual(200, status, body)
        self.ok(call(self.app, 'DELETE', '/traits/CUSTOM_GONE'), 204)
        status, body = http.get_candidates(self.app, (1, 39), query)
        self.assertEqual(400, status, body)

    def test_a_large_answer_is_searched_again(self):
        self.patch(memo, 'REMEMBERED_CANDIDATES', 1)
        first = self.answer()
        self.assertEqual(first, self.answer())
        self.assertEqual(2, len(self.searched))

    def test_an_empty_answer_says_why_each_time(self):
        logger = self.useFixture(fixtures_lib.FakeLogger(
            name=door.__name__, level=logging.DEBUG))
        for _ in range(2):
            status, body = http.get_candidates(self.app, (1, 39),
                                               [('resources', 'VCPU:9')])
            self.assertEqual(200, status, body)
            self.assertEqual([], body['allocation_requests'])
        self.assertEqual(2, logger.output.count('No allocation candidates'))
        self.assertEqual(1, len(self.searched))


class TestRememberedAnswersBounds(testtools.TestCase):
    """What a kept structure's RememberedAnswers holds: answers of the
    last usage only, as many and as many bytes as its bounds allow."""

    OPTIONS = cq.SearchOptions()

    def setUp(self):
        super().setUp()
        self.patch(memo, 'REMEMBERED_ANSWERS', 2)
        self.patch(memo, 'REMEMBERED_BYTES', 10)
        self.answers = memo.RememberedAnswers()
        self.usage = 1  # the usage stamp answered under
        self.requests = ['key 0', 'key 1', 'key 2']  # their answer keys

    def remember(self, index, written, usage=None):
        self.answers.remember(self.requests[index], self.OPTIONS,
                              self.usage if usage is None else usage,
                              written, 1)

    def recalled(self):
        return [index for index, request in enumerate(self.requests)
                if self.answers.recall(request, self.OPTIONS, self.usage)]

    def test_the_least_recently_asked_goes_first(self):
        self.remember(0, b'0')
        self.remember(1, b'1')
        self.answers.recall(self.requests[0], self.OPTIONS, self.usage)
        self.remember(2, b'2')
        self.assertEqual([0, 2], self.recalled())

    def test_bytes(self):
        self.remember(0, b'x' * 6)
        self.remember(1, b'y' * 6)
        self.assertEqual([1], self.recalled())
        self.remember(1, b'z' * 4)  # replaces its own 6 bytes
        self.remember(0, b'x' * 6)
        self.assertEqual([0, 1], self.recalled())
        self.assertEqual(10, self.answers._bytes)

    def test_answers_under_other_usage_are_dropped(self):
        self.remember(0, b'0')
        self.assertIsNone(self.answers.recall(self.requests[0], self.OPTIONS,
                                              self.usage + 1))
        self.assertEqual([], self.recalled())
        self.remember(1, b'1')
        changed = self.usage + 2
        self.remember(2, b'22', usage=changed)
        self.assertEqual(2, self.answers._bytes)  # 1 went at once
        self.assertEqual((b'22', 1), self.answers.recall(
            self.requests[2], self.OPTIONS, changed))

    def test_only_for_the_options_it_was_found_with(self):
        self.remember(0, b'0')
        self.assertIsNone(self.answers.recall(
            self.requests[0], cq.SearchOptions(
                max_candidates=1), self.usage))
        self.assertEqual([0], self.recalled())

    def test_never_a_random_order_nor_a_large_answer(self):
        keeps = memo.RememberedAnswers.worth_keeping
        few = [None] * memo.REMEMBERED_CANDIDATES
        self.assertTrue(keeps(self.OPTIONS, few))
        self.assertFalse(keeps(cq.SearchOptions(
            randomize=True), few))
        self.assertFalse(keeps(self.OPTIONS, few + [None]))


class TestUsageChangesAreSeen(CloudTestCase):
    """Usage written by others while a worker keeps the structure: on
    PostgreSQL the worker reads only the totals changed since its last
    read (candidates/read.py, read_usage), elsewhere every total."""

    def test_a_write_committed_after_a_read_that_missed_it(self):
        """A transaction that wrote before a read and committed after it:
        the read did not see its totals, and the next one must. (Reading
        the totals changed since the id of a transaction begun after the
        write, the reading one's, rather than since the oldest one
        running misses this write: the test then fails.)"""
        self.assertEqual(['cn1', 'cn2'], self.hosts(self.answer()))
        rp = tables.resource_providers
        with self.db.engine.connect() as other:
            writing = other.begin()
            cn2 = other.execute(sa.select(rp.c.id).where(
                rp.c.uuid == self.uuids['cn2'])).scalar()
            other.execute(tables.allocations.insert().values(
                resource_provider_id=cn2, consumer_id=str(uuidlib.uuid4()),
                resource_class_id=0, used=4))
            # Read while the write is open: not seen yet.
            self.assertEqual(['cn1', 'cn2'], self.hosts(self.answer()))
            writing.commit()
        after = self.answer()
        self.assertEqual(['cn1'], self.hosts(after))
        self.assertEqual(1, len(self.reads))
        self.assertEqual(self.answer_keeping_nothing(), after)

    def test_a_horizon_that_went_back_reads_everything_again(self):
        """A database whose transaction ids are below those the worker
        read before (restored into a new cluster, say, with the same
        stamp) tells nothing of what changed: the structure is read
        again."""
        self.answer()
        kept = self.candidate_engine.kept
        if self.db.engine.dialect.name != 'postgresql':
            self.assertIsNone(kept.last[0])  # every total, every time
            return
        horizon, inventories, usage = kept.last
        kept.last = (horizon + 10 ** 9, inventories, usage)
        self.claim('cn2', {'VCPU': 4})
        self.assertEqual(['cn1'], self.hosts(self.answer()))
        self.assertEqual(2, len(self.reads))

    def test_another_worker_s_claims(self):
        """Two workers (two engines, as two processes or API hosts have)
        on one database, each keeping the structure: what one claims,
        the other's next answer shows."""
        other_engine = db_engine.create_engine(fixtures._state['url'])
        self.addCleanup(other_engine.dispose)
        other = app_mod.make_app(conf_mod.make_conf(
            fixtures._state['url'], sync_on_startup=False),
            db=db_engine.Database(other_engine))
        for app in (self.app, other):
            self.assertEqual(200, http.get_candidates(app, (1, 39),
                                                      QUERY)[0])
        self.claim('cn2', {'VCPU': 4})
        status, body = http.get_candidates(other, (1, 39), QUERY)
        self.assertEqual(200, status, body)
        self.assertEqual(['cn1'], self.hosts(body))
        self.assertEqual(2, len(self.reads))  # once per worker


class TestTwoServerProcesses(CloudTestCase):
    """Two server processes on the test database, as two API hosts: each
    worker keeps the structure, and a claim through one is in the next
    answer of the other."""

    def server(self):
        process, url = local_server.start(fixtures._state['url'],
                                          ready_path=CANDIDATES_PATH)
        self.addCleanup(process.wait, 30)
        self.addCleanup(process.terminate)
        return http_client.Client(url)

    def test_a_claim_through_one_is_seen_by_the_other(self):
        first, second = self.server(), self.server()
        for client in (first, second):
            self.assertEqual(['cn1', 'cn2'], self.hosts(
                client.get(CANDIDATES_PATH).json()))
        first.put('/allocations/' + str(uuidlib.uuid4()), {
            'allocations': {self.uuids['cn2']: {'resources': {'VCPU': 4}}},
            'project_id': str(uuidlib.uuid4()),
            'user_id': str(uuidlib.uuid4()),
            'consumer_generation': None, 'consumer_type': 'INSTANCE'},
            expect=(204,))
        self.assertEqual(['cn1'], self.hosts(
            second.get(CANDIDATES_PATH).json()))


class TestEveryStructureChangeIsSeen(CloudTestCase):
    """After each change the kept structure is read again: the answer is
    what a worker keeping nothing gives, and differs from the one
    before (so each case can fail)."""

    def assert_seen(self, change):
        before = self.answer()
        self.assertEqual(1, len(self.reads))
        change()
        after = self.answer()
        self.assertEqual(2, len(self.reads))
        self.assertNotEqual(before, after)
        self.assertEqual(self.answer_keeping_nothing(), after)
        return after

    def test_inventory_set(self):
        after = self.assert_seen(
            lambda: self.set_inventory('cn3', {'VCPU': 4, 'DISK_GB': 50}))
        self.assertEqual(['cn1', 'cn2', 'cn3'], self.hosts(after))

    def test_inventory_deleted(self):
        after = self.assert_seen(lambda: self.ok(call(
            self.app, 'DELETE', '/resource_providers/%s/inventories'
            % self.uuids['cn2']), 204))
        self.assertEqual(['cn1'], self.hosts(after))

    def test_one_inventory_updated(self):
        def change():
            self.ok(call(self.app, 'PUT',
                         '/resource_providers/%s/inventories/VCPU'
                         % self.uuids['cn2'], {
                             'resource_provider_generation':
                                 self.generation('cn2'), 'total': 16}))
        after = self.assert_seen(change)
        self.assertEqual(16, after['provider_summaries'][self.uuids['cn2']][
            'resources']['VCPU']['capacity'])

    def test_traits_set(self):
        def change():
            self.ok(call(self.app, 'PUT', self.traits_path('cn2'), {
                'traits': ['HW_CPU_X86_AVX2'],
                'resource_provider_generation': self.generation('cn2')}))
        after = self.assert_seen(change)
        self.assertEqual(['HW_CPU_X86_AVX2'], after['provider_summaries'][
            self.uuids['cn2']]['traits'])

    def test_sharing_trait_removed(self):
        after = self.assert_seen(lambda: self.ok(call(
            self.app, 'DELETE', self.traits_path('disk')), 204))
        self.assertEqual(['cn2'], self.hosts(after))

    def test_aggregates_set(self):
        after = self.assert_seen(lambda: self.set_aggregates('cn3', [AGG]))
        self.assertEqual(['cn1', 'cn2', 'cn3'], self.hosts(after))

    def test_provider_created(self):
        after = self.assert_seen(lambda: self.provider(
            'cn4', {'VCPU': 2, 'DISK_GB': 20}))
        self.assertEqual(['cn1', 'cn2', 'cn4'], self.hosts(after))

    def test_child_created(self):
        after = self.assert_seen(lambda: self.provider(
            'numa', {'VCPU': 2}, parent='cn2'))
        self.assertEqual(['cn1', 'cn2', 'numa'], self.hosts(after))

    def test_provider_deleted(self):
        after = self.assert_seen(lambda: self.ok(call(
            self.app, 'DELETE', '/resource_providers/%s'
            % self.uuids['cn2']), 204))
        self.assertEqual(['cn1'], self.hosts(after))

    def test_provider_moved_under_another(self):
        def change():
            self.ok(call(self.app, 'PUT', '/resource_providers/%s'
                         % self.uuids['cn3'], {
                             'name': 'cn3',
                             'parent_provider_uuid': self.uuids['cn2']}))
        after = self.assert_seen(change)
        summary = after['provider_summaries'][self.uuids['cn3']]
        self.assertEqual(self.uuids['cn2'], summary['root_provider_uuid'])

    def test_custom_class_renamed(self):
        status, _ = call(self.app, 'POST', '/resource_classes',
                         {'name': 'CUSTOM_GOLD'})
        self.assertEqual(201, status)
        self.set_inventory('cn2', {'VCPU': 4, 'DISK_GB': 100,
                                   'CUSTOM_GOLD': 1})
        after = self.assert_seen(lambda: self.ok(call(
            self.app, 'PUT', '/resource_classes/CUSTOM_GOLD',
            {'name': 'CUSTOM_SILVER'}, version='1.2')))
        self.assertIn('CUSTOM_SILVER', after['provider_summaries'][
            self.uuids['cn2']]['resources'])

    def test_reshaped(self):
        def change():
            self.ok(call(self.app, 'POST', '/reshaper', {
                'inventories': {self.uuids['cn2']: {
                    'resource_provider_generation': self.generation('cn2'),
                    'inventories': {'VCPU': {'total': 4}}}},
                'allocations': {}}), 204)
        after = self.assert_seen(change)
        self.assertEqual(['cn1'], self.hosts(after))


class TestStampRow(http.AppTestCase):
    """The stamp's row (its column is still named ``version``)."""

    def test_one_random_stamp_after_migration(self):
        """32 random hex digits (on PostgreSQL followed by ``:`` and the
        id of the transaction that set it)."""
        with self.db.read() as conn:
            rows = conn.execute(sa.select(
                tables.provider_structure)).all()
        self.assertEqual(1, len(rows))
        self.assertEqual(1, rows[0].id)
        self.assertRegex(rows[0].version, r'^[0-9a-f]{32}(:[0-9]+)?$')

    def test_without_the_row_nothing_is_kept(self):
        """A database whose stamp row is gone (restored by hand, say)
        is read whole every time rather than answered from a structure
        that could be stale."""
        with self.db.write() as conn:
            conn.execute(tables.provider_structure.delete())
        self.addCleanup(self._restore_row)
        self.candidate_engine.forget()
        for _ in range(2):
            status, body = http.get_candidates(self.app, (1, 39),
                                               [('resources', 'VCPU:1')])
            self.assertEqual(200, status, body)
            self.assertIsNone(self.candidate_engine.kept)

    def _restore_row(self):
        with self.db.write() as conn:
            conn.execute(tables.provider_structure.insert().values(
                id=1, version=uuidlib.uuid4().hex))
