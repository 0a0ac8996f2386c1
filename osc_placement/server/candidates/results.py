# SPDX-License-Identifier: Apache-2.0
"""What a search finds: candidates (allocation requests) of two kinds,
and the views the response body and the tests read of them.
"""

import collections
import dataclasses
import itertools
import operator


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

    allocations: ((uuid, ((class, amount), ...)), ...), providers sorted,
                 classes in upstream's order (class_rank_of)
    mappings:    ((suffix, (uuid, ...)), ...), suffixes in the query's
                 order, providers sorted
    hashed:      the hash of the two, worked out once (Candidate.of):
                 thousands are hashed per request, most remembered from
                 earlier ones, and the nested tuples lie scattered."""

    __slots__ = ()

    @classmethod
    def of(cls, allocations, mappings):
        return cls(allocations, mappings, hash((allocations, mappings)))

    def __hash__(self):
        return self.hashed


class SpreadCandidate(_CandidateViews, collections.namedtuple(
        'SpreadCandidate', 'providers classes order')):
    """A candidate of a request that is the unsuffixed group alone (see
    ``request.spread_classes``): the provider of each class, nothing else.

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
        share one resources dict, each a dict less to build."""
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
