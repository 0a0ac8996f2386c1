# SPDX-License-Identifier: Apache-2.0
"""The cloud's capacity and usage for GET /metrics, in one read.

One statement reads every inventory with its provider's name, its class
name and its provider's usage of the class (``usage_totals``, kept by
triggers in every writer's transaction, so writes through other workers,
other API hosts and upstream Placement count); one counts the providers
and, when asked, one lists which providers are in which aggregate. The
sums are made here, in Python: the per-provider series need every row
anyway, and the statements stay the same whatever is published.
"""

import collections
import dataclasses
import functools

import sqlalchemy as sa

from osc_placement.server.db import tables
from osc_placement.server.objects import inventory as inv_obj

_INV = tables.inventories
_RP = tables.resource_providers
_RC = tables.resource_classes
_USAGE = tables.usage_totals
_RPA = tables.resource_provider_aggregates
_AGG = tables.placement_aggregates


# One provider's inventory of one class, and its usage (plain tuples: a
# large cloud has hundreds of thousands).
Inventory = collections.namedtuple(
    'Inventory', 'provider resource_class total reserved allocation_ratio '
    'used')


@dataclasses.dataclass
class ClassTotals:
    """The sums of one resource class over a set of providers."""

    total: int = 0
    reserved: int = 0
    capacity: float = 0.0
    used: int = 0
    over_capacity: int = 0  # inventories whose usage exceeds capacity

    def add(self, total, reserved, capacity, used):
        self.total += total
        self.reserved += reserved
        self.capacity += capacity
        self.used += used
        if used > capacity:
            self.over_capacity += 1


@dataclasses.dataclass
class CloudCapacity:
    """inventories:   every Inventory; ``provider`` is the provider's
                   name (its uuid if it has none)
    providers:     how many resource providers exist
    classes:       class name -> ClassTotals of the whole cloud
    aggregates:    (aggregate uuid, class name) -> ClassTotals of the
                   aggregate's providers (empty unless asked for)"""

    inventories: list
    providers: int
    classes: dict
    aggregates: dict


@functools.lru_cache(maxsize=None)
def _inventories_statement():
    return (sa.select(_INV.c.resource_provider_id,
                      sa.func.coalesce(_RP.c.name, _RP.c.uuid),
                      _RC.c.name, _INV.c.total, _INV.c.reserved,
                      _INV.c.allocation_ratio,
                      sa.func.coalesce(_USAGE.c.used, 0))
            .select_from(_INV)
            .join(_RP, _RP.c.id == _INV.c.resource_provider_id)
            .join(_RC, _RC.c.id == _INV.c.resource_class_id)
            .outerjoin(_USAGE, sa.and_(
                _USAGE.c.resource_provider_id == _INV.c.resource_provider_id,
                _USAGE.c.resource_class_id == _INV.c.resource_class_id)))


@functools.lru_cache(maxsize=None)
def _memberships_statement():
    return (sa.select(_RPA.c.resource_provider_id, _AGG.c.uuid)
            .select_from(_RPA)
            .join(_AGG, _AGG.c.id == _RPA.c.aggregate_id))


def read(conn, per_aggregate=True):
    """The CloudCapacity of the database ``conn`` reads; the aggregates'
    sums only when ``per_aggregate``."""
    rows = conn.execute(_inventories_statement()).all()
    providers = conn.execute(
        sa.select(sa.func.count()).select_from(_RP)).scalar()
    memberships = collections.defaultdict(list)
    if per_aggregate:
        for provider_id, aggregate in conn.execute(_memberships_statement()):
            memberships[provider_id].append(aggregate)
    return summed(rows, providers, memberships)


def summed(rows, providers, memberships):
    """A CloudCapacity from the inventory rows, the provider count and
    {provider id: [aggregate uuid]}."""
    inventories = []
    classes = collections.defaultdict(ClassTotals)
    aggregates = collections.defaultdict(ClassTotals)
    capacity_of = inv_obj.capacity_of
    for provider_id, name, rc, total, reserved, ratio, used in rows:
        inventories.append(Inventory(name, rc, total, reserved, ratio, used))
        capacity = capacity_of(total, reserved, ratio)
        classes[rc].add(total, reserved, capacity, used)
        for aggregate in memberships.get(provider_id, ()):
            aggregates[aggregate, rc].add(total, reserved, capacity, used)
    return CloudCapacity(inventories, providers, dict(classes),
                         dict(aggregates))
