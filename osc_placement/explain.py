# SPDX-License-Identifier: Apache-2.0
"""Why a tree is, or is not, an allocation candidate.

The rules of ``GET /allocation_candidates`` applied to the providers
around one tree: the tree and the sharing providers that serve it, read
by ``resources/candidate_explain.py``; nothing here sends a request. A
request is judged as Placement judges it, anchor root by anchor root
(doc/source/user/explain.rst), and every check that can fail is
reported on its own, per group and per provider, so that an operator
sees every reason at once.
"""

import collections
import itertools

from osc_placement import provider_rules
from osc_placement import version as microversion

UNNAMED = ''
PASS, FAIL = 'pass', 'fail'
_GROUP_KEYS = ('resources', 'required', 'member_of', 'in_tree')

# ``moot``: a provider's failed check that decides nothing, because other
# providers meet the group (or the class) anyway.
Finding = collections.namedtuple(
    'Finding', 'provider group check wanted found result moot',
    defaults=(False,))


class Provider:
    """One provider as the public API shows it."""

    def __init__(self, uuid, name, parent, root, inventories=None,
                 usages=None, traits=(), aggregates=()):
        self.uuid = uuid
        self.name = name
        self.parent = parent
        self.root = root
        self.inventories = inventories or {}
        self.usages = usages or {}
        self.traits = frozenset(traits)
        self.aggregates = frozenset(aggregates)

    @property
    def is_sharing(self):
        return provider_rules.SHARING_TRAIT in self.traits

    def used(self, rc):
        return self.usages.get(rc, 0)

    def room(self, rc):
        """Capacity left for ``rc`` as Placement compares one group's
        amount with it: not truncated, unlike ``provider_rules.capacity``."""
        return provider_rules.exact_capacity(self.inventories[rc]) \
            - self.used(rc)

    def fits_one_request(self, rc, amount):
        inv = self.inventories.get(rc)
        return inv is not None and amount <= self.room(rc) \
            and provider_rules.accepts(inv, amount)

    def fits_summed(self, rc, amount):
        # The merged request is checked against the integer capacity.
        inv = self.inventories[rc]
        return self.used(rc) + amount <= provider_rules.capacity(inv) \
            and amount <= inv['max_unit']


class Group:
    """One request group, parsed from its query parameters."""

    def __init__(self, suffix):
        self.suffix = suffix
        self.resources = {}
        self.required = []           # any-of sets, all of which must hold
        self.forbidden = set()
        self.member_of = []          # any-of sets of aggregates
        self.forbidden_aggs = set()
        self.in_tree = None

    @property
    def label(self):
        return self.suffix


class Request:
    """The request groups and request-wide options of one query."""

    def __init__(self, groups, version, group_policy='none',
                 root_required=(), root_forbidden=(), same_subtrees=()):
        self.groups = groups
        self.version = version
        # Asked once per request: it is judged for every combination.
        self.one_provider_per_tree = not microversion.supports(
            version, 'nested_candidates')
        self.group_policy = group_policy
        self.root_required = frozenset(root_required)
        self.root_forbidden = frozenset(root_forbidden)
        self.same_subtrees = [frozenset(names) for names in same_subtrees]

    @property
    def in_tree_uuids(self):
        return {g.in_tree for g in self.groups if g.in_tree}


def parse_query(pairs, version):
    """A Request from ``(key, value)`` query pairs, as the client sends
    them; ``version`` is the microversion as a ``(major, minor)`` tuple.

    The server has already accepted the same query, so only its meaning
    is read here, not its validity; but the meaning follows the version:
    before any-of traits only a group's last ``required`` value counts.
    """
    values = collections.OrderedDict()
    wide = collections.defaultdict(list)
    for key, value in pairs:
        base = next((k for k in _GROUP_KEYS if key.startswith(k)), None)
        if base is None:
            wide[key].append(value)
            continue
        suffix = key[len(base):]
        values.setdefault(suffix, collections.defaultdict(list))[
            base].append(value)
    groups = [_group(suffix, by_key, version)
              for suffix, by_key in values.items()]
    root_required, root_forbidden = set(), set()
    for name in ','.join(wide['root_required']).split(','):
        if name.startswith('!'):
            root_forbidden.add(name.lstrip('!'))
        elif name:
            root_required.add(name.strip())
    subtrees = [[s.strip() for s in value.split(',')]
                for value in wide['same_subtree']]
    policy = (wide['group_policy'] or ['none'])[0]
    return Request(groups, version, policy, root_required, root_forbidden,
                   subtrees)


