# SPDX-License-Identifier: Apache-2.0
"""A deliberately naive allocation-candidate oracle.

It shares nothing with the candidates package but the parsed request
types. It takes the cloud as plain dicts, tries every anchor root, every
provider for every suffixed group and every provider for every class of
the unsuffixed group, and applies the rules of the spec (4.3.2)
literally. Slow on purpose: only for small clouds.

Cloud layout (plain data, what the hypothesis strategies generate):
    parent:    {uuid: parent uuid or None}
    inventory: {uuid: {class: (total, reserved, min_unit, max_unit,
                               step_size, allocation_ratio)}}
    used:      {uuid: {class: amount}}
    traits:    {uuid: set of names}
    aggs:      {uuid: set of aggregate uuids}
"""

import itertools

SHARES = 'MISC_SHARES_VIA_AGGREGATE'


class Cloud:

    def __init__(self, parent, inventory, used, traits, aggs):
        self.parent = parent
        self.inventory = inventory
        self.used = used
        self.traits = traits
        self.aggs = aggs

    def __repr__(self):
        # Hypothesis prints it for a failing example: enough to rebuild it.
        return ('Cloud(parent=%r, inventory=%r, used=%r, traits=%r, '
                'aggs=%r)' % (self.parent, self.inventory, self.used,
                              self.traits, self.aggs))

    @property
    def providers(self):
        return sorted(self.parent)

    def root(self, uuid):
        while self.parent[uuid] is not None:
            uuid = self.parent[uuid]
        return uuid

    def ancestors_or_self(self, uuid):
        found = {uuid}
        while self.parent[uuid] is not None:
            uuid = self.parent[uuid]
            found.add(uuid)
        return found

    def used_of(self, uuid, rc):
        return self.used.get(uuid, {}).get(rc, 0)

    def fits_one_request(self, uuid, rc, amount):
        inv = self.inventory.get(uuid, {}).get(rc)
        if inv is None:
            return False
        total, reserved, min_unit, max_unit, step, ratio = inv
        return (self.used_of(uuid, rc) + amount <= (total - reserved) * ratio
                and min_unit <= amount <= max_unit and amount % step == 0)

    def fits_summed(self, uuid, rc, amount):
        total, reserved, _, max_unit, _, ratio = self.inventory[uuid][rc]
        return (self.used_of(uuid, rc) + amount
                <= int((total - reserved) * ratio) and amount <= max_unit)

    def is_sharing(self, uuid):
        return SHARES in self.traits.get(uuid, set())

    def sharing_anchors(self, uuid):
        mine = self.aggs.get(uuid, set())
        return {self.root(other) for other in self.providers
                if mine & self.aggs.get(other, set())}

    def has_traits(self, traits, any_of_sets):
        return all(any_of & traits for any_of in any_of_sets)

    def in_aggs(self, uuid, any_of_sets):
        return all(any_of & self.aggs.get(uuid, set())
                   for any_of in any_of_sets)

    def in_any_agg(self, uuid, aggs):
        return bool(self.aggs.get(uuid, set()) & aggs)


def _in_tree_root(cloud, group):
    if group.in_tree is None:
        return None
    if group.in_tree not in cloud.parent:
        return 'unknown'
    return cloud.root(group.in_tree)


def _suffixed_choices(cloud, group, anchor):
    tree = _in_tree_root(cloud, group)
    for p in cloud.providers:
        traits = cloud.traits.get(p, set())
        if group.resources:
            if tree is not None and cloud.root(p) != tree:
                continue
            if not all(cloud.fits_one_request(p, rc, n)
                       for rc, n in group.resources.items()):
                continue
        elif not (group.required_traits or group.member_of):
            continue
        if not cloud.has_traits(traits, group.required_traits):
            continue
        if traits & group.forbidden_traits:
            continue
        if not cloud.in_aggs(p, group.member_of):
            continue
        if cloud.in_any_agg(p, group.forbidden_aggs):
            continue
        anchors = {cloud.root(p)}
        if cloud.is_sharing(p):
            anchors |= cloud.sharing_anchors(p)
        if anchor not in anchors:
            continue
        yield ({(p, rc): n for rc, n in group.resources.items()}, {p})


