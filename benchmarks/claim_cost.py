# SPDX-License-Identifier: Apache-2.0
"""Where a scheduler's claim spends its time, inside the server.

A claim as Nova makes it at microversion 1.36: ``GET
/allocation_candidates?resources=...&limit=10``, then ``PUT
/allocations/{new consumer}`` of the first candidate with
``consumer_generation: null``. The other benchmarks time claims over
HTTP; the parts of one (policy, parsing, the candidate search, the write
transaction...) are only visible inside the process, so this one builds
the server's WSGI application (``app.make_app``, the worker's garbage
collector tuning, oslo.log to a file) on the given database and calls it
directly, one claim after the other, in passes:

1. warm-up claims, not counted;
2. a plain pass: CPU of this process and of the PostgreSQL backends it
   used, wall time per request kind, nothing instrumented;
3. a phase pass: the server's functions of each phase wrapped to time
   them (wall and this thread's CPU, inclusive and exclusive of the
   phases inside), and every SQL statement counted with SQLAlchemy's
   cursor events, by the phase that sent it;
4. a wire pass (PostgreSQL with psycopg): libpq's protocol trace of each
   checked-out connection, counting round trips (a burst of messages to
   the server answered by a burst back) and transactions;
5. a profile pass: cProfile timed by this thread's CPU, the functions
   with the most cumulative and own CPU;
6. with ``--http-threads``, the same claims over HTTP to a real server
   process (``--workers`` x ``--threads``) on the same database, from
   each given number of client threads in turn: claims/s, conflicts, and
   the CPU per claim of the server's processes and of PostgreSQL's
   backends, which says how much of a served claim's cost lies outside
   the request's own code (the HTTP server, threads contending, lost
   races).

Each pass's claims are deleted afterwards, untimed, so the cloud ends as
it began. Load a cloud first with ``benchmarks.sql_cloud``::

    python -m benchmarks.claim_cost --database-connection \\
        postgresql+psycopg://postgres@127.0.0.1/claimcost_1k --claims 300
"""

import argparse
import collections
import contextlib
import cProfile
import gc
import io
import json
import os
import pstats
import sys
import tempfile
import threading
import time
import uuid

import orjson
import sqlalchemy as sa
from sqlalchemy import event

from benchmarks import client as http_client
from benchmarks import local_server
from benchmarks import scale
from osc_placement.server import app as app_mod
from osc_placement.server.candidates import body as candidate_body
from osc_placement.server.candidates import door as candidate_door
from osc_placement.server.candidates import memo as candidate_memo
from osc_placement.server.candidates import policy as candidate_policy
from osc_placement.server.candidates import search as candidate_search
from osc_placement.server import conf as conf_mod
from osc_placement.server.db import engine as db_engine
from osc_placement.server.db import libpq
from osc_placement.server.db import pipeline
from osc_placement.server.handlers import allocation as alloc_handler
from osc_placement.server.handlers import allocation_candidate as ac_handler
from osc_placement.server import http_api
from osc_placement.server import http_server
from osc_placement.server import json_encoding
from osc_placement.server.objects import allocation as alloc_obj
from osc_placement.server.objects import consumer as consumer_obj

MICROVERSION = '1.36'
RESOURCES = 'VCPU:2,MEMORY_MB:4096,DISK_GB:20'
CANDIDATES = 'GET /allocation_candidates'
CLAIM = 'PUT /allocations'
PROJECT = str(uuid.UUID(int=1))
USER = str(uuid.UUID(int=2))

