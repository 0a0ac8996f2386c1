# SPDX-License-Identifier: Apache-2.0
"""Combining the groups of a request under one anchor: a depth-first walk
choosing one option per level, pruning the partial combinations that can
no longer become valid, and the cheap tests that skip a walk.
"""

import collections
import operator

from osc_placement.server.candidates import groups as groups_mod
from osc_placement.server.candidates import results


class Combiner:
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
        self._unsuffixed_traits_met = groups_mod.collective_traits_test(
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
                    yield make_candidate(self.groups, chosen, new_sums,
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


class CheckpointCache:
    """_checkpoints per order of the groups: the walk order differs
    between anchors only by the options' counts, so a request sees a
    handful of orders over hundreds of anchors."""

    def __init__(self, same_subtrees):
        self.same_subtrees = same_subtrees
        self.known = {}

    def __call__(self, groups):
        # A group's suffix names it within its request.
        key = tuple(map(_SUFFIX, groups))
        if key not in self.known:
            self.known[key] = _checkpoints(groups, self.same_subtrees)
        return self.known[key]


_SUFFIX = operator.attrgetter('suffix')


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


def make_candidate(groups, chosen, sums, rank, suffix_rank):
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
    return results.Candidate.of(
        tuple(allocations),
        tuple(sorted([(suffix, tuple(sorted(uuids)))
                      for suffix, uuids in mappings.items()],
                     key=lambda pair: suffix_rank[pair[0]])))


def _ranked(resources, rank):
    """``resources`` ([(class, amount)]) as a tuple in ``rank``'s order."""
    if len(resources) > 1:
        resources.sort(key=lambda pair: rank[pair[0]])
    return tuple(resources)


def demand_of(groups):
    """{class: amount summed over all groups}."""
    demand = collections.Counter()
    for group in groups:
        demand.update(group.resources)
    return demand


def tree_can_cover(snap, demand, levels):
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


# The most combinations a walk may have and skip tree_can_cover: the
# check only prunes (the walk tests every sum itself), and costs about as
# much as walking a few combinations.
SMALL_WALK = 4


def walk_is_small(levels):
    size = 1
    for level in levels:
        size *= len(level.options)
        if size > SMALL_WALK:
            return False
    return True


def enough_providers_to_isolate(levels):
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


def most_constrained_first(levels):
    """Fewest options first, so that a doomed branch fails near the root."""
    return sorted(levels, key=lambda level: len(level.options))
