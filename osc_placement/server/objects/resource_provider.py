# SPDX-License-Identifier: Apache-2.0
"""Resource providers: create, read, update (incl. re-parenting), delete,
(the filtered list is objects/provider_list.py). Every write but a
generation bump changes the providers' structure (db/structure.py)."""

import sqlalchemy as sa

from osc_placement.server.db import engine as db_engine
from osc_placement.server.db import tables
from osc_placement.server import errors
from osc_placement.server.objects import generation

_RP = tables.resource_providers
_PARENT = _RP.alias('parent')
_ROOT = _RP.alias('root')
_INV = tables.inventories
_ALLOC = tables.allocations
_RPT = tables.resource_provider_traits
_RPA = tables.resource_provider_aggregates

_COLUMNS = (_RP.c.id, _RP.c.uuid, _RP.c.name, _RP.c.generation,
            _PARENT.c.uuid.label('parent_provider_uuid'),
            _ROOT.c.uuid.label('root_provider_uuid'),
            _RP.c.root_provider_id, _RP.c.parent_provider_id,
            _RP.c.created_at, _RP.c.updated_at)
_FROM = (_RP.outerjoin(_PARENT, _RP.c.parent_provider_id == _PARENT.c.id)
         .outerjoin(_ROOT, _RP.c.root_provider_id == _ROOT.c.id))


def select_rows():
    """SELECT of provider rows as :func:`get` returns them."""
    return sa.select(*_COLUMNS).select_from(_FROM)


def get(conn, uuid):
    """The provider row (a mapping) or None."""
    return conn.execute(select_rows().where(_RP.c.uuid == uuid)
                        ).mappings().first()


# require's 404 unless a route names another.
NOT_FOUND = 'No resource provider with uuid %(uuid)s found'


def require(conn, uuid, template=NOT_FOUND):
    """The provider row, or 404 with ``template`` filled in once with the
    path's text as ``%(uuid)s`` (never pre-filled: the path may hold a
    ``%``)."""
    provider = get(conn, uuid)
    if provider is None:
        raise errors.NotFound(template % {'uuid': uuid})
    return provider


def select_with_provider(columns, joins, order_by=()):
    """SELECT of ``provider_generation`` and ``columns``: the provider
    (parameter ``uuid``) outer-joined to each ``(table, on)`` of ``joins``
    in turn; one row of None columns for a provider without such rows,
    none for a missing one. Build it once (lru_cache), read it with
    :func:`read_with_provider`. A chain of outer joins, as SQLite evaluates
    a nested join whole (every allocation or consumer) before the provider."""
    joined = _RP
    for table, on in joins:
        joined = joined.outerjoin(table, on)
    return (sa.select(_RP.c.generation.label('provider_generation'),
                      *columns)
            .select_from(joined)
            .where(_RP.c.uuid == sa.bindparam('uuid'))
            .order_by(*order_by))


def read_with_provider(conn, statement, uuid, row_column, template,
                       **params):
    """(provider generation, rows whose ``row_column`` is set) of a
    :func:`select_with_provider` statement, or 404 with ``template``. One
    statement, so the generation is the rows': read apart, a writer in
    between paired old with new, which a client's read-modify-write then
    sent back unseen."""
    rows = conn.execute(statement, dict(params, uuid=uuid)).mappings().all()
    if not rows:
        raise errors.NotFound(template % {'uuid': uuid})
    return (rows[0]['provider_generation'],
            [row for row in rows if row[row_column] is not None])


def _clashes(conn, name, uuid):
    rows = conn.execute(sa.select(_RP.c.name, _RP.c.uuid).where(
        sa.or_(_RP.c.name == name, _RP.c.uuid == uuid))).all()
    names = any(row_name == name for row_name, _ in rows)
    uuids = any(row_uuid == uuid for _, row_uuid in rows)
    return names, uuids


def _duplicate(name, uuid, names, uuids):
    parts = []
    if names:
        parts.append('Conflicting resource provider name: %s already exists'
                     % name)
    if uuids:
        parts.append('Conflicting resource provider uuid: %s already exists'
                     % uuid)
    return errors.Conflict(', '.join(parts) + '.',
                           code=errors.DUPLICATE_NAME)


def create(conn, uuid, name, parent_uuid=None):
    """Insert a provider; its root is the parent's root, or itself."""
    def fail(reason):
        return errors.BadRequest(
            'Unable to create resource provider "%s", %s: Object action '
            'create failed because: %s' % (name, uuid, reason))
    if not name:
        raise fail('name is required')
    parent = None
    if parent_uuid is not None:
        if parent_uuid == uuid:
            raise fail('parent provider UUID cannot be same as UUID. Please '
                       'set parent provider UUID to None if there is no '
                       'parent.')
        parent = get(conn, parent_uuid)
        if parent is None:
            raise fail('parent provider UUID does not exist.')
    names, uuids = _clashes(conn, name, uuid)
    if names or uuids:
        raise _duplicate(name, uuid, names, uuids)
    now = tables.utcnow()
    values = {'uuid': uuid, 'name': name, 'generation': 0, 'created_at': now}
    if parent is not None:
        values.update(parent_provider_id=parent['id'],
                      root_provider_id=parent['root_provider_id'])
    result = conn.execute(_RP.insert().values(**values))
    new_id = result.inserted_primary_key[0]
    if parent is None:
        # Upstream's second write: a root points at itself.
        conn.execute(_RP.update().where(_RP.c.id == new_id)
                     .values(root_provider_id=new_id, updated_at=now))
    return get(conn, uuid)


