# SPDX-License-Identifier: Apache-2.0
"""A database's schema as plain data, for comparing two databases.

``describe(engine)`` reflects every table: its columns (type as the
database reports it, nullability, server default, autoincrement), its
primary key, unique constraints, foreign keys and indexes, each with its
NAME and columns. Two databases on the same backend have the same schema
when their descriptions are equal; ``differences`` lists where they are
not, one line each, so a failing test says what differs.

Column ORDER is left out on purpose: PostgreSQL cannot reorder a table's
columns in place, and nothing that reads Placement's tables names
columns by position.

``ScratchDatabase`` gives a test an empty database of its own to build a
schema in, on the server OSC_PLACEMENT_TEST_DB_URL names (as the other
server tests) or in a SQLite file.
"""

import os

import fixtures
import sqlalchemy as sa

from benchmarks import databases
from osc_placement.server.db import engine as db_engine
from osc_placement.server.db import legacy_schema


def _column(column, dialect):
    return {'type': column['type'].compile(dialect=dialect),
            'nullable': column['nullable'],
            'default': column.get('default'),
            'autoincrement': column.get('autoincrement')}


def _primary_key(inspector, table):
    pk = inspector.get_pk_constraint(table)
    return {'name': pk.get('name'),
            'columns': tuple(pk['constrained_columns'])}


def _uniques(inspector, table):
    return sorted((u['name'], tuple(u['column_names']))
                  for u in inspector.get_unique_constraints(table))


def _foreign_keys(inspector, table):
    return sorted((fk['name'], tuple(fk['constrained_columns']),
                   fk['referred_table'], tuple(fk['referred_columns']))
                  for fk in inspector.get_foreign_keys(table))


def _indexes(inspector, table):
    # A unique constraint's index is described as the constraint.
    return sorted((ix['name'], tuple(ix['column_names']), bool(ix['unique']))
                  for ix in legacy_schema.plain_indexes(inspector, table))


def describe_table(inspector, table, dialect):
    return {
        'columns': {c['name']: _column(c, dialect)
                    for c in inspector.get_columns(table)},
        'primary_key': _primary_key(inspector, table),
        'unique_constraints': _uniques(inspector, table),
        'foreign_keys': _foreign_keys(inspector, table),
        'indexes': _indexes(inspector, table),
    }


def describe(engine):
    """{table name: description} for every table of the database."""
    with engine.connect() as conn:
        inspector = sa.inspect(conn)
        return {table: describe_table(inspector, table, conn.dialect)
                for table in inspector.get_table_names()}


def _walk(path, left, right, found):
    if isinstance(left, dict) and isinstance(right, dict):
        for key in sorted(set(left) | set(right), key=str):
            if key not in right:
                found.append('%s/%s: only in the first' % (path, key))
            elif key not in left:
                found.append('%s/%s: only in the second' % (path, key))
            else:
                _walk('%s/%s' % (path, key), left[key], right[key], found)
    elif left != right:
        found.append('%s: %r != %r' % (path, left, right))


def differences(first, second):
    """Where two descriptions differ, as lines ('' paths for equal)."""
    found = []
    _walk('', first, second, found)
    return found


def trigger_names(engine):
    """The names of the database's triggers (which reflection leaves
    out), sorted."""
    queries = {
        'sqlite': "SELECT name FROM sqlite_master WHERE type = 'trigger'",
        'postgresql': 'SELECT tgname FROM pg_trigger WHERE NOT tgisinternal',
        'mysql': 'SELECT trigger_name FROM information_schema.triggers '
                 'WHERE trigger_schema = DATABASE()',
    }
    with engine.connect() as conn:
        return sorted(row[0] for row in conn.exec_driver_sql(
            queries[conn.dialect.name]))


DB_URL_ENV = 'OSC_PLACEMENT_TEST_DB_URL'


class ScratchDatabase(fixtures.Fixture):
    """An empty database, dropped at cleanup: on the server that
    OSC_PLACEMENT_TEST_DB_URL names, else a SQLite file. ``url`` is its
    URL, ``engine`` this server's engine for it
    (db/engine.create_engine)."""

    def __init__(self, label):
        super().__init__()
        self.label = label

    def _setUp(self):
        server_url = os.environ.get(DB_URL_ENV, '').strip()
        if server_url:
            self.url = databases.create(server_url, self.label)
            self.addCleanup(databases.drop, self.url)
        else:
            tmp = self.useFixture(fixtures.TempDir()).path
            self.url = 'sqlite:///' + os.path.join(tmp, self.label + '.sqlite')
        # Registered after the drop, so it runs before it.
        self.engine = db_engine.create_engine(self.url)
        self.addCleanup(self.engine.dispose)
