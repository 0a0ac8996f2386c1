# SPDX-License-Identifier: Apache-2.0
"""``openstack allocation candidate list``.

The command is split into the steps upstream keeps in one method: parsing
the options into request groups (argparse actions), validating them and
their microversion gates, building the query, and shaping the answer into
one row per provider of each candidate.
"""

import argparse
import logging
import re

from cliff import columns
from cliff import lister
from osc_lib import exceptions

from osc_placement.resources import common
from osc_placement import version

LOG = logging.getLogger(__name__)

BASE_URL = '/allocation_candidates'

# The options that belong to a request group: the attribute each is
# collected in.
GROUP_OPTIONS = ('resources', 'required', 'forbidden', 'member_of',
                 'aggregate_uuid', 'in_tree')
# The server takes one in_tree per group: the last one given wins.
SINGLE_VALUE_OPTIONS = ('in_tree',)
# What each group's options need, in the order they are checked:
# (option, applies to its value, feature). Some values need a newer feature
# than their option.
GROUP_GATES = (
    ('resources', bool, 'allocation_candidates'),
    ('required', bool, 'candidate_required'),
    ('forbidden', bool, 'forbidden_traits'),
    ('member_of', bool, 'candidate_member_of'),
    ('aggregate_uuid', bool, 'candidate_member_of'),
    ('in_tree', bool, 'candidate_in_tree'),
    ('required', common.required_needs_any_of, 'any_of_traits'),
    ('member_of', common.forbids_aggregates, 'forbidden_aggregates'),
)
# Request-wide options and the feature that brought each; as upstream,
# --limit 0 means no limit, so it needs nothing.
REQUEST_GATES = (
    ('limit', bool, 'candidate_limit'),
    ('root_required', bool, 'root_required'),
    ('same_subtree', bool, 'same_subtree'),
    ('mappings', bool, 'candidate_mappings'),
)
UNNAMED_GROUP = ''

# Output columns and the feature that brought each.
CANDIDATE_COLUMNS = (
    ('#', 'allocation_candidates'),
    ('allocation', 'allocation_candidates'),
    ('resource provider', 'allocation_candidates'),
    ('inventory used/capacity', 'allocation_candidates'),
    ('traits', 'summary_traits'),
    ('mappings', 'candidate_mappings'),
)
# Columns shown only when an option of the same name asks for them, so
# that the default columns stay upstream's at every version.
OPT_IN_COLUMNS = ('mappings',)

RESOURCE_FORMAT_ERROR = ('Arguments to --resource must be of form '
                         '<resource_class>=<value>')
# Before named groups a suffix is a number without leading zeros: '0' and
# '01' are names, as the server's own pattern has it.
_NUMBER = re.compile(r'^[1-9][0-9]*$')


def new_group():
    return {dest: None if dest in SINGLE_VALUE_OPTIONS else []
            for dest in GROUP_OPTIONS}


def _groups(namespace):
    # A dict keeps the order groups were given in, which is the order
    # their query parameters are sent.
    if getattr(namespace, 'groups', None) is None:
        namespace.groups = {}
    return namespace.groups


class GroupAction(argparse.Action):
    """``--group NAME``: the options after it belong to group NAME."""

    def __call__(self, parser, namespace, values, option_string=None):
        namespace.current_group = values
        _groups(namespace).setdefault(values, new_group())


class GroupOptionAction(argparse.Action):
    """A per-group option: stored in the group opened last, or unnamed."""

    def __call__(self, parser, namespace, values, option_string=None):
        name = getattr(namespace, 'current_group', None) or UNNAMED_GROUP
        group = _groups(namespace).setdefault(name, new_group())
        if self.dest in SINGLE_VALUE_OPTIONS:
            group[self.dest] = values
        else:
            group[self.dest].append(values)


class MappingsColumn(columns.FormattableColumn):
    """The request groups a provider satisfies in one candidate.

    JSON and YAML get the list of group names (``""`` is the unnamed
    group); tables get them comma-joined, the unnamed group shown as
    ``(unnamed)``.
    """

    def human_readable(self):
        return ','.join(name or '(unnamed)' for name in self._value)

    def machine_readable(self):
        return list(self._value)


