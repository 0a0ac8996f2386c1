# SPDX-License-Identifier: Apache-2.0
"""The options of one request group under one anchor: which providers
(and amounts) may serve it, tested against the snapshot.
"""

import collections


class Option(collections.namedtuple('Option', 'amounts providers')):
    """One way to satisfy one group under one anchor.

    amounts:   ((uuid, class, amount), ...)
    providers: frozenset of the providers mapped to the group's suffix
    """

    __slots__ = ()


class Level(collections.namedtuple('Level', 'group options')):
    """One step of the walk: pick one of ``options`` for ``group`` (a
    request_groups.RequestGroup)."""

    __slots__ = ()


class GroupSearch:
    """The options of one request group, anchor by anchor: a suffixed
    group's (one provider each), or the unsuffixed group's (one option
    per class and provider)."""

    # SpreadSearch's options are the providers' uuids.
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
        (viable.viable_anchors), None for all."""
        if not self._keys:
            return []
        options = self._options_at(anchor, providers)
        if options is None or not all(options):
            return None
        return [Level(self.group, level) for level in options]

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
                options.append(Option(((uuid, rc, amount),), providers))
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
        return Option(amounts=tuple((uuid, rc, n) for rc, n
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


class SpreadSearch(GroupSearch):
    """The unsuffixed group of a spread request (see
    request.spread_classes), whose walk (search.spread_walks) needs only
    which provider can take which class: its options are the providers'
    uuids."""

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


class StructuralSearch(GroupSearch):
    """What a group may use were nothing used: the providers' classes,
    traits and aggregates (see viable.viable_anchors). Amounts are left
    out too, so that one answer serves every flavor of a shape. Options
    are plain flags, per level: whether the provider offers its
    class."""

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


def _in_tree_root(snap, group):
    """The root in_tree names; None without in_tree; '' if unknown."""
    if not group.in_tree:
        return None
    if group.in_tree not in snap.providers:
        return ''
    return snap.root(group.in_tree)


def collective_traits_test(snap, required):
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