def _group(suffix, by_key, version):
    group = Group(suffix)
    for value in by_key['resources']:
        for item in value.split(','):
            rc, amount = item.split(':')
            group.resources[rc.strip()] = int(amount)
    required = by_key['required']
    every_value = microversion.supports(version, 'any_of_traits')
    for value in required if every_value else required[-1:]:
        _read_required(group, value)
    for value in by_key['member_of']:
        _read_member_of(group, value)
    if by_key['in_tree']:
        group.in_tree = by_key['in_tree'][-1].strip()
    return group


def _read_required(group, value):
    if value.startswith('in:'):
        group.required.append(frozenset(
            name.strip() for name in value[3:].split(',')))
        return
    for name in (item.strip() for item in value.split(',')):
        if name.startswith('!'):
            # Placement strips every leading '!'.
            group.forbidden.add(name.lstrip('!'))
        else:
            group.required.append(frozenset([name]))


def _read_member_of(group, value):
    forbidden = value.startswith('!')
    value = value[1:] if forbidden else value
    names = frozenset(value[3:].split(',') if value.startswith('in:')
                      else [value])
    if forbidden:
        group.forbidden_aggs |= names
    else:
        group.member_of.append(names)


class Neighbourhood:
    """The providers a tree's candidates can use.

    ``around``: every provider of the tree rooted at ``anchor`` and the
    sharing providers (of any tree) that may serve it, keyed by uuid;
    ``known``: every provider read, for parent chains and roots;
    ``in_tree_roots``: ``{uuid: root uuid or None}`` for the in_tree
    values of the request (None: no such provider).
    """

    def __init__(self, anchor, around, known=None, in_tree_roots=None,
                 servers=None):
        self.anchor = anchor
        self.known = dict(known or around)
        self.tree = [p for p in around.values() if p.root == anchor]
        if servers is None:
            # Which sharing providers serve the tree, from their
            # aggregates; the funnel, which knows, hands them over.
            tree_aggs = frozenset().union(*(p.aggregates
                                            for p in self.tree))
            servers = [p for p in around.values()
                       if p.root != anchor and p.is_sharing
                       and p.aggregates & tree_aggs]
        self.servers = list(servers)
        # Findings list the root first, then each level by name.
        self.providers = sorted(self.tree, key=self._depth_and_name) \
            + sorted(self.servers, key=lambda p: p.uuid)
        self.in_tree_roots = in_tree_roots or {}

    def _depth_and_name(self, provider):
        return (len(self.ancestors_or_self(provider)), provider.name or '',
                provider.uuid)

    @property
    def root(self):
        return self.known[self.anchor]

    def in_tree_root(self, group):
        if group.in_tree is None:
            return None
        return self.in_tree_roots.get(group.in_tree) or 'unknown'

    def ancestors_or_self(self, provider):
        found = {provider.uuid}
        while provider.parent is not None and provider.parent in self.known:
            provider = self.known[provider.parent]
            found.add(provider.uuid)
        return found


# --- The verdict ---------------------------------------------------------

def _has_all(held, any_of_sets):
    return all(any_of & held for any_of in any_of_sets)


def suffixed_choices(hood, group):
    """One-provider choices of a suffixed (or resourceless) group."""
    tree = hood.in_tree_root(group)
    for p in hood.providers:
        if group.resources:
            if tree is not None and p.root != tree:
                continue
            if not all(p.fits_one_request(rc, n)
                       for rc, n in group.resources.items()):
                continue
        elif not (group.required or group.member_of):
            # A resourceless group with only forbidden filters matches
            # nothing, as Placement has it.
            continue
        if not _provider_meets_filters(p, group):
            continue
        yield ({(p.uuid, rc): n for rc, n in group.resources.items()},
               frozenset([p.uuid]))


def _provider_meets_filters(p, group):
    return (_has_all(p.traits, group.required)
            and not p.traits & group.forbidden
            and _has_all(p.aggregates, group.member_of)
            and not p.aggregates & group.forbidden_aggs)


