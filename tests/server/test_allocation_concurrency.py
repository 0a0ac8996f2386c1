# SPDX-License-Identifier: Apache-2.0
"""Concurrent allocation writers never over-allocate or half-write.

Many claimers race for a few nearly full providers, in threads against the
application in this process and over HTTP against the server as a process
with several workers, on the test database (SQLite, or the MariaDB /
PostgreSQL server named by OSC_PLACEMENT_TEST_DB_URL). Afterwards every
provider is within capacity, every consumer has all of its allocation or
none of it, and every answer was 204 or 409 (never a 500 such as SQLite's
``database is locked``).
"""

import concurrent.futures
import json
import os
import random
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid as uuidlib

import sqlalchemy as sa
import testtools
import webob

from benchmarks import local_server
from osc_placement.server import app as app_mod
from osc_placement.server import conf as conf_mod
from osc_placement.server.db import tables
from tests.server import fixtures as api_fixtures

ROUNDS = 5
# The hot spot upstream fails on PostgreSQL: 8 threads x 3 concurrent
# PUTs of new consumers, one provider with room for exactly 4.
HOT_THREADS, HOT_PUTS_PER_THREAD, HOT_ROOM = 8, 3, 4
READY_TIMEOUT = 90
_HEADERS = {'X-Auth-Token': 'admin', 'Accept': 'application/json',
            'Content-Type': 'application/json',
            'OpenStack-API-Version': 'placement latest'}


class InProcess:
    """Requests straight into the WSGI application."""

    def __init__(self, app):
        self.app = app

    def __call__(self, method, path, body=None):
        req = webob.Request.blank(path, method=method, headers=_HEADERS)
        if body is not None:
            req.body = json.dumps(body).encode()
        resp = req.get_response(self.app)
        return resp.status_int, _json(resp.body)


class OverHTTP:
    """Requests to a server over the loopback interface."""

    def __init__(self, base):
        self.base = base

    def __call__(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data,
                                     method=method, headers=_HEADERS)
        try:
            with urllib.request.urlopen(req, timeout=60) as resp:
                return resp.status, _json(resp.read())
        except urllib.error.HTTPError as err:
            return err.code, _json(err.read())


def _json(payload):
    return json.loads(payload) if payload else None


def _claim_body(allocations, consumer_type='INSTANCE'):
    return {'allocations': {rp: {'resources': res}
                            for rp, res in allocations.items()},
            'project_id': 'race-project', 'user_id': 'race-user',
            'consumer_generation': None, 'consumer_type': consumer_type}


def _all_at_once(calls):
    """Run the callables at the same moment; return their results."""
    barrier = threading.Barrier(len(calls))

    def run(call):
        barrier.wait()
        return call()
    with concurrent.futures.ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(run, calls))


