# SPDX-License-Identifier: Apache-2.0
"""``/healthcheck``: oslo.middleware's healthcheck, with a backend that
asks the worker's database.

oslo.middleware's ``Healthcheck`` answers the path with its own
``[healthcheck]`` options, before authentication, as other OpenStack
services expose it. Its backend ``placement_database``
(``DatabaseHealthcheck``, enabled by default) runs ``SELECT 1`` through
the worker's ``Database``. A database that is gone can make that hang
rather than fail, so the probe runs in a thread of its own and the
request waits at most ``[healthcheck] database_timeout``
(``DeadlineProbe``).
"""

import contextlib
import contextvars
import logging
import os
import sqlite3
import threading
import time
import urllib.parse

from oslo_config import cfg
from oslo_middleware import healthcheck
from oslo_middleware.healthcheck import opts as healthcheck_opts
from oslo_middleware.healthcheck import pluginbase

LOG = logging.getLogger(__name__)

PATH = '/healthcheck'
# The backend's name in [healthcheck] backends (setup.cfg's entry point).
BACKEND = 'placement_database'
GROUP = 'healthcheck'
OK = 'OK'
UNAVAILABLE = 'DATABASE UNAVAILABLE'

OPTS = [
    cfg.FloatOpt('database_timeout', default=0.5, min=0.05, max=30.0,
                 help='Seconds /healthcheck waits for the database to '
                      'answer before it answers 503 (placement_database '
                      'backend). Keep it below the probe\'s own timeout '
                      '(Kubernetes: timeoutSeconds, 1 by default).'),
]


def register_opts(conf):
    """oslo.middleware's [healthcheck] options (the same objects its
    middleware registers again), ours, and our backend as the default."""
    conf.register_opts(healthcheck_opts.HEALTHCHECK_OPTS, group=GROUP)
    conf.register_opts(OPTS, group=GROUP)
    conf.set_default('backends', [BACKEND], group=GROUP)


def set_lib_defaults():
    """The default the sample file generator shows for ``backends``."""
    cfg.set_defaults(healthcheck_opts.HEALTHCHECK_OPTS, backends=[BACKEND])


# The Database the backend being built belongs to, and the backends
# built for it. stevedore builds backends with the configuration alone,
# inside Healthcheck's constructor; ``middleware`` sets this around that
# call.
_BUILDING_FOR = contextvars.ContextVar('osc_placement_health_database')


class _Wiring:
    __slots__ = ('db', 'built')

    def __init__(self, db):
        self.db = db
        self.built = []


def middleware(app, conf, db):
    """``app``, with ``PATH`` answered by oslo.middleware's Healthcheck
    whose database backend asks ``db``.

    Healthcheck wraps ``app`` rather than standing alone: a request it
    ignores (a source outside ``allowed_source_ranges``, a proxied one
    with ``ignore_proxied_requests``) goes on to ``app``, which answers
    it as any other path (401 without a token)."""
    wiring = _Wiring(db)
    token = _BUILDING_FOR.set(wiring)
    try:
        check = healthcheck.Healthcheck(app, conf)
    finally:
        _BUILDING_FOR.reset(token)
    if BACKEND in conf.healthcheck.backends and not wiring.built:
        # stevedore skips a backend it cannot find: /healthcheck would
        # answer 200 without asking the database.
        LOG.error('The %s healthcheck backend was not loaded: /healthcheck '
                  'does not check the database. Is osc-placement installed '
                  '(its entry points) where the server runs?', BACKEND)

    def route(environ, start_response):
        if environ.get('PATH_INFO') == PATH:
            return check(environ, start_response)
        return app(environ, start_response)
    return route


class DatabaseResult(pluginbase.HealthcheckResult):
    """The database backend's answer; the detailed output names its
    class, so it tells which backend spoke."""