def pair_ok(hood, group, p):
    """May ``p`` supply a class of the unsuffixed group under the anchor?"""
    anchor = hood.root
    tree = hood.in_tree_root(group)
    if tree is not None:
        if p.root != tree or anchor.uuid != tree:
            return False
    elif p.root != anchor.uuid:
        # A provider of another tree: only a sharing provider, itself in
        # the group's aggregates.
        if not (p.is_sharing and _has_all(p.aggregates, group.member_of)):
            return False
    if group.member_of and not (_has_all(p.aggregates, group.member_of)
                                or _has_all(anchor.aggregates,
                                            group.member_of)):
        return False
    return not (p.aggregates & group.forbidden_aggs
                or anchor.aggregates & group.forbidden_aggs)


def class_takers(hood, group, rc):
    """Providers that may supply ``rc`` for the unsuffixed group."""
    amount = group.resources[rc]
    return [p for p in hood.providers
            if p.fits_one_request(rc, amount) and pair_ok(hood, group, p)]


def unsuffixed_choices(hood, group):
    classes = sorted(group.resources)
    takers = [class_takers(hood, group, rc) for rc in classes]
    for chosen in itertools.product(*takers):
        if not _suppliers_meet_traits(chosen, group):
            continue
        yield ({(p.uuid, rc): group.resources[rc]
                for p, rc in zip(chosen, classes)},
               frozenset(p.uuid for p in chosen))


def _suppliers_meet_traits(chosen, group):
    if any(p.traits & group.forbidden for p in chosen):
        return False
    held = frozenset().union(*(p.traits for p in chosen))
    return _has_all(held, group.required)


def group_choices(hood, group):
    if group.suffix:
        return list(suffixed_choices(hood, group))
    return list(unsuffixed_choices(hood, group))


def root_ok(hood, request):
    return root_passes(hood.root, request)


def root_passes(root, request):
    """Does the root provider ``root`` pass ``root_required``?"""
    traits = root.traits
    return (request.root_required <= traits
            and not traits & request.root_forbidden)


def combination_fault(hood, request, combo):
    """Why one choice per group is not a candidate; None if it is one."""
    groups = request.groups
    if request.group_policy == 'isolate':
        singles = [next(iter(chosen))
                   for group, (_, chosen) in zip(groups, combo)
                   if group.suffix]
        if len(singles) != len(set(singles)):
            return ('group_policy', 'isolate')
    for suffixes in request.same_subtrees:
        members = set()
        for group, (_, chosen) in zip(groups, combo):
            if group.suffix in suffixes:
                members |= chosen
        if len(members) > 1 and not any(
                all(top in hood.ancestors_or_self(hood.known[m])
                    for m in members)
                for top in members):
            return ('same_subtree', ','.join(sorted(suffixes)))
    sums = collections.Counter()
    for amounts, _ in combo:
        sums.update(amounts)
    for (uuid, rc), amount in sorted(sums.items()):
        if not hood.known[uuid].fits_summed(rc, amount):
            return ('summed capacity', (uuid, rc, amount))
    if request.one_provider_per_tree:
        roots = [hood.known[uuid].root for uuid, _ in sums]
        if len(set(roots)) != len(set(uuid for uuid, _ in sums)):
            return ('one provider per tree', None)
    return None


def candidate_combinations(hood, request):
    """The choices (one per group) that make candidates anchored here."""
    if not root_ok(hood, request):
        return
    per_group = [group_choices(hood, group) for group in request.groups]
    for combo in itertools.product(*per_group):
        if combination_fault(hood, request, combo) is None:
            yield combo


def takes_from_tree(hood, combo, root):
    """Whether the candidate takes from ``root``'s tree: an anchor's tree is
    not in the answer when a sharing provider elsewhere gives everything."""
    return any(hood.known[uuid].root == root
               for amounts, _ in combo for uuid, _rc in amounts)


def is_candidate(hoods, request, root):
    """True when Placement returns an allocation request that takes from
    the tree ``root``; ``hoods``: the tree's own neighbourhood and those of
    the trees its sharing providers serve."""
    return any(takes_from_tree(hood, combo, root)
               for hood in hoods
               for combo in candidate_combinations(hood, request))


# --- The reasons ---------------------------------------------------------

