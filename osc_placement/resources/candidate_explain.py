# SPDX-License-Identifier: Apache-2.0
"""``openstack allocation candidate explain``.

Takes the request options of ``allocation candidate list`` and says why
trees are, or are not, candidates (``--resource-provider``), or, without
it, how far each criterion of the request narrows the cloud (a funnel).

Everything is read through the public API, so it works against any
Placement server; the rules are applied by ``osc_placement.explain``.
"""

import logging

from cliff import lister

from osc_lib import exceptions

from osc_placement import explain
from osc_placement import provider_rules
from osc_placement.resources import allocation_candidate as candidates
from osc_placement.resources import common
from osc_placement.resources import flavor as flavor_option
from osc_placement.resources import providers
from osc_placement import version

LOG = logging.getLogger(__name__)

PROVIDERS_URL = providers.PROVIDERS_URL
# Provider lists filtered by required traits: how explain finds sharing
# providers. Its reads go at least at the version of this feature even when
# the request is judged at an older one.
READ_FEATURE = 'provider_required'
# Sharing providers named per missing class when a tree fails: enough to
# show where the room is, few enough to read on a cloud with hundreds.
HELPERS = 3
EXPLAIN_COLUMNS = ('tree', 'provider', 'group', 'check', 'wanted', 'found',
                   'result')
FUNNEL_COLUMNS = ('group', 'criterion', 'providers', 'trees', 'note')
UNNAMED_LABEL = '(unnamed)'
# The exit status of explain --resource-provider when none of the trees
# named is a candidate (1 is an error, 2 a usage error).
NOT_A_CANDIDATE = 3


