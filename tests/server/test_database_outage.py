# SPDX-License-Identifier: Apache-2.0
"""A database that goes away under the server: requests that meet it are
answered 503 with ``Retry-After`` (never 500), the server serves again
as soon as the database does, and a claim sent again the way Nova sends
it ends with exactly one allocation, whether or not its first COMMIT was
applied.

A TCP relay in this process stands between the server and the suite's
PostgreSQL or MariaDB/MySQL database, and plays the outage: it resets
the open connections and refuses new ones for a few seconds (a database
restarting, or failing over to a node at the same address), after
holding the database's answers for a moment (a COMMIT that reaches the
database and is applied, whose answer never comes back).

These tests exist in the suite's PostgreSQL and MariaDB/MySQL passes
only (``load_tests``): SQLite has no connection to lose. On MariaDB/MySQL
the read-only case makes the whole shared server read-only (``SET GLOBAL
read_only``), for one write's time.

    OSC_PLACEMENT_TEST_DB_URL=postgresql+psycopg://postgres@127.0.0.1/ \\
        .venv/bin/python -m testtools.run tests.server.test_database_outage
"""

import contextlib
import json
import logging
import os
import re
import subprocess
import sys
import threading
import time
import unittest
import urllib.error
import urllib.request
import uuid

import fixtures
import sqlalchemy as sa
import testtools
from testtools import content

from benchmarks import local_server
from osc_placement.server import app as app_mod
from osc_placement.server import conf as conf_mod
from osc_placement.server.db import engine as db_engine
from osc_placement.server.db import pipeline
from osc_placement.server.db import tables
from tests.server import fixtures as server_fixtures
from tests.server import tcp_relay
from tests.server import webob_requests

# Nova claims with the allocation candidates' microversion.
MICROVERSION = '1.36'
RESOURCES = {'VCPU': 1, 'MEMORY_MB': 64}
INVENTORY = {'VCPU': {'total': 100000}, 'MEMORY_MB': {'total': 10 ** 8}}
# The server's default [placement_database] unavailable_retry_after.
RETRY_AFTER = '2'
# A COMMIT on its way to the database, however the driver sends it; not
# the BEGIN ISOLATION LEVEL READ COMMITTED psycopg opens transactions
# with.
COMMIT_SENT = re.compile(rb'COMMIT(?!TED)')
# keystoneauth's first pause before it sends a 503'd request again
# ([placement] status_code_retries in nova.conf), doubled each time;
# capped here to keep the test short.
FIRST_PAUSE = 0.5
MAX_PAUSE = 2.0
CONFLICT_TEXT = 'consumer generation conflict'
_PORTS = {'postgresql': 5432, 'mysql': 3306}


class Answer:
    """One request's answer, and when it was sent and answered."""

    def __init__(self, method, status, headers, body, sent, answered):
        self.method = method
        self.status = status
        self.headers = {k.lower(): v for k, v in headers}
        self.body = body
        self.sent = sent
        self.answered = answered

    def detail(self):
        errors = (self.body or {}).get('errors') or [{}]
        return errors[0].get('detail', '')


class ClaimFailed(Exception):
    pass


def allocation_body(provider):
    return {'allocations': {provider: {'resources': RESOURCES}},
            'project_id': 'proj', 'user_id': 'user',
            # What Nova sends for an instance it claims for the first
            # time; it sends the same again on every retry.
            'consumer_generation': None}


def claim_like_nova(send, consumer, provider, record, pause=time.sleep):
    """Claim as Nova's report client and keystoneauth do: the same
    PUT, body and consumer generation sent again after a 503; a 409 on
    the consumer's generation after a 503 means the first PUT was applied
    and its answer lost, which Nova finds out by reading the consumer's
    allocations. Returns how the claim ended: 'applied' or
    'applied earlier'."""
    path = '/allocations/%s' % consumer
    body = allocation_body(provider)
    wait = FIRST_PAUSE
    unanswered = False
    while True:
        answer = send('PUT', path, body)
        record(answer)
        if answer.status == 204:
            return 'applied'
        if answer.status == 503:
            unanswered = True
            pause(wait)
            wait = min(wait * 2, MAX_PAUSE)
            continue
        if (answer.status == 409 and unanswered
                and CONFLICT_TEXT in answer.detail()):
            if _read_allocations(send, path, record) == body['allocations']:
                return 'applied earlier'
        raise ClaimFailed('%s %s: %s %s' % (answer.method, path,
                                            answer.status, answer.body))


