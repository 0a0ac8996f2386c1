# SPDX-License-Identifier: Apache-2.0
"""GET /metrics: the server's Prometheus metrics (prometheus_client).

Series counted as requests are served (requests, candidates, write
re-runs, 409s, the pool) are added to sums in the worker's memory, off
the requests' path, and a thread writes them to prometheus_client every
FLUSH_SECONDS (the process answering a scrape writes its own first);
with ``PROMETHEUS_MULTIPROC_DIR`` a scrape sums every process's, dead
workers' included, so counters never go back. The cloud's capacity is
read from the database when scraped (``CapacityCollector``). With
``[metrics] enabled = false`` nothing is wrapped, and prometheus_client,
which picks where values live when first imported, is imported only
inside functions, after a master may have set the directory.
"""

import atexit
import bisect
import glob
import ipaddress
import logging
import os
import re
import shutil
import struct
import tempfile
import threading
import time
import weakref

import orjson

from osc_placement.server import errors

LOG = logging.getLogger(__name__)

PATH = '/metrics'
MULTIPROC_ENV = 'PROMETHEUS_MULTIPROC_DIR'
# The environ keys the application fills for the measurement: the route
# template a request matched, and the code of a 409's error.
ROUTE_ENVIRON = 'osc_placement.route'
CONFLICT_CODE_ENVIRON = 'osc_placement.conflict_code'
UNKNOWN_ROUTE = 'unknown'
NO_VERSION = 'none'
# Methods outside these are counted as "other": a label value per odd
# method a client sends would be a series each.
METHODS = frozenset(('GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE',
                     'OPTIONS'))
OTHER_METHOD = 'other'
# Request latency buckets, in seconds: most answers take milliseconds.
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
           2.5, 5.0, 10.0)
# The histogram's bucket bounds as prometheus_client keeps them.
UPPER_BOUNDS = BUCKETS + (float('inf'),)
# How often each worker writes the sums of the requests it served: each
# write is a file write in a multi-process server, so they are batched
# off the requests' path, at the price of a scrape seeing another
# worker's requests that late.
FLUSH_SECONDS = 1.0
# How often each worker writes its connection pool's gauges.
POOL_SAMPLE_SECONDS = 5.0
CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'


# --------------------------------------------------------------------------
# The directory of a multi-process server


def own_directory():
    """Create a private directory for the workers' metric files and name
    it in ``PROMETHEUS_MULTIPROC_DIR`` for them (placement-server's master
    calls this before starting any worker). Returns its path."""
    path = tempfile.mkdtemp(prefix='placement-metrics-')
    os.environ[MULTIPROC_ENV] = path
    return path


def remove_directory(path):
    """Remove a directory ``own_directory`` made, and its name from the
    environment."""
    if os.environ.get(MULTIPROC_ENV) == path:
        del os.environ[MULTIPROC_ENV]
    shutil.rmtree(path, ignore_errors=True)


def mark_process_dead(pid):
    """Drop the live gauges of a worker that ended (a server's hook on a
    worker's exit); its counters stay."""
    path = os.environ.get(MULTIPROC_ENV)
    if path:
        from prometheus_client import multiprocess
        multiprocess.mark_process_dead(pid, path)


_LIVE_GAUGE_FILE = re.compile(r'gauge_live\w+?_(\d+)\.db$')


def forget_dead_processes(path):
    """Mark dead every process whose live gauge files are in ``path`` but
    which no longer runs: the workers of a server with no hook on a
    worker's exit (granian, uWSGI, mod_wsgi). A pid reused since by an
    unrelated process keeps its dead predecessor's gauges."""
    from prometheus_client import multiprocess
    pids = set()
    for name in glob.glob(os.path.join(path, 'gauge_live*_*.db')):
        found = _LIVE_GAUGE_FILE.search(name)
        if found:
            pids.add(int(found.group(1)))
    for pid in pids:
        if not _running(pid):
            multiprocess.mark_process_dead(pid, path)