def _tree(conn, root_id):
    """{id: parent_id} for every provider of a tree."""
    return dict(conn.execute(
        sa.select(_RP.c.id, _RP.c.parent_provider_id)
        .where(_RP.c.root_provider_id == root_id)).all())


def _subtree(parents, top_id):
    """``top_id`` and all its descendants, from a {id: parent} map."""
    children = {}
    for child, parent in parents.items():
        children.setdefault(parent, []).append(child)
    found, stack = [], [top_id]
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(children.get(node, ()))
    return found


def _update_failure(uuid, reason, action='update'):
    return errors.BadRequest(
        'Unable to save resource provider %s: Object action %s failed '
        'because: %s' % (uuid, action, reason))


def _new_parent(conn, provider, parent_uuid, version):
    """Validate a parent change; return the new parent row or None."""
    current = provider['parent_provider_uuid']
    if parent_uuid is None:
        if current is not None and not version.supports('reparenting'):
            raise _update_failure(provider['uuid'], 'un-parenting a provider '
                                  'is not currently allowed.')
        return None
    parent = get(conn, parent_uuid)
    if parent is None:
        raise _update_failure(provider['uuid'], 'parent provider UUID does '
                              'not exist.', action='create')
    if (current is not None and current != parent_uuid
            and not version.supports('reparenting')):
        raise _update_failure(provider['uuid'], 're-parenting a provider is '
                              'not currently allowed.')
    if parent['root_provider_id'] == provider['root_provider_id']:
        tree = _tree(conn, provider['root_provider_id'])
        if parent['id'] in _subtree(tree, provider['id']):
            raise _update_failure(provider['uuid'], 'creating loop in the '
                                  'provider tree is not allowed.')
    return parent


def _move(conn, provider, parent, now):
    """Re-parent ``provider``; re-root it and its whole subtree."""
    new_root = parent['root_provider_id'] if parent else provider['id']
    values = {'parent_provider_id': parent['id'] if parent else None,
              'updated_at': now}
    conn.execute(_RP.update().where(_RP.c.id == provider['id'])
                 .values(**values))
    if new_root != provider['root_provider_id']:
        moved = _subtree(_tree(conn, provider['root_provider_id']),
                         provider['id'])
        conn.execute(_RP.update().where(_RP.c.id.in_(moved))
                     .values(root_provider_id=new_root))


# ``parent_uuid`` of an update that leaves the parent as it is.
KEEP_PARENT = object()


def update(conn, uuid, name, version, parent_uuid=KEEP_PARENT):
    """Rename and/or re-parent; the generation is not bumped. Returns
    the provider's row after and before."""
    provider = require(conn, uuid)
    now = tables.utcnow()
    if name != provider['name']:
        taken = conn.execute(sa.select(_RP.c.id).where(
            _RP.c.name == name, _RP.c.id != provider['id'])).first()
        if taken:
            raise errors.Conflict('Conflicting resource provider %s already '
                                  'exists.' % name,
                                  code=errors.DUPLICATE_NAME)
        conn.execute(_RP.update().where(_RP.c.id == provider['id'])
                     .values(name=name, updated_at=now))
    if (parent_uuid is not KEEP_PARENT
            and parent_uuid != provider['parent_provider_uuid']):
        _move(conn, provider, _new_parent(conn, provider, parent_uuid,
                                          version), now)
    return get(conn, provider['uuid']), provider


def delete(conn, uuid):
    provider = get(conn, uuid)
    if provider is None:
        raise errors.NotFound(
            'No resource provider with uuid %s found for delete' % uuid)
    rp_id = provider['id']
    # Claim the row first, as allocation writes do: a claim that commits
    # meanwhile changed the generation, and the re-run then sees it.
    generation.bump(conn, rp_id, provider['generation'],
                    conflict=db_engine.Retry)
    if conn.execute(sa.select(_RP.c.id).where(
            _RP.c.parent_provider_id == rp_id).limit(1)).first():
        raise errors.Conflict(
            'Unable to delete parent resource provider %s: It has child '
            'resource providers.' % uuid,
            code=errors.PROVIDER_CANNOT_DELETE_PARENT)
    if conn.execute(sa.select(_ALLOC.c.id).where(
            _ALLOC.c.resource_provider_id == rp_id).limit(1)).first():
        raise errors.Conflict(
            'Unable to delete resource provider %s: Resource provider has '
            'allocations.' % uuid, code=errors.PROVIDER_INUSE)
    for table in (_INV, _RPT, _RPA):
        conn.execute(table.delete().where(
            table.c.resource_provider_id == rp_id))
    # A root references itself; MySQL checks that FK row by row, so drop
    # the self-reference before the row.
    conn.execute(_RP.update().where(_RP.c.id == rp_id)
                 .values(root_provider_id=None))
    conn.execute(_RP.delete().where(_RP.c.id == rp_id))
