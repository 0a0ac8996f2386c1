"""``openstack resource provider consumer list``: who holds a provider.

What an operator asks before deleting a host (Placement refuses to delete
a provider that has allocations) or when an interrupted migration left
allocations behind.
"""

from cliff import lister

from osc_placement.resources import common
from osc_placement.resources import provider_tree
from osc_placement.resources import providers
from osc_placement import version

PROVIDER_ALLOCATIONS_URL = '/resource_providers/{uuid}/allocations'
CONSUMER_URL = '/allocations/{uuid}'

# The columns and the feature from which each can be filled. The
# consumer's own fields come from GET /allocations/{consumer}; providers
# is shown with --tree only (which needs nested providers).
COLUMNS = (
    ('consumer_uuid', 'base'),
    ('resources', 'base'),
    ('providers', 'nested_providers'),
    ('project_id', 'consumer_details'),
    ('user_id', 'consumer_details'),
    ('consumer_generation', 'consumer_generations'),
    ('consumer_type', 'consumer_types'),
)
TREE_ONLY_COLUMNS = ('providers',)

LIST_GATES = (
    ('tree', bool, 'nested_providers'),
    ('consumer_type', bool, 'consumer_types'),
)


def consumer_columns(ver, tree):
    return tuple(name for name in version.available(COLUMNS, ver)
                 if tree or name not in TREE_ONLY_COLUMNS)


def holdings(allocations_by_provider):
    """Each consumer's resources summed over the providers, and which.

    ``allocations_by_provider`` is ``[(provider name, the allocations
    member of GET /resource_providers/{uuid}/allocations)]``. The answer
    is ``{consumer: {'resources': {class: amount}, 'providers': [name]}}``
    with classes and names sorted.
    """
    held = {}
    for name, allocations in allocations_by_provider:
        for consumer, allocation in allocations.items():
            entry = held.setdefault(consumer,
                                    {'resources': {}, 'providers': []})
            entry['providers'].append(name)
            for rc, amount in allocation['resources'].items():
                entry['resources'][rc] = entry['resources'].get(rc, 0) + amount
    for entry in held.values():
        entry['resources'] = dict(sorted(entry['resources'].items()))
        entry['providers'].sort()
    return held


def consumer_row(consumer, entry, detail, columns):
    """One row of ``columns``; ``detail`` is GET /allocations/{consumer}."""
    values = dict(detail or {}, consumer_uuid=consumer,
                  resources=common.amounts_text(entry['resources']),
                  providers=','.join(entry['providers']))
    return tuple(values.get(column) for column in columns)


def is_of_type(detail, consumer_type):
    return consumer_type is None or (
        detail.get('consumer_type') == consumer_type)


class ListConsumer(common.PlacementCommand, lister.Lister):
    """List the consumers holding allocations on a resource provider.

    The provider may be named by UUID or by name. One row per consumer,
    sorted by consumer UUID, with the resources it holds on the provider;
    with ``--tree``, on every provider of the provider's tree, summed per
    class over the tree, and the ``providers`` column names the providers
    they are on.

    The consumer's ``project_id`` and ``user_id`` are shown from
    ``--os-placement-api-version {consumer_details}``,
    ``consumer_generation`` from {consumer_generations} and
    ``consumer_type`` from {consumer_types}; they cost one request per
    consumer, sent concurrently.

    A provider that has allocations cannot be deleted (HTTP 409): this
    lists who holds them, to be removed with ``openstack resource provider
    allocation delete <consumer>`` once the workload is gone or moved.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            'provider', metavar='<provider>',
            help='UUID or name of the resource provider')
        parser.add_argument(
            '--tree', action='store_true',
            help=version.render(
                'Consumers holding allocations on any provider of the '
                'provider\'s tree. This option requires at least '
                '``--os-placement-api-version {nested_providers}``.'))
        parser.add_argument(
            '--consumer-type', metavar='<consumer_type>',
            help=version.render(
                'Only consumers of this type, for example MIGRATION to find '
                'allocations an interrupted migration left behind; '
                '"unknown" selects consumers written without a type. This '
                'option requires at least '
                '``--os-placement-api-version {consumer_types}``.'))
        return parser

    def take_action(self, parsed_args):
        common.check_option_gates(self, parsed_args, LIST_GATES)
        ver = version.get_version(self)
        provider = common.find_provider(self, parsed_args.provider)
        looked_at = (provider_tree.tree_providers(self, provider)
                     if parsed_args.tree else [provider])
        held = holdings(self._allocations(looked_at))
        consumers = sorted(held)
        details = self._details(consumers, ver)
        columns = consumer_columns(ver, parsed_args.tree)
        return columns, [
            consumer_row(consumer, held[consumer], detail, columns)
            for consumer, detail in zip(consumers, details)
            if is_of_type(detail, parsed_args.consumer_type)]

    def _allocations(self, listed):
        results = providers.results_or_raise(common.run_concurrently(
            lambda provider: self.get_json(PROVIDER_ALLOCATIONS_URL.format(
                uuid=provider['uuid']))['allocations'],
            listed))
        return [(provider['name'], allocations)
                for provider, allocations in zip(listed, results)]

    def _details(self, consumers, ver):
        """GET /allocations/{consumer} for each, or {} where it says too
        little to be worth a request: without consumer details it names no
        project or user."""
        if not version.supports(ver, 'consumer_details'):
            return [{} for _consumer in consumers]
        return providers.results_or_raise(common.run_concurrently(
            lambda consumer: self.get_json(CONSUMER_URL.format(
                uuid=consumer)),
            consumers, progress=common.StderrProgress('consumers')))
