# SPDX-License-Identifier: Apache-2.0
"""Upstream's online data migrations, for databases written by older
Placement releases (``placement-manage db online_data_migrations``).

Each takes a Database and a batch size and returns (found, done): rows
that needed it (up to the batch size) and rows it migrated. A database
this server wrote never needs them: it sets every root provider and
writes a consumer row with every allocation.
"""

import sqlalchemy as sa

from osc_placement.server.db import tables
from osc_placement.server.objects import consumer

_RP = tables.resource_providers
_ALLOC = tables.allocations
_C = tables.consumers


def set_root_provider_ids(db, batch_size, conf=None):
    """Providers without a root (written before Queens) are their own."""
    with db.write() as conn:
        ids = conn.execute(sa.select(_RP.c.id).where(
            _RP.c.root_provider_id.is_(None)).limit(batch_size)).scalars(
            ).all()
        if not ids:
            return 0, 0
        done = conn.execute(_RP.update().where(_RP.c.id.in_(ids)).values(
            root_provider_id=_RP.c.id)).rowcount
    return len(ids), done


def _consumers_missing(conn, batch_size):
    return conn.execute(
        sa.select(_ALLOC.c.consumer_id).distinct()
        .select_from(_ALLOC.outerjoin(_C, _C.c.uuid == _ALLOC.c.consumer_id))
        .where(_C.c.id.is_(None)).limit(batch_size)).scalars().all()


def create_incomplete_consumers(db, batch_size, conf):
    """Allocations written before Rocky without a consumer row get one,
    owned by [placement] incomplete_consumer_project_id and _user_id."""
    project = conf.placement.incomplete_consumer_project_id
    user = conf.placement.incomplete_consumer_user_id
    with db.write() as conn:
        missing = _consumers_missing(conn, batch_size)
        if not missing:
            return 0, 0
        ids = consumer.ensure_ids(conn, {'project': {project},
                                         'user': {user}})
        consumer.create_many(conn, [
            {'uuid': uuid, 'project_id': ids['project'][project],
             'user_id': ids['user'][user], 'consumer_type_id': None,
             'generation': 0} for uuid in missing])
    return len(missing), len(missing)


def count_incomplete_consumers(conn):
    return conn.execute(
        sa.select(sa.func.count(sa.distinct(_ALLOC.c.consumer_id)))
        .select_from(_ALLOC.outerjoin(_C, _C.c.uuid == _ALLOC.c.consumer_id))
        .where(_C.c.id.is_(None))).scalar()


def any_missing_root(conn):
    return conn.execute(sa.select(sa.exists().where(
        _RP.c.root_provider_id.is_(None)))).scalar()


# In upstream's order; the names are what the command prints.
MIGRATIONS = (set_root_provider_ids, create_incomplete_consumers)
