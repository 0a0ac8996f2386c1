# SPDX-License-Identifier: Apache-2.0
"""``/healthcheck`` (server/health.py): oslo.middleware's healthcheck with
the database backend, in process for what it answers and to whom, and
with a real server process for how soon it answers when the database is
gone: 503 within a second, whether the database refuses connections or
stops answering. On the database the suite runs on (SQLite, or the
server OSC_PLACEMENT_TEST_DB_URL names; a TCP relay in this process
stands between the server and PostgreSQL or MariaDB)."""

import concurrent.futures
import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import fixtures
import sqlalchemy as sa
import testtools
import webob

from benchmarks import local_server
from osc_placement.server import app as app_mod
from osc_placement.server import conf as conf_mod
from osc_placement.server.db import engine as db_engine
from osc_placement.server import health
from tests.server import fixtures as server_fixtures
from tests.server import tcp_relay

# What the issue asks: a probe learns within a second.
WITHIN = 1.0
READY_TIMEOUT = 60
# A healed database is seen again within this (the held probe finishes
# first, then the next one runs).
RECOVERY_TIMEOUT = 10


class TestDeadlineProbe(testtools.TestCase):
    """One run of the probe at a time, whatever the number of checks, and
    each check answered by the deadline of the run it waits for."""

    TIMEOUT = 0.2

    def test_a_hung_run_is_waited_for_once_then_reported_at_once(self):
        release = threading.Event()
        runs = []

        def hangs():
            runs.append(time.monotonic())
            release.wait(30)
        probe = health.DeadlineProbe(hangs, self.TIMEOUT)
        self.addCleanup(release.set)
        started = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            outcomes = list(pool.map(lambda _: probe.check(), range(8)))
        waited = time.monotonic() - started
        self.assertEqual([False] * 8, [o.available for o in outcomes])
        self.assertEqual(1, len(runs))
        self.assertGreaterEqual(waited, self.TIMEOUT)
        self.assertLess(waited, self.TIMEOUT + 0.5)
        # Past its deadline the run still hangs: a check says so at once
        # and starts no other run.
        started = time.monotonic()
        outcome = probe.check()
        self.assertLess(time.monotonic() - started, 0.1)
        self.assertFalse(outcome.available)
        self.assertIn('no answer in', outcome.details)
        self.assertEqual(1, len(runs))
        # Once it returns, the next check runs the probe again.
        release.set()
        deadline = time.monotonic() + 5
        while not probe.check().available:
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.01)
        self.assertEqual(2, len(runs))

    def test_an_error_is_the_details(self):
        def refused():
            raise sa.exc.OperationalError(
                'SELECT 1', {}, ConnectionRefusedError(
                    'connection to server at "10.0.0.5", port 5432 '
                    'failed:\n\tConnection refused'))
        outcome = health.DeadlineProbe(refused, self.TIMEOUT).check()
        self.assertFalse(outcome.available)
        self.assertEqual('ConnectionRefusedError: connection to server at '
                         '"10.0.0.5", port 5432 failed: Connection refused',
                         outcome.details)


def _missing_sqlite_database(test):
    """A Database on a SQLite file that is not there (the engine does not
    create it until something connects, which the probe never does)."""
    tmp = test.useFixture(fixtures.TempDir()).path
    path = os.path.join(tmp, 'gone.sqlite')
    return db_engine.Database(db_engine.create_engine('sqlite:///' + path))


def _get(app, path='/healthcheck', method='GET', **headers):
    req = webob.Request.blank(path, method=method, headers=headers)
    req.remote_addr = '127.0.0.1'
    return req.get_response(app)