class ExplainAllocationCandidate(common.PlacementCommand, lister.Lister):
    """Explain why providers are, or are not, allocation candidates.

    Takes the request options of ``allocation candidate list``.

    With ``--resource-provider`` (a name or UUID, repeatable), each of
    those providers' trees gets a row whose ``check`` is ``candidate`` and
    whose ``result`` says whether ``GET /allocation_candidates`` for the
    same request returns an allocation request taking from that tree.
    Every failed check follows, per request group and per provider: a
    class the provider lacks, capacity (total, reserved, allocation_ratio,
    used and what is free against the amount asked), ``min_unit``,
    ``max_unit``, ``step_size``, required and forbidden traits (for
    example ``!COMPUTE_STATUS_DISABLED``), aggregates, ``--in-tree``,
    ``--root-required``, ``--same-subtree``, ``--group-policy isolate``,
    and sharing providers that could have helped but share no aggregate
    with the tree. ``--all-checks`` lists the checks that passed too.

    Without ``--resource-provider``: a funnel over the whole cloud, per
    request group, each criterion's count of providers alone and of the
    trees that can still anchor a candidate meeting it and every criterion
    before it, judged by the rules of ``GET /allocation_candidates`` (the
    unnamed group's traits on the providers that supply its resources, a
    sharing provider for the trees it serves); then the number of
    allocation candidates and of the trees they are anchored at. The
    counts never grow; the criterion that empties the set is marked.

    With ``--resource-provider``, the exit status is 3 when none of the
    trees named is a candidate (the rows are printed all the same).

    ``--flavor`` takes the request from a Nova flavor, as Nova's scheduler
    builds it (``--show-request`` prints it on stderr).

    The reads need a server that speaks at least {provider_required}.

    Examples::

        # Where does Nova's request for flavor m1.large lose the cloud?
        openstack allocation candidate explain --flavor m1.large \\
            --show-request
        # The same request given by hand:
        openstack allocation candidate explain --resource VCPU=4 \\
            --resource MEMORY_MB=8192 --resource DISK_GB=40 \\
            --forbidden COMPUTE_STATUS_DISABLED
        # Why is compute-7 not a candidate for it?
        openstack allocation candidate explain --resource VCPU=4 \\
            --resource MEMORY_MB=8192 --resource DISK_GB=40 \\
            --forbidden COMPUTE_STATUS_DISABLED --resource-provider compute-7
        openstack allocation candidate explain --flavor m1.large \\
            --resource-provider compute-7
    """

    required_feature = 'allocation_candidates'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        candidates.add_options(parser)
        flavor_option.add_options(parser, flavor_option.EXPLAIN_HELP)
        parser.add_argument(
            '--resource-provider', metavar='<name or uuid>',
            action='append', default=[], dest='explained',
            help='A provider whose tree to explain. May be repeated. '
                 'Without it, explain the request over the whole cloud.')
        parser.add_argument(
            '--all-checks', action='store_true',
            help='With --resource-provider, list the checks that passed '
                 'too.')
        return parser

    def take_action(self, parsed_args):
        if parsed_args.all_checks and not parsed_args.explained:
            raise exceptions.CommandError(
                '--all-checks needs --resource-provider.')
        flavor_option.check_flavor_options(
            parsed_args, flavor_option.candidate_options_given(parsed_args),
            flavor_option.CANDIDATE_OPTIONS)
        # Which trees are candidates does not depend on the mappings shown.
        parsed_args.mappings = False
        wanted = None
        if parsed_args.flavor:
            wanted = flavor_option.read_request(self, parsed_args)
            flavor_option.apply_to_candidate_args(parsed_args, wanted)
        groups = getattr(parsed_args, 'groups', None) or {}
        ver = version.get_version(self)
        candidates.validate(parsed_args, groups, ver)
        candidates.resolve_in_tree(self, groups)
        self._check_reads_possible(ver)
        query = candidates.build_query(parsed_args, groups, LOG)
        if wanted is not None:
            query = flavor_option.with_group_policy(query, wanted)
            flavor_option.show_request(
                self.app.stderr, wanted, flavor_option.query_pairs(query),
                parsed_args.show_request)
        limit = query.pop('limit', None)
        request = explain.parse_query(query_pairs(query),
                                      version.as_tuple(ver))
        reader = CloudReader(self.placement)
        if not parsed_args.explained:
            # --limit bounds the one candidate request of the funnel.
            answer_query = dict(query, limit=limit) if limit else query
            return FUNNEL_COLUMNS, funnel_rows(
                reader, request,
                lambda: self.get_json(candidates.BASE_URL, **answer_query),
                common.StderrProgress('explain: reading the cloud'))
        self._check_request(query, ver)
        rows = explain_rows(reader, request, parsed_args.explained,
                            parsed_args.all_checks)
        self._none_is_a_candidate = not any(
            row[3] == 'candidate' and row[6] == explain.PASS
            for row in rows)
        return EXPLAIN_COLUMNS, rows

    def run(self, parsed_args):
        """The rows, then NOT_A_CANDIDATE when no tree named is one: a
        script can tell without reading them."""
        self._none_is_a_candidate = False
        status = super().run(parsed_args)
        return status or (NOT_A_CANDIDATE if self._none_is_a_candidate
                          else 0)

    def _check_reads_possible(self, ver):
        """Refuse a negotiated version (the server's maximum) without
        READ_FEATURE; a version the user gave is tried."""
        if self.placement.negotiating:
            version.supports(ver, READ_FEATURE, refuse=True)

    def _check_request(self, query, ver):
        """Let the server refuse a bad request (unknown class or trait)
        with its own error, before anything is judged. It costs one
        candidate at most where a limit can say so."""
        if version.supports(ver, 'candidate_limit'):
            query = dict(query, limit=1)
        self.get_json(candidates.BASE_URL, **query)


def query_pairs(query):
    """``(key, value)`` pairs of a query dict whose list values repeat."""
    pairs = []
    for key, value in query.items():
        values = value if isinstance(value, list) else [value]
        pairs += [(key, str(item)) for item in values]
    return pairs


