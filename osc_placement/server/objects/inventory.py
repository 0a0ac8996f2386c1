"""Inventories of a provider, per resource class.

Every write bumps the provider generation with a compare-and-swap in the
same transaction, so a concurrent writer loses with a 409.
"""

import logging

import sqlalchemy as sa

from osc_placement.server import errors
from osc_placement.server.db import tables
from osc_placement.server.objects import generation
from osc_placement.server.objects import resource_class

LOG = logging.getLogger(__name__)
_INV = tables.inventories
_ALLOC = tables.allocations
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


def capacity(record):
    return int((record['total'] - record['reserved'])
               * record['allocation_ratio'])


def check_capacity(records, provider_uuid, version):
    """Upstream's reserved-vs-total rule; ``records`` is {rc name: rec}.

    Returns the error text (without prefix) or None."""
    for name, record in records.items():
        cap = (record['total'] - record['reserved']) \
            * record['allocation_ratio']
        if version.supports('reserved_eq_total'):
            bad, relation = cap < 0, 'greater than'
        else:
            bad, relation = cap <= 0, 'greater than or equal to'
        if bad:
            return ("Invalid inventory for '%s' on resource provider '%s'. "
                    "The reserved value is %s total."
                    % (name, provider_uuid, relation))
    return None


def get_all(conn, provider_id):
    """{class name: record}, plus the latest change time (or None)."""
    rows = conn.execute(
        sa.select(_INV).where(_INV.c.resource_provider_id == provider_id)
        .order_by(_INV.c.resource_class_id)).mappings().all()
    names = resource_class.names_for(
        conn, [r['resource_class_id'] for r in rows])
    records = {names[r['resource_class_id']]:
               {field: r[field] for field in FIELDS} for r in rows}
    return records, _latest(rows)


def _latest(rows):
    times = [r['updated_at'] or r['created_at'] for r in rows]
    return max(times) if times else None


def get_one(conn, provider_id, class_id):
    return conn.execute(sa.select(_INV).where(
        _INV.c.resource_provider_id == provider_id,
        _INV.c.resource_class_id == class_id)).mappings().first()


def allocated_classes(conn, provider_id, class_ids=None):
    """Class ids among ``class_ids`` (or all) with allocations."""
    query = sa.select(_ALLOC.c.resource_class_id).distinct().where(
        _ALLOC.c.resource_provider_id == provider_id)
    if class_ids is not None:
        query = query.where(_ALLOC.c.resource_class_id.in_(class_ids))
    return set(conn.execute(query).scalars())


def in_use_message(conn, provider_uuid, class_ids):
    """Upstream's text; the classes in class id order, as upstream's
    GROUP BY resource_class_id query hands them over."""
    names = resource_class.names_for(conn, class_ids)
    return ("Inventory for '%s' on resource provider '%s' in use."
            % (', '.join(names[i] for i in sorted(class_ids)),
               provider_uuid))


def in_use_conflict(conn, provider_uuid, prefix='update conflict: '):
    """The ``in_use_error`` for :func:`replace_all`: a 409
    ``inventory.inuse`` naming the busy classes. A whole-inventory PUT and
    the reshaper prefix the text as upstream does; DELETE does not."""
    def error(class_ids):
        return errors.Conflict(
            prefix + in_use_message(conn, provider_uuid, class_ids),
            code=errors.INVENTORY_INUSE)
    return error


def _row(provider_id, class_id, record, now):
    row = dict(record, resource_provider_id=provider_id,
               resource_class_id=class_id, created_at=now)
    return row


# Each write bumps the generation first: the compare-and-swap locks the
# provider row, so concurrent writers to one provider queue there and the
# losers get a clean 409 instead of a unique-key clash on inventories.

def add(conn, provider, class_id, record):
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


def update_one(conn, provider, class_id, record):
    new_generation = generation.bump(conn, provider['id'],
                                     provider['generation'])
    conn.execute(_INV.update().where(
        _INV.c.resource_provider_id == provider['id'],
        _INV.c.resource_class_id == class_id)
        .values(updated_at=tables.utcnow(), **record))
    warn_if_over_capacity(conn, provider, {class_id: record})
    return new_generation


def warn_if_over_capacity(conn, provider, records_by_id):
    """Shrinking inventory below its usage is allowed, as upstream; say so
    in the log, naming the provider, so operators can find it."""
    if not records_by_id:
        return
    used = conn.execute(
        sa.select(_ALLOC.c.resource_class_id, sa.func.sum(_ALLOC.c.used))
        .where(_ALLOC.c.resource_provider_id == provider['id'],
               _ALLOC.c.resource_class_id.in_(list(records_by_id)))
        .group_by(_ALLOC.c.resource_class_id)).all()
    for class_id, amount in used:
        record = records_by_id[class_id]
        limit = ((record['total'] - record['reserved'])
                 * record['allocation_ratio'])
        if amount > limit:
            name = resource_class.names_for(conn, [class_id])[class_id]
            LOG.warning('Resource provider %s is now over-capacity for %s: '
                        'usage %d exceeds capacity %d', provider['uuid'],
                        name, amount, int(limit))


def delete_one(conn, provider, class_id):
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
    warn_if_over_capacity(conn, provider, records_by_id)
    return new_generation


def _changed(row, record):
    return any(row[field] != record[field] for field in FIELDS)
