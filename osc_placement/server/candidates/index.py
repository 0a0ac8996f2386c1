# SPDX-License-Identifier: Apache-2.0
"""Which providers can serve which anchor root: the tree index a search
walks, kept for the snapshots of one kept structure (memo.KeptMemory).
"""

import collections

from osc_placement.server.candidates import snapshot


class TreeIndex:
    """Which providers can serve which anchor root, built once per search.

    Options for an anchor come from its own tree and from the sharing
    providers serving it, so the walk can build them anchor by anchor and
    never look at trees it does not reach before ``limit``.
    """

    def __init__(self, snap):
        self.members = collections.defaultdict(list)
        # Provider.root_uuid read directly, as in search.summary_trees: this
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
        # request shape -> its viable anchors (viable.viable_anchors)
        self.viable = {}
        self._aggregate_members = None

    def anchors_touching(self, snap, aggregates):
        """The anchors (in order) whose tree has a provider in one of
        ``aggregates`` or is served by a sharing provider in one; all of
        them if None (SliceSpec.tree_aggregates' narrowing)."""
        if aggregates is None:
            return self.anchors
        if self._aggregate_members is None:
            self._aggregate_members = snapshot.members_of_aggregates(snap)
        found = set()
        for aggregate in aggregates:
            for uuid in self._aggregate_members.get(aggregate, ()):
                found.add(snap.root(uuid))
                if snap.is_sharing(uuid):
                    found.update(snap.anchors.get(uuid, ()))
        return sorted(found.intersection(self.anchors))

    @classmethod
    def of(cls, snap, memory=None):
        """The snapshot's index; kept in ``memory`` (memo.KeptMemory) for
        the snapshots of a kept structure, which share their providers.
        Two threads may both build it: either is the same index."""
        if memory is None:
            return cls(snap)
        if memory.index is None:
            memory.index = cls(snap)
        return memory.index

    def local_providers(self, anchor):
        return self.members.get(anchor, []) + self.served_by.get(anchor, [])
