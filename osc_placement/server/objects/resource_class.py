"""Resource classes: name <-> id, standard and custom.

Standard classes have fixed ids (their index in os-resource-classes) and
can never change, so they are resolved without a query. Custom classes are
looked up every time: another worker may delete and re-create one.
"""

import os_resource_classes
import sqlalchemy as sa

from osc_placement.server import errors
from osc_placement.server.db import lists
from osc_placement.server.db import tables

_RC = tables.resource_classes
STANDARD_IDS = {name: index
                for index, name in enumerate(os_resource_classes.STANDARDS)}
STANDARD_NAMES = dict(enumerate(os_resource_classes.STANDARDS))
CUSTOM_PREFIX = 'CUSTOM_'


def ids_for(conn, names):
    """{name: id} for the names that exist."""
    found = {n: STANDARD_IDS[n] for n in names if n in STANDARD_IDS}
    custom = [n for n in names if n not in found]
    if custom:
        rows = conn.execute(sa.select(_RC.c.name, _RC.c.id)
                            .where(lists.one_of(conn, _RC.c.name, custom)))
        found.update(rows.all())
    return found


def require_ids(conn, names, template='No such resource class %(name)s.',
                fields=None, error=errors.BadRequest):
    """{name: id}, raising ``error`` for the first unknown name.

    ``template`` is filled in once, with ``fields`` and the ``name``;
    request text is never put into it beforehand (it may hold a ``%``)."""
    found = ids_for(conn, names)
    for name in names:
        if name not in found:
            raise error(template % dict(fields or {}, name=name))
    return found


def names_for(conn, ids):
    names = {i: STANDARD_NAMES[i] for i in ids if i in STANDARD_NAMES}
    custom = [i for i in ids if i not in names]
    if custom:
        rows = conn.execute(sa.select(_RC.c.id, _RC.c.name)
                            .where(_RC.c.id.in_(custom)))
        names.update(rows.all())
    return names


def list_all(conn):
    return conn.execute(
        sa.select(_RC.c.name, _RC.c.created_at, _RC.c.updated_at)
        .order_by(_RC.c.id)).mappings().all()


def get(conn, name):
    return conn.execute(
        sa.select(_RC).where(_RC.c.name == name)).mappings().first()


def create(conn, name):
    """Insert a custom class with the next id (>= 10000)."""
    next_id = conn.execute(sa.select(sa.func.max(_RC.c.id))).scalar()
    next_id = max((next_id or 0) + 1, tables.CUSTOM_RC_MIN_ID)
    conn.execute(_RC.insert().values(id=next_id, name=name,
                                     created_at=tables.utcnow()))


def rename(conn, class_id, new_name):
    conn.execute(_RC.update().where(_RC.c.id == class_id)
                 .values(name=new_name, updated_at=tables.utcnow()))


def in_use(conn, class_id):
    inv = tables.inventories
    return conn.execute(
        sa.select(inv.c.id).where(inv.c.resource_class_id == class_id)
        .limit(1)).first() is not None


def delete(conn, class_id):
    conn.execute(_RC.delete().where(_RC.c.id == class_id))