class ClaimRaces:
    """The races; subclasses provide ``self.call`` (a transport)."""

    def _provider(self, name, inventories):
        status, body = self.call('POST', '/resource_providers',
                                 {'name': name})
        self.assertEqual(200, status, body)
        rp_uuid = body['uuid']
        status, body = self.call(
            'PUT', '/resource_providers/%s/inventories' % rp_uuid,
            {'resource_provider_generation': 0,
             'inventories': inventories})
        self.assertEqual(200, status, body)
        return rp_uuid

    def _usage(self, rp_uuid):
        status, body = self.call('GET',
                                 '/resource_providers/%s/usages' % rp_uuid)
        self.assertEqual(200, status, body)
        return body['usages']

    def _capacity(self, rp_uuid):
        _, body = self.call('GET',
                            '/resource_providers/%s/inventories' % rp_uuid)
        return {rc: int((inv['total'] - inv['reserved'])
                        * inv['allocation_ratio'])
                for rc, inv in body['inventories'].items()}

    def _assert_within_capacity(self, rp_uuids):
        for rp_uuid in rp_uuids:
            capacity = self._capacity(rp_uuid)
            for rc, used in self._usage(rp_uuid).items():
                self.assertLessEqual(used, capacity[rc],
                                     'over capacity: %s %s' % (rp_uuid, rc))

    def _allocations(self, consumer):
        status, body = self.call('GET', '/allocations/' + consumer)
        self.assertEqual(200, status, body)
        return {rp: entry['resources']
                for rp, entry in body['allocations'].items()}

    def _put(self, consumer, allocations):
        return lambda: self.call('PUT', '/allocations/' + consumer,
                                 _claim_body(allocations))[0]

    def _assert_totals_match_allocations(self):
        """usage_totals (read by the candidate search) holds exactly the
        sums of the allocations, whatever the races did."""
        alloc, totals = tables.allocations, tables.usage_totals
        with api_fixtures.database().read() as conn:
            sums = dict(((rp, rc), used) for rp, rc, used in conn.execute(
                sa.select(alloc.c.resource_provider_id,
                          alloc.c.resource_class_id,
                          sa.func.sum(alloc.c.used))
                .group_by(alloc.c.resource_provider_id,
                          alloc.c.resource_class_id)).all())
            kept = dict(((rp, rc), used) for rp, rc, used in conn.execute(
                sa.select(totals.c.resource_provider_id,
                          totals.c.resource_class_id, totals.c.used)
                .where(totals.c.used != 0)).all())
        self.assertEqual(sums, kept)

    def test_usage_totals_follow_racing_moves_and_deletes(self):
        """Writers move, resize, swap and delete the same consumers'
        allocations at once (PUT, POST /allocations, DELETE); the totals
        kept beside the allocations must end equal to their sums."""
        rps = [self._provider('move-%d' % i, {'VCPU': {'total': 64},
                                              'DISK_GB': {'total': 500}})
               for i in range(3)]
        consumers = [str(uuidlib.uuid4()) for _ in range(6)]
        rng = random.Random(7)

        def generation(consumer):
            body = self.call('GET', '/allocations/' + consumer)[1]
            return body.get('consumer_generation')

        def claim(allocations, consumer):
            return dict(_claim_body(allocations),
                        consumer_generation=generation(consumer))

        def random_write():
            consumer, other = rng.sample(consumers, 2)
            choice = rng.randrange(4)
            if choice == 3:
                return self.call('DELETE', '/allocations/' + consumer)[0]
            allocations = {rng.choice(rps): {'VCPU': rng.randint(1, 4),
                                             'DISK_GB': rng.randint(1, 9)}}
            if choice == 2:
                # One consumer moves while another is emptied.
                return self.call('POST', '/allocations', {
                    consumer: claim(allocations, consumer),
                    other: claim({}, other)})[0]
            return self.call('PUT', '/allocations/' + consumer,
                             claim(allocations, consumer))[0]

        for _ in range(ROUNDS):
            statuses = _all_at_once([random_write for _ in range(12)])
            self.assertEqual(set(), set(statuses) - {204, 404, 409},
                             statuses)
        self._assert_totals_match_allocations()

    def test_hot_spot_accepts_exactly_the_room(self):
        for round_number in range(ROUNDS):
            rp = self._provider('hot-%d' % round_number,
                                {'VCPU': {'total': HOT_ROOM}})
            consumers = [str(uuidlib.uuid4()) for _ in
                         range(HOT_THREADS * HOT_PUTS_PER_THREAD)]
            statuses = _all_at_once([self._put(c, {rp: {'VCPU': 1}})
                                     for c in consumers])
            self.assertEqual(set(), set(statuses) - {204, 409}, statuses)
            self.assertEqual(HOT_ROOM, statuses.count(204),
                             'round %d: %s' % (round_number, statuses))
            self.assertEqual({'VCPU': HOT_ROOM}, self._usage(rp))
            holders = [c for c in consumers if self._allocations(c)]
            self.assertEqual(HOT_ROOM, len(holders))
        self._assert_totals_match_allocations()

    def _nearly_full_pool(self):
        """Three hosts with room for 2 VCPUs each and one shared disk
        with room for 5 GB; earlier consumers fill the rest."""
        hosts = [self._provider('host-%d' % n, {'VCPU': {'total': 10}})
                 for n in range(3)]
        disk = self._provider('disk', {'DISK_GB': {'total': 100}})
        filler = {host: {'VCPU': 8} for host in hosts}
        filler[disk] = {'DISK_GB': 95}
        status = self._put(str(uuidlib.uuid4()), filler)()
        self.assertEqual(204, status)
        return hosts, disk

    def _post_pair(self, pair, hosts, disk):
        body = {c: _claim_body({random.choice(hosts): {'VCPU': 1},
                                disk: {'DISK_GB': 1}}) for c in pair}
        return lambda: self.call('POST', '/allocations', body)[0]

    def test_many_claimers_few_nearly_full_providers(self):
        random.seed(4)
        hosts, disk = self._nearly_full_pool()
        singles = [str(uuidlib.uuid4()) for _ in range(16)]
        pairs = [(str(uuidlib.uuid4()), str(uuidlib.uuid4()))
                 for _ in range(4)]
        calls = [self._put(c, {random.choice(hosts): {'VCPU': 1},
                               disk: {'DISK_GB': 1}}) for c in singles]
        calls += [self._post_pair(p, hosts, disk) for p in pairs]
        statuses = _all_at_once(calls)
        self.assertEqual(set(), set(statuses) - {204, 409}, statuses)
        self.assertIn(204, statuses)
        self._assert_within_capacity(hosts + [disk])
        claimed = 0
        for consumer in singles + [c for p in pairs for c in p]:
            held = self._allocations(consumer)
            # All of the claim or none of it.
            self.assertIn(len(held), (0, 2), held)
            claimed += bool(held)
        for pair in pairs:
            self.assertEqual(*[bool(self._allocations(c)) for c in pair])
        self.assertEqual(95 + claimed, self._usage(disk)['DISK_GB'])
        self.assertEqual(
            statuses[:len(singles)].count(204)
            + 2 * statuses[len(singles):].count(204), claimed)
        self._assert_totals_match_allocations()

    def _put_detail(self, consumer, allocations, generation):
        body = _claim_body(allocations)
        body['consumer_generation'] = generation

        def put():
            status, answer = self.call('PUT', '/allocations/' + consumer,
                                       body)
            return status, answer and answer['errors'][0]['detail']
        return put

    def test_one_consumer_raced_by_many_writers(self):
        # Each writer names its own provider: only the consumer's
        # generation orders them.
        rps = [self._provider('own-%d' % n, {'VCPU': {'total': 100}})
               for n in range(6)]
        consumer = str(uuidlib.uuid4())
        for generation in (None, 1):
            results = _all_at_once([
                self._put_detail(consumer, {rp: {'VCPU': 1}}, generation)
                for rp in rps])
            statuses = [status for status, _ in results]
            self.assertEqual(1, statuses.count(204), results)
            for status, detail in results:
                if status != 204:
                    self.assertEqual(409, status)
                    self.assertIn('consumer generation conflict', detail)
        self.assertEqual(1, len(self._allocations(consumer)))
        self.assertEqual(1, sum(self._usage(rp)['VCPU'] for rp in rps))
        self._assert_totals_match_allocations()

    def _orphan_allocations(self):
        alloc, rp = tables.allocations, tables.resource_providers
        with api_fixtures.database().read() as conn:
            return conn.execute(
                sa.select(sa.func.count()).select_from(alloc)
                .where(~alloc.c.resource_provider_id.in_(
                    sa.select(rp.c.id)))).scalar()

    def test_provider_delete_racing_claims(self):
        for round_number in range(ROUNDS):
            rp = self._provider('doomed-%d' % round_number,
                                {'VCPU': {'total': 100}})
            claims = [self._put(str(uuidlib.uuid4()), {rp: {'VCPU': 1}})
                      for _ in range(8)]
            delete = [lambda: self.call('DELETE',
                                        '/resource_providers/' + rp)[0]]
            statuses = _all_at_once(claims + delete)
            self.assertEqual(set(), set(statuses[:-1]) - {204, 400},
                             statuses)
            self.assertIn(statuses[-1], (204, 409))
            # Either the provider survived, or nothing points at it.
            self.assertEqual(0, self._orphan_allocations())
        self._assert_totals_match_allocations()


