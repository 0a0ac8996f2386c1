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
from osc_placement.resources import allocation_candidate as candidates
from osc_placement.resources import common
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
    request group, each criterion's count of providers alone and of those
    passing every criterion so far, from one request per criterion, then
    the number of allocation candidates; the first criterion that empties
    the set is marked.

    The reads need a server that speaks at least {provider_required}.
    """

    required_feature = 'allocation_candidates'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        candidates.add_options(parser)
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
        # Which trees are candidates does not depend on the mappings shown.
        parsed_args.mappings = False
        groups = getattr(parsed_args, 'groups', None) or {}
        ver = version.get_version(self)
        candidates.validate(self, parsed_args, groups, ver)
        self._check_reads_possible(ver)
        query = candidates.build_query(parsed_args, groups, LOG)
        limit = query.pop('limit', None)
        request = explain.parse_query(query_pairs(query),
                                      version.as_tuple(ver))
        reader = CloudReader(self.placement)
        if not parsed_args.explained:
            # --limit bounds the one candidate request of the funnel.
            answer_query = dict(query, limit=limit) if limit else query
            return FUNNEL_COLUMNS, funnel_rows(
                reader, request,
                lambda: self.get_json(candidates.BASE_URL, **answer_query))
        self._check_request(query, ver)
        rows = explain_rows(reader, request, parsed_args.explained,
                            parsed_args.all_checks)
        return EXPLAIN_COLUMNS, rows

    def _check_reads_possible(self, ver):
        """The reads go at READ_FEATURE's version at least. A version the
        user gave says nothing of the server's maximum, so it is tried; a
        negotiated one without READ_FEATURE is that maximum: refuse it
        upstream's way.
        """
        if self.placement.negotiating:
            self.require_feature(READ_FEATURE)

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
        self._sharing = None   # uuids of every sharing provider
        self._served = {}      # sharing provider uuid -> roots it serves
        self._with_room = {}   # (class, amount) -> sharing providers
        self._aggregates_only = {}  # uuid -> Provider with aggregates

    def get_json(self, url, **params):
        ver = self.placement.api_version
        if not version.supports(ver, READ_FEATURE):
            ver = version.since(READ_FEATURE)
        return self.placement.request('GET', url, params=params,
                                      version=ver).json()

    def list_providers(self, **params):
        found = self.get_json(PROVIDERS_URL, **params)['resource_providers']
        for item in found:
            self._listed[item['uuid']] = item
        return found

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
            aggregates, required=providers.SHARING_TRAIT))
        return self.details([item['uuid'] for item in found])

    def roots_in(self, aggregates):
        """Roots of the providers in any of ``aggregates``."""
        found = self.list_providers(**providers.in_aggregates(aggregates))
        return {providers.root_of(item) for item in found}

    def trees_served_by(self, uuids):
        """The roots of ``uuids``' trees, and of the trees those that are
        sharing providers serve."""
        if self._sharing is None:
            self._sharing = _uuids(self.list_providers(
                required=providers.SHARING_TRAIT))
        sharing = sorted(set(uuids) & self._sharing)
        unread = [uuid for uuid in sharing if uuid not in self._served]
        served = providers.results_or_raise(common.run_concurrently(
            self._trees_served_by_one, unread))
        self._served.update(zip(unread, served))
        trees = {providers.root_of(self._listed[u]) for u in uuids}
        return trees.union(*(self._served[uuid] for uuid in sharing))

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
                resources='%s:%d' % key, required=providers.SHARING_TRAIT)
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

def funnel_rows(reader, request, candidates_of_request):
    """Each criterion's providers alone, and the trees still in after it
    and every criterion before it; then the whole request's answer.
    ``candidates_of_request()`` asks for that answer."""
    everyone = reader.list_providers()
    root_of = {item['uuid']: providers.root_of(item) for item in everyone}
    remaining = set(root_of.values())
    rows = [('', 'all providers', len(root_of), len(remaining), '')]
    for group in request.groups:
        for criterion, passing, trees in _group_funnel(reader, group,
                                                       root_of):
            remaining &= trees
            rows.append((_group_label(group.suffix), criterion,
                         len(passing), len(remaining), ''))
    rows += _root_rows(reader, request, root_of, remaining)
    _mark_first_empty(rows)
    answer = candidates_of_request()
    count = len(answer['allocation_requests'])
    answered = {root_of.get(uuid, uuid)
                for request_ in answer['allocation_requests']
                for uuid, _ in candidates.request_allocations(request_)}
    rows.append(('', 'allocation candidates', count, len(answered),
                 '' if count else 'no candidates'))
    return rows


def _mark_first_empty(rows):
    for index, row in enumerate(rows):
        if row[3] == 0:
            rows[index] = row[:4] + ('empties the set',)
            return


def _group_funnel(reader, group, root_of):
    """``(criterion, passing providers, trees that may still serve the
    group)`` after each criterion of one group.

    A suffixed group's providers must pass every criterion themselves; the
    unsuffixed group's criteria may be met by different providers of a
    tree (a NUMA node has the VCPU, the root the disk), so there a tree
    stays in while each criterion so far is met by one of its providers.
    A sharing provider meets a criterion for every tree it serves.
    """
    remaining_providers = set(root_of)
    remaining_trees = set(root_of.values())
    for criterion, params in group_criteria(group):
        passing = _uuids(reader.list_providers(**params))
        if group.suffix:
            remaining_providers &= passing
            remaining_trees = reader.trees_served_by(remaining_providers)
        else:
            remaining_trees &= reader.trees_served_by(passing)
        yield criterion, passing, remaining_trees


def group_criteria(group):
    """``(criterion, provider list filters)`` in the order they cut: room
    for each class, traits, aggregates, tree."""
    for rc, amount in group.resources.items():
        yield ('room for %s=%d' % (rc, amount),
               {'resources': '%s:%d' % (rc, amount)})
    for any_of in group.required:
        names = sorted(any_of)
        value = names[0] if len(names) == 1 else 'in:' + ','.join(names)
        yield 'has trait %s' % value, {'required': value}
    for name in sorted(group.forbidden):
        yield 'without trait %s' % name, {'required': '!' + name}
    for any_of in group.member_of:
        value = 'in:' + ','.join(sorted(any_of))
        yield 'in aggregate %s' % value, {'member_of': value}
    if group.forbidden_aggs:
        value = '!in:' + ','.join(sorted(group.forbidden_aggs))
        yield 'not in aggregate %s' % value[1:], {'member_of': value}
    if group.in_tree:
        yield 'in the tree of %s' % group.in_tree, {'in_tree': group.in_tree}


def _root_rows(reader, request, root_of, remaining):
    """The trees whose root passes --root-required, of those still in."""
    if not (request.root_required or request.root_forbidden):
        return []
    value = ','.join(sorted(request.root_required)
                     + ['!' + n for n in sorted(request.root_forbidden)])
    roots = _uuids(reader.list_providers(required=value)) & set(
        root_of.values())
    return [('', 'root has %s' % value, len(roots),
             len(roots & remaining), '')]


def _uuids(listing):
    return {item['uuid'] for item in listing}