class CloudReader:
    """Reads providers through the public API, each once per command."""

    def __init__(self, placement):
        self.placement = placement
        self._listed = {}      # uuid -> listing dict
        self._details = {}     # uuid -> explain.Provider
        self._trees = {}       # root uuid -> [uuid]
        self._served = {}      # sharing provider uuid -> roots it serves
        self._with_room = {}   # (class, amount) -> sharing providers
        self._aggregates_only = {}  # uuid -> Provider with aggregates

    def get_json(self, url, version_=None, **params):
        """GET at ``version_``, or at the command's version, but at
        READ_FEATURE's at least."""
        ver = version_ or self.placement.api_version
        if not version_ and not version.supports(ver, READ_FEATURE):
            ver = version.since(READ_FEATURE)
        return self.placement.request('GET', url, params=params,
                                      version=ver).json()

    def list_providers(self, **params):
        found = self.get_json(PROVIDERS_URL, **params)['resource_providers']
        for item in found:
            self._listed[item['uuid']] = item
        return found

    def list_uuids(self, version_=None, **params):
        """The uuids of the providers a filtered list returns."""
        return _uuids(self.get_json(PROVIDERS_URL, version_,
                                    **params)['resource_providers'])

    def name(self, uuid):
        """A provider's name (its UUID if it has none), once listed."""
        return self._listed.get(uuid, {}).get('name') or uuid

    def find(self, name_or_uuid):
        """A provider given by name or UUID."""
        found = common.find_provider(self, name_or_uuid)
        self._listed[found['uuid']] = found
        return found

    def tree(self, root):
        """The providers of the tree rooted at ``root``, with details."""
        if root not in self._trees:
            self._trees[root] = [
                item['uuid'] for item in self.list_providers(in_tree=root)]
        return self.details(self._trees[root])

    def details(self, uuids):
        """``explain.Provider`` objects, read concurrently."""
        missing = [u for u in uuids if u not in self._details]
        for uuid, parts in providers.read_parts(self.get_json,
                                                missing).items():
            item = self._listed[uuid]
            self._details[uuid] = explain.Provider(
                uuid, item.get('name'), item.get('parent_provider_uuid'),
                providers.root_of(item), **parts)
        return [self._details[u] for u in uuids]

    def sharing_in(self, aggregates):
        """Sharing providers in any of ``aggregates``, with details."""
        if not aggregates:
            return []
        found = self.list_providers(**providers.in_aggregates(
            aggregates, required=provider_rules.SHARING_TRAIT))
        return self.details([item['uuid'] for item in found])

    def roots_in(self, aggregates):
        """Roots of the providers in any of ``aggregates``."""
        found = self.list_providers(**providers.in_aggregates(aggregates))
        return {providers.root_of(item) for item in found}

    def aggregates_of_many(self, uuids, progress=None):
        """``{uuid: its aggregates}``, read concurrently."""
        read = providers.read_parts(self.get_json, uuids, ('aggregates',),
                                    progress=progress)
        return {uuid: set(parts['aggregates'])
                for uuid, parts in read.items()}

    def sharing_uuids_in(self, aggregate_sets, progress=None):
        """For each set of aggregates, the sharing providers in any of
        them; read concurrently."""
        def sharing_in(aggregates):
            if not aggregates:
                return set()
            return self.list_uuids(**providers.in_aggregates(
                aggregates, required=provider_rules.SHARING_TRAIT))
        return providers.results_or_raise(common.run_concurrently(
            sharing_in, aggregate_sets, progress=progress))

    def served_by(self, sharing, progress=None):
        """``{sharing provider: roots of the trees it serves}``: its
        aggregates, then their members; read concurrently."""
        unread = [uuid for uuid in sharing if uuid not in self._served]
        served = providers.results_or_raise(common.run_concurrently(
            self._trees_served_by_one, unread, progress=progress))
        self._served.update(zip(unread, served))
        return {uuid: self._served[uuid] for uuid in sharing}

    def _trees_served_by_one(self, uuid):
        aggregates = providers.aggregates_of(self.get_json, uuid)
        return self.roots_in(aggregates) if aggregates else set()

    def root_of(self, uuid):
        """The root of provider ``uuid``, or None if there is none."""
        found = self.list_providers(uuid=uuid)
        return providers.root_of(found[0]) if found else None

    def neighbourhood(self, root, in_tree_roots):
        tree = self.tree(root)
        aggregates = frozenset().union(*(p.aggregates for p in tree))
        servers = [p for p in self.sharing_in(aggregates) if p.root != root]
        around = {p.uuid: p for p in tree + servers}
        known = dict(around)
        for server in servers:
            # Their own trees, for same_subtree's ancestry.
            if server.parent is not None:
                known.update({p.uuid: p for p in self.tree(server.root)})
        return explain.Neighbourhood(root, around, known, in_tree_roots)

    def neighbourhoods(self, root, in_tree_roots):
        """The tree's own neighbourhood first, then those of the trees its
        sharing providers serve (they may take from it there)."""
        hoods = [self.neighbourhood(root, in_tree_roots)]
        served = set()
        for p in hoods[0].tree:
            if p.is_sharing and p.aggregates:
                served |= self.roots_in(p.aggregates)
        for other in sorted(served - {root}):
            hoods.append(self.neighbourhood(other, in_tree_roots))
        return hoods

    def helpers(self, hood, missing):
        """``(rc, amount, provider, how many)`` for up to HELPERS sharing
        providers per class in ``missing`` that have room for it but do
        not serve the tree; each provider with its aggregates only."""
        found = []
        serving = {p.uuid for p in hood.providers}
        for rc, amount in sorted(missing.items()):
            listed = [item for item in self._sharing_with_room(rc, amount)
                      if item['uuid'] not in serving]
            for item in listed[:HELPERS]:
                found.append((rc, amount, self._with_aggregates(item),
                              len(listed)))
        return found

    def _sharing_with_room(self, rc, amount):
        # Read once per command: several trees may miss the same class.
        key = (rc, amount)
        if key not in self._with_room:
            self._with_room[key] = self.list_providers(
                resources='%s:%d' % key, required=provider_rules.SHARING_TRAIT)
        return self._with_room[key]

    def _with_aggregates(self, item):
        """A listed provider with its aggregates only, read once."""
        if item['uuid'] not in self._aggregates_only:
            self._aggregates_only[item['uuid']] = explain.Provider(
                item['uuid'], item.get('name'),
                item.get('parent_provider_uuid'), providers.root_of(item),
                aggregates=providers.aggregates_of(self.get_json,
                                                   item['uuid']))
        return self._aggregates_only[item['uuid']]


