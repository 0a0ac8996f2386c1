"""The server as a process: ``python -m osc_placement.server``.

Ready when ``GET /`` answers, clean exit on SIGTERM, data kept across
restarts on the same SQLite file; on granian (the default) and on
gunicorn."""

import concurrent.futures
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import fixtures
import testtools

READY_TIMEOUT = 60


def _free_port():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


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


class TestServerProcess(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.tmp = self.useFixture(fixtures.TempDir()).path
        self.port = _free_port()
        self.base = 'http://127.0.0.1:%d' % self.port
        self.env = dict(os.environ, XDG_DATA_HOME=self.tmp,
                        OS_PLACEMENT_CONFIG_DIR=self.tmp)
        conf = os.path.join(self.tmp, 'placement.conf')
        with open(conf, 'w') as f:
            f.write('[placement_database]\nconnection = sqlite:///%s/p.db\n'
                    % self.tmp)
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

    def _restart_keeps_providers(self):
        proc = self._start()
        created = self._call('POST', '/resource_providers', {'name': 'kept'})
        self._stop(proc)
        proc = self._start()
        listed = self._call('GET', '/resource_providers')
        self._stop(proc)
        self.assertEqual([created['uuid']],
                         [p['uuid'] for p in listed['resource_providers']])
