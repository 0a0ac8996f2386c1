# SPDX-License-Identifier: Apache-2.0
"""The engine and its pool, and the read and write transactions
(server/db/engine.py)."""

import fixtures
import sqlalchemy as sa
import testtools

from osc_placement.server.db import engine as db_engine
from osc_placement.server.db import tables
from osc_placement.server import errors
from osc_placement.server.objects import allocation
from tests.server import fixtures as api_fixtures


class TestIdleConnections(testtools.TestCase):
    """A pooled connection that died while idle in the pool is replaced
    before use; one back in use within IDLE_PING_SECONDS is not pinged
    (the round trip a busy server saves)."""

    def setUp(self):
        super().setUp()
        api_fixtures.database()
        self.engine = db_engine.create_engine(api_fixtures._state['url'])
        self.addCleanup(self.engine.dispose)

    def _kill_pooled_connection(self):
        """Use a connection, return it to the pool, then close its
        driver connection behind the pool's back (as a restarted
        database would)."""
        with self.engine.connect() as conn:
            conn.execute(sa.text('SELECT 1'))
            raw = conn.connection.dbapi_connection
        raw.close()

    def _select_one(self):
        with self.engine.connect() as conn:
            return conn.execute(sa.text('SELECT 1')).scalar()

    def test_idle_dead_connection_is_replaced(self):
        self.useFixture(fixtures.MonkeyPatch(
            'osc_placement.server.db.engine.IDLE_PING_SECONDS', 0))
        self._kill_pooled_connection()
        self.assertEqual(1, self._select_one())

    def test_recently_used_connection_is_not_pinged(self):
        self.useFixture(fixtures.MonkeyPatch(
            'osc_placement.server.db.engine.IDLE_PING_SECONDS', 3600))
        self._kill_pooled_connection()
        # No ping: the dead connection is handed out and the statement
        # fails; the pool then starts afresh.
        self.assertRaises(sa.exc.DBAPIError, self._select_one)
        self.assertEqual(1, self._select_one())


class TestReadsAndWrites(testtools.TestCase):
    """Reads may skip the transaction (PostgreSQL), but the connection
    they used must go back to the pool transactional: a write that fails
    after its first statement still leaves nothing behind."""

    def test_failed_write_after_reads_changes_nothing(self):
        db = api_fixtures.database()
        api_fixtures.reset_database(db)
        count = sa.select(sa.func.count()).select_from(tables.traits)
        # Every pooled connection serves a read first.
        for _ in range(3):
            with db.read() as conn:
                before = conn.execute(count).scalar()
        with testtools.ExpectedException(RuntimeError):
            with db.write() as conn:
                conn.execute(tables.traits.insert().values(
                    name='CUSTOM_NEVER_KEPT', created_at=tables.utcnow()))
                raise RuntimeError('the request fails after a write')
        with db.read() as conn:
            self.assertEqual(before, conn.execute(count).scalar())


class TestReplaceRollback(testtools.TestCase):
    """The installed SQLAlchemy rolls back through the dialect's
    ``do_rollback`` that replace_rollback sets, both when a transaction
    ends without a commit and when the pool resets a connection handed
    back to it. Any backend shows it; this one needs no server."""

    def setUp(self):
        super().setUp()
        self.engine = sa.create_engine('sqlite://')
        self.addCleanup(self.engine.dispose)
        # The first connection's set-up rolls back too; done before.
        self.engine.connect().close()
        self.calls = []
        original = self.engine.dialect.do_rollback

        def recording(dbapi_conn):
            self.calls.append(dbapi_conn)
            original(dbapi_conn)
        db_engine.replace_rollback(self.engine, recording)

    def test_a_transaction_rolls_back_through_it(self):
        with self.engine.connect() as conn:
            conn.execute(sa.text('SELECT 1'))
            conn.rollback()
            self.assertEqual(1, len(self.calls))

    def test_the_pool_resets_through_it(self):
        raw = self.engine.raw_connection()
        raw.cursor().execute('SELECT 1')
        raw.close()
        self.assertEqual(1, len(self.calls))


class TestFailedWriteKeepsPreparedStatements(testtools.TestCase):
    """A failed write rolls back and leaves the connection as it was; on
    PostgreSQL that includes the statements the driver prepared on it,
    which psycopg's own rollback() would have deallocated."""

    def setUp(self):
        super().setUp()
        api_fixtures.database()
        # Its own pool: used one request at a time, it holds one
        # connection, so every step below runs on that one.
        self.db = db_engine.Database(db_engine.create_engine(
            api_fixtures._state['url']))
        self.addCleanup(self.db.engine.dispose)

    def _prepared_names(self, conn):
        if conn.dialect.name != 'postgresql':
            return set()
        return set(conn.execute(sa.text(
            'SELECT name FROM pg_prepared_statements')).scalars())

    def test_failed_write_keeps_prepared_statements(self):
        count = sa.select(sa.func.count()).select_from(tables.traits)
        # psycopg prepares a statement on its fifth execution.
        for _ in range(6):
            with self.db.read() as conn:
                before = conn.execute(count).scalar()
        with self.db.read() as conn:
            prepared = self._prepared_names(conn)
        with testtools.ExpectedException(RuntimeError):
            with self.db.write() as conn:
                conn.execute(tables.traits.insert().values(
                    name='CUSTOM_ROLLED_BACK', created_at=tables.utcnow()))
                raise RuntimeError('a 409 after the first write')
        with self.db.read() as conn:
            self.assertEqual(before, conn.execute(count).scalar())
            self.assertEqual(prepared, self._prepared_names(conn))
        if self.db.engine.dialect.name == 'postgresql':
            self.assertTrue(prepared)


