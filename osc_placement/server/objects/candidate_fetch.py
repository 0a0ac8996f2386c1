# SPDX-License-Identifier: Apache-2.0
"""The SQL read behind ``GET /allocation_candidates``: a SliceSpec in, a
candidate_search.Snapshot out.

Two statements per window of trees whatever the cloud size, none per
provider (candidate_search.SliceSpec spells out the contract):

1. *choose*: the roots (by id, the first N for a window) of the trees
   holding a seed provider -- enough capacity for a requested class or,
   for resourceless groups, a trait or aggregate the request names -- or
   served by a sharing seed; the anchor rows of the sharing seeds; and the
   roots of the sharing seeds themselves;
2. *load*: every provider of the chosen trees with its inventories (and
   usage), traits and aggregates, as one stream of tagged rows.

A request that would read every tree anyway and names none to narrow
them to (SliceReader.next_window) skips the choosing: one read of every
provider, the load's four parts without the trees' filter, and the
sharing providers' anchors come from the aggregates read.

Usage comes from ``usage_totals`` (kept by database triggers), one row per
inventory, rather than from summing the allocations of every inventory
loaded: that sum was most of the database's time for a large answer.

Both statements are built once per request *shape* (how many classes,
which filters, window or whole read, database) with named parameters, and
afterwards only executed: building the expressions cost more Python time
than the database took to run them, and a statement whose text never
changes is prepared once per connection (see db/engine.py).
"""

import collections
import dataclasses
import functools
import logging
import operator
import threading
import time
import weakref

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from osc_placement.server.db import pipeline
from osc_placement.server.db import structure
from osc_placement.server.db import tables
from osc_placement.server.objects import candidate_response
from osc_placement.server.objects import candidate_search
from osc_placement.server.objects import inventory as inv_obj
from osc_placement.server.objects import resource_class

LOG = logging.getLogger(__name__)

_RP = tables.resource_providers
_INV = tables.inventories
_USAGE = tables.usage_totals
_T = tables.traits
_RPT = tables.resource_provider_traits
_RPA = tables.resource_provider_aggregates
_AGG = tables.placement_aggregates

# Row tags of the choose statement.
_TREE_ROOT, _SERVED_ROOT, _ANCHOR, _SHARING_ROOT = range(4)
# Row tags of the load statement.
_PROVIDER, _INVENTORY, _TRAIT, _AGGREGATE = range(4)
# The load statement's trees: those named by a parameter, or all.
SOME_TREES, EVERY_TREE = 'some', 'every'


def _one_of(dialect, column, name, type_):
    """``column IN :name``, the list given when the statement runs.

    PostgreSQL gets one array parameter, so the statement's text is the
    same whatever the list. Elsewhere the list is rendered inline: a
    thousand bound parameters cost the driver more to convert than the
    database to run the statement, and the values are our own ids and
    validated uuids."""
    if dialect == 'postgresql':
        return column == sa.any_(sa.bindparam(
            name, type_=postgresql.ARRAY(type_)))
    return column.in_(sa.bindparam(name, expanding=True,
                                   literal_execute=True))


def _tag(value):
    return sa.literal(value, sa.Integer)


def _root_of(provider):
    # The bare column, not coalesce(root, id): every provider's root is
    # set in the transaction that creates it (a root names itself), and
    # only the bare column lets the database walk the root index in order
    # and stop after a window's roots instead of sorting every tree.
    return provider.c.root_provider_id


_ROOT = _root_of(_RP)


# --------------------------------------------------------------------------
# Statement shapes


Shape = collections.namedtuple(
    'Shape', 'dialect classes filters tree_aggregates tree_traits sharing '
    'window after in_tree few')
Shape.__doc__ = """What the choose statement's text depends on.

classes:         number of requested classes (seeds by capacity)
filters:         seeds may also be providers with a named trait or
                 aggregate (resourceless groups)
tree_aggregates: trees must touch one of these aggregates (member_of)
tree_traits:     trees must hold one of these traits (required)
sharing:         MISC_SHARES_VIA_AGGREGATE exists, so sharing seeds may
window:          the first ``count`` roots only (else every root)
after:           roots after ``after`` only (a later window)
in_tree:         the request names in_tree roots, read in every window
few:             the window is of at most FEW_TREES trees (see
                 _window_anchors)
"""


_STATEMENTS = {}


def _statement(key, build):
    """The statement for ``key``, built on first use. Statements are
    immutable once built, so threads share them; two threads building the
    same one at once merely both build it."""
    statement = _STATEMENTS.get(key)
    if statement is None:
        statement = _STATEMENTS[key] = build(key)
    return statement


# No inventory serves more than its max_unit (a 32-bit column) at once:
# every larger amount matches nothing, so the seeds' room test binds such
# amounts as this one (a 64-bit parameter, so that adding the usage
# cannot overflow either), and the search refuses them by max_unit.
AMOUNT_CAP = inv_obj.MAX_INT + 1


def _fits(inventory, usage, i):
    """The ``inventory`` row (with its ``usage`` row, outer-joined) has
    room for the minimum amount ``amount_i`` of requested class
    ``class_i``."""
    return sa.and_(
        inventory.c.resource_class_id
        == sa.bindparam('class_%d' % i, type_=sa.Integer),
        inv_obj.capacity(inventory.c)
        >= sa.func.coalesce(usage.c.used, 0)
        + sa.bindparam('amount_%d' % i, type_=sa.BigInteger))


def _with_usage(inventory, usage):
    return inventory.outerjoin(usage, sa.and_(
        usage.c.resource_provider_id == inventory.c.resource_provider_id,
        usage.c.resource_class_id == inventory.c.resource_class_id))


