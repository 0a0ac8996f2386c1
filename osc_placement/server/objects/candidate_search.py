# SPDX-License-Identifier: Apache-2.0
"""Allocation candidate search over an in-memory snapshot.

The SQL layer reads a small slice of the database into a ``Snapshot`` (see
``snapshot_needs`` for what the slice must hold), then ``search`` combines
request groups in memory. Unlike upstream, which builds every candidate and
then cuts, the search prunes while it builds: an anchor tree whose summed
free capacity cannot cover the request is skipped, a partial combination that
overflows a provider or breaks group_policy=isolate ends its branch, and the
walk stops as soon as ``limit`` distinct candidates exist (unless a random
sample of the whole set is asked for, which needs the whole set).

Semantics follow upstream Placement (spec 4.3.2):

* a suffixed group is served by one provider; a sharing provider's option
  is also offered to every tree it serves (its anchors);
* the unsuffixed group may take each class from a different provider of one
  tree, or from sharing providers serving that tree; required traits are
  satisfied collectively by the providers that supply resources, member_of
  by the supplying provider or the anchor root, forbidden aggregates by
  neither;
* combinations are formed per anchor root; isolate, same_subtree and a final
  capacity check on the summed amounts filter them; identical results
  (same amounts per provider and class, same mappings) collapse to one;
* before 1.29, candidates taking resources from two providers of one tree
  are dropped.

Deliberate differences from upstream (all where upstream is accidental):

* Upstream keeps the unsuffixed group's options in a set whose equality
  ignores the anchor, so an option served wholly by a sharing provider
  survives for one arbitrary anchor only; combined with suffixed groups
  that loses candidates on the other trees. Every anchor is kept here.
* ``max_allocation_candidates`` counts candidates that passed every filter
  (including the pre-1.29 one-provider-per-tree rule); upstream counts
  before that rule, so it can return fewer.
* Before 1.29 with a limit, summaries list the providers the returned
  candidates use; upstream also lists providers of dropped candidates that
  share a tree with a kept one.
* Entry points and data shapes: see ``Snapshot``, ``SliceSpec``,
  ``snapshot_needs``, ``search`` and ``SearchOptions``.
"""

import collections
import collections.abc
import dataclasses
import itertools
import math
import operator
import random
import threading

from osc_placement.server.objects import inventory as inv_obj
from osc_placement.server.schemas import request_groups

SHARING_TRAIT = request_groups.MISC_SHARES_VIA_AGGREGATE
_NONE = frozenset()
DEPTH_FIRST = 'depth-first'
BREADTH_FIRST = 'breadth-first'


# --------------------------------------------------------------------------
# Snapshot: the slice of the database the search reads


class Provider:
    """One provider of the snapshot (parent and root as uuids)."""

    # Slots, not a frozen dataclass: a snapshot builds one per provider of
    # the slice on every request, and a frozen dataclass's __init__ is
    # several times slower.
    __slots__ = ('uuid', 'name', 'generation', 'parent_uuid', 'root_uuid')

    def __init__(self, uuid, name='', generation=0, parent_uuid=None,
                 root_uuid=None):
        self.uuid = uuid
        self.name = name
        self.generation = generation
        self.parent_uuid = parent_uuid
        self.root_uuid = root_uuid


class Inventory:
    """One inventory record with the provider's current usage of it.

    The derived capacities are computed once: the search asks for them
    per option and per sum, many thousand times per request. (A
    functools.cached_property takes a lock on every read.)"""

    __slots__ = ('total', 'reserved', 'min_unit', 'max_unit', 'step_size',
                 'allocation_ratio', 'used', 'capacity', 'summary_capacity',
                 'free_for_sums')

    def __init__(self, total, reserved=0, min_unit=1, max_unit=2 ** 31 - 1,
                 step_size=1, allocation_ratio=1.0, used=0):
        self.total = total
        self.reserved = reserved
        self.min_unit = min_unit
        self.max_unit = max_unit
        self.step_size = step_size
        self.allocation_ratio = allocation_ratio
        self.used = used
        # Compared as a float product, as upstream's SQL does.
        self.capacity = capacity = inv_obj.capacity_of(
            total, reserved, allocation_ratio)
        # Truncated to int in summaries and in the summed-amount check.
        self.summary_capacity = whole = int(capacity)
        # Clamped to [0, max_unit] with comparisons: max() and min() cost
        # a third of building the object, once per inventory loaded.
        free = whole - used
        self.free_for_sums = (0 if free < 0
                              else max_unit if free > max_unit else free)

    def can_take(self, amount):
        """Upstream's per-request capacity test for one group's amount."""
        return (self.used + amount <= self.capacity
                and self.min_unit <= amount <= self.max_unit
                and amount % self.step_size == 0)

    def can_hold_sum(self, amount):
        """Upstream's final test on amounts summed across groups."""
        return (self.used + amount <= self.summary_capacity
                and amount <= self.max_unit)


# A kept structure of at least this many providers keeps the inventories
# a usage change replaced apart from the dict of every provider's
# (ReplacedInventories); a smaller one copies that dict. Each lookup
# through the overlay is a Python call: measured in process after a claim
# at 1,000 compute nodes (1,350 providers), required traits took 4.79 ms
# through it against 3.04 copying; at 100,000 (135,000 providers) the
# scheduler's limit=10 request took 2.04 ms against 4.59, of which the
# copy and the freeing of the copy it replaced were 3.1 ms.
REPLACED_APART_FROM = 50000


class ReplacedInventories(collections.abc.Mapping):
    """Snapshot.inventories of a kept structure after usage changed: the
    providers whose inventories were rebuilt since (``replaced``, a few)
    over every provider's (``base``), a dict the snapshots of many
    requests share. Neither dict changes once a snapshot holds it, and
    ``replaced`` holds only providers of ``base``. See
    REPLACED_APART_FROM for the clouds it is used for, and with_replaced
    for how it is built."""

    __slots__ = ('base', 'replaced')

    def __init__(self, base, replaced):
        self.base = base
        self.replaced = replaced

    def __getitem__(self, uuid):
        found = self.replaced.get(uuid)
        return self.base[uuid] if found is None else found

    def get(self, uuid, default=None):
        found = self.replaced.get(uuid)
        return self.base.get(uuid, default) if found is None else found

    def __contains__(self, uuid):
        return uuid in self.base

    def __iter__(self):
        return iter(self.base)

    def __len__(self):
        return len(self.base)


def with_replaced(inventories, changed):
    """``inventories`` (a dict or ReplacedInventories, left as they are)
    with the providers of ``changed`` (uuid -> their new inventories,
    each a provider of ``inventories``) replaced: a new dict below
    REPLACED_APART_FROM providers, else a ReplacedInventories.

    Those replaced since the last whole dict are copied for each change,
    and the whole dict is written again once they pass the square root
    of four times its size, where a request pays on average about as
    much for either: for ``c`` providers replaced per change and ``n`` in
    all, ``k`` replaced cost ``k / 2`` per change and a rewrite ``n * c /
    k``, equal at ``k = sqrt(2 n c)``, with ``c`` about 2."""
    if isinstance(inventories, ReplacedInventories):
        base, replaced = inventories.base, {**inventories.replaced,
                                            **changed}
    else:
        base, replaced = inventories, changed
    if (len(base) < REPLACED_APART_FROM
            or len(replaced) > math.isqrt(4 * len(base))):
        return {**base, **replaced}
    return ReplacedInventories(base, replaced)


