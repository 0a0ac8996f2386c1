# SPDX-License-Identifier: Apache-2.0
"""GET /metrics (server/metrics.py) on the test database, in process.

The capacity series against what the API says of every provider of a
small cloud with a nested tree and a sharing provider, and again after a
claim; the request histogram's labels; the candidate, 409 and re-run
counters; who may read the metrics and the options that turn series
off. The instruments live once per process, so counters are compared
before and after. Requests counted in memory and written in batches:
against prometheus_client's own observe, and in multi-process mode
across worker processes started here. A real multi-worker server:
test_process.py."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid

import prometheus_client
from prometheus_client import mmap_dict
from prometheus_client import parser
import testtools
import webob

from osc_placement.server import app as app_mod
from osc_placement.server import conf as conf_mod
from osc_placement.server.db import engine as db_engine
from osc_placement.server import metrics
from tests.server import fixtures
from tests.server.webob_requests import request

AGGREGATE = str(uuid.uuid4())
SHARING = 'MISC_SHARES_VIA_AGGREGATE'


def scrape(app, remote_addr='127.0.0.1', method='GET'):
    req = webob.Request.blank(metrics.PATH, method=method,
                              environ={'REMOTE_ADDR': remote_addr})
    return req.get_response(app)


def samples(resp):
    """{(name, frozenset of labels): value} of a scrape."""
    found = {}
    for family in parser.text_string_to_metric_families(resp.text):
        for sample in family.samples:
            found[sample.name, frozenset(sample.labels.items())] = \
                sample.value
    return found


def series(found, name, **labels):
    """The samples of ``name`` whose labels include ``labels``, as
    {frozenset of all their labels: value}."""
    wanted = set(labels.items())
    return {key: value for (sample, key), value in found.items()
            if sample == name and wanted <= key}


def value(found, name, **labels):
    return found.get((name, frozenset(labels.items())), 0.0)


class MetricsTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.db = fixtures.database()
        fixtures.reset_database(self.db)
        self.app = self.make_app()

    def make_app(self, **metrics_options):
        conf = conf_mod.make_conf(fixtures._state['url'],
                                  sync_on_startup=False,
                                  enforce_new_defaults=False)
        for name, option in metrics_options.items():
            conf.set_override(name, option, 'metrics')
        return app_mod.make_app(conf, db=self.db)

    def call(self, method, path, body=None, status=200, **headers):
        resp = request(self.app, method, path,
                       None if body is None else json.dumps(body),
                       **headers)
        self.assertEqual(status, resp.status_int, resp.text)
        return resp.json if resp.body else None

    def provider(self, name, inventories, parent=None, traits=(),
                 aggregates=()):
        body = {'name': name}
        if parent:
            body['parent_provider_uuid'] = parent
        rp = self.call('POST', '/resource_providers', body)['uuid']
        generation = self.call('PUT', '/resource_providers/%s/inventories'
                               % rp, {'resource_provider_generation': 0,
                                      'inventories': inventories}
                               )['resource_provider_generation']
        if traits:
            generation = self.call(
                'PUT', '/resource_providers/%s/traits' % rp,
                {'resource_provider_generation': generation,
                 'traits': list(traits)})['resource_provider_generation']
        if aggregates:
            self.call('PUT', '/resource_providers/%s/aggregates' % rp,
                      {'resource_provider_generation': generation,
                       'aggregates': list(aggregates)})
        return rp

    def claim(self, allocations):
        consumer = str(uuid.uuid4())
        self.call('PUT', '/allocations/%s' % consumer, {
            'allocations': {rp: {'resources': resources}
                            for rp, resources in allocations.items()},
            'project_id': str(uuid.uuid4()), 'user_id': str(uuid.uuid4()),
            'consumer_generation': None, 'consumer_type': 'INSTANCE'},
            status=204)
        return consumer

    def scraped(self, app=None):
        resp = scrape(app or self.app)
        self.assertEqual(200, resp.status_int, resp.text)
        self.assertEqual(metrics.CONTENT_TYPE, resp.headers['Content-Type'])
        return samples(resp)


class TestCapacity(MetricsTestCase):
    """The capacity series equal the API's inventories and usages."""

    def setUp(self):
        super().setUp()
        self.host = self.provider('host-1', {
            'VCPU': {'total': 16, 'reserved': 2, 'allocation_ratio': 4.0},
            'MEMORY_MB': {'total': 65536, 'reserved': 512,
                          'allocation_ratio': 1.5}},
            aggregates=[AGGREGATE])
        self.numa = self.provider('host-1-numa0', {
            'PCPU': {'total': 8}}, parent=self.host)
        self.other = self.provider('host-2', {'VCPU': {'total': 8}})
        self.disk = self.provider('shared-disk', {
            'DISK_GB': {'total': 1000, 'reserved': 100,
                        'allocation_ratio': 1.0}},
            traits=[SHARING], aggregates=[AGGREGATE])
        self.bare = self.call('POST', '/resource_providers',
                              {'name': 'no-inventory'})['uuid']
        self.claim({self.host: {'VCPU': 3, 'MEMORY_MB': 1024},
                    self.numa: {'PCPU': 2}, self.disk: {'DISK_GB': 50}})

    def api_view(self):
        """{(provider name, class): (total, reserved, ratio, usage)} as
        the API tells it, provider by provider."""
        view = {}
        for rp in self.call('GET', '/resource_providers')[
                'resource_providers']:
            inventories = self.call('GET', '/resource_providers/%s/'
                                    'inventories' % rp['uuid'])
            usages = self.call('GET', '/resource_providers/%s/usages'
                               % rp['uuid'])['usages']
            for rc, inv in inventories['inventories'].items():
                view[rp['name'], rc] = (inv['total'], inv['reserved'],
                                        inv['allocation_ratio'],
                                        usages.get(rc, 0))
        return view

    def metrics_view(self, found):
        view = {}
        names = ('total', 'reserved', 'allocation_ratio', 'usage')
        for i, name in enumerate(names):
            for labels, number in series(
                    found, 'openstack_placement_resource_' + name).items():
                labels = dict(labels)
                key = labels['hostname'], labels['resourcetype']
                view.setdefault(key, [None] * 4)[i] = number
        return {key: tuple(numbers) for key, numbers in view.items()}

    def test_every_provider_as_the_api_says(self):
        api = self.api_view()
        self.assertEqual(5, len(api))
        self.assertEqual(api, self.metrics_view(self.scraped()))

    def test_a_claim_shows_at_the_next_scrape(self):
        before = self.scraped()
        self.claim({self.other: {'VCPU': 5}, self.disk: {'DISK_GB': 10}})
        after = self.scraped()
        self.assertEqual(0, value(before, 'openstack_placement_resource_'
                                  'usage', hostname='host-2',
                                  resourcetype='VCPU'))
        self.assertEqual(5, value(after, 'openstack_placement_resource_'
                                  'usage', hostname='host-2',
                                  resourcetype='VCPU'))
        self.assertEqual(self.api_view(), self.metrics_view(after))
        self.assertEqual(3 + 5, value(after, 'placement_cloud_resource_'
                                      'usage', resourcetype='VCPU'))
        self.assertEqual(60, value(after, 'placement_cloud_resource_usage',
                                   resourcetype='DISK_GB'))

    def test_cloud_totals_and_aggregates(self):
        found = self.scraped()
        api = self.api_view()
        for rc in ('VCPU', 'MEMORY_MB', 'PCPU', 'DISK_GB'):
            rows = [v for (_, c), v in api.items() if c == rc]
            self.assertEqual(sum(r[0] for r in rows), value(
                found, 'placement_cloud_resource_total', resourcetype=rc))
            self.assertEqual(sum(r[1] for r in rows), value(
                found, 'placement_cloud_resource_reserved',
                resourcetype=rc))
            self.assertAlmostEqual(sum((r[0] - r[1]) * r[2] for r in rows),
                                   value(found, 'placement_cloud_resource_'
                                         'capacity', resourcetype=rc),
                                   places=3)
            self.assertEqual(sum(r[3] for r in rows), value(
                found, 'placement_cloud_resource_usage', resourcetype=rc))
        self.assertEqual(5, value(found, 'placement_resource_providers'))
        # The aggregate holds host-1 (not its NUMA child) and the disk.
        self.assertEqual({
            ('VCPU', 56.0, 3.0), ('MEMORY_MB', 97536.0, 1024.0),
            ('DISK_GB', 900.0, 50.0)}, {
            (dict(labels)['resourcetype'], number, value(
                found, 'placement_aggregate_resource_usage', **dict(labels)))
            for labels, number in series(
                found, 'placement_aggregate_resource_capacity',
                aggregate=AGGREGATE).items()})

    def test_providers_over_capacity(self):
        self.assertEqual(0, value(self.scraped(), 'placement_providers_'
                                  'over_capacity', resourcetype='PCPU'))
        # Inventory below its usage: upstream lets it be written.
        self.call('PUT', '/resource_providers/%s/inventories/PCPU'
                  % self.numa, {'resource_provider_generation': 2,
                                'total': 8, 'reserved': 7})
        self.assertEqual(1, value(self.scraped(), 'placement_providers_'
                                  'over_capacity', resourcetype='PCPU'))

    def test_per_provider_off(self):
        found = self.scraped(self.make_app(per_provider=False))
        self.assertEqual({}, {key: v for key, v in found.items()
                              if key[0].startswith('openstack_')})
        self.assertEqual(24, value(found, 'placement_cloud_resource_total',
                                   resourcetype='VCPU'))

    def test_per_aggregate_off(self):
        found = self.scraped(self.make_app(per_aggregate=False))
        self.assertEqual({}, series(found, 'placement_aggregate_resource_'
                                    'capacity'))
        self.assertTrue(series(found, 'openstack_placement_resource_total'))


