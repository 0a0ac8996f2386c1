# SPDX-License-Identifier: Apache-2.0
"""db/pipeline.py on a real PostgreSQL, through db/libpq.py: values come
back as sent, several statements make one round trip, statements are
prepared once per connection and no more than PREPARED_MAX of them, an
error stops the rest and commits nothing, statements deallocated under
the server are prepared again, and a ROLLBACK keeps them.

In the suite's PostgreSQL pass only (``load_tests``)::

    OSC_PLACEMENT_TEST_DB_URL=postgresql+psycopg://postgres@127.0.0.1/ \\
        .venv/bin/python -m testtools.run tests.server.test_libpq
"""

import datetime
import decimal
import tempfile

import fixtures
import psycopg
from psycopg import pq
import sqlalchemy as sa
import testtools

from osc_placement.server import conf as conf_mod
from osc_placement.server.db import engine as db_engine
from osc_placement.server.db import libpq
from osc_placement.server.db import pipeline
from tests.server import fixtures as server_fixtures

_SCRATCH = ('CREATE TEMPORARY TABLE IF NOT EXISTS scratch '
            '(id INTEGER PRIMARY KEY)')
_INSERT = ('INSERT INTO scratch (id) VALUES (%(id)s::INTEGER) '
           'RETURNING id')


class PipelineCase(testtools.TestCase):
    """On an engine of its own, of one pooled connection: the tests read
    and change what that connection holds prepared."""

    def setUp(self):
        super().setUp()
        url = server_fixtures.database().engine.url
        conf = conf_mod.make_conf(url.render_as_string(hide_password=False),
                                  sync_on_startup=False)
        conf.set_override('max_pool_size', 1, 'placement_database')
        conf.set_override('max_overflow', 0, 'placement_database')
        engine = db_engine.create_engine(url, conf.placement_database)
        self.addCleanup(engine.dispose)
        self.db = db_engine.Database(engine)

    def run_read(self, statements):
        with self.db.read() as conn:
            return pipeline.run(conn, statements)

    def ours_on_server(self):
        """The names of this module's statements the session holds."""
        with self.db.read() as conn:
            [[(names,)]] = pipeline.run(conn, [(
                "SELECT array_agg(name ORDER BY name) FROM "
                "pg_prepared_statements WHERE name LIKE 'osc!_%%' "
                "ESCAPE '!'", None)])
        # The query above is one of them.
        return set(names or ())

    def ours_known(self):
        with self.db.engine.connect() as conn:
            return {name.decode() for name in
                    libpq.prepared_on(conn.connection).values()}


class TestValues(PipelineCase):

    def test_values_come_back_as_sent(self):
        moment = datetime.datetime(2026, 12, 6, 5, 30, 1, 250)
        sent = {'text': 'q"r\\s,{t} café', 'big': 2 ** 40, 'yes': True,
                'ratio': 1.5, 'exact': decimal.Decimal('16.0'),
                'moment': moment, 'nothing': None,
                'ids': [3, None, 2 ** 40], 'names': ['a,b', 'NULL', '"', ''],
                'empty': [], 'whole': 4.0, 'wholes': [1.0, 2.0]}
        [[row]] = self.run_read([(
            'SELECT %(text)s::VARCHAR, %(big)s::BIGINT, %(yes)s::BOOLEAN, '
            '%(ratio)s::FLOAT, %(exact)s::NUMERIC, %(moment)s::TIMESTAMP, '
            '%(nothing)s::INTEGER, %(ids)s::BIGINT[], %(names)s::VARCHAR[], '
            '%(empty)s::INTEGER[], %(whole)s::INTEGER, '
            '%(wholes)s::INTEGER[]', sent)])
        self.assertEqual(
            ('q"r\\s,{t} café', 2 ** 40, True, 1.5, decimal.Decimal('16.0'),
             moment, None, [3, None, 2 ** 40], ['a,b', 'NULL', '"', ''], [],
             4, [1, 2]),
            row)

    def test_a_value_no_loader_takes_leaves_the_connection_in_use(self):
        with self.db.read() as conn:
            error = self.assertRaises(
                sa.exc.DBAPIError, pipeline.run, conn,
                [("SELECT 'infinity'::TIMESTAMP", None)])
            self.assertFalse(error.connection_invalidated)
        self.assertFalse(db_engine.is_unavailable(error))
        self.assertEqual([[(1,)]], self.run_read([('SELECT 1', None)]))
        self.assertEqual(1, self.db.engine.pool.checkedin())

    def test_each_statement_has_its_rows(self):
        self.assertEqual(
            [[(1,), (2,)], [], [('x',)]],
            self.run_read([
                ('SELECT generate_series(1, %(n)s::INTEGER)', {'n': 2}),
                ('SELECT 1 WHERE false', None),
                ("SELECT 'x'", None)]))


