# SPDX-License-Identifier: Apache-2.0
"""The allocation candidate search over a snapshot.

``search`` combines the request groups in memory, anchor by anchor.
Unlike upstream, which builds every candidate and then cuts, it prunes
while it builds: a tree whose free capacity cannot cover the request is
skipped, a combination that overflows a provider or breaks
group_policy=isolate ends its branch (combiner.py), and the walk stops at
``limit`` distinct candidates unless a random sample is asked for. The
semantics are upstream's (spec 4.3.2); where upstream is accidental the
answer differs on purpose, as doc/source/server/allocation-candidates.rst
lists.
"""

import collections
import itertools
import random

from osc_placement.server.candidates import combiner
from osc_placement.server.candidates import groups
from osc_placement.server.candidates import index as index_mod
from osc_placement.server.candidates import request as request_mod
from osc_placement.server.candidates import results
from osc_placement.server.candidates import viable


def _root_filter(snap, request):
    """Predicate on anchor roots from root_required (1.35)."""
    required, forbidden = request.root_required, request.root_forbidden
    if not (required or forbidden):
        return lambda anchor: True

    def anchor_ok(anchor):
        traits = snap.traits_of(anchor)
        return required <= traits and not traits & forbidden
    return anchor_ok


def _anchor_walks(snap, request, index, memo):
    """Lazily, one iterator of candidates per viable anchor root."""
    searches = [groups.GroupSearch(snap, group, index)
                for group in request.groups]
    demand = combiner.demand_of(request.groups)
    checkpoints = combiner.CheckpointCache(request.same_subtrees)
    isolate = request.group_policy == 'isolate'
    rank = class_rank_of(snap, request)

    def walk_under(anchor, serving):
        levels = []
        for group_search, providers in zip(searches, serving):
            group_levels = group_search.levels(anchor, providers)
            if group_levels is None:
                return None  # a group that cannot fit ends this anchor
            levels += group_levels
        if isolate and not combiner.enough_providers_to_isolate(levels):
            return None
        if not (combiner.walk_is_small(levels)
                or combiner.tree_can_cover(snap, demand, levels)):
            return None
        return combiner.Combiner(snap, request, rank,
                                 combiner.most_constrained_first(levels),
                                 checkpoints).walk()
    return _walks_of_anchors(snap, request, index, memo, walk_under)


def _walks_of_anchors(snap, request, index, memo, walk_under):
    """Per viable anchor that passes the root filter, an iterator of its
    candidates: remembered ones if ``memo`` (memo.AnchorMemo, or None)
    has them for the inventories its providers have now, else
    ``walk_under(anchor, providers serving each group)``'s (None: no
    candidate)."""
    anchor_ok = _root_filter(snap, request)
    inventories = snap.inventories
    for anchor, serving in viable.viable_anchors(snap, request, index):
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


def class_rank_of(snap, request):
    """{class: place in an answer's resources}: the query's order, or by
    class id for the unsuffixed group where upstream takes its tree path
    (Snapshot.unsuffixed_by_class_id); once per request, not candidate."""
    if not snap.unsuffixed_by_class_id:
        return request.class_rank
    return request.class_rank_by_id(snap.class_ids)


def _query_order(classes, rank):
    """The indexes of ``classes`` ((class, amount), ...) in ``rank``'s
    order (class_rank_of)."""
    return tuple(sorted(range(len(classes)),
                        key=lambda i: rank[classes[i][0]]))


def _spread_walks(snap, request, index, memo):
    """Per viable anchor, an iterator of provider tuples (one provider
    per class of request.spread_classes); the spread request's
    counterpart of _anchor_walks."""
    search = groups.SpreadSearch(snap, request.groups[0], index)
    meets = groups.collective_traits_test(snap,
                                          search.group.required_traits)

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
    return _walks_of_anchors(snap, request, index, memo, walk_under)


def _all_walks(snap, request, strategy, index, memo):
    if strategy not in (request_mod.DEPTH_FIRST, request_mod.BREADTH_FIRST):
        raise ValueError("Strategy '%s' not recognized" % strategy)
    if request_mod.spread_classes(request) is None:
        walks = _anchor_walks(snap, request, index, memo)
    else:
        walks = _spread_walks(snap, request, index, memo)
    if strategy == request_mod.DEPTH_FIRST:
        return itertools.chain.from_iterable(walks)
    return _round_robin(walks)


# --------------------------------------------------------------------------
# Entry points


def search(snap, request, options=request_mod.SearchOptions(), memory=None):
    """Allocation candidates of ``request`` (a CandidateRequest) in ``snap``.

    Returns a results.SearchResult: distinct candidates (at most
    ``request.limit``) and the providers the response must summarise.
    Class and trait names are assumed valid (``request.validate_names``
    ran first). ``memory`` (memo.KeptMemory) is given for a kept
    structure's snapshot: its tree index and remembered walks serve.
    """
    index = index_mod.TreeIndex.of(snap, memory)
    memo = (None if memory is None
            else memory.walks.memo(request.walk_key))
    candidates = _collect(
        _all_walks(snap, request, options.strategy, index, memo),
        request_mod.stop_after(request, options))
    candidates = _apply_limit(candidates, request.limit, options)
    spread = request_mod.spread_classes(request)
    if spread is not None:
        order = _query_order(spread, class_rank_of(snap, request))
        candidates = [results.SpreadCandidate(providers, spread, order)
                      for providers in candidates]
    return results.SearchResult(candidates, summary_trees(
        snap, request, candidates, index))


def what_each_group_keeps(snap, request, memory=None):
    """For an empty answer's DEBUG line: per group, how many of the
    providers read pass each of its tests on its own -- holding and
    having room for each class, then each trait and aggregate filter --
    so that the test that left nothing stands out. Returns
    [(group label, [(test, providers passing)])]."""
    found = []
    for group in request.groups:
        search = groups.GroupSearch(snap, group,
                                    index_mod.TreeIndex.of(snap, memory))
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


def result_of(snap, request, candidates, options=request_mod.SearchOptions()):
    """The SearchResult for candidates found in several windows of one
    slice, ``snap`` their merged snapshot."""
    candidates = _apply_limit(candidates, request.limit, options)
    return results.SearchResult(candidates, summary_trees(snap, request,
                                                          candidates))


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


def summary_trees(snap, request, candidates, index=None):
    """SearchResult.summary_trees of ``candidates``; ``index`` the
    snapshot's TreeIndex if the search built one."""
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