def _read_allocations(send, path, record):
    while True:
        answer = send('GET', path, None)
        record(answer)
        if answer.status != 503:
            break
        time.sleep(FIRST_PAUSE)
    return {rp: {'resources': entry['resources']}
            for rp, entry in (answer.body or {}).get(
                'allocations', {}).items()}


class _RelayedDatabase:
    """The suite's database, reached through a TCP relay."""

    def __init__(self, test):
        url = server_fixtures.database().engine.url
        self.relay = tcp_relay.TcpRelay(
            url.host or '127.0.0.1',
            url.port or _PORTS[url.get_backend_name()])
        test.addCleanup(self.relay.drop)
        self.url = url.set(host='127.0.0.1', port=self.relay.port
                           ).render_as_string(hide_password=False)


class OutageAssertions:

    def assert_unavailable_answer(self, answer):
        """Upstream's error document for a 503, with Retry-After."""
        self.assertEqual(503, answer.status)
        self.assertEqual(RETRY_AFTER, answer.headers.get('retry-after'))
        [error] = answer.body['errors']
        self.assertEqual(503, error['status'])
        self.assertEqual('Service Unavailable', error['title'])
        self.assertIn('database is unavailable', error['detail'])
        self.assertEqual(answer.headers['x-openstack-request-id'],
                         error['request_id'])
        self.assertEqual('placement.undefined_code', error['code'])


class TestLostCommit(OutageAssertions, testtools.TestCase):
    """In process, the connection lost during a claim's COMMIT, once
    after the database applied it and once before it got it: 503 and a
    line saying the outcome is unknown, then Nova's retry ends with the
    claim applied once."""

    def setUp(self):
        super().setUp()
        self.database = _RelayedDatabase(self)
        self.refusing = False
        engine = db_engine.create_engine(self.database.url)
        self.addCleanup(engine.dispose)
        self.engine = engine
        conf = conf_mod.make_conf(self.database.url, sync_on_startup=False)
        self.app = app_mod.make_app(conf, db=db_engine.Database(engine))
        self.log = self.useFixture(fixtures.FakeLogger(
            level=logging.WARNING, name='osc_placement'))
        self.provider = str(uuid.uuid4())
        self.assertEqual(200, self.send('POST', '/resource_providers', {
            'uuid': self.provider, 'name': self.provider}).status)
        self.assertEqual(200, self.send(
            'PUT', '/resource_providers/%s/inventories' % self.provider,
            {'resource_provider_generation': 0,
             'inventories': INVENTORY}).status)
        # The project and user made once, as in a cloud in use: the claim
        # then commits in the round trip that claims (on PostgreSQL), and
        # its COMMIT is the one lost, not that of a claim that made none.
        earlier = '/allocations/%s' % uuid.uuid4()
        self.assertEqual(204, self.send(
            'PUT', earlier, allocation_body(self.provider)).status)
        self.assertEqual(204, self.send('DELETE', earlier, None).status)

    def send(self, method, path, body):
        sent = time.monotonic()
        resp = webob_requests.request(
            self.app, method, path,
            None if body is None else json.dumps(body), MICROVERSION)
        return Answer(method, resp.status_int, resp.headerlist,
                      resp.json if resp.body else None, sent,
                      time.monotonic())

    def lose_next_commit(self, applied):
        """The next COMMIT's connection is reset, after the database
        applied it (its answer held, then the connection reset) or
        before the COMMIT reached it; new connections are refused until
        the client pauses before its retry."""
        relay = self.database.relay

        def refuse():
            self.refusing = True
            relay.refuse()

        def on_commit():
            if not applied:
                refuse()
                return
            relay.hold_replies()
            threading.Timer(0.3, refuse).start()
        # Watched on the wire: a scheduler's claim on PostgreSQL sends its
        # COMMIT with its last statement, not through SQLAlchemy.
        relay.when_sent(COMMIT_SENT, on_commit)

    def database_back(self, seconds):
        if self.refusing:
            self.refusing = False
            self.database.relay.accept_again()

    def claim(self):
        answers = []
        consumer = str(uuid.uuid4())
        ended = claim_like_nova(self.send, consumer, self.provider,
                                answers.append, pause=self.database_back)
        self.addDetail('answers', content.text_content('\n'.join(
            '%s %s %s' % (a.method, a.status, a.body) for a in answers)))
        return consumer, ended, answers

    def usage(self):
        answer = self.send('GET', '/resource_providers/%s/usages'
                           % self.provider, None)
        self.assertEqual(200, answer.status)
        return answer.body['usages']

    def assert_outcome_unknown_logged(self, consumer, answer):
        lines = [line for line in self.log.output.splitlines()
                 if line.startswith('Outcome unknown')]
        self.assertEqual(1, len(lines), self.log.output)
        self.assertIn(consumer, lines[0])
        self.assertIn(answer.headers['x-openstack-request-id'], lines[0])

    def test_commit_applied_answer_lost(self):
        self.lose_next_commit(applied=True)
        consumer, ended, answers = self.claim()
        self.assertEqual([503, 409, 200], [a.status for a in answers])
        self.assert_unavailable_answer(answers[0])
        self.assertIn(CONFLICT_TEXT, answers[1].detail())
        self.assertEqual('applied earlier', ended)
        self.assert_outcome_unknown_logged(consumer, answers[0])
        self.assertEqual(RESOURCES, self.usage())

    def test_commit_never_reached_the_database(self):
        self.lose_next_commit(applied=False)
        consumer, ended, answers = self.claim()
        self.assertEqual([503, 204], [a.status for a in answers])
        self.assert_unavailable_answer(answers[0])
        self.assertEqual('applied', ended)
        self.assert_outcome_unknown_logged(consumer, answers[0])
        self.assertEqual(RESOURCES, self.usage())


