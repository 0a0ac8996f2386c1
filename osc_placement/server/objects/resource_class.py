# SPDX-License-Identifier: Apache-2.0
"""Resource classes: name <-> id, standard and custom.

Standard classes have fixed ids (their index in os-resource-classes) and
can never change, so they are resolved without a query. Custom classes are
looked up every time: another worker may delete and re-create one.
Every write here changes the providers' structure (db/structure.py).
"""

import os_resource_classes
import sqlalchemy as sa

from osc_placement.server.db import engine as db_engine
from osc_placement.server.db import lists
from osc_placement.server.db import tables
from osc_placement.server import errors

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


def _insert(conn, name):
    """Insert a custom class with the next id (>= 10000); a concurrent
    insert of the id or the name re-runs the request, whose own checks
    then give the answer."""
    next_id = conn.execute(sa.select(sa.func.max(_RC.c.id))).scalar()
    next_id = max((next_id or 0) + 1, tables.CUSTOM_RC_MIN_ID)
    try:
        conn.execute(_RC.insert().values(id=next_id, name=name,
                                         created_at=tables.utcnow()))
    except sa.exc.IntegrityError:
        raise db_engine.Retry(db_engine.DUPLICATE_KEY)


def create(conn, name):
    """POST /resource_classes: 409 if the class exists."""
    if get(conn, name) is not None:
        raise errors.Conflict(
            'Conflicting resource class already exists: %s' % name)
    _insert(conn, name)


def ensure(conn, name):
    """PUT /resource_classes/{name} from 1.7: whether it was created."""
    if get(conn, name) is not None:
        return False
    _insert(conn, name)
    return True


def _custom_or_error(conn, name, standard_text):
    """The custom class's row: 404 if unknown, 400 ``standard_text`` (the
    name filled in) for a standard class."""
    row = get(conn, name)
    if row is None:
        raise errors.NotFound('No such resource class %s.' % name)
    if row['id'] < tables.CUSTOM_RC_MIN_ID:
        raise errors.BadRequest(standard_text % name)
    return row


def rename(conn, name, new_name):
    """PUT /resource_classes/{name} before 1.7."""
    row = _custom_or_error(conn, name,
                           'Cannot update standard resource class %s')
    if new_name != name and get(conn, new_name) is not None:
        raise errors.Conflict('Resource class already exists: %s' % new_name)
    conn.execute(_RC.update().where(_RC.c.id == row['id'])
                 .values(name=new_name, updated_at=tables.utcnow()))


def _in_use(conn, class_id):
    inv = tables.inventories
    return conn.execute(
        sa.select(inv.c.id).where(inv.c.resource_class_id == class_id)
        .limit(1)).first() is not None


def delete(conn, name):
    """DELETE /resource_classes/{name}: custom classes without
    inventory only."""
    row = _custom_or_error(conn, name, 'Error in delete resource class: '
                           'Cannot delete standard resource class %s.')
    if _in_use(conn, row['id']):
        raise errors.Conflict('Error in delete resource class: Cannot delete '
                              'resource class %s. Class is in use in '
                              'inventory.' % name)
    conn.execute(_RC.delete().where(_RC.c.id == row['id']))
