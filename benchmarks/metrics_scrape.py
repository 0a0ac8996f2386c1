# SPDX-License-Identifier: Apache-2.0
"""GET /metrics at scale, and what the metrics cost the scheduler loop.

For each cloud size: a fresh database on --server-url, filled by the bulk
SQL loader (benchmarks/sql_cloud.py, set-up only); then, over HTTP only,
the server's scrape time and size with ``[metrics] per_provider`` on and
off, and the scheduler loop of benchmarks/candidates.py (limit=10
candidates, claim the first) in claims per second with the metrics on
and off, alternated in the same run.

    python -m benchmarks.metrics_scrape --nodes 1000 10000
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

from benchmarks import candidates
from benchmarks import client as http_client
from benchmarks import databases
from benchmarks import local_server
from benchmarks import sql_cloud

DEFAULT_SERVER = 'postgresql+psycopg://postgres@127.0.0.1/'
# The server's configurations measured: [metrics] options.
CONFIGS = {
    'per_provider': {'enabled': True, 'per_provider': True},
    'cloud_only': {'enabled': True, 'per_provider': False},
    'off': {'enabled': False},
}


def start_server(connection, options, workers, threads, tmp):
    """(process, url) of placement-server with [metrics] ``options``."""
    conf = os.path.join(tmp, 'placement-%d.conf' % time.monotonic_ns())
    with open(conf, 'w') as f:
        f.write('[api]\nauth_strategy = noauth2\n'
                '[placement_database]\nconnection = %s\n[metrics]\n'
                % connection)
        for name, value in options.items():
            f.write('%s = %s\n' % (name, value))
    port = local_server.free_port()
    popen = subprocess.Popen(
        [sys.executable, '-m', 'osc_placement.server', '--config-file',
         conf, '--host', '127.0.0.1', '--port', str(port), '--workers',
         str(workers), '--threads', str(threads)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env=dict(os.environ, OS_PLACEMENT_CONFIG_DIR=tmp))
    url = 'http://127.0.0.1:%d' % port
    local_server.wait_until_ready(popen, url, '/', 120)
    return popen, url


def scrape_figures(url, scrapes):
    """Median and worst seconds of ``scrapes`` scrapes, bytes and series
    of the last, after one warm-up."""
    def one():
        with http_client.Timer() as t:
            with urllib.request.urlopen(url + '/metrics', timeout=300) as r:
                body = r.read()
        return t.seconds, body
    one()
    timings = []
    for _ in range(scrapes):
        seconds, body = one()
        timings.append(seconds)
    series = sum(1 for line in body.split(b'\n')
                 if line and not line.startswith(b'#'))
    return {'median_s': round(statistics.median(timings), 3),
            'max_s': round(max(timings), 3), 'bytes': len(body),
            'series': series}


def loop_figures(url, threads, seconds):
    client = http_client.Client(url)
    # Warm the worker's kept structure before timing.
    candidates.claim_once(client, [])
    return candidates.scheduler_loop(client, threads, seconds)


def measure(connection, args, tmp):
    result = {}
    for name in ('per_provider', 'cloud_only'):
        popen, url = start_server(connection, CONFIGS[name], args.workers,
                                  args.threads, tmp)
        try:
            result['scrape_' + name] = figures = scrape_figures(
                url, args.scrapes)
        finally:
            local_server.stop(popen)
        _say('scrape, %-12s median %6.3f s  max %6.3f s  %9d bytes  '
             '%7d series' % (name, figures['median_s'], figures['max_s'],
                             figures['bytes'], figures['series']))
    loops = {'per_provider': [], 'off': []}
    for round_ in range(args.rounds):
        # On then off, then off then on: neither always goes first.
        for name in sorted(loops, reverse=bool(round_ % 2)):
            popen, url = start_server(connection, CONFIGS[name],
                                      args.workers, args.threads, tmp)
            try:
                loops[name].append(loop_figures(url, args.threads,
                                                args.loop_seconds))
            finally:
                local_server.stop(popen)
    for name, runs in loops.items():
        if not runs:
            continue
        rates = [run['claims_per_second'] for run in runs]
        result['loop_metrics_' + ('on' if name != 'off' else 'off')] = {
            'claims_per_second': rates,
            'median_claims_per_second': statistics.median(rates)}
        _say('scheduler loop, metrics %-3s  %s claims/s' % (
            'on' if name != 'off' else 'off',
            ', '.join('%.1f' % rate for rate in rates)))
    return result


def _say(text):
    print(text, flush=True)


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--server-url', default=DEFAULT_SERVER,
                        help='database server the clouds are made on')
    parser.add_argument('--nodes', type=int, nargs='+',
                        default=[1000, 10000])
    parser.add_argument('--workers', type=int, default=2)
    parser.add_argument('--threads', type=int, default=4)
    parser.add_argument('--scrapes', type=int, default=5)
    parser.add_argument('--loop-seconds', type=float, default=15)
    parser.add_argument('--rounds', type=int, default=4,
                        help='scheduler loops with metrics on and off '
                             '(0: scrapes only)')
    parser.add_argument('--json', help='write all figures to this file')
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    report = {}
    with tempfile.TemporaryDirectory(prefix='ocp-metrics-') as tmp:
        for nodes in args.nodes:
            connection = databases.create(args.server_url, 'metrics')
            try:
                cloud, stopwatch = sql_cloud.load(connection, nodes)
                for line in sql_cloud.summary(cloud, stopwatch):
                    _say(line)
                _say('== %d nodes' % nodes)
                report[nodes] = measure(connection, args, tmp)
            finally:
                databases.drop(connection)
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(report, f, indent=2)
    return 0


if __name__ == '__main__':
    sys.exit(main())
