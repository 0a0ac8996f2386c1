# SPDX-License-Identifier: Apache-2.0
"""Inventories of a provider, per resource class.

Every write bumps the provider generation with a compare-and-swap in the
same transaction, so a concurrent writer loses with a 409, and changes
the providers' structure (db/structure.py).
"""

import functools
import logging

import sqlalchemy as sa

from osc_placement.server.db import tables
from osc_placement.server import errors
from osc_placement.server.objects import generation
from osc_placement.server.objects import resource_class
from osc_placement.server.objects import resource_provider as rp_obj

LOG = logging.getLogger(__name__)
_INV = tables.inventories
_RP = tables.resource_providers
_ALLOC = tables.allocations
_USAGE = tables.usage_totals
MAX_INT = 2147483647
FIELDS = ('total', 'reserved', 'min_unit', 'max_unit', 'step_size',
          'allocation_ratio')
DEFAULTS = {'reserved': 0, 'min_unit': 1, 'max_unit': MAX_INT,
            'step_size': 1, 'allocation_ratio': 1.0}


def with_defaults(record):
    """The six inventory fields, defaults filled in."""
    values = {field: record.get(field, DEFAULTS.get(field))
              for field in FIELDS}
    values['allocation_ratio'] = float(values['allocation_ratio'])
    return values


def capacity(inventory):
    """Unrounded ``(total - reserved) * allocation_ratio``, as upstream
    compares it, of a record, row or table's columns (an SQL rule)."""
    return capacity_of(inventory['total'], inventory['reserved'],
                       inventory['allocation_ratio'])


def capacity_of(total, reserved, allocation_ratio):
    """The capacity rule of three numbers or SQL expressions."""
    return (total - reserved) * allocation_ratio


def require_capacity(records, provider_uuid, version, action):
    """Upstream's reserved-vs-total rule, a 400 if a record breaks it;
    ``records`` is {rc name: rec}, ``action`` the verb of the text."""
    for name, record in records.items():
        cap = capacity(record)
        if version.supports('reserved_equals_total'):
            bad, relation = cap < 0, 'greater than'
        else:
            bad, relation = cap <= 0, 'greater than or equal to'
        if bad:
            raise errors.BadRequest(
                'Unable to %s inventory for resource provider %s: Invalid '
                "inventory for '%s' on resource provider '%s'. The reserved "
                'value is %s total.'
                % (action, provider_uuid, name, provider_uuid, relation))


@functools.lru_cache(maxsize=None)
def _get_all_statement():
    return rp_obj.select_with_provider(
        _INV.c, ((_INV, _INV.c.resource_provider_id == _RP.c.id),),
        order_by=(_INV.c.resource_class_id,))


def get_all(conn, uuid, template):
    """(provider generation, {class name: record}, the latest change
    time or None); 404 with ``template`` if there is no such provider."""
    generation, rows = rp_obj.read_with_provider(
        conn, _get_all_statement(), uuid, 'resource_class_id', template)
    names = resource_class.names_for(
        conn, [r['resource_class_id'] for r in rows])
    records = {names[r['resource_class_id']]:
               {field: r[field] for field in FIELDS} for r in rows}
    return generation, records, _latest(rows)


def _latest(rows):
    times = [r['updated_at'] or r['created_at'] for r in rows]
    return max(times) if times else None


@functools.lru_cache(maxsize=None)
def _get_one_statement():
    return rp_obj.select_with_provider(
        _INV.c, ((_INV, sa.and_(
            _INV.c.resource_provider_id == _RP.c.id,
            _INV.c.resource_class_id == sa.bindparam('class_id'))),))


def read_one(conn, uuid, class_id):
    """(provider generation, the inventory row of class id ``class_id``
    or None (also for a class id of None)), by one statement; 404 if
    there is no such provider."""
    generation, rows = rp_obj.read_with_provider(
        conn, _get_one_statement(), uuid, 'resource_class_id',
        rp_obj.NOT_FOUND, class_id=class_id)
    return generation, rows[0] if rows else None