# (owner, attribute, phase): the functions timed in the phase pass. The
# owner is the module or class whose attribute the callers look up, so
# replacing the attribute puts the timer in the call.
PHASES = (
    (app_mod.PlacementApp, '_dispatch', 'dispatch'),
    (http_api.Request, 'authorize', 'policy'),
    (ac_handler, 'parsed', 'parse query'),
    (http_api.Request, 'json_body', 'parse + validate body'),
    (alloc_handler, 'consumer_write', 'consumer write object'),
    (db_engine.Database, '_connect', 'pool checkout'),
    (candidate_door, 'answer', 'candidate answer'),
    (candidate_door, 'open_reader', 'name ids + slice reader'),
    (candidate_policy, 'every_tree', 'kept structure (usage read)'),
    (candidate_memo.RememberedAnswers, 'recall', 'recall answer'),
    (candidate_search, 'search', 'candidate search'),
    (candidate_body, 'allocation_candidates_body', 'body build'),
    (candidate_memo.RememberedAnswers, 'remember', 'remember answer'),
    (json_encoding, 'json_bytes', 'JSON encode'),
    (alloc_obj, 'write_or_409', 'write transaction'),
    (alloc_obj, '_claimed_in_one_trip', 'claim in one round trip'),
    (alloc_obj, '_read_for_claim', 'claim: ids, locks, providers'),
    (alloc_obj, '_lock_then_read_consumers', 'ids + consumers + locks'),
    (alloc_obj, '_identity_ids', 'project/user ids'),
    (consumer_obj, 'load_with_allocations', 'consumers read'),
    (alloc_obj, '_queue_for_providers', 'lock usage + providers'),
    (alloc_obj, '_load_providers', 'providers read'),
    (alloc_obj, '_class_ids', 'class ids'),
    (alloc_obj, '_check_capacity', 'capacity check'),
    (alloc_obj, '_write_new_consumers', 'insert statement'),
    (app_mod.PlacementApp, '_send', 'response'),
    (app_mod.LoggedWhenSent, 'close', 'access log (after send)'),
)


def _say(text=''):
    print(text, flush=True)


# -- the requests ----------------------------------------------------------

class Client:
    """WSGI calls on the application, as a server thread makes them:
    the body read whole, then ``close()``."""

    def __init__(self, application):
        self.application = application

    def call(self, method, path, query='', body=None):
        payload = b'' if body is None else orjson.dumps(body)
        environ = {
            'REQUEST_METHOD': method, 'PATH_INFO': path,
            'QUERY_STRING': query, 'SCRIPT_NAME': '',
            'SERVER_NAME': '127.0.0.1', 'SERVER_PORT': '8778',
            'SERVER_PROTOCOL': 'HTTP/1.1', 'REMOTE_ADDR': '127.0.0.1',
            'wsgi.url_scheme': 'http', 'wsgi.input': io.BytesIO(payload),
            'wsgi.errors': sys.stderr, 'wsgi.version': (1, 0),
            'wsgi.multithread': True, 'wsgi.multiprocess': True,
            'wsgi.run_once': False,
            'HTTP_X_AUTH_TOKEN': 'admin', 'HTTP_ACCEPT': 'application/json',
            'HTTP_OPENSTACK_API_VERSION': 'placement ' + MICROVERSION,
            'CONTENT_LENGTH': str(len(payload)),
        }
        if body is not None:
            environ['CONTENT_TYPE'] = 'application/json'
        status = []
        result = self.application(
            environ, lambda s, h, exc_info=None: status.append(s))
        try:
            data = b''.join(result)
        finally:
            close = getattr(result, 'close', None)
            if close is not None:
                close()
        return int(status[0].split()[0]), data


class Claims:
    """The scheduler's loop, one claim at a time, timing each request
    kind; ``kind`` says which request is being served (for the
    instruments)."""

    def __init__(self, client):
        self.client = client
        self.kind = None
        self.consumers = []
        self.wall = collections.defaultdict(list)
        self.cpu = collections.defaultdict(list)
        self.outcomes = collections.Counter()

    @contextlib.contextmanager
    def _timed(self, kind):
        self.kind = kind
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            yield
        finally:
            self.cpu[kind].append(time.thread_time() - cpu)
            self.wall[kind].append(time.perf_counter() - wall)
            self.kind = None

    def claim(self):
        with self._timed(CANDIDATES):
            status, data = self.client.call(
                'GET', '/allocation_candidates',
                'resources=%s&limit=10' % RESOURCES)
        if status != 200:
            raise RuntimeError('candidates answered %s: %s' % (status, data))
        requests = orjson.loads(data)['allocation_requests']
        if not requests:
            self.outcomes['no candidate'] += 1
            return
        consumer = str(uuid.uuid4())
        body = {'allocations': requests[0]['allocations'],
                'project_id': PROJECT, 'user_id': USER,
                'consumer_generation': None}
        with self._timed(CLAIM):
            status, data = self.client.call(
                'PUT', '/allocations/' + consumer, body=body)
        if status == 204:
            self.consumers.append(consumer)
            self.outcomes['claimed'] += 1
        elif status == 409:
            self.outcomes['conflict'] += 1
        else:
            raise RuntimeError('claim answered %s: %s' % (status, data))

    def run(self, count):
        for _ in range(count):
            self.claim()
        return self

    def remove(self):
        for consumer in self.consumers:
            self.client.call('DELETE', '/allocations/' + consumer)
        self.consumers = []

    def per_request_ms(self, table):
        return {kind: 1000 * sum(values) / len(values)
                for kind, values in table.items()}