def _running(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# --------------------------------------------------------------------------
# The instruments, once per process


_INSTRUMENTS = []
_INSTRUMENTS_LOCK = threading.Lock()


def instruments():
    """This process's Instruments, made on first use."""
    if not _INSTRUMENTS:
        with _INSTRUMENTS_LOCK:
            if not _INSTRUMENTS:
                _INSTRUMENTS.append(Instruments())
    return _INSTRUMENTS[0]


class Instruments:
    """The series counted as requests are served, and the process's
    connection pools."""

    def __init__(self):
        import prometheus_client as prom
        from prometheus_client import values
        prom.disable_created_metrics()
        self.multiprocess = values.ValueClass is not values.MutexValue
        # In one process the instruments are collected from a registry of
        # their own; across processes from the files.
        self.registry = None if self.multiprocess else prom.CollectorRegistry()
        registry = self.registry
        self.requests = prom.Histogram(
            'placement_http_request_duration_seconds',
            'Requests answered, by route template, method, status and '
            'microversion, and the time taken to answer them.',
            ('route', 'method', 'status', 'microversion'),
            buckets=BUCKETS, registry=registry)
        self.answers = prom.Counter(
            'placement_allocation_candidates_answers',
            'GET /allocation_candidates answered 200.', registry=registry)
        self.returned = prom.Counter(
            'placement_allocation_candidates_returned',
            'Allocation candidates (allocation requests) returned.',
            registry=registry)
        self.empty = prom.Counter(
            'placement_allocation_candidates_empty',
            'GET /allocation_candidates answers with no candidate.',
            registry=registry)
        self.cut = prom.Counter(
            'placement_allocation_candidates_cut',
            'Candidate answers that reached their limit or '
            '[placement] max_allocation_candidates.', ('by',),
            registry=registry)
        self.write_retries = prom.Counter(
            'placement_write_retries',
            'Writes run again from the start, by reason.', ('reason',),
            registry=registry)
        self.conflicts = prom.Counter(
            'placement_conflicts', '409 responses, by error code.',
            ('code',), registry=registry)
        self.pool_checked_out = prom.Gauge(
            'placement_db_pool_checked_out',
            'Database connections in use (sampled; live processes).',
            multiprocess_mode='livesum', registry=registry)
        self.pool_size = prom.Gauge(
            'placement_db_pool_size',
            'Database connection pool size (live processes).',
            multiprocess_mode='livesum', registry=registry)
        self._children = {}
        self._engines = weakref.WeakSet()
        self._pool_values = None
        self._thread = None
        self._lock = threading.Lock()
        # The requests' sums not yet written: held under _pending_lock,
        # taken by every request, so only for a few dict updates;
        # _flush_lock makes a flush wait for one under way, so that a
        # scrape sees everything this process counted.
        self._pending_lock = threading.Lock()
        self._flush_lock = threading.Lock()
        self._pending_requests = {}
        self._pending_counts = {}
        atexit.register(self.flush)

    # The request path: sums in memory, see flush.

    def observe(self, key, seconds):
        """One request of ``key`` (route, method, status, microversion)
        took ``seconds``."""
        # The first bound not below seconds, as Histogram.observe picks.
        bucket = bisect.bisect_left(UPPER_BOUNDS, seconds)
        with self._pending_lock:
            pending = self._pending_requests.get(key)
            if pending is None:
                pending = self._pending_requests[key] = _Observations()
            pending.buckets[bucket] += 1
            pending.total += seconds

    def conflict(self, code):
        with self._pending_lock:
            self._count(self.conflicts, (code,), 1)

    def write_retried(self, reason):
        with self._pending_lock:
            self._count(self.write_retries, (reason,), 1)

    def candidates_answered(self, count, cut_by):
        """A 200 of ``count`` candidates, cut by ``cut_by`` (None, or a
        candidates.door.CUT_BY_* label)."""
        with self._pending_lock:
            self._count(self.answers, (), 1)
            if count:
                self._count(self.returned, (), count)
            else:
                self._count(self.empty, (), 1)
            if cut_by is not None:
                self._count(self.cut, (cut_by,), 1)

    def _count(self, counter, labels, amount):
        # Called with _pending_lock held.
        key = (counter, labels)
        self._pending_counts[key] = self._pending_counts.get(key, 0) + amount

    def flush(self):
        """Write the sums counted since the last flush to the
        prometheus_client series (the files of a multi-process server):
        one write per series touched, whatever the number of requests."""
        with self._flush_lock:
            with self._pending_lock:
                requests, self._pending_requests = self._pending_requests, {}
                counts, self._pending_counts = self._pending_counts, {}
            for key, pending in requests.items():
                _add_observations(self._child(key), pending)
            for (counter, labels), amount in counts.items():
                (counter.labels(*labels) if labels else counter).inc(amount)

    def _child(self, key):
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = self.requests.labels(*key)
        return child

    # The pools, and the thread that writes everything off the request
    # path.

    def watch_pool(self, engine):
        """Publish ``engine``'s pool in the pool gauges, sampled every
        POOL_SAMPLE_SECONDS by this process's metrics thread (and when
        this process answers a scrape): nothing on a request's path.
        Starts the thread, which also flushes every FLUSH_SECONDS."""
        with self._lock:
            self._engines.add(engine)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._write_forever, name='metrics-writer',
                    daemon=True)
                self._thread.start()
        self.sample_pools()

    def sample_pools(self):
        checked_out = size = 0
        for engine in list(self._engines):
            pool = engine.pool
            checked_out += _pool_number(pool, 'checkedout')
            size += _pool_number(pool, 'size')
        # A gauge written only when it changes: each write is a file
        # write in a multi-process server.
        if (checked_out, size) != self._pool_values:
            self._pool_values = (checked_out, size)
            self.pool_checked_out.set(checked_out)
            self.pool_size.set(size)

    def _write_forever(self):
        next_sample = time.monotonic() + POOL_SAMPLE_SECONDS
        while True:
            time.sleep(FLUSH_SECONDS)
            self._write_logged(self.flush, 'Writing the request metrics')
            if time.monotonic() >= next_sample:
                next_sample += POOL_SAMPLE_SECONDS
                self._write_logged(self.sample_pools,
                                   'Sampling the connection pool')

    @staticmethod
    def _write_logged(write, what):
        try:
            write()
        except Exception:
            LOG.exception('%s failed', what)

    def collect(self):
        """The metric families of every process (this one alone when
        the server has one process and no directory)."""
        if not self.multiprocess:
            return self.registry.collect()
        path = os.environ[MULTIPROC_ENV]
        forget_dead_processes(path)
        return families_in(path)