class TestInProcessClaims(ClaimRaces, testtools.TestCase):
    """Threads calling the application of this process."""

    def setUp(self):
        super().setUp()
        db = api_fixtures.database()
        api_fixtures.reset_database(db)
        self.call = InProcess(app_mod.make_app(conf_mod.make_conf(
            'unused://', enforce_new_defaults=False), db=db))


class TestServerProcessClaims(ClaimRaces, testtools.TestCase):
    """Threads calling ``python -m osc_placement.server --workers 3``."""

    WORKERS = 3

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        api_fixtures.database()
        port = local_server.free_port()
        cls.base = 'http://127.0.0.1:%d' % port
        cls.proc = subprocess.Popen(
            [sys.executable, '-m', 'osc_placement.server',
             '--db-url', str(api_fixtures._state['url']),
             '--host', '127.0.0.1', '--port', str(port),
             '--workers', str(cls.WORKERS), '--threads', '8'],
            env=dict(os.environ, OS_PLACEMENT_CONFIG_DIR='/nonexistent'),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        cls._wait_ready()

    @classmethod
    def _wait_ready(cls):
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            if cls.proc.poll() is not None:
                raise RuntimeError('server exited early')
            try:
                urllib.request.urlopen(cls.base + '/', timeout=2)
                return
            except OSError:  # refused, reset, or a worker still booting
                time.sleep(0.2)
        cls.tearDownClass()
        raise RuntimeError('server not ready in %ds' % READY_TIMEOUT)

    @classmethod
    def tearDownClass(cls):
        if cls.proc.poll() is None:
            cls.proc.terminate()
            try:
                cls.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                cls.proc.kill()
                cls.proc.wait()
        super().tearDownClass()

    def setUp(self):
        super().setUp()
        api_fixtures.reset_database(api_fixtures.database())
        self.call = OverHTTP(self.base)