def _capacity_clause(dialect, classes, probed):
    """The provider (``_RP``) has room, counting its usage, for the
    minimum amount ``amount_i`` of some requested class ``class_i``:
    SliceSpec's seeds. (The search checks each group's amounts, units and
    steps itself; this keeps trees with no room out of the windows, so a
    scheduler's first window is not spent on the hosts it filled.)

    ``probed``: tested row by row (_probed). The statement's sharing part
    tests every sharing provider (5,000 at 100,000 nodes), and there the
    generic plan otherwise hashed every inventory and usage row of the
    cloud on each request (139 of a ``limit=10`` request's 147 ms). Where
    the trees are walked, the planner's own choice stays: probing there
    made a 1,000-node ``member_of`` request three times as slow."""
    query = (sa.select(sa.literal(1))
             .select_from(_with_usage(_INV, _USAGE))
             .where(_INV.c.resource_provider_id == _RP.c.id,
                    sa.or_(*(_fits(_INV, _USAGE, i)
                             for i in range(classes)))))
    if probed:
        return _probed(dialect, query)
    return query.exists()


def _room_for_every_class(shape, root, sharing):
    """For each requested class, the tree rooted at ``root`` has a
    provider with room for its minimum amount, or some sharing seed has
    (it may serve the tree). Every candidate's tree passes: each class
    comes from a provider of the tree or a sharing provider serving it.

    A seed has room for *one* class, so a host that schedulers filled
    up -- no room for VCPU, but memory and disk left -- still has seeds,
    and without this a scheduler's windows were spent on such hosts: two
    or three windows per ``limit=10`` request once the first trees by id
    were full.

    Not with a member_of or required-trait narrowing (no clauses): the
    database tests the room of every provider it walks before the
    narrowing, which keeps few of them, and a ``member_of`` request took
    four times as long."""
    if shape.tree_aggregates or shape.tree_traits:
        return []
    clauses = []
    for i in range(shape.classes):
        member = _RP.alias('room_member_%d' % i)
        clause = _probed(shape.dialect, sa.select(sa.literal(1))
                         .select_from(member)
                         .where(member.c.root_provider_id == root,
                                _has_room(shape.dialect, member.c.id, i,
                                          'room')))
        if sharing is not None:
            # Uncorrelated, so read once per statement, and only once a
            # tree lacks the class: it stops at the first seed with room.
            clause = sa.or_(clause, sa.select(sa.literal(1))
                            .select_from(sharing)
                            .where(_has_room(shape.dialect, sharing.c.id,
                                             i, 'shared'))
                            .correlate(None).exists())
        clauses.append(clause)
    return clauses


def _has_room(dialect, provider_id, i, name):
    """The provider ``provider_id`` has room for the minimum amount of
    requested class ``class_i``; ``name`` keeps the aliases apart."""
    inventory = _INV.alias('%s_inventory_%d' % (name, i))
    usage = _USAGE.alias('%s_usage_%d' % (name, i))
    return _probed(dialect, sa.select(sa.literal(1))
                   .select_from(_with_usage(inventory, usage))
                   .where(inventory.c.resource_provider_id == provider_id,
                          _fits(inventory, usage, i)))


def _probed(dialect, query):
    """EXISTS (``query``), tested row by row.

    On PostgreSQL with OFFSET 0: without it the planner may turn such a
    test into a hashed subplan, which reads the answer for every provider
    of the cloud (about 1 ms per class at 1,000 nodes) where probing the
    few rows tested, by index, costs microseconds each."""
    if dialect == 'postgresql':
        query = query.offset(0)
    return query.exists()


def _filter_clause(dialect):
    """The provider has one of the traits ``filter_traits`` or aggregates
    ``filter_aggregates``: the only providers a resourceless group can
    match."""
    has_trait = sa.exists().where(
        _RPT.c.resource_provider_id == _RP.c.id,
        _one_of(dialect, _RPT.c.trait_id, 'filter_traits', sa.Integer))
    in_agg = sa.exists().where(
        _RPA.c.resource_provider_id == _RP.c.id,
        _RPA.c.aggregate_id == _AGG.c.id,
        _one_of(dialect, _AGG.c.uuid, 'filter_aggregates', sa.String))
    return sa.or_(has_trait, in_agg)


def _seed_clause(shape, probed=False):
    """WHERE clause on ``_RP`` selecting the seed providers."""
    clauses = []
    if shape.classes:
        clauses.append(_capacity_clause(shape.dialect, shape.classes,
                                        probed))
    if shape.filters:
        clauses.append(_filter_clause(shape.dialect))
    return sa.or_(*clauses)


def _is_sharing(provider):
    return sa.exists().where(
        _RPT.c.resource_provider_id == provider.c.id,
        _RPT.c.trait_id == sa.bindparam('sharing_id', type_=sa.Integer))


def _served(sharing):
    """FROM clause: sharing seeds joined to every provider (``peer``)
    sharing an aggregate with them, and that peer table."""
    mine, other = _RPA.alias('mine'), _RPA.alias('other')
    peer = _RP.alias('peer')
    joined = (sharing.join(mine, mine.c.resource_provider_id == sharing.c.id)
              .join(other, other.c.aggregate_id == mine.c.aggregate_id)
              .join(peer, peer.c.id == other.c.resource_provider_id))
    return joined, peer


def _has_aggregate(dialect, provider_id):
    """The provider is in one of the aggregates ``tree_aggregates``."""
    link, agg = _RPA.alias('link'), _AGG.alias('agg')
    return sa.exists().where(
        link.c.resource_provider_id == provider_id,
        link.c.aggregate_id == agg.c.id,
        _one_of(dialect, agg.c.uuid, 'tree_aggregates', sa.String))


def _tree_has_aggregate(dialect, root):
    """Some provider of the tree rooted at ``root`` is in one of the
    aggregates ``tree_aggregates``."""
    member = _RP.alias('member')
    return sa.exists().where(member.c.root_provider_id == root,
                             _has_aggregate(dialect, member.c.id))


def _has_trait(dialect, provider_id):
    """The provider has one of the traits ``tree_traits``."""
    link = _RPT.alias('trait_link')
    return sa.exists().where(
        link.c.resource_provider_id == provider_id,
        _one_of(dialect, link.c.trait_id, 'tree_traits', sa.Integer))


def _tree_has_trait(dialect, root):
    """Some provider of the tree rooted at ``root`` has one of the traits
    ``tree_traits``."""
    member = _RP.alias('trait_member')
    return sa.exists().where(member.c.root_provider_id == root,
                             _has_trait(dialect, member.c.id))


