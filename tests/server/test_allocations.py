# SPDX-License-Identifier: Apache-2.0
"""Allocation writes (the lost-race retry loop, the statement budget, the
over-capacity warning) and the reads of a consumer's or a provider's rows
with their generation, on the test database."""

import json
import logging
import uuid as uuidlib

import fixtures
import testtools
import webob

from osc_placement.server import app as app_mod
from osc_placement.server import conf as conf_mod
from osc_placement.server.db import engine as db_engine
from osc_placement.server.db import pipeline
from osc_placement.server.db import tables
from osc_placement.server.objects import allocation as alloc_obj
from tests.server import fixtures as api_fixtures

RETRIES = 3


class AllocationTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        db = api_fixtures.database()
        api_fixtures.reset_database(db)
        self.db = db_engine.Database(db.engine, write_retries=RETRIES)
        self.app = app_mod.make_app(conf_mod.make_conf(
            'unused://', enforce_new_defaults=False), db=self.db)

    def call(self, method, path, body=None):
        req = webob.Request.blank(path, method=method, headers={
            'X-Auth-Token': 'admin',
            'OpenStack-API-Version': 'placement latest'})
        if body is not None:
            req.body = json.dumps(body).encode()
            req.content_type = 'application/json'
        resp = req.get_response(self.app)
        return resp.status_int, (resp.json if resp.body else None)

    def provider(self, name, inventories):
        _, body = self.call('POST', '/resource_providers', {'name': name})
        status, _ = self.call(
            'PUT', '/resource_providers/%s/inventories' % body['uuid'],
            {'resource_provider_generation': 0, 'inventories': inventories})
        self.assertEqual(200, status)
        return body['uuid']

    def claim(self, allocations, consumer=None):
        body = {'allocations': {rp: {'resources': res}
                                for rp, res in allocations.items()},
                'project_id': 'p', 'user_id': 'u',
                'consumer_generation': None, 'consumer_type': 'INSTANCE'}
        return self.call('PUT', '/allocations/%s'
                         % (consumer or uuidlib.uuid4()), body)


