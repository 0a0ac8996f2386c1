# SPDX-License-Identifier: Apache-2.0
"""``openstack resource provider tree show``: a provider's whole tree.

One row per provider of the tree, depth first, children by name, with the
name indented by depth; ``-f json`` and ``-f yaml`` give the tree as one
nested object instead (see ``ShowTree.produce_output`` for why).
"""

from cliff import lister

from osc_placement import provider_rules
from osc_placement.resources import common
from osc_placement.resources import providers

BASE_URL = '/resource_providers'

ROW_COLUMNS = ('name', 'uuid', 'generation', 'resources', 'traits',
               'aggregates')
# The members of each provider in the nested (json/yaml) output, in order.
NODE_KEYS = ('uuid', 'name', 'generation', 'parent_provider_uuid',
             'resources', 'traits', 'aggregates', 'children')
NESTED_FORMATS = ('json', 'yaml')
INDENT = '  '


def resources_summary(inventories, usages):
    """``{class: {used, capacity, total, reserved, allocation_ratio}}``."""
    return {
        rc: {'used': usages.get(rc, 0),
             'capacity': provider_rules.capacity(inventory),
             'total': inventory['total'],
             'reserved': inventory['reserved'],
             'allocation_ratio': inventory['allocation_ratio']}
        for rc, inventory in sorted(inventories.items())}


def provider_node(provider, details):
    """One provider of the nested output, without its children yet."""
    return {
        'uuid': provider['uuid'],
        'name': provider['name'],
        'generation': provider['generation'],
        'parent_provider_uuid': provider.get('parent_provider_uuid'),
        'resources': resources_summary(details['inventories'],
                                       details['usages']),
        'traits': sorted(details['traits']),
        'aggregates': sorted(details['aggregates']),
        'children': [],
    }


def build_tree(listed, details):
    """The root of ``listed`` (one tree) with its descendants nested.

    ``details`` maps each provider's uuid to its inventories, usages,
    traits and aggregates. Children are sorted by name, so the output does
    not depend on the order the server listed them in.
    """
    nodes = {provider['uuid']:
             provider_node(provider, details[provider['uuid']])
             for provider in listed}
    roots = []
    for node in nodes.values():
        parent = nodes.get(node['parent_provider_uuid'])
        (parent['children'] if parent else roots).append(node)
    for node in nodes.values():
        node['children'].sort(key=_by_name)
    if len(roots) != 1:
        raise ValueError('expected one root among %d providers, found %d'
                         % (len(listed), len(roots)))
    return roots[0]


def _by_name(node):
    return (node['name'], node['uuid'])


def walk(node, depth=0):
    """``(depth, node)`` for the node and its descendants, depth first."""
    yield depth, node
    for child in node['children']:
        yield from walk(child, depth + 1)


def tree_rows(root):
    """One ROW_COLUMNS row per provider, the name indented by depth."""
    return [(INDENT * depth + node['name'], node['uuid'],
             node['generation'],
             common.used_of_capacity_text(node['resources']),
             len(node['traits']), len(node['aggregates']))
            for depth, node in walk(root)]


def tree_providers(command, provider):
    """Every provider of ``provider``'s tree (needs nested providers)."""
    return command.get_json(
        BASE_URL, in_tree=provider['root_provider_uuid'])['resource_providers']


class ShowTree(common.PlacementCommand, lister.Lister):
    """Show the whole provider tree of a resource provider.

    The provider may be named by UUID or by name, and be any provider of
    the tree: the tree is shown from its root. One row per provider, depth
    first with children sorted by name, the name indented two spaces per
    level; ``resources`` is ``used/capacity`` per class, where capacity is
    ``int((total - reserved) * allocation_ratio)``; ``traits`` and
    ``aggregates`` are counts.

    With ``-f json`` or ``-f yaml`` the output is instead the root as one
    nested object: ``uuid``, ``name``, ``generation``,
    ``parent_provider_uuid``, ``resources`` (per class ``used``,
    ``capacity``, ``total``, ``reserved``, ``allocation_ratio``),
    ``traits`` and ``aggregates`` (lists) and ``children`` (the same
    objects). ``-c`` and the sort options do not apply to that form.

    This command requires at least
    ``--os-placement-api-version {nested_providers}``.

    Examples::

        # A host's NUMA nodes and GPUs, with what each has left:
        openstack resource provider tree show compute-1
        # The same tree as one nested object, for a script:
        openstack resource provider tree show compute-1 -f json
    """

    required_feature = 'nested_providers'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            'provider', metavar='<provider>',
            help='UUID or name of any resource provider of the tree')
        return parser

    def take_action(self, parsed_args):
        provider = common.find_provider(self, parsed_args.provider)
        listed = tree_providers(self, provider)
        self.tree = build_tree(listed, self._details(listed))
        return ROW_COLUMNS, tree_rows(self.tree)

    def _details(self, listed):
        """``{uuid: {part: value}}`` of every provider, read concurrently."""
        return providers.read_parts(
            self.get_json, [provider['uuid'] for provider in listed],
            progress=common.StderrProgress('provider details'))

    def produce_output(self, parsed_args, column_names, data):
        # cliff's formatters print rows; a tree is not rows. For the
        # machine formats the root object is handed to the formatter's
        # single-object form (what ``show`` commands use), so json keeps
        # its --noindent option and yaml its style, and no printing of our
        # own is needed. The human formats get the indented rows.
        if parsed_args.formatter not in NESTED_FORMATS:
            return super().produce_output(parsed_args, column_names, data)
        self.formatter.emit_one(NODE_KEYS,
                                tuple(self.tree[key] for key in NODE_KEYS),
                                self.app.stdout, parsed_args)
        return 0
