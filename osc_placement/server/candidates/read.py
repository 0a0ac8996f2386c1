# SPDX-License-Identifier: Apache-2.0
"""Reading a request's slice of the database into a Snapshot: window by
window (SliceReader), every tree at once (read_every_tree), or the usage
totals of a kept structure (read_usage). The statements are statements.py's,
built once by the worker's CandidateEngine.
"""

import collections
import dataclasses
import functools
import operator

import sqlalchemy as sa

from osc_placement.server.candidates import snapshot as snapshot_mod
from osc_placement.server.candidates import statements as sql
from osc_placement.server.db import pipeline
from osc_placement.server.db import structure
from osc_placement.server.db import tables
from osc_placement.server.objects import resource_class

_RP = tables.resource_providers
_RPT = tables.resource_provider_traits

WholeRead = collections.namedtuple(
    'WholeRead', 'stamp horizon snap uuid_of class_names')
WholeRead.__doc__ = """A read of every tree: the structure stamp read
before it (None where the database has none yet), PostgreSQL's horizon
(None elsewhere), the snapshot, and the ids read ({provider id: uuid},
{class id: name}) that the usage totals name."""


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
    names the request uses (unknown names already rejected). What the
    worker keeps between requests (statements, the tree count, the kept
    structure) is its CandidateEngine's, ``engine``.
    """

    def __init__(self, engine, conn, spec, class_ids, trait_ids):
        self.engine = engine  # the worker's CandidateEngine
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
        sharing_id = trait_ids.get(snapshot_mod.SHARING_TRAIT)
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
            self.params['amount_%d' % i] = min(amount, sql.AMOUNT_CAP)
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
        """The cloud's trees, as this worker last counted them."""
        return self.engine.tree_count(self.conn)

    @property
    def follows_usage_changes(self):
        """Whether a kept structure can read just the usage changed since."""
        return self.dialect == 'postgresql'

    def kept_snapshot(self):
        """(kept snapshot of every tree, usage now, KeptMemory) or None."""
        return self.engine.kept_snapshot(self.conn)

    def read_every_tree(self, keep=True):
        """(every tree's snapshot, its KeptMemory if ``keep``, else None): one
        scan of each table costs less than choosing the trees with room."""
        self.whole = True
        return self.engine.read_every_tree(self.conn, keep)

    def keep_in_background(self):
        """Read every tree on a thread of its own and keep it."""
        return self.engine.keep_in_background(self.conn.engine)

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
            return snapshot_mod.Snapshot(providers={})
        return _load_trees(self.engine.statements, self.conn, window,
                           [(rp_id, root) for rp_id, _, root in anchors],
                           self.unsuffixed_by_class_id)

    @functools.cached_property
    def unsuffixed_by_class_id(self):
        """Snapshot.unsuffixed_by_class_id for the windows, read on the first
        (a kept structure knows it already: _read_every_tree)."""
        return bool(_read_nested_or_sharing(self.conn,
                                            self.params['sharing_id']))

    def _choose(self, count):
        """The window's roots, the anchor rows worth loading and the
        sharing seeds' roots; sets ``whole``."""
        shape = sql.Shape(self.dialect, self.classes, self.filters,
                          self.tree_aggregates is not None,
                          self.tree_traits is not None, self.sharing,
                          count is not None, self.after is not None,
                          bool(self.in_tree),
                          count is not None and count <= sql.FEW_TREES)
        params = dict(self.params, count=count, after=self.after)
        rows = self.conn.execute(self.engine.statements.choose(shape),
                                 params).all()
        parts = {sql.TREE_ROOT: [], sql.SERVED_ROOT: []}
        anchors, sharing_roots = [], set()
        for tag, a, b, c in rows:
            if tag == sql.ANCHOR:
                anchors.append((a, b, c))
            elif tag == sql.SHARING_ROOT:
                sharing_roots.add(a)
            else:
                parts[tag].append(a)
        self.whole = count is None or max(map(len, parts.values())) < count
        merged = sorted(set(parts[sql.TREE_ROOT])
                        | set(parts[sql.SERVED_ROOT]))
        return (merged if self.whole else merged[:count]), anchors, \
            sharing_roots


def _load_trees(statements, conn, root_ids, anchors, by_class_id):
    load = statements.load(conn.dialect.name, sql.SOME_TREES)
    result = conn.execute(load, {'roots': sorted(root_ids)})
    parts = sql.split(_driver_rows(result))
    uuid_of = _uuids(parts[sql.PROVIDER])
    names, rows = _known_inventory_rows(parts[sql.INVENTORY], uuid_of, conn)
    snap = _snapshot(
        parts, uuid_of, _inventories_of(rows, uuid_of, names),
        # Anchors outside the window are left out: the search must not
        # walk a tree it has not loaded.
        lambda snap: snapshot_mod.group_pairs(
            (uuid_of[s], uuid_of[r]) for s, r in anchors
            if s in uuid_of and r in uuid_of))
    return dataclasses.replace(snap, class_ids=_class_ids(names),
                               unsuffixed_by_class_id=by_class_id)


def _class_ids(names):
    """{class name: id} of ``names``, {class id: name}."""
    return {name: class_id for class_id, name in names.items()}


