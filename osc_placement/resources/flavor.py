# SPDX-License-Identifier: Apache-2.0
"""``--flavor`` and ``--show-request`` of explain and ``capacity --fit``.

The flavor comes from Nova's API (``osc_placement.compute``); its request
from ``osc_placement.flavor_request``. Here it becomes the commands'
own options: the request groups ``allocation candidate list`` parses,
or ``--fit``'s one unsuffixed group with its traits.
"""

import logging

from osc_lib import exceptions

from osc_placement import compute
from osc_placement import flavor_request
from osc_placement.resources import allocation_candidate as candidates

LOG = logging.getLogger(__name__)

CANDIDATE_OPTIONS = '--resource and --group'
FIT_OPTIONS = 'a --fit value and --resource-class'


EXPLAIN_HELP = (
    'A Nova flavor (name or ID): explain the request Nova\'s scheduler '
    'sends to Placement for a server of that flavor booted from an image '
    '(root, ephemeral and swap disk, memory, CPUs or PCPU for dedicated '
    'ones, its resources*: and trait*: extra specs, group_policy, and '
    '!COMPUTE_STATUS_DISABLED on the root). --required, --forbidden, '
    '--member-of and --in-tree (before any --group) and --root-required '
    'are added to it. The flavor is read from the compute endpoint of the '
    'catalog, or OS_COMPUTE_ENDPOINT_OVERRIDE.')
FIT_HELP = (
    'A Nova flavor (name or ID): count the request Nova\'s scheduler sends '
    'to Placement for a server of that flavor booted from an image, as '
    '--fit counts (--fit may then be given without a value): its '
    'unsuffixed group\'s resources, its traits as --required and '
    '--forbidden (added to those given), and its root provider traits '
    '(!COMPUTE_STATUS_DISABLED) choosing the trees. A flavor with granular '
    'groups (resourcesN:) is refused. The flavor is read from the compute '
    'endpoint of the catalog, or OS_COMPUTE_ENDPOINT_OVERRIDE.')


def add_options(parser, flavor_help):
    """``--flavor``, ``--owner-nova`` and ``--show-request``."""
    parser.add_argument('--flavor', metavar='<name_or_id>',
                        help=flavor_help)
    parser.add_argument(
        '--owner-nova', action='store_true',
        help='With --flavor, require OWNER_NOVA on the root provider too, '
             'as Nova 34 and later do once every nova-compute is upgraded.')
    parser.add_argument(
        '--show-request', action='store_true',
        help='With --flavor, print the request on stderr (as the query of '
             'GET /allocation_candidates, then group by group) before the '
             'answer. --debug logs it too.')


def check_flavor_options(parsed_args, conflicting, names):
    """A clear error before anything is read: ``conflicting`` says
    whether an option that gives the request's resources was used."""
    flavor = getattr(parsed_args, 'flavor', None)
    if not flavor:
        for option in ('owner_nova', 'show_request'):
            if getattr(parsed_args, option, False):
                raise exceptions.CommandError(
                    '--%s needs --flavor.' % option.replace('_', '-'))
        return
    if conflicting:
        raise exceptions.CommandError(
            '--flavor gives the request\'s resources; it cannot be used '
            'with %s.' % names)


def candidate_options_given(parsed_args):
    """Did the user give --resource, --group or --group-policy?"""
    groups = getattr(parsed_args, 'groups', None) or {}
    return (any(name != candidates.UNNAMED_GROUP for name in groups)
            or any(group['resources'] for group in groups.values())
            or parsed_args.group_policy is not None)


def read_request(command, parsed_args):
    """The flavor's ``FlavorRequest``, read from Nova."""
    client = compute.ComputeClient.from_client_manager(
        command.app.client_manager)
    flavor = client.find_flavor(parsed_args.flavor)
    return translate(flavor, parsed_args.owner_nova)


def translate(flavor, owner_nova=False):
    try:
        return flavor_request.translate(flavor, owner_nova=owner_nova)
    except flavor_request.FlavorRequestError as exc:
        raise exceptions.CommandError(
            'Flavor %s: %s.' % (flavor.get('name') or flavor.get('id'),
                                exc)) from None


def apply_to_candidate_args(parsed_args, request):
    """The flavor's groups become the command's groups; the unnamed
    group's --required, --forbidden, --member-of and --in-tree are added
    to the flavor's unsuffixed group, --root-required to its root traits.
    """
    given = getattr(parsed_args, 'groups', None) or {}
    groups = {suffix: dict(group, **{key: list(group[key]) for key in
                                     ('resources', 'required', 'forbidden',
                                      'member_of', 'aggregate_uuid')})
              for suffix, group in request.groups.items()}
    extra = given.get(candidates.UNNAMED_GROUP)
    if extra:
        unnamed = groups.setdefault(candidates.UNNAMED_GROUP,
                                    candidates.new_group())
        for key in ('required', 'forbidden', 'member_of', 'aggregate_uuid'):
            unnamed[key] += [value for value in extra[key]
                             if value not in unnamed[key]]
        unnamed['in_tree'] = extra['in_tree'] or unnamed['in_tree']
    parsed_args.groups = groups
    parsed_args.group_policy = request.group_policy
    parsed_args.root_required = (list(request.root_required)
                                 + list(parsed_args.root_required))


def with_group_policy(query, request):
    """group_policy as Nova sends it: the flavor's, even with one group
    (where the command's query leaves it out), and none where the flavor
    has none (where the command's query says ``none``)."""
    query = dict(query)
    if request.group_policy:
        query['group_policy'] = request.group_policy
    else:
        query.pop('group_policy', None)
    return query


def fit_request(request, flavor_name):
    """``{class: amount}`` of --fit: the flavor's unsuffixed group,
    which is all --fit counts."""
    if request.suffixed:
        raise exceptions.CommandError(
            'Flavor %s asks for request groups %s besides the unsuffixed '
            'one, each from a single provider; --fit counts one unsuffixed '
            'group. Use "openstack allocation candidate explain --flavor '
            '%s" for this flavor.'
            % (flavor_name, ', '.join(request.suffixed), flavor_name))
    return request.resources()


def apply_to_fit_args(parsed_args, request):
    """The flavor's traits become --fit's --required and --forbidden (the
    user's are kept), its root traits the trees' ``root_required``."""
    group = request.groups.get(flavor_request.UNSUFFIXED) or {}
    parsed_args.required = (list(group.get('required', ()))
                            + list(parsed_args.required))
    parsed_args.forbidden = (list(group.get('forbidden', ()))
                             + list(parsed_args.forbidden))
    parsed_args.root_required = list(request.root_required)


def show_request(stderr, request, pairs, shown):
    """Log the request, and print it on stderr when ``shown``; ``pairs``
    is the query as sent (or as Nova sends it)."""
    lines = ['GET %s?%s' % (candidates.BASE_URL,
                            flavor_request.query_string(pairs))]
    lines += request.describe()
    for line in lines:
        LOG.debug('%s', line)
    if shown:
        stderr.write(''.join(line + '\n' for line in lines))


def query_pairs(query):
    """``(key, value)`` pairs, sorted as Nova sorts them, of a query
    dict whose list values repeat."""
    pairs = []
    for key, value in query.items():
        for item in value if isinstance(value, list) else [value]:
            pairs.append((key, str(item)))
    return sorted(pairs)