# -- the database backends' CPU --------------------------------------------

def _backend_cpu_seconds(pids):
    """CPU time of the processes ``pids`` (PostgreSQL backends on this
    machine), from /proc/PID/schedstat (nanoseconds, where /proc/PID/stat
    counts ticks of 10 ms); gone ones count 0."""
    total = 0
    for pid in pids:
        total += _on_cpu_ns(pid)
    return total / 1e9


def _on_cpu_ns(pid):
    try:
        with open('/proc/%d/schedstat' % pid) as f:
            return int(f.read().split()[0])
    except OSError:
        return 0


def _backend_pids(engine):
    """The pids of every backend connected to the engine's database
    (PostgreSQL; none elsewhere)."""
    if engine.dialect.name != 'postgresql':
        return []
    with engine.connect() as conn:
        return [row[0] for row in conn.execute(sa.text(
            'SELECT pid FROM pg_stat_activity WHERE datname = '
            'current_database()'))]


# -- phases ----------------------------------------------------------------

class Phases:
    """Wall and thread CPU of each phase per request kind, inclusive and
    exclusive of the phases it calls, and the SQL statements each sent."""

    def __init__(self, claims):
        self.claims = claims
        self.stack = []
        self.thread = threading.get_ident()
        # (kind, phase) -> [calls, wall, cpu, own wall, own cpu]
        self.totals = collections.defaultdict(lambda: [0, 0.0, 0.0,
                                                       0.0, 0.0])
        self.depth = {}
        # (kind, statement) -> [executions, wall, backend CPU]
        self.statements = collections.defaultdict(lambda: [0, 0.0, 0.0])
        self._undo = []

    def _wrap(self, function, phase):
        phases = self

        def timed(*args, **kwargs):
            if threading.get_ident() != phases.thread or not (
                    phases.claims.kind):
                return function(*args, **kwargs)
            frame = [time.perf_counter(), time.thread_time(), 0.0, 0.0]
            phases.depth.setdefault(phase, len(phases.stack))
            phases.stack.append(frame)
            try:
                return function(*args, **kwargs)
            finally:
                phases.stack.pop()
                wall = time.perf_counter() - frame[0]
                cpu = time.thread_time() - frame[1]
                entry = phases.totals[(phases.claims.kind, phase)]
                entry[0] += 1
                entry[1] += wall
                entry[2] += cpu
                entry[3] += wall - frame[2]
                entry[4] += cpu - frame[3]
                if phases.stack:
                    phases.stack[-1][2] += wall
                    phases.stack[-1][3] += cpu
        timed.phase = phase
        return timed

    @contextlib.contextmanager
    def installed(self, engine):
        for owner, name, phase in PHASES:
            original = owner.__dict__[name]
            self._undo.append((owner, name, original))
            if isinstance(original, staticmethod):
                timed = staticmethod(self._wrap(original.__func__, phase))
            else:
                timed = self._wrap(original, phase)
            setattr(owner, name, timed)
        original = pipeline.run
        self._undo.append((pipeline, 'run', original))
        pipeline.run = self._direct(original)
        dialect = engine.dialect
        self._undo.append((dialect, 'do_commit', None))
        dialect.do_commit = self._wrap(self._commit(
            type(dialect).do_commit.__get__(dialect)), 'COMMIT')
        event.listen(engine, 'before_cursor_execute', self._before)
        event.listen(engine, 'after_cursor_execute', self._after)
        try:
            yield self
        finally:
            event.remove(engine, 'before_cursor_execute', self._before)
            event.remove(engine, 'after_cursor_execute', self._after)
            for owner, name, original in reversed(self._undo):
                if original is None:
                    delattr(owner, name)
                else:
                    setattr(owner, name, original)
            self._undo = []

    def _before(self, conn, cursor, statement, parameters, context,
                executemany):
        pid = _backend_pid(conn.connection.dbapi_connection)
        context._claim_cost_started = (time.perf_counter(), pid,
                                       _on_cpu_ns(pid))

    def _after(self, conn, cursor, statement, parameters, context,
               executemany):
        kind = self.claims.kind
        if kind is None or threading.get_ident() != self.thread:
            return
        started, pid, on_cpu = context._claim_cost_started
        self._add(kind, _statement_name(statement),
                  time.perf_counter() - started,
                  (_on_cpu_ns(pid) - on_cpu) / 1e9)

    def _add(self, kind, name, wall, backend_cpu):
        entry = self.statements[(kind, name)]
        entry[0] += 1
        entry[1] += wall
        entry[2] += backend_cpu

    def _direct(self, run):
        """The statements sent through psycopg itself (db/pipeline.py),
        which SQLAlchemy's cursor events do not see."""
        def timed(conn, statements, commit=False):
            kind = self.claims.kind
            if kind is None or threading.get_ident() != self.thread:
                return run(conn, statements, commit)
            pid = _backend_pid(conn.connection.dbapi_connection)
            wall, on_cpu = time.perf_counter(), _on_cpu_ns(pid)
            try:
                return run(conn, statements, commit)
            finally:
                self._add(kind, '(psycopg) ' + ' ; '.join(
                    [_statement_name(text) for text, _ in statements]
                    + (['COMMIT'] if commit else [])),
                    time.perf_counter() - wall,
                    (_on_cpu_ns(pid) - on_cpu) / 1e9)
        return timed

    def _commit(self, do_commit):
        """The dialect's do_commit, its backend's CPU counted as a
        statement's (psycopg sends COMMIT itself)."""
        def timed(dbapi_conn):
            kind = self.claims.kind
            if kind is None or threading.get_ident() != self.thread:
                return do_commit(dbapi_conn)
            pid = _backend_pid(dbapi_conn)
            wall, on_cpu = time.perf_counter(), _on_cpu_ns(pid)
            try:
                return do_commit(dbapi_conn)
            finally:
                self._add(kind, 'COMMIT', time.perf_counter() - wall,
                          (_on_cpu_ns(pid) - on_cpu) / 1e9)
        return timed