def read_every_tree(statements, conn):
    """The WholeRead of every tree."""
    if pipeline.available(conn):
        stamp, horizon, parts = _read_every_tree_pipelined(statements, conn)
    else:
        # Read first: a structure changed after it is re-read next time,
        # never kept under a stamp it does not belong to.
        stamp, horizon = structure.read_stamp(conn), None
        result = conn.execute(statements.load(conn.dialect.name,
                                              sql.EVERY_TREE))
        parts = sql.split(_driver_rows(result))
    uuid_of = _uuids(parts[sql.PROVIDER])
    names, rows = _known_inventory_rows(parts[sql.INVENTORY], uuid_of, conn)
    # Every provider is loaded, so every sharing provider's peers are.
    snap = _snapshot(parts, uuid_of, _inventories_of(rows, uuid_of, names),
                     snapshot_mod.compute_anchors)
    # Every provider is in it, so it says whether any has a parent or
    # shares: kept with it, the answer holds as long as the stamp, which
    # changes with any provider's parent or traits.
    snap = dataclasses.replace(
        snap, class_ids=_class_ids(names),
        unsuffixed_by_class_id=_nested_or_sharing(snap))
    return WholeRead(stamp, horizon, snap, uuid_of, names)


def _read_every_tree_pipelined(statements, conn):
    """The structure stamp and the horizon read before the four parts
    over every provider, and {tag: rows} of those parts, in one round
    trip."""
    dialect = conn.dialect
    texts = [statements.kept(dialect)[0]] + [
        (text, None) for text in statements.every_tree_texts(dialect)]
    stamp_rows, *parts = pipeline.run(conn, texts)
    stamp, horizon = stamp_rows[0] if stamp_rows else (None, None)
    return stamp, horizon, sql.parts_of(parts)


def _nested_or_sharing(snap):
    """Some provider of ``snap`` has a parent or shares its inventory
    (Snapshot.unsuffixed_by_class_id, when it holds every provider)."""
    sharing = snapshot_mod.SHARING_TRAIT
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


def read_usage(statements, conn, since):
    """(structure stamp, horizon, [(usage key, used)]): on PostgreSQL the
    totals changed since the horizon ``since`` of an earlier read (none
    if None: every total), elsewhere every total, and no horizon."""
    if conn.dialect.name != 'postgresql':
        stamp = structure.read_stamp(conn)
        return stamp, None, _driver_rows(conn.execute(sql.USAGE_READ))
    params = {'since': -1 if since is None else since}
    if pipeline.available(conn):
        text, compiled_params = statements.kept(conn.dialect)[1]
        [[(stamp, horizon, keys, used)]] = pipeline.run(
            conn, [(text, dict(compiled_params, **params))])
    else:
        stamp, horizon, keys, used = conn.execute(
            sql.STAMP_AND_USAGE_CHANGES, params).one()
    return stamp, horizon, zip(keys or (), used or ())


def _driver_rows(result):
    # The driver's own tuples: no column needs SQLAlchemy's processing
    # (the union's columns are untyped), and a Row per row costs more
    # than the rest of a large window's handling of it.
    rows = result.cursor.fetchall()
    result.close()
    return rows


def _uuids(providers):
    return {row[0]: row[3] for row in providers}


def _snapshot(parts, uuid_of, inventories, anchors_of):
    """The Snapshot of the four parts' rows, the inventory part's already
    built as ``inventories``; ``anchors_of`` gives its anchors from the
    snapshot without them."""
    traits, trait_ids = _traits(parts[sql.TRAIT], uuid_of)
    snap = snapshot_mod.Snapshot(
        providers=_providers(parts[sql.PROVIDER], uuid_of),
        inventories=inventories, traits=traits,
        aggregates=_grouped(parts[sql.AGGREGATE], uuid_of),
        trait_ids=trait_ids)
    return dataclasses.replace(snap, anchors=anchors_of(snap))


def _traits(rows, uuid_of):
    """The trait part's rows as the Snapshot's ``traits`` and
    ``trait_ids``; the ids with C-level loops, since large answers load
    many rows."""
    traits = snapshot_mod.group_pairs(
        (uuid_of[rp_id], name) for rp_id, _, name in rows if rp_id in uuid_of)
    trait_ids = dict(zip(map(operator.itemgetter(2), rows),
                         map(operator.itemgetter(1), rows)))
    return traits, trait_ids


def _providers(rows, uuid_of):
    provider = snapshot_mod.Provider
    return {uuid: provider(uuid, '', 0, uuid_of.get(parent),
                           uuid_of.get(root, uuid))
            for _, parent, root, uuid in rows}


def _known_inventory_rows(rows, uuid_of, conn):
    """({class id: name}, kept inventory rows in id order): rows of providers
    newer than the chosen trees are dropped, as a snapshot holds whole trees;
    sorted so that summaries list classes in class id order."""
    names = resource_class.names_for(conn, {row[1] for row in rows})
    return names, [row for row in sorted(rows, key=operator.itemgetter(0, 1))
                   if row[0] in uuid_of and row[1] in names]


def _inventories_of(rows, uuid_of, names):
    """_inventories of rows already known (_known_inventory_rows).

    Equal inventories (same fields, same usage) are one Inventory, which
    nothing changes once built: hosts alike share most of theirs, and a
    worker keeping a large cloud holds far fewer objects."""
    inventory = snapshot_mod.Inventory
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
    return snapshot_mod.group_pairs(
        (uuid_of[rp_id], text) for rp_id, text in rows if rp_id in uuid_of)
