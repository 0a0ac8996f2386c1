"""The SQL read behind ``GET /allocation_candidates``: a SliceSpec in, a
candidate_search.Snapshot out.

Six set-based statements whatever the cloud size, none per provider
(candidate_search.SliceSpec spells out the contract):

1. seed providers: enough capacity for a requested class (or, for
   resourceless groups, a trait or aggregate the request names), with
   their roots and whether they share via aggregate;
2. the anchor roots of the sharing seeds;
3. every provider of the trees to load;
4. their inventories with usage, 5. their traits, 6. their aggregates.

Usage is a correlated sum over the (provider, class, used) index on
allocations, so each inventory row costs one index range read and no
statement aggregates the whole allocations table.
"""

import sqlalchemy as sa

from osc_placement.server.db import tables
from osc_placement.server.objects import candidate_search
from osc_placement.server.objects import resource_class

_RP = tables.resource_providers
_INV = tables.inventories
_ALLOC = tables.allocations
_T = tables.traits
_RPT = tables.resource_provider_traits
_RPA = tables.resource_provider_aggregates
_AGG = tables.placement_aggregates


def _ids(values):
    """An IN list of integer ids rendered inline: a thousand bound
    parameters cost the driver more to convert than the database to run
    the statement, and ids (ints from our own reads) are safe literals."""
    return sa.bindparam(None, sorted(values), expanding=True,
                        literal_execute=True)


def _used():
    """Usage of the inventory row's provider and class (0 if none)."""
    # Cast: MySQL sums integers to DECIMAL, which JSON cannot encode.
    total = sa.cast(sa.func.coalesce(sa.func.sum(_ALLOC.c.used), 0),
                    sa.Integer)
    return (sa.select(total)
            .where(_ALLOC.c.resource_provider_id
                   == _INV.c.resource_provider_id,
                   _ALLOC.c.resource_class_id == _INV.c.resource_class_id)
            .correlate(_INV).scalar_subquery())


def _sharing_flag(trait_id):
    if trait_id is None:
        return sa.literal(False)
    return sa.exists().where(_RPT.c.resource_provider_id == _RP.c.id,
                             _RPT.c.trait_id == trait_id)


def _capacity_seeds(class_ids, sharing):
    """(id, root id, sharing) of providers whose capacity, ignoring usage,
    holds a minimum amount of some requested class; ``class_ids`` is
    {class id: min amount}.

    A superset of SliceSpec's seeds (which count usage): the search checks
    usage anyway, and the inventory statement sums usage for the loaded
    trees, so summing it here too would read the allocations twice."""
    fits = sa.or_(*(sa.and_(_INV.c.resource_class_id == class_id,
                            (_INV.c.total - _INV.c.reserved)
                            * _INV.c.allocation_ratio >= amount)
                    for class_id, amount in class_ids.items()))
    return (sa.select(_RP.c.id, _RP.c.root_provider_id, sharing)
            .select_from(_INV.join(_RP, _RP.c.id
                                   == _INV.c.resource_provider_id))
            .where(fits))


def _filter_seeds(trait_ids, agg_uuids, sharing):
    """Providers with any of the traits or aggregates: the only ones a
    resourceless group can match."""
    has_trait = sa.exists().where(_RPT.c.resource_provider_id == _RP.c.id,
                                  _RPT.c.trait_id.in_(trait_ids))
    in_agg = sa.exists().where(_RPA.c.resource_provider_id == _RP.c.id,
                               _RPA.c.aggregate_id == _AGG.c.id,
                               _AGG.c.uuid.in_(agg_uuids))
    return (sa.select(_RP.c.id, _RP.c.root_provider_id, sharing)
            .where(sa.or_(has_trait, in_agg)))


def _seeds(conn, spec, class_ids, trait_ids):
    """{provider id: root id} and the set of sharing seed ids."""
    sharing = _sharing_flag(trait_ids.get(candidate_search.SHARING_TRAIT))
    queries = []
    if class_ids:
        queries.append(_capacity_seeds(class_ids, sharing))
    if spec.positive_filter_providers and (trait_ids or spec.aggregates):
        queries.append(_filter_seeds(list(trait_ids.values()),
                                     sorted(spec.aggregates), sharing))
    roots, shared = {}, set()
    for query in queries:
        for rp_id, root_id, is_sharing in conn.execute(query):
            roots[rp_id] = root_id or rp_id
            if is_sharing:
                shared.add(rp_id)
    return roots, shared


def _anchor_rows(conn, sharing_ids):
    """(sharing id, root id of every provider sharing an aggregate with
    it): upstream's anchors_for_sharing_providers, in one statement."""
    if not sharing_ids:
        return []
    other = _RPA.alias('other')
    query = (sa.select(_RPA.c.resource_provider_id, _RP.c.root_provider_id)
             .select_from(_RPA.join(other, other.c.aggregate_id
                                    == _RPA.c.aggregate_id)
                          .join(_RP, _RP.c.id
                                == other.c.resource_provider_id))
             .where(_RPA.c.resource_provider_id.in_(_ids(sharing_ids)))
             .distinct())
    return conn.execute(query).all()