class _OwnEngineCase(testtools.TestCase):
    """On an engine of its own: the tests invalidate its pool."""

    def setUp(self):
        super().setUp()
        engine = db_engine.create_engine(
            server_fixtures.database().engine.url)
        self.addCleanup(engine.dispose)
        self.db = db_engine.Database(engine)


class TestClassification(_OwnEngineCase):
    """Which real errors of the database are 503s: a connection the
    database ends (an administrator's kill, a shutdown) is, a faulty
    statement is not; and the pool recovers from the first."""

    def failure(self, statement):
        try:
            with self.db.read() as conn:
                conn.exec_driver_sql(statement)
        except Exception as exc:
            return exc
        self.fail('%s did not fail' % statement)

    def test_a_faulty_statement_is_not_unavailable(self):
        exc = self.failure('SELECT no_such_column FROM resource_classes')
        self.assertIsInstance(exc, sa.exc.DBAPIError)
        self.assertFalse(db_engine.is_unavailable(exc))

    def test_a_connection_the_database_ended_is_unavailable(self):
        postgresql = self.db.engine.dialect.name == 'postgresql'
        with self.db.read() as conn:
            backend = conn.exec_driver_sql(
                'SELECT pg_backend_pid()' if postgresql
                else 'SELECT CONNECTION_ID()').scalar()
        with server_fixtures.database().read() as conn:
            conn.exec_driver_sql(
                'SELECT pg_terminate_backend(%d)' % backend if postgresql
                else 'KILL %d' % backend)
        exc = self.failure('SELECT 1')
        self.assertTrue(db_engine.is_unavailable(exc), repr(exc))
        # The next request gets a new connection.
        with self.db.read() as conn:
            self.assertEqual(1, conn.exec_driver_sql('SELECT 1').scalar())

    def test_a_connection_refused_for_its_database_is_unavailable(self):
        # The same on both databases: psycopg tells no refusal from
        # another (no SQLSTATE at connect), so MariaDB's codes follow.
        url = self.db.engine.url.set(database='no_such_database')
        engine = db_engine.create_engine(url)
        self.addCleanup(engine.dispose)
        try:
            with db_engine.Database(engine).read() as conn:
                conn.exec_driver_sql('SELECT 1')
        except Exception as exc:
            self.assertTrue(db_engine.is_unavailable(exc), repr(exc))
        else:
            self.fail('connected to a database that does not exist')