def _served_by_one_with(dialect, sharing, root, on_provider, name):
    """Some sharing seed serving the tree rooted at ``root`` passes
    ``on_provider`` (_has_aggregate or _has_trait); ``name`` keeps the
    aliases of two such clauses apart."""
    seed = sharing.alias(name + '_seed')
    mine, other = _RPA.alias(name + '_mine'), _RPA.alias(name + '_other')
    peer = _RP.alias(name + '_peer')
    return sa.exists().where(
        mine.c.resource_provider_id == seed.c.id,
        other.c.aggregate_id == mine.c.aggregate_id,
        peer.c.id == other.c.resource_provider_id,
        _root_of(peer) == root,
        on_provider(dialect, seed.c.id))


def _tree_filters(shape, root, sharing=None):
    """The member_of and required-trait narrowing of trees (SliceSpec's
    tree_aggregates and tree_traits) for the tree rooted at ``root``,
    each met by the tree itself or, when given, by a sharing seed serving
    it: ``sharing``, the seed of the row, or with both narrowings
    another one (a tree may take its member_of from one sharing provider
    and its required trait from another)."""
    tests = []
    if shape.tree_aggregates:
        tests.append(('aggregate', _tree_has_aggregate, _has_aggregate))
    if shape.tree_traits:
        tests.append(('trait', _tree_has_trait, _has_trait))
    clauses = []
    for name, in_tree, on_provider in tests:
        clause = in_tree(shape.dialect, root)
        if sharing is not None and len(tests) > 1:
            clause = sa.or_(clause, _served_by_one_with(
                shape.dialect, sharing, root, on_provider, 'meeting_' + name))
        elif sharing is not None:
            # One narrowing: every seed serving the tree has a row of
            # its own, so the row's seed is the one to test.
            clause = sa.or_(clause, on_provider(shape.dialect, sharing.c.id))
        clauses.append(clause)
    return clauses


def _first_roots(query, root, window):
    """The first ``count`` distinct ``root`` values of ``query`` by id
    (all of them for a whole read), as a subquery: the database walks the
    root index and stops, so a small window costs a few rows, not the
    cloud."""
    query = query.distinct().order_by(root)
    if window:
        query = query.limit(sa.bindparam('count', type_=sa.Integer))
    return query.subquery()


def _build_choose(shape):
    """The choose statement: rows (tag, a, b, c) --
    (_TREE_ROOT | _SERVED_ROOT, root) the window's roots, from trees with
    a seed of their own or served by a sharing seed, each part cut at
    ``count`` (the first ``count`` of the union are among the first
    ``count`` of each part); (_ANCHOR, sharing id, its root, anchor root);
    (_SHARING_ROOT, root of a sharing seed).

    Sharing providers' own trees are left out of the order (they come
    with the trees they serve): created first, as they usually are, they
    would otherwise fill the first windows with trees that cannot hold a
    candidate on their own."""
    seeds = _seed_clause(shape)
    after = sa.bindparam('after', type_=sa.Integer)
    sharing = None
    if shape.sharing:
        sharing = (sa.select(_RP.c.id.label('id'), _ROOT.label('root'))
                   .where(_seed_clause(shape, probed=True), _is_sharing(_RP))
                   .cte('sharing'))
        seeds = sa.and_(seeds, _not_sharing(shape, sharing))
    # A tree served by a sharing provider in the aggregates (or with the
    # traits) but with no provider of its own in them comes through the
    # served part.
    own = sa.select(_ROOT).where(seeds, *_tree_filters(shape, _ROOT),
                                 *_room_for_every_class(shape, _ROOT,
                                                        sharing))
    if shape.after:
        own = own.where(_ROOT > after)
    parts = [(_TREE_ROOT, _first_roots(own, _ROOT, shape.window))]
    if sharing is not None:
        served, peer_root = _served_roots(shape, sharing)
        served = served.where(*_room_for_every_class(shape, peer_root,
                                                     sharing))
        if shape.after:
            served = served.where(peer_root > after)
        parts.append((_SERVED_ROOT, _first_roots(served, peer_root,
                                                 shape.window)))
    roots = sa.union_all(*(
        sa.select(_tag(tag).label('tag'), part.c[0].label('a'))
        for tag, part in parts)).cte('roots')
    rows = [sa.select(roots.c.tag, roots.c.a, sa.null(), sa.null())]
    if sharing is not None:
        rows += _sharing_rows(shape, sharing, roots)
    return sa.union_all(*rows)


def _not_sharing(shape, sharing):
    """The provider ``_RP``, a seed, is not a sharing seed.

    Without a member_of or required-trait narrowing, tested against the
    sharing seeds already found, with a hash the database builds once and
    tests first: the sharing providers -- created first, the first rows
    of the root index every window walks -- then cost the walk a lookup
    each instead of three probes of their room (at 10,000 nodes 500 of
    them before the first host, most of a limit=10 request's time). With
    a narrowing the planner then chose to test the narrowing tree by tree
    (a member_of request at 1,000 nodes took 16 ms instead of 10), so it
    keeps the test of the trait."""
    if shape.tree_aggregates or shape.tree_traits:
        return ~_is_sharing(_RP)
    return _RP.c.id.not_in(sa.select(sharing.c.id))


def _served_roots(shape, sharing):
    """SELECT of the roots of trees with a provider sharing an aggregate
    with a sharing seed, and its root column.

    Only the sharing seeds' own trees stay out (they come with the trees
    they serve): a tree whose root shares without being a seed may still
    anchor candidates of its own."""
    if shape.tree_aggregates or shape.tree_traits:
        # The narrowing may be met by the serving seed itself: keep it.
        joined, peer = _served(sharing)
        peer_root = _root_of(peer)
        return (sa.select(peer_root).select_from(joined)
                .where(peer_root.not_in(sa.select(sharing.c.root)),
                       *_tree_filters(shape, peer_root, sharing)),
                peer_root)
    # Without it, only the seeds' aggregates matter: testing each peer's
    # aggregates against them walks the root index in order and stops at
    # the window's end, where joining every seed to every peer compared
    # all pairs first (a quarter of the statement's time for a large
    # window).
    link, peer = _RPA.alias('served_link'), _RP.alias('peer')
    seed_link = _RPA.alias('seed_link')
    seed_aggregates = (sa.select(seed_link.c.aggregate_id)
                       .where(seed_link.c.resource_provider_id.in_(
                           sa.select(sharing.c.id))))
    peer_root = _root_of(peer)
    return (sa.select(peer_root)
            .select_from(peer.join(link,
                                   link.c.resource_provider_id == peer.c.id))
            .where(link.c.aggregate_id.in_(seed_aggregates),
                   peer_root.not_in(sa.select(sharing.c.root))),
            peer_root)


