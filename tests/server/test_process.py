# SPDX-License-Identifier: Apache-2.0
"""The server as a process: ``python -m osc_placement.server``.

Ready when ``GET /`` answers, clean exit on SIGTERM, data kept across
restarts on the same database, a killed worker replaced while the others
serve; on granian (the default) and on gunicorn. SQLite, or a fresh
database on the server OSC_PLACEMENT_TEST_DB_URL names."""

import concurrent.futures
import glob
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import fixtures
from prometheus_client import parser as prometheus_parser
import testtools

from benchmarks import local_server
from osc_placement.server import http_server
from tests.server import fixtures as server_fixtures

READY_TIMEOUT = 60
# Requests cut off by a worker's death may fail this long after it.
KILL_GRACE = 1.0
# A master replaces a dead worker well within this.
RESPAWN_TIMEOUT = 10


def _children(pid):
    """Pids of the live processes whose parent is ``pid`` (from /proc)."""
    found = []
    for entry in os.listdir('/proc'):
        if entry.isdigit() and _alive(int(entry)):
            try:
                with open('/proc/%s/stat' % entry) as f:
                    fields = f.read().rsplit(')', 1)[1].split()
            except OSError:
                continue  # exited meanwhile
            if int(fields[1]) == pid:
                found.append(int(entry))
    return found