def explain_tree(hoods, request, helpers=()):
    """``(verdict, findings)`` for the tree of ``hoods[0]``.

    ``hoods[0]`` is the tree's own neighbourhood; the others are those of
    trees its sharing providers serve, which matter only for them.
    ``helpers``: sharing providers with room for a requested class that
    serve no tree through an aggregate of this one.
    """
    hood = hoods[0]
    root = hood.anchor
    findings = []
    root_findings = list(_root_required_findings(hood, request))
    findings += root_findings
    per_group = []
    for group in request.groups:
        choices = group_choices(hood, group)
        per_group.append(choices)
        findings += _marked_moot(hood, group, choices,
                                 provider_findings(hood, group))
        findings += _group_findings(hood, group, choices)
    anchored_here, takes_here = False, False
    for combo in candidate_combinations(hood, request):
        anchored_here = True
        if takes_from_tree(hood, combo, root):
            takes_here = True
            break
    verdict = takes_here or is_candidate(hoods[1:], request, root)
    if anchored_here and not takes_here:
        findings.append(Finding(
            root, None, 'takes from the tree', 'a provider of the tree',
            'every candidate takes only from sharing providers of other '
            'trees', PASS if verdict else FAIL))
    if not verdict:
        if all(per_group) and all(f.result == PASS for f in root_findings):
            findings += combination_findings(hood, request, per_group)
        findings += _helper_findings(hood, request, helpers)
        if not any(f.result == FAIL and not f.moot for f in findings):
            findings.append(Finding(root, None, 'combination', '',
                                    'no combination of the groups fits',
                                    FAIL))
    return verdict, findings


def _marked_moot(hood, group, choices, findings):
    """A group some provider meets, or a class of the unsuffixed group
    some provider takes, is not why the tree fails: the other providers'
    failed checks for it are moot. So is a sharing provider of another
    tree lacking a class: it is there for the classes it has."""
    taken = set()
    if not group.suffix:
        taken = {'%s=%d' % (rc, n) for rc, n in group.resources.items()
                 if class_takers(hood, group, rc)}
    servers = {p.uuid for p in hood.servers}
    for finding in findings:
        moot = (bool(choices) or finding.wanted in taken
                or (finding.check == 'class' and finding.provider in servers))
        yield finding._replace(moot=moot) if moot else finding


def _root_required_findings(hood, request):
    root = hood.root
    for name in sorted(request.root_required):
        yield Finding(root.uuid, None, 'root_required', name,
                      'present' if name in root.traits else 'missing',
                      PASS if name in root.traits else FAIL)
    for name in sorted(request.root_forbidden):
        yield Finding(root.uuid, None, 'root_required', '!' + name,
                      'present' if name in root.traits else 'absent',
                      FAIL if name in root.traits else PASS)


def provider_findings(hood, group):
    """Every check of ``group`` on every provider around the tree."""
    for p in hood.providers:
        for check, wanted, found, ok in _provider_checks(hood, group, p):
            yield Finding(p.uuid, group.label, check, wanted, found,
                          PASS if ok else FAIL)


def _provider_checks(hood, group, p):
    yield from _resource_checks(group, p)
    if group.suffix:
        yield from _trait_checks(group, p)
    else:
        yield from _forbidden_trait_checks(group, p)
    yield from _aggregate_checks(hood, group, p)
    yield from _tree_checks(hood, group, p)


def _resource_checks(group, p):
    for rc, amount in group.resources.items():
        wanted = '%s=%d' % (rc, amount)
        inv = p.inventories.get(rc)
        if inv is None:
            yield 'class', wanted, 'no %s inventory' % rc, False
            continue
        yield ('capacity', wanted, _capacity_text(p, rc),
               amount <= p.room(rc))
        for name, limit, passed in provider_rules.unit_checks(inv, amount):
            yield name, wanted, '%s %d' % (name, limit), passed


def _capacity_text(p, rc):
    inv = p.inventories[rc]
    free = p.room(rc)
    return ('free %s (total %d, reserved %d, allocation_ratio %s, used %d)'
            % (_number(free), inv['total'], inv['reserved'],
               inv['allocation_ratio'], p.used(rc)))


def _number(value):
    return '%d' % value if float(value).is_integer() else '%.2f' % value


def _trait_checks(group, p):
    for any_of in group.required:
        present = any_of & p.traits
        yield ('required trait', _any_of_text(any_of),
               ','.join(sorted(present)) or 'missing', bool(present))
    yield from _forbidden_trait_checks(group, p)


def _forbidden_trait_checks(group, p):
    for name in sorted(group.forbidden):
        yield ('forbidden trait', '!' + name,
               'present' if name in p.traits else 'absent',
               name not in p.traits)


def _any_of_text(names):
    names = sorted(names)
    return names[0] if len(names) == 1 else 'in:' + ','.join(names)