def _sharing_rows(shape, sharing, roots):
    """The anchor rows (upstream's anchors_for_sharing_providers: roots of
    every provider sharing an aggregate with a sharing seed) and the
    sharing seeds' roots. A window needs only the anchors of the trees it
    may load: its roots, the in_tree roots and, when it turns out to be
    the last window (it then loads them), the sharing trees."""
    own_roots = sa.select(_tag(_SHARING_ROOT), sharing.c.root, sa.null(),
                          sa.null())
    if not shape.window:
        joined, peer = _served(sharing)
        anchors = (sa.select(_tag(_ANCHOR), sharing.c.id, sharing.c.root,
                             _root_of(peer))
                   .select_from(joined).distinct())
        return [anchors, own_roots]
    return [_window_anchors(shape, sharing, roots), own_roots]


# A window of at most this many trees finds its anchors from its trees
# (see _window_anchors). A module constant so that tests can send every
# window down either path.
FEW_TREES = 128


def _window_anchors(shape, sharing, roots):
    """The anchor rows of the trees a window may load.

    A window of few trees finds them from those trees: their providers,
    those providers' aggregates, the sharing seeds in them. Found from
    the sharing seeds instead (every seed's peers, then those in the
    window), the database reads every aggregate link and provider of the
    cloud: at 10,000 nodes (500 sharing providers, 10,500 links) about
    4 ms, most of a scheduler's limit=10 window. From the trees, a
    window costs a few index probes per tree and aggregate link; past
    some hundreds of trees (the 500 of a limit=1000 request cost 9 ms
    at 10,000 nodes) reading from the seeds costs less."""
    loaded = sa.union_all(
        sa.select(roots.c.a),
        sa.select(sharing.c.root).where(_is_last_window(roots)))
    if not shape.few:
        joined, peer = _served(sharing)
        wanted = _root_of(peer).in_(loaded)
        if shape.in_tree:
            wanted = sa.or_(wanted, _one_of(shape.dialect, _root_of(peer),
                                            'in_tree_roots', sa.Integer))
        return (sa.select(_tag(_ANCHOR), sharing.c.id, sharing.c.root,
                          _root_of(peer))
                .select_from(joined).where(wanted).distinct())
    member = _RP.alias('anchored')
    link, shared = _RPA.alias('anchored_link'), _RPA.alias('shared_link')
    member_root = _root_of(member)
    wanted = _in_few(shape.dialect, member_root, loaded)
    if shape.in_tree:
        wanted = sa.or_(wanted, _one_of(shape.dialect, member_root,
                                        'in_tree_roots', sa.Integer))
    return (sa.select(_tag(_ANCHOR), sharing.c.id, sharing.c.root,
                      member_root)
            .select_from(
                member.join(link, link.c.resource_provider_id == member.c.id)
                .join(shared, shared.c.aggregate_id == link.c.aggregate_id)
                .join(sharing, sharing.c.id == shared.c.resource_provider_id))
            .where(wanted).distinct())


def _in_few(dialect, column, query):
    """``column IN (query)``, where the query gives a window's few rows.

    On PostgreSQL as ``= ANY(ARRAY(query))``: the generic plan cannot
    know how few rows a window's CTEs hold and, taking them for
    hundreds, joined by hashing every provider and aggregate link of
    the cloud, where an array the planner takes for a handful of values
    walks the indexes from them."""
    if dialect == 'postgresql':
        return column == sa.any_(sa.func.array(query.scalar_subquery()))
    return column.in_(query)


def _is_last_window(roots):
    """Every part of the window's roots came short of ``count``: no tree
    is left after this window (SliceReader._choose's ``whole``)."""
    return ~sa.exists(sa.select(roots.c.tag).group_by(roots.c.tag).having(
        sa.func.count() >= sa.bindparam('count', type_=sa.Integer)))


def _load_parts(tree=None):
    """The four SELECTs of the load, over the providers ``tree`` (a CTE
    with id, parent_provider_id, root_provider_id and uuid; every
    provider when None):
    providers   (id, parent id, root id, uuid),
    inventories (provider id, class id, total, reserved, min_unit,
                 max_unit, step_size, used, allocation_ratio),
    traits      (provider id, trait id, trait name),
    aggregates  (provider id, aggregate uuid)."""
    def of_tree(table, column):
        if tree is None:
            return table
        return tree.join(table, column == tree.c.id)

    source = _RP if tree is None else tree
    providers = sa.select(source.c.id, source.c.parent_provider_id,
                          source.c.root_provider_id, source.c.uuid)
    inventories = sa.select(
        _INV.c.resource_provider_id, _INV.c.resource_class_id,
        _INV.c.total, _INV.c.reserved, _INV.c.min_unit, _INV.c.max_unit,
        _INV.c.step_size, sa.func.coalesce(_USAGE.c.used, 0),
        _INV.c.allocation_ratio).select_from(
            of_tree(_INV, _INV.c.resource_provider_id)
            .outerjoin(_USAGE, sa.and_(
                _USAGE.c.resource_provider_id
                == _INV.c.resource_provider_id,
                _USAGE.c.resource_class_id == _INV.c.resource_class_id)))
    traits = sa.select(_RPT.c.resource_provider_id, _RPT.c.trait_id,
                       _T.c.name).select_from(
        of_tree(_RPT, _RPT.c.resource_provider_id)
        .join(_T, _T.c.id == _RPT.c.trait_id))
    aggregates = sa.select(
        _RPA.c.resource_provider_id, _AGG.c.uuid).select_from(
            of_tree(_RPA, _RPA.c.resource_provider_id)
            .join(_AGG, _AGG.c.id == _RPA.c.aggregate_id))
    return {_PROVIDER: providers, _INVENTORY: inventories, _TRAIT: traits,
            _AGGREGATE: aggregates}


