# SPDX-License-Identifier: Apache-2.0
"""A small Placement HTTP client for benchmarks: requests, threads, timing.

Only HTTP: benchmarks must be able to point at any Placement service.
Built on the standard library's http.client, one keep-alive connection
per thread: the timer should see the service, not the requests
library's own work per request on the cores the services share with it.
"""

import concurrent.futures
import http.client
import json
import sys
import threading
import time
import urllib.parse

MICROVERSION = '1.39'


class PlacementError(Exception):
    pass


class Response:
    """What the benchmarks read of an answer."""

    def __init__(self, status_code, headers, content):
        self.status_code = status_code
        self.headers = headers
        self.content = content

    @property
    def text(self):
        return self.content.decode('utf-8', 'replace')

    def json(self):
        return json.loads(self.content)


# A connection the server closed while it was idle fails on its next
# request with one of these; an idempotent request is then sent again on
# a new one (a POST may have been carried out: it is not).
_CLOSED_WHILE_IDLE = (http.client.RemoteDisconnected, BrokenPipeError,
                      ConnectionResetError)
_IDEMPOTENT = frozenset(['GET', 'PUT', 'DELETE'])


class Client:
    """Thread-safe: each thread gets its own keep-alive connection."""

    def __init__(self, url, token='admin', microversion=MICROVERSION):
        self.url = url.rstrip('/')
        parts = urllib.parse.urlsplit(self.url)
        self._connection_class = (http.client.HTTPSConnection
                                  if parts.scheme == 'https'
                                  else http.client.HTTPConnection)
        self._host, self._port = parts.hostname, parts.port
        self._prefix = parts.path
        self.headers = {'X-Auth-Token': token, 'Accept': 'application/json',
                        'OpenStack-API-Version': 'placement ' + microversion}
        self._local = threading.local()

    def _connection(self):
        """(this thread's connection, whether it served a request
        before)."""
        connection = getattr(self._local, 'connection', None)
        if connection is not None:
            return connection, True
        connection = self._local.connection = self._connection_class(
            self._host, self._port, timeout=900)
        return connection, False

    def _drop_connection(self):
        connection = self._local.__dict__.pop('connection', None)
        if connection is not None:
            connection.close()

    def request(self, method, path, body=None, params=None,
                expect=(200,)):
        target = self._prefix + path
        if params:
            target += ('&' if '?' in path else '?') + \
                urllib.parse.urlencode(params)
        headers = self.headers
        payload = None
        if body is not None:
            payload = json.dumps(body).encode()
            headers = dict(headers, **{'Content-Type': 'application/json'})
        response = self._send_on_this_thread(method, target, payload,
                                             headers)
        if response.status_code not in expect:
            raise PlacementError('%s %s -> %s: %s' % (
                method, path, response.status_code, response.text[:500]))
        return response

    def _send_on_this_thread(self, method, target, payload, headers):
        connection, reused = self._connection()
        try:
            return self._send(connection, method, target, payload, headers)
        except _CLOSED_WHILE_IDLE:
            self._drop_connection()
            if not (reused and method in _IDEMPOTENT):
                raise
        except BaseException:
            # A connection left mid-request cannot serve the next one.
            self._drop_connection()
            raise
        # Once, on a new connection.
        return self._send_on_this_thread(method, target, payload, headers)

    @staticmethod
    def _send(connection, method, target, payload, headers):
        connection.request(method, target, body=payload, headers=headers)
        answer = connection.getresponse()
        content = answer.read()
        return Response(answer.status,
                        {k.lower(): v for k, v in answer.getheaders()},
                        content)

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