class ListAllocationCandidate(common.PlacementCommand, lister.Lister):
    """List allocation candidates.

    Returns a representation of a collection of allocation requests and
    resource provider summaries. Each allocation request has information
    to issue an ``openstack resource provider allocation set`` request to
    claim resources against a related set of resource providers.

    There is one row per provider of each candidate: ``#`` numbers the
    candidates, ``allocation`` is what the candidate takes from that
    provider, and ``inventory used/capacity`` shows the provider's usage and
    capacity for every class it has, to help choose between candidates.
    ``traits`` ({summary_traits}+) lists the provider's traits, and with
    ``--mappings`` ({candidate_mappings}+) a ``mappings`` column names the
    request groups the provider satisfies in that candidate.

    For example::

      $ openstack allocation candidate list --resource VCPU=1 -f yaml
      - '#': 1
        allocation: VCPU=1
        inventory used/capacity: VCPU=0/128
        resource provider: 66bcaca9-9263-45b1-a569-ea708ff7a968
        traits: ''

    Options given before any ``--group`` form the unnamed request group;
    each ``--group NAME`` starts a group of its own whose resources must
    come from a single provider. See the user guide for granular requests
    and the {candidate_in_tree} to {same_subtree} options.

    This command requires at least
    ``--os-placement-api-version {allocation_candidates}``.
    """

    required_feature = 'allocation_candidates'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        add_options(parser)
        return parser

    def take_action(self, parsed_args):
        groups = getattr(parsed_args, 'groups', None) or {}
        ver = version.get_version(self)
        validate(parsed_args, groups, ver)
        resolve_in_tree(self, groups)
        query = build_query(parsed_args, groups, LOG)
        body = self.get_json(BASE_URL, **query)
        return candidate_table(body, shown_columns(parsed_args, ver))


def resolve_in_tree(command, groups):
    """Each group's --in-tree as the UUID of the provider it names (a
    name or a UUID)."""
    for group in groups.values():
        if group['in_tree']:
            group['in_tree'] = common.provider_uuid(command, group['in_tree'])


