# SPDX-License-Identifier: Apache-2.0
"""Commands for provider aggregates (``resource provider aggregate ...``)."""

from cliff import lister
from osc_lib import exceptions

from osc_placement.resources import common
from osc_placement import version

AGGREGATES_URL = '/resource_providers/{uuid}/aggregates'
COLUMNS = ('uuid',)

# With feature ``aggregate_generation`` an aggregate write must carry the
# provider generation, and the body becomes an object instead of a bare
# list. Any --generation (0 too) needs it.
SET_GATES = (
    ('generation', lambda value: True, 'aggregate_generation'),
)


def _add_provider_argument(parser):
    parser.add_argument('uuid', metavar='<uuid>',
                        help=common.NAME_OR_UUID_HELP)


def _rows(body):
    return [(uuid,) for uuid in body['aggregates']]


class ListAggregate(common.PlacementCommand, lister.Lister):
    """List resource provider aggregates.

    This command requires at least
    ``--os-placement-api-version {aggregates}``.
    """

    required_feature = 'aggregates'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _add_provider_argument(parser)
        return parser

    def take_action(self, parsed_args):
        uuid = common.provider_uuid(self, parsed_args.uuid)
        return COLUMNS, _rows(self.get_json(AGGREGATES_URL.format(uuid=uuid)))


class SetAggregate(common.PlacementCommand, lister.Lister):
    """Associate a list of aggregates with the resource provider.

    Each request replaces the provider's aggregates with the ones given;
    giving none removes all of them.

    This command requires at least
    ``--os-placement-api-version {aggregates}``. From {aggregate_generation}
    ``--generation`` is required, so that a concurrent change is not
    overwritten.
    """

    required_feature = 'aggregates'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _add_provider_argument(parser)
        parser.add_argument(
            '--aggregate', metavar='<aggregate_uuid>', action='append',
            default=[],
            help='UUID of the aggregate. Specify multiple times to '
                 'associate a resource provider with multiple aggregates.')
        parser.add_argument(
            '--generation', metavar='<resource_provider_generation>',
            type=int,
            help=version.render(
                'The generation of the resource provider. Must match the '
                'server-side generation or the operation will fail. This '
                'option requires at least ``--os-placement-api-version '
                '{aggregate_generation}``, where it is required.'))
        return parser

    def take_action(self, parsed_args):
        for feature in common.needed_features(parsed_args, SET_GATES):
            version.supports(version.get_version(self), feature, refuse=True)
        url = AGGREGATES_URL.format(
            uuid=common.provider_uuid(self, parsed_args.uuid))
        body = self._body(parsed_args.aggregate, parsed_args.generation)
        return COLUMNS, _rows(
            self.placement.request('PUT', url, json=body).json())

    def _body(self, aggregates, generation):
        if not version.supports(version.get_version(self),
                                'aggregate_generation'):
            return aggregates
        if generation is None:
            raise exceptions.CommandError('A generation must be specified.')
        return {'aggregates': aggregates,
                'resource_provider_generation': generation}
