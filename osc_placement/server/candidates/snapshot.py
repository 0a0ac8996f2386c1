# SPDX-License-Identifier: Apache-2.0
"""The slice of the cloud a search reads: providers, their inventories
with usage, traits, aggregates and the sharing providers' anchors.

Nothing changes a Snapshot once built, so the snapshots a worker answers
from its kept structure share their parts.
"""

import collections
import collections.abc
import dataclasses
import math

from osc_placement.server.objects import inventory as inv_obj
from osc_placement.server.schemas import request_groups

SHARING_TRAIT = request_groups.MISC_SHARES_VIA_AGGREGATE
_NONE = frozenset()


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
        # Clamped to [0, max_unit] with comparisons, cheaper than max()
        # and min() once per inventory loaded.
        free = whole - used
        self.free_for_sums = (0 if free < 0
                              else max_unit if free > max_unit else free)

    def _fields(self):
        return (self.total, self.reserved, self.min_unit, self.max_unit,
                self.step_size, self.allocation_ratio, self.used)

    def __eq__(self, other):
        # By value: the memos (memo.py) compare the inventories a walk or
        # a written summary saw with a later snapshot's.
        if not isinstance(other, Inventory):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self):
        return hash(self._fields())

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
# through the overlay is a Python call, which costs a small cloud more
# than the copy; a large cloud's copy costs more than the lookups
# (doc/source/contributor/benchmarks.rst has the measurements).
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
    """``inventories`` (untouched) with ``changed`` providers replaced: a
    new dict below REPLACED_APART_FROM providers, else ReplacedInventories.

    Replaced providers are copied per change, the whole dict rewritten
    once they pass sqrt(4 n): with ``c`` replaced per change (about 2),
    ``k`` replaced cost ``k / 2`` a change and a rewrite ``n c / k``,
    equal at ``k = sqrt(2 n c)``."""
    if isinstance(inventories, ReplacedInventories):
        base, replaced = inventories.base, {**inventories.replaced,
                                            **changed}
    else:
        base, replaced = inventories, changed
    if (len(base) < REPLACED_APART_FROM
            or len(replaced) > math.isqrt(4 * len(base))):
        return {**base, **replaced}
    return ReplacedInventories(base, replaced)


def same_inventories(held, now):
    """Equal by value; mostly the very dict held, the cheap answer."""
    return now is held or now == held


@dataclasses.dataclass
class Snapshot:
    """What the search knows about the cloud, whole trees only (summaries
    list whole trees); a missing key means "none".

    providers, traits, aggregates: by uuid (Provider, trait names,
        aggregate uuids); inventories: uuid -> {class: Inventory with
        usage}, a dict or a ReplacedInventories
    anchors: sharing provider -> roots it serves (upstream's
        anchors_for_sharing_providers)
    trait_ids, class_ids: ids by name, for upstream's orders
    unsuffixed_by_class_id: the database has nested or sharing providers,
        so upstream lists the unsuffixed group's classes by class id
    usage_stamp: a kept structure's usage number (equal stamps, equal
        inventories), else None
    """

    providers: dict
    inventories: dict = dataclasses.field(default_factory=dict)
    traits: dict = dataclasses.field(default_factory=dict)
    aggregates: dict = dataclasses.field(default_factory=dict)
    anchors: dict = dataclasses.field(default_factory=dict)
    trait_ids: dict = dataclasses.field(default_factory=dict)
    class_ids: dict = dataclasses.field(default_factory=dict)
    unsuffixed_by_class_id: bool = False
    usage_stamp: int = dataclasses.field(default=None, compare=False)

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


def group_pairs(rows):
    """{key: frozenset of values} from (key, value) pairs. Equal sets are
    one object: most providers share their traits and aggregates with
    many others, and a worker keeping a large cloud holds each set once
    rather than once per provider."""
    grouped = collections.defaultdict(set)
    for key, value in rows:
        grouped[key].add(value)
    shared = {}
    return {key: shared.setdefault(values, values)
            for key, values in zip(grouped, map(frozenset, grouped.values()))}


def members_of_aggregates(snap):
    """{aggregate uuid: set of the snapshot's providers in it}."""
    members = collections.defaultdict(set)
    for uuid, aggs in snap.aggregates.items():
        for agg in aggs:
            members[agg].add(uuid)
    return members


def compute_anchors(snap):
    """Anchors of every sharing provider, from the snapshot's aggregates."""
    members = members_of_aggregates(snap)
    anchors = {}
    for uuid in snap.providers:
        if snap.is_sharing(uuid):
            peers = set().union(*(members[agg]
                                  for agg in snap.aggregates_of(uuid)))
            anchors[uuid] = frozenset(snap.root(p) for p in peers)
    return anchors


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
