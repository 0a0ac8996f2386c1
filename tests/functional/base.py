"""Functional tests: the real ``openstack`` shell against our server.

By default each test gets the embedded server in-process, reached through
wsgi-intercept (no socket), on a database emptied for it: SQLite, or the
PostgreSQL/MariaDB server named by OSC_PLACEMENT_TEST_DB_URL (one database
per test process, created once, tables emptied per test).

Two other modes, for CI jobs that want to test a deployed server:

* ``OSC_PLACEMENT_FUNCTIONAL_SERVER=process`` starts
  ``python -m osc_placement.server`` on an ephemeral loopback port, once per
  test process;
* ``OSC_PLACEMENT_FUNCTIONAL_URL=http://host:port`` uses a server that is
  already running (it must accept the token ``admin``).

In those modes the database is shared between tests, which is why every
test names its providers, classes and traits uniquely.
"""

import io
import json
import os
import shlex
import subprocess
import sys
import time
import urllib.request
import uuid

import fixtures
from osc_lib import clientmanager
from openstackclient import shell as osc_shell
import testtools
from wsgi_intercept import interceptor

URL_ENV = 'OSC_PLACEMENT_FUNCTIONAL_URL'
MODE_ENV = 'OSC_PLACEMENT_FUNCTIONAL_SERVER'
_process = {'url': None, 'popen': None}


class CommandFailed(Exception):
    def __init__(self, argv, result):
        super().__init__('openstack %s exited %s\nstdout: %s\nstderr: %s' % (
            ' '.join(argv), result.code, result.stdout, result.stderr))
        self.result = result


class Result:
    def __init__(self, code, stdout, stderr):
        self.code, self.stdout, self.stderr = code, stdout, stderr


def _in_process_app():
    # Imported here so a client-only run (external URL) needs no server.
    from osc_placement.server import app as app_mod
    from osc_placement.server import conf as conf_mod
    from tests.server import fixtures as server_fixtures

    db = server_fixtures.database()
    server_fixtures.reset_database(db)
    conf = conf_mod.make_conf(server_fixtures._state['url'],
                              sync_on_startup=False,
                              enforce_new_defaults=False)
    return app_mod.make_app(conf, db=db)


def _free_port():
    import socket
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def _process_url():
    """Start one server process for this test process, on first use."""
    if _process['url'] is None:
        import atexit
        import tempfile
        port = _free_port()
        state = tempfile.mkdtemp(prefix='ocp-functional-')
        connection = os.environ.get('OSC_PLACEMENT_TEST_DB_URL') or (
            'sqlite:///%s/placement.sqlite' % state)
        popen = subprocess.Popen(
            [sys.executable, '-m', 'osc_placement.server',
             '--database-connection', connection, '--host', '127.0.0.1',
             '--port', str(port)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        atexit.register(popen.terminate)
        url = 'http://127.0.0.1:%d' % port
        _wait_until_ready(url, popen)
        _process.update(url=url, popen=popen)
    return _process['url']


def _wait_until_ready(url, popen, seconds=30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if popen.poll() is not None:
            raise RuntimeError('server exited with %s' % popen.returncode)
        try:
            urllib.request.urlopen(url + '/', timeout=1).read()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError('server at %s did not answer' % url)


def forget_cached_placement_client():
    """openstackclient caches each plugin's client on the ClientManager
    class; a second shell in one process would reuse the first endpoint."""
    cache = clientmanager.ClientManager.__dict__.get('placement')
    if cache is not None:
        cache._handle = None


class PlacementFixture(fixtures.Fixture):
    """A Placement endpoint for one test, in whichever mode is configured."""

    def _setUp(self):
        external = os.environ.get(URL_ENV)
        if external:
            self.endpoint = external.rstrip('/')
        elif os.environ.get(MODE_ENV) == 'process':
            self.endpoint = _process_url()
        else:
            host = 'placement-%s.test' % uuid.uuid4().hex[:12]
            self.endpoint = 'http://%s' % host
            app = _in_process_app()
            self.useFixture(_Intercept(app, host))


class _Intercept(fixtures.Fixture):
    def __init__(self, app, host):
        self.app, self.host = app, host

    def _setUp(self):
        intercept = interceptor.RequestsInterceptor(lambda: self.app,
                                                    host=self.host, port=80)
        intercept.__enter__()
        self.addCleanup(intercept.__exit__, None, None, None)


class FunctionalTestCase(testtools.TestCase):
    """Runs ``openstack`` in-process at ``VERSION`` (None: negotiate)."""

    VERSION = None

    def setUp(self):
        super().setUp()
        self.placement = self.useFixture(PlacementFixture())
        for name in ('OS_PLACEMENT_API_VERSION', 'OS_CLOUD', 'OS_AUTH_URL',
                     'OS_AUTH_TYPE', 'OS_TOKEN', 'OS_ENDPOINT'):
            self.useFixture(fixtures.EnvironmentVariable(name))

    def run_openstack(self, argv, version=None):
        """Run the shell; return a Result without judging it."""
        base = ['--os-auth-type', 'admin_token', '--os-token', 'admin',
                '--os-endpoint', self.placement.endpoint]
        chosen = version or self.VERSION
        if chosen:
            base += ['--os-placement-api-version', chosen]
        forget_cached_placement_client()
        out, err = io.StringIO(), io.StringIO()
        with fixtures.MonkeyPatch('sys.stdout', out), \
                fixtures.MonkeyPatch('sys.stderr', err):
            try:
                code = osc_shell.OpenStackShell().run(base + argv)
            except SystemExit as exit_:
                code = exit_.code
        forget_cached_placement_client()
        return Result(code, out.getvalue(), err.getvalue())

    def openstack(self, command, may_fail=False, use_json=False,
                  version=None):
        """Run ``openstack <command>``; parse JSON output when asked.

        Fails the test if the command fails, unless ``may_fail``; then the
        Result is returned so the test can check the text and exit code.
        """
        argv = shlex.split(command) if isinstance(command, str) else command
        if use_json:
            argv = argv + ['-f', 'json']
        result = self.run_openstack(argv, version)
        if may_fail:
            return result
        if result.code != 0:
            raise CommandFailed(argv, result)
        return json.loads(result.stdout) if use_json else result.stdout

    def assertCommandFails(self, command, message, code=1, version=None):
        """The command fails with ``message`` in stderr and exit ``code``."""
        result = self.openstack(command, may_fail=True, version=version)
        self.assertEqual(code, result.code, result.stderr)
        self.assertIn(message, result.stderr)
        return result

    @staticmethod
    def unique(prefix):
        return '%s-%s' % (prefix, uuid.uuid4().hex[:8])

    @staticmethod
    def unique_custom(prefix='CUSTOM_FT'):
        return '%s_%s' % (prefix, uuid.uuid4().hex[:8].upper())