def get_one(conn, provider_id, class_id):
    return conn.execute(sa.select(_INV).where(
        _INV.c.resource_provider_id == provider_id,
        _INV.c.resource_class_id == class_id)).mappings().first()


def allocated_classes(conn, provider_id, class_ids=None):
    """Class ids among ``class_ids`` (or all) with allocations.

    Asks whether allocation rows exist, as the provider delete does, not
    how much they use: the usage of a class is read from usage_totals."""
    query = sa.select(_ALLOC.c.resource_class_id).distinct().where(
        _ALLOC.c.resource_provider_id == provider_id)
    if class_ids is not None:
        query = query.where(_ALLOC.c.resource_class_id.in_(class_ids))
    return set(conn.execute(query).scalars())


def in_use_conflict(conn, provider_uuid, prefix='update conflict: ',
                    code=errors.INVENTORY_INUSE):
    """The 409 for removing inventory in use, as a function of the busy
    class ids (the ``in_use_error`` of :func:`replace_all`).

    Classes in class id order, as upstream's GROUP BY gives them. A
    whole-inventory PUT and the reshaper prefix it as upstream does; a
    whole DELETE does not; the DELETE of one class names it, with the
    concurrent_update code [quirk]."""
    def error(class_ids):
        names = resource_class.names_for(conn, class_ids)
        return errors.Conflict(
            prefix + "Inventory for '%s' on resource provider '%s' in use."
            % (', '.join(names[i] for i in sorted(class_ids)),
               provider_uuid), code=code)
    return error


def _row(provider_id, class_id, record, now):
    row = dict(record, resource_provider_id=provider_id,
               resource_class_id=class_id, created_at=now)
    return row


# Each write bumps the generation first: the compare-and-swap locks the
# provider row, so concurrent writers to one provider queue there and the
# losers get a clean 409 instead of a unique-key clash on inventories.

def _add(conn, provider, class_id, record):
    """Insert one class; 409 if the provider already has it."""
    new_generation = generation.bump(conn, provider['id'],
                                     provider['generation'])
    if get_one(conn, provider['id'], class_id) is not None:
        raise errors.Conflict(
            'Update conflict: Inventory for class %s already exists on '
            'resource provider %s' % (class_id, provider['uuid']),
            code=errors.CONCURRENT_UPDATE)
    conn.execute(_INV.insert().values(
        **_row(provider['id'], class_id, record, tables.utcnow())))
    return new_generation


def _update_one(conn, provider, class_id, record):
    new_generation = generation.bump(conn, provider['id'],
                                     provider['generation'])
    conn.execute(_INV.update().where(
        _INV.c.resource_provider_id == provider['id'],
        _INV.c.resource_class_id == class_id)
        .values(updated_at=tables.utcnow(), **record))
    _warn_if_over_capacity(conn, provider, {class_id: record})
    return new_generation


def _warn_if_over_capacity(conn, provider, records_by_id):
    """Shrinking inventory below its usage is allowed, as upstream; say so
    in the log, naming the provider, so operators can find it."""
    if not records_by_id:
        return
    used = conn.execute(
        sa.select(_USAGE.c.resource_class_id, _USAGE.c.used)
        .where(_USAGE.c.resource_provider_id == provider['id'],
               _USAGE.c.resource_class_id.in_(list(records_by_id)))).all()
    for class_id, amount in used:
        limit = capacity(records_by_id[class_id])
        if amount > limit:
            name = resource_class.names_for(conn, [class_id])[class_id]
            LOG.warning('Resource provider %s is now over-capacity for %s: '
                        'usage %d exceeds capacity %d', provider['uuid'],
                        name, amount, int(limit))


def _delete_one(conn, provider, class_id):
    new_generation = generation.bump(conn, provider['id'],
                                     provider['generation'])
    conn.execute(_INV.delete().where(
        _INV.c.resource_provider_id == provider['id'],
        _INV.c.resource_class_id == class_id))
    return new_generation


