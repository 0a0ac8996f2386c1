# SPDX-License-Identifier: Apache-2.0
"""The SQL statements behind ``GET /allocation_candidates``, and the cache
of those a worker built (Statements). read.py runs them.

Two statements per window of trees, none per provider: *choose* finds
the roots of the trees holding a seed provider (request.SliceSpec), or
served by a sharing seed, with the sharing seeds' anchors; *load* reads
every provider of those trees with its inventories, usage (from
``usage_totals``), traits and aggregates, as one stream of tagged rows. A
request that reads every tree anyway skips the choosing.

Each is built once per request *shape* with named parameters: building
the expressions costs more than running them, and a statement whose text
never changes is prepared once per connection (db/engine.py).
"""

import collections
import operator
import types

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from osc_placement.server.db import pipeline
from osc_placement.server.db import structure
from osc_placement.server.db import tables
from osc_placement.server.objects import inventory as inv_obj

_RP = tables.resource_providers
_INV = tables.inventories
_USAGE = tables.usage_totals
_T = tables.traits
_RPT = tables.resource_provider_traits
_RPA = tables.resource_provider_aggregates
_AGG = tables.placement_aggregates

# Row tags of the choose statement.
TREE_ROOT, SERVED_ROOT, ANCHOR, SHARING_ROOT = range(4)
# Row tags of the load statement.
PROVIDER, INVENTORY, TRAIT, AGGREGATE = range(4)
# The load statement's trees: those named by a parameter, or all.
SOME_TREES, EVERY_TREE = 'some', 'every'


def _one_of(dialect, column, name, type_):
    """``column IN :name``, the list given at run time: one array on
    PostgreSQL, so the text never varies; elsewhere inlined (our ids and
    validated uuids), as many bound parameters cost the driver more than
    the database."""
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
    """``_RP`` has room, usage counted, for the minimum amount of some
    requested class: SliceSpec's seeds. The search checks amounts itself;
    this keeps a scheduler's first window from filling with full hosts.

    ``probed``: tested row by row (_probed), for the sharing part, where
    the generic plan hashed every inventory and usage row per request;
    where trees are walked, probing slowed ``member_of`` requests."""
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
    and without this a scheduler's windows were spent on such hosts once
    the first trees by id were full.

    Not with a member_of or required-trait narrowing (no clauses): the
    database would test the room of every provider it walks before the
    narrowing, which keeps few of them."""
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
    """EXISTS (``query``) tested row by row: OFFSET 0 keeps PostgreSQL's
    planner from a hashed subplan answering for every provider."""
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


def build_choose(shape):
    """The choose statement: rows (tag, a, b, c) --
    (TREE_ROOT | SERVED_ROOT, root) the window's roots, from trees with
    a seed of their own or served by a sharing seed, each part cut at
    ``count`` (the first ``count`` of the union are among the first
    ``count`` of each part); (ANCHOR, sharing id, its root, anchor root);
    (SHARING_ROOT, root of a sharing seed).

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
    parts = [(TREE_ROOT, _first_roots(own, _ROOT, shape.window))]
    if sharing is not None:
        served, peer_root = _served_roots(shape, sharing)
        served = served.where(*_room_for_every_class(shape, peer_root,
                                                     sharing))
        if shape.after:
            served = served.where(peer_root > after)
        parts.append((SERVED_ROOT, _first_roots(served, peer_root,
                                                shape.window)))
    roots = sa.union_all(*(
        sa.select(_tag(tag).label('tag'), part.c[0].label('a'))
        for tag, part in parts)).cte('roots')
    rows = [sa.select(roots.c.tag, roots.c.a, sa.null(), sa.null())]
    if sharing is not None:
        rows += _sharing_rows(shape, sharing, roots)
    return sa.union_all(*rows)


