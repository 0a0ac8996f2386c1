# SPDX-License-Identifier: Apache-2.0
"""POST /reshaper: move inventory and allocations within a tree at once.

All in the caller's one transaction, in upstream's three steps so the
provider generations move exactly as upstream's do (spec §3.2, §5.7):
(a) every provider with new inventory gets its current inventory overlaid
with the new records, so nothing allocated disappears yet; (b) the
consumers' allocations are replaced, checked against that interim
inventory; (c) every provider gets exactly its new inventory. Any error
rolls the whole transaction back: nothing changes.
"""

import sqlalchemy as sa

from osc_placement.server.db import lists
from osc_placement.server.db import tables
from osc_placement.server import errors
from osc_placement.server.objects import allocation as alloc_obj
from osc_placement.server.objects import inventory as inv_obj
from osc_placement.server.objects import resource_class

_RP = tables.resource_providers
_INV = tables.inventories
UNKNOWN_CLASS = 'malformed reshaper data: No such resource class %(name)s.'
# Upstream's reshaper words a lost generation race as its other updates.
CONCURRENT = ('update conflict: Another thread concurrently updated the '
              'resource provider data. Please retry your update')


class ProviderInventory:
    """One provider's entry of the body: its generation and records."""

    def __init__(self, uuid, given_generation, records):
        self.uuid = uuid
        self.given_generation = given_generation
        self.records = records


def _providers(conn, uuids):
    rows = conn.execute(sa.select(_RP.c.id, _RP.c.uuid, _RP.c.generation)
                        .where(lists.one_of(conn, _RP.c.uuid, sorted(uuids)))
                        ).mappings()
    return {row['uuid']: row for row in rows}


def _check_entries(providers, class_ids, entries):
    """In body order, as upstream: the provider exists, the client's
    generation is current, and its classes exist."""
    for entry in entries:
        provider = providers.get(entry.uuid)
        if provider is None:
            raise errors.BadRequest(
                'Resource provider %s in inventories not found: No resource '
                'provider with uuid %s found' % (entry.uuid, entry.uuid),
                code=errors.PROVIDER_NOT_FOUND)
        if provider['generation'] != entry.given_generation:
            raise errors.Conflict(
                'resource provider generation conflict for provider %s: '
                'actual: %s, given: %s' % (entry.uuid, provider['generation'],
                                           entry.given_generation),
                code=errors.CONCURRENT_UPDATE)
        for name in entry.records:
            if name not in class_ids:
                raise errors.BadRequest(UNKNOWN_CLASS % {'name': name})


def _current_inventories(conn, provider_ids):
    """{provider id: {class id: record}}, one query for the whole tree."""
    found = {pid: {} for pid in provider_ids}
    rows = conn.execute(sa.select(_INV).where(
        lists.one_of(conn, _INV.c.resource_provider_id,
                     sorted(provider_ids)))).mappings()
    for row in rows:
        found[row['resource_provider_id']][row['resource_class_id']] = {
            field: row[field] for field in inv_obj.FIELDS}
    return found


def _set_inventories(conn, providers, entries, records_for):
    """Write ``records_for(entry)`` (None = skip) on each provider; each
    write bumps the provider generation with a compare-and-swap."""
    for entry in entries:
        records = records_for(entry)
        if records is not None:
            inv_obj.replace_all(conn, providers[entry.uuid], records,
                                inv_obj.in_use_conflict(conn, entry.uuid))


def reshape(conn, entries, writes):
    """``entries``: ProviderInventory list in body order; ``writes``: the
    allocation ConsumerWrites."""
    providers = _providers(conn, [e.uuid for e in entries])
    class_ids = resource_class.ids_for(
        conn, sorted({name for e in entries for name in e.records}))
    _check_entries(providers, class_ids, entries)
    new = {e.uuid: {class_ids[n]: inv_obj.with_defaults(r)
                    for n, r in e.records.items()} for e in entries}
    current = _current_inventories(conn, [p['id'] for p in
                                          providers.values()])

    def interim(entry):
        if not new[entry.uuid]:
            return None
        return {**current[providers[entry.uuid]['id']], **new[entry.uuid]}
    _set_inventories(conn, providers, entries, interim)
    alloc_obj.replace(conn, writes, alloc_obj.Messages(UNKNOWN_CLASS))
    # Generations moved in (a) and (b); the final swap needs the new ones.
    providers = _providers(conn, providers)
    _set_inventories(conn, providers, entries, lambda e: new[e.uuid])
