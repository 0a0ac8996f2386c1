# SPDX-License-Identifier: Apache-2.0
"""Commands for resource classes (``openstack resource class ...``)."""

from cliff import command
from cliff import lister
from cliff import show

from osc_placement.resources import common

BASE_URL = '/resource_classes'
FIELDS = ('name',)


def class_url(name):
    return '%s/%s' % (BASE_URL, name)


def add_name_argument(parser):
    parser.add_argument('name', metavar='<name>',
                        help='Name of the resource class')


class ListResourceClass(common.PlacementCommand, lister.Lister):
    """Return a list of all resource classes.

    This command requires at least
    ``--os-placement-api-version {resource_classes}``.
    """

    required_feature = 'resource_classes'

    def take_action(self, parsed_args):
        body = self.get_json(BASE_URL)
        names = [(rc['name'],) for rc in body['resource_classes']]
        return FIELDS, names


class CreateResourceClass(common.PlacementCommand, command.Command):
    """Create a new resource class.

    Custom resource class names must start with ``CUSTOM_`` and contain
    only upper case letters, digits and underscores; the server rejects
    anything else. Creating a class that already exists fails; use
    ``openstack resource class set`` for an idempotent create.

    This command requires at least
    ``--os-placement-api-version {resource_classes}``.
    """

    required_feature = 'resource_classes'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        add_name_argument(parser)
        return parser

    def take_action(self, parsed_args):
        self.placement.request('POST', BASE_URL,
                               json={'name': parsed_args.name})


class SetResourceClass(common.PlacementCommand, command.Command):
    """Create the resource class identified by <name> if it is missing.

    Unlike ``openstack resource class create``, this command also succeeds
    if the resource class already exists, which makes it an idempotent
    create, or a check that a custom class exists.

    This command requires at least
    ``--os-placement-api-version {idempotent_resource_class}``.
    """

    required_feature = 'idempotent_resource_class'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        add_name_argument(parser)
        return parser

    def take_action(self, parsed_args):
        self.placement.request('PUT', class_url(parsed_args.name))


class ShowResourceClass(common.PlacementCommand, show.ShowOne):
    """Return a representation of the resource class identified by <name>.

    This command requires at least
    ``--os-placement-api-version {resource_classes}``.
    """

    required_feature = 'resource_classes'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        add_name_argument(parser)
        return parser

    def take_action(self, parsed_args):
        body = self.get_json(class_url(parsed_args.name))
        return FIELDS, tuple(body.get(field) for field in FIELDS)


class DeleteResourceClass(common.PlacementCommand, command.Command):
    """Delete the resource class identified by <name>.

    Only custom resource classes can be deleted, and only while no provider
    has inventory of them.

    This command requires at least
    ``--os-placement-api-version {resource_classes}``.
    """

    required_feature = 'resource_classes'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        add_name_argument(parser)
        return parser

    def take_action(self, parsed_args):
        self.placement.request('DELETE', class_url(parsed_args.name))