def _not_sharing(shape, sharing):
    """``_RP``, a seed, is not a sharing seed: tested by a hash of those
    found, sparing the walk their room probes; by trait under a narrowing,
    where the hash had the planner test the narrowing tree by tree."""
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
    # all pairs first.
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
    own_roots = sa.select(_tag(SHARING_ROOT), sharing.c.root, sa.null(),
                          sa.null())
    if not shape.window:
        joined, peer = _served(sharing)
        anchors = (sa.select(_tag(ANCHOR), sharing.c.id, sharing.c.root,
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
    cloud, most of a scheduler's small window. From the trees, a window
    costs a few index probes per tree and aggregate link; past some
    hundreds of trees reading from the seeds costs less."""
    loaded = sa.union_all(
        sa.select(roots.c.a),
        sa.select(sharing.c.root).where(_is_last_window(roots)))
    if not shape.few:
        joined, peer = _served(sharing)
        wanted = _root_of(peer).in_(loaded)
        if shape.in_tree:
            wanted = sa.or_(wanted, _one_of(shape.dialect, _root_of(peer),
                                            'in_tree_roots', sa.Integer))
        return (sa.select(_tag(ANCHOR), sharing.c.id, sharing.c.root,
                          _root_of(peer))
                .select_from(joined).where(wanted).distinct())
    member = _RP.alias('anchored')
    link, shared = _RPA.alias('anchored_link'), _RPA.alias('shared_link')
    member_root = _root_of(member)
    wanted = _in_few(shape.dialect, member_root, loaded)
    if shape.in_tree:
        wanted = sa.or_(wanted, _one_of(shape.dialect, member_root,
                                        'in_tree_roots', sa.Integer))
    return (sa.select(_tag(ANCHOR), sharing.c.id, sharing.c.root,
                      member_root)
            .select_from(
                member.join(link, link.c.resource_provider_id == member.c.id)
                .join(shared, shared.c.aggregate_id == link.c.aggregate_id)
                .join(sharing, sharing.c.id == shared.c.resource_provider_id))
            .where(wanted).distinct())


def _in_few(dialect, column, query):
    """``column IN (query)`` for a window's few rows: ``= ANY(ARRAY(...))``
    on PostgreSQL, whose generic plan otherwise takes them for hundreds and
    hashes every provider and aggregate link instead of walking indexes."""
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
    return {PROVIDER: providers, INVENTORY: inventories, TRAIT: traits,
            AGGREGATE: aggregates}


# Where each part's columns go in the rows of the load statement, a UNION
# of the four: the tag, then eight integer columns, a float and a text.
_WIDTH = 11
_SLOTS = types.MappingProxyType({
    PROVIDER: (1, 2, 3, 10), INVENTORY: tuple(range(1, 10)),
    TRAIT: (1, 2, 10), AGGREGATE: (1, 10)})


def _padded(tag, part):
    # Untyped NULLs pad the rows: every database types a UNION column by
    # its non-NULL members.
    columns = [sa.null()] * _WIDTH
    columns[0] = _tag(tag)
    for slot, column in zip(_SLOTS[tag], part.selected_columns):
        columns[slot] = column
    return part.with_only_columns(*columns)


def build_load(key):
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


def split(rows):
    """The load statement's rows as the four parts' rows."""
    tagged = {tag: [] for tag in _SLOTS}
    for row in rows:
        tagged[row[0]].append(row)
    return {tag: list(map(operator.itemgetter(*_SLOTS[tag]), tagged[tag]))
            for tag in _SLOTS}


def parts_of(rows):
    """{tag: rows} of the four parts in the load's order (every_tree_texts)."""
    return dict(zip(_SLOTS, rows))


def every_tree_texts(dialect):
    """The four parts over every provider as four statement texts
    (PostgreSQL's read of every tree, read.read_every_tree)."""
    return tuple(str(part.compile(dialect=dialect,
                                  compile_kwargs={'literal_binds': True}))
                 for part in _load_parts().values())


COUNT_TREES = (sa.select(sa.func.count())
               .where(_RP.c.parent_provider_id.is_(None)))


# A usage total's key: provider id and class id as one integer, which
# the driver hands over as is and a dict hashes fastest (ids are 32-bit).
KEY_SHIFT = 2 ** 32
_USAGE_KEY = (_USAGE.c.resource_provider_id
              * sa.literal(KEY_SHIFT, sa.BigInteger)
              + _USAGE.c.resource_class_id)
USAGE_READ = sa.select(_USAGE_KEY, _USAGE.c.used)
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
STAMP_AND_HORIZON = sa.select(structure.READ_STAMP.scalar_subquery(),
                              _HORIZON)
# The stamp, the horizon and the totals changed since ``since`` in one
# statement (one snapshot): the keys and amounts come as two arrays, which
# the driver converts in C, faster than the same numbers as rows.
STAMP_AND_USAGE_CHANGES = sa.select(
    structure.READ_STAMP.scalar_subquery(), _HORIZON,
    sa.func.array_agg(_USAGE_KEY), sa.func.array_agg(_USAGE.c.used)).where(
        _USAGE.c.changed >= sa.bindparam('since', type_=sa.BigInteger))


def kept_statements(dialect):
    """(text, parameters) of the stamp and horizon's read and of the
    usage changes' read (PostgreSQL), the latter's ``since`` to be set."""
    return tuple(pipeline.compiled(statement, dialect) for statement in (
        STAMP_AND_HORIZON, STAMP_AND_USAGE_CHANGES))


class Statements:
    """The statements a worker built, each under a hashable description
    of what its text depends on (a Shape, a dialect's name and a kind):
    built on first use, then only executed. Nothing changes a statement
    once built, so threads share them; two threads building the same one
    at once merely both build it."""

    def __init__(self, built=None):
        self._built = {} if built is None else built

    def get(self, key, build):
        """The statement of ``key``, ``build(key)`` on first use."""
        statement = self._built.get(key)
        if statement is None:
            statement = self._built[key] = build(key)
        return statement

    def choose(self, shape):
        return self.get(shape, build_choose)

    def load(self, dialect_name, trees):
        """The load of SOME_TREES or of EVERY_TREE."""
        return self.get((dialect_name, trees), build_load)

    def every_tree_texts(self, dialect):
        return self.get((dialect.name, 'every tree texts'),
                        lambda key: every_tree_texts(dialect))

    def kept(self, dialect):
        """kept_statements of ``dialect``."""
        return self.get((dialect.name, 'kept'),
                        lambda key: kept_statements(dialect))