class TestHealthcheckApp(testtools.TestCase):
    """In process: what /healthcheck answers, and who gets past it."""

    def app(self, db=None, auth_strategy='noauth2', **healthcheck):
        conf = conf_mod.make_conf(server_fixtures.database().engine.url
                                  .render_as_string(hide_password=False),
                                  auth_strategy=auth_strategy,
                                  sync_on_startup=False)
        if auth_strategy == 'keystone':
            conf.set_override('www_authenticate_uri',
                              'http://keystone.example/identity',
                              'keystone_authtoken')
        for name, value in healthcheck.items():
            conf.set_override(name, value, 'healthcheck')
        return app_mod.make_app(conf, db=db or server_fixtures.database())

    def test_no_token_needed_under_either_strategy(self):
        for strategy in ('keystone', 'noauth2'):
            app = self.app(auth_strategy=strategy)
            resp = _get(app)
            self.assertEqual(200, resp.status_int, strategy)
            self.assertEqual(b'OK', resp.body)
            self.assertEqual('text/plain', resp.content_type)
            self.assertIn('x-openstack-request-id', resp.headers)
            self.assertEqual(204, _get(app, method='HEAD').status_int)
            # The API itself still wants one.
            self.assertEqual(401, _get(app, '/resource_providers')
                             .status_int, strategy)

    def test_database_gone_answers_503_with_a_short_body(self):
        app = self.app(db=_missing_sqlite_database(self))
        resp = _get(app)
        self.assertEqual(503, resp.status_int)
        self.assertEqual(b'DATABASE UNAVAILABLE', resp.body)
        resp = _get(app, Accept='application/json')
        self.assertEqual({'detailed': False,
                          'reasons': ['DATABASE UNAVAILABLE']}, resp.json)
        self.assertEqual(503, _get(app, method='HEAD').status_int)

    def test_detailed_says_which_backend_and_why(self):
        app = self.app(db=_missing_sqlite_database(self), detailed=True)
        resp = _get(app, Accept='application/json')
        self.assertEqual(503, resp.status_int)
        self.assertEqual([{'class': 'DatabaseResult',
                           'reason': 'DATABASE UNAVAILABLE',
                           'details': 'OperationalError: unable to open '
                                      'database file'}],
                         resp.json['reasons'])
        resp = _get(self.app(detailed=True), Accept='application/json')
        self.assertEqual(200, resp.status_int)
        self.assertRegex(resp.json['reasons'][0]['details'],
                         r'^answered in [0-9.]+ ms$')

    def test_backends_option_is_oslo_middlewares(self):
        # An operator who lists other backends drops ours.
        app = self.app(db=_missing_sqlite_database(self), backends=[])
        self.assertEqual(200, _get(app).status_int)

    def test_ignored_requests_go_on_to_the_api(self):
        app = self.app(allowed_source_ranges=['10.0.0.0/8'])
        self.assertEqual(401, _get(app).status_int)
        app = self.app(allowed_source_ranges=['127.0.0.0/8'])
        self.assertEqual(200, _get(app).status_int)
        app = self.app(ignore_proxied_requests=True)
        self.assertEqual(200, _get(app).status_int)
        self.assertEqual(401, _get(app, **{
            'X-Forwarded-For': '192.0.2.1'}).status_int)


class _DatabaseBehind:
    """The suite's database for a server process: its URL, reached
    through a TCP relay (PostgreSQL, MariaDB), or a copy of its file
    (SQLite)."""

    def __init__(self, test):
        db = server_fixtures.database()
        url = db.engine.url
        if url.get_backend_name() == 'sqlite':
            self.relay = None
            self.path = os.path.join(
                test.useFixture(fixtures.TempDir()).path, 'copy.sqlite')
            _copy_sqlite(url.database, self.path)
            self.url = 'sqlite:///' + self.path
        else:
            self.relay = tcp_relay.TcpRelay(url.host or '127.0.0.1',
                                            url.port or _PORTS[
                                                url.get_backend_name()])
            test.addCleanup(self.relay.drop)
            self.url = url.set(host='127.0.0.1', port=self.relay.port
                               ).render_as_string(hide_password=False)


_PORTS = {'postgresql': 5432, 'mysql': 3306}


