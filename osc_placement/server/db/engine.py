# SPDX-License-Identifier: Apache-2.0
"""Engines per URL and the transaction helper handlers use.

One transaction per request: ``db.read()`` and ``db.write()`` are context
managers yielding a Connection inside a transaction (a PostgreSQL read runs
its statements without one: see ``Database``). On SQLite a write takes
the lock up front (``BEGIN IMMEDIATE``) so concurrent writers queue on the
busy timeout instead of failing mid-way. ``db.run_write(fn)`` re-runs a whole
write from the start when it raises ``Retry`` (a lost generation race, a
deadlock), in a fresh transaction.
"""

import contextlib
import logging
import random
import threading
import time

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy import pool

from osc_placement.server.db import libpq

LOG = logging.getLogger(__name__)
_WRITE = 'placement_write'
# MySQL/MariaDB deadlock and lock-wait error numbers worth a retry.
_MYSQL_RETRYABLE = (1213, 1205)
# Re-runs of a write after concurrent inserts of a key it inserts.
_INTEGRITY_RETRIES = 2


# Why a write ran again: the ``reason`` label of the re-runs counted in
# GET /metrics (placement_write_retries_total).
GENERATION_CONFLICT = 'generation_conflict'
DUPLICATE_KEY = 'duplicate_key'
DEADLOCK = 'deadlock'
LOCK_WAIT_TIMEOUT = 'lock_wait_timeout'
SERIALIZATION_FAILURE = 'serialization_failure'
STATEMENTS_LOST = 'prepared_statements_lost'
_RETRY_TEXTS = {STATEMENTS_LOST: "the connection's prepared statements "
                                 "were deallocated"}


class Retry(Exception):
    """Raised inside a write to have it re-run from the start; ``reason``
    says why (a generation or row that changed, by default)."""

    def __init__(self, reason=GENERATION_CONFLICT):
        super().__init__(reason)
        self.reason = reason


def _sqlite_engine(url, conf):
    memory = url.database in (None, '', ':memory:')
    kwargs = {'connect_args': {'check_same_thread': False}}
    if memory:
        kwargs['poolclass'] = pool.StaticPool
    engine = sa.create_engine(url, **kwargs)
    busy = conf.sqlite_busy_timeout if conf else 30000
    synchronous = conf.sqlite_synchronous if conf else True

    @event.listens_for(engine, 'connect')
    def _on_connect(dbapi_conn, record):
        # Let SQLAlchemy's begin event, not pysqlite, open transactions.
        dbapi_conn.isolation_level = None
        cursor = dbapi_conn.cursor()
        if not memory:
            cursor.execute('PRAGMA journal_mode=WAL')
        cursor.execute('PRAGMA foreign_keys=ON')
        cursor.execute('PRAGMA busy_timeout=%d' % busy)
        cursor.execute('PRAGMA synchronous=%s'
                       % ('NORMAL' if synchronous else 'OFF'))
        cursor.close()

    @event.listens_for(engine, 'begin')
    def _on_begin(conn):
        write = conn.get_execution_options().get(_WRITE)
        conn.exec_driver_sql('BEGIN IMMEDIATE' if write else 'BEGIN')

    return engine


def _mysql_engine(url, conf):
    if 'charset' not in url.query:
        url = url.update_query_dict({'charset': 'utf8mb4'})
    engine = sa.create_engine(url, **_pool_kwargs(conf))
    sql_mode = conf.mysql_sql_mode if conf else 'TRADITIONAL'

    @event.listens_for(engine, 'connect')
    def _on_connect(dbapi_conn, record):
        # As oslo.db does for upstream: an empty mode leaves the server's.
        if sql_mode:
            cursor = dbapi_conn.cursor()
            cursor.execute('SET SESSION sql_mode = %s', (sql_mode,))
            cursor.close()

    return engine


def _pool_kwargs(conf):
    """[placement_database]'s pool options; unset ones keep SQLAlchemy's
    defaults, as under oslo.db."""
    if conf is None:
        return {}
    kwargs = {'pool_recycle': conf.connection_recycle_time,
              'echo': conf.connection_debug >= 50}
    for name, value in (('pool_size', conf.max_pool_size),
                        ('max_overflow', conf.max_overflow),
                        ('pool_timeout', conf.pool_timeout)):
        if value is not None:
            kwargs[name] = value
    return kwargs