def _backend_pid(dbapi_conn):
    raw = getattr(dbapi_conn, 'dbapi_connection', dbapi_conn)
    info = getattr(raw, 'info', None)
    return getattr(info, 'backend_pid', 0)


def _statement_name(statement):
    """A statement's first words and the tables it names, on one line."""
    words = ' '.join(statement.split())
    return words[:110] + ('...' if len(words) > 110 else '')


# -- round trips -----------------------------------------------------------

class Wire:
    """Round trips and transactions per request kind, from libpq's trace
    of every connection the loop's thread checks out (psycopg)."""

    def __init__(self, claims):
        self.claims = claims
        self.thread = threading.get_ident()
        self.trips = collections.Counter()
        self.begins = collections.Counter()
        self.commits = collections.Counter()
        self.checkouts = collections.Counter()
        # (kind, what the client sent first in a round trip) -> count
        self.sent = collections.Counter()
        self._file = tempfile.TemporaryFile(mode='w+')
        self._traced = None

    @contextlib.contextmanager
    def installed(self, engine):
        event.listen(engine, 'checkout', self._checkout)
        event.listen(engine, 'checkin', self._checkin)
        try:
            yield self
        finally:
            event.remove(engine, 'checkout', self._checkout)
            event.remove(engine, 'checkin', self._checkin)

    def _checkout(self, dbapi_conn, record, proxy):
        if threading.get_ident() != self.thread or not self.claims.kind:
            return
        self._file.seek(0)
        self._file.truncate()
        self._file.flush()
        pgconn = dbapi_conn.pgconn
        pgconn.trace(self._file.fileno())
        pgconn.set_trace_flags(_trace_flags())
        self._traced = (pgconn, self.claims.kind)

    def _checkin(self, dbapi_conn, record):
        if self._traced is None or dbapi_conn is None:
            return
        pgconn, kind = self._traced
        self._traced = None
        pgconn.untrace()
        self._file.seek(0)
        self._count(kind, self._file.read(),
                    _prepared_names(dbapi_conn, record))

    def _count(self, kind, text, prepared):
        self.checkouts[kind] += 1
        previous, burst = None, []
        for line in text.splitlines():
            parts = line.split('\t')
            if len(parts) < 3:
                continue
            direction, message = parts[0], parts[2]
            detail = parts[3].strip() if len(parts) > 3 else ''
            if direction == 'B' and previous == 'F':
                self.trips[kind] += 1
                self.sent[(kind, ' + '.join(burst))] += 1
                burst = []
            previous = direction
            if direction != 'F':
                continue
            if message in ('Query', 'Parse'):
                if '"BEGIN' in detail:
                    self.begins[kind] += 1
                elif '"COMMIT"' in detail:
                    self.commits[kind] += 1
                burst.append(_sent_name(message, detail))
            elif message == 'Bind':
                # A statement prepared earlier: only its name is sent.
                name = detail.split(' ')[1] if ' ' in detail else detail
                if name != '""':
                    text = prepared.get(name.strip('"'), 'prepared ' + name)
                    # The driver prepares a COMMIT it sends often.
                    self.commits[kind] += text == 'COMMIT'
                    burst.append(_sent_name('Query', text))