class TestRoundTrips(PipelineCase):

    def test_statements_go_in_one_round_trip_prepared_once(self):
        statements = [('SELECT %(n)s::INTEGER + 1', {'n': 1}),
                      ('SELECT %(n)s::INTEGER + 2', {'n': 1})]
        self.run_read(statements)
        messages = _sent(self.traced(lambda: self.run_read(statements)))
        # Prepared already: bound and run, and one sync for both.
        self.assertEqual(0, messages.count('Parse'))
        self.assertEqual(2, messages.count('Bind'))
        self.assertEqual(1, messages.count('Sync'))

    def traced(self, action):
        with self.db.engine.connect() as conn:
            pgconn = conn.connection.driver_connection.pgconn
        return _traced(pgconn, action)

    def test_room_is_not_made_with_a_statement_in_use(self):
        self.useFixture(fixtures.MonkeyPatch(
            'osc_placement.server.db.libpq.PREPARED_MAX', 2))
        adding = [('SELECT %d + %%(n)s::INTEGER' % n, {'n': 0})
                  for n in range(4)]
        self.run_read(adding[:1])
        self.run_read(adding[1:2])
        # Both kept ones are in use with a third: none is closed, and
        # only the third is prepared (no exchange sent again).
        answers = []
        trace = self.traced(lambda: answers.extend(
            self.run_read(adding[:3])))
        self.assertEqual([[(0,)], [(1,)], [(2,)]], answers)
        self.assertEqual(1, _sent(trace).count('Parse'))
        self.assertEqual(3, len(self.ours_known()))
        # The next makes room again.
        self.run_read(adding[3:])
        self.assertEqual(2, len(self.ours_known()))

    def test_no_more_than_prepared_max_are_kept(self):
        self.useFixture(fixtures.MonkeyPatch(
            'osc_placement.server.db.libpq.PREPARED_MAX', 3))
        for n in range(6):
            self.assertEqual([[(n,)]], self.run_read(
                [('SELECT %d + %%(n)s::INTEGER' % n, {'n': 0})]))
        # The query listing them is prepared too, in place of another.
        on_server = self.ours_on_server()
        self.assertEqual(3, len(on_server))
        self.assertEqual(self.ours_known(), on_server)


class TestErrors(PipelineCase):

    def setUp(self):
        super().setUp()
        with self.db.write() as conn:
            conn.exec_driver_sql(_SCRATCH)

    def count(self):
        with self.db.read() as conn:
            return conn.exec_driver_sql('SELECT count(*) FROM scratch'
                                        ).scalar()

    def test_an_error_stops_the_rest_and_commits_nothing(self):
        with self.db.write() as conn:
            error = self.assertRaises(sa.exc.DBAPIError, pipeline.run, conn, [
                (_INSERT, {'id': 1}),
                ('SELECT no_such_column FROM scratch', None),
                (_INSERT, {'id': 2})], commit=True)
        self.assertEqual('42703', error.orig.sqlstate)
        self.assertEqual(0, self.count())

    def test_a_write_begins_with_its_first_statements(self):
        with self.db.write() as conn:
            raw = conn.connection.driver_connection
            trace = _traced(raw.pgconn, lambda: pipeline.run(
                conn, [(_INSERT, {'id': 1})]))
            self.assertEqual('INTRANS', raw.info.transaction_status.name)
            pipeline.run(conn, [(_INSERT, {'id': 2})], commit=True)
            self.assertEqual('IDLE', raw.info.transaction_status.name)
        self.assertEqual(2, self.count())
        # One sync for the BEGIN and the insert.
        self.assertEqual((1, 1), (_sent(trace).count('BEGIN'),
                                  _sent(trace).count('Sync')))

    def test_the_begin_keeps_the_connections_isolation_level(self):
        with self.db.write() as conn:
            raw = conn.connection.driver_connection
            raw.isolation_level = psycopg.IsolationLevel.SERIALIZABLE
            self.addCleanup(setattr, raw, 'isolation_level', None)
            [[(level,)]] = pipeline.run(conn, [(
                "SELECT current_setting('transaction_isolation')", None)])
        self.assertEqual('serializable', level)

    def test_a_transaction_under_way_gets_no_other_begin(self):
        with self.db.engine.connect() as conn:
            with conn.begin() as transaction:
                conn.exec_driver_sql('INSERT INTO scratch VALUES (1)')
                trace = _traced(conn.connection.driver_connection.pgconn,
                                lambda: pipeline.run(
                                    conn, [(_INSERT, {'id': 2})]))
                transaction.rollback()
        self.assertEqual(0, self.count())
        self.assertEqual(0, _sent(trace).count('BEGIN'))


