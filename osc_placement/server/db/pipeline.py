# SPDX-License-Identifier: Apache-2.0
"""The hottest statements, several in one round trip (PostgreSQL through
psycopg only: ``available``).

SQLAlchemy's execution of a statement costs several times the Python of
the driver's, and psycopg's own pipeline still costs more Python per
statement than a claim's statement costs the database. The candidate
engine's reads and a scheduler's claim are therefore compiled once to the
driver's text and sent through db/libpq.py. The connection stays
SQLAlchemy's, in its transaction (libpq tells psycopg its state); errors
come out as SQLAlchemy's, so callers' handling (re-runs, 503s) is that of
any other statement.
"""

from psycopg import errors
from psycopg import pq
import sqlalchemy as sa

from osc_placement.server.db import engine as db_engine
from osc_placement.server.db import libpq

_COMMIT = b'COMMIT'
_IDLE = pq.TransactionStatus.IDLE


def available(conn):
    """Whether ``conn`` can send statements here."""
    return conn.dialect.driver == 'psycopg'


def compiled(statement, dialect):
    """(text, default parameters) of ``statement`` for ``dialect``, as
    ``run`` takes them, the caller's parameters merged over."""
    result = statement.compile(dialect=dialect)
    return str(result), dict(result.params)


def run(conn, statements, commit=False):
    """The rows of each statement, (text, parameters or None), sent in
    one round trip; with ``commit``, the transaction's COMMIT last. In a
    transaction not begun yet (a connection not in autocommit, as in
    db.write()), its BEGIN goes first, as psycopg would send it.

    A statement that fails stops the rest (and the COMMIT): the error is
    raised as SQLAlchemy's, and a connection it broke is dropped from the
    pool. An error the database answered means nothing was committed;
    a connection lost while a COMMIT was on its way leaves that unknown:
    CommitOutcomeUnknown, as db.write() raises for its own COMMIT."""
    raw = conn.connection.driver_connection
    prepared = libpq.prepared_on(conn.connection)
    try:
        try:
            return _exchange(raw, prepared, statements, commit)
        except errors.InvalidSqlStatementName:
            # Something deallocated the statements kept prepared (a
            # DISCARD ALL, say): prepared again on the next try, which
            # outside a transaction can be this one.
            if raw.pgconn.transaction_status != _IDLE:
                raise db_engine.Retry(db_engine.STATEMENTS_LOST)
            return _exchange(raw, prepared, statements, commit)
    except conn.dialect.loaded_dbapi.Error as exc:
        raise _as_sqlalchemy_error(conn, raw, statements, exc,
                                   commit) from exc


def _exchange(raw, prepared, statements, commit):
    exchange = libpq.Exchange(raw, prepared)
    if not raw.autocommit and raw.pgconn.transaction_status == _IDLE:
        exchange.command(_begin_of(raw))
    for text, params in statements:
        exchange.statement(text, params)
    if commit:
        exchange.command(_COMMIT)
    return exchange.results()


def _begin_of(raw):
    """The BEGIN psycopg sends on ``raw``: its isolation level and
    access mode, where set."""
    parts = ['BEGIN']
    if raw.isolation_level is not None:
        parts.append('ISOLATION LEVEL ' + raw.isolation_level.name.replace(
            '_', ' '))
    if raw.read_only is not None:
        parts.append('READ ONLY' if raw.read_only else 'READ WRITE')
    return ' '.join(parts).encode()


def _as_sqlalchemy_error(conn, raw, statements, exc, commit):
    # As the engine's own error handling does for statements it sends: a
    # connection that broke, or whose database cannot serve now (see
    # db_engine.not_serving), is not used again, nor any pooled with it.
    if raw.broken or db_engine.not_serving(exc):
        conn.invalidate(exc)
        db_engine.renew_pool(conn.engine)
    error = sa.exc.DBAPIError.instance(
        '; '.join(text for text, _ in statements), None, exc,
        conn.dialect.loaded_dbapi.Error,
        connection_invalidated=conn.invalidated)
    if commit and _no_answer(exc):
        return db_engine.CommitOutcomeUnknown(error)
    return error


def _no_answer(exc):
    """Whether the connection failed before the database answered: an
    error without SQLSTATE (libpq's) that db_engine.not_serving knows."""
    return (getattr(exc, 'sqlstate', None) is None
            and db_engine.not_serving(exc))