@dataclasses.dataclass
class Snapshot:
    """What the search knows about the cloud.

    providers:   uuid -> Provider (parent and root uuids filled in)
    inventories: uuid -> {resource class: Inventory (with current usage)}:
                 a dict, or for a large kept structure after usage
                 changed a ReplacedInventories
    traits:      uuid -> frozenset of trait names
    aggregates:  uuid -> frozenset of aggregate uuids
    anchors:     sharing provider uuid -> frozenset of root uuids of every
                 provider that shares an aggregate with it (upstream's
                 anchors_for_sharing_providers); a sharing provider is one
                 whose traits include MISC_SHARES_VIA_AGGREGATE.
    trait_ids:   trait name -> trait id, of every trait in ``traits``:
                 summaries list a provider's traits in id order, as
                 upstream's query returns them (standard before custom).
    class_ids:   resource class name -> class id, of every class in
                 ``inventories``
    unsuffixed_by_class_id:
                 some provider of the database (not only of this
                 snapshot) has a parent or the MISC_SHARES_VIA_AGGREGATE
                 trait, so upstream answers the unsuffixed group by its
                 tree path, which lists that group's classes in class id
                 order rather than the query's (class_rank_of)
    derived:     what the search works out from the providers, traits and
                 anchors alone (the tree index), kept for the snapshots
                 that share them: those a worker answers from one kept
                 structure (candidate_fetch._KeptStructure), which also
                 keeps there, under KEPT_SUMMARIES, the summaries of its
                 trees as written (candidate_response), under KEPT_WALKS
                 what the walks found (_AnchorMemo), and under
                 KEPT_ANSWERS its last answers as written.

    Trees are whole: every provider of a tree in the snapshot is in it
    (provider summaries list whole trees). Missing keys mean "none".
    """

    providers: dict
    inventories: dict = dataclasses.field(default_factory=dict)
    traits: dict = dataclasses.field(default_factory=dict)
    aggregates: dict = dataclasses.field(default_factory=dict)
    anchors: dict = dataclasses.field(default_factory=dict)
    trait_ids: dict = dataclasses.field(default_factory=dict)
    class_ids: dict = dataclasses.field(default_factory=dict)
    unsuffixed_by_class_id: bool = False
    derived: dict = dataclasses.field(default_factory=dict, compare=False,
                                      repr=False)

    @classmethod
    def from_rows(cls, providers, inventories=(), traits=(), aggregates=(),
                  anchors=None):
        """Build a snapshot from flat rows, the shape SQL returns.

        providers:   (uuid, name, generation, parent_uuid, root_uuid)
        inventories: (uuid, class, total, reserved, min_unit, max_unit,
                      step_size, allocation_ratio, used)
        traits:      (uuid, trait name)
        aggregates:  (uuid, aggregate uuid)
        anchors:     (sharing uuid, anchor root uuid); None computes them
                     from the aggregates in the snapshot, which is right
                     when the snapshot holds every provider of those
                     aggregates.
        """
        snap = cls(providers={row[0]: Provider(*row) for row in providers})
        invs = collections.defaultdict(dict)
        for uuid, rc, *fields in inventories:
            invs[uuid][rc] = Inventory(*fields)
        snap.inventories = dict(invs)
        traits = list(traits)
        snap.traits = group_pairs(traits)
        # Rows carry no trait ids: number the names alphabetically.
        names = sorted({name for _, name in traits})
        snap.trait_ids = {name: n for n, name in enumerate(names)}
        snap.aggregates = group_pairs(aggregates)
        if anchors is None:
            snap.anchors = compute_anchors(snap)
        else:
            snap.anchors = group_pairs(anchors)
        return snap

    def root(self, uuid):
        # A root may come with root_uuid unset; it is its own root.
        return self.providers[uuid].root_uuid or uuid

    def parent(self, uuid):
        return self.providers[uuid].parent_uuid

    def traits_of(self, uuid):
        return self.traits.get(uuid, _NONE)

    def aggregates_of(self, uuid):
        return self.aggregates.get(uuid, _NONE)

    def inventory(self, uuid, rc):
        return self.inventories.get(uuid, {}).get(rc)

    def is_sharing(self, uuid):
        return SHARING_TRAIT in self.traits_of(uuid)


# The keys of Snapshot.derived under which the snapshots of a kept
# structure keep their providers' summaries, what the walks found under
# each anchor (_AnchorMemo), and the last answers' bodies
# (candidate_response.RememberedAnswers).
KEPT_SUMMARIES = 'summaries'
KEPT_WALKS = 'walks'
KEPT_ANSWERS = 'answers'


def group_pairs(rows):
    """{key: frozenset of values} from (key, value) pairs. Equal sets are
    one object: most providers share their traits and aggregates with
    many others, and a worker keeping 135,000 providers' holds each set
    once rather than once per provider."""
    grouped = collections.defaultdict(set)
    for key, value in rows:
        grouped[key].add(value)
    shared = {}
    return {key: shared.setdefault(values, values)
            for key, values in zip(grouped, map(frozenset, grouped.values()))}


def _members_of_aggregates(snap):
    """{aggregate uuid: set of the snapshot's providers in it}."""
    members = collections.defaultdict(set)
    for uuid, aggs in snap.aggregates.items():
        for agg in aggs:
            members[agg].add(uuid)
    return members


def compute_anchors(snap):
    """Anchors of every sharing provider, from the snapshot's aggregates."""
    members = _members_of_aggregates(snap)
    anchors = {}
    for uuid in snap.providers:
        if snap.is_sharing(uuid):
            peers = set().union(*(members[agg]
                                  for agg in snap.aggregates_of(uuid)))
            anchors[uuid] = frozenset(snap.root(p) for p in peers)
    return anchors


# --------------------------------------------------------------------------
# What the SQL layer must fetch


@dataclasses.dataclass(frozen=True)
class SliceSpec:
    """What a request can possibly use; the SQL layer fetches this slice.

    A few set-based queries, none per provider:

    1. Seed providers: for each class in ``min_amounts``, the providers
       with inventory of it and ``used + min_amount <= (total - reserved)
       * allocation_ratio`` (one query per class, usage from the allocation
       sums). The per-group amounts, min/max unit and step size are checked
       by the search, so a superset is fine.
    2. If ``positive_filter_providers``: also the providers having any
       trait in ``traits`` or any aggregate in ``aggregates`` (resourceless
       groups match providers without inventory).
    3. Anchor rows ``(sharing uuid, anchor root uuid)`` for the seed
       providers carrying MISC_SHARES_VIA_AGGREGATE (upstream's
       anchors_for_sharing_providers: roots of every provider sharing an
       aggregate with them), and the roots of the ``in_tree`` providers.
    4. The trees to load: roots of the seed providers, those anchors and
       those in_tree roots. Load every provider of these trees with all
       its inventories (with usage), traits and aggregates: summaries show
       whole trees, all classes (1.27) and all traits, and root_required
       and member_of look at roots.

    5. Optionally, ``tree_aggregates`` (None: no constraint) narrows the
       trees: every candidate's anchor tree holds a provider in one of
       these aggregates, or is served by a sharing provider in one of
       them, so other trees may be left out. ``tree_traits`` likewise
       for traits: a provider of the tree, or a sharing provider serving
       it, has one of them.
    6. Trees with no room for some class of ``min_amounts`` -- no
       provider of theirs, and no sharing provider at all, passes step 1
       for it -- may be left out too (the sharing seeds' own trees
       excepted): every candidate takes each class from its tree or a
       sharing provider serving it.

    ``Snapshot.from_rows`` builds a snapshot from such rows (pass the
    anchor rows); candidate_fetch builds one straight from its own.
    tests/unit/server/test_candidate_properties.py checks that a slice
    built this way gives the same answer as the whole cloud.
    """

    min_amounts: dict
    traits: frozenset
    aggregates: frozenset
    in_tree: frozenset
    positive_filter_providers: bool
    tree_aggregates: frozenset = None
    tree_traits: frozenset = None