# Where each part's columns go in the rows of the load statement, a UNION
# of the four: the tag, then eight integer columns, a float and a text.
_WIDTH = 11
_SLOTS = {_PROVIDER: (1, 2, 3, 10), _INVENTORY: tuple(range(1, 10)),
          _TRAIT: (1, 2, 10), _AGGREGATE: (1, 10)}


def _padded(tag, part):
    # Untyped NULLs pad the rows: every database types a UNION column by
    # its non-NULL members.
    columns = [sa.null()] * _WIDTH
    columns[0] = _tag(tag)
    for slot, column in zip(_SLOTS[tag], part.selected_columns):
        columns[slot] = column
    return part.with_only_columns(*columns)


def _build_load(key):
    """The load statement: the four parts of ``_load_parts`` as one
    stream of tagged rows (see _SLOTS), for every provider of the trees
    ``roots``, or of every tree when ``key`` is (dialect, EVERY_TREE)."""
    dialect, trees = key
    tree = None
    if trees != EVERY_TREE:
        # The trees' providers are found once (one walk of the root
        # index), and the other three parts join to them.
        tree = (sa.select(_RP.c.id, _RP.c.parent_provider_id,
                          _RP.c.root_provider_id, _RP.c.uuid)
                .where(_one_of(dialect, _RP.c.root_provider_id, 'roots',
                               sa.Integer))
                .cte('tree'))
    return sa.union_all(*(_padded(tag, part)
                          for tag, part in _load_parts(tree).items()))


def _split(rows):
    """The load statement's rows as the four parts' rows."""
    tagged = {tag: [] for tag in _SLOTS}
    for row in rows:
        tagged[row[0]].append(row)
    return {tag: list(map(operator.itemgetter(*_SLOTS[tag]), tagged[tag]))
            for tag in _SLOTS}


_EVERY_TREE_TEXTS = {}


def _every_tree_statements(dialect):
    """The four parts over every provider as four statement texts
    (PostgreSQL, see _read_every_tree_pipelined)."""
    texts = _EVERY_TREE_TEXTS.get(dialect.name)
    if texts is None:
        texts = _EVERY_TREE_TEXTS[dialect.name] = tuple(
            str(part.compile(dialect=dialect,
                             compile_kwargs={'literal_binds': True}))
            for part in _load_parts().values())
    return texts


def _read_every_tree_pipelined(conn):
    """The structure stamp and the horizon read before the four parts
    over every provider, and {tag: rows} of those parts, in one round
    trip."""
    statements = [_kept_statements(conn.dialect)[0]] + [
        (text, None) for text in _every_tree_statements(conn.dialect)]
    stamp_rows, *parts = pipeline.run(conn, statements)
    stamp, horizon = stamp_rows[0] if stamp_rows else (None, None)
    return stamp, horizon, dict(zip(_SLOTS, parts))


# --------------------------------------------------------------------------
# Reading


# How long a worker trusts its count of the cloud's trees. The count only
# picks how a request is read (see candidate_api.every_tree), never
# what it finds, so a stale one costs time at worst.
TREE_COUNT_SECONDS = 10.0
_tree_counts = weakref.WeakKeyDictionary()  # engine -> (count, when)
_COUNT_TREES = (sa.select(sa.func.count())
                .where(_RP.c.parent_provider_id.is_(None)))


def _tree_count(conn):
    known = _tree_counts.get(conn.engine)
    now = time.monotonic()
    if known is None or now - known[1] > TREE_COUNT_SECONDS:
        known = _tree_counts[conn.engine] = (
            conn.execute(_COUNT_TREES).scalar(), now)
    return known[0]


