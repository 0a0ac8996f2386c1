"""A small Placement HTTP client for benchmarks: requests, threads, timing.

Only HTTP: benchmarks must be able to point at any Placement service.
"""

import concurrent.futures
import sys
import threading
import time

import requests

MICROVERSION = '1.39'


class PlacementError(Exception):
    pass


class Client:
    """Thread-safe: each thread gets its own keep-alive connection pool."""

    def __init__(self, url, token='admin', microversion=MICROVERSION):
        self.url = url.rstrip('/')
        self.headers = {'X-Auth-Token': token, 'Accept': 'application/json',
                        'OpenStack-API-Version': 'placement ' + microversion}
        self._local = threading.local()

    def _session(self):
        session = getattr(self._local, 'session', None)
        if session is None:
            session = self._local.session = requests.Session()
            session.headers.update(self.headers)
        return session

    def request(self, method, path, body=None, params=None,
                expect=(200,)):
        response = self._session().request(
            method, self.url + path, json=body, params=params, timeout=900)
        if response.status_code not in expect:
            raise PlacementError('%s %s -> %s: %s' % (
                method, path, response.status_code, response.text[:500]))
        return response

    def get(self, path, params=None, expect=(200,)):
        return self.request('GET', path, params=params, expect=expect)

    def put(self, path, body=None, expect=(200,)):
        return self.request('PUT', path, body, expect=expect)

    def post(self, path, body, expect=(200,)):
        return self.request('POST', path, body, expect=expect)

    def delete(self, path, expect=(204,)):
        return self.request('DELETE', path, expect=expect)


class Timer:
    def __enter__(self):
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.start


def run_all(pool, jobs, progress=None, label='jobs'):
    """Run callables on the pool (or inline), re-raising the first error."""
    if pool is None:
        for done, job in enumerate(jobs, 1):
            job()
            _report(progress, label, done, len(jobs))
        return
    futures = [pool.submit(job) for job in jobs]
    for done, future in enumerate(
            concurrent.futures.as_completed(futures), 1):
        future.result()
        _report(progress, label, done, len(jobs))


def _report(progress, label, done, total):
    if progress and (done == total or done % 200 == 0):
        sys.stderr.write('\r%s: %d/%d' % (label, done, total))
        if done == total:
            sys.stderr.write('\n')
        sys.stderr.flush()


def percentile(samples, fraction):
    ordered = sorted(samples)
    if not ordered:
        return float('nan')
    index = min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))
    return ordered[index]