class TestPipelineOnPostgreSQL(_OwnEngineCase):
    """Statements sent through psycopg itself (db/pipeline.py, PostgreSQL
    only) meet a lost connection as SQLAlchemy's own do."""

    def test_a_lost_connection_in_a_pipeline_renews_the_pool(self):
        backends = self.pooled_backends(2)
        with server_fixtures.database().read() as conn:
            for backend in backends:
                conn.exec_driver_sql('SELECT pg_terminate_backend(%d)'
                                     % backend)
        try:
            with self.db.read() as conn:
                pipeline.run(conn, [('SELECT 1', None)])
        except Exception as exc:
            self.assertTrue(db_engine.is_unavailable(exc), repr(exc))
        else:
            self.fail('a statement on a terminated connection succeeded')
        # The other pooled connection, ended too, is not handed out.
        with self.db.read() as conn:
            self.assertEqual(1, conn.exec_driver_sql('SELECT 1').scalar())

    def pooled_backends(self, count):
        """The backend ids of ``count`` connections, all back in the
        pool, in use a moment ago (no idle ping will check them)."""
        with contextlib.ExitStack() as stack:
            conns = [stack.enter_context(self.db.read())
                     for _ in range(count)]
            return [conn.exec_driver_sql('SELECT pg_backend_pid()').scalar()
                    for conn in conns]


class _ReadOnlyCase(OutageAssertions, testtools.TestCase):
    """A write that reaches a database gone read-only under the app (a
    standby or replica that took the primary's place) is a 503, whose
    connection is discarded."""

    def provider(self):
        """A new provider with inventory, written as the suite's user."""
        app = _app(server_fixtures.database())
        provider = str(uuid.uuid4())
        self.assertEqual(200, webob_requests.request(
            app, 'POST', '/resource_providers',
            json.dumps({'uuid': provider, 'name': provider}),
            MICROVERSION).status_int)
        self.assertEqual(200, webob_requests.request(
            app, 'PUT', '/resource_providers/%s/inventories' % provider,
            json.dumps({'resource_provider_generation': 0,
                        'inventories': INVENTORY}), MICROVERSION).status_int)
        return provider

    def app_on(self, url, on_connect=None):
        """An app on an engine of its own for ``url``, ``self.engine``;
        ``self.connects`` counts the connections it opens."""
        self.engine = db_engine.create_engine(url)
        self.addCleanup(self.engine.dispose)
        if on_connect is not None:
            sa.event.listen(self.engine, 'connect', on_connect)
        self.connects = []
        sa.event.listen(self.engine, 'connect',
                        lambda *args: self.connects.append(1))
        return _app(db_engine.Database(self.engine))

    def put_allocation(self, app, provider):
        return webob_requests.request(
            app, 'PUT', '/allocations/%s' % uuid.uuid4(),
            json.dumps(allocation_body(provider)), MICROVERSION)

    def assert_write_refused(self, app, provider, why, read_only=None):
        """A claim sent while ``read_only`` holds is answered 503, the log
        says ``why``, and its connection, the app's first, is discarded:
        the next request opens another."""
        log = self.useFixture(fixtures.FakeLogger(
            level=logging.WARNING, name='osc_placement'))
        with read_only or contextlib.nullcontext():
            resp = self.put_allocation(app, provider)
        self.assert_unavailable_answer(Answer(
            'PUT', resp.status_int, resp.headerlist, resp.json, 0, 0))
        self.assertIn(why, log.output)
        # Its connection was discarded: the next request opens another.
        self.assertEqual(1, len(self.connects))
        self.assertEqual(200, webob_requests.request(
            app, 'GET', '/resource_providers/%s' % provider,
            None, MICROVERSION).status_int)
        self.assertEqual(2, len(self.connects))


def _app(db):
    return app_mod.make_app(
        conf_mod.make_conf(db.engine.url.render_as_string(
            hide_password=False), sync_on_startup=False), db=db)


