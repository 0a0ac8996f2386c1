# SPDX-License-Identifier: Apache-2.0
"""Per-provider reads on two clouds side by side, over HTTP only.

A read of one provider (its allocations, usages, inventories) or of one
consumer must cost what that provider holds, not what the cloud holds.
This times them on a host in the middle of each cloud, alternating
request by request between the two services (say the same server code
on a 10,000-node and a 1,000-node cloud), and prints each pair of
medians with their ratio:

    python -m benchmarks.provider_reads \\
        --url http://127.0.0.1:8870 --state /tmp/i18_10000.json \\
        --reference-url http://127.0.0.1:8871 \\
        --reference-state /tmp/i18_1000.json

``--load-threads N`` runs N threads of the scheduler's ``limit=10``
candidate request against both services meanwhile, as a scheduler
would.
"""

import statistics
import threading

from benchmarks import candidates
from benchmarks import client as http_client
from benchmarks import compare


def reads(client, cloud):
    """name -> path, for the middle host of ``cloud``."""
    host = cloud.hosts[len(cloud.hosts) // 2]
    allocations = client.get(
        '/resource_providers/%s/allocations' % host).json()['allocations']
    consumer = sorted(allocations)[0]
    return {
        'provider allocations': '/resource_providers/%s/allocations' % host,
        'provider usages': '/resource_providers/%s/usages' % host,
        'provider inventories': '/resource_providers/%s/inventories' % host,
        'one consumer': '/allocations/%s' % consumer,
    }, len(allocations)


def timed(client, path):
    with http_client.Timer() as t:
        client.get(path)
    return t.seconds * 1000


def alternate_reads(clients, paths, samples):
    """{read: (median ms, median ms)} of the two services, each read's
    requests alternating between them one by one; ``paths`` are each
    service's ``reads``."""
    medians = {}
    for name in paths[0]:
        pairs = [tuple(timed(client, service_paths[name])
                       for client, service_paths in zip(clients, paths))
                 for _ in range(samples)]
        medians[name] = tuple(statistics.median(pair[side] for pair in pairs)
                              for side in (0, 1))
    return medians


def candidate_load(services, threads, stop):
    def loop(client):
        while not stop.is_set():
            client.get('/allocation_candidates', params={
                'resources': candidates.PLAIN, 'limit': '10'})
    workers = [threading.Thread(target=loop, args=(client,), daemon=True)
               for client in services for _ in range(threads)]
    for worker in workers:
        worker.start()
    return workers


def parse_args(argv):
    parser = compare.two_services_parser(__doc__.split('\n')[0])
    parser.add_argument('--samples', type=int, default=51)
    parser.add_argument('--load-threads', type=int, default=0)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    ours = http_client.Client(args.url, args.token)
    reference = http_client.Client(args.reference_url, args.token)
    paths_ours, held_ours = reads(ours, candidates.load_cloud(args.state))
    paths_ref, held_ref = reads(reference,
                                candidates.load_cloud(args.reference_state))
    print('allocations of the host read: %d against %d (reference)'
          % (held_ours, held_ref))
    stop = threading.Event()
    workers = candidate_load([ours, reference], args.load_threads, stop)
    try:
        medians = alternate_reads((ours, reference), (paths_ours, paths_ref),
                                  args.samples)
        for name, (mine, theirs) in medians.items():
            print('%-22s %7.2f ms  reference %7.2f ms  %5.2fx'
                  % (name, mine, theirs, mine / theirs))
    finally:
        stop.set()
        for worker in workers:
            worker.join()


if __name__ == '__main__':
    main()