class TestRequests(MetricsTestCase):

    def count(self, found, route, method='GET', status='200', **labels):
        return sum(series(found, 'placement_http_request_duration_seconds_'
                          'count', route=route, method=method,
                          status=status, **labels).values())

    def test_routes_are_templates(self):
        rp = self.call('POST', '/resource_providers', {'name': 'rp'})['uuid']
        before = self.scraped()
        self.call('GET', '/resource_providers/%s/inventories' % rp)
        request(self.app, 'GET', '/resource_providers/%s/inventories' % rp,
                version='1.5')
        self.call('GET', '/nowhere/%s' % rp, status=404)
        self.assertEqual(401, webob.Request.blank(
            '/resource_providers').get_response(self.app).status_int)
        after = self.scraped()
        route = '/resource_providers/{uuid}/inventories'
        self.assertEqual(1, self.count(after, route, microversion='1.39')
                         - self.count(before, route, microversion='1.39'))
        self.assertEqual(1, self.count(after, route, microversion='1.5')
                         - self.count(before, route, microversion='1.5'))
        self.assertEqual(1, self.count(after, 'unknown', status='404')
                         - self.count(before, 'unknown', status='404'))
        self.assertEqual(1, self.count(after, '/resource_providers',
                                       status='401', microversion='none')
                         - self.count(before, '/resource_providers',
                                      status='401', microversion='none'))
        self.assertEqual([], [key for key in after if rp in str(key)])

    def test_candidates_conflicts_and_retries(self):
        self.provider('cn', {'VCPU': {'total': 4}})
        self.provider('cn2', {'VCPU': {'total': 4}})
        before = self.scraped()
        for query in ('VCPU:1&limit=1', 'VCPU:1', 'VCPU:100'):
            self.call('GET', '/allocation_candidates?resources=' + query)
        self.call('POST', '/resource_providers', {'name': 'cn'}, status=409)
        self.retry_once()
        after = self.scraped()

        def grew(name, **labels):
            return value(after, name, **labels) - value(before, name,
                                                        **labels)
        prefix = 'placement_allocation_candidates_'
        self.assertEqual(3, grew(prefix + 'answers_total'))
        self.assertEqual(3, grew(prefix + 'returned_total'))
        self.assertEqual(1, grew(prefix + 'empty_total'))
        self.assertEqual(1, grew(prefix + 'cut_total', by='limit'))
        self.assertEqual(1, grew('placement_conflicts_total',
                                 code='placement.duplicate_name'))
        self.assertEqual(1, grew('placement_write_retries_total',
                                 reason='generation_conflict'))

    def retry_once(self):
        """One write that loses a race once, through the app's Database."""
        runs = []

        def write(conn):
            runs.append(conn)
            if len(runs) == 1:
                raise db_engine.Retry()
        self.db.run_write(write)

    def test_max_allocation_candidates_cut(self):
        for name in ('a', 'b'):
            self.provider(name, {'VCPU': {'total': 4}})
        conf = conf_mod.make_conf(fixtures._state['url'],
                                  sync_on_startup=False,
                                  max_allocation_candidates=1)
        app = app_mod.make_app(conf, db=self.db)
        before = self.scraped(app)
        request(app, 'GET', '/allocation_candidates?resources=VCPU:1')
        after = self.scraped(app)
        labels = {'by': 'max_allocation_candidates'}
        name = 'placement_allocation_candidates_cut_total'
        self.assertEqual(1, value(after, name, **labels)
                         - value(before, name, **labels))


