# SPDX-License-Identifier: Apache-2.0
"""Consumers, their projects, users and types.

A consumer row exists while it has allocations: allocation writes create
it (generation 1 after the first write), bump it once per write with a
compare-and-swap, and delete it when its allocations are emptied. As
upstream, a new consumer written with no allocations is the exception: it
is kept, without allocations, at generation 0.
Projects, users and consumer types are created on first use and never
deleted.
"""

import functools

import sqlalchemy as sa
from sqlalchemy.dialects import mysql
from sqlalchemy.dialects import postgresql
from sqlalchemy.dialects import sqlite

from osc_placement.server.db import engine as db_engine
from osc_placement.server.db import lists
from osc_placement.server.db import tables
from osc_placement.server import errors

_C = tables.consumers
_P = tables.projects
_U = tables.users
_CT = tables.consumer_types
_ALLOC = tables.allocations
_RP = tables.resource_providers

# Pre-1.28 writes do not check the consumer generation.
UNCHECKED = object()


def _insert_ignoring_duplicates(conn, table, rows):
    """INSERT rows, skipping any whose unique key already exists, so two
    requests creating the same project never fail each other."""
    dialect = conn.dialect.name
    if dialect == 'postgresql':
        stmt = postgresql.insert(table).on_conflict_do_nothing()
    elif dialect == 'sqlite':
        stmt = sqlite.insert(table).on_conflict_do_nothing()
    elif dialect == 'mysql':
        stmt = mysql.insert(table).prefix_with('IGNORE')
    else:
        stmt = table.insert()
    conn.execute(stmt, rows)


# The three kinds of names a consumer refers to, and where they live.
_KINDS = {'project': (_P, _P.c.external_id), 'user': (_U, _U.c.external_id),
          'type': (_CT, _CT.c.name)}


_ID_SELECTS = {}


def _id_select(dialect, kind):
    """SELECT kind, name, id of the names of one kind of _KINDS, given at
    execution as the parameter named after the kind."""
    table, column = _KINDS[kind]
    return (sa.select(sa.literal(kind).label('kind'), column.label('name'),
                      table.c.id)
            .where(lists.one_of_param(dialect, column, kind)))


def _ids_statement(dialect, kinds):
    """The names of ``kinds`` (a tuple of keys of _KINDS) with their ids.
    Built once per tuple: building it cost a claim more than running
    it."""
    statement = _ID_SELECTS.get((dialect, kinds))
    if statement is None:
        statement = _ID_SELECTS[dialect, kinds] = sa.union_all(
            *(_id_select(dialect, kind) for kind in kinds))
    return statement


def _select_ids(conn, wanted):
    """{kind: {name: id}} for the names that exist, in one statement."""
    kinds = tuple(kind for kind in _KINDS if wanted.get(kind))
    rows = ()
    if kinds:
        rows = conn.execute(_ids_statement(conn.dialect.name, kinds),
                            {kind: sorted(wanted[kind]) for kind in kinds})
    return _ids_found(wanted, rows)


def _ids_found(wanted, rows):
    found = {kind: {} for kind in wanted}
    for kind, name, row_id in rows:
        found[kind][name] = row_id
    return found


def ensure_ids(conn, wanted):
    """{kind: {name: id}} for ``wanted``, creating the names that are new."""
    return _with_missing_added(conn, wanted, _select_ids(conn, wanted))


def _with_missing_added(conn, wanted, found):
    """``found`` completed with the ids of the names of ``wanted`` it
    lacks, their rows created; a row another request committed after a
    MySQL transaction's snapshot stays invisible, so the request re-runs."""
    missing = {kind: set(names) - set(found[kind])
               for kind, names in wanted.items()}
    if not any(missing.values()):
        return found
    now = tables.utcnow()
    for kind, names in missing.items():
        if names:
            table, column = _KINDS[kind]
            _insert_ignoring_duplicates(
                conn, table, [{column.name: n, 'created_at': now}
                              for n in sorted(names)])
    for kind, ids in _select_ids(conn, missing).items():
        found[kind].update(ids)
        if missing[kind] - set(ids):
            raise db_engine.Retry()
    return found


# The kind of probe_statement's rows that are named consumers.
EXISTING = 'consumer'


@functools.lru_cache(maxsize=None)
def probe_statement(dialect):
    """What ensure_ids reads, for every kind, and the named consumers
    that exist (rows of kind EXISTING: uuid and id), in one statement.
    Parameters: a list per kind, named after it, and ``uuids``."""
    existing = (sa.select(sa.literal(EXISTING).label('kind'), _C.c.uuid,
                          _C.c.id)
                .where(lists.one_of_param(dialect, _C.c.uuid, 'uuids')))
    return sa.union_all(*(_id_select(dialect, kind) for kind in _KINDS),
                        existing)


def probe_parameters(wanted, uuids):
    """probe_statement's parameters for ``wanted`` ({kind: set of
    names}) and the consumers ``uuids``."""
    params = {kind: sorted(wanted.get(kind, ())) for kind in _KINDS}
    params['uuids'] = sorted(set(uuids))
    return params