def _prepared_names(dbapi_conn, record):
    """{statement name: text} of what psycopg (its private bookkeeping:
    this is a measurement) and db/libpq.py prepared on the
    connection."""
    manager = getattr(dbapi_conn, '_prepared', None)
    names = {name.decode(): key[0].decode(errors='replace')
             for key, name in getattr(manager, '_names', {}).items()}
    names.update((name.decode(), query.decode(errors='replace'))
                 for query, name in libpq.prepared_on(record).items())
    return names


def _sent_name(message, detail):
    if message == 'Parse':
        # '"name" "text" ...': the name, then the statement's text.
        detail = detail.split('" "', 1)[-1]
    words = ' '.join(detail.strip('"').split())
    return words[:70] + ('...' if len(words) > 70 else '')


def _trace_flags():
    from psycopg import pq
    return pq.Trace.SUPPRESS_TIMESTAMPS


# -- the run ---------------------------------------------------------------

def build_application(connection, log_file):
    conf = conf_mod.make_conf(connection, sync_on_startup=False)
    conf.set_override('log_file', log_file)
    conf_mod.setup_logging(conf)
    application = app_mod.make_app(conf)
    db = _database_of(application)
    http_server._tune_gc()
    return application, db


def _database_of(application):
    """The Database behind the middleware: found by walking closures."""
    seen, todo = set(), [application]
    while todo:
        obj = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, app_mod.PlacementApp):
            return obj.db
        for cell in getattr(obj, '__closure__', None) or ():
            todo.append(cell.cell_contents)
        for value in getattr(obj, '__dict__', {}).values():
            if callable(value):
                todo.append(value)
    raise RuntimeError('no PlacementApp in the application')


def plain_pass(client, engine, count):
    claims = Claims(client)
    pids = _backend_pids(engine)
    db_before = _backend_cpu_seconds(pids)
    wall, cpu = time.perf_counter(), time.process_time()
    claims.run(count)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    db_cpu = _backend_cpu_seconds(pids) - db_before
    claims.remove()
    made = max(claims.outcomes['claimed'], 1)
    return {
        'claims': dict(claims.outcomes),
        'claims_per_second_one_thread': round(made / wall, 1),
        'process_cpu_ms_per_claim': round(1000 * cpu / made, 3),
        'postgresql_cpu_ms_per_claim': round(1000 * db_cpu / made, 3),
        'server_cpu_ms_per_claim': round(1000 * (cpu + db_cpu) / made, 3),
        'wall_ms': _rounded(claims.per_request_ms(claims.wall)),
        'thread_cpu_ms': _rounded(claims.per_request_ms(claims.cpu)),
    }


def _rounded(table, digits=3):
    return {key: round(value, digits) for key, value in table.items()}


def phase_pass(client, engine, count):
    claims = Claims(client)
    phases = Phases(claims)
    with phases.installed(engine):
        claims.run(count)
    claims.remove()
    requests = {kind: len(values) for kind, values in claims.wall.items()}
    result = {'phases': {}, 'statements': {}}
    for kind, served in requests.items():
        rows = []
        for (of_kind, phase), (calls, wall, cpu, own_wall, own_cpu) in (
                phases.totals.items()):
            if of_kind != kind:
                continue
            rows.append({
                'phase': phase, 'depth': phases.depth.get(phase, 0),
                'calls': round(calls / served, 2),
                'wall_ms': round(1000 * wall / served, 3),
                'cpu_ms': round(1000 * cpu / served, 3),
                'own_wall_ms': round(1000 * own_wall / served, 3),
                'own_cpu_ms': round(1000 * own_cpu / served, 3)})
        rows.sort(key=lambda row: _phase_order(row['phase']))
        result['phases'][kind] = {
            'requests': served,
            'request_wall_ms': round(1000 * sum(claims.wall[kind])
                                     / served, 3),
            'request_cpu_ms': round(1000 * sum(claims.cpu[kind])
                                    / served, 3),
            'rows': rows}
        result['statements'][kind] = sorted((
            {'statement': name, 'per_request': round(n / served, 2),
             'wall_ms': round(1000 * wall / served, 3),
             'backend_cpu_ms': round(1000 * backend / served, 3)}
            for (of_kind, name), (n, wall, backend) in (
                phases.statements.items())
            if of_kind == kind), key=lambda row: -row['wall_ms'])
    return result