def add_options(parser):
    """Upstream's options in upstream's order, then the newer ones."""
    parser.add_argument(
        '--resource', metavar='<resource_class>=<value>', dest='resources',
        action=GroupOptionAction,
        help='An amount of a resource class that the providers of each '
             'candidate (of the group, after ``--group``) must have the '
             'capacity for. May be repeated, e.g. ``--resource VCPU=4 '
             '--resource DISK_GB=64 --resource MEMORY_MB=2048``.')
    parser.add_argument(
        '--limit', metavar='<limit>', type=int,
        help=version.render(
            'A positive integer to limit the maximum number of allocation '
            'candidates. This option requires at least '
            '``--os-placement-api-version {candidate_limit}``.'))
    parser.add_argument(
        '--required', metavar='<required>', action=GroupOptionAction,
        help=version.render(
            'A required trait. May be repeated: candidates must '
            'collectively have all of them. Since '
            '``--os-placement-api-version {any_of_traits}`` a '
            'comma-separated list means any one of those traits. This '
            'option requires at least '
            '``--os-placement-api-version {candidate_required}``.'))
    parser.add_argument(
        '--forbidden', metavar='<forbidden>', action=GroupOptionAction,
        help=version.render(
            'A forbidden trait. May be repeated: candidates must have none '
            'of them. This option requires at least '
            '``--os-placement-api-version {forbidden_traits}``.'))
    aggregates = parser.add_mutually_exclusive_group()
    aggregates.add_argument(
        '--member-of', metavar='<member_of>', action=GroupOptionAction,
        help=version.render(
            'A list of comma-separated UUIDs of resource provider '
            'aggregates; the candidates must be associated with at least '
            'one of them. May be repeated ({repeated_member_of}+), each '
            'occurrence being one more condition. ``!<uuid>`` or '
            '``!<uuid>,<uuid>`` excludes those aggregates '
            '({forbidden_aggregates}+). This option requires at least '
            '``--os-placement-api-version {candidate_member_of}``.'))
    aggregates.add_argument(
        '--aggregate-uuid', metavar='<aggregate_uuid>',
        action=GroupOptionAction, help=argparse.SUPPRESS)
    parser.add_argument(
        '--group', metavar='<group>', action=GroupAction,
        help=version.render(
            'Start a request group: the ``--resource``, ``--required``, '
            '``--forbidden``, ``--member-of`` and ``--in-tree`` options '
            'that follow belong to it, and its resources must come from one '
            'provider. Repeat it for several groups, e.g. ``--group 1 '
            '--resource VCPU=3 --required HW_CPU_X86_AVX --group 2 '
            '--resource VCPU=2 --required HW_CPU_X86_SSE``. Numbered groups '
            'require at least ``--os-placement-api-version '
            '{granular_groups}`` ({nested_candidates} for trees of '
            'providers); names of up to 64 letters, digits, ``_`` and ``-`` '
            'require {named_groups}.'))
    parser.add_argument(
        '--group-policy', choices=['none', 'isolate'], default=None,
        metavar='<group_policy>',
        help='How the groups interact when several are given. With '
             '``none`` (default) separate groups may or may not be '
             'satisfied by the same provider; with ``isolate`` the named '
             'groups are satisfied by different providers.')
    parser.add_argument(
        '--in-tree', metavar='<in_tree>', action=GroupOptionAction,
        help=version.render(
            'Name or UUID of a resource provider: only providers in its '
            'tree are used (for the group, after ``--group``). This option '
            'requires at least '
            '``--os-placement-api-version {candidate_in_tree}``.'))
    parser.add_argument(
        '--root-required', metavar='<trait>', action='append', default=[],
        help=version.render(
            'A trait that the root provider of each candidate\'s tree must '
            'have, or with a ``!`` prefix must not have. May be repeated or '
            'comma-separated. This option requires at least '
            '``--os-placement-api-version {root_required}``.'))
    parser.add_argument(
        '--same-subtree', metavar='<group>,<group>[,...]', action='append',
        default=[],
        help=version.render(
            'Comma-separated names of groups whose providers must all be in '
            'the subtree of one of them. May be repeated. A group named '
            'here may have no ``--resource``. This option requires at least '
            '``--os-placement-api-version {same_subtree}``.'))
    parser.add_argument(
        '--mappings', action='store_true',
        help=version.render(
            'Add a ``mappings`` column: the request groups each provider '
            'satisfies in the candidate, the unnamed group shown as '
            '``(unnamed)`` in tables and as ``""`` in JSON. This option '
            'requires at least '
            '``--os-placement-api-version {candidate_mappings}``.'))


def validate(parsed_args, groups, ver):
    """Fail before sending anything if the request cannot be right."""
    if not any(group['resources'] for group in groups.values()):
        raise exceptions.CommandError(
            'At least one --resource must be specified.')
    for group in groups.values():
        check_resource_format(group['resources'])
    for feature in common.needed_features(parsed_args, REQUEST_GATES):
        version.supports(ver, feature, refuse=True)
    check_group_names(groups, ver)
    for name, group in groups.items():
        for feature in common.needed_features(group, GROUP_GATES):
            version.supports(ver, feature, refuse=True)
        check_group_has_resources(name, group, parsed_args, ver)


def check_resource_format(resources):
    for resource in resources:
        if len(resource.split('=')) != 2:
            raise exceptions.CommandError(RESOURCE_FORMAT_ERROR)


def check_group_names(groups, ver):
    """Numbered groups came first; any [a-zA-Z0-9_-] name later."""
    names = [name for name in groups if name != UNNAMED_GROUP]
    if names:
        version.supports(ver, 'granular_groups', refuse=True)
    if any(not _NUMBER.match(name) for name in names):
        version.supports(ver, 'named_groups', refuse=True)