def _in_tree_roots(conn, uuids):
    if not uuids:
        return set()
    query = (sa.select(_RP.c.id, _RP.c.root_provider_id)
             .where(_RP.c.uuid.in_(sorted(uuids))))
    return {root or rp_id for rp_id, root in conn.execute(query).all()}


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
        self.dialect = conn.dialect.name
        amounts = sorted((class_ids[rc], amount)
                         for rc, amount in spec.min_amounts.items())
        filter_traits = sorted(trait_ids[name] for name in spec.traits
                               if name in trait_ids)
        self.filters = bool(spec.positive_filter_providers
                            and (filter_traits or spec.aggregates))
        self.classes = len(amounts)
        self.tree_aggregates = spec.tree_aggregates
        self.tree_traits = spec.tree_traits
        sharing_id = trait_ids.get(candidate_search.SHARING_TRAIT)
        self.sharing = sharing_id is not None and self.has_seeds
        self.params = {
            'sharing_id': sharing_id,
            'filter_traits': filter_traits,
            'filter_aggregates': sorted(spec.aggregates),
            'tree_aggregates': sorted(spec.tree_aggregates or ()),
            'tree_traits': sorted(trait_ids[name]
                                  for name in spec.tree_traits or ()),
        }
        for i, (class_id, amount) in enumerate(amounts):
            self.params['class_%d' % i] = class_id
            self.params['amount_%d' % i] = min(amount, AMOUNT_CAP)
        # in_tree roots are in every window: a group confined to them
        # matches nothing elsewhere.
        self.in_tree = _in_tree_roots(conn, spec.in_tree)
        self.params['in_tree_roots'] = sorted(self.in_tree)
        self.whole = False
        self.after = None
        self.read = 0  # trees read so far through the window order

    @property
    def has_seeds(self):
        return bool(self.classes or self.filters)

    @property
    def narrowed(self):
        """The request confines its candidates to some trees."""
        return bool(self.in_tree or self.tree_aggregates is not None
                    or self.tree_traits is not None)

    def tree_count(self):
        """The cloud's trees, as this worker last counted them (see
        TREE_COUNT_SECONDS)."""
        return _tree_count(self.conn)

    @property
    def follows_usage_changes(self):
        """A structure kept by this worker can be brought up to date by
        reading the usage totals changed since (PostgreSQL), rather than
        every total (see _read_usage)."""
        return self.dialect == 'postgresql'

    def kept_snapshot(self):
        """The snapshot of every tree from the structure this worker
        keeps, with this moment's usage, or None if it keeps none of the
        current structure stamp."""
        return _kept_snapshot(self.conn)

    def read_every_tree(self, keep=True):
        """The snapshot of every tree, read whole, and kept for the next
        requests if ``keep``.

        Choosing the trees with room first, then reading them by id,
        cost the database about three times as long as reading every tree
        (its generic plan walks an index per tree, where reading all is
        one scan of each table), and the search drops the trees without
        room."""
        self.whole = True
        return _read_every_tree(self.conn, self.dialect, keep)

    def keep_in_background(self):
        """Read every tree on a thread of its own and keep it (see
        keep_in_background)."""
        return keep_in_background(self.conn.engine)

    def next_window(self, count=None):
        """The next ``count`` trees by root id that may hold a candidate
        (with the request's narrowing, all of them if None), plus the
        sharing providers serving them; sets ``whole`` once none is
        left."""
        roots, anchors = [], []
        self.whole = True
        if self.has_seeds:
            roots, anchors, sharing_roots = self._choose(count)
        if roots:
            self.after = roots[-1]
            self.read += len(roots)
        window = self.in_tree | set(roots)
        if not self.whole:
            # Only the anchors of the window's trees: more would load the
            # sharing trees serving trees outside the window.
            anchors = [row for row in anchors if row[2] in window]
        elif self.has_seeds:
            # Every sharing seed, with its peers or alone.
            window |= sharing_roots
        window |= {sharing_root for _, sharing_root, _ in anchors}
        if not window:
            return candidate_search.Snapshot(providers={})
        return _load_trees(self.conn, self.dialect, window,
                           [(rp_id, root) for rp_id, _, root in anchors],
                           self.unsuffixed_by_class_id)

    @functools.cached_property
    def unsuffixed_by_class_id(self):
        """Snapshot.unsuffixed_by_class_id for the windows: read once per
        request, on its first window (a kept structure knows it already:
        _read_every_tree)."""
        return bool(_read_nested_or_sharing(self.conn,
                                            self.params['sharing_id']))

    def _choose(self, count):
        """The window's roots, the anchor rows worth loading and the
        sharing seeds' roots; sets ``whole``."""
        shape = Shape(self.dialect, self.classes, self.filters,
                      self.tree_aggregates is not None,
                      self.tree_traits is not None, self.sharing,
                      count is not None, self.after is not None,
                      bool(self.in_tree),
                      count is not None and count <= FEW_TREES)
        params = dict(self.params, count=count, after=self.after)
        rows = self.conn.execute(_statement(shape, _build_choose),
                                 params).all()
        parts = {_TREE_ROOT: [], _SERVED_ROOT: []}
        anchors, sharing_roots = [], set()
        for tag, a, b, c in rows:
            if tag == _ANCHOR:
                anchors.append((a, b, c))
            elif tag == _SHARING_ROOT:
                sharing_roots.add(a)
            else:
                parts[tag].append(a)
        self.whole = count is None or max(map(len, parts.values())) < count
        merged = sorted(set(parts[_TREE_ROOT]) | set(parts[_SERVED_ROOT]))
        return (merged if self.whole else merged[:count]), anchors, \
            sharing_roots


def _load_trees(conn, dialect, root_ids, anchors, by_class_id):
    result = conn.execute(_statement((dialect, SOME_TREES), _build_load),
                          {'roots': sorted(root_ids)})
    parts = _split(_driver_rows(result))
    uuid_of = _uuids(parts[_PROVIDER])
    names, rows = _known_inventory_rows(parts[_INVENTORY], uuid_of, conn)
    snap = _snapshot(
        parts, uuid_of, _inventories_of(rows, uuid_of, names),
        # Anchors outside the window are left out: the search must not
        # walk a tree it has not loaded.
        lambda snap: candidate_search.group_pairs(
            (uuid_of[s], uuid_of[r]) for s, r in anchors
            if s in uuid_of and r in uuid_of))
    return dataclasses.replace(snap, class_ids=_class_ids(names),
                               unsuffixed_by_class_id=by_class_id)


def _class_ids(names):
    """{class name: id} of ``names``, {class id: name}."""
    return {name: class_id for class_id, name in names.items()}


def _nested_or_sharing(snap):
    """Some provider of ``snap`` has a parent or shares its inventory
    (Snapshot.unsuffixed_by_class_id, when it holds every provider)."""
    sharing = candidate_search.SHARING_TRAIT
    return (any(provider.parent_uuid is not None
                for provider in snap.providers.values())
            or any(sharing in traits for traits in snap.traits.values()))


def _read_nested_or_sharing(conn, sharing_id):
    """Whether some provider of the database has a parent or the trait
    ``sharing_id`` (None: the trait does not exist): what a window, which
    holds a few trees, cannot tell (upstream's _has_provider_trees and
    get_sharing_providers). Two probes that stop at the first row."""
    nested = sa.exists().where(_RP.c.parent_provider_id.is_not(None))
    if sharing_id is None:
        return conn.execute(sa.select(nested)).scalar()
    sharing = sa.exists().where(_RPT.c.trait_id == sharing_id)
    return conn.execute(sa.select(sa.or_(nested, sharing))).scalar()


def _kept_snapshot(conn):
    """The kept structure's snapshot with this moment's usage, or None
    if the worker keeps none, or one under another stamp (then dropped:
    its memory is free before the structure is read again)."""
    kept = _kept.get(conn.engine)
    if kept is None:
        return None
    since, inventories = kept.last
    stamp, horizon, usage = _read_usage(conn, since)
    if stamp != kept.stamp or _went_back(since, horizon):
        if _kept.get(conn.engine) is kept:
            _kept.pop(conn.engine, None)
        return None
    return kept.snapshot(inventories, horizon, usage)


def _went_back(since, horizon):
    """The database's horizon is below the one the worker read before:
    horizons only grow on one PostgreSQL cluster, so this is another one
    (a database restored from a dump into a new cluster, a replica
    promoted that had not replayed everything), whose transaction ids
    say nothing of what changed since the worker's read."""
    return since is not None and horizon is not None and horizon < since


