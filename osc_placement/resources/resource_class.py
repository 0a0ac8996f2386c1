# SPDX-License-Identifier: Apache-2.0
"""Commands for resource classes (``openstack resource class ...``)."""

from cliff import command
from cliff import lister
from cliff import show

from osc_placement.resources import common

BASE_URL = '/resource_classes'
FIELDS = ('name',)


class ResourceClassCommand(common.NamedItemCommand):
    collection = BASE_URL
    name_help = 'Name of the resource class'
    required_feature = 'resource_classes'


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


class CreateResourceClass(ResourceClassCommand, command.Command):
    """Create a new resource class.

    Custom resource class names must start with ``CUSTOM_`` and contain
    only upper case letters, digits and underscores; the server rejects
    anything else. Creating a class that already exists fails; use
    ``openstack resource class set`` for an idempotent create.

    This command requires at least
    ``--os-placement-api-version {resource_classes}``.
    """

    def take_action(self, parsed_args):
        self.placement.request('POST', BASE_URL,
                               json={'name': parsed_args.name})


class SetResourceClass(ResourceClassCommand, command.Command):
    """Create the resource class identified by <name> if it is missing.

    Unlike ``openstack resource class create``, this command also succeeds
    if the resource class already exists, which makes it an idempotent
    create, or a check that a custom class exists.

    This command requires at least
    ``--os-placement-api-version {idempotent_resource_class}``.
    """

    required_feature = 'idempotent_resource_class'
    method = 'PUT'


class ShowResourceClass(ResourceClassCommand, show.ShowOne):
    """Return a representation of the resource class identified by <name>.

    This command requires at least
    ``--os-placement-api-version {resource_classes}``.
    """

    def take_action(self, parsed_args):
        body = self.get_json(self.item_url(parsed_args.name))
        return FIELDS, tuple(body.get(field) for field in FIELDS)


class DeleteResourceClass(ResourceClassCommand, command.Command):
    """Delete the resource class identified by <name>.

    Only custom resource classes can be deleted, and only while no provider
    has inventory of them.

    This command requires at least
    ``--os-placement-api-version {resource_classes}``.
    """

    method = 'DELETE'
