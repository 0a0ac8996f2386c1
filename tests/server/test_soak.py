# SPDX-License-Identifier: Apache-2.0
"""The soak benchmark (benchmarks/soak.py): its operations keep the
database consistent, and its verification sees a database that is not.

On SQLite unless OSC_PLACEMENT_TEST_DB_URL names a database server.
"""

import io
import threading
from wsgiref import simple_server

import fixtures
import sqlalchemy as sa
import testtools

from benchmarks import client as http_client
from benchmarks import soak
from benchmarks import sql_cloud
from osc_placement.server import app as app_mod
from osc_placement.server import conf as conf_mod
from tests.server import schema_compare

NODES = 20
BOGUS_CONSUMER = '00000000-0000-0000-0000-00000000dead'


class _QuietHandler(simple_server.WSGIRequestHandler):

    def log_message(self, *args):
        pass


class TestSoak(testtools.TestCase):

    def setUp(self):
        super().setUp()
        scratch = self.useFixture(schema_compare.ScratchDatabase('soak'))
        with fixtures.MonkeyPatch('sys.stdout', io.StringIO()):
            sql_cloud.load(scratch.url, NODES)
        self.engine = scratch.engine
        self.client = self.serve(scratch.url)

    def serve(self, connection):
        app = app_mod.make_app(conf_mod.make_conf(
            connection, enforce_new_defaults=False))
        server = simple_server.make_server('127.0.0.1', 0, app,
                                           handler_class=_QuietHandler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        return http_client.Client('http://127.0.0.1:%d' % server.server_port)

    def verify(self):
        with fixtures.MonkeyPatch('sys.stdout', io.StringIO()):
            return soak.verify(self.client, self.engine, 0, 2)

    def soak_for(self, seconds, clients=2):
        runner = soak.Soak(self.client, soak.hosts_of(self.engine), 5,
                           soak.DEFAULT_MIX, 1, inventory_rate=5)
        threads = [threading.Thread(target=runner.client_thread, args=(n,))
                   for n in range(clients)]
        threads.append(threading.Thread(target=runner.inventory_thread))
        for thread in threads:
            thread.start()
        runner.stop.wait(seconds)
        runner.stop.set()
        for thread in threads:
            thread.join()
        return runner, runner.recorder.swap()

    def test_every_operation_runs_and_the_database_verifies(self):
        runner, minute = self.soak_for(4)
        self.assertEqual([], runner.recorder.errors)
        for operation in ('claim', 'move', 'delete', 'inventory'):
            self.assertGreater(minute.operations[operation], 0, operation)
        self.assertEqual([], [code for code in minute.statuses
                              if code >= 400 and code != 409])
        # The fill level holds: a delete comes with each claim past it.
        self.assertLessEqual(runner.held_count(), 5 + 2)
        results = self.verify()
        self.assertEqual([], [name for name, ok in results.items()
                              if not ok])

    def test_a_bogus_allocation_fails_the_verification(self):
        with self.engine.begin() as conn:
            conn.execute(sa.text(
                'INSERT INTO allocations (resource_provider_id, '
                'consumer_id, resource_class_id, used) '
                'SELECT resource_provider_id, :consumer, resource_class_id,'
                ' total * 10 FROM inventories ORDER BY id LIMIT 1'),
                {'consumer': BOGUS_CONSUMER})
        results = self.verify()
        self.assertEqual(['no allocation of a missing consumer',
                          'no provider over capacity'],
                         sorted(name for name, ok in results.items()
                                if not ok))

    def test_usage_totals_that_drift_fail_the_verification(self):
        with self.engine.begin() as conn:
            conn.execute(sa.text(
                'UPDATE usage_totals SET used = used + 1 WHERE '
                'resource_provider_id = (SELECT min(resource_provider_id) '
                'FROM usage_totals)'))
        results = self.verify()
        self.assertEqual(['server usages equal the SQL sums',
                          'usage_totals equal the sums of allocations'],
                         sorted(name for name, ok in results.items()
                                if not ok))

    def test_a_consumer_without_allocations_fails_the_verification(self):
        with self.engine.begin() as conn:
            conn.execute(sa.text(
                'INSERT INTO consumers (uuid, project_id, user_id, '
                'generation) SELECT :consumer, project_id, user_id, 0 '
                'FROM consumers ORDER BY id LIMIT 1'),
                {'consumer': BOGUS_CONSUMER})
        results = self.verify()
        self.assertEqual(['no consumer without allocations'],
                         [name for name, ok in results.items() if not ok])


class TestFigures(testtools.TestCase):

    def test_reserved_never_takes_what_is_used(self):
        record = {'total': 1000, 'reserved': 0, 'allocation_ratio': 2.0}
        self.assertEqual(soak.TOGGLED_RESERVE,
                         soak.new_reserved(record, 0))
        # 1800 used at ratio 2 needs 900 of the 1000.
        self.assertEqual(100, soak.new_reserved(record, 1800))
        self.assertEqual(0, soak.new_reserved(record, 2000))
        record['reserved'] = 100
        self.assertEqual(0, soak.new_reserved(record, 0))

    def test_growth_compares_window_means(self):
        def minute(claims, workers, postgres):
            return {'claims_per_s': claims, 'server_rss_mib': workers,
                    'postgres_pss_mib': postgres}
        # The first window (caches filling) sets the throughput's
        # baseline only; memory is compared from the second window on,
        # and one worker's jumpy last minute moves a mean, not the verdict.
        series = ([minute(90, [50, 200], 10)] * 3
                  + [minute(100, [100, 200], 50)] * 3
                  + [minute(90, [100, 200], 50)] * 2
                  + [minute(120, [130, 200], 65)])
        flat = soak.growth(series, 3)
        self.assertEqual(3, flat['baseline_intervals'])
        self.assertEqual(4, flat['memory_from_interval'])
        self.assertEqual(90, flat['claims_per_s_baseline'])
        self.assertEqual(100, flat['claims_per_s_last'])
        self.assertEqual(11.1, flat['claims_growth_pct'])
        self.assertEqual([10.0, 0.0], flat['worker_rss_growth_pct'])
        self.assertEqual(3.3, flat['server_rss_growth_pct'])
        self.assertEqual(10.0, flat['postgres_pss_growth_pct'])

    def test_growth_of_a_short_run_still_compares_start_and_end(self):
        series = [{'claims_per_s': c, 'server_rss_mib': [m],
                   'postgres_pss_mib': m} for c, m in ((100, 100),
                                                       (50, 110))]
        flat = soak.growth(series, 10)
        self.assertEqual(-50.0, flat['claims_growth_pct'])
        self.assertEqual(10.0, flat['server_rss_growth_pct'])
