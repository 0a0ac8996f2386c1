#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Time ``resource provider inventory set --aggregate`` on a big aggregate.

It speaks only HTTP to Placement: it creates N providers (default 1000)
through the API, puts them all in one new aggregate, then times the
command with our ``openstack`` and, if given, another one (upstream
osc-placement's), alternating runs, and prints the medians and the ratio.

    python benchmarks/inventory_set_aggregate.py http://127.0.0.1:8778 \\
        --upstream /path/to/upstream/venv/bin/openstack

The server must accept the token given with ``--token`` (``admin`` for a
``noauth2`` Placement, such as the embedded server).

On one machine the client and the server share the CPUs and a request
costs no network time, which is the worst case for a concurrent client.
``--latency-ms 10`` puts a small TCP relay in front of the server that
delays every exchange by that much (half each way), as a cloud's network,
TLS terminator and load balancer do, and times both clients through it.
"""

import argparse
import asyncio
from concurrent import futures
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from urllib import parse
import uuid

import requests

POPULATE_VERSION = '1.20'
AGGREGATES_VERSION = '1.19'
POPULATE_WORKERS = 4
POPULATE_ATTEMPTS = 5


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('url', help='Placement endpoint')
    parser.add_argument('--providers', type=int, default=1000,
                        help='providers in the aggregate (default 1000)')
    parser.add_argument('--runs', type=int, default=3,
                        help='timed runs per client (default 3)')
    parser.add_argument('--openstack', default=_default_openstack(),
                        help='our openstack executable (default: the one '
                             'next to this Python, else on PATH)')
    parser.add_argument('--upstream',
                        help='another openstack executable to compare with')
    parser.add_argument('--aggregate',
                        help='reuse this already populated aggregate')
    parser.add_argument('--token', default='admin')
    parser.add_argument('--microversion', default='1.39',
                        help='--os-placement-api-version for the command')
    parser.add_argument('--latency-ms', type=float, default=0,
                        help='time the clients through a relay adding this '
                             'round-trip latency (default 0: direct)')
    parser.add_argument('--resource', action='append',
                        default=None,
                        help='--resource values (default VCPU=8, '
                             'MEMORY_MB=4096, DISK_GB=100)')
    return parser.parse_args(argv)


def _default_openstack():
    beside = os.path.join(os.path.dirname(sys.executable), 'openstack')
    return beside if os.path.exists(beside) else shutil.which('openstack')


class Placement:
    """The few API calls needed to populate an aggregate."""

    def __init__(self, url, token):
        self.url = url.rstrip('/')
        self.http = requests.Session()
        self.http.headers.update({'X-Auth-Token': token,
                                  'Accept': 'application/json'})

    def call(self, method, path, version, body=None):
        # A SQLite-backed server may answer 500 "database is locked" under
        # concurrent writes; the population retries those.
        for attempt in range(POPULATE_ATTEMPTS):
            response = self.http.request(
                method, self.url + path, json=body,
                headers={'OpenStack-API-Version': 'placement ' + version})
            if response.status_code < 500:
                break
            time.sleep(0.1 * 2 ** attempt)
        response.raise_for_status()
        return response.json() if response.content else None

    def create_member(self, name, aggregate):
        provider = self.call('POST', '/resource_providers', POPULATE_VERSION,
                             {'name': name})
        self.call('PUT', '/resource_providers/%s/aggregates'
                  % provider['uuid'], AGGREGATES_VERSION,
                  {'aggregates': [aggregate],
                   'resource_provider_generation': provider['generation']})


def populate(placement, count):
    aggregate = str(uuid.uuid4())
    prefix = 'bench-%s-' % aggregate[:8]
    started = time.monotonic()
    with futures.ThreadPoolExecutor(POPULATE_WORKERS) as pool:
        list(pool.map(lambda n: placement.create_member(
            '%s%05d' % (prefix, n), aggregate), range(count)))
    print('populated %d providers in aggregate %s in %.1fs'
          % (count, aggregate, time.monotonic() - started))
    return aggregate


class LatencyRelay:
    """A TCP relay to the server that delays each chunk by ``delay`` s.

    It runs an asyncio loop in a daemon thread; chunks keep their order
    because each direction of a connection is pumped by one task.
    """

    def __init__(self, target_url, delay):
        target = parse.urlsplit(target_url)
        self.target = (target.hostname, target.port or 80)
        self.delay = delay
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()
        threading.Thread(target=self._serve, args=(ready,),
                         daemon=True).start()
        ready.wait()
        self.url = 'http://127.0.0.1:%d' % self.port

    def _serve(self, ready):
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(
            asyncio.start_server(self._relay, '127.0.0.1', 0))
        self.port = server.sockets[0].getsockname()[1]
        ready.set()
        self.loop.run_forever()

    async def _relay(self, client_reader, client_writer):
        server_reader, server_writer = await asyncio.open_connection(
            *self.target)
        await asyncio.gather(self._pump(client_reader, server_writer),
                             self._pump(server_reader, client_writer))

    async def _pump(self, reader, writer):
        try:
            while True:
                chunk = await reader.read(65536)
                if not chunk:
                    break
                await asyncio.sleep(self.delay)
                writer.write(chunk)
                await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()


def command(executable, args, aggregate, run=0):
    argv = [executable, '--os-auth-type', 'admin_token',
            '--os-token', args.token, '--os-endpoint', args.client_url,
            '--os-placement-api-version', args.microversion,
            'resource', 'provider', 'inventory', 'set', aggregate,
            '--aggregate', '-f', 'value', '-c', 'resource_provider']
    for resource in changed_each_run(args.resource, run):
        argv += ['--resource', resource]
    return argv


def changed_each_run(resources, run):
    """``resources`` with the first value one higher on odd runs.

    Our client does not write a provider that already is as asked, so a
    run repeating the previous one's values would time reads only; this
    makes every run change every provider.
    """
    name, _, value = resources[0].partition('=')
    if not value.isdigit():
        return resources
    return ['%s=%d' % (name, int(value) + run % 2)] + resources[1:]


def timed_run(argv, expected_rows):
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True)
    elapsed = time.monotonic() - started
    rows = len(done.stdout.splitlines())
    if done.returncode != 0 or rows != expected_rows:
        raise SystemExit('%s failed (exit %s, %d rows of %d):\n%s'
                         % (argv[0], done.returncode, rows, expected_rows,
                            done.stderr[-2000:]))
    return elapsed


def main(argv=None):
    args = parse_args(argv)
    args.resource = args.resource or ['VCPU=8', 'MEMORY_MB=4096',
                                      'DISK_GB=100']
    placement = Placement(args.url, args.token)
    aggregate = args.aggregate or populate(placement, args.providers)
    members = placement.call('GET', '/resource_providers?member_of='
                             + aggregate, '1.3')['resource_providers']
    expected_rows = len(members) * len(args.resource)
    args.client_url = args.url
    if args.latency_ms:
        relay = LatencyRelay(args.url, args.latency_ms / 2000.0)
        args.client_url = relay.url
        print('clients go through a relay adding %.1f ms per round trip'
              % args.latency_ms)
    clients = {'ours': args.openstack}
    if args.upstream:
        clients['upstream'] = args.upstream
    times = {name: [] for name in clients}
    for run in range(args.runs):
        for name, executable in clients.items():
            elapsed = timed_run(command(executable, args, aggregate, run),
                                expected_rows)
            times[name].append(elapsed)
            print('run %d %-8s %7.2fs' % (run + 1, name, elapsed))
    medians = {name: statistics.median(values)
               for name, values in times.items()}
    print('providers: %d, runs: %d, added latency: %.1f ms'
          % (len(members), args.runs, args.latency_ms))
    for name, median in medians.items():
        print('median %-8s %7.2fs  (%s)' % (name, median, clients[name]))
    if 'upstream' in medians:
        print('ratio upstream/ours: %.1fx'
              % (medians['upstream'] / medians['ours']))


if __name__ == '__main__':
    main()