class TestReadOnlyPostgreSQL(_ReadOnlyCase):
    """Its connections' sessions are read-only, as a standby's are."""

    def test_a_write_refused_read_only_is_unavailable(self):
        provider = self.provider()
        app = self.app_on(server_fixtures.database().engine.url,
                          on_connect=_read_only_session)
        self.assert_write_refused(app, provider, 'read-only transaction')


def _read_only_session(dbapi_conn, record):
    with dbapi_conn.cursor() as cursor:
        cursor.execute('SET SESSION CHARACTERISTICS AS TRANSACTION '
                       'READ ONLY')
    dbapi_conn.commit()


class TestReadOnlyMariaDB(_ReadOnlyCase):
    """The server is made read-only (SET GLOBAL read_only), as a Galera
    node or replica is in a failover, around one write only: the server
    is shared. read_only binds no client with the privilege to bypass it
    (READ_ONLY ADMIN, or SUPER on MySQL), such as the suite's root, so
    the app connects as a user of its own."""

    def test_a_write_refused_read_only_is_unavailable(self):
        provider = self.provider()
        app = self.app_on(self.own_user_url())
        errors = []
        sa.event.listen(self.engine, 'handle_error', lambda context:
                        errors.append(context.original_exception))
        # Its grants suffice: the refusal below is read_only's.
        self.assertEqual(204, self.put_allocation(app, provider).status_int)
        self.assert_write_refused(app, provider, '--read-only option',
                                  read_only=self.server_read_only())
        # ER_OPTION_PREVENTS_STATEMENT, from the driver.
        self.assertEqual([1290], [exc.args[0] for exc in errors])

    def own_user_url(self):
        """The suite's database as a new user who may read and write its
        tables and nothing more; dropped at cleanup."""
        url = server_fixtures.database().engine.url
        user = {'user': 'osc_read_only_%s' % uuid.uuid4().hex[:12],
                'host': '%'}
        password = uuid.uuid4().hex
        self.addCleanup(_as_root, 'DROP USER IF EXISTS :user@:host', user)
        _as_root('CREATE USER :user@:host IDENTIFIED BY :password',
                 dict(user, password=password))
        _as_root('GRANT SELECT, INSERT, UPDATE, DELETE ON `%s`.* TO '
                 ':user@:host' % url.database, user)
        return url.set(username=user['user'], password=password)

    @contextlib.contextmanager
    def server_read_only(self):
        """The whole server read-only for the block's time only."""
        self.addCleanup(_as_root, 'SET GLOBAL read_only = OFF')
        _as_root('SET GLOBAL read_only = ON')
        try:
            yield
        finally:
            _as_root('SET GLOBAL read_only = OFF')


def _as_root(statement, params=None):
    """Run ``statement`` as the suite's own user, outside a transaction."""
    with server_fixtures.database().engine.connect() as conn:
        conn.execution_options(isolation_level='AUTOCOMMIT')
        conn.execute(sa.text(statement), params or {})


