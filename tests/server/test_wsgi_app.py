# SPDX-License-Identifier: Apache-2.0
"""The WSGI module (server/wsgi_app.py) under gunicorn and uWSGI, set up
from ``$OS_PLACEMENT_CONFIG_DIR/placement.conf`` as upstream's
``placement.wsgi.api``; and oslo.log's lines as an operator reads them:
every line carries the request id and a valid inbound global request id,
one INFO access line per request. The same for ``placement-server``."""

import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid

import fixtures
import testtools

from benchmarks import local_server
from tests.server import test_process

BIN = os.path.dirname(sys.executable)
READY_TIMEOUT = 60
REQUEST_ID = re.compile(r'^req-[0-9a-f-]{36}$')


class _Served(testtools.TestCase):
    """A server process on a fresh database with a log file."""

    def setUp(self):
        super().setUp()
        self.tmp = self.useFixture(fixtures.TempDir()).path
        self.port = local_server.free_port()
        self.base = 'http://127.0.0.1:%d' % self.port
        self.log_file = os.path.join(self.tmp, 'placement.log')
        self.connection = test_process._database_url(self.tmp)

    def write_conf(self, extra=''):
        with open(os.path.join(self.tmp, 'placement.conf'), 'w') as f:
            f.write('[DEFAULT]\nlog_file = %s\n'
                    '[placement_database]\nconnection = %s\n%s'
                    % (self.log_file, self.connection, extra))

    def sync(self):
        subprocess.run(
            [os.path.join(BIN, 'placement-manage'), '--config-file',
             os.path.join(self.tmp, 'placement.conf'), 'db', 'sync'],
            check=True, capture_output=True)

    def start(self, argv, env=None):
        proc = subprocess.Popen(
            argv, env=dict(os.environ, OS_PLACEMENT_CONFIG_DIR=self.tmp,
                           HOME=self.tmp, XDG_DATA_HOME=self.tmp,
                           **(env or {})),
            cwd=self.tmp, stderr=subprocess.STDOUT,
            stdout=open(os.path.join(self.tmp, 'output'), 'w'))
        self.addCleanup(self._stop, proc)
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(self.base + '/', timeout=2).read()
                return proc
            except OSError:
                if proc.poll() is not None:
                    self.fail('server exited early:\n' + self.output())
                time.sleep(0.2)
        self.fail('server not ready in %ds' % READY_TIMEOUT)

    @staticmethod
    def _stop(proc):
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def output(self):
        """What the process wrote (oslo.log writes to stdout when no
        log file is configured)."""
        with open(os.path.join(self.tmp, 'output')) as f:
            return f.read()

    def call(self, path, token='admin', global_id=None):
        headers = {'openstack-api-version': 'placement 1.39'}
        if token:
            headers['x-auth-token'] = token
        if global_id:
            headers['x-openstack-request-id'] = global_id
        req = urllib.request.Request(self.base + path, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                return resp.status, resp.headers['x-openstack-request-id']
        except urllib.error.HTTPError as err:
            return err.code, err.headers['x-openstack-request-id']

    def log_lines(self, path):
        # A line is written when its request ends; allow a moment.
        deadline = time.monotonic() + 5
        while True:
            with open(path) as f:
                lines = f.read().splitlines()
            if lines or time.monotonic() > deadline:
                return lines
            time.sleep(0.1)

    def check_healthcheck(self):
        """/healthcheck answers without a token, the database answering."""
        status, request_id = self.call('/healthcheck', token=None)
        self.assertEqual(200, status)
        self.assertRegex(request_id, REQUEST_ID)

    def check_request_ids_logged(self, log_path):
        """Request and global request ids in the access line of each
        request; an invalid global id is dropped."""
        global_id = 'req-%s' % uuid.uuid4()
        status, request_id = self.call('/resource_providers',
                                       global_id=global_id)
        self.assertEqual(200, status)
        self.assertRegex(request_id, REQUEST_ID)
        self.assertNotEqual(global_id, request_id)
        status, other_id = self.call('/resource_providers',
                                     global_id='pony')
        self.assertEqual(200, status)
        # Each line is written once its response has been sent, by the
        # worker that sent it: wait for both, whichever worker was last.
        lines = []
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not all(
                any(rid in line for line in lines)
                for rid in (request_id, other_id)):
            lines = self.log_lines(log_path)
            time.sleep(0.1)
        mine = [line for line in lines if request_id in line]
        self.assertEqual(1, len(mine), lines)
        self.assertIn('INFO osc_placement.server.app [%s %s admin admin'
                      % (global_id, request_id), mine[0])
        self.assertIn('"GET /resource_providers" status: 200', mine[0])
        # Upstream's fields, then the time taken and the client.
        self.assertRegex(mine[0], r'microversion: 1\.39 time: \d+\.\d{6} '
                         r'agent: "Python-urllib/[0-9.]+"$')
        other = [line for line in lines if other_id in line]
        self.assertEqual(1, len(other), lines)
        self.assertIn('[None %s admin admin' % other_id, other[0])
        self.assertNotIn('pony', '\n'.join(lines))


class TestWSGIModule(_Served):

    def test_gunicorn(self):
        self.write_conf('[api]\nauth_strategy = noauth2\n')
        self.sync()
        self.start([os.path.join(BIN, 'gunicorn'), '--bind',
                    '127.0.0.1:%d' % self.port, '--workers', '2',
                    'osc_placement.server.wsgi_app:application'])
        self.check_request_ids_logged(self.log_file)
        self.check_healthcheck()

    def _uwsgi(self):
        return [os.path.join(BIN, 'uwsgi'), '--http-socket',
                '127.0.0.1:%d' % self.port, '--master', '--processes', '2',
                '--threads', '2', '--lazy-apps', '--need-app',
                '--die-on-term', '--virtualenv', sys.prefix,
                '--module', 'osc_placement.server.wsgi_app:application']

    def test_uwsgi(self):
        self.write_conf('[api]\nauth_strategy = noauth2\n')
        self.sync()
        self.start(self._uwsgi())
        self.check_request_ids_logged(self.log_file)
        self.check_healthcheck()

    def test_file_without_auth_strategy_serves_keystone(self):
        self.write_conf('[keystone_authtoken]\n'
                        'www_authenticate_uri = http://keystone.example/\n')
        self.sync()
        self.start(self._uwsgi())
        # No token: refused before keystone would be asked.
        self.assertEqual(401, self.call('/resource_providers',
                                        token=None)[0])
        self.assertEqual(200, self.call('/', token=None)[0])
        # Nor is the health check's.
        self.check_healthcheck()

    def test_without_connection_the_application_does_not_load(self):
        with open(os.path.join(self.tmp, 'placement.conf'), 'w') as f:
            f.write('[api]\nauth_strategy = noauth2\n')
        proc = subprocess.run(
            [os.path.join(BIN, 'gunicorn'), '--bind',
             '127.0.0.1:%d' % self.port,
             'osc_placement.server.wsgi_app:application'],
            env=dict(os.environ, OS_PLACEMENT_CONFIG_DIR=self.tmp),
            capture_output=True, text=True, timeout=60)
        self.assertNotEqual(0, proc.returncode)
        self.assertIn('value required for option connection in group '
                      '[placement_database]', proc.stderr)


class TestPlacementServerLogs(_Served):

    def test_quickstart_says_so_and_logs_requests(self):
        self.start([sys.executable, '-m', 'osc_placement.server',
                    '--port', str(self.port)])
        self.check_request_ids_logged(os.path.join(self.tmp, 'output'))
        self.check_healthcheck()
        self.assertIn('No placement.conf found: serving the quickstart '
                      'configuration, noauth2', self.output())

    def test_log_file_and_debug_from_the_file(self):
        self.write_conf('[DEFAULT]\ndebug = true\n'
                        '[api]\nauth_strategy = noauth2\n'
                        '[placement_database]\nsync_on_startup = true\n')
        self.start([sys.executable, '-m', 'osc_placement.server',
                    '--port', str(self.port), '--workers', '2'])
        self.check_request_ids_logged(self.log_file)
        with open(self.log_file) as f:
            text = f.read()
        self.assertIn(' DEBUG ', text)
        self.assertNotIn('quickstart', text)