def snapshot_needs(request):
    """The slice of the database ``request`` (a CandidateRequest) needs."""
    min_amounts = {}
    for group in request.groups:
        for rc, amount in group.resources.items():
            min_amounts[rc] = min(amount, min_amounts.get(rc, amount))
    traits = set(request.trait_names()) | {SHARING_TRAIT}
    aggregates = set()
    for group in request.groups:
        aggregates |= group.aggregate_uuids()
    return SliceSpec(
        min_amounts=min_amounts,
        traits=frozenset(traits),
        aggregates=frozenset(aggregates),
        in_tree=frozenset(g.in_tree for g in request.groups if g.in_tree),
        positive_filter_providers=any(not g.resources
                                      for g in request.groups),
        tree_aggregates=_tree_aggregates(request),
        tree_traits=_tree_traits(request))


def _tree_aggregates(request):
    """The smallest any-of set of aggregates named by some member_of, or
    None.

    Every candidate meets every group's member_of: each any-of set is met
    by a provider of the group (a sharing one serving the anchor tree,
    or one of the tree) or, for the unsuffixed group, by the anchor root.
    So the anchor tree, or a sharing provider serving it, is in one of
    the set's aggregates -- a filter the SQL can apply while choosing the
    trees, instead of reading every tree with room and dropping most."""
    sets = [any_of for group in request.groups for any_of in group.member_of]
    return min(sets, key=len) if sets else None


def _tree_traits(request):
    """The smallest any-of set of required traits of a group with
    resources, or None.

    Such a group's providers (one for a suffixed group; for the unsuffixed
    group, those supplying its classes, collectively) have a trait of each
    of its any-of sets, and they belong to the anchor tree or are sharing
    providers serving it. A scheduler's required trait held by half the
    hosts thus halves the trees read. (A resourceless group is left out:
    what it may match is decided elsewhere.)"""
    sets = [any_of for group in request.groups if group.resources
            for any_of in group.required_traits]
    return min(sets, key=len) if sets else None


# --------------------------------------------------------------------------
# Results


class _CandidateViews:
    """What the response and the tests read of a candidate, from its
    ``allocations`` and ``mappings``."""

    __slots__ = ()

    def allocation_dict(self):
        return {uuid: dict(resources) for uuid, resources in self.allocations}

    def allocations_body(self):
        """The 1.12+ body form: {uuid: {'resources': {class: amount}}}."""
        return {uuid: {'resources': dict(resources)}
                for uuid, resources in self.allocations}

    def mapping_dict(self):
        return {suffix: list(uuids) for suffix, uuids in self.mappings}

    @classmethod
    def request_bodies(cls, candidates, with_mappings):
        """The 1.12+ allocation requests of ``candidates`` (all of this
        class: a request's candidates are of one kind), with their
        mappings (1.34) if ``with_mappings``. Built a whole answer at a
        time, so that a kind of candidate may share what its candidates
        have in common."""
        if not with_mappings:
            return [{'allocations': candidate.allocations_body()}
                    for candidate in candidates]
        return [{'allocations': candidate.allocations_body(),
                 'mappings': candidate.mapping_dict()}
                for candidate in candidates]

    def resource_providers(self):
        return [uuid for uuid, _ in self.allocations]

    @classmethod
    def providers_used(cls, candidates):
        """The set of providers ``candidates`` (all of this class) use,
        in one pass without a call per candidate."""
        return {uuid for candidate in candidates
                for uuid, _ in candidate.allocations}


class Candidate(_CandidateViews, collections.namedtuple(
        'Candidate', 'allocations mappings hashed')):
    """One allocation request: amounts per provider and class, and which
    providers serve each group suffix. Hashable; equal candidates are
    upstream's duplicates.

    allocations: ((uuid, ((class, amount), ...)), ...), the providers
                 sorted, each one's classes in upstream's order
                 (class_rank_of: the query's, or partly by class id)
    mappings:    ((suffix, (uuid, ...)), ...), the suffixes in the
                 query's order, each one's providers sorted
    hashed:      the hash of the two, worked out once (Candidate.of)

    A tuple, compared in C. Thousands are hashed per request (to drop
    duplicates, to find their written bodies), most of them remembered
    from earlier requests (_AnchorMemo): hashing the nested tuples
    again read a dozen objects per candidate, scattered in memory, where
    the kept hash is one read."""

    __slots__ = ()

    @classmethod
    def of(cls, allocations, mappings):
        return cls(allocations, mappings, hash((allocations, mappings)))

    def __hash__(self):
        return self.hashed


class SpreadCandidate(_CandidateViews, collections.namedtuple(
        'SpreadCandidate', 'providers classes order')):
    """A candidate of a request that is the unsuffixed group alone (see
    ``_spread_classes``): the provider of each class, nothing else.

    providers: (uuid, ...), one per entry of ``classes``
    classes:   ((class, amount), ...) sorted by class, the same for every
               candidate of the request
    order:     the indexes of ``classes`` in the query's order, in which
               the bodies list them (upstream's); the same tuple for
               every candidate of the request

    The search finds these as the plain tuples itertools.product yields
    and drops duplicates among those; only the candidates returned are
    wrapped. Equal SpreadCandidates are upstream's duplicates, as with
    Candidate (a request's candidates are all of one kind)."""

    __slots__ = ()

    @property
    def allocations(self):
        providers, classes = self.providers, self.classes
        return tuple(
            (uuid, tuple(classes[i] for i in self.order
                         if providers[i] == uuid))
            for uuid in self.resource_providers())

    @property
    def mappings(self):
        return (('', tuple(self.resource_providers())),)

    @classmethod
    def request_bodies(cls, candidates, with_mappings):
        """As Candidate.request_bodies. The candidates take the same
        classes, so those served wholly by one provider, a host's own,
        share one resources dict: a third of a plain request's
        candidates, each a dict less to build."""
        if not candidates:
            return []
        first = candidates[0]
        whole = dict(first.classes[i] for i in first.order)
        bodies = [candidate.allocations_body(whole)
                  for candidate in candidates]
        if not with_mappings:
            return [{'allocations': body} for body in bodies]
        # A body's keys are its candidate's providers.
        return [{'allocations': body, 'mappings': {'': sorted(body)}}
                for body in bodies]

    def allocations_body(self, resources=None):
        """The 1.12+ body form; ``resources``, if given, is the request's
        classes as a dict in the query's order, shared by the candidates
        that use it."""
        first, classes = self.providers[0], self.classes
        if self.providers.count(first) == len(self.providers):
            # Every class from one provider, as a host's own candidate
            # has them: its resources are the request's.
            if resources is None:
                resources = dict(classes[i] for i in self.order)
            return {first: {'resources': resources}}
        body = {}
        for i in self.order:
            uuid, (rc, amount) = self.providers[i], classes[i]
            entry = body.get(uuid)
            if entry is None:
                body[uuid] = {'resources': {rc: amount}}
            else:
                entry['resources'][rc] = amount
        return body

    def mapping_dict(self):
        return {'': self.resource_providers()}

    def resource_providers(self):
        return sorted(set(self.providers))

    @classmethod
    def providers_used(cls, candidates):
        return set(itertools.chain.from_iterable(
            map(operator.attrgetter('providers'), candidates)))


@dataclasses.dataclass
class SearchResult:
    candidates: list
    # root uuid -> the providers of its tree to show in summaries, sorted:
    # every provider of the tree from 1.29, before that those used
    summary_trees: dict

    @property
    def summary_providers(self):
        """The set of uuids of the providers to show in summaries."""
        return set(itertools.chain.from_iterable(
            self.summary_trees.values()))


@dataclasses.dataclass(frozen=True)
class SearchOptions:
    """Request-independent knobs ([placement] config options)."""

    max_candidates: int = -1  # max_allocation_candidates; -1 = unlimited
    strategy: str = DEPTH_FIRST  # allocation_candidates_generation_strategy
    randomize: bool = False  # randomize_allocation_candidates
    rng: random.Random = None

    @classmethod
    def from_conf(cls, placement_conf):
        """The options of the [placement] section ``placement_conf``."""
        return cls(
            max_candidates=placement_conf.max_allocation_candidates,
            strategy=placement_conf.allocation_candidates_generation_strategy,
            randomize=placement_conf.randomize_allocation_candidates)


