# SPDX-License-Identifier: Apache-2.0
"""This source tree's server against another tree's (an earlier commit),
one request at a time after a pause: the latency of a request that finds
the worker idle and its caches cold, as a scheduler's requests and the
benchmarks alternating with upstream find it, and the workers' CPU per
request.

    git worktree add /tmp/before HEAD~1
    python -m benchmarks.two_trees --baseline /tmp/before

Both servers run on one PostgreSQL database holding the cloud of
``benchmarks/cloud.py`` (written by the bulk SQL loader), 2 workers x 4
threads each, from a neutral working directory so that each imports its
own tree. Requests alternate between them one by one, each after
``--pause`` seconds of idleness. Prints, per request, the median latency
and the CPU its server's workers spent per request, this tree's and the
baseline's.
"""

import argparse
import os
import statistics
import sys
import time

from benchmarks import candidates
from benchmarks import client as http_client
from benchmarks import databases
from benchmarks import local_server
from benchmarks import provider_reads
from benchmarks import scale
from benchmarks import sql_cloud

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_REQUESTS = ('GET /', 'member_of', 'plain limit=10',
                    'provider usages')


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--baseline', required=True,
                        help='a checkout of the tree to compare with')
    parser.add_argument('--nodes', type=int, default=1000)
    parser.add_argument('--database-url',
                        default=scale.DEFAULT_DATABASE_URL)
    parser.add_argument('--pause', type=float, default=0.005,
                        help='idle seconds before each request')
    parser.add_argument('--samples', type=int, default=300)
    parser.add_argument('--requests', default=','.join(DEFAULT_REQUESTS),
                        help='comma-separated: GET /, a candidate shape '
                             '(such as "plain, no limit") '
                             'of benchmarks.candidates, or a read of '
                             'benchmarks.provider_reads')
    return parser.parse_args(argv)


def start_server(tree, connection):
    """(process, client) of the server of source tree ``tree``."""
    process, url = local_server.start(
        connection, workers=2, threads=4, seconds=300,
        ready_path=scale.READY_PATH, source_tree=tree)
    return process, http_client.Client(url)


def request_paths(client, cloud):
    """name -> (path, query parameters)."""
    paths = {'GET /': ('/', None)}
    for name, params in candidates.query_shapes(cloud).items():
        paths[name] = ('/allocation_candidates', params)
    for name, path in provider_reads.reads(client, cloud)[0].items():
        paths[name] = (path, None)
    return paths


def request_names(text, paths):
    """The names of ``--requests`` (comma-separated), some of which hold
    a comma themselves ("plain, no limit"); a name not in ``paths`` is
    an error."""
    names, pending = [], ''
    for part in text.split(','):
        pending = part if not pending else pending + ',' + part
        if pending.strip() in paths:
            names.append(pending.strip())
            pending = ''
    if pending:
        raise SystemExit('unknown request: %r (known: %s)' % (
            pending.strip(), ', '.join(sorted(paths))))
    return names


def workers_cpu(workers):
    return sum(scale.cpu_seconds(pid) for pid in workers)


def compare(servers, path, params, samples, pause):
    """[(median latency ms, CPU ms per request)] of each server. The
    servers take turns, in alternating order; a server's CPU is read
    over the whole series (the kernel counts it in ticks of 10 ms, too
    coarse for one request), during which it serves only its own
    requests."""
    for _, client in servers:
        for _ in range(20):
            client.get(path, params=params)
    workers = [scale.children(process.pid) for process, _ in servers]
    latencies = [[] for _ in servers]
    before = [workers_cpu(pids) for pids in workers]
    for sample in range(samples):
        order = range(len(servers))
        for index in (order if sample % 2 == 0 else reversed(order)):
            time.sleep(pause)
            with http_client.Timer() as timer:
                servers[index][1].get(path, params=params)
            latencies[index].append(timer.seconds * 1000)
    spent = [workers_cpu(pids) - cpu for pids, cpu in zip(workers, before)]
    return [(statistics.median(times), cpu * 1000 / samples)
            for times, cpu in zip(latencies, spent)]


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    connection = databases.create(args.database_url, 'two_trees')
    servers = []
    try:
        cloud, _ = sql_cloud.load(connection, args.nodes)
        for tree in (TOP, os.path.abspath(args.baseline)):
            servers.append(start_server(tree, connection))
        paths = request_paths(servers[0][1], cloud)
        print('%d nodes, %s s idle before each request, %d samples: '
              'median latency, workers\' CPU per request (ms)' % (
                  args.nodes, args.pause, args.samples))
        print('%-26s %9s %7s %9s %7s %8s' % (
            'request', 'this tree', 'CPU', 'baseline', 'CPU', 'ratio'))
        for name in request_names(args.requests, paths):
            path, params = paths[name]
            (mine, my_cpu), (theirs, their_cpu) = compare(
                servers, path, params, args.samples, args.pause)
            print('%-26s %9.3f %7.2f %9.3f %7.2f %7.2fx' % (
                name, mine, my_cpu, theirs, their_cpu, mine / theirs))
    finally:
        for process, _ in servers:
            local_server.stop(process)
        databases.drop(connection)
    return 0


if __name__ == '__main__':
    sys.exit(main())
