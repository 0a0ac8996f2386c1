# SPDX-License-Identifier: Apache-2.0
"""Two Placement services side by side, over HTTP only: every query shape
of ``benchmarks.candidates`` and its scheduler loop, alternating between
the services, with the ratio of each pair of medians.

A shared machine's speed drifts by tens of percent within minutes, so
two runs of ``benchmarks.candidates`` a few minutes apart can move a
ratio by half. Here each shape's requests alternate between the
services, one by one or in turns of ``--turn`` requests, and the
scheduler loop alternates in short runs, so a drift slows both alike.
Each service is described by the state file its population wrote
(``benchmarks.candidates --state`` or ``benchmarks.sql_cloud --state``):

    python -m benchmarks.compare \\
        --url http://127.0.0.1:8779 --state /tmp/ours1000.json \\
        --reference-url http://127.0.0.1:8778 \\
        --reference-state /tmp/anchor1000.json
"""

import argparse
import json
import statistics
import sys

from benchmarks import candidates
from benchmarks import client as http_client

SERVICE, REFERENCE = 0, 1


def _timed_get(client, path, params):
    with http_client.Timer() as t:
        client.get(path, params=params)
    return t.seconds * 1000


def alternate_queries(clients, clouds, samples, turn=1):
    """{shape: ([service's latencies], [reference's latencies])} in ms,
    each shape's requests alternating between the two services in turns
    of ``turn`` requests, after a warm-up request to each; ``samples``
    per service, rounded up to whole turns.

    With turns of one, each request is timed right after the other
    service's. When
    the reference takes tens of milliseconds and the service one, that
    is not the same for both: each of the service's requests comes after
    the reference's long one has pushed its process's memory out of the
    caches, each of the reference's after the service's short one (see
    doc/source/contributor/benchmarks.rst, "One command per cloud
    size")."""
    shapes = [candidates.query_shapes(cloud) for cloud in clouds]
    requests = {name: [('/allocation_candidates', service_shapes[name])
                       for service_shapes in shapes]
                for name in shapes[SERVICE]}
    requests['GET /resource_providers'] = [('/resource_providers', None)] * 2
    turns = -(-samples // turn)
    results = {}
    for name, (mine, theirs) in requests.items():
        pairs = list(zip(clients, (mine, theirs)))
        for client, (path, params) in pairs:
            client.get(path, params=params)
        latencies = ([], [])
        for _ in range(turns):
            for side, (client, (path, params)) in enumerate(pairs):
                for _ in range(turn):
                    latencies[side].append(_timed_get(client, path, params))
        results[name] = latencies
    return results


def alternate_loops(clients, threads, seconds, rounds):
    """([service's claims/s], [reference's claims/s]): ``rounds`` runs of
    the scheduler loop each, alternating."""
    rates = ([], [])
    for _ in range(rounds):
        for side, client in enumerate(clients):
            result = candidates.scheduler_loop(client, threads, seconds)
            rates[side].append(result['claims_per_second'])
    return rates


def report(queries, loops, turn=1):
    """The figures as a dict, and the lines that print them: medians and
    how many times faster the service is than the reference, with the
    requests per service and the turn they were timed in."""
    figures, lines = {}, []
    for name, (mine, theirs) in queries.items():
        ours, reference = statistics.median(mine), statistics.median(theirs)
        figures[name] = {'median_ms': round(ours, 2),
                         'reference_median_ms': round(reference, 2),
                         'times_faster': round(reference / ours, 2),
                         'samples': len(mine), 'turn': turn}
        lines.append('%-28s %8.1f ms  reference %8.1f ms  %6.1fx' % (
            name, ours, reference, reference / ours))
    ours, reference = (statistics.median(rates) for rates in loops)
    figures['scheduler loop'] = {
        'claims_per_second': ours, 'reference_claims_per_second': reference,
        'runs': loops, 'times_faster': round(ours / reference, 2)}
    lines.append('%-28s %8.2f /s   reference %8.2f /s   %6.1fx' % (
        'scheduler loop', ours, reference, ours / reference))
    return figures, lines


def at_least_one(text):
    """A count on the command line (samples, a turn's requests): a whole
    number, at least 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(
            'a whole number, at least 1: %r' % text)
    return value


def two_services_parser(description):
    """A parser taking the service and the reference, each a URL and the
    state file of its cloud, and the token for both."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument('--url', required=True)
    parser.add_argument('--state', required=True)
    parser.add_argument('--reference-url', required=True)
    parser.add_argument('--reference-state', required=True)
    parser.add_argument('--token', default='admin')
    return parser


def parse_args(argv):
    parser = two_services_parser(__doc__.split('\n')[0])
    parser.add_argument('--samples', type=at_least_one, default=11,
                        help='timed requests per shape and service')
    parser.add_argument('--turn', type=at_least_one, default=1,
                        help='requests of a shape each service serves '
                             'before the other\'s turn')
    parser.add_argument('--threads', type=int, default=4)
    parser.add_argument('--loop-seconds', type=float, default=10)
    parser.add_argument('--loop-rounds', type=int, default=3,
                        help='scheduler loop runs per service')
    parser.add_argument('--json', help='write the figures to this file')
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    clients = [http_client.Client(url, args.token)
               for url in (args.url, args.reference_url)]
    clouds = [candidates.load_cloud(path)
              for path in (args.state, args.reference_state)]
    queries = alternate_queries(clients, clouds, args.samples, args.turn)
    loops = alternate_loops(clients, args.threads, args.loop_seconds,
                            args.loop_rounds)
    figures, lines = report(queries, loops, args.turn)
    for line in lines:
        print(line)
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(figures, f, indent=2)
    return 0


if __name__ == '__main__':
    sys.exit(main())
