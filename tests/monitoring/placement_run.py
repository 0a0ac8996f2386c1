# SPDX-License-Identifier: Apache-2.0
"""Our Placement server as a process, for the tests that scrape it:
``python -m osc_placement.server`` (granian, several workers) on a free
port of 127.0.0.1, with noauth2 and ``[metrics]`` options of the test's
choosing; stopped, and its database dropped, at cleanup.

    server = self.useFixture(PlacementRun(workers=2))
    server.call('POST', '/resource_providers', {'name': 'cn1'})
    text = server.scrape()

The database: the server OSC_PLACEMENT_TEST_DB_URL names, else the
PostgreSQL of 127.0.0.1:5432 when it answers (several worker processes
writing one SQLite file would test SQLite's locking more than the
metrics), else a SQLite file.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import fixtures
from prometheus_client import parser as prometheus_parser

from benchmarks import databases
from benchmarks import local_server
from tests.server import fixtures as server_fixtures
from tests.server import test_process

DEFAULT_POSTGRESQL = 'postgresql+psycopg://postgres@127.0.0.1:5432/'
READY_TIMEOUT = 60
STOP_TIMEOUT = 30
RESPAWN_TIMEOUT = 15


def _answers(host, port):
    try:
        socket.create_connection((host, port), 2).close()
        return True
    except OSError:
        return False


def database_server_url():
    """The URL of a database server to create the test's database on, or
    None for SQLite."""
    url = os.environ.get(server_fixtures.DB_URL_ENV)
    if url:
        return url
    if url is None and _answers('127.0.0.1', 5432):
        return DEFAULT_POSTGRESQL
    # Set and empty: the caller asked for SQLite.
    return None


class PlacementRun(fixtures.Fixture):
    """The server with ``workers`` granian workers and ``metrics``
    ({option: value} of the [metrics] group)."""

    def __init__(self, workers=2, metrics=None):
        super().__init__()
        self.workers = workers
        self.metrics = dict(metrics or {})
        self.process = None

    def _setUp(self):
        self.directory = self.useFixture(fixtures.TempDir()).path
        self.port = local_server.free_port()
        self.url = 'http://127.0.0.1:%d' % self.port
        self.connection = self._database()
        config = self._write_config()
        # The metrics directory goes in the test's TMPDIR, removed with it.
        env = dict(os.environ, TMPDIR=self.directory,
                   OS_PLACEMENT_CONFIG_DIR=self.directory)
        self.process = subprocess.Popen(
            [sys.executable, '-m', 'osc_placement.server',
             '--config-file', config, '--host', '127.0.0.1',
             '--port', str(self.port), '--workers', str(self.workers)],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        self.addCleanup(self._stop)
        local_server.wait_until_ready(self.process, self.url, '/',
                                      READY_TIMEOUT)

    def _database(self):
        server_url = database_server_url()
        if server_url is None:
            return 'sqlite:///%s/placement.sqlite' % self.directory
        url = databases.create(server_url, 'monitoring')
        self.addCleanup(databases.drop, url)
        return url

    def _write_config(self):
        lines = ['[api]', 'auth_strategy = noauth2',
                 '[placement_database]', 'connection = %s' % self.connection,
                 'sync_on_startup = true', '[metrics]']
        lines += ['%s = %s' % item for item in sorted(self.metrics.items())]
        path = os.path.join(self.directory, 'placement.conf')
        with open(path, 'w') as f:
            f.write('\n'.join(lines) + '\n')
        return path

    def _stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    # ----------------------------------------------------------------------
    # The API

    def request(self, method, path, body=None):
        """(status, decoded JSON body or None) of one request as admin at
        the latest microversion; HTTP errors are answers too."""
        req = urllib.request.Request(
            self.url + path, method=method,
            data=json.dumps(body).encode() if body is not None else None,
            headers={'x-auth-token': 'admin',
                     'content-type': 'application/json',
                     'openstack-api-version': 'placement latest'})
        try:
            with urllib.request.urlopen(req, timeout=10) as response:
                return response.status, json.loads(response.read() or
                                                   b'null')
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b'null')

    def call(self, method, path, body=None):
        """The body of a request that must succeed."""
        status, answer = self.request(method, path, body)
        if status >= 300:
            raise AssertionError('%s %s answered %s: %s'
                                 % (method, path, status, answer))
        return answer

    def scrape(self):
        """The text of GET /metrics."""
        with urllib.request.urlopen(self.url + '/metrics',
                                    timeout=30) as response:
            return response.read().decode()

    def families(self):
        """{name: family} of a scrape, as prometheus_client parses it."""
        return {family.name: family for family in
                prometheus_parser.text_string_to_metric_families(
                    self.scrape())}

    # ----------------------------------------------------------------------
    # The processes

    def worker_pids(self):
        """The master's live workers, once all are forked."""
        deadline = time.monotonic() + READY_TIMEOUT
        while True:
            pids = test_process._children(self.process.pid)
            if len(pids) == self.workers:
                return set(pids)
            if time.monotonic() > deadline:
                raise AssertionError('%d workers, not %d'
                                     % (len(pids), self.workers))
            time.sleep(0.1)

    def kill_a_worker(self):
        """SIGKILL one worker (as the OOM killer would); return
        (its pid, the pid of the worker the master starts instead)."""
        known = self.worker_pids()
        victim = min(known)
        os.kill(victim, signal.SIGKILL)
        deadline = time.monotonic() + RESPAWN_TIMEOUT
        while True:
            if self.process.poll() is not None:
                raise AssertionError('the master exited')
            new = set(test_process._children(self.process.pid)) - known
            if new:
                return victim, new.pop()
            if time.monotonic() > deadline:
                raise AssertionError('no worker replaced %d' % victim)
            time.sleep(0.05)

    def wait_until_answering(self, path='/resource_providers'):
        """Return once ``path`` answers 200 (a replacement worker loads
        the application before it listens)."""
        deadline = time.monotonic() + RESPAWN_TIMEOUT
        while True:
            try:
                if self.request('GET', path)[0] == 200:
                    return
            except OSError:  # refused or reset by a dying worker
                pass
            if time.monotonic() > deadline:
                raise AssertionError('%s does not answer' % path)
            time.sleep(0.1)


