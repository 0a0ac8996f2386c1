# SPDX-License-Identifier: Apache-2.0
"""Upstream Placement 16.0.0 and our server as real processes on one
database, for the compatibility tests.

``Upstream(db_url)`` runs upstream's own ``placement-manage`` and its WSGI
application under gunicorn from the separate virtualenv that
``tools/upstream-venv.sh`` builds (upstream is never imported here, nor a
dependency of our package). ``Ours(db_url)`` does the same with our
``placement-manage`` and ``placement-server`` from the virtualenv running
the tests. ``Client`` speaks plain HTTP with the noauth2 admin token.
``new_database(test)`` gives each test a database of its own.
"""

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

import testtools
from testtools import content

from benchmarks import local_server
from benchmarks import upstream_server
from tests.server import schema_compare

UPSTREAM_VENV = upstream_server.DEFAULT_VENV
# The head of upstream 16.0.0's alembic history.
UPSTREAM_HEAD = 'a082b8bb98d0'
READY_TIMEOUT = 60
STOP_TIMEOUT = 15
API_VERSION = '1.39'
ADMIN_HEADERS = {'X-Auth-Token': 'admin', 'Accept': 'application/json'}
upstream_url = upstream_server.upstream_url
our_url = upstream_server.our_url


def new_database(test):
    """A database for this test alone: SQLite in a temporary directory, or
    a uniquely named database on the server that OSC_PLACEMENT_TEST_DB_URL
    names, dropped when the test ends. Returns our SQLAlchemy URL."""
    return our_url(test.useFixture(
        schema_compare.ScratchDatabase('compat')).url)


class CommandFailed(AssertionError):
    """A management command exited non-zero; carries its output."""


class _Service:
    """One side (upstream's or ours) on one database: a state directory
    holding placement.conf and the logs, the management command, and the
    API as a process."""

    name = None

    def __init__(self, db_url):
        self.db_url = self.driver_url(db_url)
        self.state = tempfile.mkdtemp(prefix='ocp-compat-%s-' % self.name)
        self.conf_path = upstream_server.write_conf(self.state, self.db_url)

    def set_placement_options(self, **options):
        """placement.conf written again with these ``[placement]``
        options, for the API processes started after."""
        upstream_server.write_conf(self.state, self.db_url, options)

    def driver_url(self, db_url):
        raise NotImplementedError

    def manage_command(self):
        raise NotImplementedError

    def manage(self, *args):
        """Run placement-manage with this side's configuration; return
        (exit code, stdout and stderr together)."""
        done = subprocess.run(
            self.manage_command() + ['--config-file', self.conf_path]
            + list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, env=self._env(), timeout=300)
        return done.returncode, done.stdout

    def _checked_manage(self, *args):
        code, output = self.manage(*args)
        if code != 0:
            raise CommandFailed('%s placement-manage %s exited %d:\n%s' % (
                self.name, ' '.join(args), code, output))
        return output

    def db_sync(self):
        return self._checked_manage('db', 'sync')

    def _env(self):
        # Neither side may pick up a placement.conf from the environment.
        return upstream_server.environment(self.state)

    def serve_command(self, port):
        raise NotImplementedError

    @contextlib.contextmanager
    def serve(self):
        """The API as a process on a free loopback port; yields its base
        URL and stops the process (and its workers) on the way out."""
        port = local_server.free_port()
        log_path = os.path.join(self.state, 'server-%d.log' % port)
        with open(log_path, 'w') as log:
            # A session of its own, so the stop reaches every worker.
            popen = subprocess.Popen(
                self.serve_command(port), stdout=log,
                stderr=subprocess.STDOUT, env=self._env(),
                cwd=self.state, start_new_session=True)
        base = 'http://127.0.0.1:%d' % port
        try:
            try:
                local_server.wait_until_ready(popen, base, '/',
                                              READY_TIMEOUT)
            except RuntimeError as exc:
                raise RuntimeError('%s at %s; its log ends:\n%s' % (
                    exc, base, self.log_tail(30))) from exc
            yield base
        finally:
            _stop(popen)

    def remove_state(self):
        shutil.rmtree(self.state, ignore_errors=True)

    def log_tail(self, lines=40):
        """The end of every server log of this side, for failure
        messages."""
        text = []
        for name in sorted(os.listdir(self.state)):
            if name.startswith('server-'):
                with open(os.path.join(self.state, name)) as f:
                    text.append(''.join(f.readlines()[-lines:]))
        return '\n'.join(text)