# A pooled connection idle longer than this is pinged before use.
IDLE_PING_SECONDS = 5.0


def _ping_idle_connections(engine):
    """Ping a connection on checkout only if it sat idle in the pool.

    A connection dies mostly while idle (the database restarted, a proxy
    or the server's idle timeout dropped it), and a ping then swaps it for
    a fresh one before the request uses it. Pinging every checkout, as
    pool_pre_ping does, cost a round trip per request on connections in
    constant use; a connection lost mid-stream still fails that request
    and SQLAlchemy then renews the pool."""
    @event.listens_for(engine, 'checkin')
    def _on_checkin(dbapi_conn, record):
        record.info['idle_since'] = time.monotonic()

    @event.listens_for(engine, 'checkout')
    def _on_checkout(dbapi_conn, record, proxy):
        idle_since = record.info.get('idle_since')
        if (idle_since is None
                or time.monotonic() - idle_since < IDLE_PING_SECONDS):
            return
        try:
            engine.dialect.do_ping(dbapi_conn)
        except Exception as exc:
            # The pool drops this connection and checks out another.
            raise sa.exc.DisconnectionError(str(exc)) from exc


def create_engine(url, db_conf=None):
    """An engine for a URL, tuned for its backend."""
    url = _with_parameters(sa.engine.make_url(url), db_conf)
    if url.get_backend_name() == 'sqlite':
        engine = _sqlite_engine(url, db_conf)
    elif url.get_backend_name() == 'mysql':
        engine = _mysql_engine(url, db_conf)
    else:
        engine = _postgresql_engine(url, db_conf)
    _ping_idle_connections(engine)
    if url.get_backend_name() != 'sqlite':
        _treat_unavailable_as_disconnect(engine)
    return engine


def _treat_unavailable_as_disconnect(engine):
    """Take a not-serving database's errors for disconnects, so SQLAlchemy
    drops the pool after a restart or failover; its own test misses a node
    gone read-only, not ready or shutting down on an open connection."""
    @event.listens_for(engine, 'handle_error')
    def _on_error(context):
        if not context.is_disconnect and not_serving(
                context.original_exception):
            context.is_disconnect = True


def _with_parameters(url, db_conf):
    """The URL with [placement_database] connection_parameters added to
    its query, as oslo.db adds them."""
    extra = db_conf.connection_parameters if db_conf else ''
    if not extra:
        return url
    return url.update_query_string(extra, append=True)


def wait_for_database(engine, db_conf):
    """Connect once, retrying as [placement_database] max_retries and
    retry_interval say (oslo.db's start-up behaviour): a service started
    with its database still coming up waits for it."""
    attempts = db_conf.max_retries if db_conf else 0
    if engine.dialect.name == 'sqlite':
        # A file that cannot be opened will not open later: fail at once.
        attempts = 0
    while True:
        try:
            engine.connect().close()
            return
        except sa.exc.OperationalError:
            if attempts == 0:
                raise
            attempts -= 1
            LOG.warning('The database is not reachable yet; retrying in '
                        '%d s', db_conf.retry_interval)
            time.sleep(db_conf.retry_interval)


# Statements the driver keeps prepared per connection: the API's ordinary
# ones (IN lists of different lengths are different statements). The
# candidate statements and the claim's, each holding far more of a
# backend's memory, are db/libpq.py's, which keeps its own.
_PG_PREPARED_MAX = 100


# PostgreSQL's cost of a page read out of order, relative to one read in
# sequence (1): the usual setting for data in memory or on SSDs.
RANDOM_PAGE_COST = 1.1