def _phase_order(phase):
    names = [name for _, _, name in PHASES]
    names.insert(names.index('insert statement') + 1, 'COMMIT')
    return names.index(phase) if phase in names else len(names)


def wire_pass(client, engine, count):
    claims = Claims(client)
    wire = Wire(claims)
    with wire.installed(engine):
        claims.run(count)
    claims.remove()
    result = {}
    for kind, values in claims.wall.items():
        served = len(values)
        result[kind] = {
            'round_trips': round(wire.trips[kind] / served, 2),
            'transactions': round(wire.begins[kind] / served, 2),
            'commits': round(wire.commits[kind] / served, 2),
            'checkouts': round(wire.checkouts[kind] / served, 2),
            'sent': sorted((
                {'per_request': round(n / served, 2), 'sent': sent}
                for (of_kind, sent), n in wire.sent.items()
                if of_kind == kind), key=lambda row: -row['per_request'])}
    return result


def profile_pass(client, count, top):
    claims = Claims(client)
    profiler = cProfile.Profile(time.thread_time)
    profiler.enable()
    claims.run(count)
    profiler.disable()
    claims.remove()
    made = max(claims.outcomes['claimed'], 1)
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    by_package = _own_time_by_package(stats)
    stats.strip_dirs()
    # The profiler slows every call: shares of its total say more than
    # its milliseconds.
    total = stats.total_tt
    rows = {'profiled_cpu_ms_per_claim': round(1000 * total / made, 3),
            'own_share_by_package': {
                package: round(own / total, 4) for package, own in sorted(
                    by_package.items(), key=lambda item: -item[1])}}
    for sort in ('cumulative', 'tottime'):
        stats.sort_stats(sort)
        listed = []
        for func in stats.fcn_list:
            if func[0] == os.path.basename(__file__):
                continue
            calls, _, own, cumulative, _ = stats.stats[func]
            listed.append({
                'function': '%s:%d(%s)' % func,
                'calls_per_claim': round(calls / made, 2),
                'own_share': round(own / total, 4),
                'cumulative_share': round(cumulative / total, 4)})
            if len(listed) == top:
                break
        rows[sort] = listed
    return rows


# -- the same claims over HTTP ----------------------------------------------

def http_claim(client, consumers):
    """One claim through a real server; its outcome."""
    body = client.get('/allocation_candidates', params={
        'resources': RESOURCES, 'limit': '10'}).json()
    if not body['allocation_requests']:
        return 'no candidate'
    consumer = str(uuid.uuid4())
    response = client.request('PUT', '/allocations/' + consumer, {
        'allocations': body['allocation_requests'][0]['allocations'],
        'project_id': PROJECT, 'user_id': USER,
        'consumer_generation': None}, expect=(204, 409))
    if response.status_code != 204:
        return 'conflict'
    consumers.append(consumer)
    return 'claimed'


def http_loop(url, threads, seconds, cpu_of):
    """Claims from ``threads`` client threads for ``seconds``, and the
    server's and PostgreSQL's CPU seconds meanwhile (``cpu_of()``)."""
    clients = [http_client.Client(url, microversion=MICROVERSION)
               for _ in range(threads)]
    consumers, outcomes = [], collections.Counter()
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def scheduler(client):
        while time.monotonic() < deadline:
            outcome = http_claim(client, consumers)
            with lock:
                outcomes[outcome] += 1

    before = cpu_of()
    started = time.perf_counter()
    workers = [threading.Thread(target=scheduler, args=(c,))
               for c in clients]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    wall = time.perf_counter() - started
    after = cpu_of()
    for consumer in consumers:
        clients[0].delete('/allocations/' + consumer)
    made = max(outcomes['claimed'], 1)
    return {
        'client_threads': threads, 'outcomes': dict(outcomes),
        'claims_per_second': round(outcomes['claimed'] / wall, 1),
        'server_cpu_ms_per_claim': round(
            1000 * (after[0] - before[0]) / made, 3),
        'postgresql_cpu_ms_per_claim': round(
            1000 * (after[1] - before[1]) / made, 3)}