class TestLostRace(AllocationTestCase):
    """A provider changed since it was read: the write is re-read and
    re-applied in a fresh transaction, up to the configured count."""

    def _stale_reads(self, stale_attempts):
        real = alloc_obj._providers_from
        attempts = []

        def load(rows):
            providers = real(rows)
            attempts.append(1)
            if len(attempts) <= stale_attempts:
                # As if another writer bumped them right after this read.
                for provider in providers.values():
                    provider['generation'] -= 1
            return providers
        self.useFixture(fixtures.MonkeyPatch(
            'osc_placement.server.objects.allocation._providers_from', load))
        # A claim in one round trip reads nothing that can go stale:
        # these writes take the paths that can.
        self.useFixture(fixtures.MonkeyPatch(
            'osc_placement.server.objects.allocation._claimed_in_one_trip',
            lambda conn, writes, named: False))
        return attempts

    def test_retried_until_it_wins(self):
        rp = self.provider('rp', {'VCPU': {'total': 4}})
        attempts = self._stale_reads(stale_attempts=2)
        status, _ = self.claim({rp: {'VCPU': 1}})
        self.assertEqual(204, status)
        self.assertEqual(3, len(attempts))
        _, usages = self.call('GET', '/resource_providers/%s/usages' % rp)
        self.assertEqual({'VCPU': 1}, usages['usages'])
        self.assertEqual(2, usages['resource_provider_generation'])

    def test_conflict_once_retries_run_out(self):
        rp = self.provider('rp', {'VCPU': {'total': 4}})
        consumer = str(uuidlib.uuid4())
        attempts = self._stale_reads(stale_attempts=100)
        status, body = self.claim({rp: {'VCPU': 1}}, consumer)
        self.assertEqual(409, status)
        self.assertEqual(1 + RETRIES, len(attempts))
        error = body['errors'][0]
        self.assertEqual('placement.concurrent_update', error['code'])
        self.assertIn('Inventory and/or allocations changed while '
                      'attempting to allocate', error['detail'])
        # Nothing of the failed attempts remains.
        _, allocations = self.call('GET', '/allocations/' + consumer)
        self.assertEqual({'allocations': {}}, allocations)

    def test_running_out_is_logged_as_upstream(self):
        rp = self.provider('rp', {'VCPU': {'total': 4}})
        self._stale_reads(stale_attempts=100)
        log = self.useFixture(fixtures.FakeLogger(level=logging.WARNING))
        self.assertEqual(409, self.claim({rp: {'VCPU': 1}})[0])
        self.assertIn('Exceeded retry limit of %d on allocations write'
                      % RETRIES, log.output)

    def test_reshaper_words_the_conflict_as_upstream(self):
        rp = self.provider('rp', {'VCPU': {'total': 4}})
        self._stale_reads(stale_attempts=100)
        log = self.useFixture(fixtures.FakeLogger(level=logging.WARNING))
        status, body = self.call('POST', '/reshaper', {
            'inventories': {rp: {'resource_provider_generation': 1,
                                 'inventories': {'VCPU': {'total': 4}}}},
            'allocations': {str(uuidlib.uuid4()): {
                'allocations': {rp: {'resources': {'VCPU': 1}}},
                'project_id': 'p', 'user_id': 'u',
                'consumer_generation': None, 'consumer_type': 'INSTANCE'}}})
        self.assertEqual(409, status)
        error = body['errors'][0]
        self.assertEqual('placement.concurrent_update', error['code'])
        self.assertIn('update conflict: Another thread concurrently updated '
                      'the resource provider data. Please retry your update',
                      error['detail'])
        self.assertIn('Exceeded retry limit', log.output)

    def test_retry_count_comes_from_the_configuration(self):
        tmp = self.useFixture(fixtures.TempDir()).path
        self.app = app_mod.make_app(conf_mod.make_conf(
            'sqlite:///%s/p.db' % tmp, enforce_new_defaults=False,
            allocation_conflict_retry_count=1))
        rp = self.provider('rp', {'VCPU': {'total': 4}})
        attempts = self._stale_reads(stale_attempts=100)
        status, _ = self.claim({rp: {'VCPU': 1}})
        self.assertEqual(409, status)
        self.assertEqual(2, len(attempts))