def _postgresql_engine(url, conf):
    # No JIT: the candidate slice's correlated usage sums look costly to
    # the planner, which compiles them, while they run faster than the
    # compiling takes.
    #
    # Generic plans: PostgreSQL plans a prepared statement afresh for each
    # execution until it trusts a generic plan, and the candidate slice's
    # statements take longer to plan than to run.
    #
    # Index reads cost little more than sequential ones: the API's tables
    # are in memory. At PostgreSQL's default random_page_cost (a spinning
    # disk's) a generic plan read the few rows an allocation write needs
    # by scanning whole tables (benchmarks.rst has the figures).
    options = ('-c jit=off -c plan_cache_mode=force_generic_plan '
               '-c random_page_cost=%s' % RANDOM_PAGE_COST)
    engine = sa.create_engine(url, connect_args={'options': options},
                              **_pool_kwargs(conf))

    @event.listens_for(engine, 'connect')
    def _on_connect(dbapi_conn, record):
        dbapi_conn.prepared_max = _PG_PREPARED_MAX

    if engine.dialect.driver == 'psycopg':
        replace_rollback(engine, _rollback_keeping_prepared)
    return engine


def replace_rollback(engine, rollback):
    """Roll back by ``rollback``, on pool resets too (test_engine checks)."""
    engine.dialect.do_rollback = rollback


def _rollback_keeping_prepared(dbapi_conn):
    """ROLLBACK through libpq, keeping the prepared statements psycopg
    drops after a ROLLBACK it runs: schedulers' 409s would cost the
    connection's next requests their plans."""
    # SQLAlchemy passes the driver's connection or the pool's proxy of it.
    raw = getattr(dbapi_conn, 'dbapi_connection', dbapi_conn)
    if raw.info.transaction_status.name != 'IDLE':
        libpq.command(raw, b'ROLLBACK')


def is_retryable(exc):
    """A deadlock or serialization failure: the write may run again."""
    orig = getattr(exc, 'orig', None)
    args = getattr(orig, 'args', ())
    if args and args[0] in _MYSQL_RETRYABLE:
        return True
    # PostgreSQL serialization failure / deadlock detected.
    return getattr(orig, 'sqlstate', None) in ('40001', '40P01')


# MySQL/MariaDB errors of a server that cannot serve now and will again:
# too many connections (1040), a Galera node not ready or not in the
# primary component (1047), a shutdown in progress (1053), read-only
# during a failover (1290, 1836), a connection killed (1927), cannot
# connect (2002, 2003), server gone away (2006), connection lost during a
# query (2013, 2055), dropped for inactivity (4031). A connection refused
# for its credentials or database (1044, 1045, 1049) too, as on
# PostgreSQL, whose driver tells no refusal from another: the server
# checked both when it started, so they changed under it.
_MYSQL_UNAVAILABLE = frozenset((1040, 1044, 1045, 1047, 1049, 1053, 1290,
                                1836, 1927, 2002, 2003, 2006, 2013, 2055,
                                4031))
# PostgreSQL SQLSTATEs of the same: its connection exceptions (class 08),
# too many connections (53300), an administrator's or a crash's shutdown
# (57P01, 57P02), starting up or in recovery (57P03), a standby that took
# the address reached read-only (25006).
_PG_UNAVAILABLE = frozenset(('53300', '57P01', '57P02', '57P03', '25006'))
_PG_CONNECTION_CLASS = '08'


class Unavailable(Exception):
    """The database could not be reached or could not serve: a request
    meeting it is answered 503, not 500. ``orig`` is the driver's error,
    as on SQLAlchemy's exceptions."""

    def __init__(self, cause):
        super().__init__(str(cause))
        self.orig = getattr(cause, 'orig', None) or cause


class CommitOutcomeUnknown(Unavailable):
    """The connection was lost while a write committed: whether the
    database applied it is not known. ``consumers``: the uuids of the
    consumers whose allocations it wrote, when the writer says."""

    consumers = ()


def is_unavailable(exc):
    """Whether ``exc`` says the database is unreachable, restarting or
    failing over (a 503) rather than a fault of the request or the
    server (a 500)."""
    if isinstance(exc, (Unavailable, sa.exc.TimeoutError,
                        sa.exc.DisconnectionError)):
        return True
    if not isinstance(exc, sa.exc.DBAPIError):
        return False
    # SQLAlchemy's classification, which the engine's handle_error
    # listener extends with not_serving().
    return exc.connection_invalidated or not_serving(exc.orig)