def _aggregate_checks(hood, group, p):
    # The unsuffixed group's aggregates may be met by the anchor root for
    # every provider of its tree.
    # Either the provider or the root must be in all of them.
    via_root = not group.suffix and p.root == hood.anchor
    root_has_all = via_root and _has_all(hood.root.aggregates,
                                         group.member_of)
    for any_of in group.member_of:
        yield ('member_of', _any_of_text(any_of),
               _aggregates_text(p, via_root, hood),
               root_has_all or bool(any_of & p.aggregates))
    if group.forbidden_aggs:
        forbidden = group.forbidden_aggs & (
            p.aggregates | (hood.root.aggregates if not group.suffix
                            else set()))
        yield ('member_of', '!' + _any_of_text(group.forbidden_aggs),
               _aggregates_text(p, not group.suffix, hood),
               not forbidden)


def _aggregates_text(p, with_root, hood):
    names = sorted(p.aggregates)
    text = ','.join(names) if names else 'no aggregate'
    if with_root and p.uuid != hood.anchor:
        root = sorted(hood.root.aggregates)
        text += '; root: %s' % (','.join(root) if root else 'no aggregate')
    return text


def _tree_checks(hood, group, p):
    tree = hood.in_tree_root(group)
    if tree is not None and (group.resources or not group.suffix):
        in_it = p.root == tree and (group.suffix or hood.anchor == tree)
        found = 'no such provider' if tree == 'unknown' \
            else 'in the tree of %s' % p.root
        yield 'in_tree', group.in_tree, found, in_it
    if p.root != hood.anchor and not group.suffix and tree is None:
        # A sharing provider of another tree serves the unsuffixed group
        # only if it is itself in the group's aggregates.
        ok = _has_all(p.aggregates, group.member_of)
        yield ('sharing', 'serves %s' % hood.anchor,
               'through aggregates %s' % ','.join(
                   sorted(p.aggregates & _tree_aggregates(hood))), ok)


def _tree_aggregates(hood):
    return frozenset().union(*(p.aggregates for p in hood.tree))


def _group_findings(hood, group, choices):
    if group.suffix:
        wanted = _group_text(group)
        found = ('%d provider(s) can' % len(choices) if choices
                 else 'no single provider meets every check')
        yield Finding(None, group.label, 'group', wanted, found,
                      PASS if choices else FAIL)
        return
    yield from _unsuffixed_group_findings(hood, group, choices)


def _group_text(group):
    parts = ['%s=%d' % item for item in group.resources.items()]
    parts += [_any_of_text(s) for s in group.required]
    parts += ['!' + t for t in sorted(group.forbidden)]
    parts += ['member_of ' + _any_of_text(s) for s in group.member_of]
    return ','.join(parts) or '(no resources)'


def _unsuffixed_group_findings(hood, group, choices):
    for rc in group.resources:
        takers = class_takers(hood, group, rc)
        yield Finding(None, group.label, 'class takers',
                      '%s=%d' % (rc, group.resources[rc]),
                      ','.join(p.name or p.uuid for p in takers) or 'none',
                      PASS if takers else FAIL)
    classes = sorted(group.resources)
    takers = [class_takers(hood, group, rc) for rc in classes]
    if not all(takers) or choices:
        return
    # Every class has a taker, yet no set of takers meets the traits: the
    # required traits are judged on the providers that supply resources.
    suppliers = {p.uuid: p for ps in takers for p in ps}
    for any_of in group.required:
        holders = [p for p in suppliers.values() if any_of & p.traits]
        yield Finding(None, group.label, 'required trait',
                      _any_of_text(any_of),
                      'on supplying providers: %s' % (
                          ','.join(p.name or p.uuid for p in holders)
                          or 'none'),
                      PASS if holders else FAIL)
    yield Finding(None, group.label, 'group', _group_text(group),
                  'no choice of one provider per class meets the traits',
                  FAIL)


def combination_findings(hood, request, per_group):
    """Each kind of fault that kept every combination out, once."""
    faults = collections.OrderedDict()
    for combo in itertools.product(*per_group):
        fault = combination_fault(hood, request, combo)
        if fault is not None:
            faults.setdefault(fault[0], fault[1])
    for check, detail in faults.items():
        yield _fault_finding(hood, check, detail)