def check_group_has_resources(name, group, parsed_args, ver):
    if group['resources'] or _may_be_resourceless(name, parsed_args, ver):
        return
    if name == UNNAMED_GROUP:
        raise exceptions.CommandError(
            '--resource should be provided in the unnamed group (the '
            'options before the first --group)')
    raise exceptions.CommandError(
        '--resource should be provided in group %s' % name)


def _may_be_resourceless(name, parsed_args, ver):
    return (version.supports(ver, 'resourceless_groups')
            and name in same_subtree_names(parsed_args.same_subtree))


def same_subtree_names(values):
    return {name.strip() for value in values for name in value.split(',')}


def build_query(parsed_args, groups, log):
    """The query parameters; a list value repeats its key."""
    query = {}
    # As upstream, --limit 0 means no limit.
    if parsed_args.limit:
        query['limit'] = parsed_args.limit
    if any(name != UNNAMED_GROUP for name in groups):
        query['group_policy'] = parsed_args.group_policy or 'none'
    for name, group in groups.items():
        query.update(group_query(name, group, log))
    if parsed_args.root_required:
        # The server takes one root_required parameter.
        query['root_required'] = ','.join(parsed_args.root_required)
    if parsed_args.same_subtree:
        query['same_subtree'] = list(parsed_args.same_subtree)
    return query


def group_query(suffix, group, log):
    query = {}
    if group['resources']:
        query['resources' + suffix] = ','.join(
            resource.replace('=', ':') for resource in group['resources'])
    required = common.required_query(group['required'], group['forbidden'])
    if required:
        query['required' + suffix] = required
    member_of = common.member_of_query(group['member_of'],
                                       group['aggregate_uuid'], log)
    if member_of:
        query['member_of' + suffix] = member_of
    if group['in_tree']:
        query['in_tree' + suffix] = group['in_tree']
    return query


def shown_columns(parsed_args, ver):
    return tuple(name for name, feature in CANDIDATE_COLUMNS
                 if version.supports(ver, feature) and (
                     name not in OPT_IN_COLUMNS or getattr(parsed_args, name)))


def candidate_table(body, names):
    """The columns ``names`` and a row per provider of each candidate.

    With the ``mappings`` column, providers that only satisfy resourceless
    groups get a row too, with no allocation.
    """
    with_mappings = 'mappings' in names
    summaries = body.get('provider_summaries', {})
    rows = []
    for number, request in enumerate(body['allocation_requests'], 1):
        groups_of = groups_by_provider(request.get('mappings', {}))
        for provider, resources in providers_of(request, groups_of,
                                                with_mappings):
            values = {
                '#': number,
                'allocation': common.amounts_text(resources),
                'resource provider': provider,
                'inventory used/capacity': common.used_of_capacity_text(
                    (summaries.get(provider) or {}).get('resources', {})),
                'traits': ','.join(
                    (summaries.get(provider) or {}).get('traits', [])),
                'mappings': MappingsColumn(groups_of.get(provider, [])),
            }
            rows.append(tuple(values[name] for name in names))
    return names, rows


def request_allocations(request):
    """(provider, resources) pairs of one allocation request, whose
    allocations are a list before ``dict_allocations`` and a dict after."""
    allocations = request['allocations']
    if isinstance(allocations, dict):
        return [(rp, share['resources']) for rp, share in allocations.items()]
    return [(share['resource_provider']['uuid'], share['resources'])
            for share in allocations]


def providers_of(request, groups_of, with_resourceless=False):
    """(provider, resources) pairs of one candidate, allocation order.

    A provider that only satisfies resourceless groups takes
    nothing, but it is part of the candidate: if asked, it follows the
    others with empty resources.
    """
    pairs = request_allocations(request)
    if not with_resourceless:
        return pairs
    allocated = {provider for provider, _resources in pairs}
    pairs += [(provider, {}) for provider in groups_of
              if provider not in allocated]
    return pairs


def groups_by_provider(mappings):
    """Invert ``{group: [providers]}`` into ``{provider: [groups]}``."""
    groups = {}
    for group, providers in mappings.items():
        for provider in providers:
            groups.setdefault(provider, []).append(group)
    return groups