# How often a directory is read again when a file in it is being created.
CREATED_FILE_READS = 3


def families_in(path):
    """The metric families of every process's files in ``path``.

    prometheus_client creates a process's file empty and then sizes it,
    and a read between the two fails (struct.error): a worker writing its
    first values as the scrape comes. The file is whole a moment later."""
    from prometheus_client import multiprocess
    for _ in range(CREATED_FILE_READS - 1):
        try:
            return multiprocess.MultiProcessCollector(None, path).collect()
        except struct.error:
            time.sleep(0.01)
    return multiprocess.MultiProcessCollector(None, path).collect()


class _Observations:
    """Requests of one label key not yet written: the number in each
    bucket (not cumulative) and the sum of their durations."""

    __slots__ = ('buckets', 'total')

    def __init__(self):
        self.buckets = [0] * len(UPPER_BOUNDS)
        self.total = 0.0


def _add_observations(child, pending):
    """Add ``pending`` to histogram ``child`` as that many ``observe`` calls
    would, one write per bucket: no public call does, so this uses
    ``observe``'s internals, which test_metrics checks it against."""
    child._sum.inc(pending.total)
    for value, count in zip(child._buckets, pending.buckets):
        if count:
            value.inc(count)


def _pool_number(pool, name):
    """A pool's ``checkedout()`` or ``size()``; 0 for pools without it
    (SQLite in memory: one connection shared)."""
    method = getattr(pool, name, None)
    return method() if method is not None else 0


