# SPDX-License-Identifier: Apache-2.0
"""Aggregates: bare UUIDs linked to providers, created on first use."""

import functools

import sqlalchemy as sa

from osc_placement.server.db import engine as db_engine
from osc_placement.server.db import lists
from osc_placement.server.db import tables
from osc_placement.server.objects import generation
from osc_placement.server.objects import resource_provider as rp_obj

_AGG = tables.placement_aggregates
_RPA = tables.resource_provider_aggregates
_RP = tables.resource_providers


@functools.lru_cache(maxsize=None)
def _provider_aggregates_statement():
    return rp_obj.select_with_provider(
        (_AGG.c.uuid.label('aggregate_uuid'),),
        ((_RPA, _RPA.c.resource_provider_id == _RP.c.id),
         (_AGG, _AGG.c.id == _RPA.c.aggregate_id)),
        order_by=(_RPA.c.aggregate_id,))


def read_provider_aggregates(conn, uuid):
    """(provider generation, its aggregate uuids in aggregate id (first
    use) order, as upstream's scan of the (provider, aggregate) key
    returns them), by one statement; 404 if there is no such provider."""
    generation, rows = rp_obj.read_with_provider(
        conn, _provider_aggregates_statement(), uuid, 'aggregate_uuid',
        rp_obj.NOT_FOUND)
    return generation, [row['aggregate_uuid'] for row in rows]


def _ensure(conn, uuids):
    """{uuid: id}, inserting the aggregates that do not exist yet."""
    def existing():
        return dict(conn.execute(
            sa.select(_AGG.c.uuid, _AGG.c.id)
            .where(lists.one_of(conn, _AGG.c.uuid, uuids))).all())
    found = existing()
    missing = [u for u in uuids if u not in found]
    if missing:
        now = tables.utcnow()
        try:
            conn.execute(_AGG.insert(), [{'uuid': u, 'created_at': now}
                                         for u in missing])
        except sa.exc.IntegrityError:
            # Another request created one of them: start over, it exists now.
            raise db_engine.Retry(db_engine.DUPLICATE_KEY)
        found = existing()
    return found


def _replace_provider_aggregates(conn, provider_id, uuids):
    wanted = set(_ensure(conn, uuids).values()) if uuids else set()
    current = set(conn.execute(
        sa.select(_RPA.c.aggregate_id)
        .where(_RPA.c.resource_provider_id == provider_id)).scalars())
    if current - wanted:
        conn.execute(_RPA.delete().where(
            _RPA.c.resource_provider_id == provider_id,
            lists.one_of(conn, _RPA.c.aggregate_id, current - wanted)))
    if wanted - current:
        now = tables.utcnow()
        conn.execute(_RPA.insert(), [
            {'resource_provider_id': provider_id, 'aggregate_id': a,
             'created_at': now} for a in sorted(wanted - current)])


def set_for_provider(conn, uuid, aggregates, given_generation):
    """PUT /resource_providers/{uuid}/aggregates: the provider's new
    generation. ``given_generation`` None (before 1.19) neither checks
    nor bumps it."""
    provider = rp_obj.require(conn, uuid)
    new_generation = provider['generation']
    if given_generation is not None:
        # Compare-and-swap first: concurrent writers queue on the row.
        generation.check(provider, given_generation,
                         generation.already_changed)
        new_generation = generation.bump(conn, provider['id'],
                                         given_generation,
                                         generation.already_changed)
    _replace_provider_aggregates(conn, provider['id'], aggregates)
    return new_generation