def explain_rows(reader, request, names, all_checks):
    roots = []
    for name in names:
        listed = reader.find(name)
        root = providers.root_of(listed)
        if root not in roots:
            roots.append(root)
    in_tree_roots = {uuid: reader.root_of(uuid)
                     for uuid in request.in_tree_uuids}
    rows = []
    for root in roots:
        hoods = reader.neighbourhoods(root, in_tree_roots)
        # Sharing providers elsewhere are read only for trees that fail.
        helpers = () if explain.is_candidate(hoods, request, root) \
            else reader.helpers(hoods[0], explain.missing_classes(
                hoods[0], request))
        verdict, findings = explain.explain_tree(hoods, request, helpers)
        rows += tree_rows(reader.name, root, verdict, findings, all_checks)
    return rows


def tree_rows(name, root, verdict, findings, all_checks):
    """The verdict's row, then those of the findings to show;
    ``name(uuid)`` is a provider's name."""
    tree = name(root)
    rows = [(tree, tree, '', 'candidate', '',
             'candidate' if verdict else 'not a candidate',
             explain.PASS if verdict else explain.FAIL)]
    for finding in findings:
        if all_checks or (finding.result == explain.FAIL
                          and not finding.moot):
            rows.append((tree, name(finding.provider) if finding.provider
                         else '',
                         _group_label(finding.group), finding.check,
                         finding.wanted, finding.found, finding.result))
    return rows


