# SPDX-License-Identifier: Apache-2.0
"""Commands for resource providers (``openstack resource provider ...``)."""

import logging

from cliff import command
from cliff import lister
from cliff import show
from osc_lib import exceptions

from osc_placement.resources import common
from osc_placement import version

LOG = logging.getLogger(__name__)

BASE_URL = '/resource_providers'
PROVIDER_URL = BASE_URL + '/{uuid}'
ALLOCATIONS_URL = PROVIDER_URL + '/allocations'

# Which feature adds which provider column (create, list, show, set).
PROVIDER_COLUMNS = (
    ('uuid', 'base'),
    ('name', 'base'),
    ('generation', 'base'),
    ('root_provider_uuid', 'nested_providers'),
    ('parent_provider_uuid', 'nested_providers'),
)

# Options of ``resource provider list``: (dest, applies to value, feature),
# in upstream's checking order.
LIST_GATES = (
    ('aggregate_uuid', bool, 'member_of'),
    ('resource', bool, 'resources_filter'),
    ('in_tree', bool, 'nested_providers'),
    ('required', bool, 'provider_required'),
    ('required', common.required_needs_any_of, 'any_of_traits'),
    ('forbidden', bool, 'forbidden_traits'),
    ('member_of', bool, 'member_of'),
    ('member_of', common.forbids_aggregates, 'forbidden_aggregates'),
)

# Options of ``create`` and ``set`` that need more than the command does.
PARENT_GATES = (
    ('parent_provider', bool, 'nested_providers'),
    ('no_parent', bool, 'reparenting'),
)


def provider_columns(ver):
    return tuple(column for column, feature in PROVIDER_COLUMNS
                 if version.supports(ver, feature))


class _ProviderCommand(common.PlacementCommand):
    """Shared rendering of one provider as a Field/Value table."""

    def provider_result(self, provider, extra_columns=()):
        columns = provider_columns(version.get_version(self)) + extra_columns
        return columns, common.dict_properties(provider, columns)


def _add_uuid_argument(parser):
    parser.add_argument('uuid', metavar='<uuid>',
                        help=common.NAME_OR_UUID_HELP)


class CreateResourceProvider(_ProviderCommand, show.ShowOne):
    """Create a new resource provider."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            '--parent-provider', metavar='<parent_provider>',
            help=version.render(
                'Name or UUID of the parent provider. Omit for no parent. '
                'This option requires at least '
                '``--os-placement-api-version {nested_providers}``.'))
        parser.add_argument(
            '--uuid', metavar='<uuid>',
            help='UUID of the resource provider; the server generates one '
                 'when omitted.')
        parser.add_argument('name', metavar='<name>',
                            help='Name of the resource provider')
        return parser

    def take_action(self, parsed_args):
        for feature in common.needed_features(parsed_args, PARENT_GATES):
            version.supports(version.get_version(self), feature, refuse=True)
        body = {'name': parsed_args.name}
        if parsed_args.uuid:
            body['uuid'] = parsed_args.uuid
        if parsed_args.parent_provider:
            body['parent_provider_uuid'] = common.provider_uuid(
                self, parsed_args.parent_provider)
        return self.provider_result(self._create(body))

    def _create(self, body):
        response = self.placement.request('POST', BASE_URL, json=body)
        if version.supports(version.get_version(self),
                            'create_returns_provider'):
            return response.json()
        # Older servers answer 201 with no body; the provider is at Location.
        return self.placement.request(
            'GET', response.headers['Location']).json()


class ListResourceProvider(common.PlacementCommand, lister.Lister):
    """List resource providers.

    Filters combine: a provider is listed only when it matches all of them.
    ``--member-of`` requires at least
    ``--os-placement-api-version {member_of}``, repeating it
    {repeated_member_of}, and a ``!<uuid>`` value (not in that aggregate)
    {forbidden_aggregates}.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--uuid', metavar='<uuid>',
                            help='UUID of the resource provider')
        parser.add_argument('--name', metavar='<name>',
                            help='Name of the resource provider')
        parser.add_argument(
            '--resource', metavar='<resource_class>=<value>', default=[],
            action='append',
            help=version.render(
                'A resource class and amount the provider must have the '
                'capacity to serve. May be repeated. This option requires '
                'at least ``--os-placement-api-version {resources_filter}``.'
            ))
        parser.add_argument(
            '--in-tree', metavar='<in_tree>',
            help=version.render(
                'Only providers in the same provider tree as this provider '
                '(name or UUID). This option requires at least '
                '``--os-placement-api-version {nested_providers}``.'))
        parser.add_argument(
            '--required', metavar='<required>', action='append', default=[],
            help=version.render(
                'A required trait. May be repeated; providers must have all '
                'of them. A comma-separated list (any of these traits) needs '
                '``--os-placement-api-version {any_of_traits}``. This option '
                'requires at least '
                '``--os-placement-api-version {provider_required}``.'))
        parser.add_argument(
            '--forbidden', metavar='<forbidden>', action='append',
            default=[],
            help=version.render(
                'A forbidden trait. May be repeated; providers must have '
                'none of them. This option requires at least '
                '``--os-placement-api-version {forbidden_traits}``.'))
        common.add_member_of_options(parser)
        return parser

    def take_action(self, parsed_args):
        for feature in common.needed_features(parsed_args, LIST_GATES):
            version.supports(version.get_version(self), feature, refuse=True)
        if parsed_args.in_tree:
            parsed_args.in_tree = common.provider_uuid(
                self, parsed_args.in_tree)
        providers = self.get_json(BASE_URL, **self._query(parsed_args))
        columns = provider_columns(version.get_version(self))
        return columns, [common.dict_properties(provider, columns)
                         for provider in providers['resource_providers']]

    @staticmethod
    def _query(parsed_args):
        query = {
            'name': parsed_args.name,
            'uuid': parsed_args.uuid,
            'resources': ','.join(resource.replace('=', ':')
                                  for resource in parsed_args.resource),
            'in_tree': parsed_args.in_tree,
            'required': common.required_query(parsed_args.required,
                                              parsed_args.forbidden),
            'member_of': common.member_of_query(parsed_args.member_of,
                                                parsed_args.aggregate_uuid,
                                                LOG),
        }
        return {key: value for key, value in query.items() if value}