# --------------------------------------------------------------------------
# The cloud's capacity, read at scrape time


class CapacityCollector:
    """The capacity families (prometheus_client's custom collector
    protocol), from one read of the database per scrape."""

    def __init__(self, db, metrics_conf):
        self.db = db
        self.per_provider = metrics_conf.per_provider
        self.per_aggregate = metrics_conf.per_aggregate

    def collect(self):
        from osc_placement.server.objects import cloud_capacity
        try:
            with self.db.read() as conn:
                cloud = cloud_capacity.read(conn, self.per_aggregate)
        except Exception:
            # The request series are still worth a scrape.
            LOG.exception('Reading the capacity for /metrics failed')
            return []
        families = []
        if self.per_provider:
            families.extend(_provider_families(cloud.inventories))
        families.extend(_cloud_families(cloud))
        if self.per_aggregate:
            families.extend(_aggregate_families(cloud.aggregates))
        return families


# openstack-exporter's names and labels, so that its dashboards and alert
# rules work unchanged.
_PROVIDER_LABELS = ('hostname', 'resourcetype')
_PROVIDER_SERIES = (
    ('openstack_placement_resource_total', 'Inventory total.', 'total'),
    ('openstack_placement_resource_reserved', 'Inventory reserved.',
     'reserved'),
    ('openstack_placement_resource_allocation_ratio',
     'Inventory allocation ratio.', 'allocation_ratio'),
    ('openstack_placement_resource_usage',
     'Sum of the allocations against the inventory.', 'used'),
)


def _gauge_families(series, labels, rows):
    """One gauge family per ``(name, documentation, field)`` of
    ``series``, with a sample per ``(label values, record)`` of ``rows``
    holding the record's ``field``."""
    from prometheus_client import core
    families = []
    for name, documentation, field in series:
        family = core.GaugeMetricFamily(name, documentation, labels=labels)
        for values, record in rows:
            family.add_metric(values, getattr(record, field))
        families.append(family)
    return families


def _provider_families(inventories):
    return _gauge_families(
        _PROVIDER_SERIES, _PROVIDER_LABELS,
        [((inventory.provider, inventory.resource_class), inventory)
         for inventory in inventories])


_CLOUD_SERIES = (
    ('placement_cloud_resource_total', 'Sum of the inventories\' totals.',
     'total'),
    ('placement_cloud_resource_reserved',
     'Sum of the inventories\' reserved.', 'reserved'),
    ('placement_cloud_resource_capacity',
     'Sum of (total - reserved) * allocation_ratio.', 'capacity'),
    ('placement_cloud_resource_usage', 'Sum of the usage.', 'used'),
    ('placement_providers_over_capacity',
     'Providers whose usage exceeds their capacity.', 'over_capacity'),
)


def _cloud_families(cloud):
    from prometheus_client import core
    families = _gauge_families(
        _CLOUD_SERIES, ('resourcetype',),
        [((rc,), sums) for rc, sums in sorted(cloud.classes.items())])
    families.append(core.GaugeMetricFamily(
        'placement_resource_providers', 'Resource providers.',
        value=cloud.providers))
    return families


_AGGREGATE_SERIES = (
    ('placement_aggregate_resource_capacity',
     'Capacity of the aggregate\'s providers.', 'capacity'),
    ('placement_aggregate_resource_usage',
     'Usage of the aggregate\'s providers.', 'used'),
)


def _aggregate_families(aggregates):
    return _gauge_families(_AGGREGATE_SERIES, ('aggregate', 'resourcetype'),
                           sorted(aggregates.items()))


# --------------------------------------------------------------------------
# The middleware