def renew_pool(engine):
    """Discard the pool, as SQLAlchemy does on disconnects it meets itself."""
    engine.dispose()


def not_serving(orig):
    """Whether the driver's error ``orig`` is one of a database that
    cannot serve now: connection refused or lost, shutting down,
    starting, read-only or not ready during a failover."""
    args = getattr(orig, 'args', ())
    if args and args[0] in _MYSQL_UNAVAILABLE:
        return True
    if not hasattr(orig, 'sqlstate'):
        return False
    sqlstate = orig.sqlstate
    if sqlstate is None:
        # psycopg's errors without a SQLSTATE come from libpq, not the
        # server: the connection failed or was lost. Its OperationalError
        # only: an InterfaceError is a misuse of the connection.
        return any(cls.__name__ == 'OperationalError'
                   for cls in type(orig).__mro__)
    return (sqlstate in _PG_UNAVAILABLE
            or sqlstate.startswith(_PG_CONNECTION_CLASS))


@contextlib.contextmanager
def _driver_autocommit(conn):
    """psycopg's connection in autocommit for the block, set on the
    driver: SQLAlchemy's isolation level option, and its reset when the
    pool takes the connection back, cost a read far more."""
    raw = conn.connection.driver_connection
    raw.autocommit = True
    try:
        yield
    finally:
        _end_driver_autocommit(conn, raw)


def _end_driver_autocommit(conn, raw):
    # Back to transactions before the pool has the connection again; one
    # lost meanwhile is not used again.
    if conn.invalidated:
        return
    try:
        raw.autocommit = False
    except conn.dialect.loaded_dbapi.Error as exc:
        conn.invalidate(exc)


class Database:
    """The engine plus the per-request transaction helpers."""

    def __init__(self, engine, write_retries=10):
        self.engine = engine
        self.write_retries = write_retries
        # Called with the reason of every re-run (metrics.Recorder's
        # write_retried); None costs nothing.
        self.on_retry = None
        # In-memory SQLite is one shared connection: one transaction at a
        # time, or threads would interleave statements in it.
        single = isinstance(engine.pool, pool.StaticPool)
        self._lock = threading.RLock() if single else contextlib.nullcontext()
        # PostgreSQL's default isolation, READ COMMITTED, gives every
        # statement its own snapshot whether or not a transaction holds
        # them, so a read needs no BEGIN and COMMIT: two of the four round
        # trips of a scheduler's candidate read. MySQL's REPEATABLE READ
        # and SQLite do give a transaction one snapshot, and keep it.
        self._reads_need_transaction = engine.dialect.name != 'postgresql'

    def _connect(self):
        """A pooled connection; Unavailable when none can be had (the
        database refuses, drops or does not answer new connections)."""
        try:
            return self.engine.connect()
        except (sa.exc.DBAPIError, sa.exc.TimeoutError) as exc:
            raise Unavailable(exc) from exc

    @contextlib.contextmanager
    def read(self):
        """A connection for reads. On PostgreSQL each statement sees the
        state committed when it starts, so an answer that must be of one
        state (allocations and the generation a client writes them back
        with) is read by one statement."""
        with self._lock, self._connect() as conn:
            if self._reads_need_transaction:
                with conn.begin():
                    yield conn
            elif conn.dialect.driver == 'psycopg':
                with _driver_autocommit(conn):
                    yield conn
            else:
                yield conn.execution_options(isolation_level='AUTOCOMMIT')

    @contextlib.contextmanager
    def write(self):
        """A connection in a write transaction, committed when the block
        ends; CommitOutcomeUnknown when the connection is lost during
        the commit itself."""
        with self._lock, self._connect() as conn:
            conn = conn.execution_options(**{_WRITE: True})
            body_done = False
            try:
                with conn.begin():
                    yield conn
                    body_done = True
            except sa.exc.DBAPIError as exc:
                # Past the block only the COMMIT was left: the database
                # may have applied it before the connection went.
                if body_done and is_unavailable(exc):
                    raise CommitOutcomeUnknown(exc) from exc
                raise

    def run_write(self, fn, *args, retries=None):
        """Run ``fn(conn, *args)`` in one write transaction, re-running it
        from the start on ``Retry`` or a retryable database error."""
        attempts = 1 + (self.write_retries if retries is None else retries)
        # Counted apart from the other re-runs: a claim that lost two
        # generation races and then met a consumer inserted concurrently
        # answered 500 where one more run would have answered properly.
        duplicate_keys = 0
        for attempt in range(attempts):
            last = attempt == attempts - 1
            try:
                with self.write() as conn:
                    return fn(conn, *args)
            except Retry as exc:
                if last:
                    raise
                self._retried(fn, attempt, exc.reason,
                              _RETRY_TEXTS.get(exc.reason,
                                               'a generation or row changed'))
            except sa.exc.IntegrityError:
                # A concurrent insert of the same key: re-run, and the
                # re-run's own checks give the proper answer (e.g. 409).
                duplicate_keys += 1
                if duplicate_keys > _INTEGRITY_RETRIES or last:
                    raise
                self._retried(fn, attempt, DUPLICATE_KEY,
                              'a concurrent insert of a key')
            except sa.exc.DBAPIError as exc:
                if last or not is_retryable(exc):
                    raise
                self._retried(fn, attempt, retry_label(exc),
                              _retry_reason(exc))
            time.sleep(retry_pause(attempt))

    def _retried(self, fn, attempt, label, text):
        _log_retry(fn, attempt, text)
        if self.on_retry is not None:
            self.on_retry(label)