@contextlib.contextmanager
def running_server(connection, engine, workers, threads, warm_threads,
                   warm_seconds, source_tree=None):
    """A real server process on ``connection`` (of ``source_tree``, or of
    this tree), warmed up: ``(url, cpu_of)``, ``cpu_of()`` giving the CPU
    seconds of its processes and of PostgreSQL's backends so far."""
    process, url = local_server.start(connection, workers=workers,
                                      threads=threads, seconds=120,
                                      source_tree=source_tree)
    try:
        def cpu_of():
            server = [process.pid] + scale.children(process.pid)
            return (sum(scale.cpu_seconds(pid) for pid in server),
                    _backend_cpu_seconds(_backend_pids(engine)))
        # The workers' first answers read the cloud, and a thread of each
        # reads every tree to keep: not measured.
        http_loop(url, warm_threads, warm_seconds, cpu_of)
        yield url, cpu_of
    finally:
        local_server.stop(process)


def _own_time_by_package(stats):
    """{package: own seconds}: site-packages' top-level package, the
    server's modules by subpackage, C built-ins apart."""
    owned = collections.Counter()
    for (filename, _, name), (_, _, own, _, _) in stats.stats.items():
        owned[_package_of(filename, name)] += own
    return owned


def _package_of(filename, name):
    if filename == '~':
        # A C function: its caller's package is not known here.
        return 'C built-ins and methods'
    parts = filename.replace(os.sep, '/').split('/')
    if 'site-packages' in parts:
        return parts[parts.index('site-packages') + 1].split('.')[0]
    if 'osc_placement' in parts:
        at = parts.index('osc_placement')
        return '.'.join(p for p in parts[at:at + 3] if not p.endswith(
            '.py')) + '/' + parts[-1]
    if 'benchmarks' in parts:
        return 'this benchmark'
    return 'standard library'


def report(figures):
    plain = figures['plain']
    _say('plain pass: %s' % plain['claims'])
    _say('  one thread: %.1f claims/s; CPU per claim: this process %.2f '
         'ms + PostgreSQL backends %.2f ms = %.2f ms' % (
             plain['claims_per_second_one_thread'],
             plain['process_cpu_ms_per_claim'],
             plain['postgresql_cpu_ms_per_claim'],
             plain['server_cpu_ms_per_claim']))
    for kind in plain['wall_ms']:
        _say('  %-28s wall %.3f ms, thread CPU %.3f ms' % (
            kind, plain['wall_ms'][kind], plain['thread_cpu_ms'][kind]))
    for kind, wire in figures.get('wire', {}).items():
        _say('wire, %-28s round trips %.2f, transactions %.2f, commits '
             '%.2f, connection checkouts %.2f' % (
                 kind, wire['round_trips'], wire['transactions'],
                 wire['commits'], wire['checkouts']))
        for row in wire['sent']:
            _say('    %5.2f x  %s' % (row['per_request'], row['sent']))
    phases = figures['phases']
    for kind, table in phases['phases'].items():
        _say()
        _say('%s: %d requests, wall %.3f ms, thread CPU %.3f ms (phases '
             'timed)' % (kind, table['requests'], table['request_wall_ms'],
                         table['request_cpu_ms']))
        _say('  %-40s %6s %9s %9s %9s %9s' % (
            'phase', 'calls', 'wall', 'CPU', 'own wall', 'own CPU'))
        for row in table['rows']:
            _say('  %-40s %6.2f %9.3f %9.3f %9.3f %9.3f' % (
                '  ' * row['depth'] + row['phase'], row['calls'],
                row['wall_ms'], row['cpu_ms'], row['own_wall_ms'],
                row['own_cpu_ms']))
        _say('  statements (per request: wall from '
             'send to result, PostgreSQL backend CPU, ms):')
        for row in phases['statements'][kind]:
            _say('    %5.2f x %7.3f %7.3f  %s' % (
                row['per_request'], row['wall_ms'], row['backend_cpu_ms'],
                row['statement']))
    for side, label in (('http_baseline', 'baseline'), ('http', 'this tree')):
        for run in figures.get(side, ()):
            _say('%s over HTTP, %d client threads: %.1f claims/s %s; CPU '
                 'per claim: server processes %.2f ms + PostgreSQL %.2f ms'
                 % (label, run['client_threads'], run['claims_per_second'],
                    run['outcomes'], run['server_cpu_ms_per_claim'],
                    run['postgresql_cpu_ms_per_claim']))
    profile = figures.get('profile')
    if profile:
        _say()
        _say('cProfile by this thread\'s CPU: %.2f ms per claim profiled; '
             'shares of it, cumulative and own, calls per claim' % (
                 profile['profiled_cpu_ms_per_claim']))
        _say('  own CPU by package or module:')
        for package, share in profile['own_share_by_package'].items():
            if share >= 0.005:
                _say('  %6.1f%%  %s' % (100 * share, package))
    for sort in ('cumulative', 'tottime') if profile else ():
        _say('  by %s:' % sort)
        for row in profile[sort]:
            _say('  %6.1f%% %6.1f%% %7.2f  %s' % (
                100 * row['cumulative_share'], 100 * row['own_share'],
                row['calls_per_claim'], row['function']))


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--database-connection', required=True,
                        help='SQLAlchemy URL of a loaded cloud.')
    parser.add_argument('--claims', type=int, default=300,
                        help='Claims in each timed pass (default 300).')
    parser.add_argument('--warm', type=int, default=50,
                        help='Warm-up claims (default 50).')
    parser.add_argument('--wire-claims', type=int, default=50,
                        help='Claims traced on the wire (default 50).')
    parser.add_argument('--top', type=int, default=30,
                        help='Functions listed from the profile.')
    parser.add_argument('--no-profile', action='store_true')
    parser.add_argument('--http-threads', type=int, nargs='*', default=[],
                        help='Client thread counts of the HTTP loops '
                             '(none by default: no server is started).')
    parser.add_argument('--http-seconds', type=float, default=5.0)
    parser.add_argument('--http-warm-seconds', type=float, default=2,
                        help='Claims made unmeasured after each server '
                        'starts (a large cloud needs more: every tree is '
                        'read to keep).')
    parser.add_argument('--http-rounds', type=int, default=1,
                        help='HTTP passes per side, the sides alternating '
                        'on servers that stay up from the first round to '
                        'the last.')
    parser.add_argument('--baseline-tree',
                        help='A checkout whose server is measured over HTTP '
                        'too, on the same database (e.g. a git worktree '
                        'of the commit before a change).')
    parser.add_argument('--workers', type=int, default=2)
    parser.add_argument('--threads', type=int, default=4)
    parser.add_argument('--json', help='Write every figure to this file.')
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    # The worker's collector tuning is applied; put back after the run.
    thresholds = gc.get_threshold()
    try:
        figures = measure(args)
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)
    report(figures)
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(figures, f, indent=1)
    return 0