def _group_label(group):
    if group is None:
        return ''
    return group or UNNAMED_LABEL


# --- The funnel ------------------------------------------------------------

# How the funnel reads which sharing providers serve the trees whose
# verdict they can change: from those trees' aggregates (True), from every
# sharing provider's (False), or whichever is fewer requests (None).
SERVERS_FROM_TREES = None
# The funnel's lists are few and large: two at a time let the client read
# one while the server writes the next, without splitting one server
# worker's time between all of them.
READS_AT_ONCE = 2


def funnel_rows(reader, request, candidates_of_request, progress=None):
    """Each criterion's providers alone, and the trees still in after it
    and every criterion before it; then the whole request's answer.
    ``candidates_of_request()`` asks for that answer."""
    cloud, answer, steps = funnel_trees(reader, request,
                                        candidates_of_request, progress)
    rows = [(label, criterion, passing, len(trees), '')
            for label, criterion, passing, trees in steps]
    _mark_first_empty(rows)
    count = len(answer['allocation_requests'])
    rows.append(('', 'allocation candidates', count,
                 len(cloud.anchors_of(answer)),
                 '' if count else 'no candidates'))
    return rows


def funnel_trees(reader, request, candidates_of_request, progress=None):
    """``(cloud, answer, [(group label, criterion, providers passing it
    alone, roots of the trees still in)])``, from all providers to the
    last criterion."""
    cloud, answer = FunnelCloud.read(reader, request, candidates_of_request,
                                     progress)
    steps = [explain.funnel_steps(group) for group in request.groups]
    met = cloud.steps_met(reader, request, steps)
    remaining = set(cloud.trees)
    found = [('', 'all providers', len(cloud.providers), remaining)]
    for index, (group, group_steps) in enumerate(zip(request.groups, steps)):
        for passed, (criterion, _) in enumerate(group_steps):
            # A tree stays in while the group meets this criterion too:
            # the set only ever shrinks.
            remaining = {root for root in remaining
                         if met[root][index] > passed}
            found.append((_group_label(group.suffix),
                          criterion_text(criterion),
                          cloud.passing(criterion), remaining))
    if request.root_required or request.root_forbidden:
        value = ','.join(sorted(request.root_required)
                         + ['!' + n for n in sorted(request.root_forbidden)])
        roots = {root for root in cloud.trees
                 if explain.root_passes(cloud.providers[root], request)}
        found.append(('', 'root has %s' % value, len(roots),
                      remaining & roots))
    return cloud, answer, found


def _mark_first_empty(rows):
    for index, row in enumerate(rows):
        if row[3] == 0:
            rows[index] = row[:4] + ('empties the set',)
            return


def criterion_text(criterion):
    """How a row of the funnel names its criterion."""
    kind, value = criterion[0], criterion[1:]
    if kind == 'room':
        return 'room for %s=%d' % value
    if kind == 'in_tree':
        return 'in the tree of %s' % value[0]
    names = sorted(value[0]) if isinstance(value[0], frozenset) \
        else [value[0]]
    one = len(names) == 1
    listed = ','.join(names)
    return {
        'required': ('has trait %s' if one else 'has any of traits %s'),
        'forbidden': 'without trait %s',
        'member_of': ('in aggregate %s' if one
                      else 'in any of aggregates %s'),
        'not member_of': ('not in aggregate %s' if one
                          else 'in none of aggregates %s'),
    }[kind] % listed