class TestStatementBudget(AllocationTestCase):
    """One write is a fixed handful of statements, however many
    providers and classes it names."""

    def _statements_of(self, fn):
        with api_fixtures.recorded_statements(self.db.engine) as statements:
            return fn(), statements

    def test_write_statements_do_not_grow_with_providers(self):
        inventory = {'VCPU': {'total': 8}, 'MEMORY_MB': {'total': 512}}
        one = self.provider('one', inventory)
        many = [self.provider('p%d' % n, inventory) for n in range(5)]
        # Warm up: the project and user exist from here on.
        self.assertEqual(204, self.claim({one: {'VCPU': 1}})[0])
        (status, _), small = self._statements_of(
            lambda: self.claim({one: {'VCPU': 1, 'MEMORY_MB': 1}}))
        self.assertEqual(204, status)
        (status, _), large = self._statements_of(
            lambda: self.claim({rp: {'VCPU': 1, 'MEMORY_MB': 1}
                                for rp in many}))
        self.assertEqual(204, status)
        self.assertEqual(len(small), len(large), large)
        self.assertLessEqual(len(large), 10, large)

    def test_claim_is_one_pipeline_on_postgresql(self):
        """A new consumer's claim (a scheduler's) on PostgreSQL: the
        BEGIN, the providers' locks (their usage rows, then the
        providers), the statement that checks and writes, and the COMMIT
        in one round trip. The writers queued behind it wait for the
        statement and the commit."""
        rps = [self.provider('p%d' % n, {'VCPU': {'total': 8}})
               for n in range(3)]
        self.assertEqual(204, self.claim({rps[0]: {'VCPU': 1}})[0])
        trips = self._round_trips_through_the_driver()
        (status, _), statements = self._statements_of(
            lambda: self.claim({rp: {'VCPU': 2} for rp in rps}))
        self.assertEqual(204, status)
        if self.db.engine.dialect.name == 'postgresql':
            self.assertEqual([], statements)
            # Nothing (no BEGIN of psycopg's) before it: its BEGIN went
            # with it.
            self.assertEqual([(2, 'IDLE', True)],
                             [(len(texts), status, commit)
                              for texts, status, commit in trips])
            self.assertIn('FOR UPDATE', trips[0][0][0])
            self.assertIn('WITH named_consumers', trips[0][0][1])
        else:
            self.assertEqual([], trips)
            self.assertEqual([], [s for s in statements if 'WITH bumped' in s])
        _, usages = self.call('GET', '/resource_providers/%s/usages'
                              % rps[0])
        self.assertEqual({'VCPU': 3}, usages['usages'])
        self.assertEqual(3, usages['resource_provider_generation'])
        for rp in rps[1:]:
            _, usages = self.call('GET', '/resource_providers/%s/usages'
                                  % rp)
            self.assertEqual(({'VCPU': 2}, 2), (
                usages['usages'], usages['resource_provider_generation']))

    def _round_trips_through_the_driver(self):
        """A list that fills with ([statement texts], the connection's
        transaction status before, commit) for each round trip
        db/pipeline.py makes."""
        real, trips = pipeline.run, []

        def run(conn, statements, commit=False):
            status = conn.connection.driver_connection.info
            trips.append(([text for text, _ in statements],
                          status.transaction_status.name, commit))
            return real(conn, statements, commit)
        self.useFixture(fixtures.MonkeyPatch(
            'osc_placement.server.db.pipeline.run', run))
        return trips

    def test_claim_keeps_awkward_project_and_user_ids_as_sent(self):
        """On PostgreSQL the claim's lists go as array literals: quotes,
        backslashes, commas, braces and the word NULL stay themselves."""
        rp = self.provider('one', {'VCPU': {'total': 8}})
        consumer = str(uuidlib.uuid4())
        project, user = 'p,"q\\r{s} t', 'NULL'
        status, _ = self.call('PUT', '/allocations/' + consumer, {
            'allocations': {rp: {'resources': {'VCPU': 1}}},
            'project_id': project, 'user_id': user,
            'consumer_generation': None, 'consumer_type': 'INSTANCE'})
        self.assertEqual(204, status)
        _, body = self.call('GET', '/allocations/' + consumer)
        self.assertEqual((project, user),
                         (body['project_id'], body['user_id']))

    def test_claim_of_whole_amounts_written_with_a_fraction(self):
        """JSON's 1.0 is an integer to the schemas: claimed as 1."""
        rp = self.provider('one', {'VCPU': {'total': 8}})
        self.assertEqual(204, self.claim({rp: {'VCPU': 2.0}})[0])
        _, usages = self.call('GET', '/resource_providers/%s/usages' % rp)
        self.assertEqual({'VCPU': 2}, usages['usages'])

    def test_claim_of_an_existing_consumer_takes_the_general_path(self):
        rp = self.provider('one', {'VCPU': {'total': 8}})
        consumer = str(uuidlib.uuid4())
        self.assertEqual(204, self.claim({rp: {'VCPU': 1}}, consumer)[0])
        status, body = self.claim({rp: {'VCPU': 2}}, consumer)
        self.assertEqual(409, status)
        self.assertIn('consumer generation conflict - expected 1 but got '
                      'None', body['errors'][0]['detail'])
        _, usages = self.call('GET', '/resource_providers/%s/usages' % rp)
        self.assertEqual({'VCPU': 1}, usages['usages'])