def _in_tree_roots(conn, uuids):
    if not uuids:
        return set()
    query = (sa.select(_RP.c.id, _RP.c.root_provider_id)
             .where(_RP.c.uuid.in_(sorted(uuids))))
    return {root or rp_id for rp_id, root in conn.execute(query)}


def _tree_providers(conn, root_ids):
    """{id: (id, uuid, name, generation, parent id, root id)} of whole
    trees."""
    query = (sa.select(_RP.c.id, _RP.c.uuid, _RP.c.name, _RP.c.generation,
                       _RP.c.parent_provider_id, _RP.c.root_provider_id)
             .where(_RP.c.root_provider_id.in_(_ids(root_ids))))
    return {row[0]: row for row in conn.execute(query)}


def _provider_rows(rows):
    """Snapshot provider rows with ids turned into uuids."""
    uuid_of = {rp_id: row[1] for rp_id, row in rows.items()}
    return [(uuid, name, generation, uuid_of.get(parent),
             uuid_of.get(root, uuid))
            for _, uuid, name, generation, parent, root in rows.values()]


def _inventory_rows(conn, root_ids, uuid_of):
    query = (sa.select(_INV.c.resource_provider_id,
                       _INV.c.resource_class_id, _INV.c.total,
                       _INV.c.reserved, _INV.c.min_unit, _INV.c.max_unit,
                       _INV.c.step_size, _INV.c.allocation_ratio, _used())
             .select_from(_INV.join(_RP, _RP.c.id
                                    == _INV.c.resource_provider_id))
             .where(_RP.c.root_provider_id.in_(_ids(root_ids))))
    rows = conn.execute(query).all()
    names = resource_class.names_for(conn, {row[1] for row in rows})
    # A row of a provider created after statement 3 is dropped: the
    # snapshot must hold whole trees it knows the shape of.
    return [(uuid_of[row[0]], names[row[1]]) + tuple(row[2:])
            for row in rows if row[0] in uuid_of and row[1] in names]


def _name_rows(conn, link, name_table, name_column, root_ids, uuid_of):
    """(provider uuid, trait name or aggregate uuid) of the trees."""
    query = (sa.select(link.c.resource_provider_id, name_column)
             .select_from(link.join(name_table, name_table.c.id
                                    == _link_key(link))
                          .join(_RP, _RP.c.id
                                == link.c.resource_provider_id))
             .where(_RP.c.root_provider_id.in_(_ids(root_ids))))
    return [(uuid_of[rp_id], name) for rp_id, name in conn.execute(query)
            if rp_id in uuid_of]


def _link_key(link):
    return link.c.trait_id if link is _RPT else link.c.aggregate_id


class SliceReader:
    """Reads the slice of one request, whole or a window of its trees.

    Statements 1 and 2 run once, at construction: they are cheap (no
    usage) and order the trees to load. ``snapshot(count)`` then loads the
    first ``count`` trees (plus the sharing providers serving them), so a
    request with a small ``limit`` reads a few trees instead of the cloud.

    class_ids: {class name: id} and trait_ids: {trait name: id} for the
    names the request uses (unknown names already rejected).
    """

    def __init__(self, conn, spec, class_ids, trait_ids):
        self.conn = conn
        seed_roots, sharing = _seeds(
            conn, spec, {class_ids[rc]: amount
                         for rc, amount in spec.min_amounts.items()},
            {name: trait_ids[name] for name in spec.traits
             if name in trait_ids})
        self.anchors = _anchor_rows(conn, sharing)
        self.sharing_root = {rp_id: seed_roots[rp_id] for rp_id in sharing}
        # in_tree roots first: a group confined to them matches nothing
        # elsewhere, so a window without them would be wasted.
        in_tree = _in_tree_roots(conn, spec.in_tree)
        others = (set(seed_roots.values())
                  | {root for _, root in self.anchors}) - in_tree
        self.roots = sorted(in_tree) + sorted(others)

    def snapshot(self, count=None):
        """The Snapshot of the first ``count`` trees (all if None) and of
        the sharing providers serving them."""
        window = set(self.roots if count is None else self.roots[:count])
        window |= {self.sharing_root[rp_id] for rp_id, root in self.anchors
                   if root in window}
        if not window:
            return candidate_search.Snapshot(providers={})
        return _load_trees(self.conn, window, self.anchors)

    def is_whole(self, count):
        return count is None or count >= len(self.roots)


def _load_trees(conn, root_ids, anchors):
    providers = _tree_providers(conn, root_ids)
    uuid_of = {rp_id: row[1] for rp_id, row in providers.items()}
    return candidate_search.Snapshot.from_rows(
        _provider_rows(providers),
        _inventory_rows(conn, root_ids, uuid_of),
        _name_rows(conn, _RPT, _T, _T.c.name, root_ids, uuid_of),
        _name_rows(conn, _RPA, _AGG, _AGG.c.uuid, root_ids, uuid_of),
        # Anchors outside the window are left out: the search must not
        # walk a tree it has not loaded.
        [(uuid_of[s], uuid_of[r]) for s, r in anchors
         if s in uuid_of and r in uuid_of])


def load_snapshot(conn, spec, class_ids, trait_ids):
    """The whole slice for ``spec`` (a SliceSpec) as a Snapshot."""
    return SliceReader(conn, spec, class_ids, trait_ids).snapshot()