# The longest pause before a write runs again, and the first's bound.
RETRY_PAUSE_FIRST = 0.005
RETRY_PAUSE_MAX = 0.2


def retry_pause(attempt):
    """Seconds before re-running a write that failed ``attempt + 1`` times:
    random below a doubling bound, as writers re-run at once collide again."""
    return random.uniform(0, min(RETRY_PAUSE_MAX,
                                 RETRY_PAUSE_FIRST * 2 ** attempt))


# The word operators (and benchmarks/replicated_writes.py) count: one
# line per re-run write, so that conflicts between API hosts show in the
# logs rather than only as slower answers.
RETRY_LOG_MARKER = 'Write retried'


def _log_retry(fn, attempt, reason):
    LOG.info('%s (%s, attempt %d): %s', RETRY_LOG_MARKER,
             getattr(fn, '__name__', 'write'), attempt + 1, reason)


def retry_label(exc):
    """The reason label of a retryable database error."""
    orig = getattr(exc, 'orig', None)
    args = getattr(orig, 'args', ())
    if args and args[0] == 1205:
        return LOCK_WAIT_TIMEOUT
    if getattr(orig, 'sqlstate', None) == '40001':
        return SERIALIZATION_FAILURE
    return DEADLOCK


def _retry_reason(exc):
    """A short name for a retryable database error: a Galera node refusing
    a commit certified against another node's reports a deadlock (1213)
    at COMMIT, as InnoDB reports a local lock cycle."""
    orig = getattr(exc, 'orig', None)
    args = getattr(orig, 'args', ())
    if args and args[0] == 1213:
        return 'deadlock (MySQL 1213)'
    if args and args[0] == 1205:
        return 'lock wait timeout (MySQL 1205)'
    return 'serialization failure or deadlock (SQLSTATE %s)' % getattr(
        orig, 'sqlstate', '?')


@contextlib.contextmanager
def zero_is_an_id(conn):
    """Around writes of id 0 (VCPU's, the first standard class) into an
    auto-increment column, which MySQL otherwise takes for "the next
    id"; this connection's mode is put back afterwards (it returns to
    the pool). Upstream's sync sets the same mode."""
    if conn.dialect.name != 'mysql':
        yield
        return
    mode = conn.exec_driver_sql('SELECT @@SESSION.sql_mode').scalar()
    conn.exec_driver_sql(
        "SET SESSION sql_mode = CONCAT_WS(',', @@SESSION.sql_mode, "
        "'NO_AUTO_VALUE_ON_ZERO')")
    try:
        yield
    finally:
        conn.execute(sa.text('SET SESSION sql_mode = :mode'),
                     {'mode': mode})