class TestOutageUnderWrites(OutageAssertions, testtools.TestCase):
    """placement-server (one worker) under concurrent Nova-style claims
    while the database restarts: only 503s while it is away, the same
    server process serving again once it is back, every claim started
    afterwards answered 204 at once, and every claim, retried or not,
    holding exactly one allocation."""

    WRITERS = 4
    # Between one writer's claims, to keep the machine's CPU for others.
    THINK = 0.02
    BEFORE = 1.5
    # The database's answers held (COMMITs applied, unanswered), then
    # the database away.
    HOLD = 0.3
    OUTAGE = 3.0
    AFTER = 3.0
    READY_TIMEOUT = 60

    def setUp(self):
        super().setUp()
        self.tmp = self.useFixture(fixtures.TempDir()).path
        self.database = _RelayedDatabase(self)
        self.log_file = os.path.join(self.tmp, 'placement.log')
        self.proc, self.base = self._start_server()
        self.providers = [self._provider() for _ in range(self.WRITERS)]

    def _start_server(self):
        port = local_server.free_port()
        conf = os.path.join(self.tmp, 'placement.conf')
        with open(conf, 'w') as f:
            f.write('[DEFAULT]\nlog_file = %s\n[api]\nauth_strategy = '
                    'noauth2\n[placement_database]\nconnection = %s\n'
                    % (self.log_file, self.database.url))
        proc = subprocess.Popen(
            [sys.executable, '-m', 'osc_placement.server', '--config-file',
             conf, '--host', '127.0.0.1', '--port', str(port),
             '--workers', '1'],
            env=_server_environment(self.tmp), cwd=self.tmp,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(_kill, proc)
        self.addCleanup(self._attach_log)
        base = 'http://127.0.0.1:%d' % port
        local_server.wait_until_ready(proc, base, '/', self.READY_TIMEOUT)
        return proc, base

    def _attach_log(self):
        if os.path.exists(self.log_file):
            with open(self.log_file) as f:
                lines = [line for line in f if ' INFO ' not in line]
            self.addDetail('server log (warnings and errors)',
                           content.text_content(''.join(lines[-200:])))

    def send(self, method, path, body):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            self.base + path, data=data, method=method, headers={
                'X-Auth-Token': 'admin', 'Accept': 'application/json',
                'Content-Type': 'application/json',
                'OpenStack-API-Version': 'placement ' + MICROVERSION})
        sent = time.monotonic()
        try:
            with urllib.request.urlopen(req, timeout=60) as resp:
                status, headers, raw = (resp.status, resp.getheaders(),
                                        resp.read())
        except urllib.error.HTTPError as err:
            status, headers, raw = err.code, err.headers.items(), err.read()
        return Answer(method, status, headers,
                      json.loads(raw) if raw else None, sent,
                      time.monotonic())

    def _provider(self):
        rp = str(uuid.uuid4())
        self.assertEqual(200, self.send('POST', '/resource_providers', {
            'uuid': rp, 'name': rp}).status)
        self.assertEqual(200, self.send(
            'PUT', '/resource_providers/%s/inventories' % rp,
            {'resource_provider_generation': 0,
             'inventories': INVENTORY}).status)
        return rp

    def test_database_restart_under_claims(self):
        run = _ClaimRun(self.send, self.providers, self.THINK)
        run.start()
        time.sleep(self.BEFORE)
        relay = self.database.relay
        relay.hold_replies()
        time.sleep(self.HOLD)
        away = time.monotonic()
        relay.refuse()
        time.sleep(self.OUTAGE)
        relay.accept_again()
        back = time.monotonic()
        time.sleep(self.AFTER)
        run.stop()
        self.addDetail('figures', content.text_content(run.figures(
            away, back)))
        self.assertEqual([], run.failures)
        self.assertIsNone(self.proc.poll(), 'the server process exited')
        answers = run.all_answers()
        # Not one 500, nor any other answer but these.
        self.assertEqual(set(), {a.status for a in answers}
                         - {200, 204, 409, 503})
        for answer in answers:
            if answer.status == 503:
                self.assert_unavailable_answer(answer)
            if answer.status == 409:
                self.assertIn(CONFLICT_TEXT, answer.detail())
        # Requests sent and answered while the database was away: 503
        # (and there were some: the outage was met).
        during = [a for a in answers if away <= a.sent and a.answered < back]
        self.assertNotEqual([], during)
        self.assertEqual({503}, {a.status for a in during})
        # Claims begun once it was back: 204 at once, served by the
        # same process.
        after = [answers[0] for answers in run.claims_answers()
                 if answers[0].sent >= back]
        self.assertNotEqual([], after)
        self.assertEqual({204}, {a.status for a in after})
        # Claims that met a 503 were sent again and ended applied.
        retried = [answers for answers in run.claims_answers()
                   if any(a.status == 503 for a in answers)]
        self.assertNotEqual([], retried)
        self.assert_one_allocation_each(run)
        self.assert_lost_commits_logged(run)

    def assert_lost_commits_logged(self, run):
        """A claim whose first COMMIT was applied unanswered has its line
        in the server's log (other lines may name claims whose COMMIT
        was not applied)."""
        with open(self.log_file) as f:
            unknown = [line for line in f if 'Outcome unknown' in line]
        for consumer, _, ended, _ in run.claims:
            if ended == 'applied earlier':
                self.assertTrue(any(consumer in line for line in unknown),
                                consumer)

    def assert_one_allocation_each(self, run):
        """Every consumer claimed holds RESOURCES on its writer's
        provider, once; no other consumer holds anything there; each
        provider's usage is its consumers' sum."""
        alloc, rp = tables.allocations, tables.resource_providers
        rc = tables.resource_classes
        query = (sa.select(alloc.c.consumer_id, rp.c.uuid, rc.c.name,
                           alloc.c.used)
                 .join(rp, rp.c.id == alloc.c.resource_provider_id)
                 .join(rc, rc.c.id == alloc.c.resource_class_id)
                 .where(rp.c.uuid.in_(self.providers)))
        with server_fixtures.database().read() as conn:
            rows = conn.execute(query).all()
        held = {}
        for consumer, provider, name, used in rows:
            held.setdefault(consumer, []).append((provider, name, used))
        expected = {consumer: sorted((provider, name, used)
                                     for name, used in RESOURCES.items())
                    for consumer, provider in run.claimed()}
        self.assertEqual(expected, {c: sorted(v) for c, v in held.items()})
        for provider in self.providers:
            count = sum(1 for _, p in run.claimed() if p == provider)
            usages = self.send('GET', '/resource_providers/%s/usages'
                               % provider, None).body['usages']
            self.assertEqual({name: used * count
                              for name, used in RESOURCES.items()}, usages)