def _pair_ok(cloud, group, p, anchor):
    tree = _in_tree_root(cloud, group)
    if tree is not None:
        if cloud.root(p) != tree or anchor != tree:
            return False
    elif cloud.root(p) != anchor:
        shared = (cloud.is_sharing(p) and cloud.in_aggs(p, group.member_of)
                  and anchor in cloud.sharing_anchors(p))
        if not shared:
            return False
    if group.member_of and not (cloud.in_aggs(p, group.member_of)
                                or cloud.in_aggs(anchor, group.member_of)):
        return False
    return not (cloud.in_any_agg(p, group.forbidden_aggs)
                or cloud.in_any_agg(anchor, group.forbidden_aggs))


def _unsuffixed_choices(cloud, group, anchor):
    classes = sorted(group.resources)
    for chosen in itertools.product(cloud.providers, repeat=len(classes)):
        ok = all(cloud.fits_one_request(p, rc, group.resources[rc])
                 and _pair_ok(cloud, group, p, anchor)
                 for p, rc in zip(chosen, classes))
        if not ok:
            continue
        traits = set()
        for p in chosen:
            traits |= cloud.traits.get(p, set())
        if any(cloud.traits.get(p, set()) & group.forbidden_traits
               for p in chosen):
            continue
        if not cloud.has_traits(traits, group.required_traits):
            continue
        yield ({(p, rc): group.resources[rc]
                for p, rc in zip(chosen, classes)}, set(chosen))


def _root_ok(cloud, request, anchor):
    traits = cloud.traits.get(anchor, set())
    return (request.root_required <= traits
            and not traits & request.root_forbidden)


def _combine(cloud, request, combo):
    """The candidate key of one choice per group, or None if invalid."""
    groups = request.groups
    if request.group_policy == 'isolate':
        singles = [next(iter(providers))
                   for group, (_, providers) in zip(groups, combo)
                   if group.suffix]
        if len(singles) != len(set(singles)):
            return None
    for suffixes in request.same_subtrees:
        members = set()
        for group, (_, providers) in zip(groups, combo):
            if group.suffix in suffixes:
                members |= providers
        if len(members) > 1 and not any(
                all(top in cloud.ancestors_or_self(m) for m in members)
                for top in members):
            return None
    sums = {}
    for amounts, _ in combo:
        for key, n in amounts.items():
            sums[key] = sums.get(key, 0) + n
    if not all(cloud.fits_summed(p, rc, n) for (p, rc), n in sums.items()):
        return None
    resource_providers = {p for p, _ in sums}
    if request.version < (1, 29):
        roots = [cloud.root(p) for p in resource_providers]
        if len(roots) != len(set(roots)):
            return None
    mappings = {}
    for group, (_, providers) in zip(groups, combo):
        mappings.setdefault(group.suffix, set()).update(providers)
    return (frozenset((p, rc, n) for (p, rc), n in sums.items()),
            frozenset((s, frozenset(ps)) for s, ps in mappings.items()))


def oracle(cloud, request):
    """(set of candidate keys, set of summarised provider uuids)."""
    results = set().union(*oracle_by_anchor(cloud, request).values())
    return results, oracle_summaries(cloud, request, results)


def oracle_by_anchor(cloud, request):
    """{anchor root: set of the candidate keys formed under it}."""
    found = {}
    roots = [p for p in cloud.providers if cloud.parent[p] is None]
    for anchor in roots:
        if not _root_ok(cloud, request, anchor):
            continue
        per_group = []
        for group in request.groups:
            if group.suffix:
                choices = list(_suffixed_choices(cloud, group, anchor))
            else:
                choices = list(_unsuffixed_choices(cloud, group, anchor))
            per_group.append(choices)
        results = set()
        for combo in itertools.product(*per_group):
            key = _combine(cloud, request, combo)
            if key is not None:
                results.add(key)
        found[anchor] = results
    return found


def oracle_summaries(cloud, request, keys):
    used = {p for allocations, _ in keys for p, _, _ in allocations}
    if request.version < (1, 29):
        return used
    trees = {cloud.root(p) for p in used}
    return {p for p in cloud.providers if cloud.root(p) in trees}