# --------------------------------------------------------------------------
# Per-group options, bucketed by anchor root


class _Option(collections.namedtuple('_Option', 'amounts providers')):
    """One way to satisfy one group under one anchor.

    amounts:   ((uuid, class, amount), ...)
    providers: frozenset of the providers mapped to the group's suffix
    """

    __slots__ = ()


class _Level(collections.namedtuple('_Level', 'group options')):
    """One step of the walk: pick one of ``options`` for ``group`` (a
    request_groups.RequestGroup)."""

    __slots__ = ()


class _TreeIndex:
    """Which providers can serve which anchor root, built once per search.

    Options for an anchor come from its own tree and from the sharing
    providers serving it, so the walk can build them anchor by anchor and
    never look at trees it does not reach before ``limit``.
    """

    def __init__(self, snap):
        self.members = collections.defaultdict(list)
        # Provider.root_uuid read directly, as in _summary_trees: this
        # runs for every provider of the snapshot.
        for uuid in sorted(snap.providers):
            self.members[snap.providers[uuid].root_uuid or uuid].append(uuid)
        self.served_by = collections.defaultdict(list)
        for uuid in sorted(snap.anchors):
            if uuid in snap.providers and snap.is_sharing(uuid):
                for anchor in snap.anchors[uuid]:
                    if anchor != snap.root(uuid):
                        self.served_by[anchor].append(uuid)
        self.anchors = sorted(set(self.members) | set(self.served_by))
        # request shape -> its viable anchors (_viable_anchors)
        self.viable = {}
        self._aggregate_members = None

    def anchors_touching(self, snap, aggregates):
        """The anchors (in order) whose tree has a provider in one of
        ``aggregates`` or is served by a sharing provider in one; all of
        them if None (SliceSpec.tree_aggregates' narrowing)."""
        if aggregates is None:
            return self.anchors
        if self._aggregate_members is None:
            self._aggregate_members = _members_of_aggregates(snap)
        found = set()
        for aggregate in aggregates:
            for uuid in self._aggregate_members.get(aggregate, ()):
                found.add(snap.root(uuid))
                if snap.is_sharing(uuid):
                    found.update(snap.anchors.get(uuid, ()))
        return sorted(found.intersection(self.anchors))

    @classmethod
    def of(cls, snap):
        """The snapshot's index, built once for the snapshots that share
        its providers (see Snapshot.derived)."""
        index = snap.derived.get(cls)
        if index is None:
            index = snap.derived[cls] = cls(snap)
        return index

    def local_providers(self, anchor):
        return self.members.get(anchor, []) + self.served_by.get(anchor, [])


class _GroupSearch:
    """The options of one request group, anchor by anchor: a suffixed
    group's (one provider each), or the unsuffixed group's (one option
    per class and provider)."""

    # _SpreadSearch's options are the providers' uuids.
    _providers_only = False

    def __init__(self, snap, group, index):
        self.snap = snap
        self.group = group
        self.index = index
        self.tree = _in_tree_root(snap, group)
        # Most requests name no aggregate and no in_tree: every provider
        # the tree index offers an anchor then pairs with it, and
        # _pair_ok's four aggregate lookups per option can be skipped.
        self._any_pair_ok = not (group.member_of or group.forbidden_aggs
                                 or self.tree is not None)
        # The level keys: one level per class for the unsuffixed group,
        # one (None) for a suffixed group.
        self._keys = ([None] if group.use_same_provider
                      else sorted(group.resources))
        # uuid -> the provider's options per level, or None.
        self._option_cache = {}

    def levels(self, anchor, providers=None):
        """The group's walk levels under ``anchor``: one level (one option
        per provider) for a suffixed group, one level per class for the
        unsuffixed group, whose required traits are checked once all its
        classes are chosen. None if some level has no option.
        ``providers``: those of the anchor's that may serve the group
        (_viable_anchors), None for all."""
        if not self._keys:
            return []
        options = self._options_at(anchor, providers)
        if options is None or not all(options):
            return None
        return [_Level(self.group, level) for level in options]

    def _options_at(self, anchor, providers=None):
        """[options of each level] under ``anchor`` (None if no provider
        offers any): its own providers, then the sharing providers
        serving it (or ``providers``, those of them that may serve the
        group). Options are worked out once per provider, for all levels
        at once -- a sharing provider serves many anchors -- and only for
        the anchors the search reaches before ``limit``."""
        lists = None
        if providers is None:
            providers = self.index.local_providers(anchor)
        for uuid in providers:
            options = self._serving_options(uuid, anchor)
            if options is None:
                continue
            if lists is None:
                lists = [[] for _ in self._keys]
            for option, found in zip(options, lists):
                if option is not None:
                    found.append(option)
        return lists

    def _serving_options(self, uuid, anchor):
        """The provider's options per level (_options_of, worked out once)
        if it may serve the group under ``anchor``, else None."""
        options = self._option_cache.get(uuid, False)
        if options is False:
            options = self._option_cache[uuid] = self._options_of(uuid)
        if options is None or not (self._any_pair_ok
                                   or self.group.use_same_provider
                                   or self._pair_ok(uuid, anchor)):
            return None
        return options

    def _options_of(self, uuid):
        """[the provider's option or None, per level], or None if it has
        none."""
        if self.group.use_same_provider:
            option = self._single_provider_option(uuid)
            return None if option is None else [option]
        options = self._class_options_of(uuid)
        return options if any(options) else None

    def _class_options_of(self, uuid):
        """The unsuffixed group's option of each class (sorted) for one
        provider: its inventory and traits are read once for all
        classes, and its options share one providers set."""
        mine = self.snap.inventories.get(uuid)
        # A provider with a forbidden trait fails every choice.
        if not mine or self.has_forbidden_trait(uuid):
            return [None] * len(self._keys)
        providers = None if self._providers_only else frozenset([uuid])
        options = []
        for rc in self._keys:
            amount = self.group.resources[rc]
            inv = mine.get(rc)
            if inv is None or not self._fits(inv, amount):
                options.append(None)
            elif providers is None:
                options.append(uuid)
            else:
                options.append(_Option(((uuid, rc, amount),), providers))
        return options

    # Predicates over one provider.

    def has_required_traits(self, uuid):
        traits = self.snap.traits_of(uuid)
        return all(any_of & traits for any_of in self.group.required_traits)

    def has_forbidden_trait(self, uuid):
        forbidden = self.group.forbidden_traits
        return bool(forbidden) and not forbidden.isdisjoint(
            self.snap.traits_of(uuid))

    def in_member_of(self, uuid):
        aggs = self.snap.aggregates_of(uuid)
        return all(any_of & aggs for any_of in self.group.member_of)

    def in_forbidden_agg(self, uuid):
        return bool(self.snap.aggregates_of(uuid) & self.group.forbidden_aggs)

    def can_take(self, uuid, rc, amount):
        inv = self.snap.inventory(uuid, rc)
        return inv is not None and self._fits(inv, amount)

    @staticmethod
    def _fits(inventory, amount):
        return inventory.can_take(amount)

    def in_tree(self, uuid):
        return self.tree is None or self.snap.root(uuid) == self.tree

    # Suffixed groups: one provider each (upstream's single-provider path).

    def _single_provider_option(self, uuid):
        if not self._single_provider_ok(uuid):
            return None
        return _Option(amounts=tuple((uuid, rc, n) for rc, n
                                     in self.group.resources.items()),
                       providers=frozenset([uuid]))

    def _single_provider_ok(self, uuid):
        if self.group.resources:
            if not (self.in_tree(uuid) and all(
                    self.can_take(uuid, rc, n)
                    for rc, n in self.group.resources.items())):
                return False
        elif not (self.group.required_traits or self.group.member_of):
            # Upstream matches nothing for a resourceless group without a
            # positive filter; in_tree is ignored for resourceless groups.
            return False
        return (self.has_required_traits(uuid)
                and not self.has_forbidden_trait(uuid)
                and self.in_member_of(uuid)
                and not self.in_forbidden_agg(uuid))

    # The unsuffixed group: classes spread over the tree and sharing
    # providers serving it (upstream's multi-provider path), one walk level
    # per class so that capacity prunes it like any other group.

    def _pair_ok(self, uuid, anchor):
        if self._any_pair_ok:
            return True
        if self.snap.root(uuid) == anchor:
            if not self.in_tree(uuid):
                return False
        elif self.tree is not None or not self.in_member_of(uuid):
            # in_tree disables sharing; with member_of, a sharing provider
            # must itself be in the aggregates to serve other trees.
            return False
        if self.group.member_of and not (self.in_member_of(uuid)
                                         or self.in_member_of(anchor)):
            return False
        return not (self.in_forbidden_agg(uuid)
                    or self.in_forbidden_agg(anchor))