class DatabaseHealthcheck(pluginbase.HealthcheckBaseExtension):
    """oslo.middleware healthcheck backend: the worker's database answers
    ``SELECT 1`` within ``[healthcheck] database_timeout`` seconds."""

    def __init__(self, oslo_conf, conf):
        super().__init__(oslo_conf, conf)
        oslo_conf.register_opts(OPTS, group=GROUP)
        wiring = _BUILDING_FOR.get(None)
        if wiring is None:
            raise RuntimeError('the %s healthcheck backend checks the '
                               'database of osc-placement\'s server and '
                               'is built by it only' % BACKEND)
        timeout = self._conf_get('database_timeout')
        self._probe = DeadlineProbe(probe_for(wiring.db, timeout), timeout)
        self._healthy = True
        wiring.built.append(self)

    def healthcheck(self, server_port):
        outcome = self._probe.check()
        self._log_change(outcome)
        return DatabaseResult(available=outcome.available,
                              reason=OK if outcome.available else UNAVAILABLE,
                              details=outcome.details)

    def _log_change(self, outcome):
        """One line when the answer changes, so the log says why even
        when the response does not (``detailed`` off)."""
        if outcome.available == self._healthy:
            return
        self._healthy = outcome.available
        if outcome.available:
            LOG.info('Health check: the database answers again (%s)',
                     outcome.details)
        else:
            LOG.warning('Health check: the database does not answer: %s',
                        outcome.details)


def probe_for(db, timeout):
    """The function that asks ``db`` once, raising if it cannot."""
    url = db.engine.url
    if url.get_backend_name() == 'sqlite' and url.database not in (
            None, '', ':memory:'):
        return _sqlite_file_probe(url.database, timeout)
    return _select_one_probe(db)


def _select_one_probe(db):
    def probe():
        # db.read(): a pooled connection as a request gets one (on
        # PostgreSQL without a transaction; the in-memory SQLite's
        # lock).
        with db.read() as conn:
            conn.exec_driver_sql('SELECT 1').scalar()
    return probe


def _sqlite_file_probe(path, timeout):
    """A probe of the file itself, as SQLite has no server to refuse: pooled
    connections answer from a removed file, and a new one would create an
    empty one, so it opens the file afresh, read-write, never creating, and
    reads its schema. A removed, unreadable or foreign file fails; a lock
    held past the deadline (a writer in exclusive mode) is no answer."""
    uri = 'file:%s?mode=rw' % urllib.parse.quote(os.path.abspath(path))

    def probe():
        with contextlib.closing(sqlite3.connect(
                uri, uri=True, timeout=timeout)) as conn:
            conn.execute('SELECT count(*) FROM sqlite_master').fetchone()
    return probe


class Outcome:
    __slots__ = ('available', 'details')

    def __init__(self, available, details):
        self.available = available
        self.details = details


class _Attempt:
    """One run of the probe: when it started, and its outcome once
    ``done`` is set."""

    __slots__ = ('started', 'done', 'outcome')

    def __init__(self):
        self.started = time.monotonic()
        self.done = threading.Event()
        self.outcome = None


class DeadlineProbe:
    """Runs ``probe`` in a thread of its own and waits for it at most
    ``timeout`` seconds from the moment it started.

    One run at a time per worker: a check that arrives while a run is in
    flight waits for that run's outcome (until the same deadline), so
    concurrent probes cost one statement. A run that hangs (packets to
    the database vanish) holds its thread until the driver or the
    network gives up; the checks meanwhile answer at once that it has not
    answered, instead of starting more threads that would hang too."""

    def __init__(self, probe, timeout):
        self._probe = probe
        self._timeout = timeout
        self._lock = threading.Lock()
        self._attempt = None

    def check(self):
        attempt = self._attempt_to_wait_for()
        left = attempt.started + self._timeout - time.monotonic()
        if attempt.done.wait(max(left, 0.0)):
            return attempt.outcome
        waited = time.monotonic() - attempt.started
        return Outcome(False, 'no answer in %.2f s (timeout %.2f s)'
                       % (waited, self._timeout))

    def _attempt_to_wait_for(self):
        with self._lock:
            attempt = self._attempt
            if attempt is None or attempt.done.is_set():
                attempt = self._attempt = _Attempt()
                threading.Thread(target=self._run, args=(attempt,),
                                 name='healthcheck-database',
                                 daemon=True).start()
            return attempt

    def _run(self, attempt):
        try:
            self._probe()
            attempt.outcome = Outcome(True, 'answered in %.1f ms' % (
                (time.monotonic() - attempt.started) * 1000))
        except Exception as exc:
            attempt.outcome = Outcome(False, describe(exc))
        finally:
            attempt.done.set()


# Longest error text kept in the details.
DETAILS_CHARS = 300


def describe(exc):
    """The driver's error, on one line: ``OperationalError: connection
    to server at "10.0.0.5", port 5432 failed: Connection refused``."""
    cause = getattr(exc, 'orig', None) or exc
    text = ' '.join(str(cause).split())
    return ('%s: %s' % (type(cause).__name__, text))[:DETAILS_CHARS]
