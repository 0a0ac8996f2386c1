# SPDX-License-Identifier: Apache-2.0
"""``column IN (values)`` for lists of any length.

psycopg binds each value of an IN list as a parameter of its own and a
statement may carry at most 65,535; a request may name more (traits,
aggregates, consumers, providers), so PostgreSQL gets one array
parameter instead. SQLite (250,000 variables from 3.32) and PyMySQL
(binding client-side) take long lists as they are.
"""

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql


def one_of(conn, column, values):
    """``column IN values`` (any iterable), on ``conn``'s database."""
    values = list(values)
    if conn.dialect.name == 'postgresql':
        return column == sa.any_(sa.bindparam(None, values,
                                              type_=_array_of(column)))
    return column.in_(values)


def one_of_param(dialect, column, name):
    """``column IN :name``, the list given as parameter ``name`` when the
    statement runs (statements built once per ``dialect`` name)."""
    if dialect == 'postgresql':
        return column == sa.any_(sa.bindparam(name,
                                              type_=_array_of(column)))
    return column.in_(sa.bindparam(name, expanding=True))


def _array_of(column):
    """The array type for ``column``'s values. Strings get no length:
    a cast to VARCHAR(36)[] would cut a longer value to one that may
    match."""
    if isinstance(column.type, sa.String):
        return postgresql.ARRAY(sa.String())
    return postgresql.ARRAY(column.type)