def _read_every_tree(conn, dialect, keep=True):
    if pipeline.available(conn):
        stamp, horizon, parts = _read_every_tree_pipelined(conn)
    else:
        # Read first: a structure changed after it is re-read next time,
        # never kept under a stamp it does not belong to.
        stamp, horizon = structure.read_stamp(conn), None
        result = conn.execute(_statement((dialect, EVERY_TREE), _build_load))
        parts = _split(_driver_rows(result))
    uuid_of = _uuids(parts[_PROVIDER])
    names, rows = _known_inventory_rows(parts[_INVENTORY], uuid_of, conn)
    # Every provider is loaded, so every sharing provider's peers are.
    snap = _snapshot(parts, uuid_of, _inventories_of(rows, uuid_of, names),
                     candidate_search.compute_anchors)
    # Every provider is in it, so it says whether any has a parent or
    # shares: kept with it, the answer holds as long as the stamp, which
    # changes with any provider's parent or traits.
    snap = dataclasses.replace(
        snap, class_ids=_class_ids(names),
        unsuffixed_by_class_id=_nested_or_sharing(snap))
    if keep and stamp is not None:
        _kept[conn.engine] = _KeptStructure(stamp, snap, uuid_of, names,
                                            horizon)
    return snap


# engine -> the thread reading every tree for it (keep_in_background)
_background_reads = weakref.WeakKeyDictionary()
_background_lock = threading.Lock()


def keep_in_background(engine):
    """Start reading every tree through ``engine`` on a thread of its
    own, to keep it, unless such a read is under way; returns the thread
    (None if one was running).

    For a large cloud whose structure changed: its read takes seconds at
    100,000 compute nodes, which the request that found the change does
    not wait for (it reads its windows of trees), nor do the requests
    after it until the structure is kept again."""
    with _background_lock:
        running = _background_reads.get(engine)
        if running is not None and running.is_alive():
            return None
        thread = _background_reads[engine] = threading.Thread(
            target=_read_and_keep, args=(engine,), daemon=True,
            name='candidate-structure-read')
    thread.start()
    return thread


def _read_and_keep(engine):
    started = time.monotonic()
    try:
        with engine.connect() as conn:
            conn = conn.execution_options(isolation_level='AUTOCOMMIT')
            snap = _read_every_tree(conn, engine.dialect.name)
        LOG.info('Kept the structure of %d resource providers for '
                 'allocation candidates (read in %.1f s)',
                 len(snap.providers), time.monotonic() - started)
    except Exception:
        # The requests go on reading windows; the next one that finds no
        # kept structure starts another read.
        LOG.exception('Reading every tree to keep it failed')


def wait_for_background_reads(timeout=None):
    """Join the reads keep_in_background started (for tests and tools)."""
    with _background_lock:
        threads = list(_background_reads.values())
    for thread in threads:
        thread.join(timeout)


# --------------------------------------------------------------------------
# The structure kept between reads of every tree

# engine -> the _KeptStructure of this worker's last read of every tree
_kept = weakref.WeakKeyDictionary()

# A usage total's key: provider id and class id as one integer, which
# the driver hands over as is and a dict hashes fastest (ids are 32-bit).
_KEY_SHIFT = 2 ** 32
_USAGE_KEY = (_USAGE.c.resource_provider_id
              * sa.literal(_KEY_SHIFT, sa.BigInteger)
              + _USAGE.c.resource_class_id)
_USAGE_READ = sa.select(_USAGE_KEY, _USAGE.c.used)
# PostgreSQL's horizon of a statement's snapshot: every transaction with
# a smaller id had ended when the snapshot was taken, so the statement
# sees all it changed. A later read of the totals whose ``changed`` (the
# id of the transaction that last changed them, migration 1002) is at
# least this horizon finds every change this statement may have missed:
# a transaction it did not see was still running, or not yet begun, and
# has an id at least as large. Snapshots taken later have horizons at
# least as large, so the horizon read before the parts of a read of every
# tree holds for them too.
_HORIZON = sa.cast(sa.cast(sa.func.pg_snapshot_xmin(
    sa.func.pg_current_snapshot()), sa.Text), sa.BigInteger)
_STAMP_AND_HORIZON = sa.select(structure.READ_STAMP.scalar_subquery(),
                               _HORIZON)
# The stamp, the horizon and the totals changed since ``since`` in one
# statement (one snapshot): the keys and amounts come as two arrays, which
# the driver converts in C, a third of the time it took for the same
# numbers as rows.
_STAMP_AND_USAGE_CHANGES = sa.select(
    structure.READ_STAMP.scalar_subquery(), _HORIZON,
    sa.func.array_agg(_USAGE_KEY), sa.func.array_agg(_USAGE.c.used)).where(
        _USAGE.c.changed >= sa.bindparam('since', type_=sa.BigInteger))
_KEPT_STATEMENTS = {}


def _kept_statements(dialect):
    """(text, parameters) of the stamp and horizon's read and of the
    usage changes' read (PostgreSQL), the latter's ``since`` to be set."""
    statements = _KEPT_STATEMENTS.get(dialect.name)
    if statements is None:
        statements = _KEPT_STATEMENTS[dialect.name] = tuple(
            pipeline.compiled(statement, dialect) for statement in (
                _STAMP_AND_HORIZON, _STAMP_AND_USAGE_CHANGES))
    return statements


def _read_usage(conn, since):
    """(structure stamp, horizon, [(usage key, used)]): on PostgreSQL the
    totals changed since the horizon ``since`` of an earlier read (none
    if None: every total), elsewhere every total, and no horizon."""
    if conn.dialect.name != 'postgresql':
        stamp = structure.read_stamp(conn)
        return stamp, None, _driver_rows(conn.execute(_USAGE_READ))
    params = {'since': -1 if since is None else since}
    if pipeline.available(conn):
        text, compiled_params = _kept_statements(conn.dialect)[1]
        [[(stamp, horizon, keys, used)]] = pipeline.run(
            conn, [(text, dict(compiled_params, **params))])
    else:
        stamp, horizon, keys, used = conn.execute(
            _STAMP_AND_USAGE_CHANGES, params).one()
    return stamp, horizon, zip(keys or (), used or ())


