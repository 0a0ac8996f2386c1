# SPDX-License-Identifier: Apache-2.0
"""What a request needs, worked out from the parsed request alone: the
slice of the database to read (SliceSpec) and the search options. The
memos' keys are the parsed request's own (request_groups.CandidateRequest).
"""

import dataclasses
import random

from osc_placement.server.candidates import snapshot

DEPTH_FIRST = 'depth-first'
BREADTH_FIRST = 'breadth-first'


@dataclasses.dataclass(frozen=True)
class SliceSpec:
    """What a request can possibly use: the slice the SQL reads, in a
    few set-based statements, none per provider. Seeds: per class of
    ``min_amounts``, providers with room for that amount (the search
    checks the rest, so a superset will do); with
    ``positive_filter_providers``, those with a trait or aggregate named.
    Then the sharing seeds' anchor roots (upstream's
    anchors_for_sharing_providers) and the ``in_tree`` roots, and every
    provider of those trees, whole: summaries show whole trees.
    ``tree_aggregates`` and ``tree_traits`` may narrow the trees, and a
    tree without room for some class, itself or through a sharing
    provider, may be left out. test_candidate_properties.py checks that
    such a slice answers as the whole cloud does."""

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
    traits = set(request.trait_names()) | {snapshot.SHARING_TRAIT}
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
        tree_aggregates=tree_aggregates(request),
        tree_traits=tree_traits(request))


def tree_aggregates(request):
    """The smallest any-of member_of set, or None: every candidate's tree,
    or a sharing provider serving it, is in one, so SQL can choose trees."""
    sets = [any_of for group in request.groups for any_of in group.member_of]
    return min(sets, key=len) if sets else None


def tree_traits(request):
    """The smallest any-of trait set of a group with resources, or None: its
    providers are the anchor tree's or share with it, so SQL can choose
    trees (what a resourceless group may match is decided elsewhere)."""
    sets = [any_of for group in request.groups if group.resources
            for any_of in group.required_traits]
    return min(sets, key=len) if sets else None


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


def spread_classes(request):
    """((class, amount), ...) by class for one unsuffixed group with
    resources and nothing to check between its choices, else None: its
    candidates are every product of one provider per class, which the
    search enumerates with itertools.product, the scheduler's request."""
    if len(request.groups) != 1 or request.same_subtrees:
        return None
    group = request.groups[0]
    if (group.use_same_provider or not group.resources
            or not request.nested_aware):
        return None
    return tuple(sorted(group.resources.items()))


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