class TestAccess(MetricsTestCase):

    def test_loopback_needs_no_token(self):
        for address in ('127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1'):
            self.assertEqual(200, scrape(self.app, address).status_int,
                             address)

    def test_others_get_403(self):
        for address in ('10.0.0.1', '::2', '', 'unix'):
            resp = scrape(self.app, address)
            self.assertEqual(403, resp.status_int, address)
            error = resp.json['errors'][0]
            self.assertEqual(('Forbidden', 'placement.undefined_code'),
                             (error['title'], error['code']))
            self.assertTrue(error['request_id'].startswith('req-'))

    def test_keystone_lets_it_pass(self):
        conf = conf_mod.make_conf(fixtures._state['url'],
                                  sync_on_startup=False,
                                  auth_strategy='keystone')
        app = app_mod.make_app(conf, db=self.db)
        self.assertEqual(200, scrape(app).status_int)

    def test_a_range_that_leaves_loopback_out(self):
        app = self.make_app(allowed_source_ranges=['192.0.2.0/24'])
        self.assertEqual(403, scrape(app, '127.0.0.1').status_int)
        self.assertEqual(200, scrape(app, '192.0.2.7').status_int)

    def test_only_get(self):
        resp = scrape(self.app, method='POST')
        self.assertEqual(405, resp.status_int)
        self.assertEqual('GET', resp.headers['Allow'])

    def test_disabled_is_an_unknown_path(self):
        app = self.make_app(enabled=False)
        self.assertEqual(404, request(app, 'GET', metrics.PATH).status_int)
        self.assertEqual(401, scrape(app).status_int)