class Upstream(_Service):
    """Upstream Placement 16.0.0 from its own virtualenv."""

    name = 'upstream'

    def driver_url(self, db_url):
        return upstream_url(db_url)

    def _bin(self, name):
        return os.path.join(UPSTREAM_VENV, 'bin', name)

    def manage_command(self):
        return [self._bin('placement-manage')]

    def db_version(self):
        return self._checked_manage('db', 'version').strip().splitlines()[-1]

    def upgrade_to(self, revision):
        """Bring the schema to an older upstream revision, with upstream's
        own migrations (its placement-manage only goes to head)."""
        script = (
            'import sys\n'
            'from oslo_config import cfg\n'
            'from placement import conf, db_api\n'
            'from placement.db.sqlalchemy import migration\n'
            'config = cfg.ConfigOpts()\n'
            'conf.register_opts(config)\n'
            'config(["--config-file", sys.argv[1]], project="placement",\n'
            '       default_config_files=None)\n'
            'db_api.configure(config)\n'
            'migration.upgrade(sys.argv[2])\n')
        done = subprocess.run(
            [self._bin('python'), '-c', script, self.conf_path, revision],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env=self._env(), timeout=300)
        if done.returncode != 0:
            raise CommandFailed('upstream upgrade to %s failed:\n%s' % (
                revision, done.stdout))

    def serve_command(self, port):
        # placement.wsgi.api reads $OS_PLACEMENT_CONFIG_DIR/placement.conf.
        # One sync worker: upstream on SQLite answers concurrent writes
        # with "database is locked", and the tests keep its writers to
        # one thread anyway.
        return [self._bin('gunicorn'), '--no-control-socket',
                '-b', '127.0.0.1:%d' % port, '-w', '1', '-k', 'sync',
                '--timeout', '300', 'placement.wsgi.api:application']


class Ours(_Service):
    """Our server, from the virtualenv running the tests."""

    name = 'ours'

    def driver_url(self, db_url):
        return our_url(db_url)

    def _bin(self, name):
        return os.path.join(os.path.dirname(sys.executable), name)

    def manage_command(self):
        return [self._bin('placement-manage')]

    def db_version(self):
        return self._checked_manage('db', 'version').strip().splitlines()[-1]

    def hand_back(self):
        """``placement-server db hand-back``: our additions removed."""
        done = subprocess.run(
            [self._bin('placement-server'), '--config-file', self.conf_path,
             'db', 'hand-back'], stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, env=self._env(),
            timeout=300)
        if done.returncode:
            raise CommandFailed('placement-server db hand-back exited %d:\n'
                                '%s' % (done.returncode, done.stdout))

    def serve_command(self, port):
        return [self._bin('placement-server'), '--config-file',
                self.conf_path, '--host', '127.0.0.1', '--port', str(port)]


def _stop(popen):
    """SIGTERM to the whole session (gunicorn's master stops its workers;
    ours does the same), SIGKILL if it lingers."""
    if popen.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(popen.pid, signal.SIGTERM)
        try:
            popen.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(popen.pid, signal.SIGKILL)
            popen.wait()


class Client:
    """Plain HTTP to one API, as the admin of a noauth2 server."""

    def __init__(self, base, version=API_VERSION):
        self.base = base
        self.version = version

    def request(self, method, path, body=None, version=None, roles=None):
        """Return (status, decoded JSON body or None). ``roles`` replaces
        the admin token's roles (noauth2 reads X-Roles)."""
        headers = dict(ADMIN_HEADERS)
        if roles:
            headers['X-Roles'] = ','.join(roles)
        headers['OpenStack-API-Version'] = 'placement %s' % (
            version or self.version)
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers['Content-Type'] = 'application/json'
        req = urllib.request.Request(self.base + path, data=data,
                                     headers=headers, method=method)
        try:
            with urllib.request.urlopen(req, timeout=120) as resp:
                return resp.status, _decoded(resp.read())
        except urllib.error.HTTPError as exc:
            return exc.code, _decoded(exc.read())

    def call(self, method, path, body=None, expect=(200, 201, 204),
             version=None, roles=None):
        """A request that must succeed: its body, or AssertionError."""
        status, answer = self.request(method, path, body, version, roles)
        if status not in expect:
            raise AssertionError('%s %s%s -> %d %s' % (
                method, self.base, path, status, answer))
        return answer

    def get(self, path, version=None):
        return self.call('GET', path, version=version)


def _decoded(raw):
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode(errors='replace')


class BothSidesTestCase(testtools.TestCase):
    """A test with a database of its own, upstream's side and ours on it,
    and both sides' server logs attached when it fails."""

    log_lines = 60

    def setUp(self):
        super().setUp()
        self.db_url = new_database(self)
        self.upstream = Upstream(self.db_url)
        self.ours = Ours(self.db_url)
        for side in (self.upstream, self.ours):
            self.addCleanup(side.remove_state)
        self.addOnException(self._attach_logs)

    def _attach_logs(self, exc_info):
        for side in (self.upstream, self.ours):
            self.addDetail('%s server logs' % side.name,
                           content.text_content(side.log_tail(self.log_lines)))