def _trip_kind(text):
    for marker, kind in (('WITH named_consumers', 'one trip'),
                         ('FOR UPDATE', 'read'), ('WITH bumped', 'write')):
        if marker in text:
            return kind
    return text


class TestClaimInOneTrip(AllocationTestCase):
    """A claim the one-trip statement does not write (a check fails, or
    might) commits nothing and is answered by the general path, in a new
    transaction: the same answers as before, on every database."""

    def setUp(self):
        super().setUp()
        # Project 'p' and user 'u' exist from here on.
        warm = self.provider('warm', {'VCPU': {'total': 1}})
        self.assertEqual(204, self.claim({warm: {'VCPU': 1}})[0])
        self.trips = None
        if self.db.engine.dialect.name == 'postgresql':
            self.trips = TestStatementBudget._round_trips_through_the_driver(
                self)

    def assertTrips(self, expected):
        """The round trips of the last request, by the statements they
        carried (PostgreSQL only), and forget them."""
        if self.trips is None:
            return
        kinds = [_trip_kind(' '.join(texts)) for texts, _, _ in self.trips]
        del self.trips[:]
        self.assertEqual(expected, kinds)

    def claim_as(self, project, user, allocations, consumer_type=None):
        body = {'allocations': {rp: {'resources': res}
                                for rp, res in allocations.items()},
                'project_id': project, 'user_id': user,
                'consumer_generation': None,
                'consumer_type': consumer_type or 'INSTANCE'}
        return self.call('PUT', '/allocations/%s' % uuidlib.uuid4(), body)

    def usage(self, rp):
        _, body = self.call('GET', '/resource_providers/%s/usages' % rp)
        return body['usages'], body['resource_provider_generation']

    def test_over_capacity_is_the_general_paths_409(self):
        rp = self.provider('one', {'VCPU': {'total': 4}})
        self.assertEqual(204, self.claim({rp: {'VCPU': 3}})[0])
        self.assertTrips(['one trip'])
        status, body = self.claim({rp: {'VCPU': 2}})
        self.assertEqual(409, status)
        self.assertIn("Unable to create allocation for 'VCPU' on resource "
                      "provider '%s'. The requested amount would exceed "
                      "the capacity." % rp, body['errors'][0]['detail'])
        self.assertTrips(['one trip', 'read'])
        self.assertEqual(({'VCPU': 3}, 2), self.usage(rp))
        # Exactly full fits.
        self.assertEqual(204, self.claim({rp: {'VCPU': 1}})[0])
        self.assertTrips(['one trip'])
        self.assertEqual(({'VCPU': 4}, 3), self.usage(rp))

    def test_capacity_counts_reserved_and_the_allocation_ratio(self):
        rp = self.provider('one', {'VCPU': {
            'total': 4, 'reserved': 1, 'allocation_ratio': 1.5}})
        # (4 - 1) * 1.5 = 4.5: 4 fits, 5 does not.
        self.assertEqual(409, self.claim({rp: {'VCPU': 5}})[0])
        self.assertTrips(['one trip', 'read'])
        self.assertEqual(204, self.claim({rp: {'VCPU': 4}})[0])
        self.assertTrips(['one trip'])

    def test_units_are_the_general_paths_409(self):
        rp = self.provider('one', {'VCPU': {
            'total': 16, 'min_unit': 2, 'max_unit': 8, 'step_size': 2}})
        for amount in (1, 3, 10):
            status, body = self.claim({rp: {'VCPU': amount}})
            self.assertEqual(409, status, amount)
            self.assertIn('would violate inventory constraints',
                          body['errors'][0]['detail'])
            self.assertTrips(['one trip', 'read'])
        self.assertEqual(204, self.claim({rp: {'VCPU': 4}})[0])
        self.assertTrips(['one trip'])
        self.assertEqual(({'VCPU': 4}, 2), self.usage(rp))

    def test_a_class_without_inventory_and_an_unknown_provider(self):
        rp = self.provider('one', {'VCPU': {'total': 4}})
        status, body = self.claim({rp: {'VCPU': 1, 'MEMORY_MB': 1}})
        self.assertEqual(409, status)
        self.assertIn("Inventory for 'MEMORY_MB' on resource provider "
                      "'%s' invalid." % rp, body['errors'][0]['detail'])
        self.assertTrips(['one trip', 'read'])
        missing = str(uuidlib.uuid4())
        status, body = self.claim({rp: {'VCPU': 1}, missing: {'VCPU': 1}})
        self.assertEqual(400, status)
        self.assertIn("Allocation for resource provider '%s' that does not "
                      "exist." % missing, body['errors'][0]['detail'])
        self.assertTrips(['one trip', 'read'])
        # Unknown providers only: none to swap, and still nothing written.
        status, body = self.claim({missing: {'VCPU': 1}})
        self.assertEqual(400, status)
        self.assertIn("Allocation for resource provider '%s' that does not "
                      "exist." % missing, body['errors'][0]['detail'])
        self.assertTrips(['one trip', 'read'])
        self.assertEqual(({'VCPU': 0}, 1), self.usage(rp))

    def test_a_new_project_user_and_type_take_the_general_path_once(self):
        rp = self.provider('one', {'VCPU': {'total': 8}})
        self.assertEqual(204, self.claim_as('new-p', 'new-u', {
            rp: {'VCPU': 1}}, consumer_type='MIGRATION')[0])
        self.assertTrips(['one trip', 'read', 'write'])
        self.assertEqual(204, self.claim_as('new-p', 'new-u', {
            rp: {'VCPU': 1}}, consumer_type='MIGRATION')[0])
        self.assertTrips(['one trip'])
        self.assertEqual(({'VCPU': 2}, 3), self.usage(rp))

    def test_an_amount_beyond_the_integer_column(self):
        rp = self.provider('one', {'VCPU': {'total': 4}})
        status, body = self.claim({rp: {'VCPU': 2 ** 31}})
        self.assertEqual(409, status)
        self.assertIn('would violate inventory constraints',
                      body['errors'][0]['detail'])
        self.assertTrips(['read'])

    def test_the_written_consumer_and_a_custom_class(self):
        self.assertEqual(201, self.call('PUT',
                                        '/resource_classes/CUSTOM_GOLD')[0])
        rp = self.provider('one', {'CUSTOM_GOLD': {'total': 4}})
        consumer = str(uuidlib.uuid4())
        self.assertEqual(204, self.claim({rp: {'CUSTOM_GOLD': 2}},
                                         consumer)[0])
        self.assertTrips(['one trip'])
        _, body = self.call('GET', '/allocations/' + consumer)
        self.assertEqual(
            ({rp: {'generation': 2, 'resources': {'CUSTOM_GOLD': 2}}},
             'p', 'u', 1, 'INSTANCE'),
            (body['allocations'], body['project_id'], body['user_id'],
             body['consumer_generation'], body['consumer_type']))

    def test_two_consumers_in_one_request(self):
        rp = self.provider('one', {'VCPU': {'total': 4}})
        self.assertEqual(204, self.claim({rp: {'VCPU': 1}})[0])
        first, second = str(uuidlib.uuid4()), str(uuidlib.uuid4())

        def claims(each):
            return self.call('POST', '/allocations', {
                consumer: {'allocations': {rp: {'resources': {
                    'VCPU': each}}}, 'project_id': 'p', 'user_id': 'u',
                    'consumer_generation': None, 'consumer_type': 'INSTANCE'}
                for consumer in (first, second)})[0]
        self.assertTrips(['one trip'])
        # Each fits alone, not both.
        self.assertEqual(409, claims(2))
        self.assertTrips(['one trip', 'read'])
        self.assertEqual(204, claims(1))
        self.assertTrips(['one trip'])
        self.assertEqual(({'VCPU': 3}, 3), self.usage(rp))