KEY = ('/resource_providers', 'GET', '200', '1.39')
KEY_FAMILY = 'placement_http_request_duration_seconds'


def counted(found):
    """(requests of KEY, conflicts of placement.concurrent_update) in
    ``found``."""
    labels = dict(zip(('route', 'method', 'status', 'microversion'), KEY))
    return (value(found, KEY_FAMILY + '_count', **labels),
            value(found, 'placement_conflicts_total',
                  code='placement.concurrent_update'))


# On each side of each bound, the bounds themselves, and past the last.
DURATIONS = sorted({bound * factor for bound in metrics.BUCKETS
                    for factor in (0.5, 1.0, 1.5)} | {0.0, 60.0})


def collected(collector):
    """{(name, frozenset of labels): value} of a collector."""
    return sampled(collector.collect())


def sampled(families):
    return {(sample.name, frozenset(sample.labels.items())): sample.value
            for family in families for sample in family.samples}


class TestBuffered(testtools.TestCase):
    """Instruments of their own (not the process's), in this process's
    single-process mode."""

    def test_nothing_is_written_before_a_flush(self):
        recorder = metrics.Instruments()
        recorder.observe(KEY, 0.003)
        recorder.conflict('placement.concurrent_update')
        unwritten = collected(recorder.registry)
        self.assertEqual({}, series(
            unwritten, 'placement_http_request_duration_seconds_count'))
        self.assertEqual({}, series(unwritten, 'placement_conflicts_total'))
        recorder.flush()
        self.assertEqual((1, 1), counted(collected(recorder.registry)))

    def test_a_flush_writes_what_observe_would(self):
        """The batch written (metrics._add_observations, which reaches
        into prometheus_client's Histogram) against one observe per
        request on a histogram of the same buckets."""
        recorder = metrics.Instruments()
        reference = prometheus_client.Histogram(
            'placement_http_request_duration_seconds', 'Reference.',
            ('route', 'method', 'status', 'microversion'),
            buckets=metrics.BUCKETS,
            registry=prometheus_client.CollectorRegistry())
        for seconds in DURATIONS + DURATIONS[::3]:
            recorder.observe(KEY, seconds)
            reference.labels(*KEY).observe(seconds)
        recorder.flush()
        recorder.flush()  # nothing left to write twice
        written = {key: count
                   for key, count in collected(recorder.registry).items()
                   if key[0].startswith(KEY_FAMILY)}
        self.assertEqual(collected(reference), written)

    def test_counters_summed(self):
        recorder = metrics.Instruments()
        recorder.candidates_answered(3, 'limit')
        recorder.candidates_answered(2, None)
        recorder.candidates_answered(0, None)
        recorder.write_retried('generation_conflict')
        recorder.write_retried('generation_conflict')
        recorder.flush()
        found = collected(recorder.registry)
        prefix = 'placement_allocation_candidates_'
        self.assertEqual(3, value(found, prefix + 'answers_total'))
        self.assertEqual(5, value(found, prefix + 'returned_total'))
        self.assertEqual(1, value(found, prefix + 'empty_total'))
        self.assertEqual(1, value(found, prefix + 'cut_total', by='limit'))
        self.assertEqual(2, value(found, 'placement_write_retries_total',
                                  reason='generation_conflict'))


