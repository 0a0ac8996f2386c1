# SPDX-License-Identifier: Apache-2.0
"""Allocation-candidate and scheduler-loop benchmark, over HTTP only.

Populates a realistic cloud (see benchmarks/cloud.py) in the Placement
service at --url, then reports median and p95 latency of several
``GET /allocation_candidates`` shapes, the scheduler loop (candidates with
limit=10, then a claim of the first one) in claims per second from several
threads, and population throughput. Run it against our server and against
any other Placement (upstream, say) in the same session and compare.

    python -m benchmarks.candidates --url http://127.0.0.1:8778 --nodes 1000
"""

import argparse
import concurrent.futures
import contextlib
import json
import statistics
import sys
import threading
import time
import uuid

from benchmarks import client as http_client
from benchmarks import cloud as cloud_builder

PLAIN = 'VCPU:2,MEMORY_MB:4096,DISK_GB:20'


def query_shapes(cloud):
    """name -> query parameters, the shapes a scheduler sends."""
    aggregate = cloud.aggregates[0]
    return {
        'plain limit=1000': {'resources': PLAIN, 'limit': '1000'},
        'plain, no limit': {'resources': PLAIN},
        'traits': {'resources': PLAIN, 'limit': '1000',
                   'required': '!COMPUTE_STATUS_DISABLED,HW_CPU_X86_AVX2'},
        'member_of': {'resources': PLAIN, 'limit': '1000',
                      'member_of': aggregate},
        'granular VGPU, isolate': {
            'resources': 'VCPU:2,MEMORY_MB:4096', 'resources1': 'VGPU:1',
            'group_policy': 'isolate', 'limit': '1000'},
        'two NUMA groups, isolate': {
            'resources1': 'VCPU:2,MEMORY_MB:2048',
            'resources2': 'VCPU:2,MEMORY_MB:2048',
            'group_policy': 'isolate', 'limit': '1000'},
        'plain limit=10': {'resources': PLAIN, 'limit': '10'},
    }


def time_query(client, path, params, samples):
    """Latencies in ms of ``samples`` GETs, after one warm-up request."""
    client.get(path, params=params)
    latencies = []
    for _ in range(samples):
        with http_client.Timer() as t:
            response = client.get(path, params=params)
        latencies.append(t.seconds * 1000)
    return latencies, response.json()


def summarise(latencies):
    return {'median_ms': round(statistics.median(latencies), 1),
            'p95_ms': round(http_client.percentile(latencies, 0.95), 1),
            'samples': len(latencies)}


def measure_queries(client, cloud, samples):
    results = {}
    for name, params in query_shapes(cloud).items():
        latencies, body = time_query(client, '/allocation_candidates',
                                     params, samples)
        results[name] = summarise(latencies)
        results[name]['candidates'] = len(body['allocation_requests'])
        _say('%-28s median %8.1f ms  p95 %8.1f ms  (%d candidates)' % (
            name, results[name]['median_ms'], results[name]['p95_ms'],
            results[name]['candidates']))
    latencies, body = time_query(client, '/resource_providers', None,
                                 samples)
    results['GET /resource_providers'] = summarise(latencies)
    _say('%-28s median %8.1f ms  p95 %8.1f ms' % (
        'GET /resource_providers', results['GET /resource_providers'][
            'median_ms'], results['GET /resource_providers']['p95_ms']))
    return results


def claim_once(client, consumers, latencies=None):
    """One scheduler decision: ask for 10 candidates, claim the first.
    The candidate request's latency in ms is appended to ``latencies``
    when given."""
    with http_client.Timer() as t:
        body = client.get('/allocation_candidates',
                          params={'resources': PLAIN, 'limit': '10'}).json()
    if latencies is not None:
        latencies.append(t.seconds * 1000)
    if not body['allocation_requests']:
        return 'none'
    request = body['allocation_requests'][0]
    consumer = str(uuid.uuid4())
    response = client.request('PUT', '/allocations/' + consumer, {
        'allocations': request['allocations'],
        'project_id': str(uuid.UUID(int=1)),
        'user_id': str(uuid.UUID(int=2)),
        'consumer_generation': None, 'consumer_type': 'INSTANCE'},
        expect=(204, 409))
    if response.status_code == 204:
        consumers.append(consumer)
        return 'claimed'
    return 'conflict'