class _ClaimRun:
    """One writer thread per provider, claiming for new consumers one
    after another until stopped; a claim under way when stopped is
    finished."""

    def __init__(self, send, providers, think):
        self._send = send
        self._think = think
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._write, args=(rp,),
                                          daemon=True) for rp in providers]
        self._lock = threading.Lock()
        # (consumer, provider, how it ended, its answers)
        self.claims = []
        self.failures = []

    def start(self):
        for thread in self._threads:
            thread.start()

    def stop(self):
        self._stop.set()
        for thread in self._threads:
            thread.join(120)

    def _write(self, provider):
        while not self._stop.is_set():
            consumer = str(uuid.uuid4())
            answers = []
            try:
                ended = claim_like_nova(self._send, consumer, provider,
                                        answers.append)
            except Exception as exc:
                with self._lock:
                    self.failures.append(repr(exc))
                return
            with self._lock:
                self.claims.append((consumer, provider, ended, answers))
            time.sleep(self._think)

    def claimed(self):
        return [(consumer, provider)
                for consumer, provider, _, _ in self.claims]

    def claims_answers(self):
        return [answers for _, _, _, answers in self.claims]

    def all_answers(self):
        return [a for answers in self.claims_answers() for a in answers]

    def figures(self, away, back):
        ended = {}
        for _, _, how, _ in self.claims:
            ended[how] = ended.get(how, 0) + 1
        statuses = {}
        for answer in self.all_answers():
            statuses[answer.status] = statuses.get(answer.status, 0) + 1
        return ('claims: %d %s\nanswers: %s\ndatabase away for %.1f s\n'
                'failures: %s' % (len(self.claims), ended, statuses,
                                  back - away, self.failures))


def _server_environment(home):
    """The server imports the code under test, whatever the working
    directory: a relative PYTHONPATH would not reach it from ``home``."""
    package = os.path.dirname(os.path.abspath(app_mod.__file__))
    tree = os.path.dirname(os.path.dirname(package))
    path = [tree] + [p for p in os.environ.get('PYTHONPATH', '').split(
        os.pathsep) if p]
    return dict(os.environ, HOME=home, XDG_DATA_HOME=home,
                PYTHONPATH=os.pathsep.join(path))


def _kill(proc):
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def load_tests(loader, standard_tests, pattern):
    """Only in the PostgreSQL and MariaDB/MySQL passes of the suite."""
    cases = {'postgresql': (TestReadOnlyPostgreSQL,
                            TestPipelineOnPostgreSQL),
             'mysql': (TestReadOnlyMariaDB,)}.get(
                 server_fixtures.backend_name())
    suite = unittest.TestSuite()
    if cases is not None:
        for case in (TestClassification, TestLostCommit,
                     TestOutageUnderWrites) + cases:
            suite.addTests(loader.loadTestsFromTestCase(case))
    return suite