class _SpreadSearch(_GroupSearch):
    """The unsuffixed group of a spread request (see _spread_classes),
    whose walk (_spread_walks) needs only which provider can take which
    class: its options are the providers' uuids."""

    _providers_only = True

    def providers_at(self, anchor, providers=None):
        """The unsuffixed group's providers of each class (sorted) under
        ``anchor`` (of ``providers`` if given), or None if some class has
        none: its levels, as uuids. Each provider is tested once per
        request, however many anchors it serves (_options_at)."""
        found = self._options_at(anchor, providers)
        if found is None or not all(found):
            return None
        return found


class _StructuralSearch(_GroupSearch):
    """What a group may use were nothing used: the providers' classes,
    traits and aggregates (see _viable_anchors). Amounts are left out
    too, so that one answer serves every flavor of a shape. Options are
    plain flags, per level: whether the provider offers its class."""

    def _options_of(self, uuid):
        if self.group.use_same_provider:
            return [True] if self._single_provider_ok(uuid) else None
        mine = self.snap.inventories.get(uuid)
        if not mine or self.has_forbidden_trait(uuid):
            return None
        options = [rc in mine or None for rc in self._keys]
        return options if any(options) else None

    @staticmethod
    def _fits(inventory, amount):
        return True

    def could_serve(self, anchor):
        """(the anchor's providers that may serve the group, or None if
        every one may; those providers), or None if together they do not
        offer every level: the group cannot be served under the
        anchor."""
        local = self.index.local_providers(anchor)
        found, offered = [], [False] * len(self._keys)
        for uuid in local:
            options = self._serving_options(uuid, anchor)
            if options is not None:
                found.append(uuid)
                offered = [had or bool(option)
                           for had, option in zip(offered, options)]
        if not all(offered):
            return None
        return None if len(found) == len(local) else found, found


# The most request shapes whose viable anchors a structure keeps: a
# scheduler sends a few (flavors differ by amounts, which the shapes
# leave out); more are worked out again.
_VIABLE_SHAPES = 32


def _shape_key(request):
    """What _viable_anchors' answer depends on, hashable."""
    return (request.group_policy, tuple(
        (group.suffix, tuple(sorted(group.resources)),
         group.required_traits, group.forbidden_traits, group.member_of,
         group.forbidden_aggs, group.in_tree)
        for group in request.groups))


def _viable_anchors(snap, request, index):
    """The pairs (anchor, per group the anchor's providers that may serve
    it, or None for all), in anchor order, of the anchors under which every
    group of ``request`` finds a provider with the classes, traits and
    aggregates it asks for (with isolate, enough providers), whatever the
    usage and amounts.

    The walks visit only these, and only the providers listed: a tree
    that cannot hold a candidate -- a sharing provider's own tree, a host
    without the NUMA cells or the GPU a group asks for -- costs nothing,
    where testing its providers was most of a request's time (two NUMA
    groups at 1,000 nodes, a limited request at 100,000 walking past the
    sharing providers' trees), and a NUMA group is not offered the host's
    root or its GPU. Worked out once per request shape for the providers
    of ``index``, which a worker's kept structure shares between
    requests; amounts and usage are tested by the walk. Worked out as
    far as the walks go (_ViableAnchors): a limited request after a
    structure change does not wait for the anchors it will not reach
    (at 100,000 compute nodes, a second)."""
    key = _shape_key(request)
    viable = index.viable.get(key)
    if viable is None:
        if len(index.viable) >= _VIABLE_SHAPES:
            index.viable.clear()
        viable = index.viable.setdefault(key, _ViableAnchors(
            snap, request, index))
    return iter(viable)


class _ViableAnchors:
    """_viable_anchors' answer for one request shape, worked out anchor by
    anchor as walks ask for more, and kept. Threads share it: one at a
    time extends it."""

    # Anchors tested per turn of the lock.
    BATCH = 256

    def __init__(self, snap, request, index):
        self._snap = snap
        self._searches = [_StructuralSearch(snap, group, index)
                          for group in request.groups]
        self._isolate = request.group_policy == 'isolate'
        self._pending = iter(index.anchors_touching(
            snap, _tree_aggregates(request)))
        self._found = []
        self._complete = False
        self._lock = threading.Lock()

    def __iter__(self):
        position = 0
        while True:
            found = self._found
            while position < len(found):
                yield found[position]
                position += 1
            if self._complete or not self._extend():
                if position == len(self._found):
                    return

    def _extend(self):
        """Test the next anchors; False once none is left."""
        with self._lock:
            if self._complete:
                return False
            tested = 0
            for anchor in self._pending:
                try:
                    serving = _could_hold(self._snap, self._searches,
                                          anchor, self._isolate)
                except BaseException:
                    # Tested again by the next walk, never skipped.
                    self._pending = itertools.chain([anchor],
                                                    self._pending)
                    raise
                if serving is not None:
                    self._found.append((anchor, serving))
                tested += 1
                if tested == self.BATCH:
                    return True
            self._complete = True
            # What only the tests needed is freed.
            self._searches = self._snap = None
            return True


def _could_hold(snap, searches, anchor, isolate):
    """Per search, the anchor's providers that may serve its group (None
    for all), or None if the anchor cannot hold a candidate."""
    serving, isolated, suffixed = [], set(), 0
    for search in searches:
        could = search.could_serve(anchor)
        if could is None:
            return None
        listed, providers = could
        group = search.group
        if group.use_same_provider:
            suffixed += 1
            isolated.update(providers)
        elif not _could_meet_traits(snap, group, providers):
            return None
        serving.append(listed)
    # isolate gives each suffixed group a provider of its own
    # (_enough_providers_to_isolate).
    if isolate and len(isolated) < suffixed:
        return None
    return tuple(serving)


def _could_meet_traits(snap, group, providers):
    """The unsuffixed group's required traits are met by ``providers``,
    those that may supply its classes, together (they must be, by those
    a candidate takes)."""
    meets = _collective_traits_test(snap, group.required_traits)
    return meets is None or meets(providers)


def _in_tree_root(snap, group):
    """The root in_tree names; None without in_tree; '' if unknown."""
    if not group.in_tree:
        return None
    if group.in_tree not in snap.providers:
        return ''
    return snap.root(group.in_tree)


def _root_filter(snap, request):
    """Predicate on anchor roots from root_required (1.35)."""
    required, forbidden = request.root_required, request.root_forbidden
    if not (required or forbidden):
        return lambda anchor: True

    def anchor_ok(anchor):
        traits = snap.traits_of(anchor)
        return required <= traits and not traits & forbidden
    return anchor_ok


# --------------------------------------------------------------------------
# Combining groups under one anchor