def measure(args):
    with tempfile.TemporaryDirectory(prefix='claim-cost-') as tmp:
        application, db = build_application(
            args.database_connection, os.path.join(tmp, 'placement.log'))
        client = Client(application)
        engine = db.engine
        warm = Claims(client).run(args.warm)
        warm.remove()
        figures = {'microversion': MICROVERSION, 'resources': RESOURCES,
                   'claims': args.claims,
                   'database': engine.dialect.name,
                   'driver': engine.dialect.driver}
        figures['plain'] = plain_pass(client, engine, args.claims)
        figures['phases'] = phase_pass(client, engine, args.claims)
        if engine.dialect.driver == 'psycopg':
            figures['wire'] = wire_pass(client, engine, args.wire_claims)
        if not args.no_profile:
            figures['profile'] = profile_pass(client, args.claims, args.top)
        if args.http_threads:
            figures.update(http_sides(args, engine))
    return figures


def http_sides(args, engine):
    """The HTTP passes of this tree ('http') and, with --baseline-tree, of
    that checkout's server ('http_baseline') on the same database: each
    side's server started once, then --http-rounds rounds whose order
    alternates, so that a machine whose speed drifts over minutes costs
    both sides alike."""
    sides = {'http': None}
    if args.baseline_tree:
        sides['http_baseline'] = args.baseline_tree
    runs = {side: [] for side in sides}
    with contextlib.ExitStack() as stack:
        servers = {side: stack.enter_context(running_server(
            args.database_connection, engine, args.workers, args.threads,
            max(args.http_threads), args.http_warm_seconds,
            source_tree=tree)) for side, tree in sides.items()}
        for number in range(args.http_rounds):
            order = list(sides) if number % 2 == 0 else list(reversed(sides))
            for side in order:
                url, cpu_of = servers[side]
                runs[side] += [http_loop(url, threads, args.http_seconds,
                                         cpu_of)
                               for threads in args.http_threads]
    return runs


if __name__ == '__main__':
    sys.exit(main())
