# SPDX-License-Identifier: Apache-2.0
"""Statements sent through psycopg itself, several in one round trip.

SQLAlchemy's execution of a statement costs several times the Python of
the driver's, and each statement it sends is a round trip of its own. The
hottest statements of the API (the candidate engine's reads, a
scheduler's claim) are therefore compiled once to the driver's text and
sent here: prepared, with binary results, in one psycopg pipeline. The
connection stays SQLAlchemy's, inside its transaction; errors come out as
SQLAlchemy's, so the callers' handling (re-runs, 503s) is the same as for
any other statement.

PostgreSQL through psycopg only (``available``); callers keep the
SQLAlchemy path for the other databases and drivers.
"""

import sqlalchemy as sa

from osc_placement.server.db import engine as db_engine

_COMMIT = b'COMMIT'


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
    one round trip; with ``commit``, the transaction's COMMIT too.

    A statement that fails stops the rest (and the COMMIT): the error is
    raised as SQLAlchemy's, and a connection it broke is dropped from the
    pool. An error the database answered means nothing was committed;
    a connection lost while a COMMIT was on its way leaves that unknown:
    CommitOutcomeUnknown, as db.write() raises for its own COMMIT."""
    raw = conn.connection.driver_connection
    try:
        if len(statements) == 1 and not commit:
            # One statement needs no pipeline, whose set-up and sync cost
            # a noticeable part of a short read.
            [(text, params)] = statements
            cursor = raw.cursor(binary=True)
            cursor.execute(text, _with_array_texts(params), prepare=True)
            return [cursor.fetchall()]
        with raw.pipeline():
            cursors = [raw.cursor(binary=True) for _ in statements]
            for cursor, (text, params) in zip(cursors, statements):
                cursor.execute(text, _with_array_texts(params),
                               prepare=True)
            if commit:
                # Sent as a statement: the driver's commit() would sync
                # the pipeline, and leaving it would sync it again, one
                # more round trip.
                raw.execute(_COMMIT)
        return [cursor.fetchall() for cursor in cursors]
    except conn.dialect.loaded_dbapi.Error as exc:
        raise _as_sqlalchemy_error(conn, raw, statements, exc,
                                   commit) from exc


def _with_array_texts(params):
    """``params`` with each list of strings, integers and None as a
    PostgreSQL array literal: the statements cast them, and the driver's
    list adaptation looks for types per call, much of a claim's Python."""
    if not params:
        return params
    return {name: _array_text(value) if type(value) is list else value
            for name, value in params.items()}


def _array_text(values):
    items = []
    for value in values:
        if value is None:
            items.append('NULL')
        elif type(value) is int:
            items.append(str(value))
        elif type(value) is str:
            items.append('"%s"' % value.replace('\\', '\\\\').replace(
                '"', '\\"'))
        else:
            # Anything else keeps the driver's adaptation.
            return values
    return '{%s}' % ','.join(items)


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
