# SPDX-License-Identifier: Apache-2.0
"""The anchors under which a request could find a candidate were nothing
used: worked out once per request shape and kept with the tree index, so
that the walks skip trees that cannot hold a candidate.
"""

import itertools
import threading

from osc_placement.server.candidates import groups
from osc_placement.server.candidates import request as request_mod

# The most request shapes whose viable anchors a structure keeps: a
# scheduler sends a few (flavors differ by amounts, which the shapes
# leave out); more are worked out again.
_VIABLE_SHAPES = 32


def viable_anchors(snap, request, index):
    """The pairs (anchor, per group its providers that may serve it, or
    None for all), in anchor order, of the anchors under which every group
    of ``request`` finds a provider with the classes, traits and
    aggregates it asks for, whatever the usage: the walks visit only
    these, so a tree that cannot hold a candidate costs nothing. Kept per
    request shape in ``index``, and worked out only as far as the walks
    go (ViableAnchors): a limited request after a structure change does
    not wait for anchors it never reaches."""
    key = request.shape_key
    viable = index.viable.get(key)
    if viable is None:
        if len(index.viable) >= _VIABLE_SHAPES:
            index.viable.clear()
        viable = index.viable.setdefault(key, ViableAnchors(
            snap, request, index))
    return iter(viable)


class ViableAnchors:
    """viable_anchors' answer for one request shape, worked out anchor by
    anchor as walks ask for more, and kept. Threads share it: one at a
    time extends it."""

    # Anchors tested per turn of the lock.
    BATCH = 256

    def __init__(self, snap, request, index):
        self._snap = snap
        self._searches = [groups.StructuralSearch(snap, group, index)
                          for group in request.groups]
        self._isolate = request.group_policy == 'isolate'
        self._pending = iter(index.anchors_touching(
            snap, request_mod.tree_aggregates(request)))
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
    # (enough_providers_to_isolate).
    if isolate and len(isolated) < suffixed:
        return None
    return tuple(serving)


def _could_meet_traits(snap, group, providers):
    """Whether ``providers``, those that may supply the unsuffixed group's
    classes, together have its required traits, as a candidate's must."""
    meets = groups.collective_traits_test(snap, group.required_traits)
    return meets is None or meets(providers)
