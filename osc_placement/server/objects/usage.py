# SPDX-License-Identifier: Apache-2.0
"""Usages: per provider (classes with inventory) and per project/user.

A provider's usage is read from usage_totals, as every other reader of
usage does; the project and user usages sum the allocations, whose
consumers the totals do not hold."""

import functools

import sqlalchemy as sa

from osc_placement.server.db import tables
from osc_placement.server.objects import resource_class
from osc_placement.server.objects import resource_provider as rp_obj

_INV = tables.inventories
_RP = tables.resource_providers
_ALLOC = tables.allocations
_USAGE = tables.usage_totals
_C = tables.consumers
_P = tables.projects
_U = tables.users
_CT = tables.consumer_types


@functools.lru_cache(maxsize=None)
def _provider_usages_statement():
    return rp_obj.select_with_provider(
        (_INV.c.resource_class_id,
         sa.func.coalesce(_USAGE.c.used, 0).label('used')),
        ((_INV, _INV.c.resource_provider_id == _RP.c.id),
         (_USAGE, sa.and_(
             _USAGE.c.resource_provider_id == _INV.c.resource_provider_id,
             _USAGE.c.resource_class_id == _INV.c.resource_class_id))))


def provider_usages(conn, uuid, template):
    """(provider generation, {class name: used} for every class it has
    inventory of); 404 with ``template`` if there is no such provider."""
    generation, rows = rp_obj.read_with_provider(
        conn, _provider_usages_statement(), uuid, 'resource_class_id',
        template)
    names = resource_class.names_for(
        conn, [row['resource_class_id'] for row in rows])
    return generation, {names[row['resource_class_id']]: int(row['used'])
                        for row in rows}


def _project_filter(query, project_id, user_id):
    query = query.join(_C, _C.c.uuid == _ALLOC.c.consumer_id).join(
        _P, _P.c.id == _C.c.project_id).where(_P.c.external_id == project_id)
    if user_id is not None:
        query = query.join(_U, _U.c.id == _C.c.user_id).where(
            _U.c.external_id == user_id)
    return query


def project_usages(conn, project_id, user_id=None):
    """{class name: used} over the project's (and user's) consumers."""
    query = _project_filter(
        sa.select(_ALLOC.c.resource_class_id, sa.func.sum(_ALLOC.c.used))
        .group_by(_ALLOC.c.resource_class_id), project_id, user_id)
    rows = conn.execute(query).all()
    names = resource_class.names_for(conn, [r[0] for r in rows])
    return {names[class_id]: int(amount) for class_id, amount in rows}


def project_usages_by_type(conn, project_id, user_id=None,
                           consumer_type=None):
    """1.38: {type: {class: used, ..., 'consumer_count': n}}."""
    type_name = sa.func.coalesce(_CT.c.name, 'unknown')
    group = sa.literal('all') if consumer_type == 'all' else type_name
    base = _project_filter(
        sa.select(group.label('type'), _ALLOC.c.resource_class_id,
                  sa.func.sum(_ALLOC.c.used), _ALLOC.c.consumer_id)
        .select_from(_ALLOC), project_id, user_id)
    base = base.outerjoin(_CT, _CT.c.id == _C.c.consumer_type_id)
    if consumer_type == 'unknown':
        base = base.where(_C.c.consumer_type_id.is_(None))
    elif consumer_type not in (None, 'all'):
        base = base.where(_CT.c.name == consumer_type)
    rows = conn.execute(base.group_by(
        group, _ALLOC.c.resource_class_id, _ALLOC.c.consumer_id)
    ).all()
    return _group_by_type(conn, rows)


def _group_by_type(conn, rows):
    names = resource_class.names_for(conn, {r[1] for r in rows})
    usages, consumers = {}, {}
    for type_name, class_id, amount, consumer in rows:
        per_type = usages.setdefault(type_name, {})
        name = names[class_id]
        per_type[name] = per_type.get(name, 0) + int(amount)
        consumers.setdefault(type_name, set()).add(consumer)
    for type_name, per_type in usages.items():
        per_type['consumer_count'] = len(consumers[type_name])
    return usages