class _Combiner:
    """Depth-first walk choosing one option per level for one anchor,
    pruning partial combinations that can no longer become valid."""

    def __init__(self, snap, request, rank, levels, checkpoints):
        self.snap = snap
        self.inventories = snap.inventories
        self.levels = levels
        self.groups = [level.group for level in levels]
        self.isolate = request.group_policy == 'isolate'
        self.nested_aware = request.nested_aware
        self.rank = rank  # class_rank_of, once per search
        self.suffix_rank = request.suffix_rank
        self.checks = checkpoints(self.groups)
        unsuffixed = [group for group in self.groups
                      if not group.use_same_provider]
        # Only called when the unsuffixed group has required traits.
        self._unsuffixed_traits_met = _collective_traits_test(
            snap, unsuffixed[0].required_traits if unsuffixed else ())
        # Most walks have no rule beyond capacity to check per choice.
        self.unchecked = (not self.isolate and self.nested_aware
                          and not any(self.checks))

    def walk(self):
        """Candidates of every valid combination, lazily.

        One generator frame with an explicit stack rather than a
        recursive generator per level: every candidate would otherwise
        be passed up through one suspended frame per level, which cost
        more than building it. ``sums[d]`` holds the amounts per
        (provider, class) of the first ``d`` choices."""
        last = len(self.levels) - 1
        chosen, sums = [], [{}]
        pending = [iter(self.levels[0].options)]
        while pending:
            depth = len(pending) - 1
            for option in pending[-1]:
                new_sums = self._add(sums[-1], option)
                if new_sums is None:
                    continue
                chosen.append(option)
                if not (self.unchecked or self._still_valid(depth, chosen)):
                    chosen.pop()
                elif depth == last:
                    yield _make_candidate(self.groups, chosen, new_sums,
                                          self.rank, self.suffix_rank)
                    chosen.pop()
                else:
                    sums.append(new_sums)
                    pending.append(iter(self.levels[depth + 1].options))
                    break
            else:
                # Level exhausted: back to the choice that led here.
                pending.pop()
                sums.pop()
                if chosen:
                    chosen.pop()

    def _add(self, sums, option):
        # A plain dict: copying a Counter goes through Counter.update,
        # several times slower, and this runs once per option tried.
        new_sums = dict(sums)
        inventories = self.inventories
        for uuid, rc, amount in option.amounts:
            key = (uuid, rc)
            total = new_sums.get(key, 0) + amount
            # Inventory.can_hold_sum, inlined: this is the walk's inner
            # loop.
            inv = inventories[uuid][rc]
            if (inv.used + total > inv.summary_capacity
                    or total > inv.max_unit):
                return None
            new_sums[key] = total
        return new_sums

    def _still_valid(self, depth, chosen):
        if self.isolate and not self._isolated(chosen):
            return False
        if not self.nested_aware and not self._one_provider_per_tree(chosen):
            return False
        for check in self.checks[depth]:
            if check == '':
                if not self._spread_traits_ok(chosen):
                    return False
            elif not self._same_subtree(chosen, check):
                return False
        return True

    def _isolated(self, chosen):
        providers = [next(iter(opt.providers))
                     for group, opt in zip(self.groups, chosen)
                     if group.use_same_provider]
        return len(providers) == len(set(providers))

    def _one_provider_per_tree(self, chosen):
        # Before 1.29 a candidate may take resources from one provider per
        # tree only (sharing providers are roots of their own trees).
        root_of = {}
        for option in chosen:
            for uuid, _, _ in option.amounts:
                root_of[uuid] = self.snap.root(uuid)
        return len(root_of) == len(set(root_of.values()))

    def _spread_traits_ok(self, chosen):
        # The unsuffixed group's required traits are met collectively by
        # the providers supplying its classes (not by the rest of the tree).
        return self._unsuffixed_traits_met([
            uuid for group, option in zip(self.groups, chosen)
            if not group.use_same_provider for uuid in option.providers])

    def _same_subtree(self, chosen, suffixes):
        uuids = set()
        for group, option in zip(self.groups, chosen):
            if group.suffix in suffixes:
                uuids |= option.providers
        return _one_is_ancestor_of_all(self.snap, uuids)


class _CheckpointCache:
    """_checkpoints per order of the groups: the walk order differs
    between anchors only by the options' counts, so a request sees a
    handful of orders over hundreds of anchors."""

    def __init__(self, same_subtrees):
        self.same_subtrees = same_subtrees
        self.known = {}

    def __call__(self, groups):
        key = tuple(map(id, groups))
        if key not in self.known:
            self.known[key] = _checkpoints(groups, self.same_subtrees)
        return self.known[key]


def _checkpoints(groups, same_subtrees):
    """For each depth of the walk, the checks decidable from there on:
    each same_subtree set (a frozenset of suffixes) once all its groups are
    chosen, and '' (the unsuffixed group's required traits, if any) once
    all its classes are."""
    last = {}
    for depth, group in enumerate(groups):
        last[group.suffix] = depth
    checks = [[] for _ in groups]
    for suffixes in same_subtrees:
        checks[max(last[s] for s in suffixes)].append(suffixes)
    # Without required traits the unsuffixed group's check always passes:
    # skipping it saves a trait union per candidate.
    if any(not group.use_same_provider and group.required_traits
           for group in groups):
        checks[last['']].append('')
    return checks


def _ancestors_or_self(snap, uuid):
    chain = set()
    while uuid is not None:
        chain.add(uuid)
        uuid = snap.parent(uuid)
    return chain


def _one_is_ancestor_of_all(snap, uuids):
    if len(uuids) <= 1:
        return True
    common = set.intersection(*(_ancestors_or_self(snap, u) for u in uuids))
    return bool(common & uuids)


def _make_candidate(groups, chosen, sums, rank, suffix_rank):
    # One sort of the (uuid, class) keys orders the providers and groups
    # each provider's classes, instead of a sort of the providers and a
    # grouping pass; a provider's classes are then put in the query's
    # order (``rank``: class_rank_of), most providers
    # having a single class to order; the mappings are in the query's
    # order of the groups (``suffix_rank``).
    allocations, current, resources = [], None, None
    for key in sorted(sums):
        uuid = key[0]
        if uuid != current:
            if resources is not None:
                allocations.append((current, _ranked(resources, rank)))
            current, resources = uuid, []
        resources.append((key[1], sums[key]))
    if resources is not None:
        allocations.append((current, _ranked(resources, rank)))
    mappings = {}
    for group, option in zip(groups, chosen):
        suffix = group.suffix
        if suffix in mappings:
            mappings[suffix] = mappings[suffix] | option.providers
        else:
            mappings[suffix] = option.providers
    return Candidate.of(
        tuple(allocations),
        tuple(sorted([(suffix, tuple(sorted(uuids)))
                      for suffix, uuids in mappings.items()],
                     key=lambda pair: suffix_rank[pair[0]])))


def _ranked(resources, rank):
    """``resources`` ([(class, amount)]) as a tuple in ``rank``'s order."""
    if len(resources) > 1:
        resources.sort(key=lambda pair: rank[pair[0]])
    return tuple(resources)


def _demand(groups):
    """{class: amount summed over all groups}."""
    demand = collections.Counter()
    for group in groups:
        demand.update(group.resources)
    return demand


def _tree_can_cover(snap, demand, levels):
    """Cheap necessary condition: for every class, the free capacity of all
    distinct providers offering it under this anchor covers the summed
    ``demand`` of all groups. A tree failing it never enters the product."""
    offered = collections.defaultdict(set)
    for level in levels:
        for option in level.options:
            for uuid, rc, _ in option.amounts:
                offered[rc].add(uuid)
    for rc, needed in demand.items():
        supply = sum(snap.inventory(u, rc).free_for_sums
                     for u in offered[rc])
        if supply < needed:
            return False
    return True


# The most combinations a walk may have and skip _tree_can_cover: the
# check only prunes (the walk tests every sum itself), and costs about as
# much as walking a few combinations.
SMALL_WALK = 4