class ShowResourceProvider(_ProviderCommand, show.ShowOne):
    """Show resource provider details."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            '--allocations', action='store_true',
            help='Include the allocations made against the provider, by '
                 'consumer.')
        _add_uuid_argument(parser)
        return parser

    def take_action(self, parsed_args):
        uuid = common.provider_uuid(self, parsed_args.uuid)
        provider = self.get_json(PROVIDER_URL.format(uuid=uuid))
        if not parsed_args.allocations:
            return self.provider_result(provider)
        allocations = self.get_json(ALLOCATIONS_URL.format(uuid=uuid))
        provider['allocations'] = allocations['allocations']
        return self.provider_result(provider, ('allocations',))


class SetResourceProvider(_ProviderCommand, show.ShowOne):
    """Update an existing resource provider: rename, re-parent, un-parent.

    Setting a parent needs ``--os-placement-api-version {nested_providers}``;
    changing an existing parent (re-parenting) or removing it
    (``--no-parent``) needs {reparenting}. Without ``--name`` the provider
    keeps its name.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _add_uuid_argument(parser)
        parser.add_argument(
            '--name', metavar='<name>',
            help='A new name of the resource provider. Omit to keep the '
                 'current name.')
        parent = parser.add_mutually_exclusive_group()
        parent.add_argument(
            '--parent-provider', metavar='<parent_provider>',
            help=version.render(
                'Name or UUID of the parent provider. This option requires '
                'at least ``--os-placement-api-version {nested_providers}``; '
                'replacing an existing parent requires {reparenting}.'))
        parent.add_argument(
            '--no-parent', action='store_true',
            help=version.render(
                'Make the provider the root of its own tree. This option '
                'requires at least '
                '``--os-placement-api-version {reparenting}``.'))
        return parser

    def take_action(self, parsed_args):
        for feature in common.needed_features(parsed_args, PARENT_GATES):
            version.supports(version.get_version(self), feature, refuse=True)
        url = PROVIDER_URL.format(
            uuid=common.provider_uuid(self, parsed_args.uuid))
        body = {'name': parsed_args.name or self.get_json(url)['name']}
        if parsed_args.parent_provider:
            body['parent_provider_uuid'] = common.provider_uuid(
                self, parsed_args.parent_provider)
        elif parsed_args.no_parent:
            # A null parent is how the API spells "no parent" (reparenting).
            body['parent_provider_uuid'] = None
        provider = self.placement.request('PUT', url, json=body).json()
        return self.provider_result(provider)


# The command that shows what stops a delete, by the 409's error code, or
# by a word of its text where the server gives no code (before feature
# ``error_codes``) or the undefined one.
DELETE_CONFLICT_HINTS = (
    ('placement.resource_provider.cannot_delete_parent', 'child',
     'openstack resource provider tree show %s'),
    ('placement.resource_provider.inuse', 'allocations',
     'openstack resource provider consumer list %s'),
)
NO_ERROR_CODE = (None, 'placement.undefined_code')


def delete_conflict_hint(exc, provider):
    """``. See: <command>`` naming what shows the children or consumers
    that stop the delete of ``provider``; '' for another conflict."""
    code = common.error_code(exc)
    for hint_code, word, see in DELETE_CONFLICT_HINTS:
        if code == hint_code or (code in NO_ERROR_CODE
                                 and word in exc.message):
            return '. See: ' + see % provider
    return ''


class DeleteResourceProvider(common.PlacementCommand, command.Command):
    """Delete a resource provider.

    A provider with child providers or with allocations cannot be deleted
    (HTTP 409); the error then names the command that shows them.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _add_uuid_argument(parser)
        return parser

    def take_action(self, parsed_args):
        uuid = common.provider_uuid(self, parsed_args.uuid)
        try:
            self.placement.request('DELETE', PROVIDER_URL.format(uuid=uuid))
        except exceptions.Conflict as exc:
            exc.hint = delete_conflict_hint(exc, parsed_args.uuid)
            raise