def from_probe(conn, wanted, rows):
    """(ids as ensure_ids returns them, the uuids of the named consumers
    that exist) from probe_statement's rows; missing names are created
    as ensure_ids creates them."""
    existing = {row[1] for row in rows if row[0] == EXISTING}
    found = _ids_found(wanted, (row for row in rows if row[0] != EXISTING))
    return _with_missing_added(conn, wanted, found), existing


# Built once per database kind, like _ids_statement's: every allocation
# write runs it.
@functools.lru_cache(maxsize=None)
def _with_allocations(dialect):
    return (
        sa.select(_C.c.id, _C.c.uuid, _C.c.generation, _C.c.project_id,
                  _C.c.user_id, _C.c.consumer_type_id,
                  _ALLOC.c.resource_provider_id,
                  _RP.c.uuid.label('provider_uuid'),
                  _ALLOC.c.resource_class_id, _ALLOC.c.used)
        .select_from(
            _C.outerjoin(_ALLOC, _ALLOC.c.consumer_id == _C.c.uuid)
            .outerjoin(_RP, _RP.c.id == _ALLOC.c.resource_provider_id))
        .where(lists.one_of_param(dialect, _C.c.uuid, 'uuids')))


def load_with_allocations(conn, uuids):
    """The named consumers and their current allocations.

    Returns ({uuid: consumer row}, [allocation rows]) where allocation
    rows carry consumer_id, resource_provider_id, provider_uuid,
    resource_class_id and used."""
    rows = conn.execute(_with_allocations(conn.dialect.name),
                        {'uuids': sorted(set(uuids))}).mappings().all()
    consumers, allocations = {}, []
    for row in rows:
        consumers.setdefault(row['uuid'], row)
        if row['resource_provider_id'] is not None:
            allocations.append(row)
    return consumers, allocations


def check_generation(uuid, existing, given):
    """409 unless ``given`` is the consumer's generation (None = new)."""
    if given is UNCHECKED:
        return
    expected = None if existing is None else existing['generation']
    if given != expected:
        raise errors.Conflict(
            'consumer generation conflict - expected %s but got %s'
            % ('null' if expected is None else expected, given),
            code=errors.CONCURRENT_UPDATE)


def create_many(conn, rows):
    """Insert consumers, ``rows`` of their columns but created_at; the
    generation is 1 after a first write with allocations, 0 without."""
    if rows:
        now = tables.utcnow()
        conn.execute(_C.insert(), [dict(r, created_at=now) for r in rows])


def _swap(conn, statement, consumer):
    """Run a CAS statement on one consumer; a lost race re-runs the
    request, whose re-read then reports a generation conflict."""
    result = conn.execute(statement.where(
        _C.c.id == consumer['id'], _C.c.generation == consumer['generation']))
    if result.rowcount != 1:
        raise db_engine.Retry()


def bump(conn, consumer, project_id, user_id, consumer_type_id):
    """+1 and, if they changed, the new project, user and type."""
    _swap(conn, _C.update().values(
        generation=consumer['generation'] + 1, project_id=project_id,
        user_id=user_id, consumer_type_id=consumer_type_id,
        updated_at=tables.utcnow()), consumer)


def delete(conn, consumer):
    """Remove an emptied consumer, as long as nobody else changed it."""
    _swap(conn, _C.delete(), consumer)


def join_shown(joined, consumer_uuid):
    """``joined`` outer-joined to the consumer of uuid ``consumer_uuid``
    as shown (SHOWN_COLUMNS, shown_from): chained, as SQLite evaluates an
    outer join of a nested join whole, every consumer of the cloud."""
    return (joined.outerjoin(_C, _C.c.uuid == consumer_uuid)
            .outerjoin(_P, _P.c.id == _C.c.project_id)
            .outerjoin(_U, _U.c.id == _C.c.user_id)
            .outerjoin(_CT, _CT.c.id == _C.c.consumer_type_id))


# Labelled apart from the columns of the statements that join them.
SHOWN_COLUMNS = (_C.c.id.label('shown_id'),
                 _C.c.generation.label('shown_generation'),
                 _P.c.external_id.label('shown_project_id'),
                 _U.c.external_id.label('shown_user_id'),
                 _CT.c.name.label('shown_consumer_type'))


def shown_from(row):
    """{'generation', 'project_id', 'user_id', 'consumer_type'} of a row
    selecting SHOWN_COLUMNS, or None if it joined no consumer. One whose
    project or user row is missing is not shown, as one that does not
    exist (their external ids are never NULL)."""
    if None in (row['shown_id'], row['shown_project_id'],
                row['shown_user_id']):
        return None
    return {name: row['shown_' + name] for name in (
        'generation', 'project_id', 'user_id', 'consumer_type')}


def delete_with_allocations(conn, uuid):
    """DELETE /allocations/{c}: False when it had no allocations; then,
    as upstream, a consumer kept without allocations stays."""
    deleted = conn.execute(
        _ALLOC.delete().where(_ALLOC.c.consumer_id == uuid)).rowcount
    if deleted:
        conn.execute(_C.delete().where(_C.c.uuid == uuid))
    return deleted > 0