def _walk_is_small(levels):
    size = 1
    for level in levels:
        size *= len(level.options)
        if size > SMALL_WALK:
            return False
    return True


def _anchor_walks(snap, request, index):
    """Lazily, one iterator of candidates per viable anchor root."""
    searches = [_GroupSearch(snap, group, index) for group in request.groups]
    demand = _demand(request.groups)
    checkpoints = _CheckpointCache(request.same_subtrees)
    isolate = request.group_policy == 'isolate'
    rank = class_rank_of(snap, request)

    def walk_under(anchor, serving):
        levels = []
        for group_search, providers in zip(searches, serving):
            group_levels = group_search.levels(anchor, providers)
            if group_levels is None:
                return None  # a group that cannot fit ends this anchor
            levels += group_levels
        if isolate and not _enough_providers_to_isolate(levels):
            return None
        if not (_walk_is_small(levels)
                or _tree_can_cover(snap, demand, levels)):
            return None
        return _Combiner(snap, request, rank,
                         _most_constrained_first(levels),
                         checkpoints).walk()
    return _walks_of_anchors(snap, request, index, walk_under)


def _walks_of_anchors(snap, request, index, walk_under):
    """Per viable anchor that passes the root filter, an iterator of its
    candidates: remembered ones if the anchor's providers have the usage
    they had when it was last walked for this request (_AnchorMemo), else
    ``walk_under(anchor, providers serving each group)``'s (None: no
    candidate)."""
    anchor_ok = _root_filter(snap, request)
    memo = _AnchorMemo.of(snap, request)
    inventories = snap.inventories
    for anchor, serving in _viable_anchors(snap, request, index):
        if not anchor_ok(anchor):
            continue
        if memo is None:
            walk = walk_under(anchor, serving)
            if walk is not None:
                yield walk
            continue
        found = memo.recall(inventories, anchor)
        if found is None:
            found = memo.recorded(inventories, anchor,
                                  index.local_providers(anchor),
                                  walk_under(anchor, serving))
        yield iter(found)


# The most requests (amounts included) whose walks a kept structure
# remembers (the least recently asked forgotten first), and for one of
# them the most anchors plus candidates: a scheduler sends a few flavors
# again and again; an unlimited request at 100,000 nodes walks 100,000
# trees to find 260,000 candidates, which a worker need not hold.
_REMEMBERED_REQUESTS = 16
_REMEMBERED_SIZE = 20000


class RememberedWalks:
    """The _AnchorMemo of each kind of request a kept structure answered
    lately (Snapshot.derived, KEPT_WALKS), shared by its threads."""

    def __init__(self):
        self._memos = collections.OrderedDict()
        self._lock = threading.Lock()

    def memo(self, key):
        with self._lock:
            memo = self._memos.get(key)
            if memo is not None:
                self._memos.move_to_end(key)
                return memo
            memo = self._memos[key] = _AnchorMemo()
            if len(self._memos) > _REMEMBERED_REQUESTS:
                self._memos.popitem(last=False)
            return memo


class _AnchorMemo:
    """For one request (amounts included), the candidates each walked
    anchor had, in walk order, with the inventories of its providers (its
    tree's and the sharing providers serving it) they were found under.

    Kept with a worker's kept structure (Snapshot.derived, KEPT_WALKS)
    and shared by the requests it answers, on every thread. Each
    request's snapshot gives a provider whose usage changed a new
    inventories dict and keeps the others' (candidate_fetch's
    _KeptStructure never changes one), so an anchor whose providers all
    hold the dicts it was walked under would walk to the same candidates
    again: from claim to claim a scheduler's request walks only the tree
    the last claim changed. The entry holds those dicts, so that no new
    dict can reuse the address of one it compares against."""

    def __init__(self):
        self._found = {}  # anchor -> (providers, their dicts, candidates)
        self._size = 0  # entries plus their candidates
        self._lock = threading.Lock()

    @classmethod
    def of(cls, snap, request):
        """The memo of ``request`` in a kept structure's snapshot, None
        in any other snapshot (a request's windows are read for it)."""
        walks = snap.derived.get(KEPT_WALKS)
        if walks is None:
            return None
        return walks.memo((
            _shape_key(request), request.version, request.root_required,
            request.root_forbidden, request.same_subtrees,
            # In the query's order, which the candidates' bodies keep.
            tuple(tuple(group.resources.items())
                  for group in request.groups)))

    def recall(self, inventories, anchor):
        """The anchor's candidates if its providers still hold the
        inventories they were walked under, else None."""
        entry = self._found.get(anchor)
        if entry is None:
            return None
        providers, held, candidates = entry
        for uuid, mine in zip(providers, held):
            if inventories.get(uuid) is not mine:
                self._forget(anchor, entry)
                return None
        return candidates

    def _forget(self, anchor, entry):
        """Drop a stale entry, so that a full memo makes room."""
        with self._lock:
            if self._found.get(anchor) is entry:
                del self._found[anchor]
                self._size -= 1 + len(entry[2])

    def recorded(self, inventories, anchor, providers, walk):
        """An iterator of ``walk``'s candidates (none if None) that
        remembers them once the walk is done: a walk left unfinished (the
        request had enough) is not remembered, nor one walked once the
        memo is full."""
        if self._size >= _REMEMBERED_SIZE:
            return walk or ()
        if walk is None:
            self._remember(inventories, anchor, providers, ())
            return ()
        return self._recording(inventories, anchor, providers, walk)

    def _recording(self, inventories, anchor, providers, walk):
        found = []
        for candidate in walk:
            found.append(candidate)
            yield candidate
        self._remember(inventories, anchor, providers, tuple(found))

    def _remember(self, inventories, anchor, providers, candidates):
        held = [inventories.get(uuid) for uuid in providers]
        with self._lock:
            # An entry it replaces is stale: dropped either way.
            old = self._found.pop(anchor, None)
            if old is not None:
                self._size -= 1 + len(old[2])
            if self._size + 1 + len(candidates) <= _REMEMBERED_SIZE:
                self._found[anchor] = (providers, held, candidates)
                self._size += 1 + len(candidates)


def _enough_providers_to_isolate(levels):
    """group_policy=isolate gives each suffixed group its own provider, so
    a tree whose suffixed groups can use fewer providers between them than
    there are such groups has no candidate: two NUMA groups on a host
    without NUMA children (the root offers both) end here, not in a walk
    that would try every pairing first."""
    suffixed = [level for level in levels if level.group.use_same_provider]
    providers = set()
    for level in suffixed:
        for option in level.options:
            providers |= option.providers
    return len(providers) >= len(suffixed)


def _most_constrained_first(levels):
    """Walk the levels with the fewest options first: a branch that must
    fail fails near the root instead of after many levels. The answer is a
    set, so the order of the walk does not change it."""
    return sorted(levels, key=lambda level: len(level.options))


def _round_robin(generators):
    """a1, b1, c1, a2, b2, ... pulling generators lazily on the first
    round, so a limit reached early never builds the later ones."""
    active = collections.deque()
    for generator in generators:
        for item in generator:
            yield item
            active.append(generator)
            break
    while active:
        generator = active.popleft()
        for item in generator:
            yield item
            active.append(generator)
            break


def _spread_classes(request):
    """((class, amount), ...) sorted by class if the request is one
    unsuffixed group with resources and nothing to check between its
    choices, else None.

    Such a request's candidates under an anchor are every combination of
    one provider per class (see _Combiner.independent; its required
    traits are a test of the providers a combination names), so the
    search can enumerate them as tuples of providers with
    itertools.product, in C, and build a body only for those returned:
    the scheduler's common request without per-combination Python."""
    if len(request.groups) != 1 or request.same_subtrees:
        return None
    group = request.groups[0]
    if (group.use_same_provider or not group.resources
            or not request.nested_aware):
        return None
    return tuple(sorted(group.resources.items()))