class TestStatementsKept(PipelineCase):

    def deallocate_all(self):
        with self.db.engine.connect() as conn:
            libpq.command(conn.connection.driver_connection,
                          b'DEALLOCATE ALL')

    def test_statements_lost_outside_a_transaction_are_prepared_again(self):
        statements = [('SELECT %(n)s::INTEGER', {'n': 7})]
        self.run_read(statements)
        self.deallocate_all()
        self.assertEqual([[(7,)]], self.run_read(statements))

    def test_statements_lost_inside_a_transaction_rerun_the_write(self):
        statements = [('SELECT %(n)s::INTEGER', {'n': 7})]
        self.run_read(statements)
        self.deallocate_all()
        reasons = []
        self.db.on_retry = reasons.append
        self.assertEqual([[(7,)]], self.db.run_write(
            lambda conn: pipeline.run(conn, statements)))
        self.assertEqual([db_engine.STATEMENTS_LOST], reasons)

    def test_a_rollback_keeps_every_prepared_statement(self):
        """psycopg drops all the session's prepared statements when it
        runs a ROLLBACK it does not remember running (here it remembers
        one statement): the engine's rollback goes past it."""
        sa.event.listen(self.db.engine, 'connect', _remember_one)
        self.db.engine.dispose()
        with self.db.engine.connect() as conn:
            # One of psycopg's own.
            conn.connection.driver_connection.execute('SELECT 41 + 1',
                                                      prepare=True)
        self.run_read([('SELECT %(n)s::INTEGER', {'n': 7})])
        before = self.all_on_server()
        with self.db.engine.connect() as conn:
            conn.begin()
            # More distinct statements than psycopg remembers: it forgets
            # the ROLLBACK it ran when the pool took the connection back.
            for n in range(10):
                conn.exec_driver_sql('SELECT %d' % n)
        # Rolled back as the pool resets the connection.
        after = self.all_on_server()
        self.assertTrue(any(name.startswith('_pg3') for name in before))
        self.assertTrue(before <= after, (before, after))

    def all_on_server(self):
        with self.db.read() as conn:
            return set(conn.exec_driver_sql(
                'SELECT name FROM pg_prepared_statements').scalars())


def _traced(pgconn, action):
    """libpq's trace of the messages ``action`` makes on ``pgconn``."""
    with tempfile.TemporaryFile('w+') as trace:
        pgconn.trace(trace.fileno())
        pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS)
        try:
            action()
        finally:
            pgconn.untrace()
        trace.seek(0)
        return trace.read()


def _sent(trace):
    """The messages the client sent, by type; a BEGIN's Parse as BEGIN."""
    sent = []
    for line in trace.splitlines():
        fields = line.split('\t')
        if fields[0] == 'F' and len(fields) > 2:
            begins = fields[2] == 'Parse' and '"BEGIN' in line
            sent.append('BEGIN' if begins else fields[2])
    return sent


def _remember_one(dbapi_conn, record):
    dbapi_conn.prepared_max = 1


def load_tests(loader, standard_tests, pattern):
    return server_fixtures.on_postgresql_only(standard_tests)
