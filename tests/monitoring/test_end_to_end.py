# SPDX-License-Identifier: Apache-2.0
"""Issue 34's end-to-end check: our server with two granian workers on
a small cloud, scraped every second by a real Prometheus. The cloud's
free VCPU by PromQL equals the Placement API's, follows claims at the
next scrape, and the request counters never go backwards when a worker
is killed and replaced."""

import time
import uuid

import testtools

from osc_placement.server import metrics
from tests.monitoring import placement_run
from tests.monitoring import prometheus_run

JOB = 'placement'
# Free capacity of a class from the cloud totals, and from the
# per-provider series under openstack-exporter's names.
FREE_FROM_TOTALS = (
    'sum(placement_cloud_resource_capacity{{resourcetype="{rc}"}}'
    ' - placement_cloud_resource_usage{{resourcetype="{rc}"}})')
FREE_FROM_PROVIDERS = (
    'sum((openstack_placement_resource_total{{resourcetype="{rc}"}}'
    ' - openstack_placement_resource_reserved{{resourcetype="{rc}"}})'
    ' * openstack_placement_resource_allocation_ratio'
    '{{resourcetype="{rc}"}}'
    ' - openstack_placement_resource_usage{{resourcetype="{rc}"}})')
REQUESTS = 'sum(placement_http_request_duration_seconds_count{job="%s"})' \
    % JOB
REQUEST_RESETS = ('sum(resets(placement_http_request_duration_seconds_count'
                  '{job="%s"}[1h]))' % JOB)
# Requests sent before and after the kill.
BURST = 20


class TestScrapedServer(testtools.TestCase):
    """One server and one Prometheus for the class: Prometheus scrapes
    nothing for its first seconds, which every test would pay again."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.server = placement_run.PlacementRun(
            workers=2, metrics={'per_provider': 'true'})
        cls.prometheus = None
        try:
            cls.server.setUp()
            cls.uuids = placement_run.build_cloud(cls.server)
            cls.prometheus = prometheus_run.PrometheusRun(
                ['127.0.0.1:%d' % cls.server.port], job=JOB)
            cls.prometheus.setUp()
            cls.prometheus.wait_for('up{job="%s"} == 1' % JOB)
        except BaseException:
            cls._clean_up()
            raise

    @classmethod
    def tearDownClass(cls):
        cls._clean_up()
        super().tearDownClass()

    @classmethod
    def _clean_up(cls):
        if cls.prometheus is not None:
            cls.prometheus.cleanUp()
        cls.server.cleanUp()

    def _wait_for_a_scrape_after(self, moment):
        """Return once Prometheus holds a scrape of the server started
        after the wall-clock time ``moment``."""
        self.prometheus.wait_for(
            'timestamp(up{job="%s"}) > %f' % (JOB, moment), timeout=15)

    def _free(self, resource_class):
        """(from the cloud totals, from the per-provider series)."""
        return tuple(self.prometheus.value(expr.format(rc=resource_class))
                     for expr in (FREE_FROM_TOTALS, FREE_FROM_PROVIDERS))

    def _assert_free_as_the_api_says(self, resource_class):
        expected = placement_run.free_by_api(self.server, resource_class)
        self.assertEqual((expected, expected), self._free(resource_class))
        return expected

    def test_free_capacity_equals_the_api_and_follows_claims(self):
        self._wait_for_a_scrape_after(time.time())
        before = self._assert_free_as_the_api_says('VCPU')
        disk_before = self._assert_free_as_the_api_says('DISK_GB')
        uuids = self.uuids
        placement_run.claim(self.server, str(uuid.uuid4()), {
            uuids['cn1']: {'VCPU': 4, 'MEMORY_MB': 2048},
            uuids['cn1-numa0']: {'VCPU': 2}})
        placement_run.claim(self.server, str(uuid.uuid4()), {
            uuids['cn2']: {'VCPU': 6, 'MEMORY_MB': 4096},
            uuids['shared-disk']: {'DISK_GB': 50}})
        self._wait_for_a_scrape_after(time.time())
        after = self._assert_free_as_the_api_says('VCPU')
        self.assertEqual(before - 12, after)
        self.assertEqual(disk_before - 50,
                         self._assert_free_as_the_api_says('DISK_GB'))

    def test_request_counter_survives_a_killed_worker(self):
        self._get_providers(BURST)
        self._wait_for_a_scrape_after(time.time())
        counted = self.prometheus.value(REQUESTS)
        killed, replacement = self.server.kill_a_worker()
        self.assertNotIn(killed, self.server.worker_pids())
        self.server.wait_until_answering()
        self._get_providers(BURST)
        # A worker other than the one scraped writes its counts every
        # metrics.FLUSH_SECONDS: a scrape that late counts them all.
        self._wait_for_a_scrape_after(time.time()
                                      + 2 * metrics.FLUSH_SECONDS)
        # No series' value ever fell, and every request after the first
        # reading is counted on top of the killed worker's.
        self.assertEqual(0, self.prometheus.value(REQUEST_RESETS))
        self.assertGreaterEqual(self.prometheus.value(REQUESTS),
                                counted + BURST)

    def _get_providers(self, count):
        for _ in range(count):
            self.server.call('GET', '/resource_providers')
