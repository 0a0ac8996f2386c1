"""Commands for resource classes (``openstack resource class ...``)."""

from cliff import lister

from osc_placement.resources import common

BASE_URL = '/resource_classes'


class ListResourceClass(common.PlacementCommand, lister.Lister):
    """Return a list of all resource classes.

    This command requires at least ``--os-placement-api-version 1.2``.
    """

    min_version = '1.2'

    def take_action(self, parsed_args):
        body = self.get_json(BASE_URL)
        names = [(rc['name'],) for rc in body['resource_classes']]
        return ('name',), names