# A worker process of a multi-process server, as far as the metrics go:
# argv is how many requests it serves and then what it does: "exit"
# (normally, its sums left to the exit hook), "scrape" (print what a
# scrape of it answers), or "wait" (its metrics thread running, until
# stdin closes).
WORKER = textwrap.dedent("""
    import sys
    from osc_placement.server import metrics

    class Engine:
        pool = None

    class NoCapacity:
        def collect(self):
            return []

    requests, then = int(sys.argv[1]), sys.argv[2]
    recorder = metrics.instruments()
    if then == 'wait':
        metrics.FLUSH_SECONDS = 0.05
        engine = Engine()
        recorder.watch_pool(engine)
    for _ in range(requests):
        recorder.observe(%r, 0.003)
        recorder.conflict('placement.concurrent_update')
    if then == 'scrape':
        sys.stdout.write(
            metrics.scrape_text(recorder, NoCapacity()).decode())
    elif then == 'wait':
        print('served', flush=True)
        sys.stdin.read()
""" % (KEY,))


class TestWorkers(testtools.TestCase):
    """Worker processes sharing a PROMETHEUS_MULTIPROC_DIR."""

    def setUp(self):
        super().setUp()
        self.directory = tempfile.mkdtemp(prefix='metrics-test-')
        self.addCleanup(shutil.rmtree, self.directory)
        self.env = dict(os.environ, **{metrics.MULTIPROC_ENV:
                                       self.directory})

    def worker(self, requests, then, **popen):
        return subprocess.Popen(
            [sys.executable, '-c', WORKER, str(requests), then],
            env=self.env, text=True, **popen)

    def run_worker(self, requests, then):
        proc = self.worker(requests, then, stdout=subprocess.PIPE)
        out, _ = proc.communicate(timeout=60)
        self.assertEqual(0, proc.returncode)
        return out

    def test_a_scrape_sums_the_workers_and_keeps_the_dead(self):
        """A worker that ended (its sums written at exit) and the one
        scraped (its own written before the scrape)."""
        self.run_worker(3, 'exit')
        found = samples(webob.Response(self.run_worker(2, 'scrape')))
        self.assertEqual((5, 5), counted(found))

    def test_a_file_read_as_it_is_created_is_read_again(self):
        # prometheus_client creates a file empty, then sizes it: here the
        # worker finishes during the reader's pause.
        path = os.path.join(self.directory, 'counter_4242.db')
        open(path, 'wb').close()

        def worker_finishes(seconds):
            values = mmap_dict.MmapedDict(path)
            values.write_value(mmap_dict.mmap_key(
                'placement_conflicts', 'placement_conflicts_total', [], [],
                'Conflicts.'), 2.0, 0.0)
            values.close()
        self.patch(metrics.time, 'sleep', worker_finishes)
        self.assertEqual(2.0, sampled(metrics.families_in(
            self.directory)).get(('placement_conflicts_total',
                                  frozenset())))

    def test_the_thread_writes_a_live_worker_counts(self):
        proc = self.worker(4, 'wait', stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE)
        self.addCleanup(proc.stdout.close)
        self.addCleanup(proc.wait, 60)
        self.addCleanup(proc.stdin.close)
        self.assertEqual('served\n', proc.stdout.readline())
        deadline = time.monotonic() + 30
        while self.conflicts() != 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(4, self.conflicts())

    def conflicts(self):
        """The 409s counted in the directory's files, read here."""
        return value(
            sampled(metrics.families_in(self.directory)),
            'placement_conflicts_total', code='placement.concurrent_update')
