# SPDX-License-Identifier: Apache-2.0
"""The read half of the scheduler loop: ``GET /allocation_candidates``
with limit=10 from several threads, in requests per second.

``benchmarks.candidates`` measures whole claims (GET, then PUT
/allocations); this measures the GET alone, so servers without the
allocation routes can be compared too:

    python -m benchmarks.query_loop --url http://127.0.0.1:8778
"""

import argparse
import concurrent.futures
import sys
import time

from benchmarks import candidates
from benchmarks import client as http_client


def run(client, threads, seconds):
    deadline = time.monotonic() + seconds

    def loop():
        done = 0
        while time.monotonic() < deadline:
            body = client.get('/allocation_candidates', params={
                'resources': candidates.PLAIN, 'limit': '10'}).json()
            if len(body['allocation_requests']) != 10:
                raise AssertionError('expected 10 candidates')
            done += 1
        return done

    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        total = sum(f.result() for f in [pool.submit(loop)
                                         for _ in range(threads)])
    return total / (time.monotonic() - start)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--url', required=True)
    parser.add_argument('--token', default='admin')
    parser.add_argument('--threads', type=int, default=4)
    parser.add_argument('--seconds', type=float, default=20)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    rate = run(http_client.Client(args.url, args.token), args.threads,
               args.seconds)
    print('limit=10 GET loop (%d threads)  %.1f requests/s' % (
        args.threads, rate))
    return 0


if __name__ == '__main__':
    sys.exit(main())
