"""The SQL read behind ``GET /allocation_candidates``: a SliceSpec in, a
candidate_search.Snapshot out.

Six set-based statements whatever the cloud size, none per provider
(candidate_search.SliceSpec spells out the contract):

1. the roots (by id, the first N for a window) of the trees holding a
   seed provider -- enough capacity for a requested class or, for
   resourceless groups, a trait or aggregate the request names -- or
   served by a sharing seed;
2. the anchor roots of the sharing seeds (in the window);
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


def _capacity_clause(class_ids):
    """The provider (``_RP``) has capacity, ignoring usage, for a minimum
    amount of some requested class; ``class_ids`` is {class id: amount}.

    A superset of SliceSpec's seeds (which count usage): the search checks
    usage anyway, and the inventory statement sums usage for the loaded
    trees, so summing it here too would read the allocations twice."""
    fits = sa.or_(*(sa.and_(_INV.c.resource_class_id == class_id,
                            (_INV.c.total - _INV.c.reserved)
                            * _INV.c.allocation_ratio >= amount)
                    for class_id, amount in class_ids.items()))
    return sa.exists().where(_INV.c.resource_provider_id == _RP.c.id, fits)


def _filter_clause(trait_ids, agg_uuids):
    """The provider has any of the traits or aggregates: the only
    providers a resourceless group can match."""
    has_trait = sa.exists().where(_RPT.c.resource_provider_id == _RP.c.id,
                                  _RPT.c.trait_id.in_(trait_ids))
    in_agg = sa.exists().where(_RPA.c.resource_provider_id == _RP.c.id,
                               _RPA.c.aggregate_id == _AGG.c.id,
                               _AGG.c.uuid.in_(agg_uuids))
    return sa.or_(has_trait, in_agg)


def _seed_clause(spec, class_ids, trait_ids):
    """WHERE clause on ``_RP`` selecting the seed providers, or None."""
    clauses = []
    if class_ids:
        clauses.append(_capacity_clause(class_ids))
    if spec.positive_filter_providers and (trait_ids or spec.aggregates):
        clauses.append(_filter_clause(list(trait_ids.values()),
                                      sorted(spec.aggregates)))
    return sa.or_(*clauses) if clauses else None


def _root_of(provider):
    # The bare column, not coalesce(root, id): every provider's root is
    # set in the transaction that creates it (a root names itself), and
    # only the bare column lets the database walk the root index in order
    # and stop after a window's roots instead of sorting every tree.
    return provider.c.root_provider_id


_ROOT = _root_of(_RP)


def _is_sharing(sharing_id, provider=_RP):
    return sa.exists().where(_RPT.c.resource_provider_id == provider.c.id,
                             _RPT.c.trait_id == sharing_id)


def _sharing_seeds(seed_clause, is_sharing):
    """Subquery (id, root) of the seeds sharing via aggregate."""
    return (sa.select(_RP.c.id.label('id'), _ROOT.label('root'))
            .where(seed_clause, is_sharing).subquery('sharing'))


def _served(sharing):
    """FROM clause: sharing seeds joined to every provider (``peer``)
    sharing an aggregate with them, and that peer table."""
    mine, other = _RPA.alias('mine'), _RPA.alias('other')
    peer = _RP.alias('peer')
    joined = (sharing.join(mine, mine.c.resource_provider_id == sharing.c.id)
              .join(other, other.c.aggregate_id == mine.c.aggregate_id)
              .join(peer, peer.c.id == other.c.resource_provider_id))
    return joined, peer


def _has_aggregate(provider_id, agg_uuids):
    """The provider is in one of the aggregates ``agg_uuids``."""
    link, agg = _RPA.alias('link'), _AGG.alias('agg')
    return sa.exists().where(link.c.resource_provider_id == provider_id,
                             link.c.aggregate_id == agg.c.id,
                             agg.c.uuid.in_(sorted(agg_uuids)))


def _tree_has_aggregate(root, agg_uuids):
    """Some provider of the tree rooted at ``root`` is in one of the
    aggregates ``agg_uuids``."""
    member = _RP.alias('member')
    return sa.exists().where(member.c.root_provider_id == root,
                             _has_aggregate(member.c.id, agg_uuids))


def _first_roots(query, root, count):
    """The first ``count`` (all if None) distinct ``root`` values of
    ``query`` by id, as a subquery: the database walks the root index and
    stops, so a small window costs a few rows, not the cloud."""
    query = query.distinct().order_by(root)
    if count is not None:
        query = query.limit(count)
    return query.subquery()


def _window_roots(conn, reader, count, after):
    """The first ``count`` roots (all if None) after ``after`` of the
    trees holding a seed other than a sharing one or served by a sharing
    seed, and whether no more follow them.

    Sharing providers' own trees are left out of the order (they come
    with the trees they serve): created first, as they usually are, they
    would otherwise fill the first windows with trees that cannot hold a
    candidate on their own. Two ordered, cut reads, in one statement, then
    merged: the first ``count`` of the union are among the first ``count``
    of each part."""
    seeds = reader.seeds
    if reader.sharing is not None:
        seeds = sa.and_(seeds, ~reader.is_sharing)
    query = sa.select(_ROOT).where(seeds)
    aggs = reader.tree_aggregates
    if aggs is not None:
        # A tree served by a sharing provider in ``aggs`` but with no
        # provider of its own in them comes through the second part.
        query = query.where(_tree_has_aggregate(_ROOT, aggs))
    if after is not None:
        query = query.where(_ROOT > after)
    parts = [_first_roots(query, _ROOT, count)]
    if reader.sharing is not None:
        joined, peer = _served(reader.sharing)
        peer_root = _root_of(peer)
        query = (sa.select(peer_root).select_from(joined)
                 .where(~_is_sharing(reader.sharing_id, peer)))
        if aggs is not None:
            query = query.where(sa.or_(
                _tree_has_aggregate(peer_root, aggs),
                _has_aggregate(reader.sharing.c.id, aggs)))
        if after is not None:
            query = query.where(peer_root > after)
        parts.append(_first_roots(query, peer_root, count))
    rows = conn.execute(sa.union_all(*(
        sa.select(sa.literal(tag).label('part'), part.c[0].label('root'))
        for tag, part in enumerate(parts)))).all()
    sizes = [sum(1 for tag, _ in rows if tag == part)
             for part in range(len(parts))]
    whole = count is None or max(sizes) < count
    merged = sorted({root for _, root in rows})
    return (merged if whole else merged[:count]), whole


def _anchor_rows(conn, sharing, root_ids=None):
    """(sharing id, its root, anchor root) for the sharing seeds and the
    roots of every provider sharing an aggregate with them (upstream's
    anchors_for_sharing_providers), limited to anchors in ``root_ids``
    unless None."""
    joined, peer = _served(sharing)
    peer_root = _root_of(peer)
    query = (sa.select(sharing.c.id, sharing.c.root, peer_root)
             .select_from(joined).distinct())
    if root_ids is not None:
        query = query.where(peer_root.in_(_ids(root_ids)))
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


def _name_rows(conn, root_ids, uuid_of):
    """(provider uuid, trait name) and (provider uuid, aggregate uuid)
    rows of the trees, read in one statement."""
    def part(tag, link, key, name):
        return (sa.select(sa.literal(tag).label('kind'),
                          link.c.resource_provider_id, name.label('name'))
                .select_from(link.join(key.table, key.table.c.id
                                       == _link_key(link))
                             .join(_RP, _RP.c.id
                                   == link.c.resource_provider_id))
                .where(_RP.c.root_provider_id.in_(_ids(root_ids))))
    query = sa.union_all(part(0, _RPT, _T.c.id, _T.c.name),
                         part(1, _RPA, _AGG.c.id, _AGG.c.uuid))
    found = ([], [])
    for kind, rp_id, name in conn.execute(query):
        if rp_id in uuid_of:
            found[kind].append((uuid_of[rp_id], name))
    return found


def _link_key(link):
    return link.c.trait_id if link is _RPT else link.c.aggregate_id


class SliceReader:
    """Reads the slice of one request, whole or window by window.

    ``next_window(count)`` loads the next ``count`` trees by root id (all
    the rest if None) plus the sharing providers serving them, so a
    request with a small ``limit`` reads a few trees instead of the cloud;
    ``whole`` then tells whether no tree is left to read.

    class_ids: {class name: id} and trait_ids: {trait name: id} for the
    names the request uses (unknown names already rejected).
    """

    def __init__(self, conn, spec, class_ids, trait_ids):
        self.conn = conn
        self.seeds = _seed_clause(
            spec, {class_ids[rc]: amount
                   for rc, amount in spec.min_amounts.items()},
            {name: trait_ids[name] for name in spec.traits
             if name in trait_ids})
        self.tree_aggregates = spec.tree_aggregates
        self.sharing_id = trait_ids.get(candidate_search.SHARING_TRAIT)
        self.sharing = self.is_sharing = None
        if self.seeds is not None and self.sharing_id is not None:
            self.is_sharing = _is_sharing(self.sharing_id)
            self.sharing = _sharing_seeds(self.seeds, self.is_sharing)
        # in_tree roots are in every window: a group confined to them
        # matches nothing elsewhere.
        self.in_tree = _in_tree_roots(conn, spec.in_tree)
        self.whole = False
        self.after = None
        self.read = 0  # trees read so far through the window order

    def next_window(self, count=None):
        roots, self.whole = [], True
        if self.seeds is not None:
            roots, self.whole = _window_roots(self.conn, self, count,
                                              self.after)
        if roots:
            self.after = roots[-1]
            self.read += len(roots)
        window = self.in_tree | set(roots)
        anchors = []
        if self.sharing is not None:
            anchors = _anchor_rows(self.conn, self.sharing,
                                   None if self.whole else window)
            if self.whole:
                # Every sharing seed, with its peers or alone.
                window |= {root for root, in self.conn.execute(
                    sa.select(self.sharing.c.root))}
        window |= {sharing_root for _, sharing_root, _ in anchors}
        if not window:
            return candidate_search.Snapshot(providers={})
        return _load_trees(self.conn, window,
                           [(rp_id, root) for rp_id, _, root in anchors])


def _load_trees(conn, root_ids, anchors):
    providers = _tree_providers(conn, root_ids)
    uuid_of = {rp_id: row[1] for rp_id, row in providers.items()}
    traits, aggregates = _name_rows(conn, root_ids, uuid_of)
    return candidate_search.Snapshot.from_rows(
        _provider_rows(providers),
        _inventory_rows(conn, root_ids, uuid_of), traits, aggregates,
        # Anchors outside the window are left out: the search must not
        # walk a tree it has not loaded.
        [(uuid_of[s], uuid_of[r]) for s, r in anchors
         if s in uuid_of and r in uuid_of])


def load_snapshot(conn, spec, class_ids, trait_ids):
    """The whole slice for ``spec`` (a SliceSpec) as a Snapshot."""
    return SliceReader(conn, spec, class_ids, trait_ids).next_window()