def measured(app, conf, db, template_of):
    """``app`` timed, and GET /metrics answered, as the module docstring
    says; ``app`` itself when ``[metrics] enabled`` is false.
    ``template_of(path)`` is the route template of a path, or None."""
    if not conf.metrics.enabled:
        return app
    recorder = instruments()
    db.on_retry = recorder.write_retried
    recorder.watch_pool(db.engine)
    scrape = _scraper(recorder, CapacityCollector(db, conf.metrics),
                      allowed_sources(conf.metrics.allowed_source_ranges))

    def middleware(environ, start_response):
        started = time.perf_counter()
        seen = []

        def start(status, headers, exc_info=None):
            seen[:] = status, headers
            return start_response(status, headers, exc_info)
        if environ.get('PATH_INFO') == PATH:
            environ[ROUTE_ENVIRON] = PATH
            body = scrape(environ, start)
        else:
            body = app(environ, start)
        if seen:
            _record(recorder, environ, seen, time.perf_counter() - started,
                    template_of)
        return body
    return middleware


def _record(recorder, environ, seen, seconds, template_of):
    status, headers = seen
    route = environ.get(ROUTE_ENVIRON)
    if route is None:
        # Answered before the router (a 401) or by no route.
        route = template_of(environ.get('PATH_INFO', '')) or UNKNOWN_ROUTE
    method = environ.get('REQUEST_METHOD')
    if method not in METHODS:
        method = OTHER_METHOD
    code = status[:3]
    version = NO_VERSION
    for name, value in headers:
        if name == 'openstack-api-version':
            version = value.rpartition(' ')[2]
            break
    recorder.observe((route, method, code, version), seconds)
    if code == '409':
        recorder.conflict(environ.get(CONFLICT_CODE_ENVIRON, errors.DEFAULT))


def allowed_sources(ranges):
    """The networks of ``[metrics] allowed_source_ranges`` (ValueError
    for one that is not a network)."""
    return [ipaddress.ip_network(text.strip(), strict=False)
            for text in ranges if text.strip()]


def source_allowed(address, networks):
    """Whether the client address ``address`` (REMOTE_ADDR) is in one of
    ``networks``; an IPv4 address mapped into IPv6 counts as itself."""
    try:
        ip = ipaddress.ip_address((address or '').split('%', 1)[0])
    except ValueError:
        return False
    if ip.version == 6 and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return any(ip in network for network in networks)


def _scraper(recorder, capacity, networks):
    """The WSGI application of /metrics."""
    def scrape(environ, start_response):
        if not source_allowed(environ.get('REMOTE_ADDR'), networks):
            return _error(environ, start_response, errors.Forbidden(
                'Only clients in [metrics] allowed_source_ranges may read '
                'the metrics.'))
        method = environ.get('REQUEST_METHOD')
        if method not in ('GET', 'HEAD'):
            return _error(environ, start_response,
                          errors.method_not_allowed(method, ['GET']))
        body = scrape_text(recorder, capacity)
        start_response('200 OK', [('Content-Type', CONTENT_TYPE),
                                  ('Content-Length', str(len(body)))])
        return [b''] if method == 'HEAD' else [body]
    return scrape


def scrape_text(recorder, capacity):
    """The text of a scrape: every process's counted series, then the
    capacity read now."""
    from prometheus_client import exposition
    recorder.flush()
    recorder.sample_pools()
    return exposition.generate_latest(_Families(recorder, capacity))


class _Families:
    """Collectors chained, as generate_latest wants one."""

    def __init__(self, *collectors):
        self.collectors = collectors

    def collect(self):
        for collector in self.collectors:
            yield from collector.collect()


def _error(environ, start_response, err):
    """Upstream's JSON error body."""
    body = orjson.dumps(err.as_dict(
        environ, environ.get('openstack.request_id'), True))
    headers = [('Content-Type', 'application/json'),
               ('Content-Length', str(len(body)))]
    headers.extend(err.headers.items())
    start_response('%d %s' % (err.status, err.title), headers)
    return [body]
