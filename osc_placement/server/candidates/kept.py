# SPDX-License-Identifier: Apache-2.0
"""The structure a worker keeps between reads of every tree: what such a
read found besides usage, under one structure stamp, brought up to date
for each request with the usage totals read for it.
"""

import dataclasses
import itertools
import types

from osc_placement.server.candidates import memo
from osc_placement.server.candidates import snapshot as snapshot_mod
from osc_placement.server.candidates import statements as sql

_NO_INVENTORIES = types.MappingProxyType({})


class KeptStructure:
    """A read.WholeRead kept: the snapshot's providers, traits,
    aggregates and anchors, its inventories, from which a later read's
    are built with that read's usage, and the memory of the answers
    given from it (memo.KeptMemory).

    ``number`` tells it from the other structures its CandidateEngine
    kept. Its snapshot parts are shared by the snapshots of every
    request answered from it, on every thread: nothing changes a
    Snapshot once built. Each request starts from the inventories of
    the last one answered and rebuilds only those whose usage changed
    since: from claim to claim, a few."""

    def __init__(self, number, whole_read, fragments):
        self.number = number
        self.stamp = whole_read.stamp
        # Usage stamps: a new one for each inventories rebuilt.
        self._usage_stamps = itertools.count(1)
        self.snap = dataclasses.replace(whole_read.snap, usage_stamp=0)
        self.memory = memo.KeptMemory(fragments)
        # A usage key's provider and class (statements.USAGE_READ): two
        # small dicts rather than one entry per inventory.
        self.uuid_of = whole_read.uuid_of
        self.class_names = whole_read.class_names
        # The horizon, the inventories and their usage stamp of the last
        # request, as one tuple so that a thread reads all of the same
        # request. Two threads may replace it in either order: either
        # state is one the database was in, and the next read from its
        # horizon brings it up to date.
        self.last = (whole_read.horizon, self.snap.inventories, 0)

    def snapshot(self, last, horizon, usage_rows):
        """The kept snapshot with the inventories of ``last`` (a value of
        ``last``) brought up to date with ``usage_rows``, (usage key,
        used) pairs: every total changed since, or every total."""
        _, inventories, usage_stamp = last
        rebuilt = self._rebuilt(inventories, usage_rows)
        if rebuilt is not None:
            inventories, usage_stamp = rebuilt, next(self._usage_stamps)
        self.last = (horizon, inventories, usage_stamp)
        return dataclasses.replace(self.snap, inventories=inventories,
                                   usage_stamp=usage_stamp)

    def _rebuilt(self, inventories, usage_rows):
        """``inventories`` with those whose usage differs from
        ``usage_rows`` rebuilt (snapshot.with_replaced), or None if none
        differs; neither a provider's dict nor the mapping of them is
        changed, since other requests' snapshots hold them."""
        changed = {}
        for key, used in usage_rows:
            uuid = self.uuid_of.get(key // sql.KEY_SHIFT)
            name = self.class_names.get(key % sql.KEY_SHIFT)
            old = inventories.get(uuid, _NO_INVENTORIES).get(name)
            if old is None:
                # Usage of an inventory created after the structure was
                # read (the next read of it will see both).
                continue
            if old.used == used:
                continue
            if uuid not in changed:
                changed[uuid] = dict(inventories[uuid])
            changed[uuid][name] = snapshot_mod.Inventory(
                old.total, old.reserved, old.min_unit, old.max_unit,
                old.step_size, old.allocation_ratio, used)
        if not changed:
            return None
        return snapshot_mod.with_replaced(inventories, changed)


def went_back(since, horizon):
    """A horizon below the worker's last: only another cluster's goes back."""
    return since is not None and horizon is not None and horizon < since