class TestConsumerRead(AllocationTestCase):
    """GET /allocations/{c} reads the allocations and the consumer by one
    statement: on PostgreSQL each statement sees its own state, and read
    apart a writer committing in between gave allocations without their
    consumer's generation (benchmarks/replicated_writes.py saw it)."""

    def test_allocations_and_consumer_are_one_statement(self):
        rp = self.provider('one', {'VCPU': {'total': 8}})
        consumer = str(uuidlib.uuid4())
        self.assertEqual(204, self.claim({rp: {'VCPU': 2}}, consumer)[0])
        with api_fixtures.recorded_statements(self.db.engine) as statements:
            status, body = self.call('GET', '/allocations/%s' % consumer)
        self.assertEqual(200, status)
        self.assertEqual(
            1, len([s for s in statements if s.lstrip().startswith(
                'SELECT')]), statements)
        self.assertEqual({rp: {'generation': 2, 'resources': {'VCPU': 2}}},
                         body['allocations'])
        self.assertEqual(('p', 'u', 1, 'INSTANCE'), (
            body['project_id'], body['user_id'], body['consumer_generation'],
            body['consumer_type']))

    def test_allocations_without_their_consumer_row(self):
        """Allocations whose consumer row is gone (another writer's, or
        data from before consumers were recorded) are shown without the
        consumer's fields, as before."""
        rp = self.provider('one', {'VCPU': {'total': 8}})
        consumer = str(uuidlib.uuid4())
        self.assertEqual(204, self.claim({rp: {'VCPU': 2}}, consumer)[0])
        with self.db.write() as conn:
            conn.execute(tables.consumers.delete().where(
                tables.consumers.c.uuid == consumer))
        status, body = self.call('GET', '/allocations/%s' % consumer)
        self.assertEqual(200, status)
        self.assertEqual({'allocations': {rp: {
            'generation': 2, 'resources': {'VCPU': 2}}}}, body)

    def test_no_allocations(self):
        status, body = self.call('GET', '/allocations/%s' % uuidlib.uuid4())
        self.assertEqual((200, {'allocations': {}}), (status, body))


