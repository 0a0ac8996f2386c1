#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Time ``consumer list`` over a whole cloud: the consumers interrupted
migrations left behind, and the doubled ones.

It writes benchmarks/cloud.py's cloud into an empty database with
``benchmarks.sql_cloud`` (every consumer an INSTANCE, about 17 per
host), starts the embedded server on it, then over HTTP seeds
``--migrations`` MIGRATION consumers on hosts chosen at random and
``--doubled`` INSTANCE consumers holding two hosts each. It runs the real
``openstack`` command in a subprocess (no provider named), checks that
it finds exactly the seeded consumers, and prints the median wall time of
the whole process and the number of requests it sent (from one extra
``--debug`` run, not timed)::

    python -m benchmarks.consumer_list \\
        --database-connection postgresql+psycopg://postgres@127.0.0.1/c1k \\
        --nodes 1000 --runs 3

``--no-populate --state FILE`` serves a database populated (and seeded)
by an earlier run; ``--url`` times a running, populated and seeded server.
"""

import argparse
import json
import os
import random
import statistics
import uuid

from benchmarks import candidates
from benchmarks import client as http_client
from benchmarks import local_server
from benchmarks import operator_commands

CONSUMER_LIST = ['resource', 'provider', 'consumer', 'list']
SEED_VERSION = '1.38'


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--database-connection',
                        help='an empty database to populate and serve')
    parser.add_argument('--nodes', type=int, default=1000,
                        help='compute nodes (default 1,000)')
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--migrations', type=int, default=25)
    parser.add_argument('--doubled', type=int, default=5)
    parser.add_argument('--no-populate', action='store_true')
    parser.add_argument('--url', help='time this running server instead')
    parser.add_argument('--state', help='the cloud description '
                        '(benchmarks.sql_cloud --state); seeded consumers '
                        'are kept beside it')
    parser.add_argument('--runs', type=int, default=3)
    parser.add_argument('--workers', type=int, default=1,
                        help='server worker processes (default 1)')
    parser.add_argument('--openstack',
                        default=operator_commands._default_openstack())
    return parser.parse_args(argv)


def seed(url, cloud, migrations, doubled, seed_value):
    """``(migration uuids, doubled uuids)`` written over HTTP: DISK_GB on
    host roots (every root has some, NUMA hosts included)."""
    rng = random.Random(seed_value)
    client = http_client.Client(url, microversion=SEED_VERSION)
    project, user = str(uuid.uuid4()), str(uuid.uuid4())

    def write(hosts, consumer_type):
        consumer = str(uuid.uuid4())
        client.put('/allocations/' + consumer, {
            'allocations': {host: {'resources': {'DISK_GB': 1}}
                            for host in hosts},
            'project_id': project, 'user_id': user,
            'consumer_generation': None, 'consumer_type': consumer_type},
            expect=(204,))
        return consumer

    return ([write([rng.choice(cloud.hosts)], 'MIGRATION')
             for _ in range(migrations)],
            [write(rng.sample(cloud.hosts, 2), 'INSTANCE')
             for _ in range(doubled)])


def shapes(seeded):
    """``(name, command words, the consumer uuids it must print)``."""
    migrations, doubled = seeded
    return [
        ('--consumer-type MIGRATION', CONSUMER_LIST + [
            '--consumer-type', 'MIGRATION', '-c', 'consumer_uuid'],
         migrations),
        # consumer_type needs each doubled consumer's own allocations.
        ('--doubled -c consumer_uuid -c consumer_type', CONSUMER_LIST + [
            '--doubled', '-c', 'consumer_uuid', '-c', 'consumer_type'],
         doubled),
    ]


def check_found(name, stdout, expected):
    found = sorted(line.split()[0] for line in stdout.splitlines())
    if found != sorted(expected):
        raise SystemExit('%s printed %d consumers, %d were seeded'
                         % (name, len(found), len(expected)))


def main(argv=None):
    args = parse_args(argv)
    server = None
    url = args.url
    if not url:
        if not args.database_connection:
            raise SystemExit('give --database-connection or --url')
        if not args.no_populate:
            operator_commands.populate(args)
        server, url = local_server.start(args.database_connection,
                                         args.workers)
    try:
        seeded = seeded_consumers(args, url)
        for name, words, expected in shapes(seeded):
            _, done, _ = operator_commands.run(
                operator_commands.command(args, url, words, debug=True))
            sent = sum(1 for line in done.stderr.splitlines()
                       if line.startswith('REQ: curl'))
            check_found(name, done.stdout, expected)
            times = [operator_commands.run(
                operator_commands.command(args, url, words))[0]
                for _ in range(args.runs)]
            print('consumer list %-44s median %6.2f s  min %6.2f s  '
                  '%6d requests  %d rows  (%d runs)'
                  % (name, statistics.median(times), min(times), sent,
                     len(expected), args.runs), flush=True)
    finally:
        local_server.stop(server)


def seeded_consumers(args, url):
    """Seed once per state file; a later ``--no-populate`` run reads the
    consumers seeded then."""
    kept = (args.state or '') + '.seeded.json'
    if args.state and os.path.exists(kept):
        with open(kept) as f:
            return tuple(json.load(f))
    cloud = candidates.load_cloud(args.state)
    seeded = seed(url, cloud, args.migrations, args.doubled, args.seed)
    print('seeded over HTTP: %d MIGRATION consumers, %d doubled'
          % (len(seeded[0]), len(seeded[1])), flush=True)
    with open(kept, 'w') as f:
        json.dump(seeded, f)
    return seeded


if __name__ == '__main__':
    main()