def _copy_sqlite(source, destination):
    with sqlite3.connect(source) as src, sqlite3.connect(destination) as dst:
        src.backup(dst)
    dst.close()
    src.close()


class TestHealthcheckProcess(testtools.TestCase):
    """placement-server (granian, one worker) on the suite's database:
    200 while it answers, 503 within a second once it refuses
    connections or stops answering, 200 again once it is back."""

    def setUp(self):
        super().setUp()
        self.tmp = self.useFixture(fixtures.TempDir()).path
        self.database = _DatabaseBehind(self)
        self.base = self._start()

    def _start(self):
        port = local_server.free_port()
        conf = os.path.join(self.tmp, 'placement.conf')
        with open(conf, 'w') as f:
            f.write('[api]\nauth_strategy = noauth2\n'
                    '[placement_database]\nconnection = %s\n'
                    '[healthcheck]\ndetailed = true\n' % self.database.url)
        proc = subprocess.Popen(
            [sys.executable, '-m', 'osc_placement.server', '--config-file',
             conf, '--host', '127.0.0.1', '--port', str(port)],
            env=dict(os.environ, HOME=self.tmp, XDG_DATA_HOME=self.tmp),
            cwd=self.tmp, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        self.addCleanup(_kill, proc)
        base = 'http://127.0.0.1:%d' % port
        local_server.wait_until_ready(proc, base, '/', READY_TIMEOUT)
        return base

    def check(self):
        """(status, seconds taken, the backend's details)."""
        req = urllib.request.Request(self.base + '/healthcheck',
                                     headers={'Accept': 'application/json'})
        started = time.monotonic()
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                status, body = resp.status, resp.read()
        except urllib.error.HTTPError as err:
            status, body = err.code, err.read()
        taken = time.monotonic() - started
        return status, taken, json.loads(body)['reasons'][0]['details']

    def assert_unavailable_in_time(self, why):
        status, taken, details = self.check()
        self.assertEqual(503, status, details)
        self.assertLess(taken, WITHIN, details)
        self.assertRegex(details, why)

    def assert_back(self):
        deadline = time.monotonic() + RECOVERY_TIMEOUT
        while True:
            status, taken, details = self.check()
            if status == 200:
                return
            self.assertLess(time.monotonic(), deadline, details)
            time.sleep(0.1)

    def test_follows_the_database(self):
        status, taken, details = self.check()
        self.assertEqual(200, status, details)
        if self.database.relay is None:
            self._sqlite_file_gone()
        else:
            self._server_unreachable_then_stopped(self.database.relay)

    def _server_unreachable_then_stopped(self, relay):
        relay.stall()
        # The pooled connection's SELECT 1 hangs: answered at the
        # deadline; the next check finds that run still hanging and
        # answers at once.
        self.assert_unavailable_in_time('^no answer in')
        self.assert_unavailable_in_time('^no answer in')
        relay.resume()
        self.assert_back()
        relay.cut()
        # The pooled connection fails at once; the next probe's connect
        # hangs.
        self.assert_unavailable_in_time('(?i)closed|lost|gone')
        self.assert_unavailable_in_time('^no answer in')
        relay.resume()
        self.assert_back()
        relay.drop()
        self.assert_unavailable_in_time('(?i)refused|closed|lost|gone')
        self.assert_unavailable_in_time('(?i)refused')

    def _sqlite_file_gone(self):
        """SQLite's "dropped": the file removed (moved aside, then back).
        The worker's pooled connections would go on reading the file
        they have open; the probe opens it afresh. A local file has no
        "unreachable": it answers or fails at once. (Nor is "unreadable"
        shown here: the tests run as root, whom permissions do not
        stop.)"""
        path = self.database.path
        os.rename(path, path + '.aside')
        self.assert_unavailable_in_time('unable to open database file')
        self.assert_unavailable_in_time('unable to open database file')
        os.rename(path + '.aside', path)
        self.assert_back()


def _kill(proc):
    if proc.poll() is None:
        proc.kill()
        proc.wait()