def class_rank_of(snap, request):
    """{class: its place in an answer's resources} for ``request`` in
    ``snap``: the query's order (CandidateRequest.class_rank), or with the
    unsuffixed group's classes in class id order where upstream takes its
    tree path for that group (Snapshot.unsuffixed_by_class_id). Worked
    out once per request and snapshot, not per candidate."""
    if not snap.unsuffixed_by_class_id:
        return request.class_rank
    return request.class_rank_by_id(snap.class_ids)


def _query_order(classes, rank):
    """The indexes of ``classes`` ((class, amount), ...) in ``rank``'s
    order (class_rank_of)."""
    return tuple(sorted(range(len(classes)),
                        key=lambda i: rank[classes[i][0]]))


def _spread_walks(snap, request, index):
    """Per viable anchor, an iterator of provider tuples (one provider
    per class of ``_spread_classes``); the spread request's counterpart
    of _anchor_walks."""
    search = _SpreadSearch(snap, request.groups[0], index)
    meets = _collective_traits_test(snap, search.group.required_traits)

    def walk_under(anchor, serving):
        # Each provider listed for a class passed Inventory.can_take for
        # it alone, so it fits on its own, and no two classes add to one
        # (provider, class).
        [providers] = serving
        providers = search.providers_at(anchor, providers)
        if providers is None:
            return None
        combinations = itertools.product(*providers)
        if meets is None:
            return combinations
        if not meets(set().union(*providers)):
            return None  # not even every provider together has them
        return filter(meets, combinations)
    return _walks_of_anchors(snap, request, index, walk_under)


def _collective_traits_test(snap, required):
    """Predicate on providers: together they have a trait of every any-of
    set of ``required`` (the unsuffixed group's rule); None if there is
    nothing to test."""
    if not required:
        return None

    def meets(uuids):
        traits = set()
        for uuid in set(uuids):
            traits |= snap.traits_of(uuid)
        return all(any_of & traits for any_of in required)
    return meets


def _all_walks(snap, request, strategy):
    if strategy not in (DEPTH_FIRST, BREADTH_FIRST):
        raise ValueError("Strategy '%s' not recognized" % strategy)
    index = _TreeIndex.of(snap)
    if _spread_classes(request) is None:
        walks = _anchor_walks(snap, request, index)
    else:
        walks = _spread_walks(snap, request, index)
    if strategy == DEPTH_FIRST:
        return itertools.chain.from_iterable(walks)
    return _round_robin(walks)


# --------------------------------------------------------------------------
# Entry point


def search(snap, request, options=SearchOptions()):
    """Allocation candidates of ``request`` (a CandidateRequest) in ``snap``.

    Returns a SearchResult: distinct candidates (at most ``request.limit``)
    and the providers the response must summarise. Class and trait names
    are assumed valid (``request.validate_names`` ran first).
    """
    candidates = _collect(_all_walks(snap, request, options.strategy),
                          stop_after(request, options))
    candidates = _apply_limit(candidates, request.limit, options)
    spread = _spread_classes(request)
    if spread is not None:
        order = _query_order(spread, class_rank_of(snap, request))
        candidates = [SpreadCandidate(providers, spread, order)
                      for providers in candidates]
    return SearchResult(candidates, _summary_trees(snap, request,
                                                   candidates))


def what_each_group_keeps(snap, request):
    """For an empty answer's DEBUG line: per group, how many of the
    providers read pass each of its tests on its own -- holding and
    having room for each class, then each trait and aggregate filter --
    so that the test that left nothing stands out. Returns
    [(group label, [(test, providers passing)])]."""
    found = []
    for group in request.groups:
        search = _GroupSearch(snap, group, _TreeIndex.of(snap))
        tests = []
        for rc, amount in sorted(group.resources.items()):
            tests.append(('with %s inventory' % rc,
                          lambda u, rc=rc: snap.inventory(u, rc) is not None))
            tests.append(('with room for %s:%d' % (rc, amount),
                          lambda u, rc=rc, n=amount:
                          search.can_take(u, rc, n)))
        for name, applies, passes in (
                ('with the required traits', group.required_traits,
                 search.has_required_traits),
                ('without a forbidden trait', group.forbidden_traits,
                 lambda u: not search.has_forbidden_trait(u)),
                ('in the member_of aggregates', group.member_of,
                 search.in_member_of),
                ('outside the forbidden aggregates', group.forbidden_aggs,
                 lambda u: not search.in_forbidden_agg(u)),
                ('in the in_tree tree', group.in_tree, search.in_tree)):
            if applies:
                tests.append((name, passes))
        counts = [(name, sum(1 for uuid in snap.providers if passes(uuid)))
                  for name, passes in tests]
        found.append(('group %r' % group.suffix, counts))
    return found


def result_of(snap, request, candidates, options=SearchOptions()):
    """The SearchResult for candidates found in several windows of one
    slice, ``snap`` their merged snapshot."""
    candidates = _apply_limit(candidates, request.limit, options)
    return SearchResult(candidates, _summary_trees(snap, request,
                                                   candidates))


def merge_snapshots(snaps):
    """One Snapshot of the snapshots of several windows of a slice (each
    of whole trees; a tree in two of them is the same tree)."""
    merged = Snapshot(providers={})
    anchors = collections.defaultdict(frozenset)
    for snap in snaps:
        merged.providers.update(snap.providers)
        merged.inventories.update(snap.inventories)
        merged.traits.update(snap.traits)
        merged.trait_ids.update(snap.trait_ids)
        merged.class_ids.update(snap.class_ids)
        merged.unsuffixed_by_class_id |= snap.unsuffixed_by_class_id
        merged.aggregates.update(snap.aggregates)
        for uuid, roots in snap.anchors.items():
            anchors[uuid] |= roots
    merged.anchors = dict(anchors)
    return merged


def stop_after(request, options):
    """How many distinct candidates to generate before stopping."""
    caps = []
    if options.max_candidates >= 0:
        # Upstream checks the cap after adding, so 0 still yields one.
        caps.append(max(options.max_candidates, 1))
    if request.limit is not None and not options.randomize:
        # A random sample must come from the whole set; the first N need
        # only N.
        caps.append(request.limit)
    return min(caps) if caps else None


def _collect(candidates, cap):
    seen = {}
    for candidate in candidates:
        seen.setdefault(candidate, None)
        if cap is not None and len(seen) >= cap:
            break
    return list(seen)


def _apply_limit(candidates, limit, options):
    if not options.randomize:
        return candidates[:limit] if limit else candidates
    rng = options.rng or random
    if limit and limit < len(candidates):
        return rng.sample(candidates, limit)
    candidates = list(candidates)
    rng.shuffle(candidates)
    return candidates


def _summary_trees(snap, request, candidates):
    """SearchResult.summary_trees of ``candidates``."""
    used = (type(candidates[0]).providers_used(candidates) if candidates
            else set())
    # Provider.root_uuid read directly: Snapshot.root's call cost more
    # than the test, once per provider of a large answer.
    providers = snap.providers
    if not request.nested_aware:
        # Before 1.29 summaries list only providers a candidate uses.
        trees = collections.defaultdict(list)
        for uuid in sorted(used):
            trees[providers[uuid].root_uuid or uuid].append(uuid)
        return dict(trees)
    roots = {providers[uuid].root_uuid or uuid for uuid in used}
    index = snap.derived.get(_TreeIndex)
    if index is not None:
        # The search built it: the trees' providers without a walk of
        # every provider, which a limited answer's few trees do not need.
        members = index.members
        return {root: members.get(root, ()) for root in roots}
    trees = collections.defaultdict(list)
    for uuid in sorted(providers):
        root = providers[uuid].root_uuid or uuid
        if root in roots:
            trees[root].append(uuid)
    return dict(trees)