class TestRetryPause(testtools.TestCase):
    """A write that runs again waits first, a random time under a bound
    that doubles with each attempt, so that writers that collided do not
    collide again at once."""

    def test_bounds(self):
        for attempt in range(12):
            bound = min(db_engine.RETRY_PAUSE_MAX,
                        db_engine.RETRY_PAUSE_FIRST * 2 ** attempt)
            pauses = [db_engine.retry_pause(attempt) for _ in range(200)]
            self.assertTrue(all(0 <= p <= bound for p in pauses), attempt)
            # Random, not fixed: writers spread out.
            self.assertGreater(len(set(pauses)), 150)

    def test_each_retry_pauses(self):
        api_fixtures.database()
        db = db_engine.Database(db_engine.create_engine(
            api_fixtures._state['url']), write_retries=3)
        self.addCleanup(db.engine.dispose)
        pauses = []
        self.useFixture(fixtures.MonkeyPatch(
            'osc_placement.server.db.engine.retry_pause',
            lambda attempt: pauses.append(attempt) or 0))
        calls = []

        def conflicting(conn):
            calls.append(conn)
            raise db_engine.Retry()
        self.assertRaises(db_engine.Retry, db.run_write, conflicting)
        self.assertEqual(4, len(calls))
        self.assertEqual([0, 1, 2], pauses)


def database_without_pauses(test, write_retries):
    """A Database of its own on the test database, re-running a write up
    to ``write_retries`` times with no pause before each re-run."""
    api_fixtures.database()
    db = db_engine.Database(db_engine.create_engine(
        api_fixtures._state['url']), write_retries=write_retries)
    test.addCleanup(db.engine.dispose)
    test.useFixture(fixtures.MonkeyPatch(
        'osc_placement.server.db.engine.retry_pause', lambda attempt: 0))
    return db


class TestRerunsAfterDuplicateKeys(testtools.TestCase):
    """A write re-runs after a concurrent insert of a key it inserts
    (its re-run's own checks then answer), up to _INTEGRITY_RETRIES times
    in one call, however many times it re-ran for other reasons."""

    def setUp(self):
        super().setUp()
        self.db = database_without_pauses(self, write_retries=10)

    def writer(self, failures):
        """A write raising each of ``failures`` in turn, then answering
        how many runs it took."""
        runs = []

        def write(conn):
            runs.append(conn)
            if len(runs) <= len(failures):
                raise failures[len(runs) - 1]
            return len(runs)
        return write

    @staticmethod
    def duplicate_key():
        return sa.exc.IntegrityError('INSERT INTO consumers', {},
                                     Exception(1062, 'Duplicate entry'))

    def test_duplicate_key_after_lost_generation_races(self):
        # Seen on MariaDB: a claim lost two generation races, then found
        # its consumer inserted by another claim, and answered 500.
        write = self.writer([db_engine.Retry(), db_engine.Retry(),
                             self.duplicate_key()])
        self.assertEqual(4, self.db.run_write(write))

    def test_duplicate_keys_are_bounded(self):
        failures = [self.duplicate_key()
                    for _ in range(db_engine._INTEGRITY_RETRIES + 1)]
        self.assertRaises(sa.exc.IntegrityError, self.db.run_write,
                          self.writer(failures))
        self.assertEqual(
            db_engine._INTEGRITY_RETRIES + 1,
            self.db.run_write(self.writer(failures[:-1])))


class TestExhaustedConflicts(testtools.TestCase):
    """An allocation write that still loses after its re-runs answers
    409 ``placement.concurrent_update``, whether its last run lost a
    generation race or to a deadlock (not a 500)."""

    def setUp(self):
        super().setUp()
        self.db = database_without_pauses(self, write_retries=1)

    def check(self, fn):
        exc = self.assertRaises(errors.Conflict, allocation.write_or_409,
                                self.db, fn)
        self.assertEqual(errors.CONCURRENT_UPDATE, exc.code)

    def test_generation_races(self):
        def losing(conn):
            raise db_engine.Retry()
        self.check(losing)

    def test_deadlocks(self):
        class Deadlock(Exception):
            pass

        def losing(conn):
            raise sa.exc.OperationalError(
                'SELECT 1', {}, Deadlock(1213, 'Deadlock found'))
        self.check(losing)

    def test_other_errors_are_not_conflicts(self):
        def failing(conn):
            raise sa.exc.OperationalError('SELECT 1', {},
                                          Exception(2006, 'gone away'))
        self.assertRaises(sa.exc.OperationalError, allocation.write_or_409,
                          self.db, failing)
