"""``usage_totals``: sum(allocations.used) per provider and class.

The candidate search reads the usage of every inventory it loads, a few
thousand at a time; summing the allocations for each took most of the
database's time for a large answer. The totals are written in the
transaction that writes the allocations, so a reader sees both or
neither. Writers add signed deltas (``used = used + delta``): the
database serialises concurrent updates of one row, so none is lost.

The candidate search and the allocation writes' capacity checks read
the totals; the usages API keeps summing the allocations (it groups by
project, user and consumer type, which the totals do not hold).
"""

import collections

import sqlalchemy as sa
from sqlalchemy.dialects import mysql
from sqlalchemy.dialects import postgresql
from sqlalchemy.dialects import sqlite

from osc_placement.server.db import lists
from osc_placement.server.db import tables

_TOTALS = tables.usage_totals
_ALLOC = tables.allocations
_INSERT = {'postgresql': postgresql.insert, 'sqlite': sqlite.insert,
           'mysql': mysql.insert}


def deltas_of(rows, sign=1):
    """{(provider id, class id): sign * summed used} of allocation rows
    (mappings or tuples with those keys)."""
    deltas = collections.Counter()
    for row in rows:
        key = (row['resource_provider_id'], row['resource_class_id'])
        deltas[key] += sign * row['used']
    return deltas


def apply(conn, deltas):
    """Add ``deltas`` ({(provider id, class id): amount}) to the totals,
    creating missing rows (in key order, so that two writers lock shared
    rows in the same order)."""
    rows = [{'resource_provider_id': rp_id, 'resource_class_id': rc_id,
             'used': delta}
            for (rp_id, rc_id), delta in sorted(deltas.items()) if delta]
    if rows:
        conn.execute(_upsert(conn.dialect.name), rows)


_UPSERTS = {}


def _upsert(dialect):
    """INSERT ... or add to the existing row, built once per database
    (building it per write cost more than running it)."""
    if dialect not in _UPSERTS:
        insert = _INSERT[dialect](_TOTALS)
        if dialect == 'mysql':
            statement = insert.on_duplicate_key_update(
                used=_TOTALS.c.used + insert.inserted.used)
        else:
            statement = insert.on_conflict_do_update(
                index_elements=['resource_provider_id', 'resource_class_id'],
                set_={'used': _TOTALS.c.used + insert.excluded.used})
        _UPSERTS[dialect] = statement
    return _UPSERTS[dialect]


def delete_allocations(conn, where):
    """Delete the allocation rows matching ``where`` and take them off the
    totals: exactly the rows deleted, even when another writer deleted
    some first (DELETE ... RETURNING where the database has it, else the
    rows are locked, then deleted by id)."""
    columns = (_ALLOC.c.resource_provider_id, _ALLOC.c.resource_class_id,
               _ALLOC.c.used)
    if conn.dialect.delete_returning:
        rows = conn.execute(
            _ALLOC.delete().where(where).returning(*columns)
        ).mappings().all()
    else:
        query = sa.select(_ALLOC.c.id, *columns).where(where)
        if conn.dialect.name != 'sqlite':
            query = query.with_for_update()
        rows = conn.execute(query).mappings().all()
        if rows:
            conn.execute(_ALLOC.delete().where(
                lists.one_of(conn, _ALLOC.c.id,
                             sorted(row['id'] for row in rows))))
    apply(conn, deltas_of(rows, sign=-1))
    return len(rows)


def insert_allocations(conn, rows):
    """Insert allocation rows (dicts) and add them to the totals."""
    if rows:
        conn.execute(_ALLOC.insert(), rows)
        apply(conn, deltas_of(rows))


def forget_provider(conn, provider_id):
    """Drop a deleted provider's rows (all zero: a provider with
    allocations cannot be deleted)."""
    conn.execute(_TOTALS.delete().where(
        _TOTALS.c.resource_provider_id == provider_id))


def rebuild(conn):
    """Recompute every total from the allocations (after bulk loads that
    wrote allocations directly)."""
    conn.execute(_TOTALS.delete())
    sums = (sa.select(_ALLOC.c.resource_provider_id,
                      _ALLOC.c.resource_class_id,
                      sa.cast(sa.func.sum(_ALLOC.c.used), sa.BigInteger))
            .group_by(_ALLOC.c.resource_provider_id,
                      _ALLOC.c.resource_class_id))
    conn.execute(_TOTALS.insert().from_select(
        ['resource_provider_id', 'resource_class_id', 'used'], sums))