class _KeptStructure:
    """What a read of every tree found besides usage, under one structure
    stamp: the snapshot's providers, traits, aggregates and anchors, and
    its inventories, from which a later read's are built with that read's
    usage.

    Its snapshot parts are shared by the snapshots of every request
    answered from it, on every thread: nothing changes a Snapshot once
    built. Each request starts from the inventories of the last one
    answered and rebuilds only those whose usage changed since: from
    claim to claim, a few of thousands."""

    def __init__(self, stamp, snap, uuid_of, class_names, horizon):
        self.stamp = stamp
        self.snap = snap
        snap.derived[candidate_search.KEPT_SUMMARIES] = {}
        snap.derived[candidate_search.KEPT_WALKS] = (
            candidate_search.RememberedWalks())
        snap.derived[candidate_search.KEPT_ANSWERS] = (
            candidate_response.RememberedAnswers())
        # A usage key's provider and class (_USAGE_KEY): two small dicts
        # rather than one entry per inventory (450,000 at 100,000 compute
        # nodes).
        self.uuid_of = uuid_of
        self.class_names = class_names
        # The horizon and the inventories of the last request, as one
        # tuple so that a thread reads both of the same request. Two
        # threads may replace it in either order: either state is one
        # the database was in, and the next read from its horizon brings
        # it up to date.
        self.last = (horizon, snap.inventories)

    def snapshot(self, inventories, horizon, usage_rows):
        """The kept snapshot with ``inventories`` (those of ``last``)
        brought up to date with ``usage_rows``, (usage key, used) pairs:
        every total changed since, or every total."""
        inventories = self._rebuilt(inventories, usage_rows)
        self.last = (horizon, inventories)
        return dataclasses.replace(self.snap, inventories=inventories)

    def _rebuilt(self, inventories, usage_rows):
        """``inventories`` with those whose usage differs from
        ``usage_rows`` rebuilt (candidate_search.with_replaced); neither
        a provider's dict nor the mapping of them is changed, since other
        requests' snapshots hold them."""
        changed = {}
        for key, used in usage_rows:
            uuid = self.uuid_of.get(key // _KEY_SHIFT)
            name = self.class_names.get(key % _KEY_SHIFT)
            old = inventories.get(uuid, _NO_INVENTORIES).get(name)
            if old is None:
                # Usage of an inventory created after the structure was
                # read (the next read of it will see both).
                continue
            if old.used == used:
                continue
            if uuid not in changed:
                changed[uuid] = dict(inventories[uuid])
            changed[uuid][name] = candidate_search.Inventory(
                old.total, old.reserved, old.min_unit, old.max_unit,
                old.step_size, old.allocation_ratio, used)
        if not changed:
            return inventories
        return candidate_search.with_replaced(inventories, changed)


_NO_INVENTORIES = {}


def _driver_rows(result):
    # The driver's own tuples: no column needs SQLAlchemy's processing
    # (the union's columns are untyped), and a Row per row was a tenth of
    # a large window's time.
    rows = result.cursor.fetchall()
    result.close()
    return rows


def _uuids(providers):
    return {row[0]: row[3] for row in providers}


def _snapshot(parts, uuid_of, inventories, anchors_of):
    """The Snapshot of the four parts' rows, the inventory part's already
    built as ``inventories``; ``anchors_of`` gives its anchors from the
    snapshot without them."""
    traits, trait_ids = _traits(parts[_TRAIT], uuid_of)
    snap = candidate_search.Snapshot(
        providers=_providers(parts[_PROVIDER], uuid_of),
        inventories=inventories, traits=traits,
        aggregates=_grouped(parts[_AGGREGATE], uuid_of), trait_ids=trait_ids)
    return dataclasses.replace(snap, anchors=anchors_of(snap))


def _traits(rows, uuid_of):
    """The trait part's rows as the Snapshot's ``traits`` and
    ``trait_ids``; the ids with C-level loops, since large answers load
    tens of thousands of rows."""
    traits = candidate_search.group_pairs(
        (uuid_of[rp_id], name) for rp_id, _, name in rows if rp_id in uuid_of)
    trait_ids = dict(zip(map(operator.itemgetter(2), rows),
                         map(operator.itemgetter(1), rows)))
    return traits, trait_ids


def _providers(rows, uuid_of):
    provider = candidate_search.Provider
    return {uuid: provider(uuid, '', 0, uuid_of.get(parent),
                           uuid_of.get(root, uuid))
            for _, parent, root, uuid in rows}


def _known_inventory_rows(rows, uuid_of, conn):
    """({class id: name}, the inventory part's rows worth keeping, sorted).

    Rows of a provider created after the trees were chosen are dropped:
    the snapshot must hold whole trees it knows the shape of. Sorted, so
    that summaries list a provider's classes in class id order whatever
    order the database's plan returned them in."""
    names = resource_class.names_for(conn, {row[1] for row in rows})
    return names, [row for row in sorted(rows, key=operator.itemgetter(0, 1))
                   if row[0] in uuid_of and row[1] in names]


def _inventories_of(rows, uuid_of, names):
    """_inventories of rows already known (_known_inventory_rows).

    Equal inventories (same fields, same usage) are one Inventory, which
    nothing changes once built: hosts alike share most of theirs, and a
    worker keeping 450,000 inventories holds far fewer objects."""
    inventory = candidate_search.Inventory
    inventories = collections.defaultdict(dict)
    shared = {}
    for (rp_id, rc, total, reserved, min_unit, max_unit, step, used,
         ratio) in rows:
        fields = (total, reserved, min_unit, max_unit, step, ratio, used)
        record = shared.get(fields)
        if record is None:
            record = shared[fields] = inventory(*fields)
        inventories[uuid_of[rp_id]][names[rc]] = record
    return dict(inventories)


def _grouped(rows, uuid_of):
    """{provider uuid: frozenset of the text column} of a part's rows."""
    return candidate_search.group_pairs(
        (uuid_of[rp_id], text) for rp_id, text in rows if rp_id in uuid_of)