# --------------------------------------------------------------------------
# A small test cloud

# name: (parent name or None, {class: (total, reserved, ratio)}, traits)
CLOUD = {
    'cn1': (None, {'VCPU': (16, 0, 4.0), 'MEMORY_MB': (32768, 512, 1.5),
                   'DISK_GB': (200, 10, 1.0)}, []),
    # A NUMA node of cn1: nested, with VCPU of its own.
    'cn1-numa0': ('cn1', {'VCPU': (8, 1, 2.0),
                          'MEMORY_MB': (16384, 0, 1.0)}, []),
    'cn2': (None, {'VCPU': (32, 2, 1.5), 'MEMORY_MB': (65536, 1024, 1.0)},
            []),
    'cn3': (None, {'VCPU': (4, 0, 16.0), 'MEMORY_MB': (8192, 0, 1.0)}, []),
    # Disk shared with cn2 and cn3 through their aggregate.
    'shared-disk': (None, {'DISK_GB': (2000, 100, 1.0)},
                    ['MISC_SHARES_VIA_AGGREGATE']),
}
AGGREGATE = {'uuid': '8f1b2a63-5c0e-4a55-9c3d-2f4d7a9e1b01',
             'members': ('cn2', 'cn3', 'shared-disk')}


def build_cloud(server):
    """Create CLOUD and AGGREGATE on ``server``; {name: uuid}."""
    uuids = {}
    for name, (parent, inventories, traits) in CLOUD.items():
        body = {'name': name}
        if parent:
            body['parent_provider_uuid'] = uuids[parent]
        provider = server.call('POST', '/resource_providers', body)
        uuids[name] = provider['uuid']
        generation = server.call(
            'PUT', '/resource_providers/%s/inventories' % provider['uuid'],
            {'resource_provider_generation': provider['generation'],
             'inventories': {
                 rc: {'total': total, 'reserved': reserved,
                      'allocation_ratio': ratio}
                 for rc, (total, reserved, ratio) in inventories.items()}},
        )['resource_provider_generation']
        if traits:
            generation = server.call(
                'PUT', '/resource_providers/%s/traits' % provider['uuid'],
                {'resource_provider_generation': generation,
                 'traits': traits})['resource_provider_generation']
        if name in AGGREGATE['members']:
            server.call(
                'PUT', '/resource_providers/%s/aggregates' % provider['uuid'],
                {'resource_provider_generation': generation,
                 'aggregates': [AGGREGATE['uuid']]})
    return uuids


def claim(server, consumer, resources_by_provider):
    """PUT /allocations/{consumer} of a new consumer."""
    server.call('PUT', '/allocations/%s' % consumer, {
        'allocations': {uuid: {'resources': resources}
                        for uuid, resources in resources_by_provider.items()},
        'project_id': 'a8f3b7d2c1e04f5a9b6c3d2e1f0a9b8c',
        'user_id': 'c4d5e6f7a8b94c0d9e8f7a6b5c4d3e2f',
        'consumer_generation': None, 'consumer_type': 'INSTANCE'})


def free_by_api(server, resource_class):
    """The cloud's free capacity of a class as the Placement API gives
    it: every provider's (total - reserved) * allocation_ratio - usage,
    from its inventories and usages."""
    free = 0.0
    for provider in server.call('GET', '/resource_providers')[
            'resource_providers']:
        path = '/resource_providers/%s/' % provider['uuid']
        inventory = server.call('GET', path + 'inventories')[
            'inventories'].get(resource_class)
        if inventory is None:
            continue
        used = server.call('GET', path + 'usages')['usages'].get(
            resource_class, 0)
        free += ((inventory['total'] - inventory['reserved'])
                 * inventory['allocation_ratio'] - used)
    return free