def replace_all(conn, provider, records_by_id, in_use_error):
    """Make the inventory exactly ``records_by_id`` ({class id: record}).

    ``in_use_error(class_ids)`` builds the error for removing classes
    that still have allocations."""
    new_generation = generation.bump(conn, provider['id'],
                                     provider['generation'])
    current = {r['resource_class_id']: r for r in conn.execute(
        sa.select(_INV).where(
            _INV.c.resource_provider_id == provider['id'])).mappings()}
    removed = set(current) - set(records_by_id)
    if removed:
        busy = allocated_classes(conn, provider['id'], removed)
        if busy:
            raise in_use_error(busy)
        conn.execute(_INV.delete().where(
            _INV.c.resource_provider_id == provider['id'],
            _INV.c.resource_class_id.in_(removed)))
    now = tables.utcnow()
    new_rows = [_row(provider['id'], cid, rec, now)
                for cid, rec in records_by_id.items() if cid not in current]
    if new_rows:
        conn.execute(_INV.insert(), new_rows)
    for class_id, record in records_by_id.items():
        if class_id in current and _changed(current[class_id], record):
            conn.execute(_INV.update().where(
                _INV.c.id == current[class_id]['id'])
                .values(updated_at=now, **record))
    _warn_if_over_capacity(conn, provider, records_by_id)
    return new_generation


def _changed(row, record):
    return any(row[field] != record[field] for field in FIELDS)


# -- the routes' writes: each is one transaction (Database.run_write) ----

def create(conn, uuid, name, record):
    """POST .../inventories: the new provider generation."""
    provider = rp_obj.require(conn, uuid)
    ids = resource_class.require_ids(
        conn, [name], 'Unable to create inventory for resource provider '
        '%(uuid)s: No such resource class %(name)s.', {'uuid': uuid})
    return _add(conn, provider, ids[name], record)


def set_all(conn, uuid, given_generation, records, version):
    """PUT .../inventories: ``records`` is {class name: record}."""
    provider = rp_obj.require(conn, uuid)
    generation.check(provider, given_generation)
    # Capacity before class names, as upstream checks its Inventory
    # objects before it looks their classes up.
    require_capacity(records, uuid, version, 'update')
    ids = resource_class.require_ids(
        conn, list(records), 'Unknown resource class in inventory for '
        'resource provider %(uuid)s: No such resource class %(name)s.',
        {'uuid': uuid})
    return replace_all(
        conn, provider, {ids[n]: rec for n, rec in records.items()},
        in_use_conflict(conn, uuid))


def delete_all(conn, uuid):
    """DELETE .../inventories (1.5)."""
    provider = rp_obj.require(conn, uuid)
    replace_all(conn, provider, {}, in_use_conflict(conn, uuid, prefix=''))


def update(conn, uuid, name, given_generation, record, version):
    """PUT .../inventories/{class}: the new provider generation."""
    provider = rp_obj.require(conn, uuid)
    generation.check(provider, given_generation)
    # Capacity first: upstream validates the record before it looks up
    # the class (404 if unknown) or the provider's inventory of it (400).
    require_capacity({name: record}, uuid, version, 'update')
    ids = resource_class.require_ids(conn, [name], error=errors.NotFound)
    if get_one(conn, provider['id'], ids[name]) is None:
        raise errors.BadRequest(
            'No inventory record with resource class for resource provider '
            '%s: No inventory of class %s found.' % (uuid, name))
    return _update_one(conn, provider, ids[name], record)


def delete(conn, uuid, name):
    """DELETE .../inventories/{class}."""
    provider = rp_obj.require(conn, uuid)
    ids = resource_class.ids_for(conn, [name])
    if name not in ids or get_one(conn, provider['id'], ids[name]) is None:
        raise errors.NotFound(
            'No inventory of class %s found for delete: No inventory of '
            'class %s found for delete' % (name, name))
    if allocated_classes(conn, provider['id'], [ids[name]]):
        raise in_use_conflict(
            conn, uuid, prefix='Unable to delete inventory of class %s: '
            % name, code=errors.CONCURRENT_UPDATE)([ids[name]])
    _delete_one(conn, provider, ids[name])
