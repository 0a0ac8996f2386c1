"""Commands for traits (``openstack trait ...``) and provider traits
(``openstack resource provider trait ...``)."""

from cliff import command
from cliff import lister
from cliff import show

from osc_placement.resources import common

BASE_URL = '/traits'
RP_URL = '/resource_providers/{uuid}'
RP_TRAITS_URL = RP_URL + '/traits'
FIELDS = ('name',)
# Every trait command arrived with traits themselves.
TRAITS_VERSION = '1.6'


def trait_url(name):
    return '%s/%s' % (BASE_URL, name)


def name_rows(names):
    return FIELDS, [(name,) for name in names]


def add_trait_name_argument(parser):
    parser.add_argument('name', metavar='<name>', help='Name of the trait.')


def add_provider_argument(parser):
    parser.add_argument('uuid', metavar='<uuid>',
                        help='UUID of the resource provider.')


class ListTrait(common.PlacementCommand, lister.Lister):
    """Return a list of valid trait strings.

    This command requires at least ``--os-placement-api-version 1.6``.
    """

    min_version = TRAITS_VERSION

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            '--name', metavar='<name>',
            help='A string to filter traits, passed to the server as is. '
                 '``startswith:CUSTOM`` lists the traits whose name begins '
                 'with a prefix; ``in:HW_CPU_X86_AVX,HW_CPU_X86_SSE`` lists '
                 'those of the named traits that exist.')
        parser.add_argument(
            '--associated', action='store_true',
            help='List only the traits associated with at least one '
                 'resource provider.')
        return parser

    def take_action(self, parsed_args):
        body = self.get_json(BASE_URL, **list_query(parsed_args))
        return name_rows(body['traits'])


def list_query(parsed_args):
    query = {}
    if parsed_args.name:
        query['name'] = parsed_args.name
    if parsed_args.associated:
        # The server accepts any value; upstream sends True.
        query['associated'] = True
    return query


class ShowTrait(common.PlacementCommand, show.ShowOne):
    """Check if a trait name exists in this cloud.

    An unknown trait fails with HTTP 404.

    This command requires at least ``--os-placement-api-version 1.6``.
    """

    min_version = TRAITS_VERSION

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        add_trait_name_argument(parser)
        return parser

    def take_action(self, parsed_args):
        # The server answers 204 with no body; success is the answer.
        self.placement.request('GET', trait_url(parsed_args.name))
        return FIELDS, (parsed_args.name,)


class CreateTrait(common.PlacementCommand, command.Command):
    """Create a new custom trait.

    Custom trait names must start with ``CUSTOM_`` and contain only upper
    case letters, digits and underscores. Creating a trait that already
    exists succeeds.

    This command requires at least ``--os-placement-api-version 1.6``.
    """

    min_version = TRAITS_VERSION

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        add_trait_name_argument(parser)
        return parser

    def take_action(self, parsed_args):
        self.placement.request('PUT', trait_url(parsed_args.name))


class DeleteTrait(common.PlacementCommand, command.Command):
    """Delete the trait specified by <name>.

    Only custom traits that no resource provider has can be deleted.

    This command requires at least ``--os-placement-api-version 1.6``.
    """

    min_version = TRAITS_VERSION

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        add_trait_name_argument(parser)
        return parser

    def take_action(self, parsed_args):
        self.placement.request('DELETE', trait_url(parsed_args.name))


class ListResourceProviderTrait(common.PlacementCommand, lister.Lister):
    """List traits associated with the resource provider <uuid>.

    This command requires at least ``--os-placement-api-version 1.6``.
    """

    min_version = TRAITS_VERSION

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        add_provider_argument(parser)
        return parser

    def take_action(self, parsed_args):
        body = self.get_json(RP_TRAITS_URL.format(uuid=parsed_args.uuid))
        return name_rows(body['traits'])


class SetResourceProviderTrait(common.PlacementCommand, lister.Lister):
    """Associate traits with the resource provider <uuid>.

    All the associated traits are replaced by the traits given; with no
    ``--trait`` the provider is left with none. The provider generation is
    read first and sent back, so a concurrent change to the provider fails
    with HTTP 409 instead of being overwritten.

    This command requires at least ``--os-placement-api-version 1.6``.
    """

    min_version = TRAITS_VERSION

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        add_provider_argument(parser)
        parser.add_argument(
            '--trait', metavar='<trait>', default=[], action='append',
            help='Name of the trait. May be repeated.')
        return parser

    def take_action(self, parsed_args):
        provider = self.get_json(RP_URL.format(uuid=parsed_args.uuid))
        payload = {'resource_provider_generation': provider['generation'],
                   'traits': parsed_args.trait}
        body = self.placement.request(
            'PUT', RP_TRAITS_URL.format(uuid=parsed_args.uuid),
            json=payload).json()
        return name_rows(body['traits'])


class DeleteResourceProviderTrait(common.PlacementCommand, command.Command):
    """Dissociate all the traits from the resource provider <uuid>.

    The server does this without a generation check, so a concurrent
    ``resource provider trait set`` may win or lose; use ``trait set``
    with no ``--trait`` for a checked removal.

    This command requires at least ``--os-placement-api-version 1.6``.
    """

    min_version = TRAITS_VERSION

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        add_provider_argument(parser)
        return parser

    def take_action(self, parsed_args):
        self.placement.request('DELETE',
                               RP_TRAITS_URL.format(uuid=parsed_args.uuid))
