# SPDX-License-Identifier: Apache-2.0
"""GET /resource_providers: the providers matching every filter."""

import sqlalchemy as sa

from osc_placement.server.db import lists
from osc_placement.server.db import tables
from osc_placement.server.objects import inventory as inv_obj
from osc_placement.server.objects import resource_provider as rp_obj

_RP = tables.resource_providers
_INV = tables.inventories
_USAGE = tables.usage_totals
_RPT = tables.resource_provider_traits
_RPA = tables.resource_provider_aggregates
_AGG = tables.placement_aggregates


def _capacity_clause(class_id, amount):
    """The provider has inventory of the class that fits ``amount``.

    The class and the amount are written into the statement, not bound:
    once psycopg prepares a statement, PostgreSQL may switch to a generic
    plan, which cannot see how many inventories pass and guesses one; it
    then joins every provider in nested loops.
    """
    class_id = sa.literal(class_id, literal_execute=True)
    amount = sa.literal(amount, literal_execute=True)
    with_usage = _INV.outerjoin(_USAGE, sa.and_(
        _USAGE.c.resource_provider_id == _INV.c.resource_provider_id,
        _USAGE.c.resource_class_id == _INV.c.resource_class_id))
    return sa.exists().select_from(with_usage).where(
        _INV.c.resource_provider_id == _RP.c.id,
        _INV.c.resource_class_id == class_id,
        _INV.c.min_unit <= amount, _INV.c.max_unit >= amount,
        amount % _INV.c.step_size == 0,
        inv_obj.capacity(_INV.c)
        >= sa.func.coalesce(_USAGE.c.used, 0) + amount)


def _traits_clause(conn, trait_ids, present=True):
    clause = sa.exists().where(_RPT.c.resource_provider_id == _RP.c.id,
                               lists.one_of(conn, _RPT.c.trait_id, trait_ids))
    return clause if present else ~clause


def _aggregates_clause(conn, agg_uuids, present=True):
    clause = sa.exists().where(
        _RPA.c.resource_provider_id == _RP.c.id,
        _RPA.c.aggregate_id == _AGG.c.id,
        lists.one_of(conn, _AGG.c.uuid, agg_uuids))
    return clause if present else ~clause


def _in_tree_clause(uuid):
    root = (sa.select(_RP.c.root_provider_id).where(_RP.c.uuid == uuid)
            .scalar_subquery())
    return _RP.c.root_provider_id == root


def matching(conn, name=None, uuid=None, in_tree=None,
             resources=None, required=(), forbidden=(),
             member_of=(), forbidden_aggs=()):
    """Providers matching every filter (ids already resolved).

    ``resources`` is {class_id: amount}; ``required`` a list of any-of
    trait-id sets; ``member_of`` a list of any-of aggregate uuid sets.
    """
    clauses = []
    if name is not None:
        clauses.append(_RP.c.name == name)
    if uuid is not None:
        clauses.append(_RP.c.uuid == uuid)
    if in_tree is not None:
        clauses.append(_in_tree_clause(in_tree))
    for class_id, amount in (resources or {}).items():
        clauses.append(_capacity_clause(class_id, amount))
    clauses.extend(_traits_clause(conn, ids) for ids in required)
    if forbidden:
        clauses.append(_traits_clause(conn, forbidden, present=False))
    clauses.extend(_aggregates_clause(conn, uuids) for uuids in member_of)
    if forbidden_aggs:
        clauses.append(_aggregates_clause(conn, forbidden_aggs,
                                          present=False))
    query = rp_obj.select_rows().where(*clauses).order_by(_RP.c.id)
    return conn.execute(query).mappings().all()