class FunnelCloud:
    """The whole cloud as the funnel sees it: every provider, and which
    of them pass each criterion of the request, from one provider list
    per criterion (a trait's holders, an aggregate's members, the
    providers with room for an amount) rather than one read per
    provider."""

    def __init__(self, listed, sharing, fits, holders, members,
                 in_tree_roots):
        self.sharing = sharing
        self.fits = fits          # (class, amount) -> uuids with room
        self.holders = holders    # trait -> uuids that have it
        self.members = members    # aggregate -> uuids in it
        self.in_tree_roots = in_tree_roots
        self.root_of = {item['uuid']: providers.root_of(item)
                        for item in listed}
        room = _inverted(fits)
        traits = _inverted(holders)
        aggregates = _inverted(members)
        self.providers = {}
        self.trees = {}
        for item in listed:
            uuid = item['uuid']
            provider = explain.Listed(
                uuid, item.get('name'), item.get('parent_provider_uuid'),
                self.root_of[uuid], room.get(uuid, ()),
                traits.get(uuid, set())
                | ({provider_rules.SHARING_TRAIT} if uuid in sharing
                   else set()),
                aggregates.get(uuid, ()))
            self.providers[uuid] = provider
            self.trees.setdefault(provider.root, []).append(provider)

    @classmethod
    def read(cls, reader, request, candidates_of_request, progress=None):
        """``(cloud, answer)``: the lists, and the request's own answer,
        sent together."""
        classes = sorted({item for group in request.groups
                          for item in group.resources.items()})
        traits = sorted(set().union(*(
            set().union(group.forbidden, *group.required)
            for group in request.groups), request.root_required,
            request.root_forbidden))
        aggregates = sorted(set().union(*(
            set().union(group.forbidden_aggs, *group.member_of)
            for group in request.groups)))
        reads = ([lambda: reader.list_providers(),
                  lambda: reader.list_uuids(
                      required=provider_rules.SHARING_TRAIT),
                  candidates_of_request]
                 + [_room_read(reader, rc, amount)
                    for rc, amount in classes]
                 + [_trait_read(reader, name) for name in traits]
                 + [_member_read(reader, agg) for agg in aggregates]
                 + [_root_read(reader, uuid)
                    for uuid in sorted(request.in_tree_uuids)])
        found = providers.results_or_raise(common.run_concurrently(
            lambda read: read(), reads, workers=READS_AT_ONCE,
            progress=progress))
        listed, sharing, answer = found[:3]
        found = found[3:]
        fits = dict(zip(classes, found[:len(classes)]))
        found = found[len(classes):]
        holders = dict(zip(traits, found[:len(traits)]))
        found = found[len(traits):]
        members = dict(zip(aggregates, found[:len(aggregates)]))
        in_tree_roots = dict(zip(sorted(request.in_tree_uuids),
                                 found[len(aggregates):]))
        return cls(listed, sharing, fits, holders, members,
                   in_tree_roots), answer

    def passing(self, criterion):
        """How many providers pass ``criterion`` on its own."""
        kind, value = criterion[0], criterion[1:]
        total = len(self.providers)
        if kind == 'room':
            return len(self.fits[value])
        if kind == 'in_tree':
            root = self.in_tree_roots.get(value[0])
            return len(self.trees.get(root, ()))
        names = value[0] if isinstance(value[0], frozenset) else [value[0]]
        table = self.holders if kind in ('required', 'forbidden') \
            else self.members
        having = set().union(*(table[name] for name in names))
        if kind in ('forbidden', 'not member_of'):
            return total - len(having)
        return len(having)

    def anchors_of(self, answer):
        """The trees the answer's candidates are anchored at: those of
        the providers that are not sharing providers (a candidate taking
        from sharing providers only counts under theirs)."""
        anchors = set()
        for request_ in answer['allocation_requests']:
            uuids = [uuid for uuid, _ in
                     candidates.request_allocations(request_)]
            own = [uuid for uuid in uuids if uuid not in self.sharing]
            anchors |= {self.root_of.get(uuid, uuid)
                        for uuid in own or uuids}
        return anchors

    # --- judging every tree

    def steps_met(self, reader, request, steps):
        """``{root: [steps met, per group]}``, by explain's rules.

        The sharing providers serving a tree are known only from their
        aggregates, one read each. So every tree is judged twice first:
        with its own providers only, and with one sharing provider of each
        kind (the same room, traits and named aggregates) as if all
        served it. Where the two agree, that is the answer; only the
        other trees' servers are read. Trees alike are judged once.
        """
        kinds = self._sharing_kinds()
        alone, with_all, met = {}, {}, {}
        uncertain = []
        for root, tree in self.trees.items():
            key = self._key(tree)
            if key not in alone:
                alone[key] = self._met(root, [], request, steps)
            kinds_here = tuple(p for p in kinds if p.root != root)
            full_key = (key, tuple(p.uuid for p in kinds_here))
            if full_key not in with_all:
                with_all[full_key] = self._met(root, kinds_here, request,
                                               steps)
            if alone[key] == with_all[full_key]:
                met[root] = alone[key]
            else:
                uncertain.append(root)
        servers = self._servers(reader, uncertain)
        for root in uncertain:
            met[root] = self._met(root, servers[root], request, steps)
        return met

    def _met(self, root, servers, request, steps):
        around = {p.uuid: p for p in self.trees[root] + list(servers)}
        hood = explain.Neighbourhood(root, around, None, self.in_tree_roots,
                                     servers=servers)
        return tuple(explain.steps_met(hood, group_steps)
                     for group_steps in steps)

    def _profile(self, provider):
        """What the rules see of a provider, its identity aside."""
        in_trees = frozenset(uuid for uuid, root in self.in_tree_roots.items()
                             if root == provider.root)
        return (provider.parent is None, provider.fits, provider.traits,
                provider.aggregates, in_trees)

    def _key(self, tree):
        return tuple(sorted((self._profile(p) for p in tree), key=repr))

    def _sharing_kinds(self):
        """Sharing providers, one per profile; two of different trees,
        so that a tree of one of them still has the other."""
        kinds = {}
        for uuid in sorted(self.sharing & set(self.providers)):
            p = self.providers[uuid]
            found = kinds.setdefault(self._profile(p), [])
            if len(found) < 2 and all(q.root != p.root for q in found):
                found.append(p)
        return [p for found in kinds.values() for p in found]

    def _servers(self, reader, roots):
        """``{root: [sharing providers serving it]}`` for ``roots``: from
        their providers' aggregates, or, when that is more reads, from
        every sharing provider's."""
        if not roots:
            return {}
        own_reads = sum(len(self.trees[root]) + 1 for root in roots)
        sharing = sorted(self.sharing & set(self.providers))
        progress = common.StderrProgress('explain: sharing providers')
        from_trees = SERVERS_FROM_TREES
        if from_trees is None:
            from_trees = own_reads <= 2 * len(sharing)
        if from_trees:
            aggregates = reader.aggregates_of_many(
                [p.uuid for root in roots for p in self.trees[root]],
                progress)
            found = reader.sharing_uuids_in(
                [set().union(*(aggregates[p.uuid] for p in self.trees[root]))
                 for root in roots], progress)
            return {root: self._listed(uuids, root)
                    for root, uuids in zip(roots, found)}
        served = reader.served_by(sharing, progress)
        return {root: self._listed(
            {uuid for uuid in sharing if root in served[uuid]}, root)
            for root in roots}

    def _listed(self, uuids, root):
        return [self.providers[uuid] for uuid in sorted(uuids)
                if uuid in self.providers
                and self.providers[uuid].root != root]


def _inverted(table):
    """``{key: uuids}`` -> ``{uuid: {key, ...}}``."""
    found = {}
    for key, uuids in table.items():
        for uuid in uuids:
            found.setdefault(uuid, set()).add(key)
    return found


def _room_read(reader, rc, amount):
    return lambda: reader.list_uuids(
        version.since('resources_filter'),
        resources='%s:%d' % (rc, amount))


def _trait_read(reader, name):
    return lambda: reader.list_uuids(required=name)


def _member_read(reader, aggregate):
    return lambda: reader.list_uuids(member_of=aggregate)


def _root_read(reader, uuid):
    return lambda: reader.root_of(uuid)


def _uuids(listing):
    return {item['uuid'] for item in listing}