def scheduler_loop(client, threads, seconds, around=contextlib.nullcontext):
    """Claims per second from ``threads`` schedulers for ``seconds``, and
    the median of the loop's candidate requests. ``around()`` is entered
    just for the timed part (not the deletion of the claims after it): a
    caller's measurement of the server during the loop."""
    consumers, outcomes, latencies = [], [], []
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def scheduler():
        while time.monotonic() < deadline:
            outcome = claim_once(client, consumers, latencies)
            with lock:
                outcomes.append(outcome)

    with around(), http_client.Timer() as t:
        with concurrent.futures.ThreadPoolExecutor(threads) as pool:
            for future in [pool.submit(scheduler) for _ in range(threads)]:
                future.result()
    claimed = outcomes.count('claimed')
    result = {'threads': threads, 'seconds': round(t.seconds, 1),
              'claims': claimed, 'conflicts': outcomes.count('conflict'),
              'claims_per_second': round(claimed / t.seconds, 2),
              'limit10_median_ms': round(statistics.median(latencies), 2)}
    _say('scheduler loop (%d threads)   %.2f claims/s  (%d claims, %d '
         'conflicts)' % (threads, result['claims_per_second'], claimed,
                         result['conflicts']))
    for consumer in consumers:  # leave the cloud as it was
        client.delete('/allocations/' + consumer)
    return result


def populate(client, nodes, threads, seed):
    _say('populating %d compute nodes ...' % nodes)
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        cloud, timings = cloud_builder.build(client, nodes, seed, pool,
                                             progress=True)
    rates = {}
    for phase, (count, seconds) in timings.items():
        rates[phase] = {'count': count, 'seconds': round(seconds, 1),
                        'per_second': round(count / seconds, 1)}
        _say('populate %-18s %6d in %7.1f s = %7.1f /s' % (
            phase, count, seconds, count / seconds))
    writes = timings['allocation_writes'][1]
    rates['consumers_per_second'] = round(cloud.consumers / writes, 1)
    _say('populate consumers          %6d in %7.1f s = %7.1f /s' % (
        cloud.consumers, writes, cloud.consumers / writes))
    _say('cloud: %d providers, %d consumers, %d allocation rows' % (
        cloud.providers, cloud.consumers, cloud.allocation_rows))
    return cloud, rates


def save_cloud(path, cloud):
    with open(path, 'w') as f:
        json.dump(vars(cloud), f)


def load_cloud(path):
    cloud = cloud_builder.Cloud()
    with open(path) as f:
        vars(cloud).update(json.load(f))
    return cloud


def _say(text):
    print(text, flush=True)


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--url', required=True,
                        help='Placement endpoint, e.g. http://127.0.0.1:8778')
    parser.add_argument('--token', default='admin',
                        help='X-Auth-Token (noauth2: admin)')
    parser.add_argument('--nodes', type=int, default=1000)
    parser.add_argument('--threads', type=int, default=4,
                        help='client threads for population and the loop')
    parser.add_argument('--samples', type=int, default=15,
                        help='timed requests per query shape')
    parser.add_argument('--loop-seconds', type=float, default=20)
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--state', help='JSON file describing the cloud: '
                        'written after populating, read with --no-populate')
    parser.add_argument('--no-populate', action='store_true',
                        help='reuse a cloud populated earlier (--state)')
    parser.add_argument('--json', help='write all figures to this file')
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    client = http_client.Client(args.url, args.token)
    report = {'url': args.url, 'nodes': args.nodes}
    if args.no_populate:
        cloud = load_cloud(args.state)
    else:
        cloud, report['population'] = populate(client, args.nodes,
                                               args.threads, args.seed)
        if args.state:
            save_cloud(args.state, cloud)
    report['queries'] = measure_queries(client, cloud, args.samples)
    report['scheduler_loop'] = scheduler_loop(client, args.threads,
                                              args.loop_seconds)
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(report, f, indent=2)
    return 0


if __name__ == '__main__':
    sys.exit(main())