def _fault_finding(hood, check, detail):
    if check == 'summed capacity':
        uuid, rc, amount = detail
        p = hood.known[uuid]
        return Finding(uuid, None, check, '%s=%d' % (rc, amount),
                       _capacity_text(p, rc) + ', max_unit %d'
                       % p.inventories[rc]['max_unit'], FAIL)
    if check == 'group_policy':
        return Finding(None, None, check, 'isolate',
                       'the groups can only share providers', FAIL)
    if check == 'same_subtree':
        return Finding(None, detail, check, detail,
                       'no choice puts the groups in one subtree', FAIL)
    return Finding(None, None, check,
                   'before %s' % microversion.since('nested_candidates'),
                   'needs several providers of one tree', FAIL)


def missing_classes(hood, request):
    """``{class: amount}`` that no provider around the tree has room for,
    in a group that nothing around the tree meets."""
    missing = {}
    for group in request.groups:
        if group_choices(hood, group):
            continue
        for rc, amount in group.resources.items():
            if not any(p.fits_one_request(rc, amount)
                       for p in hood.providers):
                missing[rc] = max(amount, missing.get(rc, 0))
    return missing


def _helper_findings(hood, request, helpers):
    """Sharing providers with room for a class the tree cannot supply,
    that do not serve it: no aggregate in common with the tree.

    ``helpers``: ``(rc, amount, provider, how many)`` for some of the
    sharing providers that have room for ``amount`` of ``rc`` (as the
    server's provider list says) and do not serve the tree; ``how many``
    of them there are in all.
    """
    missing = missing_classes(hood, request)
    serving = {p.uuid for p in hood.providers}
    for rc, amount, helper, count in helpers:
        if rc in missing and helper.uuid not in serving:
            yield Finding(
                helper.uuid, None, 'sharing',
                'an aggregate of the tree for %s=%d' % (rc, amount),
                'aggregates: %s%s' % (
                    ','.join(sorted(helper.aggregates)) or 'none',
                    '' if count == 1 else ' (one of %d)' % count), FAIL)


# --- The funnel ----------------------------------------------------------
#
# The same rules, criterion by criterion: a tree is still in after a
# criterion when every group reached so far has a choice under it (its
# anchor) meeting that criterion and every one before it. Each step only
# adds a constraint, so the trees still in never grow.

class Listed(Provider):
    """A provider known from filtered provider lists only: the request's
    amounts it has room for (``fits``: ``(class, amount)`` pairs), and the
    request's traits and aggregates it has."""

    def __init__(self, uuid, name, parent, root, fits=(), traits=(),
                 aggregates=()):
        super().__init__(uuid, name, parent, root, traits=traits,
                         aggregates=aggregates)
        self.fits = frozenset(fits)

    def fits_one_request(self, rc, amount):
        return (rc, amount) in self.fits


def funnel_steps(group):
    """``[(criterion, the group cut to it and every criterion before)]``.

    Positive criteria come before negative ones: a resourceless group
    matches nothing on forbidden filters alone, so a group cut before its
    first positive filter would drop trees that the whole group keeps.
    """
    cut = Group(group.suffix)
    steps = []

    def step(criterion):
        partial = Group(cut.suffix)
        partial.resources = dict(cut.resources)
        partial.required = list(cut.required)
        partial.forbidden = set(cut.forbidden)
        partial.member_of = list(cut.member_of)
        partial.forbidden_aggs = set(cut.forbidden_aggs)
        partial.in_tree = cut.in_tree
        steps.append((criterion, partial))

    for rc, amount in group.resources.items():
        cut.resources[rc] = amount
        step(('room', rc, amount))
    for any_of in group.required:
        cut.required.append(any_of)
        step(('required', any_of))
    for any_of in group.member_of:
        cut.member_of.append(any_of)
        step(('member_of', any_of))
    for name in sorted(group.forbidden):
        cut.forbidden.add(name)
        step(('forbidden', name))
    if group.forbidden_aggs:
        cut.forbidden_aggs = set(group.forbidden_aggs)
        step(('not member_of', frozenset(group.forbidden_aggs)))
    if group.in_tree:
        cut.in_tree = group.in_tree
        step(('in_tree', group.in_tree))
    return steps


def steps_met(hood, steps):
    """How many of ``steps`` (``funnel_steps``), from the first, some
    choice under the anchor meets."""
    met = 0
    for _, partial in steps:
        if not group_choices(hood, partial):
            break
        met += 1
    return met