def _alive(pid):
    """Running, not exited (a zombie awaiting its reaper counts as gone)."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except OSError:
        return False


def _database_url(tmp):
    server_url = os.environ.get(server_fixtures.DB_URL_ENV)
    if not server_url:
        return 'sqlite:///%s/p.db' % tmp
    url = server_fixtures._create_server_database(server_url)
    return url.render_as_string(hide_password=False)


class _Load(threading.Thread):
    """A light, bounded stream of ``GET /resource_providers``, one at a
    time, recording when each started and whether it was answered."""

    PAUSE = 0.02
    LONGEST = 60

    def __init__(self, base):
        super().__init__(name='load', daemon=True)
        self.url = base + '/resource_providers'
        self.stopping = threading.Event()
        self.results = []  # (monotonic start, None or the failure)

    def run(self):
        deadline = time.monotonic() + self.LONGEST
        while not self.stopping.is_set() and time.monotonic() < deadline:
            started = time.monotonic()
            req = urllib.request.Request(
                self.url, headers={'x-auth-token': 'admin'})
            try:
                with urllib.request.urlopen(req, timeout=10) as resp:
                    resp.read()
                failure = None
            except OSError as exc:  # refused, reset, timed out, HTTP error
                failure = exc
            self.results.append((started, failure))
            self.stopping.wait(self.PAUSE)

    def stop(self):
        self.stopping.set()
        self.join()

    def answered(self, since=0.0):
        return sum(1 for started, failure in self.results
                   if failure is None and started >= since)

    def failed_outside(self, kills):
        """The failures of requests started away from every kill: more
        than KILL_GRACE after it, or before it by more than one request
        could take (a request in flight when its worker dies fails)."""
        def near_a_kill(started):
            return any(kill - 10 * self.PAUSE <= started <= kill + KILL_GRACE
                       for kill in kills)
        return [str(failure) for started, failure in self.results
                if failure is not None and not near_a_kill(started)]


class TestServerProcess(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.tmp = self.useFixture(fixtures.TempDir()).path
        self.port = local_server.free_port()
        self.base = 'http://127.0.0.1:%d' % self.port
        self.env = dict(os.environ, XDG_DATA_HOME=self.tmp,
                        OS_PLACEMENT_CONFIG_DIR=self.tmp, TMPDIR=self.tmp)
        conf = os.path.join(self.tmp, 'placement.conf')
        with open(conf, 'w') as f:
            # A file means upstream's defaults: keystone, no schema
            # upgrade at start.
            f.write('[api]\nauth_strategy = noauth2\n'
                    '[placement_database]\nconnection = %s\n'
                    'sync_on_startup = true\n' % _database_url(self.tmp))
        self.argv = [sys.executable, '-m', 'osc_placement.server',
                     '--config-file', conf, '--host', '127.0.0.1',
                     '--port', str(self.port)]

    def _start(self):
        proc = subprocess.Popen(self.argv, env=self.env,
                                stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        self.addCleanup(self._kill, proc)
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(self.base + '/', timeout=2)
                return proc
            except OSError:  # refused, reset, or a worker still booting
                self.assertIsNone(proc.poll(), 'server exited early')
                time.sleep(0.2)
        self.fail('server not ready in %ds' % READY_TIMEOUT)

    @staticmethod
    def _kill(proc):
        if proc.poll() is None:
            proc.kill()
            proc.wait()

    def _stop(self, proc):
        proc.send_signal(signal.SIGTERM)
        self.assertEqual(0, proc.wait(timeout=30))

    def _call(self, method, path, body=None):
        req = urllib.request.Request(
            self.base + path, method=method,
            data=json.dumps(body).encode() if body is not None else None,
            headers={'x-auth-token': 'admin', 'content-type':
                     'application/json',
                     'openstack-api-version': 'placement latest'})
        with urllib.request.urlopen(req, timeout=10) as resp:
            return json.loads(resp.read() or b'null')

    def test_restart_keeps_providers(self):
        self._restart_keeps_providers()

    def test_gunicorn_serves_too(self):
        self.argv += ['--http-server', 'gunicorn', '--workers', '2']
        self._restart_keeps_providers()

    def test_workers_threads_and_bodies(self):
        """Two workers with threads take concurrent writes with bodies and
        answer errors with upstream's JSON."""
        self.argv += ['--workers', '2', '--threads', '4']
        proc = self._start()
        names = ['rp-%d' % i for i in range(12)]
        with concurrent.futures.ThreadPoolExecutor(6) as pool:
            list(pool.map(lambda name: self._call(
                'POST', '/resource_providers', {'name': name}), names))
        listed = self._call('GET', '/resource_providers')
        with self.assertRaises(urllib.error.HTTPError) as caught:
            self._call('POST', '/resource_providers', {'name': 'rp-0'})
        self._stop(proc)
        self.assertEqual(sorted(names), sorted(
            p['name'] for p in listed['resource_providers']))
        self.assertEqual(409, caught.exception.code)
        error = json.loads(caught.exception.read())['errors'][0]
        self.assertEqual('placement.duplicate_name', error['code'])

    def test_a_second_server_on_a_taken_port_refuses_to_start(self):
        """granian listens with SO_REUSEPORT, so a second server on the
        same port (another database, perhaps) used to share it, each
        answering some requests. It must exit instead, saying why, and
        leave the first serving."""
        for server in ('granian', 'gunicorn'):
            first = self._start()
            self._call('POST', '/resource_providers', {'name': server})
            second = subprocess.run(
                self.argv + ['--http-server', server], env=self.env,
                capture_output=True, text=True, timeout=60)
            self.assertEqual(1, second.returncode)
            self.assertIn('cannot listen on 127.0.0.1:%d' % self.port,
                          second.stdout + second.stderr)
            self.assertEqual([server], [p['name'] for p in self._call(
                'GET', '/resource_providers')['resource_providers']])
            self._call('DELETE', '/resource_providers/%s' % self._call(
                'GET', '/resource_providers')['resource_providers'][0][
                    'uuid'])
            self._stop(first)

    def test_stop_while_workers_boot(self):
        """SIGTERM as soon as the first worker answers, the others maybe
        still loading the application: every worker stops, exit 0. (Such
        a worker used to swallow the signal and keep the server up; with
        four workers this caught it about one run in three.)"""
        self.argv += ['--workers', '4']
        self._stop(self._start())

    def test_workers_exit_with_a_killed_master(self):
        """A master killed outright (SIGKILL) leaves no worker serving."""
        self.argv += ['--workers', '2']
        proc = self._start()
        workers = _children(proc.pid)
        self.assertEqual(2, len(workers))
        self._kill(proc)
        deadline = time.monotonic() + 30
        while any(_alive(pid) for pid in workers):
            self.assertLess(time.monotonic(), deadline, 'workers outlive it')
            time.sleep(0.2)

    def test_granian_replaces_a_killed_worker(self):
        self._replaces_killed_workers()

    def test_granian_serves_on_after_a_crash_loop(self):
        """A replacement killed as soon as it starts trips granian's
        crash-loop guard, which ends its master; a server that had been
        serving starts again (the same process), answers again within
        seconds, and still stops on SIGTERM."""
        self.argv += ['--workers', '2']
        proc = self._start()
        first, second = self._workers(proc, 2)
        # Serving long enough not to be taken for an application that
        # cannot load.
        time.sleep(http_server.RESTART_AFTER_SECONDS + 0.5)
        os.kill(first, signal.SIGKILL)
        replacement = self._new_worker(proc, {first, second})
        os.kill(replacement, signal.SIGKILL)
        # The whole server starts again: new workers, none of the old.
        deadline = time.monotonic() + RESPAWN_TIMEOUT
        while True:
            self.assertIsNone(proc.poll(), 'the server exited')
            workers = set(_children(proc.pid))
            if len(workers) == 2 and not workers & {first, second,
                                                    replacement}:
                break
            self.assertLess(time.monotonic(), deadline, 'not started again')
            time.sleep(0.1)
        while True:
            try:
                self._call('GET', '/resource_providers')
                break
            except OSError:  # refused or reset while the workers load
                self.assertLess(time.monotonic(), deadline,
                                'not answering again')
                time.sleep(0.1)
        self._stop(proc)

    def test_gunicorn_replaces_a_killed_worker(self):
        self.argv += ['--http-server', 'gunicorn']
        self._replaces_killed_workers()

    def _replaces_killed_workers(self):
        """Under a steady load, SIGKILL one worker (as the OOM killer
        would), then the other once its replacement is up: the master
        starts a new worker each time, every request but those cut off
        answers, and SIGTERM still stops everything."""
        self.argv += ['--workers', '2']
        proc = self._start()
        first, second = self._workers(proc, 2)
        load = _Load(self.base)
        load.start()
        self.addCleanup(load.stop)
        time.sleep(0.5)
        kills = [time.monotonic()]
        os.kill(first, signal.SIGKILL)
        replacement = self._new_worker(proc, {first, second})
        # The replacement should have loaded the application before its
        # sibling dies, or nothing would answer for a moment.
        time.sleep(2)
        self._answers_again(load, kills[-1])
        kills.append(time.monotonic())
        os.kill(second, signal.SIGKILL)
        latest = self._new_worker(proc, {first, second, replacement})
        self._answers_again(load, kills[-1])
        load.stop()
        self._stop(proc)
        self.assertFalse(any(_alive(pid) for pid in (replacement, latest)))
        self.assertEqual([], load.failed_outside(kills))

    def _answers_again(self, load, kill):
        """Requests started after ``kill``'s grace are answered, within
        RESPAWN_TIMEOUT: how soon depends on the machine's load (a worker
        loading the application on a busy machine took over 2 s), that
        they are does not."""
        deadline = time.monotonic() + RESPAWN_TIMEOUT
        while load.answered(since=kill + KILL_GRACE) == 0:
            self.assertLess(time.monotonic(), deadline,
                            'nothing answered after the kill')
            time.sleep(0.1)

    def _workers(self, proc, count):
        """The master's ``count`` workers, once all are forked."""
        deadline = time.monotonic() + READY_TIMEOUT
        while len(_children(proc.pid)) < count:
            self.assertLess(time.monotonic(), deadline, 'workers missing')
            time.sleep(0.1)
        workers = _children(proc.pid)
        self.assertEqual(count, len(workers))
        return workers

    def _new_worker(self, proc, known):
        """The pid of a worker the master starts after those ``known``."""
        deadline = time.monotonic() + RESPAWN_TIMEOUT
        while True:
            self.assertIsNone(proc.poll(), 'the master exited')
            new = set(_children(proc.pid)) - known
            if new:
                return new.pop()
            self.assertLess(time.monotonic(), deadline, 'no new worker')
            time.sleep(0.05)

    def _restart_keeps_providers(self):
        proc = self._start()
        created = self._call('POST', '/resource_providers', {'name': 'kept'})
        self._stop(proc)
        proc = self._start()
        listed = self._call('GET', '/resource_providers')
        self._stop(proc)
        self.assertEqual([created['uuid']],
                         [p['uuid'] for p in listed['resource_providers']])

    def test_metrics_summed_over_workers_and_kept_after_a_kill(self):
        """GET /metrics of two granian workers: the request counters are
        the sum of both workers' files, a killed worker's counts stay
        when granian starts another, its live gauges go, and the
        master's private directory goes when it stops."""
        self.argv += ['--workers', '2']
        proc = self._start()
        first, second = self._workers(proc, 2)
        # The master makes it in the temporary directory (TMPDIR).
        [directory] = glob.glob(os.path.join(self.tmp, 'placement-metrics-*'))
        sent = self._until_both_served(directory, (first, second))
        # Each worker writes its counts within a flush interval; a
        # worker killed before that would lose them.
        self._until_served(sent)
        os.kill(first, signal.SIGKILL)
        replacement = self._new_worker(proc, {first, second})
        deadline = time.monotonic() + RESPAWN_TIMEOUT
        while True:
            try:
                self._get_providers(METRICS_REQUESTS)
                break
            except OSError:  # the replacement not listening yet
                self.assertLess(time.monotonic(), deadline)
                time.sleep(0.2)
        self._until_served(sent + METRICS_REQUESTS)
        self.assertNotIn('gauge_livesum_%d.db' % first,
                         os.listdir(directory))
        # The replacement publishes its pool once it has loaded.
        while 'gauge_livesum_%d.db' % replacement not in os.listdir(
                directory):
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.2)
        self._stop(proc)
        self.assertFalse(os.path.exists(directory))

    def _until_both_served(self, directory, workers):
        """Requests until every worker has counted some, each on a new
        connection; how many were sent. Which worker accepts a connection
        is the kernel's choice: on a busy machine one may take many in a
        row, or the other may still be loading the application."""
        deadline = time.monotonic() + RESPAWN_TIMEOUT
        sent = 0
        while True:
            self._get_providers(METRICS_REQUESTS)
            sent += METRICS_REQUESTS
            files = os.listdir(directory)
            if all('histogram_%d.db' % pid in files for pid in workers):
                return sent
            self.assertLess(time.monotonic(), deadline,
                            'a worker never served: %s' % files)

    def _until_served(self, expected):
        """Scrapes until the workers' files count ``expected`` requests
        served (the workers write theirs every metrics.FLUSH_SECONDS);
        fails if they count another number after RESPAWN_TIMEOUT."""
        deadline = time.monotonic() + RESPAWN_TIMEOUT
        while self._served() != expected and time.monotonic() < deadline:
            time.sleep(0.2)
        self.assertEqual(expected, self._served())

    def _get_providers(self, count):
        for _ in range(count):
            self._call('GET', '/resource_providers')

    def _served(self):
        """GET /resource_providers answered 200, over every worker."""
        with urllib.request.urlopen(self.base + '/metrics',
                                    timeout=10) as resp:
            text = resp.read().decode()
        return sum(
            sample.value
            for family in prometheus_parser.text_string_to_metric_families(
                text)
            for sample in family.samples
            if sample.name == 'placement_http_request_duration_seconds_count'
            and sample.labels['route'] == '/resource_providers'
            and sample.labels['status'] == '200')


# Requests counted before and after a worker's death.
METRICS_REQUESTS = 30