class TestProviderReads(AllocationTestCase):
    """A provider's allocations, inventories (all or one), usages, traits
    and aggregates are read with its generation by one statement, so the
    generation is that of the rows (read apart on PostgreSQL, a write
    committing in between gave new rows with the old generation)."""

    def selects_of(self, path):
        with api_fixtures.recorded_statements(self.db.engine) as statements:
            status, body = self.call('GET', path)
        self.assertEqual(200, status, body)
        return body, [s for s in statements
                      if s.lstrip().startswith('SELECT')]

    def test_each_read_is_one_statement(self):
        rp = self.provider('one', {'VCPU': {'total': 8},
                                   'MEMORY_MB': {'total': 512}})
        consumer = str(uuidlib.uuid4())
        self.assertEqual(204, self.claim({rp: {'VCPU': 2}}, consumer)[0])
        expected = {
            'allocations': {'allocations': {consumer: {
                'resources': {'VCPU': 2}, 'consumer_generation': 1}},
                'resource_provider_generation': 2},
            'usages': {'usages': {'VCPU': 2, 'MEMORY_MB': 0},
                       'resource_provider_generation': 2},
        }
        for read, body_expected in expected.items():
            body, selects = self.selects_of(
                '/resource_providers/%s/%s' % (rp, read))
            self.assertEqual(body_expected, body)
            self.assertEqual(1, len(selects), selects)
        body, selects = self.selects_of(
            '/resource_providers/%s/inventories' % rp)
        self.assertEqual((2, ['MEMORY_MB', 'VCPU']), (
            body['resource_provider_generation'],
            sorted(body['inventories'])))
        self.assertEqual(1, len(selects), selects)
        body, selects = self.selects_of(
            '/resource_providers/%s/inventories/VCPU' % rp)
        self.assertEqual((2, 8), (body['resource_provider_generation'],
                                  body['total']))
        self.assertEqual(1, len(selects), selects)

    def test_traits_and_aggregates_are_one_statement(self):
        rp = self.provider('one', {'VCPU': {'total': 8}})
        aggregate = str(uuidlib.uuid4())
        self.assertEqual(200, self.call(
            'PUT', '/resource_providers/%s/traits' % rp, {
                'traits': ['HW_CPU_X86_AVX2'],
                'resource_provider_generation': 1})[0])
        self.assertEqual(200, self.call(
            'PUT', '/resource_providers/%s/aggregates' % rp, {
                'aggregates': [aggregate],
                'resource_provider_generation': 2})[0])
        body, selects = self.selects_of('/resource_providers/%s/traits' % rp)
        self.assertEqual({'traits': ['HW_CPU_X86_AVX2'],
                          'resource_provider_generation': 3}, body)
        self.assertEqual(1, len(selects), selects)
        body, selects = self.selects_of(
            '/resource_providers/%s/aggregates' % rp)
        self.assertEqual({'aggregates': [aggregate],
                          'resource_provider_generation': 3}, body)
        self.assertEqual(1, len(selects), selects)

    def test_a_provider_without_rows(self):
        _, body = self.call('POST', '/resource_providers', {'name': 'bare'})
        for read, key in (('allocations', 'allocations'),
                          ('usages', 'usages'),
                          ('inventories', 'inventories'),
                          ('aggregates', 'aggregates')):
            status, found = self.call(
                'GET', '/resource_providers/%s/%s' % (body['uuid'], read))
            self.assertEqual((200, {key: [] if read == 'aggregates' else {},
                                    'resource_provider_generation': 0}),
                             (status, found))
        status, found = self.call(
            'GET', '/resource_providers/%s/traits' % body['uuid'])
        self.assertEqual((200, {'traits': [],
                                'resource_provider_generation': 0}),
                         (status, found))
        for name in ('VCPU', 'CUSTOM_NEVER_MADE'):
            status, found = self.call(
                'GET', '/resource_providers/%s/inventories/%s'
                % (body['uuid'], name))
            self.assertEqual(404, status, name)
            self.assertIn('No inventory of class %s' % name,
                          found['errors'][0]['detail'])

    def test_no_such_provider(self):
        missing = str(uuidlib.uuid4())
        for read in ('allocations', 'usages', 'inventories', 'traits',
                     'aggregates', 'inventories/VCPU'):
            status, body = self.call(
                'GET', '/resource_providers/%s/%s' % (missing, read))
            self.assertEqual(404, status, read)
            self.assertIn(missing, body['errors'][0]['detail'])


class TestOverCapacityWarning(AllocationTestCase):

    def test_shrinking_below_usage_is_logged(self):
        rp = self.provider('shrunk', {'VCPU': {'total': 4}})
        self.assertEqual(204, self.claim({rp: {'VCPU': 3}})[0])
        log = self.useFixture(fixtures.FakeLogger(level=logging.WARNING))
        status, _ = self.call(
            'PUT', '/resource_providers/%s/inventories/VCPU' % rp,
            {'resource_provider_generation': 2, 'total': 2})
        self.assertEqual(200, status)
        self.assertIn('Resource provider %s is now over-capacity for VCPU'
                      % rp, log.output)

    def test_no_warning_within_capacity(self):
        rp = self.provider('roomy', {'VCPU': {'total': 4}})
        self.assertEqual(204, self.claim({rp: {'VCPU': 1}})[0])
        log = self.useFixture(fixtures.FakeLogger(level=logging.WARNING))
        status, _ = self.call(
            'PUT', '/resource_providers/%s/inventories' % rp,
            {'resource_provider_generation': 2,
             'inventories': {'VCPU': {'total': 2}}})
        self.assertEqual(200, status)
        self.assertNotIn('over-capacity', log.output)
